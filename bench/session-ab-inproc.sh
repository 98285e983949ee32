#!/bin/sh
# Session lookups of this tree against another revision's, interleaved in
# one process on one table (bench/session-interleave.cc says how): REV's
# dp_session.c is compiled Release with every dp_sess_* symbol renamed
# old_dp_sess_* (objcopy), and linked beside this tree's core.
#
#   bench/session-ab-inproc.sh [REV (default main)] [SESSIONS] [ROUNDS] [BATCH...]
#   bench/session-ab-inproc.sh main 8388608 20 16 32 256
set -eu
rev=${1:-main}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old-tree"
git -C "$here" archive "$rev" core/src core/include | tar -x -C "$work/old-tree"
old=$work/old-tree/core
cc -O3 -DNDEBUG -std=c99 -I"$old/include/dp" -I"$old/src" -c "$old/src/dp_session.c" -o "$work/old.o"
nm "$work/old.o" | awk '$2 == "T" && $3 ~ /^dp_sess_/ { print $3, "old_" $3 }' >"$work/rename"
objcopy --redefine-syms="$work/rename" "$work/old.o" "$work/old-renamed.o"
inc="-I$here/core/include/dp -I$here/core/src"
for c in dp_session dp_flow dp_ops; do
    cc -O3 -DNDEBUG -std=c99 $inc -c "$here/core/src/$c.c" -o "$work/$c.o"
done
c++ -O3 -DNDEBUG -std=c++17 $inc -c "$here/bench/session-interleave.cc" -o "$work/interleave.o"
c++ "$work/interleave.o" "$work/old-renamed.o" "$work/dp_session.o" "$work/dp_flow.o" "$work/dp_ops.o" \
    -o "$work/session_interleave"
"$work/session_interleave" "$@"
