"""The Python API: load a scenario, change it, run it, sweep it, get tables
and figures. `routertwin/__init__.py` re-exports these names; use them as
`import routertwin as rt`.

Everything here is thin over what the command line uses: scenarios are
loaded and validated by `routertwin.scenario` (the same pydantic schemas and
the same one-line `FILE:LINE: key 'a.b': message` errors), runs and sweeps go
through `routertwin.sweep` (a local process pool, or a Dask cluster when
given `scheduler=`), provenance comes from `routertwin.results`, the RFC 2544
methods from `routertwin.methods.command`, validation and calibration from
`routertwin.validation`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from routertwin.errors import ScenarioError, UserError
from routertwin.results import CaseResult
from routertwin.scenario import LoadedScenario
from routertwin.sweep import Job

__all__ = ["Scenario", "Results", "load", "scenario", "run", "sweep", "rfc2544", "validate", "calibrate"]

# Units of metric and parameter names, by name or by suffix (first match wins).
_UNITS_BY_NAME = {
    "pps": "packets/s", "pps_analytic": "packets/s", "gbps": "Gbit/s", "gbps_out": "Gbit/s",
    "throughput": "1/s", "service_rate": "1/s", "arrival_rate": "1/s", "cycles_per_packet": "cycles",
    "queue_len": "customers", "in_system": "customers", "frame": "bytes", "size": "bytes",
    "port_rate_bps": "bit/s", "routes": "routes", "cores": "cores", "servers": "servers",
}
_UNITS_BY_SUFFIX = (("_us", "us"), ("_ms", "ms"), ("_s", "s"), ("_pct", "%"), ("_bps", "bit/s"),
                    ("_gbps", "Gbit/s"), ("_fps", "frames/s"), ("_pps", "packets/s"), ("_bytes", "bytes"),
                    ("_util", "fraction"), ("_fraction", "fraction"), ("_load", "fraction of max rate"),
                    ("utilization", "fraction"), ("p_wait", "probability"))


def _unit(column: str) -> str | None:
    name = column.rsplit(".", 1)[-1]
    if name in _UNITS_BY_NAME:
        return _UNITS_BY_NAME[name]
    for suffix, unit in _UNITS_BY_SUFFIX:
        if name.endswith(suffix):
            return unit
    return None


def _project_root(start: Path | None) -> Path | None:
    """The project root above `start` (else above the current folder), or None."""
    from routertwin.project import find_root

    for where in ([start] if start is not None else []) + [None]:
        try:
            return find_root(start=where)
        except UserError:
            continue
    return None


class Scenario:
    """A validated scenario: a file loaded by `load`, or keys given to
    `scenario`, plus any changes made by `with_`. Immutable: `with_` returns
    a new, validated scenario."""

    def __init__(self, job: Job, loaded: LoadedScenario):
        self._job = job
        self._loaded = loaded

    @property
    def name(self) -> str:
        """The scenario's name (its `scenario:` key)."""
        return self._loaded.name

    @property
    def kind(self) -> str:
        """The runner kind (`pipeline`, `router`, `queue_analytic`, ...)."""
        return self._loaded.kind

    @property
    def seed(self) -> int:
        """The seed every random stream of a run derives from."""
        return self._loaded.seed

    @property
    def description(self) -> str:
        """The one-line description."""
        return self._loaded.description

    @property
    def path(self) -> Path | None:
        """The scenario file (absolute), or None for a scenario built in Python."""
        return self._loaded.path

    @property
    def parameters(self) -> dict[str, Any]:
        """The kind's keys as written (after any `with_`), plain data."""
        return dict(self._loaded.parameters)

    @property
    def config(self):
        """The validated pydantic model of the kind's keys (paths resolved)."""
        return self._loaded.config

    @property
    def loaded(self) -> LoadedScenario:
        """The `routertwin.scenario.LoadedScenario` runners receive."""
        return self._loaded

    def to_dict(self) -> dict[str, Any]:
        """Every key of the scenario (common keys and the kind's) as plain data."""
        s = self._loaded
        return {"scenario": s.name, "kind": s.kind, "description": s.description, "seed": s.seed,
                **s.parameters}

    def with_(self, overrides: Mapping[str, Any] | None = None, /, **keys: Any) -> "Scenario":
        """A new scenario with keys replaced, validated like a file.

        Keys are dotted for nested ones: `s.with_({"simulate.warmup": 100})`,
        or given as keywords for top-level ones: `s.with_(seed=3,
        utilization=[0.5, 0.9])`. A mistake raises `ScenarioError` naming the
        file and the key (`scen.yaml: with_() key 'simulate.warmup': ...`).
        """
        items = {**(dict(overrides) if overrides else {}), **keys}
        for key in items:
            if not isinstance(key, str):
                raise ScenarioError(f"{self._shown()}: with_() key {key!r}: keys are strings (dotted: 'a.b')")
        job = dataclasses.replace(self._job, overrides=self._job.overrides + tuple(items.items()))
        return Scenario(job, job.load())

    def _shown(self) -> str:
        return self._job.path or self._job.shown or "<scenario>"

    def __repr__(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return f"<Scenario {self.name!r} kind={self.kind} seed={self.seed}{where}>"


def load(path: str | Path) -> Scenario:
    """Load and validate a scenario file (YAML, docs/scenarios.md).

    Raises `ScenarioError` (one line, `FILE:LINE: key 'a.b': message`)."""
    job = Job(str(Path(path).resolve()))
    return Scenario(job, job.load())


def scenario(keys: Mapping[str, Any], *, base_dir: str | Path | None = None) -> Scenario:
    """A scenario from Python data, without a file: the same keys a YAML file
    has (`scenario`, `kind`, `seed`, the kind's keys). Relative paths in it
    (platform profiles) are resolved against `base_dir` (default: the
    current folder). Raises `ScenarioError` naming the key."""
    if not isinstance(keys, Mapping):
        raise ScenarioError(f"routertwin.scenario: expected a mapping of keys, got {type(keys).__name__}")
    from routertwin.scenario import _python_value

    data = _python_value(dict(keys))
    shown = f"<scenario {data.get('scenario', '?')!r}>"
    job = Job(None, data=data, base_dir=str(Path(base_dir or Path.cwd()).resolve()), shown=shown)
    return Scenario(job, job.load())


@dataclass(frozen=True)
class Run:
    """One scenario run within `Results`: the scenario, its cases and the
    grid point (dotted key -> value) that made it, empty for a plain run."""

    scenario: LoadedScenario
    cases: list[CaseResult]
    point: dict[str, Any]


class Results:
    """The cases of one run or of every run of a sweep, with what produced them."""

    def __init__(self, runs: Sequence[Run], grid_keys: Sequence[str] = ()):
        self.runs = list(runs)
        self.grid_keys = list(grid_keys)

    @property
    def cases(self) -> list[CaseResult]:
        """Every case of every run, in order."""
        return [c for r in self.runs for c in r.cases]

    def __len__(self) -> int:
        return sum(len(r.cases) for r in self.runs)

    def __repr__(self) -> str:
        return f"<Results {len(self.runs)} run(s), {len(self)} case(s)>"

    def _root(self) -> Path | None:
        first = self.runs[0].scenario.path if self.runs else None
        return _project_root(first.parent if first is not None else None)

    def records(self) -> list[dict]:
        """Each run's JSON document (as `routertwin run` writes it: version,
        git commit, input files' sha256, seed, parameters, cases) plus its grid point."""
        from routertwin.results import record

        root = self._root()
        return [{**record(r.scenario, r.cases, root), "grid": r.point} for r in self.runs]

    def to_dataframe(self):
        """A pandas DataFrame: one row per case (per run of a sweep). Columns:
        `scenario`, `seed`, `grid.<key>` (sweeps), `case`, `param.*`,
        `metric.*`, `counter.*`, `bottleneck`. `df.attrs` holds `units`
        (column -> unit), `routertwin_version`, `git_commit` and `runs` (each
        run's scenario, seed, grid point, parameters and input files' sha256)."""
        import pandas as pd

        from routertwin.results import _columns, _flat, _finite, provenance

        cols = _columns(self.cases)
        grid = [f"grid.{k}" for k in self.grid_keys]
        rows = []
        for r in self.runs:
            for c in r.cases:
                rows.append({"scenario": r.scenario.name, "seed": r.scenario.seed,
                             **{f"grid.{k}": v for k, v in r.point.items()}, **_flat(c)})
        df = pd.DataFrame(rows, columns=["scenario", "seed", *grid, *cols])
        root = self._root()
        prov = [provenance(r.scenario, root) for r in self.runs]
        df.attrs = {
            "units": {c: u for c in df.columns if c.startswith(("param.", "metric.", "grid.")) and (u := _unit(c))},
            "routertwin_version": prov[0]["routertwin_version"] if prov else "",
            "git_commit": prov[0]["git_commit"] if prov else "",
            "runs": _finite([{"scenario": r.scenario.name, "kind": r.scenario.kind, "seed": r.scenario.seed,
                              "grid": r.point, "parameters": r.scenario.parameters,
                              "input_files": p["input_files"]} for r, p in zip(self.runs, prov)]),
        }
        return df

    def to_parquet(self, path: str | Path) -> Path:
        """Write the DataFrame to a Parquet file (pyarrow; `df.attrs` kept in
        its metadata). Columns holding lists or mixed types are written as
        their JSON text. Returns the path."""
        df = self.to_dataframe()
        for col in df.columns:
            if df[col].dtype == object:
                kinds = {type(v) for v in df[col] if v is not None}
                if len(kinds) > 1 or kinds & {list, dict, tuple}:
                    df[col] = [None if v is None else json.dumps(v, sort_keys=True) for v in df[col]]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        df.to_parquet(path, engine="pyarrow", index=False)
        return path

    def to_csv(self, path: str | Path | None = None) -> str:
        """The DataFrame as CSV text; also written to `path` when given."""
        text = self.to_dataframe().to_csv(index=False, lineterminator="\n")
        if path is not None:
            from routertwin.results import write_atomic

            write_atomic({Path(path): text})
        return text

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text: `{"runs": [...]}`, each run's document as `routertwin
        run` writes it plus its grid point (sorted keys, "inf" for infinity);
        also written to `path` when given."""
        from routertwin.results import to_json, write_atomic

        text = to_json({"runs": self.records()})
        if path is not None:
            write_atomic({Path(path): text})
        return text

    def plot(self, y: str | None = None, x: str | None = None, *, series: str | None = None,
             where: Mapping[str, Any] | None = None, log_x: bool = False, log_y: bool = False,
             title: str = ""):
        """The report's scaling curve: metric `y` against parameter `x`, one
        line per value of parameter `series` (parameters are a case's or a
        sweep's grid keys), over the cases whose parameters equal `where`.
        `x` and `series` may also name metrics (a queue's `utilization`).
        Defaults: `x` the first parameter that varies, `y` the first metric,
        no series. Returns the matplotlib Figure
        (Agg backend; save it with `fig.savefig(path)`)."""
        cases = [CaseResult(c.case, {**c.params, **r.point}, c.metrics, c.bottleneck, c.counters)
                 for r in self.runs for c in r.cases]
        if where:
            cases = [c for c in cases if all(c.params.get(k) == v for k, v in where.items())]
        if not cases:
            raise UserError("Results.plot: no case to plot" + (f" where {dict(where)}" if where else ""))
        params = list(dict.fromkeys(k for c in cases for k in c.params))
        metrics = list(dict.fromkeys(k for c in cases for k in c.metrics))
        if x is None:
            varying = [k for k in params if len({json.dumps(c.params.get(k), sort_keys=True, default=str)
                                                     for c in cases}) > 1]
            x = varying[0] if varying else (params[0] if params else None)
        y = y or (metrics[0] if metrics else None)
        for name, known, what in ((x, params + metrics, "parameter or metric"), (y, metrics, "metric"),
                                  (series, params + metrics, "parameter or metric")):
            if name is not None and name not in known:
                raise UserError(f"Results.plot: no {what} {name!r} (have: {', '.join(map(str, known))})")
        # x and series may also be metrics (a queue's utilization): read them as the case's inputs
        cases = [CaseResult(c.case, {**{k: c.metrics[k] for k in (x, series) if k in c.metrics and k not in c.params},
                                     **c.params}, c.metrics, c.bottleneck, c.counters) for c in cases]
        from routertwin.validation.plots import scaling_figure

        label = self.runs[0].scenario.name if self.runs else ""
        fig = scaling_figure(cases, x, y, series=series, title=title or f"{label}: {y} vs {x}",
                             log_x=log_x, log_y=log_y)
        if fig is None:
            raise UserError(f"Results.plot: no case has both {x!r} and {y!r}")
        fig.tight_layout()
        return fig


def _raise_outcome_errors(outcomes) -> None:
    for o in outcomes:
        if o.error:
            raise ScenarioError(o.error)


def run(scenario: Scenario, *, progress: bool = False) -> Results:
    """Run every case of `scenario` in this process; `progress=True` shows a
    progress line on stderr. Raises `ScenarioError` for input the model refuses."""
    from routertwin import runners
    from routertwin.progress import Progress, silent

    _check_scenario(scenario, "run")
    with (Progress(f"run {scenario.name}") if progress else silent()) as p:
        try:
            cases = runners.get(scenario.kind).run(scenario.loaded, p)
        except ScenarioError:
            raise
        except UserError as exc:
            raise ScenarioError(str(exc)) from None
    return Results([Run(scenario.loaded, list(cases), {})])


def _check_scenario(s: Any, fn: str) -> None:
    if not isinstance(s, Scenario):
        raise TypeError(f"routertwin.{fn}: expected a Scenario (routertwin.load or routertwin.scenario), "
                        f"got {type(s).__name__}")


def sweep(scenario: Scenario, grid: Mapping[str, Sequence[Any]], *, jobs: int | None = None,
          scheduler: Any = None, progress: bool = False) -> Results:
    """Run `scenario` at every point of `grid` (dotted key -> list of values;
    the cartesian product, first key slowest), in parallel: a local process
    pool of `jobs` processes (default: CPU count) or, given `scheduler` (a
    Dask scheduler address or `distributed.Client`), that cluster. Every point
    is validated before any runs; a mistake raises `ScenarioError` naming the
    key. Rows of the result carry the point as `grid.<key>` columns."""
    from routertwin.progress import Progress, silent
    from routertwin.sweep import run_jobs

    _check_scenario(scenario, "sweep")
    if not isinstance(grid, Mapping) or not grid:
        raise ScenarioError(f"{scenario._shown()}: sweep grid: expected a non-empty mapping of key -> list of values")
    keys = list(grid)
    for k in keys:
        values = grid[k]
        if not isinstance(k, str) or isinstance(values, (str, bytes)) or not isinstance(values, Sequence) \
                or len(values) == 0:
            raise ScenarioError(f"{scenario._shown()}: sweep grid key {k!r}: expected a non-empty list of values")
    points = [dict(zip(keys, combo)) for combo in itertools.product(*(list(grid[k]) for k in keys))]
    scenarios = [scenario.with_(p) for p in points]  # every mistake before any run
    jobs_list = [s._job for s in scenarios]
    with (Progress(f"sweep {scenario.name}") if progress else silent()) as p:
        outcomes = run_jobs(jobs_list, jobs=jobs, scheduler=scheduler, progress=p)
    _raise_outcome_errors(outcomes)
    from routertwin.scenario import _python_value

    return Results([Run(o.scenario, list(o.cases), _python_value(pt)) for o, pt in zip(outcomes, points)], keys)


def rfc2544(scenario: Scenario, method: str = "throughput", *, case: str | Sequence[str] | None = None,
            resolution: float = 0.001, pdr_loss_pct: float = 0.5, step: float = 0.1,
            sizes: tuple[int, int] | None = None, size_step: int = 1, repeats: int | None = None,
            max_frames: int = 100000, duration: float | None = None, trials: bool = False):
    """An RFC 2544 method on every case (or `case`) of a scenario whose kind
    has a tester (pipeline, router), as `routertwin rfc2544` runs it
    (docs/rfc2544.md). `method` is one of frmol, throughput, latency,
    loss-curve, back-to-back, ndr-pdr, size-sweep; the options are the
    command's flags. Returns a pandas DataFrame: one row per case with the
    method's result (e.g. `throughput_load`, `throughput_fps`), or, with
    `trials=True`, one row per trial run (phase, size, offered_load, tx, rx,
    loss_pct, latency)."""
    import pandas as pd

    from routertwin import runners
    from routertwin.methods.command import MethodOptions, check_options, run_method, trial_rows
    from routertwin.methods.tester import case_testers

    _check_scenario(scenario, "rfc2544")
    opts = MethodOptions(method=method, resolution=resolution, pdr_loss_pct=pdr_loss_pct, step=step,
                         sizes=tuple(sizes) if sizes is not None else None, size_step=size_step,
                         repeats=repeats, max_frames=max_frames, duration=duration)
    check_options(opts)
    loaded = scenario.loaded
    cases = case_testers(runners.get(loaded.kind), loaded, duration_s=duration)
    by_id = {tc.case: tc for tc in cases}
    wanted = [case] if isinstance(case, str) else list(case or [])
    for cid in wanted:
        if cid not in by_id:
            raise UserError(f"{scenario._shown()}: case {cid!r}: no such case; cases: {', '.join(by_id)}")
    chosen = [by_id[c] for c in dict.fromkeys(wanted)] if wanted else cases
    for tc in chosen:
        if sizes is not None:
            tc.check_size(sizes[0], "sizes")
            tc.check_size(sizes[1], "sizes")
    rows = []
    for tc in chosen:
        res, log = run_method(tc, method, opts, loaded.seed)
        head = {"scenario": loaded.name, "seed": loaded.seed, "case": tc.case, "method": method,
                "size": tc.size, "size_unit": tc.size_unit, "trial_duration_s": tc.duration_s,
                "device": tc.describe}
        if trials:
            rows += [{**head, **t} for t in trial_rows(log)]
        else:
            rows.append({**head, **res})
    df = pd.DataFrame(rows)
    df.attrs = {"method": method, "options": {k: v for k, v in dataclasses.asdict(opts).items()
                                              if k not in ("out", "seed") and v is not None}}
    return df


def validate(studies: Sequence[str] = (), *, jobs: int | None = None, scheduler: Any = None,
             root: str | Path | None = None, progress: bool = False):
    """Replay the reference measurements mapped in validation/mapping/ (all
    studies, or `studies`), as `routertwin validate` does, writing nothing.
    Returns a DataFrame, one row per mapped reference row: study, id, system,
    condition, reference value and unit, role, twin value, error_pct,
    tolerance, status (pass, FAIL, ERROR), bottleneck, message, derived (what
    the core's derived prices alone give, for the rows routertwin.cost speaks to)."""
    import pandas as pd

    from routertwin.progress import Progress, silent
    from routertwin.project import find_root
    from routertwin.validation.replay import replay

    root_path = find_root(explicit=Path(root)) if root is not None else find_root()
    with (Progress("validate") if progress else silent()) as p:
        rep = replay(root_path, studies=list(studies), jobs=jobs, scheduler=scheduler, progress=p)
    rows = []
    for study, results in rep.report.by_study.items():
        for r in results:
            rows.append({"study": study, "id": r.ref.id, "seed_file": r.ref.seed, "system": r.ref.system,
                         "condition": r.ref.condition, "reference": r.ref.value, "unit": r.ref.unit,
                         "role": r.ref.role, "consistency_check": r.mapped.consistency_check,
                         "twin": r.twin, "error_pct": r.error_pct, "tolerance": r.mapped.tolerance_text(),
                         "status": r.status, "bottleneck": r.bottleneck, "message": r.message,
                         "derived": r.derived})
    df = pd.DataFrame(rows)
    df.attrs = {"summaries": list(rep.report.summaries)}
    return df


def calibrate(check: bool = True, studies: Sequence[str] = (), *, root: str | Path | None = None):
    """Run the registered calibration fits (all studies, or `studies`).
    With `check=True` (the default) nothing is written; with `check=False`
    the fitted files that differ are rewritten, as `routertwin calibrate`.
    Returns a DataFrame, one row per fitted parameter: study, parameter,
    value, rows (the calibrate row ids it came from), note, file, stale (the
    committed file differs from a fresh fit)."""
    import pandas as pd

    from routertwin.project import display_path, find_root
    from routertwin.validation.calibration import fitted_files, write_fitted

    root_path = find_root(explicit=Path(root)) if root is not None else find_root()
    files = fitted_files(root_path, list(studies))
    if not check:
        write_fitted(files)
    rows = [{"study": f.study, "parameter": name, "value": p.value, "rows": list(p.rows), "note": p.note,
             "file": display_path(f.path, root_path), "stale": f.stale and check}
            for f in files for name, p in sorted(f.params.items())]
    return pd.DataFrame(rows, columns=["study", "parameter", "value", "rows", "note", "file", "stale"])


def run_lab(paths: Sequence[str] = ("flat-direct", "flat-eip", "vpc-eip"), *, seconds: float = 10.0,
            interval_s: float = 1.0, wire_rate_bps: float = 1e9, rounds: int = 1, calibrate: str = "flat-direct",
            seed: int = 1, twin: bool = True, twin_seconds: float = 0.5, out: str | Path | None = None,
            root: str | Path | None = None, plots: bool = True):
    """The live lab, as `routertwin lab` (docs/lab.md): seed 004's three L3
    paths built from network namespaces on this machine (addresses from
    198.18.0.0/15, links shaped with tc, torn down afterwards), each
    measured with iperf3 for `seconds` (`rounds` times, interleaved), the
    twin calibrated on `calibrate` and predicting the rest (`twin_seconds`
    of simulated time per path). Needs root:
    raises `UserError` (routertwin.lab.LabError) without CAP_NET_ADMIN or on
    bad arguments. Writes JSON/CSV/PNG to `out` when given.

    Returns a DataFrame, one row per path: role (calibrate/predict),
    measured_avg_mbps, measured_min_mbps, measured_max_mbps (over iperf3's
    intervals), twin_mbps and error_pct (None when the twin is not
    available), seed-004's figure for the path; `df.attrs` holds the whole
    results document (parameters, machine, NAT evidence, the fitted value,
    version, git commit)."""
    import pandas as pd

    from routertwin.lab import LabParameters
    from routertwin.lab import run_lab as _run_lab
    from routertwin.lab.report import document, rows
    from routertwin.project import find_root

    if root is not None:
        root_path = find_root(explicit=Path(root))
    else:
        try:
            root_path = find_root()
        except UserError:
            root_path = None
    params = LabParameters(paths=tuple(paths), seconds=seconds, interval_s=interval_s, wire_rate_bps=wire_rate_bps,
                           rounds=rounds, calibrate=calibrate, seed=seed, twin=twin, twin_seconds=twin_seconds)
    report = _run_lab(params, root=root_path, out=Path(out) if out is not None else None, plots=plots)
    df = pd.DataFrame(rows(report))
    df.attrs = document(report, root_path)
    return df
