#!/bin/sh
# Session-table lookup rates of this tree against another revision's
# session code, in one run: the same session_bench program (this tree's
# bench/session-bench.cc) is linked once with REV's core (dp_session,
# dp_flow, dp_ops and their headers) and once with this tree's, both
# Release (-O3 -DNDEBUG), and the two run alternately ROUNDS times, so load
# on a shared machine hits both alike. Prints every rate (CPU time) and,
# per benchmark, the median of new/old.
#
#   bench/session-ab.sh [REV (default main)] [ROUNDS (default 3)]
#   SESSION_BENCH_SESSIONS=65536 bench/session-ab.sh main 3   # table in cache
#   FILTER='Single|Bulk/16$' bench/session-ab.sh
set -eu
rev=${1:-main}
rounds=${2:-3}
filter=${FILTER:-Single|Bulk|Track|Floor}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/old-tree"
git -C "$here" archive "$rev" core/src core/include | tar -x -C "$work/old-tree"
build() { # $1: name, $2: tree holding core/
    inc="-I$2/core/include/dp -I$2/core/src -I$here/bench"
    for c in dp_session dp_flow dp_ops; do
        cc -O3 -DNDEBUG -std=c99 $inc -c "$2/core/src/$c.c" -o "$work/$1-$c.o"
    done
    c++ -O3 -DNDEBUG -std=c++17 $inc -c "$here/bench/session-bench.cc" -o "$work/$1-bench.o"
    c++ "$work/$1-bench.o" "$work/$1-dp_session.o" "$work/$1-dp_flow.o" "$work/$1-dp_ops.o" \
        -lbenchmark -lpthread -o "$work/$1"
}
build old "$work/old-tree"
build new "$here"

for r in $(seq 1 "$rounds"); do
    for b in old new; do
        "$work/$b" --benchmark_filter="$filter" --benchmark_min_time=1 2>/dev/null |
            awk -v b=$b '/^BM_/ { for (i = 1; i <= NF; i++) if ($i ~ /^items_per_second=/) {
                                       sub("items_per_second=", "", $i); print b, $1, $i } }'
    done
done | tee "$work/rates"
python3 - "$work/rates" <<'EOF'
import re, statistics, sys
scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}
runs = {}
for line in open(sys.argv[1]):
    b, name, rate = line.split()
    v, unit = re.fullmatch(r"([\d.]+)([kMG]?)/s", rate).groups()
    runs.setdefault(name, {}).setdefault(b, []).append(float(v) * scale[unit])
print("benchmark  old M/s (median)  new M/s (median)  new/old (median of rounds)")
for name, r in runs.items():
    ratios = [n / o for o, n in zip(r["old"], r["new"])]
    print("%s  %.2f  %.2f  %.2f" % (name, statistics.median(r["old"]) / 1e6, statistics.median(r["new"]) / 1e6,
                                    statistics.median(ratios)))
EOF
