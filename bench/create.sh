#!/usr/bin/env bash
# Link creation throughput: 32 concurrent clients POST /v1/links with an API
# key until the workspace holds about 100,000 links; each 201 is sent only
# after the link is committed to disk. Then the time of a tag-filtered page,
# the server's RSS and the binary's size.
# Usage: bench/create.sh [seconds]   (needs wrk and curl)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/linkbolt" .
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8092 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8092
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0
"$tmp/linkbolt" & lb=$!
until curl -sf 127.0.0.1:8092/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8092/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
export LINKBOLT_BENCH_KEY=$(curl -s 127.0.0.1:8092/v1/keys -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
  -d '{"name":"bench","scope":"read_write"}' | sed -E 's/.*"key":"([^"]+)".*/\1/')
wrk -t2 -c32 -d"${secs}s" -s bench/create.lua http://127.0.0.1:8092 | grep -E "Requests/sec|requests in|Latency|Non-2xx"
total=$(curl -s "127.0.0.1:8092/v1/links?limit=1" -H "Authorization: Bearer $LINKBOLT_BENCH_KEY" | sed -E 's/.*"total":([0-9]+).*/\1/')
echo "links stored: $total"
for i in 1 2 3; do
  curl -s -o /dev/null -w "page of 20 filtered by tag t7: %{time_total}s (client-side, whole request)\n" \
    "127.0.0.1:8092/v1/links?tags=t7&page=50" -H "Authorization: Bearer $LINKBOLT_BENCH_KEY"
done
grep VmRSS /proc/$lb/status
ls -l "$tmp/linkbolt" | awk '{printf "binary size: %.1f MiB\n", $5/1048576}'
ls -l "$tmp/lb.db" | awk '{printf "data file: %.1f MiB\n", $5/1048576}'
