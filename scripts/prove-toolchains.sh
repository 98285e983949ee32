#!/usr/bin/env bash
# Proves, before anything is built, that every toolchain the build and the
# tests rely on works: it compiles, links and runs small programs with each
# of them, finds every CMake package the project finds, and imports every
# Python dependency. A failure names the Debian or PyPI package that
# provides what failed and exits non-zero at once, instead of a test
# failing later inside ctest.
#   bash scripts/prove-toolchains.sh native   toolchains and CMake packages
#   bash scripts/prove-toolchains.sh python   Python imports
# Called by scripts/setup.sh after each install step.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
PROBES=scripts/toolchain-probes
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

log() { printf '[setup] %s\n' "$*" >&2; }

# fail WHAT PACKAGE OUTPUT-FILE: names the package, shows the tool's output.
fail() {
  log "FAILED: $1"
  log "  provided by: $2 (scripts/setup.sh installs it; is it in its list?)"
  if [ -s "$3" ]; then sed 's/^/[setup]   | /' "$3" | head -20 >&2; fi
  exit 1
}

# step WHAT PACKAGE COMMAND...: runs COMMAND, its output kept for fail().
step() {
  local what="$1" package="$2"
  shift 2
  "$@" >"$WORK/out" 2>&1 || fail "$what" "$package" "$WORK/out"
}

# expect WHAT PACKAGE TEXT COMMAND...: runs COMMAND, whose output must be TEXT.
expect() {
  local what="$1" package="$2" text="$3"
  shift 3
  step "$what" "$package" "$@"
  if [ "$(cat "$WORK/out")" != "$text" ]; then
    echo "expected: $text" >>"$WORK/out"
    fail "$what printed something else" "$package" "$WORK/out"
  fi
}

# cross ARCH TRIPLE GCC-PACKAGE LIBC-PACKAGE ENDIAN CFLAGS EMULATOR...
cross() {
  local arch="$1" triple="$2" gcc_pkg="$3" libc_pkg="$4" endian="$5" cflags="$6"
  shift 6
  local cc="$triple-gcc" exe="$WORK/hello-$arch"
  command -v "$cc" >/dev/null || fail "$arch cross compiler $cc not found" "$gcc_pkg" /dev/null
  # shellcheck disable=SC2086
  step "$arch: $cc compiles C" "$gcc_pkg" "$cc" $cflags -O2 -c "$PROBES/hello.c" -o "$exe.o"
  # The link needs crt1.o, crti.o and libc.a from the cross C library, which
  # the compiler package only recommends.
  step "$arch: $cc links statically (crt1.o, crti.o, libc.a)" "$libc_pkg" "$cc" $cflags -static "$exe.o" -o "$exe"
  command -v "$1" >/dev/null || fail "$arch emulator $1 not found" qemu-user /dev/null
  expect "$arch: the program runs under $*" qemu-user "$endian-endian" "$@" "$exe"
  log "proved: $arch C toolchain ($cc, static link, runs under $1: $endian-endian)"
}

prove_native() {
  for tool in cc c++ cmake ninja; do
    command -v "$tool" >/dev/null || fail "$tool not found" "build-essential cmake ninja-build" /dev/null
  done
  expect "host C compiler" build-essential "little-endian" \
    sh -c "cc -O2 '$PROBES/hello.c' -o '$WORK/hello-host' && '$WORK/hello-host'"

  # Flags as in cmake/toolchains/*.cmake.
  cross mips64 mips64-linux-gnuabi64 gcc-mips64-linux-gnuabi64 libc6-dev-mips64-cross big \
    "-march=mips64r2 -mtune=octeon2 -mabi=64 -EB" \
    qemu-mips64 -cpu MIPS64R2-generic -L /usr/mips64-linux-gnuabi64
  cross aarch64 aarch64-linux-gnu gcc-aarch64-linux-gnu libc6-dev-arm64-cross little "" \
    qemu-aarch64 -L /usr/aarch64-linux-gnu

  # Octeon II: the C library links with -march=octeon2 (the core's
  # octeon2 build), and Octeon-only instructions run under qemu.
  step "octeon2: mips64-linux-gnuabi64-gcc -march=octeon2 links with the C library" libc6-dev-mips64-cross \
    mips64-linux-gnuabi64-gcc -march=octeon2 -mabi=64 -EB -O2 -static "$PROBES/hello.c" -o "$WORK/hello-octeon2"
  step "octeon2: freestanding program builds" gcc-mips64-linux-gnuabi64 \
    mips64-linux-gnuabi64-gcc -march=octeon2 -mabi=64 -EB -O2 -static -nostdlib -ffreestanding -fno-pic \
    -mno-abicalls "$PROBES/octeon2.c" -o "$WORK/octeon2"
  expect "octeon2: Octeon code runs under qemu-mips64 -cpu Octeon68XX" qemu-user "octeon2 popcount=33" \
    qemu-mips64 -cpu Octeon68XX "$WORK/octeon2"
  log "proved: octeon2 (libc link; DPOP runs under qemu-mips64 -cpu Octeon68XX)"

  # Sanitizers and libFuzzer: clang-14 with its runtime libraries.
  command -v clang-14 >/dev/null || fail "clang-14 not found" clang-14 /dev/null
  step "clang-14 links libFuzzer with ASan+UBSan" libclang-rt-14-dev \
    clang-14 -g -fsanitize=fuzzer,address,undefined "$PROBES/fuzz.c" -o "$WORK/fuzz"
  step "the libFuzzer probe runs" libclang-rt-14-dev "$WORK/fuzz" -runs=1
  expect "clang++-14 builds C++ with ASan" "clang-14 libclang-rt-14-dev" "6" \
    sh -c "clang++-14 -fsanitize=address,undefined '$PROBES/vector.cc' -o '$WORK/vector' && '$WORK/vector'"
  log "proved: clang-14 (libFuzzer, ASan, UBSan; C and C++)"

  # CMake packages, found as the top-level CMakeLists.txt finds them.
  if ! cmake -S "$PROBES/cmake-packages" -B "$WORK/cmake" -G Ninja \
       -DPython_EXECUTABLE="$(command -v "$PYTHON")" >"$WORK/out" 2>&1; then
    local pkg="see the output"
    case "$(grep -oE 'provided by "[A-Za-z0-9_]+"|Could NOT find [A-Za-z0-9_]+' "$WORK/out" | head -1)" in
      *ns3*) pkg="libns3-dev ns3" ;;
      *Eigen3*) pkg=libeigen3-dev ;;
      *Boost*) pkg=libboost-dev ;;
      *GTest*) pkg="libgtest-dev libgmock-dev" ;;
      *benchmark*) pkg=libbenchmark-dev ;;
      *GSL*) pkg=libgsl-dev ;;
      *SQLite3*) pkg=libsqlite3-dev ;;
      *LibXml2*) pkg=libxml2-dev ;;
      *Python*) pkg="python3-dev (or the headers of $PYTHON)" ;;
      *pybind11*) pkg="pybind11 (PyPI)" ;;
    esac
    fail "CMake does not find a package the project needs" "$pkg" "$WORK/out"
  fi
  log "proved: CMake finds ns-3 3.37, Eigen3, Boost, GTest, benchmark, Python, pybind11"
}

# Each PyPI package of scripts/setup.sh, by the module it provides.
prove_python() {
  # shellcheck source=setup.sh
  source scripts/setup.sh
  local pair
  for pair in "${PIP_PACKAGES[@]}"; do
    step "$PYTHON imports ${pair##*:}" "${pair%%:*} (PyPI)" "$PYTHON" -c "import ${pair##*:}"
  done
  log "proved: $PYTHON imports every Python dependency (${#PIP_PACKAGES[@]} packages)"
}

case "${1:-}" in
  native) prove_native ;;
  python) prove_python ;;
  *) echo "usage: prove-toolchains.sh native|python" >&2; exit 2 ;;
esac
