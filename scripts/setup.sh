#!/usr/bin/env bash
# One-command setup: a Node.js the project runs on, the npm packages and native modules built
# against that Node's own headers, and dist/ compiled.
#
# gslbd runs on Node 24 LTS (package.json "engines"). When the `node` on PATH is not 24, a
# project-local Node 24 is installed from the npm registry (the package node-linux-<arch>@24,
# which ships bin/node and include/node) into .node/, and everything below uses it; bin/gslbd,
# bin/gslbctl, scripts/node and `npm test` pick it up when present. Nothing outside the checkout
# is changed. Re-running is safe: an installed .node/ of the right major version is kept.
#
# Every native module is N-API: better-sqlite3 and bcrypt load the prebuilt binaries their
# packages ship; native/tcp-probe and native/udp-batch are compiled by the root package's install
# script with npm_config_nodedir set to the running Node's own prefix, so an npm config elsewhere
# (a ~/.npmrc with nodedir=/usr, say) cannot point node-gyp at another Node's headers.
set -euo pipefail
cd "$(dirname "$0")/.."

want=24
major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

node_bin=""
if [ -x .node/bin/node ] && [ "$(major .node/bin/node)" = "$want" ]; then
  node_bin=$PWD/.node/bin/node
elif command -v node >/dev/null 2>&1 && [ "$(major node)" = "$want" ] \
     && [ -f "$(dirname "$(dirname "$(command -v node)")")/include/node/node.h" ]; then
  node_bin=$(command -v node)
else
  command -v npm >/dev/null 2>&1 || { echo "setup: npm is needed to fetch Node $want (apt-get install npm)" >&2; exit 1; }
  case "$(uname -m)" in
    x86_64) arch=x64 ;; aarch64|arm64) arch=arm64 ;;
    *) echo "setup: no Node $want package for $(uname -m); install Node $want yourself" >&2; exit 1 ;;
  esac
  echo "setup: the node on PATH is $(node --version 2>/dev/null || echo missing); installing Node $want into .node/" >&2
  rm -rf .node && mkdir -p .node/pkg
  npm install --prefix .node/pkg --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "node-linux-$arch@$want" </dev/null
  ln -s "pkg/node_modules/node-linux-$arch/bin" .node/bin
  node_bin=$PWD/.node/bin/node
fi

# the prefix of the real binary (.node/bin is a link into the package), which holds include/node
node_dir=$(dirname "$(dirname "$(readlink -f "$node_bin")")")
export PATH="$(dirname "$node_bin"):$PATH"
export npm_config_nodedir="$node_dir"
echo "setup: Node $("$node_bin" --version) at $node_bin, native modules built against $node_dir/include/node" >&2

# npm ci also runs the root package's install (native/) and prepare (dist/) scripts
npm ci --no-audit --no-fund </dev/null
echo "setup: done. Start: bin/gslbd --config examples/config.yaml   Test: npm test" >&2
