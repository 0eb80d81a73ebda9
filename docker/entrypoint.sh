#!/bin/sh
# Entry point of the gslbd container image. Without GSLB_API_KEY the daemon runs in dev mode,
# where every request is a system admin (gslb-config-auth.md §2). The image listens on 0.0.0.0, so
# dev mode there would hand the API to whoever reaches the port: it refuses to start unless the
# key is set, or GSLBD_DEV=1 asks for dev mode explicitly. Commands that start no daemon
# (--help, --version) run either way.
set -eu

starts_daemon=1
for arg in "$@"; do
  case "$arg" in
    --help|-help|-h|--version|-version) starts_daemon=0 ;;
  esac
done

if [ "$starts_daemon" = 1 ] && [ -z "${GSLB_API_KEY:-}" ]; then
  if [ "${GSLBD_DEV:-}" = 1 ]; then
    echo "gslbd: GSLBD_DEV=1 and no GSLB_API_KEY: dev mode, every API request is a system admin; never expose this port" >&2
  else
    echo "gslbd: GSLB_API_KEY is not set. Set it (e.g. -e GSLB_API_KEY=\$(openssl rand -hex 32)), or set GSLBD_DEV=1 for dev mode on a machine nobody else reaches." >&2
    exit 1
  fi
fi

exec node /app/bin/gslbd.mjs "$@"
