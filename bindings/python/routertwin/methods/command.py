"""`routertwin rfc2544 SCENARIO.yaml --method M`: an RFC 2544 method over
every case (or `--case ID`) of any scenario whose runner offers a tester
(routertwin.methods.tester). Prints a table of the trials and a summary line
per case, and writes, per case, OUT/<scenario>-<case>-<method>.json and .csv
(every trial in the order run) and the plots (-loss-vs-load.png for the
load searches and the loss curve, -size-sweep.png for the size sweep), all
atomically: the set of a case is written completely or not at all.
docs/rfc2544.md describes the methods and their stopping rules.
"""

from __future__ import annotations

import io
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from routertwin.errors import UserError
from routertwin.methods import rfc2544
from routertwin.methods.tester import TesterCase, case_testers

METHODS = ("frmol", "throughput", "latency", "loss-curve", "back-to-back", "ndr-pdr", "size-sweep")
LOAD_PLOTS = ("throughput", "latency", "loss-curve", "ndr-pdr")  # methods whose trials vary the load


def add_arguments(p) -> None:
    """The subcommand's flags (cli.py builds the parser)."""
    p.add_argument("scenario", type=Path, metavar="SCENARIO.yaml")
    p.add_argument("--method", required=True, choices=METHODS)
    p.add_argument("--case", action="append", default=[], metavar="ID",
                   help="only this case (repeatable; default: every case)")
    p.add_argument("--resolution", type=float, default=0.001,
                   help="width of the final load bracket, fraction of max rate (throughput, latency, ndr-pdr)")
    p.add_argument("--pdr-loss-pct", type=float, default=0.5, help="loss allowed at the PDR (ndr-pdr), %%")
    p.add_argument("--step", type=float, default=0.1,
                   help="load step of the loss curve, fraction of max rate (at most 0.1)")
    p.add_argument("--sizes", type=int, nargs=2, metavar=("FIRST", "LAST"),
                   help="size-sweep range (default: the case's size to 16 bytes above it)")
    p.add_argument("--size-step", type=int, default=1, help="size-sweep step in bytes (BT: 1)")
    p.add_argument("--repeats", type=int,
                   help="latency trials (default 20, RFC 2544 26.2) or back-to-back repeats (default 50, 26.4)")
    p.add_argument("--max-frames", type=int, default=100000, help="back-to-back: longest burst tried")
    p.add_argument("--duration", type=float, metavar="SECONDS",
                   help="tester time per trial (default: the scenario's)")
    p.add_argument("--seed", type=int, help="replace the scenario's seed (repeat i uses seed + i)")
    p.add_argument("--out", type=Path, help="output folder (default: ROOT/build/rfc2544, or ./build/rfc2544)")


@dataclass
class MethodOptions:
    """The options of a method, as the subcommand's flags give them (an
    argparse Namespace has the same attributes); `routertwin.rfc2544` builds one."""

    method: str
    resolution: float = 0.001
    pdr_loss_pct: float = 0.5
    step: float = 0.1
    sizes: tuple[int, int] | None = None
    size_step: int = 1
    repeats: int | None = None
    max_frames: int = 100000
    duration: float | None = None
    seed: int | None = None
    out: Path | None = None


def check_options(args) -> None:
    """Refuse options out of range (one UserError line naming the flag)."""
    if args.method not in METHODS:
        raise UserError(f"routertwin.rfc2544: method={args.method!r}: not a method (methods: {', '.join(METHODS)})")
    _check_flags(args)


def _check_flags(args) -> None:
    def bad(flag, value, why):
        if isinstance(args, MethodOptions):  # called from Python: name the keyword argument
            keyword = flag.lstrip("-").replace("-", "_")
            value = getattr(args, keyword, value)
            why = why.replace("--method size-sweep", "method='size-sweep'")
            raise UserError(f"routertwin.rfc2544: {keyword}={value!r}: {why}")
        raise UserError(f"routertwin rfc2544: {flag} {value}: {why}")

    if not 0 < args.resolution < 1:
        bad("--resolution", args.resolution, "must be in (0, 1), a fraction of the maximum rate")
    if not 0 <= args.pdr_loss_pct < 100:
        bad("--pdr-loss-pct", args.pdr_loss_pct, "must be in [0, 100)")
    if not 0 < args.step <= 0.1:
        bad("--step", args.step, "must be in (0, 0.1]: RFC 2544 26.3 steps are at most 10 % of the maximum rate")
    if args.size_step < 1:
        bad("--size-step", args.size_step, "must be at least 1")
    if args.repeats is not None and args.repeats < 1:
        bad("--repeats", args.repeats, "must be at least 1")
    if args.max_frames < 1:
        bad("--max-frames", args.max_frames, "must be at least 1")
    if args.duration is not None and not (args.duration > 0 and math.isfinite(args.duration)):
        bad("--duration", args.duration, "must be a positive number of seconds")
    if args.sizes is not None and args.sizes[0] > args.sizes[1]:
        bad("--sizes", " ".join(map(str, args.sizes)), "FIRST must not exceed LAST")
    if args.sizes is not None and args.method != "size-sweep":
        bad("--sizes", " ".join(map(str, args.sizes)), "applies to --method size-sweep only")


@dataclass
class _Log:
    """Every trial run for one case, in order, with its phase, size and seed;
    each trial also shows on `progress` (when given) as the case's count."""

    case: str = ""
    progress: Any = None
    rows: list[tuple[str, int, int, rfc2544.TrialResult]] = field(default_factory=list)

    def trial(self, fn, phase: str, size: int, seed: int):
        def run(load: float) -> rfc2544.TrialResult:
            r = fn(load)
            self.rows.append((phase, size, seed, r))
            if self.progress is not None:
                self.progress.advance(0, status=f"{self.case}: {len(self.rows)} trials")
            return r
        return run

    def trials(self, phase: str | None = None) -> list[rfc2544.TrialResult]:
        return [r for p, _, _, r in self.rows if phase is None or p == phase]


def run_method(tc: TesterCase, method: str, args, seed: int, progress=None) -> tuple[dict, _Log]:
    """Run one method on one case; returns the summary and the trial log."""
    log = _Log(tc.case, progress)
    size = tc.size
    dev = tc.trial_at(size, seed)  # raises the case's own reason when it has no single size (a frame mix)

    def rate(load: float) -> float:
        return load * tc.max_frame_rate(size)

    res: dict = {}
    if method == "frmol":
        t = rfc2544.frmol(log.trial(dev, "frmol", size, seed))
        res = {"forwarded_fps": t.extra["rx_fps"], "loss_pct": 100 * t.loss_ratio}
    elif method in ("throughput", "latency"):
        s = rfc2544.throughput(log.trial(dev, "search", size, seed), resolution=args.resolution)
        res = {"throughput_load": s.load, "throughput_fps": rate(s.load), "resolution": args.resolution,
               "search_trials": len(s.trials)}
        if method == "latency":
            if s.trial is None:
                raise UserError(f"case '{tc.case}': no offered load is loss-free, so there is no throughput "
                                "rate to measure latency at")
            repeats = args.repeats or 20
            lats = [rfc2544.latency_at_throughput(
                log.trial(tc.trial_at(size, seed + i), "latency", size, seed + i), s.load, repeats=1)
                for i in range(repeats)]
            res.update({"repeats": repeats, "latency_min_us": min(x.min_us for x in lats),
                        "latency_avg_us": sum(x.avg_us for x in lats) / repeats,
                        "latency_max_us": max(x.max_us for x in lats)})
    elif method == "loss-curve":
        pts = rfc2544.frame_loss_curve(log.trial(dev, "loss-curve", size, seed), step=args.step)
        res = {"step": args.step, "loads": [p.offered_load for p in pts],
               "loss_pct": [100 * p.loss_ratio for p in pts]}
    elif method == "ndr-pdr":
        r = rfc2544.ndr_pdr(log.trial(dev, "search", size, seed), resolution=args.resolution,
                            pdr_loss_ratio=args.pdr_loss_pct / 100)
        res = {"ndr_load": r.ndr.load, "ndr_fps": rate(r.ndr.load), "pdr_load": r.pdr.load,
               "pdr_fps": rate(r.pdr.load), "pdr_loss_pct_allowed": args.pdr_loss_pct,
               "resolution": args.resolution, "trials": r.trials}
    elif method == "back-to-back":
        repeats = args.repeats or 50
        found = [rfc2544.back_to_back(log.trial(tc.burst_at(size, seed + i), "burst", size, seed + i),
                                      max_frames=args.max_frames, repeats=1).frames for i in range(repeats)]
        res = {"frames_mean": sum(found) / repeats, "per_repeat": [int(f) for f in found],
               "max_frames": args.max_frames, "repeats": repeats}
    elif method == "size-sweep":
        first, last = args.sizes or (size, size + 16)
        tc.check_size(first, "--sizes")
        tc.check_size(last, "--sizes")
        sweep = rfc2544.frame_size_sweep(
            lambda s: log.trial(tc.trial_at(s, seed), "sweep", s, seed),
            range(first, last + 1, args.size_step))
        res = {"first_zero_loss_size": sweep.first_zero_loss_bytes, "sizes": [first, last],
               "size_step": args.size_step}
    return res, log


# ------------------------------------------------------------------ outputs --

def _scalar_extra(extra: dict) -> dict:
    out = {}
    for k, v in sorted(extra.items()):
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in sorted(v.items())})
        else:
            out[k] = v
    return out


def trial_rows(log: _Log) -> list[dict]:
    rows = []
    for i, (phase, size, seed, r) in enumerate(log.rows):
        d = {"trial": i + 1, "phase": phase, "size": size, "seed": seed}
        d.update({k: v for k, v in asdict(r).items() if k != "extra"})
        d["lost"] = r.lost
        d["loss_pct"] = 100 * r.loss_ratio
        d.update(_scalar_extra(r.extra))
        rows.append(d)
    return rows


def to_csv(rows: list[dict]) -> str:
    import csv

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([repr(v) if isinstance(v, float) else ("" if v is None else str(v)) for v in
                    (r.get(k) for k in cols)])
    return buf.getvalue()


def _png(plot, *a, **kw) -> bytes:
    """A plot function that writes a path, rendered to bytes (so the PNG joins
    the atomic set of files)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "plot.png"
        plot(*a, path=path, **kw)
        return path.read_bytes()


def outputs(scenario, tc: TesterCase, method: str, args, seed: int, res: dict, log: _Log,
            root: Path | None) -> dict[Path, str | bytes]:
    from routertwin.project import display_path
    from routertwin.results import _finite, provenance, to_json

    stem = f"{scenario.name}-{tc.case}-{method}"
    out = Path(args.out) if args.out else (root or Path.cwd()) / "build" / "rfc2544"
    rows = trial_rows(log)
    doc = _finite({
        **provenance(scenario, root), "scenario": scenario.name, "kind": scenario.kind,
        "scenario_file": display_path(scenario.path, root), "seed": seed, "case": tc.case,
        "device": tc.describe, "size": tc.size, "size_unit": tc.size_unit, "trial_duration_s": tc.duration_s,
        "method": method, "options": _options(args, method), "result": res, "trials": rows,
    })
    files: dict[Path, str | bytes] = {out / f"{stem}.json": to_json(doc), out / f"{stem}.csv": to_csv(rows)}
    title = f"{scenario.name} {tc.case}: {method} ({tc.size} {tc.size_unit})"
    if method in LOAD_PLOTS:
        trials = log.trials("search") + log.trials("loss-curve")
        files[out / f"{stem}-loss-vs-load.png"] = _png(rfc2544.plot_loss_vs_load, trials, title=title)
    if method == "size-sweep":
        sweep = rfc2544.SizeSweepResult(res["first_zero_loss_size"],
                                        tuple((s, r) for _, s, _, r in log.rows))
        files[out / f"{stem}-size-sweep.png"] = _png(rfc2544.plot_size_sweep, sweep,
                                                      title=f"{scenario.name} {tc.case}: frame-size sweep")
    return files


def _options(args, method: str) -> dict:
    keep = {"throughput": ("resolution",), "latency": ("resolution", "repeats"),
            "ndr-pdr": ("resolution", "pdr_loss_pct"), "loss-curve": ("step",),
            "back-to-back": ("repeats", "max_frames"), "size-sweep": ("sizes", "size_step"), "frmol": ()}[method]
    opts = {k: getattr(args, k) for k in keep}
    if args.duration is not None:
        opts["duration"] = args.duration
    return opts


def summary(tc: TesterCase, method: str, res: dict, log: _Log) -> str:
    n = len(log.rows)
    if method == "frmol":
        return f"FRMOL {res['forwarded_fps']:.6g} frames/s, loss {res['loss_pct']:.4g} %"
    if method in ("throughput", "latency"):
        line = (f"throughput {100 * res['throughput_load']:.4f} % of max = {res['throughput_fps']:.6g} frames/s "
                f"(resolution {100 * res['resolution']:g} %, {res['search_trials']} trials)")
        if method == "latency":
            line += (f"; latency over {res['repeats']} trials min {res['latency_min_us']:.4g} "
                     f"avg {res['latency_avg_us']:.4g} max {res['latency_max_us']:.4g} us")
        return line
    if method == "ndr-pdr":
        return (f"NDR {100 * res['ndr_load']:.4f} % = {res['ndr_fps']:.6g} frames/s; PDR (loss <= "
                f"{res['pdr_loss_pct_allowed']:g} %) {100 * res['pdr_load']:.4f} % = {res['pdr_fps']:.6g} frames/s; "
                f"{res['trials']} trials")
    if method == "loss-curve":
        return (f"loss curve: {n} loads from 100 % down in {100 * res['step']:g} % steps, "
                f"loss {res['loss_pct'][0]:.4g} % at 100 %")
    if method == "back-to-back":
        return f"back-to-back: {res['frames_mean']:.6g} frames (mean of {res['repeats']}; at most {res['max_frames']})"
    first = res["first_zero_loss_size"]
    return (f"size sweep: first loss-free size {first} {tc.size_unit}" if first is not None
            else f"size sweep: every size in {res['sizes'][0]}..{res['sizes'][1]} lost frames")


def trial_table(title: str, log: _Log):
    from rich.table import Table

    from routertwin.results import fmt

    t = Table(title=title)
    for col in ("#", "phase", "size", "load %", "tx", "rx", "lost", "loss %", "lat min", "lat avg", "lat max"):
        t.add_column(col, justify="right")
    for i, (phase, size, _, r) in enumerate(log.rows):
        t.add_row(str(i + 1), phase, str(size), f"{100 * r.offered_load:.4f}", fmt(r.tx), fmt(r.rx), fmt(r.lost),
                  fmt(100 * r.loss_ratio), fmt(r.latency_min_us), fmt(r.latency_avg_us), fmt(r.latency_max_us))
    return t


def rfc2544_command(args, root: Path | None) -> int:
    from routertwin import runners
    from routertwin.progress import Progress
    from routertwin.project import display_path
    from routertwin.results import console as _console
    from routertwin.results import write_atomic
    from routertwin.scenario_loader import load_scenario

    _check_flags(args)
    scenario = load_scenario(args.scenario, seed=args.seed)
    cases = case_testers(runners.get(scenario.kind), scenario, duration_s=args.duration)
    by_id = {tc.case: tc for tc in cases}
    for cid in args.case:
        if cid not in by_id:
            raise UserError(f"{args.scenario}: --case {cid}: no such case; cases: {', '.join(by_id)}")
    chosen = [by_id[c] for c in dict.fromkeys(args.case)] if args.case else cases
    for tc in chosen:  # flag mistakes before any work
        if args.sizes is not None:
            tc.check_size(args.sizes[0], "--sizes")
            tc.check_size(args.sizes[1], "--sizes")
    console = _console()
    with Progress(f"rfc2544 {args.method}", len(chosen)) as progress:
        done = []
        for tc in chosen:
            res, log = run_method(tc, args.method, args, scenario.seed, progress)
            files = outputs(scenario, tc, args.method, args, scenario.seed, res, log, root)
            write_atomic(files)
            done.append((tc, res, log, files))
            progress.advance(1, status=f"{tc.case} done")
    for tc, res, log, files in done:
        console.print(trial_table(f"{scenario.name} {tc.case}: {args.method} -- {tc.describe}, "
                                  f"{tc.size} {tc.size_unit}, {tc.duration_s:g} s trials", log))
        console.print(summary(tc, args.method, res, log), markup=False, highlight=False)
        names = sorted(p.name for p in files)
        console.print(f"wrote {display_path(next(iter(files)).parent, root)}/{{{','.join(names)}}}",
                      markup=False, highlight=False)
    return 0
