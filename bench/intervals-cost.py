"""What `routertwin validate --intervals MODE` costs, scenario by scenario:
the runs its plan makes (nominal + replications + assumption variants) times
the CPU seconds of one run, and the wall time that gives on N idle cores.

A bench program, never a test (docs/validation.md "Speed and modes"). CPU
seconds are the portable figure on a shared builder: one run of every
scenario is timed in this process (time.process_time: the native models run
in-process), the plan is the real one (routertwin.validation.intervals.plan,
its variants prepared in a temporary folder: the refits are part of the
cost and are timed too). Wall on N idle cores is the larger of total / N and
the longest single run (a run is not split over workers).

    python bench/intervals-cost.py [--mode full|quick] [--cores 2] [--jobs 2] [--study NAME ...]

The projection prices every run as a whole nominal run, so it cannot see
what the interval runs share (runners/_shared/native.NativeMemo: a native
call identical to one already made takes its result). `--run` runs the real
plan instead -- the nominal runs, replications and variants in a pool of
`--jobs` processes, as `routertwin validate --intervals` does -- and prints
its CPU seconds (this process and its workers) and wall time; `--no-memo`
runs the same jobs with nothing shared (the cost before the memo), for a
before/after in one session.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="full", choices=["quick", "full"])
    ap.add_argument("--cores", type=int, default=2, help="idle cores the projection assumes")
    ap.add_argument("--jobs", type=int, default=2, help="processes preparing the variants here")
    ap.add_argument("--study", action="append", default=[])
    ap.add_argument("--run", action="store_true", help="run the real plan and measure it (no projection)")
    ap.add_argument("--no-memo", action="store_true", help="with --run: share no native results")
    args = ap.parse_args()

    from routertwin.parallel import Job, run_job
    from routertwin.validation.intervals import plan
    from routertwin.validation.mapping import load_mappings
    from routertwin.validation.reference import load_reference, reference_path

    mappings = load_mappings(ROOT, load_reference(reference_path(ROOT)))
    studies = args.study or list(mappings)
    rows = sorted({row.scenario for s in studies for row in mappings[s].rows.values()})
    plots = sorted({p.scenario for s in studies for p in mappings[s].plots} - set(rows))

    def cpu_all() -> float:  # this process and its reaped workers
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    if args.run:
        return measure(args, rows, plots, cpu_all)

    cpu: dict[Path, float] = {}
    for path in rows + plots:
        t0 = time.process_time()
        out = run_job(Job(str(path)))
        cpu[path] = time.process_time() - t0
        print(f"one run {cpu[path]:7.2f} CPU s  {path.relative_to(ROOT)}{'  ERROR ' + out.error if out.error else ''}",
              file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="intervals-cost-") as tmp:
        t0 = cpu_all()
        w0 = time.perf_counter()
        p = plan(ROOT, rows, args.mode, Path(tmp), jobs=args.jobs)
        prep_cpu = cpu_all() - t0
        prep_wall = time.perf_counter() - w0
    runs = Counter(Path(slot[0]) for slot in p.slots)

    print(f"validate --intervals {args.mode}, studies {', '.join(studies)}")
    print(f"{'scenario':48} {'runs':>5} {'CPU s/run':>10} {'CPU s':>9}")
    total = 0.0
    for path in rows + plots:
        n = 1 + runs.get(path, 0)  # the nominal run, then its interval runs
        total += n * cpu[path]
        print(f"{str(path.relative_to(ROOT)):48} {n:5d} {cpu[path]:10.2f} {n * cpu[path]:9.1f}")
    n_runs = len(rows) + len(plots) + len(p.slots)
    print(f"runs: {n_runs}; {len(p.variants)} variants prepared in {prep_cpu:.0f} CPU s ({prep_wall:.0f} s wall here)")
    longest = max(cpu.values())
    wall = max((total + prep_cpu) / args.cores, longest)
    print(f"total: {total:.0f} CPU s of scenario runs + {prep_cpu:.0f} CPU s of preparation; on {args.cores} idle "
          f"cores at least {wall:.0f} s wall ({wall / 60:.1f} min)")
    return 0


def measure(args, rows: list[Path], plots: list[Path], cpu_all) -> int:
    """The real plan run in a pool, as `validate --intervals` runs it: its
    CPU seconds (user + system of this process and every worker) and wall."""
    import dataclasses

    from routertwin.parallel import Job, run_jobs
    from routertwin.progress import Progress
    from routertwin.validation.intervals import plan

    with tempfile.TemporaryDirectory(prefix="intervals-cost-") as tmp:
        t0, w0 = cpu_all(), time.perf_counter()
        p = plan(ROOT, rows, args.mode, Path(tmp), jobs=args.jobs)
        prep_cpu, prep_wall = cpu_all() - t0, time.perf_counter() - w0
        jobs = [p.nominal_job(Job(str(path))) for path in rows + plots] + p.jobs
        if args.no_memo:
            jobs = [dataclasses.replace(j, memo=None) for j in jobs]
        with Progress(f"{len(jobs)} runs") as progress:
            t1, w1 = cpu_all(), time.perf_counter()
            outcomes = run_jobs(jobs, jobs=args.jobs, progress=progress)
            run_cpu, run_wall = cpu_all() - t1, time.perf_counter() - w1
        shared = len(list(Path(p.memo).glob("*.pickle"))) if Path(p.memo).is_dir() else 0
    failed = sum(1 for o in outcomes if o.error)
    print(f"validate --intervals {args.mode} (measured, {'no memo' if args.no_memo else 'memo'}, "
          f"--jobs {args.jobs}): {len(jobs)} runs ({failed} gave an error), {shared} distinct native results kept")
    print(f"preparing variants: {prep_cpu:.0f} CPU s, {prep_wall:.0f} s wall")
    print(f"runs: {run_cpu:.0f} CPU s, {run_wall:.0f} s wall here; total {prep_cpu + run_cpu:.0f} CPU s = "
          f"{(prep_cpu + run_cpu) / args.cores / 60:.1f} min on {args.cores} idle cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
