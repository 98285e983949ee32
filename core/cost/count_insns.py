#!/usr/bin/env python3
"""Dynamic instruction counts of every dp_cost operation on x86-64, mips64 and
aarch64, by one command, into the table core/cost/insn_counts.csv.

    python3 core/cost/count_insns.py                     # build, count all, rewrite the table
    python3 core/cost/count_insns.py --check --only parse,ttl,lpm_lookup_small

x86-64 runs under callgrind (`--dump-before=rt_cost_mark`: one dump per mark,
so dump 2k+2 holds exactly the first pass of operation k); mips64 and aarch64
run under the qemu-user that scripts/setup.sh installs, with the TCG plugin
core/cost/qemu_insn_plugin.c (built here with the host compiler) recording
the instruction count at every entry of rt_cost_mark. Per operation the
table holds the instructions of `calls` calls minus those of the `noop`
operation (the harness loop itself) and the dp_ops counters per call (taken
from the same run; they must agree across ISAs, which this script checks).

The mips64 binary is MIPS64r2 code (-march=mips64r2 -mtune=octeon2): qemu's
Octeon68XX model cannot run glibc (no FPU), so Octeon-extension code
(-march=octeon2: bbit0/1, baddu, seq/sne, cins/exts, dmul, ...) is not what
is counted; on Octeon II the compiler uses those to save instructions, so
the mips64r2 count is an upper bound for octeon2 code of the same source.
`--octeon` measures how close: a freestanding subset (dp_cost_freestanding.c)
built for -march=octeon runs on qemu's Octeon68XX CPU (octeon_insn_counts.csv).

--check regenerates the listed operations and compares them with the table
(exit 1 naming every difference); the ctest entry core_cost_insn_table runs
it on a few operations, so the table cannot drift from the code.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = os.path.dirname(HERE)
ROOT = os.path.dirname(CORE)
TABLE = os.path.join(HERE, "insn_counts.csv")
ISAS = ("x86_64", "mips64", "aarch64")
TOOLCHAIN = {"mips64": "mips64-linux-gnuabi64", "aarch64": "aarch64-linux-gnu"}
QEMU = {
    "mips64": ["qemu-mips64", "-cpu", "MIPS64R2-generic", "-L", "/usr/mips64-linux-gnuabi64"],
    "aarch64": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
}
ENVIRONMENT = {
    "x86_64": "valgrind callgrind (instruction counts only; not timed)",
    "mips64": "qemu-user 7.2 -cpu MIPS64R2-generic (emulated: instruction counts only, ticks are not cycles)",
    "aarch64": "qemu-user 7.2 -cpu max (emulated: instruction counts only, ticks are not cycles)",
}
COUNTERS = ("packets", "bytes_parsed", "bytes_written", "checksum_bytes", "csum_updates", "table_probes",
            "cache_lines", "table_writes", "rules_evaluated", "bytes_copied", "crypto_bytes", "hashes",
            "servers_examined")
FIELDS = ["isa", "op", "area", "calls", "instructions", "insns_per_call"] + \
         ["%s_per_call" % c for c in COUNTERS] + ["compiler", "flags", "commit"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("count_insns: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:],
                                                        r.stderr[-4000:]))
    return r.stdout


def build(build_dir, jobs):
    """Configures and builds dp_cost for the three ISAs and the plugin."""
    bins = {}
    for isa in ISAS:
        out = os.path.join(build_dir, isa)
        args = ["cmake", "-S", CORE, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
        if isa in TOOLCHAIN:
            args.append("-DCMAKE_TOOLCHAIN_FILE=%s/cmake/toolchains/%s.cmake" % (ROOT, TOOLCHAIN[isa]))
        run(args)
        run(["cmake", "--build", out, "--target", "dp_cost", "-j", str(jobs)])
        bins[isa] = os.path.join(out, "dp_cost")
    return bins, build_plugin(build_dir)


def build_plugin(build_dir):
    os.makedirs(build_dir, exist_ok=True)
    so = os.path.join(build_dir, "rt_insn_plugin.so")
    src = os.path.join(HERE, "qemu_insn_plugin.c")
    if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(src):
        run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", so, src])
    return so


def mark_address(isa, binary):
    nm = "%s-nm" % TOOLCHAIN[isa] if isa in TOOLCHAIN else "nm"
    for line in run([nm, binary]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "rt_cost_mark":
            return int(parts[0], 16)
    sys.exit("count_insns: no rt_cost_mark symbol in %s" % binary)


def harness_args(only, commit, isa):
    a = ["--reps", "1", "--environment", ENVIRONMENT[isa], "--commit", commit]
    if only:
        a += ["--only", only]
    return a


def count_one(isa, binary, plugin, only, commit):
    """Runs dp_cost once on isa; returns (harness JSON, [instructions of each op's first pass])."""
    with tempfile.TemporaryDirectory(prefix="rt-insn-") as tmp:
        args = harness_args(only, commit, isa)
        if isa == "x86_64":
            out = os.path.join(tmp, "cg.out")
            doc = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                       "--dump-before=rt_cost_mark", binary] + args)
            parts = {}
            for name in os.listdir(tmp):
                if not name.startswith("cg.out."):
                    continue
                with open(os.path.join(tmp, name)) as f:
                    for line in f:
                        if line.startswith("summary:"):
                            parts[int(name.rsplit(".", 1)[1])] = int(line.split()[1])
                            break
            spans = [parts[2 * k + 2] for k in range(len(parts) // 2)]
        else:
            marks = os.path.join(tmp, "marks.txt")
            plug = "%s,mark=0x%x,out=%s" % (plugin, mark_address(isa, binary), marks)
            doc = run(QEMU[isa] + ["-plugin", plug, binary] + args)
            with open(marks) as f:
                m = [int(x) for x in f.read().split() if x.isdigit()]
            spans = [m[2 * k + 1] - m[2 * k] for k in range(len(m) // 2)]
    d = json.loads(doc)
    if len(spans) < len(d["ops"]):
        sys.exit("count_insns: %s: %d marked spans for %d operations" % (isa, len(spans), len(d["ops"])))
    return d, spans[:len(d["ops"])]


def rows_of(isa, d, spans):
    noop = spans[[o["name"] for o in d["ops"]].index("noop")]
    rows = []
    for o, n in zip(d["ops"], spans):
        if o["name"] == "noop":
            continue
        calls = o["calls"]
        insns = n - noop
        row = {"isa": isa, "op": o["name"], "area": o["area"], "calls": calls, "instructions": insns,
               "insns_per_call": "%.2f" % (insns / calls), "compiler": d["compiler"], "flags": d["flags"],
               "commit": d["commit"]}
        for c in COUNTERS:
            row["%s_per_call" % c] = "%.6g" % (o["ops"][c] / calls)
        rows.append(row)
    return rows


OCTEON_TABLE = os.path.join(HERE, "octeon_insn_counts.csv")
FREESTANDING_SOURCES = ["dp_ops.c", "dp_drop.c", "dp_csum.c", "dp_pkt.c", "dp_lpm.c"]


def octeon_compare(build_dir, plugin):
    """Builds core/cost/dp_cost_freestanding.c (no C library, so it runs on
    qemu's FPU-less Octeon68XX CPU) with -march=octeon and -march=mips64r2,
    counts both, and writes octeon_insn_counts.csv. -march=octeon2 is built
    too but cannot be counted: qemu 7.2 does not implement Octeon II's
    indexed loads (LWX/LDX, SPECIAL3 function 0x0a) and stops with SIGILL."""
    out = os.path.join(build_dir, "freestanding")
    os.makedirs(out, exist_ok=True)
    srcs = [os.path.join(CORE, "src", f) for f in FREESTANDING_SOURCES] + [os.path.join(HERE, "dp_cost_freestanding.c")]
    flags = ["-mtune=octeon2", "-mabi=64", "-EB", "-O3", "-static", "-nostdlib", "-ffreestanding", "-fno-pic",
             "-mno-abicalls", "-fno-tree-loop-distribute-patterns", "-I" + os.path.join(CORE, "include", "dp")]
    rows = []
    for march, cpu in (("octeon", "Octeon68XX"), ("mips64r2", "MIPS64R2-generic")):
        exe = os.path.join(out, "dp_cost_" + march)
        run(["mips64-linux-gnuabi64-gcc", "-march=" + march] + flags + srcs + ["-lgcc", "-o", exe])
        marks = os.path.join(out, "marks-%s.txt" % march)
        names = run(["qemu-mips64", "-cpu", cpu, "-plugin", "%s,mark=0x%x,out=%s" % (plugin, mark_address("mips64", exe),
                                                                                   marks), exe]).split()
        with open(marks) as f:
            m = [int(x) for x in f.read().split() if x.isdigit()]
        spans = [m[2 * k + 1] - m[2 * k] for k in range(len(m) // 2)]
        for name, n in zip(names[1:], spans[1:]):
            rows.append({"march": march, "qemu_cpu": cpu, "op": name, "calls": 4096,
                         "instructions": n - spans[0], "insns_per_call": "%.2f" % ((n - spans[0]) / 4096)})
    with open(OCTEON_TABLE, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    by = {}
    for r in rows:
        by.setdefault(r["op"], {})[r["march"]] = float(r["insns_per_call"])
    for op, v in by.items():
        print("%-20s octeon %8.2f  mips64r2 %8.2f  (%+.1f%%)" % (op, v["octeon"], v["mips64r2"],
                                                             100 * (v["octeon"] - v["mips64r2"]) / v["mips64r2"]))
    print("count_insns: wrote %s" % OCTEON_TABLE)
    return 0


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def read_table(path=TABLE):
    with open(path) as f:
        return list(csv.DictReader(f))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "cost"))
    ap.add_argument("--bin", action="append", default=[], metavar="ISA=PATH",
                    help="use this dp_cost binary for ISA instead of building (repeatable)")
    ap.add_argument("--plugin", help="prebuilt rt_insn_plugin.so")
    ap.add_argument("--isa", default=",".join(ISAS), help="comma-separated ISAs (default: all three)")
    ap.add_argument("--only", help="comma-separated operations (default: all)")
    ap.add_argument("--check", action="store_true", help="compare with the table instead of writing it")
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--octeon", action="store_true",
                    help="count the freestanding subset as Octeon (-march=octeon) and MIPS64r2 code under qemu's "
                         "Octeon68XX / MIPS64R2-generic CPUs into octeon_insn_counts.csv")
    a = ap.parse_args(argv)
    if a.octeon:
        return octeon_compare(a.build_dir, a.plugin or build_plugin(a.build_dir))
    isas = [i for i in a.isa.split(",") if i]
    for i in isas:
        if i not in ISAS:
            sys.exit("count_insns: unknown ISA %r (known: %s)" % (i, ", ".join(ISAS)))
    for tool in ["valgrind"] * ("x86_64" in isas) + [QEMU[i][0] for i in isas if i in QEMU]:
        if not shutil.which(tool):
            sys.exit("count_insns: %s not found (scripts/setup.sh installs it)" % tool)
    bins = dict(b.split("=", 1) for b in a.bin)
    if all(i in bins for i in isas):
        plugin = a.plugin or build_plugin(a.build_dir)
    else:
        built, plugin = build(a.build_dir, a.jobs)
        bins = {**built, **bins}
    commit = git_commit()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {i: ex.submit(count_one, i, bins[i], plugin, a.only, commit) for i in isas}
        results = {i: f.result() for i, f in futs.items()}
    rows = []
    for i in isas:
        rows += rows_of(i, *results[i])
    # The counters are the core's contract: identical on every ISA.
    ref = {r["op"]: r for r in rows if r["isa"] == isas[0]}
    for r in rows:
        for c in COUNTERS:
            k = "%s_per_call" % c
            if r[k] != ref[r["op"]][k]:
                sys.exit("count_insns: %s %s: %s %s differs from %s's %s" % (r["isa"], r["op"], k, r[k], isas[0],
                                                                            ref[r["op"]][k]))
    if a.check:
        table = {(r["isa"], r["op"]): r for r in read_table(a.table)}
        bad = []
        for r in rows:
            t = table.get((r["isa"], r["op"]))
            if t is None:
                bad.append("%s %s: not in %s" % (r["isa"], r["op"], a.table))
                continue
            for k in ["calls", "instructions", "compiler", "flags"] + ["%s_per_call" % c for c in COUNTERS]:
                if str(r[k]) != t[k]:
                    bad.append("%s %s: %s is %s, the table says %s" % (r["isa"], r["op"], k, r[k], t[k]))
        if bad:
            print("count_insns: the table %s is stale (regenerate: python3 core/cost/count_insns.py):\n  %s"
                  % (a.table, "\n  ".join(bad)), file=sys.stderr)
            return 1
        print("count_insns: %d rows match %s" % (len(rows), a.table))
        return 0
    if a.only or set(isas) != set(ISAS):
        # A partial run replaces only its own rows.
        keep = [r for r in read_table(a.table) if (r["isa"], r["op"]) not in {(x["isa"], x["op"]) for x in rows}]
        rows = keep + rows
    order = {i: n for n, i in enumerate(ISAS)}
    rows.sort(key=lambda r: (order[r["isa"]],))
    with open(a.table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("count_insns: wrote %d rows to %s" % (len(rows), a.table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
