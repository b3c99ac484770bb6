#!/usr/bin/env bash
# Peak memory of linkbolt under a flood of large request bodies (issue 24,
# item 7): CONC concurrent import dry runs of a 31 MiB CSV, twice over,
# then 200 concurrent bulk creations of 4 MiB each. Prints what the
# requests were answered and the server's peak RSS (VmHWM) after each
# phase (VmHWM is reset between the phases). The goal: no flood takes RSS over 256 MB.
# Usage: bench/bodies.sh [concurrent dry runs]   (needs curl, python3)
#   LINKBOLT_BENCH_BIN=path runs that binary instead of building this tree
#   (to measure an older commit).
set -euo pipefail
cd "$(dirname "$0")/.."
conc=${1:-24}
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BENCH_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin=$tmp/linkbolt; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8097 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8097
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=error LINKBOLT_PLANS_FREE=0 LINKBOLT_AUTH_PASSWORD_COST=10
"$bin" 2>"$tmp/log" & lb=$!
until curl -sf 127.0.0.1:8097/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8097/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
key=$(curl -s 127.0.0.1:8097/v1/keys -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
  -d '{"name":"bench","scope":"read_write"}' | sed -E 's/.*"key":"([^"]+)".*/\1/')
echo "idle: $(grep -E 'VmRSS|VmHWM' /proc/$lb/status | tr -s ' \n' ' ')"

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
rows, size, i = ["url,alias"], 10, 0
while size < 30_800_000:  # a 31 MiB body once escaped, under the 32 MiB limit
    rows.append("https://example.com/%s/%d,imp%d" % ("p" * 200, i, i)); size += len(rows[-1]) + 2; i += 1
csv = "\n".join(rows) + "\n"
open(tmp + "/import.json", "w").write(json.dumps({"from": "csv", "dry_run": True, "data": csv}))
links = [{"destination_url": "https://example.com/" + "b" * 4000 + "/%d" % i} for i in range(1000)]
body = json.dumps({"links": links})
open(tmp + "/bulk.json", "w").write(body[: 4 << 20] if len(body) <= 4 << 20 else json.dumps({"links": links[: 1000 * (4 << 20) // len(body)]}))
PY
ls -l "$tmp/import.json" "$tmp/bulk.json" | awk '{print $5, $9}'

# flood N PATH FILE: N requests at once, each the file as its body; prints
# how many got each status.
flood() {
  python3 - "$1" "$2" "$3" "$key" <<'PY'
import http.client, sys, threading, collections
n, path, body, key = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], "rb").read(), sys.argv[4]
got = collections.Counter()
def one():
    try:
        c = http.client.HTTPConnection("127.0.0.1", 8097, timeout=300)
        try:
            c.request("POST", path, body=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered (503) before the body was read: the answer waits
        r = c.getresponse(); r.read(); got[r.status] += 1
    except Exception as e:
        got[type(e).__name__] += 1
ts = [threading.Thread(target=one) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
print(path, dict(got))
PY
}
# phase NAME: the peak VmHWM since the last phase (the kernel's, exact) and
# the peak RssAnon of samples every 0.05 s (the heap without the data
# file's pages).
sample() { while kill -0 "$lb" 2>/dev/null; do awk '/^RssAnon/{print $2}' /proc/$lb/status; sleep 0.05; done; }
phase() {
  kill "$sampler"
  echo "$1: peak VmHWM $(awk '/^VmHWM/{print int($2/1024)}' /proc/$lb/status) MiB, peak RssAnon $(sort -n "$tmp/anon" | tail -1 | awk '{print int($1/1024)}') MiB"
  echo 5 > /proc/$lb/clear_refs  # VmHWM starts again from VmRSS
}
sample >"$tmp/anon" & sampler=$!
for round in 1 2; do flood "$conc" /v1/imports "$tmp/import.json"; done
phase "$conc concurrent dry runs, twice"
sample >"$tmp/anon" & sampler=$!
flood 200 /v1/links/bulk "$tmp/bulk.json"
phase "200 concurrent bulk creations"
