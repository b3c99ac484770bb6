#!/usr/bin/env bash
# Memory of the offline import (issue 24, item 16), under /usr/bin/time -v:
#  1. a YOURLS export of 100,000 links and a yourls_log of 3 million
#     clicks (about 250 MB), as a dry run;
#  2. --file /dev/zero (no line break, no end), stopped by timeout after
#     30 s (SIGTERM, then SIGKILL 5 s later) if it does not stop itself.
# Prints each run's exit, wall time and maximum resident set size.
# Usage: bench/importfile.sh   (needs curl, python3, /usr/bin/time)
#   LINKBOLT_BENCH_BIN=path runs that binary instead of building this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BENCH_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin=$tmp/linkbolt; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8099 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8099
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=error
"$bin" 2>"$tmp/log" & lb=$!
until curl -sf 127.0.0.1:8099/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8099/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
ws=$(curl -s 127.0.0.1:8099/v1/me -H "Authorization: Bearer $tok" | sed -E 's/.*"workspaces":\[\{"id":"([^"]+)".*/\1/')
kill "$lb"; wait "$lb" || true
python3 - "$tmp" <<'PY'
import sys, random
tmp = sys.argv[1]
random.seed(1)
with open(tmp + "/urls.csv", "w") as f:
    f.write("keyword,url,title,timestamp,ip,clicks\n")
    for i in range(100_000):
        f.write("k%d,https://example.com/page/%d,Page %d,2022-05-01 10:00:00,203.0.113.7,30\n" % (i, i, i))
uas = ["Mozilla/5.0 (X11; Linux x86_64; rv:%d.0) Gecko/20100101 Firefox/%d.0" % (v, v) for v in range(60, 130)]
with open(tmp + "/log.csv", "w") as f:
    f.write("click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code\n")
    for i in range(3_000_000):
        f.write("%d,2022-05-%02d 09:10:00,k%d,direct,%s,198.51.100.%d,DE\n" % (i, 1 + i % 28, i % 100_000, uas[i % len(uas)], i % 250))
PY
echo "log: $(du -m "$tmp/log.csv" | cut -f1) MB"
measure() {
  set +e
  /usr/bin/time -v -o "$tmp/time" timeout -k 5 30 "$bin" import --from "$@" --workspace "$ws" --dry-run >"$tmp/out" 2>"$tmp/err"
  code=$?
  set -e
  echo "  exit $code, $(grep -E 'Elapsed' "$tmp/time" | sed 's/.*: //') wall, max RSS $(awk '/Maximum resident/{print int($6/1024)}' "$tmp/time") MiB"
  grep -E "^imported|linkbolt:" "$tmp/out" "$tmp/err" | head -3 | cut -c1-200 | sed 's/^/  /'
}
echo "YOURLS, 100,000 links and 3,000,000 clicks, dry run:"
measure yourls --file "$tmp/urls.csv" --log "$tmp/log.csv"
echo "--file /dev/zero:"
measure csv --file /dev/zero
