#!/usr/bin/env bash
# linkbolt at scale on one store: runs bench/scale (see docs/benchmarks.md)
# for N links (default 1,000,000) with wrk runs of SECS seconds (default
# 20) on bbolt (a data file in a temporary directory, the default) or on
# PostgreSQL: a throwaway PostgreSQL 15 cluster this script starts in a
# temporary directory (initdb, pg_ctl; as nobody when run as root) on a
# free loopback port, with fsync and synchronous commits on as a real
# server has them, and removes on exit. linkbolt gets its database as
# LINKBOLT_STORAGE_POSTGRES_URL.
#
# Usage: bench/scale.sh [N] [SECS] [bbolt|postgres] [bench/scale flags ...]
#   LINKBOLT_BIN=path measures a prebuilt binary; SUMMARY=file also writes
#   the headline figures there (bench/stores.sh reads them);
#   PG_BIN=dir takes initdb and pg_ctl from dir (/usr/lib/postgresql/15/bin);
#   PG_OPTS='-c name=value ...' adds PostgreSQL settings; PG_LOG=file keeps
#   PostgreSQL's log; KEEP_PG=1 leaves the cluster running at the end (to
#   EXPLAIN its queries) and says how to reach and remove it.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}; secs=${2:-20}; store=${3:-bbolt}
shift $(( $# < 3 ? $# : 3 ))
case $store in bbolt|postgres) ;; *) echo "scale.sh: store $store: bbolt or postgres" >&2; exit 2 ;; esac
pgbin=${PG_BIN:-/usr/lib/postgresql/15/bin}
tmp=$(mktemp -d /tmp/linkbolt-scale-sh-XXXXXX)
pgdata= port=
cleanup() {
  if [ -n "$pgdata" ] && [ -n "${KEEP_PG:-}" ]; then
    rm -f "$tmp/scale"
    echo "scale.sh: PostgreSQL left running for a look (KEEP_PG): psql -h $tmp/pg -p $port -U linkbolt linkbolt;" \
      "stop it with: setpriv --reuid=nobody --regid=nogroup --clear-groups -- $pgbin/pg_ctl -D $pgdata stop; rm -rf $tmp" >&2
    return
  fi
  if [ -n "$pgdata" ] && [ -f "$pgdata/postmaster.pid" ]; then
    as_pg "$pgbin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null 2>&1 || true
  fi
  if [ -n "$pgdata" ] && [ -n "${PG_LOG:-}" ]; then cp "$tmp/pg/postgres.log" "$PG_LOG" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
# as_pg runs PostgreSQL's programs as nobody when this script runs as
# root (PostgreSQL refuses to run as root).
as_pg() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}

go build -o "$tmp/scale" ./bench/scale
args=(-n "$n" -duration "${secs}s" -skewed "${secs}s" -store "$store")
[ -n "${LINKBOLT_BIN:-}" ] && args+=(-bin "$LINKBOLT_BIN")
[ -n "${SUMMARY:-}" ] && args+=(-summary "$SUMMARY")

if [ "$store" = postgres ]; then
  [ -x "$pgbin/initdb" ] || { echo "scale.sh: no initdb in $pgbin (set PG_BIN)" >&2; exit 2; }
  pg=$tmp/pg; mkdir "$pg"; pgdata=$pg/data
  pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  echo "$pw" >"$pg/pw"
  [ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$pg" && chmod 755 "$tmp"
  as_pg "$pgbin/initdb" -D "$pgdata" -U linkbolt --pwfile "$pg/pw" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C >"$pg/initdb.log"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Defaults but for memory a server of this size would give it, and WAL
  # room so that checkpoints do not come every minute while seeding.
  as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$pg/postgres.log" -w -o \
    "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$pg -c shared_buffers=1GB -c max_wal_size=8GB -c max_connections=200 ${PG_OPTS:-}" \
    start >/dev/null
  as_pg "$pgbin/createdb" -h "$pg" -p "$port" -U linkbolt linkbolt
  echo "PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, data in $pgdata" >&2
  args+=(-postgres-url "postgres://linkbolt:$pw@127.0.0.1:$port/linkbolt")
fi
"$tmp/scale" "${args[@]}" "$@"
