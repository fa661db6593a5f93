#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1 (trust auth, for tests only) and prints its URL.
# usage: scripts/postgres-cluster.sh start DIR [PORT] | stop DIR
set -euo pipefail
bin=/usr/lib/postgresql/15/bin
action=$1
dir=$2
port=${3:-5433}
run() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
case "$action" in
  start)
    if [ ! -x "$bin/initdb" ]; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
      else
        echo "PostgreSQL 15 is not installed (apt-get install postgresql-15)" >&2; exit 1
      fi
    fi
    mkdir -p "$dir"
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    run "$bin/initdb" -D "$dir" -A trust -U postgres >/dev/null
    run "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" -w start >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    run "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 64 ;;
esac
