#!/usr/bin/env bash
# Installs everything RouterTwin needs on Debian bookworm (as root), proves
# every toolchain works, builds it and installs the Python package.
# Idempotent: a second run installs nothing and only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
export PYTHON
# shellcheck source=packages.sh
source scripts/packages.sh

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
bash scripts/prove-toolchains.sh native

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  log "installing pip for $PYTHON"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
fi
# Debian's own python3 is "externally managed" (PEP 668); a pyenv or venv
# Python is not. Only the former needs the override.
PIP_FLAGS=(--disable-pip-version-check -q --root-user-action=ignore)
if "$PYTHON" -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
  PIP_FLAGS+=(--break-system-packages)
fi

modules=()
requirements=()
for pair in "${PIP_PACKAGES[@]}"; do
  requirements+=("${pair%%:*}")
  modules+=("${pair##*:}")
done
if ! "$PYTHON" -c "import $(IFS=,; echo "${modules[*]}")" 2>/dev/null; then
  log "installing Python packages"
  "$PYTHON" -m pip install "${PIP_FLAGS[@]}" "${requirements[@]}"
fi
bash scripts/prove-toolchains.sh python

log "building and installing routertwin (Release; build tree build/release)"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$PYTHON" -m pip install "${PIP_FLAGS[@]}" --no-build-isolation --no-deps .
log "done: $("$PYTHON" -c 'import routertwin; print("routertwin", routertwin.__version__)')"
