#!/usr/bin/env bash
# linkbolt's two stores side by side: bench/scale.sh N SECS on bbolt, then
# on PostgreSQL (a throwaway cluster), one after the other on the same
# machine, and one table of both runs' headline figures at the end. The
# runs' full output goes to stderr and to $OUT/bbolt.txt, $OUT/postgres.txt.
#
# Usage: bench/stores.sh [N] [SECS] [bench/scale flags for both runs ...]
#   STORES="postgres" runs one store only; OUT=dir keeps the outputs
#   (default: a temporary directory, removed at the end);
#   BBOLT_FLAGS / POSTGRES_FLAGS add flags to one store's run only, e.g.
#   POSTGRES_FLAGS="-seed-clicks 2000000" when the machine has no time
#   for PostgreSQL to record 10 million.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}; secs=${2:-20}
shift $(( $# < 2 ? $# : 2 ))
stores=${STORES:-bbolt postgres}
out=${OUT:-}
if [ -z "$out" ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
mkdir -p "$out"
for st in $stores; do
  extra=BBOLT_FLAGS; [ "$st" = postgres ] && extra=POSTGRES_FLAGS
  echo "=== $st: bench/scale.sh $n $secs $st $* ${!extra:-} ($(date -u +%H:%M:%S) UTC)" >&2
  # shellcheck disable=SC2086 # the store's extra flags are words
  SUMMARY=$out/$st.sum bench/scale.sh "$n" "$secs" "$st" -skip-baseline -gets 50 "$@" ${!extra:-} 2>&1 |
    tee "$out/$st.txt" >&2 || { echo "stores.sh: the $st run failed (see above)" >&2; exit 1; }
done
echo "=== done $(date -u +%H:%M:%S) UTC; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# One table: the figures in the order of the first run, a column a store.
awk -F'\t' -v stores="$stores" '
  BEGIN { ns = split(stores, st, " ") }
  { s = FILENAME; sub(/.*\//, "", s); sub(/\.sum$/, "", s)
    if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    v[$1, s] = $2 }
  END {
    printf "| figure |"; for (i = 1; i <= ns; i++) printf " %s |", st[i]; print ""
    printf "|---|"; for (i = 1; i <= ns; i++) printf "---|"; print ""
    for (k = 1; k <= n; k++) {
      printf "| %s |", order[k]
      for (i = 1; i <= ns; i++) printf " %s |", ((order[k], st[i]) in v) ? v[order[k], st[i]] : "–"
      print ""
    }
  }' $(for st in $stores; do echo "$out/$st.sum"; done)
