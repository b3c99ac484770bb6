#!/usr/bin/env bash
# Do costly API calls starve redirects? Starts the real binary with 20,000
# links, measures redirects with wrk alone (idle), then while 16 concurrent
# clients (a second wrk) hammer one costly operation at a time: search,
# QR PNG at size 2048, raw click export, workspace analytics, backup.
# Prints redirect req/s and p99 of each against an idle run just before it,
# and what the hammering clients got (req/s, non-2xx answers).
# Usage: bench/starve.sh [seconds]   (needs wrk and curl; default 8 s a run)
# LINKBOLT_BIN=path runs a prebuilt binary instead of building this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}
port=${PORT:-18457}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin="$tmp/linkbolt"; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:$port LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:$port
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0 LINKBOLT_AUTH_PASSWORD_COST=4
"$bin" 2>"$tmp/server.log" & lb=$!
base=http://127.0.0.1:$port
until curl -sf $base/healthz >/dev/null; do sleep 0.2; done
export LINKBOLT_BENCH_TOKEN=$(curl -s $base/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
auth="Authorization: Bearer $LINKBOLT_BENCH_TOKEN"
total=0
for round in 1 2 3 4; do # again (409 for the links made) until all are made
  wrk -t2 -c16 -d15s -s bench/starve_seed.lua $base >/dev/null
  for k in 0 1 2 3; do # wrk may spend a thread's first request() before sending
    curl -s -o /dev/null $base/v1/links -H "$auth" -H 'Content-Type: application/json' \
      -d "{\"destination_url\":\"https://example.com/page/$k\",\"alias\":\"s$k\"}"
  done
  total=$(curl -s "$base/v1/links?limit=1" -H "$auth" | sed -E 's/.*"total":([0-9]+).*/\1/')
  [ "$total" -lt 20000 ] || break
done
id=$(curl -s "$base/v1/links?limit=1&page=$total" -H "$auth" | sed -E 's/.*"id":"([^"]+)".*/\1/')
echo "links: $total (QR of $id)"
[ "$total" -ge 20000 ] || { echo "seeding fell short"; exit 1; }

# redirects prints "req/s p99_ms" of a redirect run.
redirects() {
  wrk -t1 -c32 -d"${secs}s" --latency -s bench/starve.lua $base | awk '
    /Requests\/sec/ {rps=$2}
    /^ +99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; p99=v}
    END {printf "%.0f %.2f", rps, p99}'
}
# Each load is measured right after an idle run of its own, as the machine's
# other work drifts; the ratios compare the two.
printf "%-10s %9s %9s %9s %9s %6s %6s  %s\n" load "idle r/s" "idle p99" "load r/s" "load p99" "×rps" "×p99" "costly clients"
for name in search qr2048 export analytics backup; do
  case $name in
    search) path="/v1/links?search=example.com/page/1999" ;;
    qr2048) path="/v1/links/$id/qr?format=png&size=2048" ;;
    export) path="/v1/analytics/export?range=today&format=csv" ;;
    analytics) path="/v1/analytics/workspace?range=7d" ;;
    backup) path="/v1/admin/backup" ;;
  esac
  read idle_rps idle_p99 <<<"$(redirects)"
  wrk -t1 -c16 -d"$((secs + 2))s" -H "$auth" "$base$path" >"$tmp/costly.txt" &
  hammer=$!
  sleep 1
  read rps p99 <<<"$(redirects)"
  wait $hammer
  costly=$(awk '/Requests\/sec/{r=$2} /Non-2xx/{n=$5} END{printf "%s req/s, non-2xx %s", r, (n==""?0:n)}' "$tmp/costly.txt")
  printf "%-10s %9s %9s %9s %9s %6.2f %6.2f  %s\n" $name "$idle_rps" "$idle_p99" "$rps" "$p99" \
    "$(awk "BEGIN{print $rps/$idle_rps}")" "$(awk "BEGIN{print $p99/$idle_p99}")" "$costly"
done
grep -E "VmRSS|RssAnon|RssFile|VmHWM" /proc/$lb/status
