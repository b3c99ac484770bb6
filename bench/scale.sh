#!/usr/bin/env bash
# Redirects over a million links: seeds N links (default 1,000,000) through
# the API (2 wrk threads, 32 connections), then spreads GETs uniformly over
# all of them with wrk (64 connections) and reports req/s, p99, the clicks
# counted, memory (/proc/PID/status) and the data file's size.
# Usage: bench/scale.sh [N] [seconds]   LINKBOLT_BIN=path runs a prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."
export LINKBOLT_BENCH_N=${1:-1000000}; secs=${2:-20}; port=${PORT:-18611}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin="$tmp/linkbolt"; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:$port LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:$port
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0 LINKBOLT_AUTH_PASSWORD_COST=4
"$bin" 2>"$tmp/server.log" & lb=$!
base=http://127.0.0.1:$port
until curl -sf $base/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s $base/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
export LINKBOLT_BENCH_KEY=$tok
start=$(date +%s.%N)
wrk -t2 -c32 -d1h -s bench/scale_seed.lua $base >/dev/null & seed=$!
total=0 # wrk's threads stop at N, but wrk itself waits for its duration
while [ "$total" -lt "$LINKBOLT_BENCH_N" ]; do
  sleep 1
  total=$(curl -s "$base/v1/links?limit=1" -H "Authorization: Bearer $tok" | sed -E 's/.*"total":([0-9]+).*/\1/')
done
kill $seed 2>/dev/null || true
echo "links: $total in $(awk "BEGIN{printf \"%.0f\", $(date +%s.%N)-$start}") s"
out=$(wrk -t2 -c64 -d"${secs}s" --latency -s bench/scale_codes.lua $base)
echo "$out" | grep -E "Requests/sec|99%|Non-2xx" || true
sent=$(echo "$out" | awk '/requests in/{print $1}')
count() { curl -s "$base/v1/analytics/workspace?range=today" -H "Authorization: Bearer $tok" | sed -E 's/.*"totals":\{"clicks":([0-9]+).*/\1/'; }
end=$(date +%s.%N); clicks=-1; now=$(count)
while [ "$now" != "$clicks" ]; do clicks=$now; sleep 3; now=$(count); done # until the backlog is written
echo "redirects sent: $sent, clicks counted: $clicks ($(awk "BEGIN{printf \"%.0f\", $(date +%s.%N)-$end-3}") s after the load)"
curl -s $base/metrics | grep -E '^linkbolt_clicks_dropped_total' || true
grep -E "VmHWM|VmRSS|RssAnon|RssFile" /proc/$lb/status
ls -l "$tmp/lb.db" | awk '{printf "data file: %.0f MB\n", $5/1e6}'
