#!/usr/bin/env bash
# Redirect latency while bulk creations hash link passwords (issue 24,
# item 14): the median and p99 of redirects from one client for 10 s
# alone, then for 10 s while 7 bulk creations of 20 links with a password
# each arrive within a second (each hash is bcrypt at cost 10).
# Usage: bench/bulkhash.sh   (needs curl, python3)
#   LINKBOLT_BENCH_BIN=path runs that binary instead of building this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
bin=${LINKBOLT_BENCH_BIN:-}
if [ -z "$bin" ]; then go build -o "$tmp/linkbolt" . && bin=$tmp/linkbolt; fi
export LINKBOLT_SERVER_LISTEN=127.0.0.1:8098 LINKBOLT_SERVER_BASE_URL=http://127.0.0.1:8098
export LINKBOLT_STORAGE_PATH="$tmp/lb.db" LINKBOLT_ADMIN_EMAIL=bench@example.com LINKBOLT_ADMIN_PASSWORD=benchmark-password
export LINKBOLT_LOG_LEVEL=error
"$bin" 2>"$tmp/log" & lb=$!
until curl -sf 127.0.0.1:8098/healthz >/dev/null; do sleep 0.2; done
tok=$(curl -s 127.0.0.1:8098/v1/auth/login -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark-password"}' | sed -E 's/.*"token":"([^"]+)".*/\1/')
curl -sf -o /dev/null 127.0.0.1:8098/v1/links -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
  -d '{"destination_url":"https://example.com/","alias":"r"}'
# redirects: one client asking for the short link again and again for 10 s
# (as a visitor's browser would, not a flood: a flood takes every core and
# leaves costly work none), its median and p99 in ms.
redirects() {
  python3 - <<'PY'
import http.client, time
c = http.client.HTTPConnection("127.0.0.1", 8098)
lat, end = [], time.time() + 10
while time.time() < end:
    t = time.perf_counter(); c.request("GET", "/r"); r = c.getresponse(); r.read()
    lat.append((time.perf_counter() - t) * 1000)
    time.sleep(0.005)
lat.sort()
print("median %.2f ms, p99 %.2f ms, %d redirects" % (lat[len(lat) // 2], lat[len(lat) * 99 // 100], len(lat)))
PY
}
echo "redirects alone:           $(redirects)"
python3 - "$tok" "$tmp/bulk.out" <<'PY' &
import http.client, json, sys, threading, time
tok, out = sys.argv[1], sys.argv[2]
got = []
def one(n):
    body = json.dumps({"links": [{"destination_url": "https://example.com/%d/%d" % (n, i), "password": "open sesame %d" % i} for i in range(20)]})
    c = http.client.HTTPConnection("127.0.0.1", 8098, timeout=120)
    c.request("POST", "/v1/links/bulk", body=body, headers={"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
    r = c.getresponse(); r.read(); got.append(r.status)
ts = []
for n in range(7):
    t = threading.Thread(target=one, args=(n,)); t.start(); ts.append(t); time.sleep(0.1)
[t.join() for t in ts]
open(out, "w").write(" ".join(map(str, sorted(got))))
PY
attack=$!
echo "redirects during the bulks: $(redirects)"
wait $attack
echo "bulk answers: $(cat "$tmp/bulk.out")"
