#!/usr/bin/env bash
# Runs every test: sets up (idempotent), then the C/C++ tests with ctest
# (core, cross-architecture golden vectors under qemu, sanitizers, fuzz
# smoke run, ns-3 models) and the Python end-to-end tests with pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

bash scripts/setup.sh

echo "== ctest (build/release)"
ctest --test-dir build/release --output-on-failure -j "$(nproc)"

echo "== pytest"
"$PYTHON" -m pytest -q -n "$(nproc)" tests
