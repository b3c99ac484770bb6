#!/usr/bin/env bash
# Do password hashes reachable without a session starve redirects? Starts
# the real binary at the default password cost (bcrypt 12), measures
# redirects with wrk alone (idle), then while 16 clients from random
# addresses (the server believes X-Forwarded-For) send made-up password
# link tokens and logins of unknown e-mails (bench/hashflood.lua); meanwhile
# times the admin's own login (from an address of its own) five times, from
# a new browser and from a known device (the cookie of an earlier login).
# HASHFLOOD_ONE_ADDRESS=1 sends the flood from one address instead.
# Usage: bench/hashflood.sh [seconds]   (needs wrk and curl; default 10 s)
# LINKBOLT_BIN=path runs a prebuilt binary instead of building this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
port=${PORT:-18461}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin="$tmp/linkbolt"; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:$port LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:$port
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0 LINKBOLT_SERVER_BEHIND_PROXY=true
"$bin" 2>"$tmp/server.log" & lb=$!
base=http://127.0.0.1:$port
until curl -sf $base/healthz >/dev/null; do sleep 0.2; done
# login N [cookie jar]: the admin's login from address 192.0.2.N, from a
# new browser or, with the jar of an earlier login, from a known device.
login() {
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' ${2:+-b "$2"} $base/v1/auth/login -H 'Content-Type: application/json' \
    -H "X-Forwarded-For: 192.0.2.$1" -d '{"email":"bench@example.com","password":"benchmark-password"}'
}
tok=$(curl -s -c "$tmp/jar" $base/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
for k in 0 1 2 3; do
  curl -s -o /dev/null $base/v1/links -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -d "{\"destination_url\":\"https://example.com/page/$k\",\"alias\":\"s$k\"}"
done
redirects() {
  wrk -t1 -c32 -d"${secs}s" --latency -s bench/redirect4.lua $base | awk '
    function ms(v) { if (v ~ /us$/) {sub(/us/,"",v); return v/1000} if (v ~ /ms$/) {sub(/ms/,"",v); return v} sub(/s/,"",v); return v*1000 }
    /Requests\/sec/ {rps=$2} /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)}
    END {printf "redirects: %.0f req/s, median %.2f ms, p99 %.2f ms\n", rps, p50, p99}'
}
echo "idle:"
redirects
echo "admin login alone: $(login 1)"
echo "while 16 clients send hashes:"
wrk -t2 -c16 -d"$((secs + 2))s" -s bench/hashflood.lua $base >"$tmp/flood.txt" &
flood=$!
sleep 1
(sleep 2; for i in 2 3 4 5 6; do
  echo "admin login, new browser: $(login $i)"
  echo "admin login, known device: $(login $((i + 10)) "$tmp/jar")"
  sleep 0.5
done) >"$tmp/logins.txt" &
redirects
wait $flood
cat "$tmp/logins.txt"
echo "flood: $(grep -E 'Requests/sec' "$tmp/flood.txt") $(grep status "$tmp/flood.txt")"
