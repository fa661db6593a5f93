#!/usr/bin/env bash
# npm test: vitest, whose global setup first builds the platform, the client package and the docs beside
# the test databases' templates (test/support/global-setup.ts), and beside vitest the checks no test needs:
# the contract's (lint, drift, breaking changes) and the type check. The build emits the platform without
# type-checking it (tsc --noCheck, the same JavaScript): the type check covers those sources and the
# tests, so each is checked once. The checks' output is printed whole after the tests'; anything that
# fails fails the run. Arguments go to vitest (npm test -- test/server/http).
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

# At the lowest priority: they take the CPU the tests leave idle while waiting on processes and timers,
# not the build's that every test file waits for.
start contract nice -n 19 bash -c 'npm run lint && npm run check:generated && npm run check:breaking'
start typecheck nice -n 19 npm run typecheck

status=0
PARTNER_TEST_BUILD=1 vitest run "$@" || status=$?
for name in contract typecheck; do finish "$name" || status=1; done
exit "$status"
