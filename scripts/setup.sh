#!/usr/bin/env bash
# Installs everything RouterTwin needs on Debian bookworm (as root), proves
# every toolchain works, builds it and installs the Python package.
# Idempotent: a second run installs nothing and only rebuilds what changed.
# Every Debian and PyPI package the build, the tests and the main job use,
# each named explicitly (nothing relies on a package's Recommends or on what
# a machine happens to have). tests/test_setup_packages.py checks that every
# tool, library and header the build and the tests resolve comes from a
# package listed here (or one that a listed package depends on); the
# toolchain proofs and that check source this file for the lists only.
APT_PACKAGES=(
  # host build
  build-essential cmake ninja-build pkg-config git
  # ns-3 3.37 and what its CMake config needs
  libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev python3-dev
  # C++ libraries
  libeigen3-dev libboost-dev libgtest-dev libgmock-dev libbenchmark-dev
  # cross builds of the C core, and their C libraries (only *recommended*
  # by the compilers, so --no-install-recommends would drop them)
  gcc-mips64-linux-gnuabi64 libc6-dev-mips64-cross
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  qemu-user
  # sanitizers and libFuzzer
  clang-14 libclang-rt-14-dev
  # instruction counts for benchmarks
  valgrind
  # the real HAProxy that core/tests/haproxy_record.py records scheduler
  # sequences from (the truth of sched-test.cc's HaproxyRecorded tests)
  haproxy
  # network namespaces: the HAProxy recording's own, and the live lab's
  # (routertwin lab, docs/lab.md): veth, bridges and tc shapers (ip, tc, ss),
  # iptables NAT and ebtables (ebtables-nft ships in iptables), the traffic
  # (iperf3)
  iproute2 iptables iperf3
  # routing-table imports (docs/import.md): BIRD 2 writes the MRT RIB dump
  # and the `show route all` text the import tests read; bgpdump
  # (libbgpdump) is their independent MRT reader
  bird2 bgpdump
)

# PyPI: "requirement:module it provides" (the module is what setup proves
# importable).
PIP_PACKAGES=(
  pybind11:pybind11
  scikit-build-core:scikit_build_core
  numpy:numpy
  pandas:pandas
  matplotlib:matplotlib
  ruamel.yaml:ruamel.yaml
  pydantic:pydantic
  rich:rich
  "dask[distributed]:dask.distributed"
  pytest:pytest
  pytest-xdist:xdist
  # Results.to_parquet (routertwin's Python API)
  pyarrow:pyarrow
  # the API reference built from docstrings (tests/test_api_docs.py)
  pdoc:pdoc
  # the tutorials (docs/tutorials): jupytext markdown notebooks, run by
  # tests/test_tutorials.py in a Jupyter kernel
  jupytext:jupytext
  nbformat:nbformat
  nbclient:nbclient
  ipykernel:ipykernel
  # routertwin import mrt: MRT TABLE_DUMP_V2 records (BGPKIT's Rust parser).
  # Pinned to the newest release PyPI has as a CPython 3.11 manylinux wheel:
  # 0.7.0 and later are source packages whose cargo build took over 25 minutes
  # on these 2 cores (docs/import.md)
  "pybgpkit-parser==0.6.2:pybgpkit_parser"
  # property-based tests of the importers' parsers (tests/test_import_routes.py,
  # tests/test_import_lb.py)
  hypothesis:hypothesis
)

# Sourced (by scripts/prove-toolchains.sh, scripts/check_packages.py): the
# lists above are all it wants.
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  return 0
fi

set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
export PYTHON

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
# The native proof comes after the Python packages: CMake finds pybind11
# through the Python that pip installed it for.
bash scripts/prove-toolchains.sh native
bash scripts/prove-toolchains.sh python

log "building and installing routertwin (Release; build tree build/release)"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$PYTHON" -m pip install "${PIP_FLAGS[@]}" --no-build-isolation --no-deps .
log "done: $("$PYTHON" -c 'import routertwin; print("routertwin", routertwin.__version__)')"
