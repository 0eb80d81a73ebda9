#!/usr/bin/env bash
# Installs the Debian packages the test suite talks to as real peers (dig, kdig, named-checkzone, named (BIND as a secondary), knotd (Knot as a secondary and a catalog consumer), dnspython, nats-server, gpg,
# git, BIRD, dnsperf, gdnsd, Chromium, ping, ip and unshare (network namespaces), openssl, curl, sqlite3) and the compilers the native addons need.
# Installs only what is missing; a machine that has them all is left alone. Needs root (or sudo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=(bind9 bind9-dnsutils bind9-utils knot knot-dnsutils python3-dnspython nats-server gnupg git bird2 dnsperf gdnsd chromium iputils-ping iproute2 util-linux openssl curl sqlite3 python3 make g++)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      echo "gslbd tests need these Debian packages, and installing them needs root: ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "installing test peers: ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# gdnsd is only a benchmark peer; its packaged service must not hold port 53 during tests.
systemctl stop gdnsd >/dev/null 2>&1 || true
# BIND's named is started by the tests themselves (a secondary on a free port); its packaged service must not run.
systemctl disable --now named >/dev/null 2>&1 || true
# Knot's knotd likewise (a secondary started by the IXFR and catalog tests).
systemctl disable --now knot >/dev/null 2>&1 || true
