#!/usr/bin/env python3
"""Checks that every tool, library and header the build and the tests use
comes from a package that scripts/setup.sh lists (the packages it
installs), or from a package that a listed package depends on, so that a
fresh machine gets it too. It fails on any machine, fresh or not: a package
installed by hand, or pulled in once as a Recommends, does not count.

What it resolves, and from where (nothing is listed by hand twice):
- the cross compilers and emulators the CMake toolchain files name, and
  what each cross compiler links with (ld, as, crt1.o, crti.o, libc.a);
- every program and library the configured build found (FILEPATH and
  PATH entries of build/release/CMakeCache.txt, the *Config.cmake of each
  package directory), and every library and include folder the build links
  and compiles with (build/release/build.ninja);
- clang's sanitizer and libFuzzer runtime libraries;
- every program a CMake script looks up (find_program) and every program
  the Python code and tests run (subprocess calls and shutil.which on a
  literal name);
- PyPI packages: a file inside the Python's site-packages must belong to a
  listed PyPI package or to one that a listed package requires.

Each file is mapped to its Debian package with dpkg -S. Packages that every
Debian system has (Essential: yes, Priority: required) need no listing.
Dependencies are followed through Depends and Pre-Depends only (the first
alternative of each, as apt chooses on a fresh machine), never Recommends.

Usage: check_packages.py [--packages FILE] [--build DIR]
Exit status 0 when everything is covered, 1 (naming each file, its package
and what needs it) when not, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import functools
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_SUFFIXES = (".py",)
CLANG = "clang-14"
CLANG_RUNTIMES = ("libclang_rt.fuzzer-x86_64.a", "libclang_rt.asan-x86_64.a",
                  "libclang_rt.ubsan_standalone-x86_64.a")
CROSS_FILES = ("crt1.o", "crti.o", "libc.a")
CROSS_PROGRAMS = ("ld", "as")
# Folders so widely shared that their owners say nothing about a package.
GENERIC_DIRS = {"/usr/include", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/include",
                "/usr/share", "/usr/bin", "/usr/local/lib"}


def listed_packages(packages_sh: Path) -> tuple[list[str], list[str]]:
    """(Debian packages, PyPI requirement names) that a setup.sh file lists."""
    script = ('set -e; source "$1"; printf "apt %s\\n" "${APT_PACKAGES[@]}"; '
              'printf "pip %s\\n" "${PIP_PACKAGES[@]}"')
    out = subprocess.run(["bash", "-c", script, "bash", str(packages_sh)], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"check-packages: cannot read {packages_sh}: {out.stderr.strip()}")
    apt, pip = [], []
    for line in out.stdout.splitlines():
        kind, _, name = line.partition(" ")
        if kind == "apt":
            apt.append(name)
        elif kind == "pip":
            pip.append(re.split(r"[\[:<>=!~;]", name, maxsplit=1)[0])
    return apt, pip


def which(program: str) -> str | None:
    return shutil.which(program)


def run_text(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


class Needs:
    """Files needed, each with why (the first reason found is kept)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.missing: list[str] = []

    def file(self, path: str | None, why: str) -> None:
        if not path:
            return
        self.files.setdefault(os.path.normpath(path), why)

    def program(self, name: str, why: str) -> None:
        path = which(name)
        if path:
            self.file(path, why)
        else:
            self.missing.append(f"{why}: program '{name}' not found on PATH")


def toolchain_needs(needs: Needs) -> None:
    for tc in sorted((ROOT / "cmake" / "toolchains").glob("*.cmake")):
        text = tc.read_text()
        rel = tc.relative_to(ROOT)
        cc = re.search(r"set\(CMAKE_C_COMPILER\s+([^\s)]+)\)", text)
        if cc:
            compiler = cc.group(1)
            needs.program(compiler, f"{rel}: C compiler")
            if which(compiler):
                for prog in CROSS_PROGRAMS:
                    needs.file(run_text(compiler, f"-print-prog-name={prog}"), f"{rel}: {compiler}'s {prog}")
                for name in CROSS_FILES:
                    found = run_text(compiler, f"-print-file-name={name}")
                    if os.path.isabs(found):
                        needs.file(found, f"{rel}: {compiler} links {name}")
                    else:
                        needs.missing.append(f"{rel}: {compiler} cannot find {name} (cross C library)")
        emu = re.search(r"set\(CMAKE_CROSSCOMPILING_EMULATOR\s+([^\s)]+)", text)
        if emu:
            needs.program(emu.group(1), f"{rel}: emulator")


def cmake_script_needs(needs: Needs) -> None:
    """find_program(VAR name ...) / find_program(VAR NAMES name ...) with a literal name."""
    pattern = re.compile(r"find_program\(\s*\w+\s+(?:NAMES\s+)?([A-Za-z0-9_.+-]+)")
    for f in sorted(ROOT.rglob("*.cmake")) + sorted(ROOT.rglob("CMakeLists.txt")):
        if "build" in f.relative_to(ROOT).parts:
            continue
        for name in pattern.findall(f.read_text()):
            if name != "NAMES":
                needs.program(name, f"{f.relative_to(ROOT)}: find_program")


def python_needs(needs: Needs) -> None:
    """Programs the Python code and tests run by literal name."""
    patterns = [re.compile(r"subprocess\.(?:run|Popen|check_output|check_call|call)\(\s*\[\s*\"([A-Za-z0-9_.+-]+)\""),
                re.compile(r"shutil\.which\(\s*\"([A-Za-z0-9_.+-]+)\"\)")]
    for folder in ("bindings", "tests", "validation", "scripts", "core"):
        for f in sorted((ROOT / folder).rglob("*.py")):
            if "build" in f.relative_to(ROOT).parts:
                continue
            text = f.read_text()
            for pat in patterns:
                for name in pat.findall(text):
                    needs.program(name, f"{f.relative_to(ROOT)}: runs {name}")


def build_tree_needs(needs: Needs, build: Path) -> None:
    cache = build / "CMakeCache.txt"
    if not cache.exists():
        needs.missing.append(f"{cache} not found: configure the build first (bash scripts/setup.sh)")
        return
    for line in cache.read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_]+):(FILEPATH|PATH|UNINITIALIZED|INTERNAL)=(/\S+)$", line)
        if not m:
            continue
        key, kind, value = m.groups()
        if kind == "INTERNAL" and key != "CMAKE_COMMAND":
            continue
        if key == "CMAKE_INSTALL_PREFIX":
            continue  # where the build installs to, not something it uses
        if kind == "UNINITIALIZED" and key != "CMAKE_MAKE_PROGRAM":
            continue
        if value.startswith((str(ROOT), str(build), "/tmp/")) or not os.path.exists(value):
            continue
        why = f"{cache.relative_to(ROOT) if cache.is_relative_to(ROOT) else cache}: {key}"
        if os.path.isdir(value):
            configs = sorted(Path(value).glob("*[Cc]onfig.cmake"))
            if configs:
                needs.file(str(configs[0]), why)
            elif value not in GENERIC_DIRS:
                needs.file(value, why)
        else:
            needs.file(value, why)
    ninja = build / "build.ninja"
    if ninja.exists():
        text = ninja.read_text()
        for lib in sorted(set(re.findall(r"(/usr/[^\s:;\"']+\.(?:so|a)(?:\.[0-9.]+)?)(?=[\s;\"']|$)", text))):
            needs.file(lib, f"build.ninja: links {os.path.basename(lib)}")
        for inc in sorted(set(re.findall(r"-(?:I|isystem\s+)(/usr/[^\s]+)", text))):
            if inc not in GENERIC_DIRS and os.path.isdir(inc):
                needs.file(inc, f"build.ninja: includes from {inc}")


def clang_runtime_needs(needs: Needs) -> None:
    if not which(CLANG):
        needs.missing.append(f"{CLANG} not found (sanitizer and fuzz tests)")
        return
    runtime = run_text(CLANG, "-print-runtime-dir")
    for lib in CLANG_RUNTIMES:
        path = os.path.join(runtime, lib)
        if os.path.exists(path):
            needs.file(path, f"{CLANG} sanitizer/libFuzzer runtime")
        else:
            needs.missing.append(f"{CLANG} runtime {path} not found (sanitizer and fuzz tests)")


class Dpkg:
    """Installed packages: who owns a file, and the Depends closure."""

    def __init__(self) -> None:
        fmt = "${Package}\t${db:Status-Abbrev}\t${Depends}\t${Pre-Depends}\t${Provides}\t${Essential}\t${Priority}\n"
        out = run_text("dpkg-query", "-W", "-f", fmt)
        self.depends: dict[str, list[list[str]]] = {}
        self.providers: dict[str, set[str]] = {}
        self.base: set[str] = set()
        self._closures: dict[str, set[str]] = {}
        for line in out.splitlines():
            fields = line.split("\t")
            if len(fields) != 7 or not fields[1].startswith("ii"):
                continue
            name, _, dep, pre, provides, essential, priority = fields
            self.depends[name] = self._groups(dep) + self._groups(pre)
            for p in self._groups(provides):
                self.providers.setdefault(p[0], set()).add(name)
            if essential == "yes" or priority == "required":
                self.base.add(name)

    @staticmethod
    def _groups(field: str) -> list[list[str]]:
        groups = []
        for group in field.split(","):
            alts = [re.sub(r"[:\s(].*$", "", a.strip()) for a in group.split("|")]
            alts = [a for a in alts if a]
            if alts:
                groups.append(alts)
        return groups

    def resolve(self, name: str) -> set[str]:
        """Installed packages that satisfy a dependency on name."""
        if name in self.depends:
            return {name}
        return set(self.providers.get(name, ()))

    def closure(self, roots: list[str] | set[str]) -> set[str]:
        seen: set[str] = set()
        stack = [p for r in roots for p in self.resolve(r)]
        while stack:
            pkg = stack.pop()
            if pkg in seen:
                continue
            seen.add(pkg)
            for alts in self.depends.get(pkg, []):
                stack.extend(self.resolve(alts[0]))
        return seen

    def base_closure(self) -> set[str]:
        """What every Debian system has: the Essential and required packages
        and their dependencies."""
        if "" not in self._closures:
            self._closures[""] = self.closure(self.base)
        return self._closures[""]

    def closure_of(self, package: str) -> set[str]:
        """closure([package]), remembered."""
        if package not in self._closures:
            self._closures[package] = self.closure([package])
        return self._closures[package]

    def owners(self, paths: list[str]) -> dict[str, set[str]]:
        """path -> owning packages, trying each path, its symlink hops and
        its /usr-merged twin (dpkg may record /bin/x for /usr/bin/x)."""
        candidates: dict[str, list[str]] = {}
        for path in paths:
            hops, p = [path], path
            for _ in range(10):
                if not os.path.islink(p):
                    break
                p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
                hops.append(p)
            hops.append(os.path.realpath(path))
            variants = []
            for h in hops:
                variants.append(h)
                for a, b in (("/usr/bin/", "/bin/"), ("/usr/lib/", "/lib/"), ("/usr/sbin/", "/sbin/")):
                    if h.startswith(a):
                        variants.append(b + h[len(a):])
                    elif h.startswith(b):
                        variants.append(a + h[len(b):])
            candidates[path] = list(dict.fromkeys(variants))
        queries = sorted({v for vs in candidates.values() for v in vs})
        out = subprocess.run(["dpkg-query", "-S", *queries], capture_output=True, text=True).stdout
        owned: dict[str, set[str]] = {}
        for line in out.splitlines():
            pkgs, sep, path = line.partition(": ")
            if not sep or pkgs.startswith("diversion"):
                continue
            owned.setdefault(path.strip(), set()).update(
                p.strip().split(":")[0] for p in pkgs.split(","))
        result = {}
        for path, variants in candidates.items():
            for v in variants:
                if v in owned:
                    result[path] = owned[v]
                    break
        return result


def site_packages() -> list[str]:
    """Every site-packages folder this Python imports from: its own and, in a
    venv made with --system-site-packages, the base Python's too."""
    paths = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    paths.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    return sorted(p for p in paths if p)


class PipOwners:
    """Which installed PyPI distribution a site-packages path belongs to, by
    the top-level entry (package folder or module) its files live under."""

    def __init__(self) -> None:
        self.by_top: dict[str, str] = {}
        for dist in importlib.metadata.distributions():
            base = str(dist.locate_file(""))
            record = dist.read_text("RECORD") or ""
            tops = {line.split("/", 1)[0].split(",", 1)[0] for line in record.splitlines() if line}
            for top in tops:
                self.by_top.setdefault(os.path.realpath(os.path.join(base, top)), dist.name)

    def owner(self, path: str) -> str | None:
        p = os.path.realpath(path)
        while p != os.path.dirname(p):
            if p in self.by_top:
                return self.by_top[p]
            p = os.path.dirname(p)
        return None


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pip_closure(roots: list[str]) -> set[str]:
    seen: set[str] = set()
    stack = [normalize(r) for r in roots]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req and not any(f'extra == "{e}"' in req for e in ("distributed",)):
                continue
            stack.append(normalize(re.split(r"[\s\[<>=!~;(]", req, maxsplit=1)[0]))
    return seen


def gather_needs(build: Path) -> Needs:
    needs = Needs()
    toolchain_needs(needs)
    cmake_script_needs(needs)
    python_needs(needs)
    build_tree_needs(needs, build)
    clang_runtime_needs(needs)
    return needs


@functools.cache
def manually_installed() -> tuple[str, ...]:
    """Packages installed by name on this machine (by setup.sh or by hand)."""
    return tuple(run_text("apt-mark", "showmanual").split())


def check(apt: list[str], pip: list[str], needs: Needs, dpkg: "Dpkg", label: str = "setup.sh") -> list[str]:
    """Problems (empty when every needed file is covered by the lists)."""
    covered = dpkg.closure(apt) | dpkg.base_closure()
    not_installed = [p for p in apt if not dpkg.resolve(p)]
    problems = [f"{label} lists {p}, which is not installed: run scripts/setup.sh"
                for p in not_installed]
    problems += needs.missing

    python_prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix)}
    sites = [os.path.realpath(p) for p in site_packages()]
    pip_covered = pip_closure(pip)
    pip_owners = PipOwners()
    owners = dpkg.owners(sorted(needs.files))
    listed = set(apt)
    uncovered: dict[str, list[str]] = {}  # Debian package -> "file (why)"
    for path, why in sorted(needs.files.items(), key=lambda kv: kv[1]):
        real = os.path.realpath(path)
        if path in owners:
            pkgs = owners[path]
            if not pkgs & covered:
                uncovered.setdefault(" or ".join(sorted(pkgs)), []).append(f"{path} ({why})")
            continue
        if any(real.startswith(s + os.sep) for s in sites) and real not in sites:
            dist = pip_owners.owner(path)
            if dist is None:
                problems.append(f"{path} ({why}) is in site-packages but belongs to no installed distribution")
            elif normalize(dist) not in pip_covered:
                problems.append(f"{path} ({why}) comes from PyPI package {dist}, which {label} does "
                                f"not list and no listed package requires: add it to PIP_PACKAGES")
            continue
        if any(real == p or real.startswith(p + os.sep) for p in python_prefixes):
            continue  # the Python that runs setup (PYTHON), the machine's own
        problems.append(f"{path} ({why}) belongs to no Debian package: it was installed by hand; "
                        f"install it from a package that {label} lists")
    manual = manually_installed() if uncovered else []
    for name, files in sorted(uncovered.items()):
        shown = "; ".join(files[:3]) + (f"; and {len(files) - 3} more" if len(files) > 3 else "")
        # Which package installed by name here brought it (libboost-dev for
        # libboost1.74-dev): most likely the one missing from the list.
        owners = set(name.split(" or "))
        via = sorted(m for m in manual if m not in listed and m not in owners and owners & dpkg.closure_of(m))
        hint = f" (here it came with {', '.join(via[:4])})" if via else ""
        problems.append(f"Debian package {name}{hint} is needed but {label} does not list it and no "
                        f"listed package depends on it: add it to APT_PACKAGES. It provides {shown}")
    if not (listed & covered):
        problems.append(f"{label}: no package listed")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, default=ROOT / "scripts" / "setup.sh")
    ap.add_argument("--build", type=Path, default=ROOT / "build" / "release")
    args = ap.parse_args(argv)
    if not args.packages.is_file():
        print(f"check-packages: {args.packages}: no such file", file=sys.stderr)
        return 2
    apt, pip = listed_packages(args.packages)
    problems = check(apt, pip, gather_needs(args.build), Dpkg(), args.packages.name)
    for p in problems:
        print(f"check-packages: {p}", file=sys.stderr)
    if not problems:
        print(f"check-packages: every tool, library and header the build and tests use comes from "
              f"{args.packages.name}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
