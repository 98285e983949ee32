#!/usr/bin/env bash
# For developers with an editable install (pip install --no-build-isolation -e .):
# rebuilds build/release and copies the fresh _core module into site-packages,
# so that C++ changes reach Python without a full reinstall. Serialised with
# flock because several developers may share one build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
exec 9>build/.dev-refresh.lock
flock 9
cmake --build build/release --target _core
dest="$("$PYTHON" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("routertwin._core").origin))')"
# Copy then rename: overwriting the .so in place corrupts it under processes
# (test runs) that have it mapped, and they die with SIGSEGV.
for so in build/release/bindings/_core*.so; do
    cp "$so" "$dest/.$(basename "$so").tmp"
    mv -f "$dest/.$(basename "$so").tmp" "$dest/$(basename "$so")"
done
echo "refreshed $dest" >&2
