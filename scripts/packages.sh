# What scripts/setup.sh installs: every Debian and PyPI package the build,
# the tests and the main job use, each named explicitly (nothing relies on a
# package's Recommends or on what a machine happens to have).
# tests/test_setup_packages.py checks that every tool, library and header
# the build and the tests resolve comes from a package listed here (or one
# that a listed package depends on).
# Sourced by bash; keep one package per word.

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
)
