#!/usr/bin/env bash
# Memory of linkbolt under many connections that each send a 62 KB
# unfinished header (bench/slowconn.py), on loopback. For each count a
# fresh server is started; then one warm server takes every count in turn.
# Prints the peak VmRSS and RssAnon (sampled every 100 ms from
# /proc/PID/status), the RSS once the connections are gone, and the time a
# normal client's redirect took while the slow connections were held.
# Usage: bench/slowconn.sh [binary] [hold seconds] [counts...]
#   e.g. bench/slowconn.sh "" 15 1000 3000 6000    (needs python3, curl)
# SIZE=n sets the bytes of the unfinished User-Agent (default 62000).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}; hold=${2:-15}; shift 2 || true
counts=("${@:-1000 3000 6000}"); [ $# -eq 0 ] && counts=(1000 3000 6000)
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
[ -n "$bin" ] || { go build -o "$tmp/linkbolt" . && bin="$tmp/linkbolt"; }
ulimit -n 20000
export LINKBOLT_SERVER_LISTEN=127.0.0.1:18181 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:18181
export LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password LINKBOLT_LOG_LEVEL=error
start() {
  rm -f "$tmp/lb.db"; LINKBOLT_STORAGE_PATH="$tmp/lb.db" "$bin" >"$tmp/log" 2>&1 & pid=$!
  until curl -sf 127.0.0.1:18181/healthz >/dev/null; do sleep 0.2; done
  tok=$(curl -s 127.0.0.1:18181/v1/auth/login -H 'Content-Type: application/json' \
    -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
  curl -s -o /dev/null 127.0.0.1:18181/v1/links -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -d '{"destination_url":"https://example.com/","alias":"f"}'
}
kb() { awk -v k="$1:" '$1==k{print $2}' /proc/$pid/status; }
sample() { # python pid: prints the peak VmRSS and RssAnon in kB while it runs
  local peak=0 anon=0 r a
  while kill -0 "$1" 2>/dev/null; do
    r=$(kb VmRSS); a=$(kb RssAnon)
    [ "$r" -gt $peak ] && peak=$r; [ "$a" -gt $anon ] && anon=$a
    sleep 0.1
  done
  echo "$peak $anon"
}
round() { # count
  local n=$1
  python3 bench/slowconn.py "$n" "$hold" 18181 "${SIZE:-62000}" >"$tmp/slow" & local sp=$!
  sample $sp >"$tmp/peak" & local pp=$!
  sleep 3
  local t; t=$(curl -s -o /dev/null -m 60 -w '%{http_code} in %{time_total}s' 127.0.0.1:18181/f || echo failed)
  wait $pp; sleep 1
  read -r peak anon <"$tmp/peak"
  printf '%6d conns: %s; peak VmRSS %4d MB, RssAnon %4d MB; after %4d MB; redirect while held: %s\n' \
    "$n" "$(tail -1 "$tmp/slow")" $((peak/1024)) $((anon/1024)) $(( $(kb VmRSS)/1024 )) "$t"
}
echo "fresh server for each count:"
for n in "${counts[@]}"; do start; round "$n"; kill $pid; wait $pid 2>/dev/null || true; done
echo "one warm server, counts in turn:"
start; for n in "${counts[@]}"; do round "$n"; done; kill $pid; wait $pid 2>/dev/null || true
