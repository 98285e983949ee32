"""Command line interface: `routertwin run | validate | calibrate | rfc2544 | list | profile | lab | import | export`.

User mistakes (bad scenario, mapping, flag) print one line on stderr and exit
with status 2; a failed validation exits 1; an internal error prints a short
message (the traceback only with --debug) and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from routertwin.errors import UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage + message; we want one line
        raise UserError(f"{self.prog}: {message} (see --help)")


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (a pool of 0 or -3 processes is a
    typo, not a request for the default)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="routertwin", description="RouterTwin: a digital twin of routers, switches and load balancers.")
    p.add_argument("--root", type=Path, help="project root (default: the folder holding validation/reference.csv, "
                                             "searched from the current folder upward)")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run scenario files, print tables, write JSON and CSV")
    r.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO.yaml")
    r.add_argument("--out", type=Path, help="output folder (default: ROOT/build/results, or ./build/results)")
    r.add_argument("--seed", type=int, help="replace the scenario's seed")
    r.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key (dotted for nested keys; VALUE is YAML)")
    r.add_argument("--jobs", type=positive_int, help="local processes for several scenarios (default: CPU count)")
    r.add_argument("--scheduler", help="Dask scheduler address: run on that cluster instead")
    r.add_argument("--intervals", choices=["quick", "full"],
                   help="also give every metric its interval over seeds (quick: 3, full: 5) and over the "
                        "assumed numbers' ranges of the scenario's profiles (needs the project root)")

    v = sub.add_parser("validate", help="replay the reference measurements mapped in validation/mapping/")
    v.add_argument("--study", action="append", default=[], help="only this study (repeatable)")
    v.add_argument("--jobs", type=positive_int, help="local processes (default: CPU count)")
    v.add_argument("--out", type=Path, help="report folder (default: ROOT/build/validation)")
    v.add_argument("--scheduler", help="Dask scheduler address: run on that cluster instead")
    v.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    v.add_argument("--intervals", choices=["quick", "full"],
                   help="also show each twin value's interval over seeds (quick: 3, full: 5) and over the "
                        "assumed numbers' ranges, one at a time with refits (full also through fitted files "
                        "shared with other scenarios), and a sensitivity report (default: off, the plain replay)")

    c = sub.add_parser("calibrate", help="run the registered study fits; write scenarios/platforms/fitted/*.yaml")
    c.add_argument("--study", action="append", default=[], help="only this study (repeatable)")
    c.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed file differs")

    b = sub.add_parser("rfc2544", help="an RFC 2544 method over a scenario's cases (any kind with a tester)")
    from routertwin.methods.command import add_arguments

    add_arguments(b)

    sub.add_parser("list", help="list scenarios, runner kinds and studies")

    pr = sub.add_parser("profile", help="counter prices: derived from the core's instruction counts, or imported "
                                        "from a cost-harness run on a board (core/cost/dp_cost)")
    psub = pr.add_subparsers(dest="profile_command", required=True, parser_class=_Parser)
    pd = psub.add_parser("derive", help="instructions per counter unit (least squares over the harness's "
                                        "operations) and the seed-002 1-core rows they explain")
    pd.add_argument("--isa", default="mips64", choices=["x86_64", "mips64", "aarch64"],
                    help="instruction counts of this ISA (default mips64: the Octeon's)")
    pi = psub.add_parser("import", help="build a platform profile from a dp_cost JSON taken on a board and show "
                                        "it beside the current profile, price by price")
    pi.add_argument("results", type=Path, metavar="RESULTS.json")
    pi.add_argument("--platform", type=Path, required=True, metavar="PLATFORM.yaml",
                    help="the current profile of that board (scenarios/platforms/*.yaml)")
    pi.add_argument("--out", type=Path, help="write the new profile here (default: show only)")

    lab = sub.add_parser("lab", help="seed 004's three L3 paths built from network namespaces on this machine, "
                                     "measured with iperf3 beside the twin (needs root; docs/lab.md)")
    lab.add_argument("--paths", default="flat-direct,flat-eip,vpc-eip",
                     help="comma-separated paths to measure (default: all three)")
    lab.add_argument("--seconds", type=float, default=10.0, help="iperf3 time per path and round (default 10)")
    lab.add_argument("--interval", type=float, default=1.0,
                     help="iperf3 reporting interval: the timing records min/max are taken over (default 1 s)")
    lab.add_argument("--rate", type=float, default=1e9, help="wire rate of the shaped links, bit/s (default 1e9)")
    lab.add_argument("--rounds", type=positive_int, default=1,
                     help="measure every path this many times, interleaved (default 1)")
    lab.add_argument("--calibrate", default="flat-direct",
                     help="the path whose measurement calibrates the twin's per-hop cost (default flat-direct)")
    lab.add_argument("--seed", type=int, default=1, help="the twin's seed (default 1)")
    lab.add_argument("--prefix", default="rtlab", help="namespace name prefix (default rtlab)")
    lab.add_argument("--out", type=Path, help="results folder (default: ROOT/build/lab, or ./build/lab)")
    lab.add_argument("--twin-seconds", type=float, default=0.5,
                     help="simulated seconds of the twin's ns-3 run per path (default 0.5)")
    lab.add_argument("--no-twin", action="store_true", help="measure only")
    lab.add_argument("--no-plots", action="store_true", help="skip the PNG plot")
    lab.add_argument("--cleanup", action="store_true",
                     help="only remove namespaces left by earlier runs that were killed, then exit")
    lab_sub = lab.add_subparsers(dest="lab_kind", metavar="haproxy", parser_class=_Parser)
    lh = lab_sub.add_parser("haproxy", help="Debian's haproxy on CONFIG in a network namespace, beside the twin "
                                            "(needs root; docs/lab.md)")
    lh.add_argument("configs", nargs="*", type=Path, metavar="CONFIG",
                    help="haproxy.cfg files (each one a case; scenarios/lab/haproxy/ holds the lab's own)")
    lh.add_argument("--workload", action="append", default=[], metavar="KEY=VALUE[,...]",
                    help="the client workload (docs/lab.md lists the keys); overrides a CONFIG's "
                         "'# lab-workload:' line")
    lh.add_argument("--seed", type=int, default=1, help="the twin's seed (default 1)")
    lh.add_argument("--prefix", default="rtlabha", help="namespace name prefix (default rtlabha)")
    lh.add_argument("--out", type=Path, help="results folder (default ./build/lab)")
    lh.add_argument("--no-twin", action="store_true", help="measure only")
    lh.add_argument("--no-plots", action="store_true", help="skip the PNG plot")
    lh.add_argument("--cleanup", action="store_true",
                    help="only remove namespaces left by earlier runs that were killed, then exit")
    im = sub.add_parser("import", help="a routing table (or balancer configuration) the user runs -> a scenario "
                                       "and its data files (docs/import.md)")
    from routertwin.importers import add_parsers

    add_parsers(im.add_subparsers(dest="import_kind", required=True, metavar="KIND", parser_class=_Parser))
    ex = sub.add_parser("export", help="a scenario's balancer as a configuration: haproxy (docs/import-lb.md)")
    ex.add_argument("export_kind", metavar="KIND", choices=["haproxy"], help="haproxy")
    ex.add_argument("scenario", type=Path, metavar="SCENARIO.yaml")
    ex.add_argument("-o", "--out", type=Path, help="write here (default: standard output)")
    return p


def main(argv: list[str] | None = None) -> int:
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
        return _COMMANDS[args.command](args)
    except UserError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("routertwin: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # internal error: short by default
        if debug:
            raise
        print(f"routertwin: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 1


def _root(args, required: bool = True):
    from routertwin.project import find_root

    if required or args.root is not None:
        return find_root(explicit=args.root)
    try:
        return find_root()
    except UserError:
        return None


def _cmd_run(args) -> int:
    from routertwin.distributions import print_distributions
    from routertwin.progress import Progress
    from routertwin.results import console as _console
    from routertwin.results import table, write_results
    from routertwin.scenario_loader import load_scenario
    from routertwin.parallel import Job, run_jobs
    from routertwin.validation.replay import mapped_rows, print_scenario_comparison

    root = _root(args, required=False)
    out = args.out or (root or Path.cwd()) / "build" / "results"
    # Every user error, in the user's spelling, before any work starts (the
    # loader also runs each runner's load-time check: profiles, platform limits).
    named: dict[str, Path] = {}
    for path in args.scenarios:
        name = load_scenario(path, seed=args.seed, overrides=args.overrides).name
        if name in named:  # both would write OUT/<name>.json: one would silently replace the other
            raise UserError(f"{path}: scenario '{name}' is also the name of {named[name]}; results are written "
                            "under the name, so give each a distinct 'scenario:'")
        named[name] = path
    # Absolute paths: Dask workers do not share our working folder.
    jobs = [Job(str(p.resolve()), args.seed, tuple(args.overrides)) for p in args.scenarios]
    plan = None
    if args.intervals and root is None:
        raise UserError("--intervals: no project root (validation/reference.csv) found: refits need it; give --root")
    with Progress("run", len(jobs)) as progress:
        if args.intervals:
            plan, outcomes = _run_with_intervals(args, root, jobs, progress)
        else:
            outcomes = run_jobs(jobs, jobs=args.jobs, scheduler=args.scheduler, progress=progress)
    for o in outcomes:  # a failed scenario fails the run before any file is written
        if o.error:
            raise UserError(o.error)
    console = _console()
    mapped = None  # the reference rows mappings replay: read once, when the first table is out
    for o in outcomes:
        console.print(table(o.scenario, o.cases))
        print_distributions(console, o.scenario, o.cases)
        runs = plan.runs.get(Path(o.scenario.path)) if plan is not None else None
        items = []
        if runs is not None:
            from routertwin.validation.intervals import case_intervals, intervals_table

            items = case_intervals(runs)
            console.print(intervals_table(f"{o.scenario.name}: intervals ({plan.mode})", items))
        if root is not None:
            if mapped is None:
                mapped = mapped_rows(root)
            print_scenario_comparison(mapped, o, console, runs)
        jpath, cpath = write_results(out, o.scenario, o.cases, root)
        console.print(f"wrote {jpath} and {cpath.name}")
        if runs is not None:
            from routertwin.results import to_json, write_atomic
            from routertwin.validation.intervals import intervals_csv, record

            ipath = out / f"{o.scenario.name}.intervals.csv"
            write_atomic({ipath: intervals_csv(items),
                          out / f"{o.scenario.name}.intervals.json": to_json(record(plan, root, [runs.inputs.path]))})
            console.print(f"wrote {ipath} and {o.scenario.name}.intervals.json")
    return 0


def _run_with_intervals(args, root, jobs, progress):
    """The nominal runs and, in the same pool, their replications and
    assumption variants (routertwin.validation.intervals); the variants'
    shadow projects live in a temporary folder removed afterwards."""
    import shutil
    import tempfile

    from routertwin.parallel import run_jobs
    from routertwin.validation.intervals import plan as plan_intervals

    tmp = Path(tempfile.mkdtemp(prefix="routertwin-variants-"))
    try:
        plan = plan_intervals(root, [Path(j.path) for j in jobs], args.intervals, tmp, progress,
                              seed=args.seed, overrides=tuple(args.overrides), jobs=args.jobs,
                              scheduler=args.scheduler)
        results = run_jobs([plan.nominal_job(j) for j in jobs] + plan.jobs, jobs=args.jobs, scheduler=args.scheduler, progress=progress)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    outcomes = results[:len(jobs)]
    plan.fill(results[len(jobs):], {Path(j.path): o for j, o in zip(jobs, outcomes)})
    return plan, outcomes


def _cmd_validate(args) -> int:
    from routertwin.validation.replay import validate

    root = _root(args)
    return validate(root, studies=args.study, jobs=args.jobs, scheduler=args.scheduler,
                    out=args.out or root / "build" / "validation", plots=not args.no_plots, intervals=args.intervals)


def _cmd_calibrate(args) -> int:
    from routertwin.validation.calibration import calibrate_command

    return calibrate_command(_root(args), studies=args.study, check=args.check)


def _cmd_list(args) -> int:
    from rich.table import Table

    from routertwin import runners
    from routertwin.project import display_path
    from routertwin.results import console as _console
    from routertwin.validation.calibration import load_studies, registered
    from routertwin.validation.mapping import load_mappings

    root = _root(args)
    console = _console()
    t = Table(title="scenarios")
    for col in ("file", "scenario", "kind", "description"):
        t.add_column(col)
    from ruamel.yaml import YAML

    for path in sorted((root / "scenarios").rglob("*.yaml")):
        try:
            doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        except Exception:  # `routertwin run` names the error; here it is just not listed as valid
            t.add_row(display_path(path, root), "?", "?", "(not valid YAML)")
            continue
        if not (isinstance(doc, dict) and "kind" in doc and "scenario" in doc):
            continue  # platform profiles, workloads, fitted parameters: data used by scenarios
        t.add_row(display_path(path, root), str(doc.get("scenario", "?")), str(doc.get("kind", "?")),
                  str(doc.get("description", "")))
    console.print(t)
    console.print("runner kinds: " + ", ".join(runners.available()))
    load_studies()
    mappings = load_mappings(root)
    s = Table(title="studies")
    for col in ("study", "mapped rows", "fit registered"):
        s.add_column(col)
    for name in sorted(set(mappings) | set(registered())):
        m = mappings.get(name)
        s.add_row(name, str(len(m.rows)) if m else "0", "yes" if name in registered() else "no")
    console.print(s)
    return 0


def _cmd_rfc2544(args) -> int:
    from routertwin.methods.command import rfc2544_command

    return rfc2544_command(args, _root(args, required=False))


def _cmd_profile(args) -> int:
    from rich.table import Table

    from routertwin import cost
    from routertwin.results import console as _console

    root = _root(args)
    console = _console()
    rows = cost.read_insn_table(root)
    if args.profile_command == "derive":
        fit = cost.derive_instruction_prices(rows, args.isa)
        t = Table(title=f"instructions per unit ({args.isa}; {fit.call.source})")
        for col in ("price", "instructions per unit (± 1 s.e.)", "kind"):
            t.add_column(col)
        t.add_row("call", fit.call.shown(), fit.call.kind)
        for c, p in fit.per_counter.items():
            t.add_row(c, p.shown(), p.kind)
        console.print(t)
        insns = cost.table_insns(rows, args.isa)
        ops = cost.table_ops(rows)
        h = Table(title="held-out paths: counted vs predicted by the prices")
        for col in ("path", "counted", "predicted", "error"):
            h.add_column(col)
        for path, calls in cost.PATH_CALLS.items():
            pred = fit.predict(ops[path], calls)
            h.add_row(path, f"{insns[path]:.1f}", f"{pred:.1f}", f"{100 * (pred - insns[path]) / insns[path]:+.1f}%")
        console.print(h)
        r = Table(title="seed 002, 1-core 64-byte rows: fitted cycles per packet vs what the core's code explains "
                        "(derived at CPI low / mid / high, scenarios/platforms/core-types.yaml)")
        for col in ("row", "fitted cycles", "core path", "derived cycles", "explained", "fitted pps",
                    "derived-only pps", "work the core does not model"):
            r.add_column(col)
        for x in cost.seed002_report(root):
            r.add_row(x["row"], f"{x['fitted_cycles']:.1f}", x["core_path"],
                      f"{x['derived_cycles_low']:.0f} / {x['derived_cycles_mid']:.0f} / {x['derived_cycles_high']:.0f}",
                      f"{x['explained_pct_low']:.0f}% / {x['explained_pct_mid']:.0f}% / {x['explained_pct_high']:.0f}%",
                      f"{x['fitted_pps']:.3g}",
                      " / ".join("-" if x[f'derived_pps_{k}'] == float("inf") else f"{x[f'derived_pps_{k}']:.3g}"
                                 for k in ("low", "mid", "high")),
                      x["not_modelled"])
        console.print(r)
        return 0
    from ruamel.yaml import YAML

    if not args.platform.exists():
        raise UserError(f"{args.platform}: no such platform profile")
    base = YAML(typ="safe").load(args.platform.read_text(encoding="utf-8"))
    clock = float(((base or {}).get("cores") or {}).get("clock_hz") or 0) or None
    res = cost.load_results(args.results, rows, clock)
    table, measured, _ = cost.import_profile(res, rows, args.platform, args.out, root)
    if res.emulated:
        console.print(f"[bold red]EMULATED RUN[/]: {args.results} was taken under {res.doc['environment']}; "
                      "its figures are not a hardware measurement.")
    t = Table(title=f"{base.get('platform')}: prices in cycles per unit, current profile vs this run "
                    f"({res.doc['isa']}, {res.doc['cpu']})")
    for col in ("price", "current profile", "derived (instructions x CPI)", "this run (± 1 s.e.)", "kind"):
        t.add_column(col)
    for row in table:
        t.add_row(row["price"], row["current"], row["derived"], row["board"], row["kind"])
    console.print(t)
    console.print(f"cycles from: {res.cycles_basis}")
    if args.out:
        console.print(f"wrote {args.out}")
    return 0


def _cmd_lab_haproxy(args) -> int:
    from routertwin.lab import haproxy
    from routertwin.lab.haproxy_report import print_report
    from routertwin.results import console as _console

    if args.cleanup:
        removed = haproxy.cleanup(args.prefix)
        print(f"removed {len(removed)} leftover namespace(s)" + (f": {', '.join(removed)}" if removed else ""))
        return 0
    params = haproxy.LabHaproxyParameters(configs=tuple(args.configs), workload=",".join(args.workload),
                                          seed=args.seed, prefix=args.prefix, twin=not args.no_twin)
    report = haproxy.run_lab_haproxy(params, out=args.out or Path.cwd() / "build" / "lab",
                                     plots=not args.no_plots)
    print_report(report, _console())
    return 0 if report.passed else 1


def _cmd_lab(args) -> int:
    if getattr(args, "lab_kind", None) == "haproxy":
        return _cmd_lab_haproxy(args)
    from routertwin.lab import LabParameters, cleanup, run_lab
    from routertwin.lab.report import print_report
    from routertwin.results import console as _console

    if args.cleanup:
        removed = cleanup(args.prefix)
        print(f"removed {len(removed)} leftover namespace(s)" + (f": {', '.join(removed)}" if removed else ""))
        return 0
    root = _root(args, required=False)
    params = LabParameters(paths=tuple(p.strip() for p in args.paths.split(",") if p.strip()),
                           seconds=args.seconds, interval_s=args.interval, wire_rate_bps=args.rate,
                           rounds=args.rounds, calibrate=args.calibrate, prefix=args.prefix, seed=args.seed,
                           twin=not args.no_twin, twin_seconds=args.twin_seconds)
    report = run_lab(params, root=root, out=args.out or (root or Path.cwd()) / "build" / "lab",
                     plots=not args.no_plots)
    print_report(report, _console())
    return 0


def _cmd_export(args) -> int:
    from routertwin import importers
    from routertwin.importers._lbcommon import write_atomic
    from routertwin.scenario_loader import load_scenario

    module = importers.get(args.export_kind)
    if not hasattr(module, "export"):
        raise UserError(f"routertwin export: kind '{args.export_kind}' has no export")
    text = module.export(load_scenario(args.scenario))
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.out, text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _cmd_import(args) -> int:
    from routertwin import importers

    imported = importers.convert(args.import_kind, args.file, args)
    for item in imported.unmodelled:
        print(f"not modelled: {item}", file=sys.stderr)
    importers.write(imported)
    print(imported.summary)
    return 0


_COMMANDS = {"import": _cmd_import, "export": _cmd_export, "run": _cmd_run, "validate": _cmd_validate, "calibrate": _cmd_calibrate, "list": _cmd_list,
             "rfc2544": _cmd_rfc2544, "profile": _cmd_profile,
             "lab": _cmd_lab}
