#!/usr/bin/env bash
# Redirect throughput of linkbolt against a bare net/http baseline, on
# loopback, alternating the two, 64 connections. Prints requests/second of
# each round and checks that linkbolt counted every redirect as a click.
# Usage: bench/redirects.sh [rounds] [seconds]   (needs wrk and curl)
# With WEBHOOK=1 a link.clicked webhook to a fast local receiver is subscribed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}; secs=${2:-5}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/linkbolt" . && go build -o "$tmp/baseline" ./bench/baseline
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8091 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8091
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0 LINKBOLT_WEBHOOKS_ALLOW_PRIVATE=true
"$tmp/linkbolt" & lb=$!
"$tmp/baseline" -listen 127.0.0.1:8090 & 
until curl -sf 127.0.0.1:8091/healthz >/dev/null && curl -s 127.0.0.1:8090/ >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8091/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
for i in $(seq 0 999); do
  echo "{\"destination_url\":\"https://example.com/page/$i\",\"alias\":\"c$i\"}"
done | xargs -d '\n' -P 16 -I{} curl -s -o /dev/null 127.0.0.1:8091/v1/links -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d {}
if [ "${WEBHOOK:-0}" = 1 ]; then
  curl -s -o /dev/null -w "webhook: %{http_code}\n" 127.0.0.1:8091/v1/webhooks -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -d '{"url":"http://127.0.0.1:8090/hook","events":["link.clicked"]}'
fi
total=0; ratios=""
for r in $(seq 1 "$rounds"); do
  b=$(wrk -t2 -c64 -d"${secs}s" -s bench/codes.lua http://127.0.0.1:8090 | awk '/Requests\/sec/{print $2}')
  out=$(wrk -t2 -c64 -d"${secs}s" -s bench/codes.lua http://127.0.0.1:8091)
  l=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  n=$(echo "$out" | awk '/requests in/{print $1}')
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "linkbolt answered errors:"; echo "$out"; exit 1; fi
  total=$((total + n))
  ratio=$(awk "BEGIN{printf \"%.2f\", $l/$b}"); ratios="$ratios $ratio"
  echo "round $r: baseline $b req/s, linkbolt $l req/s, ratio $ratio"
done
echo "median ratio: $(echo $ratios | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')"
sleep 2 # one flush interval
clicks=$(curl -s "127.0.0.1:8091/v1/analytics/workspace?range=today" -H "Authorization: Bearer $tok" | sed -E 's/.*"totals":\{"clicks":([0-9]+).*/\1/')
echo "redirects sent: $total, clicks counted: $clicks"
grep VmRSS /proc/$lb/status
if [ "${WEBHOOK:-0}" = 1 ]; then
  sleep 5
  curl -s "127.0.0.1:8091/v1/webhooks" -H "Authorization: Bearer $tok" | head -c 300; echo
  wh=$(curl -s "127.0.0.1:8091/v1/webhooks" -H "Authorization: Bearer $tok" | sed -E 's/.*"id":"(wh_[^"]+)".*/\1/')
  curl -s "127.0.0.1:8091/v1/webhooks/$wh/deliveries?limit=1" -H "Authorization: Bearer $tok" | head -c 300; echo
fi
