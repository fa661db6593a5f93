#!/usr/bin/env bash
# Installs the Debian packages the tests need when they are missing: Chromium (the docs test opens the
# page in a real browser), openssl (the guide's shell example is run), python3 (the docs' Python
# samples are run) and prometheus for its promtool (the alert rules of docs/operating.md are checked and
# unit-tested with it: test/server/http/alerts.test.ts). Needs root and apt-get; otherwise it only says what is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} with apt-get" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "missing Debian packages: ${missing[*]} (install them: apt-get install ${missing[*]})" >&2
  exit 1
fi
