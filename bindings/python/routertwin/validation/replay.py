"""`routertwin validate`: replay every mapped reference row and report.

Each scenario referenced by the selected mappings (rows and plots) runs once,
in parallel (one process per scenario). Each mapped row then reads its case's
metric and is compared with the reference value within its tolerance. The
report lists rows by study, then per-study and overall summaries, then every
reference row that no mapping replays, grouped by seed: nothing is dropped
silently. Exit status 1 when a replayed row fails or cannot be replayed.
"""

from __future__ import annotations

import difflib
import math
import shutil
import tempfile
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from routertwin.errors import UserError
from routertwin.progress import Progress
from routertwin.project import display_path
from routertwin.results import console, fmt, write_atomic, write_results
from routertwin.parallel import Job, Outcome, run_jobs
from routertwin.validation.intervals import MODES, Plan, ValueInterval, fmt_range, value_interval
from routertwin.validation.intervals import plan as plan_intervals
from routertwin.validation.mapping import Mapping, MappedRow, load_mappings
from routertwin.validation.reference import ReferenceRow, load_reference, reference_path


@dataclass
class RowResult:
    ref: ReferenceRow
    mapped: MappedRow
    twin: float | None = None
    error_pct: float | None = None  # (twin - ref) / |ref| * 100; None for zero references
    status: str = "ERROR"  # pass, FAIL, ERROR
    bottleneck: str = ""
    message: str = ""  # why ERROR
    derived: str = ""  # what the core's derived prices alone give for this row (routertwin.cost), if anything
    # The twin value's intervals (routertwin.validation.intervals), with
    # --intervals; shown beside the value, never used to judge it.
    interval: ValueInterval | None = None

    @property
    def abs_error_pct(self) -> float | None:
        return None if self.error_pct is None else abs(self.error_pct)


def compare(ref: ReferenceRow, mapped: MappedRow, outcome: Outcome) -> RowResult:
    """One mapped row against its scenario's outcome."""
    res = RowResult(ref, mapped)
    if outcome.error:
        res.message = outcome.error
        return res
    cases = {c.case: c for c in outcome.cases}
    case = cases.get(mapped.case)
    if case is None:
        close = difflib.get_close_matches(mapped.case, list(cases), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else f" (cases: {', '.join(list(cases)[:8])})"
        res.message = f"{mapped.where}: key 'rows.{ref.id}.case': scenario has no case '{mapped.case}'{hint}"
        return res
    if mapped.metric not in case.metrics:
        res.message = (f"{mapped.metric_where}: key 'rows.{ref.id}.metric': case '{mapped.case}' reports no "
                       f"metric '{mapped.metric}' (it has: {', '.join(sorted(case.metrics))})")
        return res
    twin = case.metrics[mapped.metric]
    res.bottleneck = case.bottleneck
    if twin is None or not math.isfinite(twin):
        res.message = f"{mapped.where}: the twin's {mapped.metric} is not finite"
        return res
    res.twin = float(twin)
    if ref.value != 0:
        res.error_pct = (res.twin - ref.value) / abs(ref.value) * 100.0
    res.status = "pass" if passes(ref, mapped, res.twin) else "FAIL"
    return res


def passes(ref: ReferenceRow, mapped: MappedRow, twin: float) -> bool:
    """The pass criterion: |twin - ref| / |ref| * 100 <= tolerance_pct, or
    |twin - ref| <= tolerance_abs. Intervals never enter it."""
    if mapped.tolerance_pct is not None:
        return abs(twin - ref.value) / abs(ref.value) * 100.0 <= mapped.tolerance_pct
    return abs(twin - ref.value) <= mapped.tolerance_abs


def summary_line(label: str, results: list[RowResult], total: int) -> str:
    replayed = [r for r in results if r.status != "ERROR"]
    passed = sum(r.status == "pass" for r in results)
    errors = len(results) - len(replayed)
    line = f"{label}: {len(replayed)}/{total} rows replayed, {passed} pass"
    if errors:
        line += f", {errors} could not be replayed"
    pred = [r for r in replayed if r.ref.role == "predict" and r.error_pct is not None
            and not r.mapped.consistency_check]
    checks = [r for r in replayed if r.mapped.consistency_check]
    if checks:
        line += f" ({len(checks)} consistency check{'s' if len(checks) > 1 else ''}, not predictions)"
    if pred:
        worst = max(pred, key=lambda r: (r.abs_error_pct, r.ref.id))
        med = statistics.median(r.abs_error_pct for r in pred)
        line += f"; predict median {med:.1f}%, worst {worst.abs_error_pct:.1f}% ({worst.ref.id})"
    else:
        line += "; no predict rows replayed"
    return line


@dataclass
class Report:
    by_study: dict[str, list[RowResult]]
    unreplayed: dict[str, list[ReferenceRow]]  # seed -> rows in no mapping
    summaries: list[str]  # per study (against the reference rows of the seeds it replays), then overall

    @property
    def failed(self) -> bool:
        return any(r.status != "pass" for rows in self.by_study.values() for r in rows)


def build_report(reference: dict[str, ReferenceRow], mappings: dict[str, Mapping], selected: list[str],
                 outcomes: dict[Path, Outcome]) -> Report:
    mapped_ids = {rid for m in mappings.values() for rid in m.rows}
    by_study = {s: [compare(reference[rid], row, outcomes[row.scenario]) for rid, row in mappings[s].rows.items()]
                for s in selected}
    totals = {}  # study -> reference rows of the seeds it replays
    for s in selected:
        seeds = {reference[rid].seed for rid in mappings[s].rows}
        totals[s] = sum(r.seed in seeds for r in reference.values())
    in_scope = list(reference.values())
    if len(selected) < len(mappings):  # --study: only the seeds those studies replay
        seeds = {reference[rid].seed for s in selected for rid in mappings[s].rows}
        in_scope = [r for r in in_scope if r.seed in seeds]
    unreplayed: dict[str, list[ReferenceRow]] = defaultdict(list)
    for r in in_scope:
        if r.id not in mapped_ids:
            unreplayed[r.seed].append(r)
    summaries = [summary_line(s, by_study[s], totals[s]) for s in selected]
    summaries.append(summary_line("overall", [r for s in selected for r in by_study[s]], len(in_scope)))
    return Report(by_study, dict(sorted(unreplayed.items())), summaries)


def _cells(r: RowResult) -> list[str]:
    return [
        r.ref.id, r.ref.system, r.ref.condition, f"{r.ref.value_text} {r.ref.unit}".strip(),
        r.ref.role + (" (consistency)" if r.mapped.consistency_check else ""),
        "—" if r.twin is None else fmt(r.twin),
        "—" if r.error_pct is None else f"{r.error_pct:+.1f}%",
        r.mapped.tolerance_text(), r.status,
    ]


HEADER = ["id", "system", "condition", "reference", "role", "twin", "error", "tolerance", "pass"]


def interval_header(report_rows: list[RowResult]) -> list[str]:
    """The interval columns (none without --intervals)."""
    reps = {len(r.interval.seeds) for r in report_rows if r.interval is not None}
    if not reps:
        return []
    return [f"seeds (R={max(reps)})", "assumptions", "moved most by"]


def interval_cells(r: RowResult) -> list[str]:
    iv = r.interval
    if iv is None:
        return ["—", "—", ""]
    driver = iv.driver
    moved = "" if driver is None else f"{driver.assumption.name} ({driver.swing_pct(iv.nominal):.2g}%)"
    reps = fmt_range(*iv.rep_range) if iv.rep_values else "—"
    return [reps, fmt_range(*iv.assumption_range), moved]


DERIVED_HEADER = "derived-only (core code, CPI 0.5/1/1.5)"


def _table(title: str, rows: list[RowResult], bottleneck: bool):
    """A rich Table of compared rows (HEADER, plus the twin's bottleneck when
    `bottleneck`, plus the derived-only column when a row has one); failures
    red, rows that could not be replayed yellow."""
    from rich.table import Table

    derived = any(r.derived for r in rows)
    ivh = interval_header(rows)
    t = Table(title=title, title_justify="left")
    for h in HEADER + ivh + (["bottleneck"] if bottleneck else []) + ([DERIVED_HEADER] if derived else []):
        t.add_column(h, justify="right" if h in ("reference", "twin", "error", "tolerance", *ivh[:2]) else "left")
    for r in rows:
        style = {"pass": None, "FAIL": "red", "ERROR": "yellow"}[r.status]
        t.add_row(*_cells(r), *(interval_cells(r) if ivh else []), *([r.bottleneck] if bottleneck else []),
                  *([r.derived] if derived else []), style=style)
    return t


def add_derived(report: Report, root: Path) -> None:
    """Fills RowResult.derived for the rows the cost derivation speaks to
    (seed 002's 1-core rows: routertwin.cost.seed002_report). Informative
    only: no pass/fail, no effect on the twin."""
    from routertwin import cost

    try:
        extra = cost.derived_cells(root)
    except (OSError, KeyError) as exc:  # no instruction table or profiles: nothing to add
        extra = {}
        del exc
    for rows in report.by_study.values():
        for r in rows:
            r.derived = extra.get(r.ref.id, "")


def print_report(report: Report, con) -> None:
    for study, rows in report.by_study.items():
        con.print(_table(f"study {study}", rows, any(r.bottleneck for r in rows)))
        for r in rows:
            if r.message:
                con.print(f"  {r.ref.id}: {r.message}", markup=False, highlight=False)
    for line in report.summaries:
        con.print(line, markup=False, highlight=False)
    n = sum(len(v) for v in report.unreplayed.values())
    if n:
        con.print(f"not yet replayed: {n} rows", markup=False)
        for seed, rows in report.unreplayed.items():
            con.print(f"  {seed} ({len(rows)}): {', '.join(r.id for r in rows)}",
                          markup=False, highlight=False)


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _plot_study(name: str, studies) -> str | None:
    """The study a plot file belongs to: files are named <study>-<name>.png
    (the longest matching study, so 'ab' never takes 'abc-x.png')."""
    owners = [s for s in studies if name.startswith(f"{s}-")]
    return max(owners, key=len) if owners else None


def report_markdown(report: Report, params: dict[str, str], plots: list[str],
                    outcomes: dict | None = None) -> str:
    out = ["# RouterTwin validation report", "",
           "Generated by `routertwin validate` (docs/validation.md). `calibrate` rows may have been "
           "fitted; `predict` rows were not.", "", "## Summary", ""]
    out += [f"- {_md_escape(line)}" for line in report.summaries]
    with_intervals = any(r.interval is not None for rows in report.by_study.values() for r in rows)
    if with_intervals:
        from routertwin.validation.sensitivity import markdown_overview

        out += ["", "Intervals (docs/validation.md \"Intervals\"): `seeds` is the min–max of the twin value over "
                    "R replications with different seeds (±0: the scenario is deterministic at that value); "
                    "`assumptions` is the min–max over the nominal run and every assumed number of the "
                    "scenario's profiles set, one at a time, to each end of its declared range (fits redone "
                    "where a fit read the number); `moved most by` names the assumption behind the widest "
                    "part. The pass column is judged on the nominal value alone: an interval never turns a "
                    "miss into a pass.", ""]
        out += markdown_overview(report.by_study)
    for study, rows in report.by_study.items():
        bn = any(r.bottleneck for r in rows)
        dv = any(r.derived for r in rows)
        ivh = interval_header(rows)
        head = HEADER + ivh + (["bottleneck"] if bn else []) + ([DERIVED_HEADER] if dv else [])
        out += ["", f"## Study {study}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows:
            out.append("| " + " | ".join(_md_escape(c) for c in _cells(r) + (interval_cells(r) if ivh else [])
                                         + ([r.bottleneck] if bn else []) + ([r.derived] if dv else [])) + " |")
        errors = [r for r in rows if r.message]
        if errors:
            out += [""] + [f"- `{r.ref.id}`: {_md_escape(r.message)}" for r in errors]
        reasons = [f"- `{r.ref.id}` ({r.mapped.tolerance_text()}): {_md_escape(r.mapped.reason)}" for r in rows]
        out += ["", "Tolerances:", ""] + reasons
        if with_intervals:
            from routertwin.validation.sensitivity import markdown_study

            out += markdown_study(rows)
            failed = [f"`{r.ref.id}`: {f}" for r in rows if r.interval is not None for f in r.interval.failed]
            if failed:
                out += ["", "Interval runs that gave no value (left out of the intervals):", ""]
                out += [f"- {_md_escape(f)}" for f in failed]
        if outcomes:
            from routertwin.distributions import markdown_study as distribution_lines

            out += distribution_lines(rows, outcomes)
        mine = [p for p in plots if _plot_study(p, report.by_study) == study]
        if mine:
            out += ["", "Plots:", ""] + [f"![{p}](plots/{p})" for p in mine]
    n = sum(len(v) for v in report.unreplayed.values())
    out += ["", f"## Not yet replayed ({n} rows)", ""]
    for seed, rows in report.unreplayed.items():
        out.append(f"- `{seed}` ({len(rows)} rows): " + ", ".join(f"`{r.id}`" for r in rows))
    others = [p for p in plots if _plot_study(p, report.by_study) is None]
    if others:
        out += ["", "## Plots", ""] + [f"![{p}](plots/{p})" for p in others]
    out += ["", "## Run parameters", ""] + [f"- {k}: {_md_escape(v)}" for k, v in params.items()]
    return "\n".join(out) + "\n"


@dataclass
class Replay:
    """What a validation replay gave, before any file is written."""

    report: Report
    reference: dict[str, ReferenceRow]
    mappings: dict[str, Mapping]
    selected: list[str]  # the studies replayed
    outcomes: dict[Path, Outcome]  # scenario file -> its run
    intervals: Plan | None = None  # the interval runs, with intervals=


def replay(root: Path, *, studies: list[str] = (), jobs: int | None = None, scheduler=None,
           progress: Progress | None = None, intervals: str | None = None, workdir: Path | None = None) -> Replay:
    """Run every scenario the selected studies' mappings name and compare
    each mapped row (used by `routertwin validate` and `routertwin.validate`).

    `intervals` ("quick" or "full", routertwin.validation.intervals.MODES)
    also runs the replications and assumption variants of every scenario
    that replays a row, in the same pool, and attaches each row's intervals;
    the variants' shadow projects live in a temporary folder under `workdir`
    (default: the system's), removed afterwards."""
    reference = load_reference(reference_path(root))
    mappings = load_mappings(root, reference)
    for s in studies:
        if s not in mappings:
            close = difflib.get_close_matches(s, list(mappings), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f" (studies: {', '.join(mappings) or 'none'})"
            raise UserError(f"--study {s}: no validation/mapping/{s}.yaml{hint}")
    if intervals is not None and intervals not in MODES:
        raise UserError(f"--intervals {intervals}: expected one of {', '.join(MODES)}")
    selected = list(studies) or sorted(mappings)
    row_files = sorted({row.scenario for s in selected for row in mappings[s].rows.values()})
    scenario_files = sorted(set(row_files) | {p.scenario for s in selected for p in mappings[s].plots}
                            | {row.distribution_scenario for s in selected for row in mappings[s].rows.values()
                               if row.distribution_scenario is not None})
    jobs_list = [Job(str(p)) for p in scenario_files]
    plan = None
    tmp = None
    try:
        if intervals is not None:
            if workdir is not None:
                Path(workdir).mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".routertwin-variants-", dir=workdir))
            plan = plan_intervals(root, row_files, intervals, tmp, progress, jobs=jobs, scheduler=scheduler)
            jobs_list = [plan.nominal_job(j) for j in jobs_list] + plan.jobs
        results = run_jobs(jobs_list, jobs=jobs, scheduler=scheduler, progress=progress)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    outcomes = dict(zip(scenario_files, results[:len(scenario_files)]))
    report = build_report(reference, mappings, selected, outcomes)
    if plan is not None:
        plan.fill(results[len(scenario_files):], outcomes)
        attach_intervals(report, plan)
    add_derived(report, root)
    return Replay(report, reference, mappings, selected, outcomes, plan)


def attach_intervals(report: Report, plan: Plan) -> None:
    """Each replayed row's intervals, from its scenario's interval runs."""
    for rows in report.by_study.values():
        for r in rows:
            runs = plan.runs.get(r.mapped.scenario)
            if r.twin is not None and runs is not None:
                r.interval = value_interval(runs, r.mapped.case, r.mapped.metric, r.twin)


def validate(root: Path, *, studies: list[str], jobs: int | None, scheduler: str | None, out: Path,
             plots: bool = True, intervals: str | None = None) -> int:
    from routertwin import __version__

    out = Path(out)
    with Progress("validate") as progress:
        rep = replay(root, studies=studies, jobs=jobs, scheduler=scheduler, progress=progress,
                     intervals=intervals, workdir=out)
    report, mappings, selected, outcomes = rep.report, rep.mappings, rep.selected, rep.outcomes

    out_console = console()
    print_report(report, out_console)
    if rep.intervals is not None:
        from routertwin.validation.sensitivity import summary_lines

        for line in summary_lines(report.by_study):
            out_console.print(line, markup=False, highlight=False)

    for o in outcomes.values():
        if o.error is None:
            write_results(out / "results", o.scenario, o.cases, root)
    plot_files: list[str] = []
    if plots:
        from routertwin.validation.plots import study_plots

        plot_files = study_plots(report, [p for s in selected for p in mappings[s].plots], outcomes, out / "plots")
    params = {
        "routertwin version": __version__,
        "reference": display_path(reference_path(root), root),
        "studies": ", ".join(selected) or "none",
        "mappings": ", ".join(display_path(mappings[s].path, root) for s in selected) or "none",
        "scenarios run": ", ".join(
            f"{display_path(p, root)} (seed {o.scenario.seed})" if o.error is None else f"{display_path(p, root)} (error)"
            for p, o in outcomes.items()) or "none",
        "executor": f"dask scheduler {scheduler}" if scheduler else f"local process pool, jobs={jobs or 'CPU count'}",
        "intervals": "off (routertwin validate --intervals quick|full)" if rep.intervals is None else (
            f"{intervals}: {MODES[intervals]} seeds per scenario, {len(rep.intervals.variants)} assumption "
            f"variants ({len(rep.intervals.jobs)} interval runs); seeds and variants in intervals.json"),
    }
    files = {out / "REPORT.md": report_markdown(report, params, plot_files, outcomes)}
    if rep.intervals is not None:
        from routertwin.results import to_json
        from routertwin.validation.intervals import record

        files[out / "intervals.json"] = to_json(record(rep.intervals, root))
    write_atomic(files)
    out_console.print(f"wrote {display_path(out / 'REPORT.md', root)}", markup=False, highlight=False)
    return 1 if report.failed else 0


def mapped_rows(root: Path) -> list[tuple[ReferenceRow, MappedRow]]:
    """Every reference row some mapping replays, with its mapping."""
    reference = load_reference(reference_path(root))
    return [(reference[rid], mapped) for m in load_mappings(root, reference).values()
            for rid, mapped in m.rows.items()]


def print_scenario_comparison(mapped: list[tuple[ReferenceRow, MappedRow]], outcome: Outcome, con,
                              runs=None) -> None:
    """After `routertwin run`: the rows of `mapped` (mapped_rows) this
    scenario replays, compared with this run's values (with their intervals
    when `runs`, the scenario's interval runs, are given). Prints nothing
    when no mapping names the scenario."""
    scenario = Path(outcome.scenario.path).resolve()
    rows = [compare(ref, m, outcome) for ref, m in mapped if m.scenario == scenario]
    if runs is not None:
        for r in rows:
            if r.twin is not None:
                r.interval = value_interval(runs, r.mapped.case, r.mapped.metric, r.twin)
    if rows:
        con.print(_table(f"{outcome.scenario.name}: reference vs twin", rows, bottleneck=True))
