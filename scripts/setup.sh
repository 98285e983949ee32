#!/usr/bin/env bash
# Installs everything RouterTwin needs on Debian bookworm (as root), builds it
# and installs the Python package. Idempotent: a second run only rebuilds
# what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev python3-dev
  libeigen3-dev libboost-dev libgtest-dev libgmock-dev libbenchmark-dev
  gcc-mips64-linux-gnuabi64 libc6-dev-mips64-cross gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  clang-14 libclang-rt-14-dev valgrind
)
PIP_PACKAGES=(
  pybind11 scikit-build-core numpy pandas matplotlib ruamel.yaml pydantic rich
  "dask[distributed]" pytest pytest-xdist
)

log() { printf '[setup] %s\n' "$*" >&2; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  log "installing pip for $PYTHON"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip
fi
# Debian's own python3 is "externally managed" (PEP 668); a pyenv or venv
# Python is not. Only the former needs the override.
PIP_FLAGS=(--disable-pip-version-check -q --root-user-action=ignore)
if "$PYTHON" -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
  PIP_FLAGS+=(--break-system-packages)
fi

if ! "$PYTHON" -c 'import pybind11, scikit_build_core, numpy, pandas, matplotlib, ruamel.yaml, pydantic, rich, dask.distributed, pytest, xdist' 2>/dev/null; then
  log "installing Python packages"
  "$PYTHON" -m pip install "${PIP_FLAGS[@]}" "${PIP_PACKAGES[@]}"
fi

log "building and installing routertwin (Release; build tree build/release)"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$PYTHON" -m pip install "${PIP_FLAGS[@]}" --no-build-isolation --no-deps .
log "done: $("$PYTHON" -c 'import routertwin; print("routertwin", routertwin.__version__)')"
