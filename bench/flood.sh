#!/usr/bin/env bash
# Peak memory of linkbolt under a flood of huge headers: 16 connections
# send 30-60 KB User-Agent and Referer headers to one short link
# (bench/flood.lua) for SECONDS, while /proc/PID/status is sampled every
# 0.1 s. Prints the peak VmRSS and RssAnon, the click counters from
# /metrics and what /healthz says.
# Usage: bench/flood.sh [ok|fail] [seconds]   (needs wrk, curl, prlimit)
#   ok   — writes succeed;
#   fail — writes fail as on a full disk: the server runs under
#          `prlimit --fsize` so the data file cannot grow past 1 MiB;
#          once it is full, every click write fails (EFBIG) and clicks pile
#          up in memory, bounded by clicks.queue_bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-ok}; secs=${2:-30}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/linkbolt" .
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8095 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8095
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=warn LINKBOLT_PLANS_FREE=0
if [ "$mode" = fail ]; then
  prlimit --fsize=$((1 << 20)) "$tmp/linkbolt" 2>"$tmp/log" & lb=$!
else
  "$tmp/linkbolt" 2>"$tmp/log" & lb=$!
fi
until curl -sf 127.0.0.1:8095/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8095/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
curl -sf -o /dev/null 127.0.0.1:8095/v1/links -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
  -d '{"destination_url":"https://example.com/","alias":"f"}'
echo "idle: $(grep -E 'VmRSS|RssAnon' /proc/$lb/status | tr -s ' \n' ' ')"

peak_rss=0; peak_anon=0
sample() {
  while kill -0 "$lb" 2>/dev/null; do
    read -r rss anon < <(awk '/^VmRSS/{r=$2} /^RssAnon/{a=$2} END{print r, a}' /proc/$lb/status)
    echo "$rss $anon"
    sleep 0.1
  done
}
sample >"$tmp/samples" & sampler=$!
wrk -t2 -c16 -d"${secs}s" -s bench/flood.lua http://127.0.0.1:8095 | sed -n '1,/Transfer/p'
sleep 2 # a flush interval or two
kill "$sampler"
read -r peak_rss peak_anon < <(awk '$1>r{r=$1} $2>a{a=$2} END{print r, a}' "$tmp/samples")
echo "mode $mode: peak VmRSS $((peak_rss / 1024)) MiB, peak RssAnon $((peak_anon / 1024)) MiB"
echo "after: $(grep -E 'VmRSS|RssAnon' /proc/$lb/status | tr -s ' \n' ' ')"
curl -s 127.0.0.1:8095/metrics | grep -E '^linkbolt_(clicks|click_writes)'
echo "healthz: $(curl -s -w ' %{http_code}' 127.0.0.1:8095/healthz)"
echo "data file: $(du -h "$tmp/lb.db" | cut -f1)"
echo "log lines: $(wc -l <"$tmp/log")"; head -c 1500 "$tmp/log"
