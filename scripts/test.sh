#!/usr/bin/env bash
# npm test: the contract checks (lint, drift, breaking changes), the type check and the build's three
# parts side by side, since none needs another's output; then the tests, which need the build. The build emits the platform without type-checking it (tsc --noCheck,
# the same JavaScript): the type check covers those sources and the tests, so each is checked once.
# Each step's output is printed whole when it is done; any step that fails fails the run.
# Arguments go to vitest (npm test -- test/server/http).
set -uo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start() { # name, command...: runs in the background, output to its log
  "${@:2}" >"$logs/$1" 2>&1 &
  echo $! >"$logs/$1.pid"
}
finish() { # name: waits for it, prints its output, and says whether it passed
  local status=0
  wait "$(cat "$logs/$1.pid")" || status=$?
  cat "$logs/$1"
  [ "$status" = 0 ] || echo "npm test: $1 failed" >&2
  return "$status"
}

start contract bash -c 'npm run lint && npm run check:generated && npm run check:breaking'
start build-server npm run build:server
start build-client npm run build:client
start docs npm run docs
start typecheck npm run typecheck

before=0
for name in contract typecheck build-server build-client docs; do finish "$name" || before=1; done
if [ "$before" != 0 ]; then
  wait
  exit 1
fi

vitest run "$@"
