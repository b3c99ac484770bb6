#!/usr/bin/env bash
# Issue 9's rate attacks over HTTP on loopback, bounded in time:
#  1. one key of a free-plan workspace mints 99 more (the cap is 100 keys);
#     64 connections then spread requests over all 100 for $secs seconds: the 200s stay at
#     the workspace's budget (100 + 100/min of refill), the rest are 429;
#  2. wrong passwords from 127.0.0.1 for $secs seconds while the owner signs
#     in from 127.0.0.2 every second: every owner login must be 200.
# Prints requests/second and the server's RSS before and after.
# Usage: bench/limits.sh [seconds]   (needs wrk and curl)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/linkbolt" .
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8093 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8093
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_AUTH_PASSWORD_COST=10
"$tmp/linkbolt" & lb=$!
until curl -sf 127.0.0.1:8093/healthz >/dev/null; do sleep 0.2; done
login='{"email":"bench@example.com","password":"benchmark-password"}'
tok=$(curl -s 127.0.0.1:8093/v1/auth/login -H 'Content-Type: application/json' -d "$login" | sed -E 's/.*"token":"([^"]+)".*/\1/')
ws=$(curl -s 127.0.0.1:8093/v1/me -H "Authorization: Bearer $tok" | sed -E 's/.*"workspaces":\[\{"id":"([^"]+)".*/\1/')
key=$(curl -s 127.0.0.1:8093/v1/keys -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
  -d '{"name":"parent","scope":"read_write"}' | sed -E 's/.*"key":"([^"]+)".*/\1/')
# Mint on an unlimited plan (minting is rated too), then back to free.
curl -s -o /dev/null -X PATCH 127.0.0.1:8093/v1/workspaces/$ws -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d '{"plan":"enterprise"}'
echo "$key" > "$tmp/keys"
for i in $(seq 1 99); do
  curl -s 127.0.0.1:8093/v1/keys -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d '{"name":"minted","scope":"read"}' | sed -E 's/.*"key":"([^"]+)".*/\1/'
done >> "$tmp/keys"
curl -s -o /dev/null -X PATCH 127.0.0.1:8093/v1/workspaces/$ws -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d '{"plan":"free"}'
echo "keys in use: $(grep -c _live_ "$tmp/keys")"
grep VmRSS /proc/$lb/status
LINKBOLT_BENCH_KEYS="$tmp/keys" wrk -t2 -c64 -d"${secs}s" -s bench/keys.lua http://127.0.0.1:8093 | grep -E "Requests/sec|answered|Latency"
grep VmRSS /proc/$lb/status

wrk -t2 -c16 -d"${secs}s" -s bench/login.lua http://127.0.0.1:8093/v1/auth/login > "$tmp/wrk" & w=$!
ok=0; bad=0
for i in $(seq 1 "$secs"); do
  sleep 1
  code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 127.0.0.1:8093/v1/auth/login -H 'Content-Type: application/json' -d "$login")
  if [ "$code" = 200 ]; then ok=$((ok+1)); else bad=$((bad+1)); echo "owner login: $code"; fi
done
wait $w
grep -E "Requests/sec|status|Latency" "$tmp/wrk"
echo "owner logins from 127.0.0.2 during the attack: $ok answered 200, $bad refused"
grep -E "VmRSS|VmHWM" /proc/$lb/status
