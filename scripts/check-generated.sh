#!/usr/bin/env bash
# Fails when generated/ differs from what openapi/ produces (run `npm run generate` to update it).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
npx redocly bundle partner --output "$scratch/openapi.json" >/dev/null 2>&1
if ! cmp -s "$scratch/openapi.json" generated/openapi.json; then
  echo "generated/openapi.json is stale: run npm run generate" >&2
  diff <(cat generated/openapi.json) "$scratch/openapi.json" | head -20 >&2 || true
  exit 1
fi
if ! npx openapi-typescript --root-types --root-types-no-schema-prefix --check >/dev/null 2>&1; then
  echo "generated/schema.d.ts is stale: run npm run generate" >&2
  exit 1
fi
echo "generated/ matches openapi/"
