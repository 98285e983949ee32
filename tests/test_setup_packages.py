"""Every tool, library and header the build and the tests use must come from
a package that scripts/setup.sh lists (the packages it installs),
or from one a listed package depends on. The check is made against the list,
not against what this machine happens to have, so it fails here too when a
needed package is missing from the list, not only on a fresh machine."""

import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check_packages.py"
PACKAGES = ROOT / "scripts" / "setup.sh"


def _module():
    spec = importlib.util.spec_from_file_location("check_packages", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cp = _module()


@pytest.fixture(scope="module")
def machine():
    """What the build needs and what dpkg knows, gathered once."""
    apt, pip = cp.listed_packages(PACKAGES)
    return apt, pip, cp.gather_needs(ROOT / "build" / "release"), cp.Dpkg()


def test_the_listed_packages_provide_everything_the_build_and_tests_use():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_what_is_needed_includes_each_kind_of_dependency(machine):
    _, _, needs, _ = machine
    files = needs.files
    assert not needs.missing, needs.missing
    assert any(f.endswith("mips64-linux-gnuabi64/lib/crt1.o") for f in files)
    assert any(f.endswith("aarch64-linux-gnu/lib/libc.a") for f in files)
    assert any(f.endswith("/qemu-mips64") for f in files)
    assert any("libclang_rt.fuzzer" in f for f in files)
    assert any(f.endswith("ns3Config.cmake") for f in files)
    assert any("libns3-core" in f for f in files)
    assert any(f.endswith("/git") for f in files), "git, which results.py runs, is not seen"


# Removing any of these from the list must make the check fail and name it:
# each provides something the build or the tests use that no other listed
# package brings in.
NEEDED = [
    "libc6-dev-mips64-cross", "libc6-dev-arm64-cross", "gcc-mips64-linux-gnuabi64",
    "gcc-aarch64-linux-gnu", "qemu-user", "clang-14", "libclang-rt-14-dev", "libns3-dev",
    "libeigen3-dev", "libboost-dev", "libbenchmark-dev", "cmake", "ninja-build",
    "git",
]


@pytest.mark.parametrize("package", NEEDED)
def test_a_package_removed_from_the_list_is_named(machine, package):
    apt, pip, needs, dpkg = machine
    assert package in apt, f"{package} is not in scripts/setup.sh"
    problems = cp.check([p for p in apt if p != package], pip, needs, dpkg)
    assert problems, f"removing {package} from the list went unnoticed"
    assert any(package in p for p in problems), problems


def test_a_pypi_package_removed_from_the_list_is_named(machine):
    apt, pip, needs, dpkg = machine
    problems = cp.check(apt, [p for p in pip if p != "pybind11"], needs, dpkg)
    assert any("pybind11" in p for p in problems), problems


def test_the_command_names_the_missing_package_and_exits_1(tmp_path):
    trimmed = tmp_path / "setup.sh"
    trimmed.write_text(PACKAGES.read_text().replace(" libc6-dev-mips64-cross", ""))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--packages", str(trimmed)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "libc6-dev-mips64-cross" in proc.stderr
    assert "crt1.o" in proc.stderr
