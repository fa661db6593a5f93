#!/usr/bin/env bash
# npm test: the contract checks (lint, drift, breaking changes), the type check and the build side by
# side, since none needs another's output and each keeps one core busy; then the tests, which need the
# build. Each step's output is printed whole when it is done; any step that fails fails the run. The
# build emits the platform without type-checking it (tsc --noCheck, the same JavaScript): the type
# check beside it checks those sources and the tests, so each source is checked once.
# Arguments go to vitest (npm test -- test/server/http).
set -uo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=()
pids=()
step() { # name, command...
  names+=("$1")
  "${@:2}" >"$logs/$1" 2>&1 &
  pids+=("$!")
}

step contract bash -c 'npm run lint && npm run check:generated && npm run check:breaking'
step typecheck npm run typecheck
step build npm run build

failed=()
for i in "${!names[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
  cat "$logs/${names[$i]}"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "npm test: failed before the tests: ${failed[*]}" >&2
  exit 1
fi
vitest run "$@"
