#!/usr/bin/env bash
# Several linkbolt instances on one PostgreSQL database behind nginx, as
# docs/instances.md sets them up, measured on this machine: redirect
# throughput and latency through nginx against one instance reached
# directly, whether every redirect answered was counted exactly once
# across the instances, and each instance's memory. A throwaway
# PostgreSQL cluster (fsync on) and nginx run from a temporary directory
# and are removed at the end.
#
# Usage: bench/instances.sh [INSTANCES] [LINKS] [SECS]   (3, 10000, 15)
#   PG_BIN=dir takes initdb and pg_ctl from dir (/usr/lib/postgresql/15/bin);
#   CONNS=n wrk connections (64);
#   OUTAGE=n adds a third run through nginx, n+15 seconds long, during
#   which PostgreSQL is stopped (a fast shutdown) 5 seconds in and started
#   again n seconds later: what redirects answered other than 3xx, and
#   whether every one answered was still counted once.
# Needs wrk, nginx, curl, python3 and PostgreSQL's programs. The delay
# until another instance sees a link change is measured by
#   LINKBOLT_TEST_STORE=postgres go test ./server/ -run '^$' -bench InstancesInvalidation -benchtime 300x
set -euo pipefail
cd "$(dirname "$0")/.."
instances=${1:-3}; links=${2:-10000}; secs=${3:-15}; conns=${CONNS:-64}
pgbin=${PG_BIN:-/usr/lib/postgresql/15/bin}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
for p in wrk curl python3 "$nginx" "$pgbin/initdb"; do
  command -v "$p" >/dev/null || { echo "instances.sh: $p is missing" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/linkbolt-instances-XXXXXX)
pids=()
as_pg() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -f "$tmp/pg/data/postmaster.pid" ] && as_pg "$pgbin/pg_ctl" -D "$tmp/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
waitport() { for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$1/healthz" && return; sleep 0.05; done; echo "nothing on :$1" >&2; exit 1; }

# PostgreSQL, as bench/scale.sh starts it.
pg=$tmp/pg; mkdir "$pg"
pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'); echo "$pw" >"$pg/pw"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$pg" && chmod 755 "$tmp"
as_pg "$pgbin/initdb" -D "$pg/data" -U linkbolt --pwfile "$pg/pw" --auth-local=trust \
  --auth-host=scram-sha-256 -E UTF8 --locale=C >"$pg/initdb.log"
pgport=$(freeport)
pgopts="-p $pgport -c listen_addresses=127.0.0.1 -c unix_socket_directories=$pg -c shared_buffers=512MB -c max_connections=200"
as_pg "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/postgres.log" -w -o "$pgopts" start >/dev/null
as_pg "$pgbin/createdb" -h "$pg" -p "$pgport" -U linkbolt linkbolt
db="postgres://linkbolt:$pw@127.0.0.1:$pgport/linkbolt"

go build -o "$tmp/linkbolt" .
front=$(freeport)
ports=()
for i in $(seq "$instances"); do ports+=("$(freeport)"); done

# nginx with deploy/nginx-linkbolt.conf, its upstreams and port replaced.
mkdir -p "$tmp/nginx"
python3 - "$tmp/nginx/linkbolt.conf" "$front" "${ports[@]}" <<'EOF'
import sys
out, front, ports = sys.argv[1], sys.argv[2], sys.argv[3:]
lines, done = [], False
for line in open("deploy/nginx-linkbolt.conf"):
    t = line.strip()
    if t.startswith("server 127.0.0.1:"):
        if not done:
            opts = t.rstrip(";").split(" ", 2)[2]
            lines += [f"\tserver 127.0.0.1:{p} {opts};\n" for p in ports]
            done = True
        continue
    if t == "listen [::]:80;":
        continue
    if t == "listen 80;":
        line = f"\tlisten 127.0.0.1:{front};\n"
    lines.append(line)
open(out, "w").write("".join(lines))
EOF
user=; [ "$(id -u)" = 0 ] && user="user root;"
cat >"$tmp/nginx/nginx.conf" <<EOF
$user
daemon off;
worker_processes auto;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $tmp/nginx/body; proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/f; uwsgi_temp_path $tmp/nginx/u; scgi_temp_path $tmp/nginx/s;
  include $tmp/nginx/linkbolt.conf; }
EOF
"$nginx" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" & pids+=($!)

# The instances, with the environment of deploy/linkbolt@.service.
for p in "${ports[@]}"; do
  mkdir -p "$tmp/state/$p"
  env $(sed -n 's/^Environment=//p' deploy/linkbolt@.service | sed "s/%i/$p/g; s/%l/bench/g; s#/var/lib/linkbolt#$tmp/state#g") \
    LINKBOLT_STORAGE_POSTGRES_URL="$db" LINKBOLT_SERVER_BASE_URL="http://127.0.0.1:$front" \
    LINKBOLT_ADMIN_EMAIL=admin@example.com LINKBOLT_ADMIN_PASSWORD="a long password" \
    LINKBOLT_PLANS_FREE=0 LINKBOLT_LOG_LEVEL=warn "$tmp/linkbolt" serve 2>>"$tmp/state/$p/log" &
  pids+=($!)
  waitport "$p"
done
waitport "$front"

api() { curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' "$@"; }
tok=$(curl -sf -H 'Content-Type: application/json' -d '{"email":"admin@example.com","password":"a long password"}' \
  "http://127.0.0.1:$front/v1/auth/login" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
key=$(curl -sf -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d '{"name":"bench","scope":"read_write"}' \
  "http://127.0.0.1:$front/v1/keys" | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
echo "seeding $links links through nginx" >&2
for ((from = 0; from < links; from += 1000)); do
  python3 -c "import json; print(json.dumps({'links': [{'destination_url': f'https://example.com/{i}', 'alias': f'm{i}'} for i in range($from, min($from + 1000, $links))]}))" |
    api -d @- "http://127.0.0.1:$front/v1/links/bulk" >/dev/null
done
clicks() { api "http://127.0.0.1:$front/v1/analytics/workspace?range=all" | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["clicks"])'; }

# wrk_run NAME URL: uniform redirects over the links, the answered ones
# counted; prints a table row.
answered=0 runs=0
wrk_run() {
  runs=$((runs + 1))
  LINKBOLT_BENCH_N=$links wrk -t2 -c"$conns" -d"${secs}s" --latency -s bench/scale_codes.lua "$2" >"$tmp/wrk.txt"
  local total bad rps p50 p99
  total=$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")
  bad=$(awk '/Non-2xx or 3xx/ {print $5}' "$tmp/wrk.txt"); bad=${bad:-0}
  rps=$(awk '/Requests\/sec/ {printf "%d", $2}' "$tmp/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt"); p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
  answered=$((answered + total - bad))
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$rps" "$p50" "$p99" "$bad"
}
before=$(clicks)
echo "| redirects ($conns connections, $links links, uniform) | req/s | p50 | p99 | not 3xx |"
echo "|---|---|---|---|---|"
wrk_run "one instance, direct" "http://127.0.0.1:${ports[0]}"
wrk_run "$instances instances through nginx" "http://127.0.0.1:$front"
if [ -n "${OUTAGE:-}" ]; then
  (sleep 5; as_pg "$pgbin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null
    echo "PostgreSQL stopped at $(date -u +%T)" >&2; sleep "$OUTAGE"
    as_pg "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/postgres.log" -w -o "$pgopts" start >/dev/null
    echo "PostgreSQL started again at $(date -u +%T)" >&2) &
  outage=$!
  run_secs=$secs; secs=$((OUTAGE + 15))
  wrk_run "$instances instances through nginx, PostgreSQL stopped ${OUTAGE} s of it" "http://127.0.0.1:$front"
  secs=$run_secs; wait "$outage"
  for p in "${ports[@]}"; do
    for _ in $(seq 600); do [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/healthz")" = 200 ] && break; sleep 0.1; done
  done
fi
# The instances write what they queued (and spilled) at their pace: wait
# until the count stops moving.
after=$(clicks); last=-1
while [ "$after" != "$last" ]; do last=$after; sleep 3; after=$(clicks); done
metric() { local sum=0 v; for p in "${ports[@]}"; do
  v=$(curl -s "http://127.0.0.1:$p/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {printf "%d", $2}'); sum=$((sum + ${v:-0})); done; echo $sum; }
echo
# wrk stops with up to $conns requests in flight a run: their clicks
# count, their answers are not read. Exactness itself is the e2e test's
# (TestInstancesBehindNginx: 300 redirects, 300 clicks).
diff=$((after - before - answered))
verdict="consistent: within the $((runs * conns)) requests wrk leaves in flight"
{ [ "$diff" -lt 0 ] || [ "$diff" -gt $((runs * conns)) ]; } && verdict="NOT consistent"
echo "redirects wrk saw answered: $answered; clicks counted: $((after - before)), $diff more ($verdict);" \
  "dropped (queue or backlog full): $(metric linkbolt_clicks_dropped_total); still pending: $(metric linkbolt_clicks_pending), in the backlog: $(metric linkbolt_clicks_backlog)"
for i in "${!ports[@]}"; do
  pid=${pids[$((i + 1))]}
  echo "instance ${ports[$i]}: $(awk '/VmHWM|RssAnon/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$pid/status")"
done
echo "nginx $("$nginx" -v 2>&1 | cut -d/ -f2), PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
