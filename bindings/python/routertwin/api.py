"""The Python API: load a scenario, change it, run it, sweep it, get tables
and figures. `routertwin/__init__.py` re-exports these names; use them as
`import routertwin as rt`.

Everything here is thin over what the command line uses: scenarios are
loaded and validated by `routertwin.scenario_loader` (the same pydantic schemas and
the same one-line `FILE:LINE: key 'a.b': message` errors), runs and sweeps go
through `routertwin.parallel` (a local process pool, or a Dask cluster when
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
from routertwin.scenario_loader import LoadedScenario
from routertwin.parallel import Job

__all__ = ["Scenario", "Results", "Failure", "load", "scenario", "run", "sweep", "rfc2544", "validate", "calibrate",
           "run_lab", "import_file"]

# Units by suffix, a convention every kind follows; what a kind's own names
# mean (a utilization in % or as a fraction, `tps`) its runner says in UNITS.
_UNITS_BY_SUFFIX = (("_us", "us"), ("_ms", "ms"), ("_s", "s"), ("_pct", "%"), ("_bps", "bit/s"),
                    ("_gbps", "Gbit/s"), ("_mbps", "Mbit/s"), ("_fps", "frames/s"), ("_pps", "packets/s"),
                    ("_bytes", "bytes"),
                    ("_fraction", "fraction"), ("_load", "fraction of max rate"))


def _unit(column: str, kinds: Sequence[str] = ()) -> str | None:
    """The unit of a DataFrame column: from the UNITS of the runners of
    `kinds` (routertwin.runners: name or regular expression -> unit), else
    from its suffix."""
    import re

    from routertwin import runners

    name = column.rsplit(".", 1)[-1]
    for kind in kinds:
        units = getattr(runners.get(kind), "UNITS", {})
        if name in units:
            return units[name]
        for pattern, unit in units.items():
            if re.fullmatch(pattern, name):
                return unit
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
        """The `routertwin.scenario_loader.LoadedScenario` runners receive."""
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
        raise ScenarioError(f"routertwin.scenario_loader: expected a mapping of keys, got {type(keys).__name__}")
    from routertwin.scenario_loader import _python_value

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


@dataclass(frozen=True)
class Failure:
    """A grid point of a sweep that did not run: its point (dotted key ->
    value) and the one-line message saying why (the key named, as for a file)."""

    point: dict[str, Any]
    message: str


class Results:
    """The cases of one run or of every run of a sweep, with what produced
    them; `failures` lists the grid points of a sweep that could not run."""

    def __init__(self, runs: Sequence[Run], grid_keys: Sequence[str] = (), failures: Sequence[Failure] = ()):
        self.runs = list(runs)
        self.grid_keys = list(grid_keys)
        self.failures = list(failures)

    @property
    def cases(self) -> list[CaseResult]:
        """Every case of every run, in order."""
        return [c for r in self.runs for c in r.cases]

    def __len__(self) -> int:
        return sum(len(r.cases) for r in self.runs)

    def __repr__(self) -> str:
        failed = f", {len(self.failures)} failed point(s)" if self.failures else ""
        return f"<Results {len(self.runs)} run(s), {len(self)} case(s){failed}>"

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
        (column -> unit), `routertwin_version`, `git_commit`, `runs` (each
        run's scenario, seed, grid point, parameters and input files' sha256)
        and `failures` (each failed grid point and its message)."""
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
        kinds = list(dict.fromkeys(r.scenario.kind for r in self.runs))
        df.attrs = {
            "units": {c: u for c in df.columns
                      if c.startswith(("param.", "metric.", "grid.")) and (u := _unit(c, kinds))},
            "routertwin_version": prov[0]["routertwin_version"] if prov else "",
            "git_commit": prov[0]["git_commit"] if prov else "",
            "runs": _finite([{"scenario": r.scenario.name, "kind": r.scenario.kind, "seed": r.scenario.seed,
                              "grid": r.point, "parameters": r.scenario.parameters,
                              "input_files": p["input_files"]} for r, p in zip(self.runs, prov)]),
            "failures": _finite([{"grid": f.point, "message": f.message} for f in self.failures]),
        }
        return df

    def to_parquet(self, path: str | Path) -> Path:
        """Write the DataFrame to a Parquet file (pyarrow; `df.attrs` kept in
        its metadata). Columns holding lists or mixed types are written as
        their JSON text. Written atomically (a failed write leaves no file).
        Returns the path."""
        from routertwin.results import write_atomic

        path = Path(path)
        write_atomic({path: self._parquet_bytes()})
        return path

    def _parquet_bytes(self, **attrs: Any) -> bytes:
        import io

        df = self.to_dataframe()
        df.attrs.update(attrs)
        for col in df.columns:
            if df[col].dtype == object:
                kinds = {type(v) for v in df[col] if v is not None}
                if len(kinds) > 1 or kinds & {list, dict, tuple}:
                    df[col] = [None if v is None else json.dumps(v, sort_keys=True) for v in df[col]]
        buf = io.BytesIO()
        df.to_parquet(buf, engine="pyarrow", index=False)
        return buf.getvalue()

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
        no series. Returns the matplotlib Figure (Agg backend, or the one
        MPLBACKEND names, e.g. a notebook's inline backend; save it with
        `fig.savefig(path)`)."""
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
        raise TypeError(f"routertwin.{fn}: expected a Scenario (routertwin.load or routertwin.scenario_loader), "
                        f"got {type(s).__name__}")


def sweep(scenario: Scenario, grid: Mapping[str, Sequence[Any]], *, jobs: int | None = None,
          scheduler: Any = None, out: str | Path | None = None, progress: bool = False) -> Results:
    """Run `scenario` at every point of `grid` (dotted key -> list of values;
    the cartesian product, first key slowest), in parallel: a local process
    pool of `jobs` processes (default: CPU count) or, given `scheduler` (a
    Dask scheduler address such as "tcp://10.0.0.1:8786", or a
    `distributed.Client`), that cluster; a worker lost mid-sweep costs only
    time, its points run again elsewhere. Rows of the result carry the point
    as `grid.<key>` columns.

    Every point is validated before any runs. A grid key or value that no
    point accepts raises `ScenarioError` naming the key; a point that fails
    (a value impossible at that point, or a run the model refuses) does not
    stop the others: it is listed in `Results.failures` with its message and
    a line on stderr.

    `out` (a folder) streams results to disk as points finish: one Parquet
    file per point in `out/points/`, written atomically, named by a hash of
    the point's scenario, seed, input files and routertwin version. Run the
    same sweep with the same `out` again after an interrupt and the points
    already there are read back, not rerun. When every point is done,
    `out/results.parquet` holds the whole table. `progress=True` shows
    progress on stderr."""
    import sys

    from routertwin.parallel import completed, run_job
    from routertwin.progress import Progress, silent
    from routertwin.scenario_loader import _python_value

    _check_scenario(scenario, "sweep")
    keys, points = _grid_points(scenario, grid)
    runs: list[Run | None] = [None] * len(points)
    failures: dict[int, Failure] = {}
    chosen: dict[int, Scenario] = {}
    for i, pt in enumerate(points):  # every mistake before any run
        try:
            chosen[i] = scenario.with_(pt)
        except ScenarioError as exc:
            failures[i] = Failure(_python_value(pt), str(exc))
    if not chosen:  # nothing the grid asks for can run: a mistake in the sweep itself
        raise ScenarioError(failures[0].message)
    store = _PointStore(Path(out), keys) if out is not None else None
    todo = []
    for i, s in chosen.items():
        done = store.read(s) if store is not None else None
        if done is not None:
            runs[i] = Run(s.loaded, done, _python_value(points[i]))
        else:
            todo.append(i)
    with (Progress(f"sweep {scenario.name}") if progress else silent()) as p:
        p.set_total(len(points))
        p.advance(len(points) - len(todo), status="read back" if store and len(todo) < len(chosen) else "")
        for k, outcome in completed(run_job, [chosen[i]._job for i in todo], jobs=jobs, scheduler=scheduler):
            i = todo[k]
            point = _python_value(points[i])
            if outcome.error:
                failures[i] = Failure(point, outcome.error)
            else:
                runs[i] = Run(outcome.scenario, list(outcome.cases), point)
                if store is not None:
                    store.write(chosen[i], runs[i])
            p.advance(status=f"{len(failures)} failed" if failures else "")
    failed = [failures[i] for i in sorted(failures)]
    for f in failed:
        print(f"sweep {scenario.name}: point {f.point} failed: {f.message}", file=sys.stderr)
    results = Results([r for r in runs if r is not None], keys, failed)
    if store is not None and results.runs:
        store.finish(results)
    return results


def _grid_points(scenario: Scenario, grid: Any) -> tuple[list[str], list[dict[str, Any]]]:
    if not isinstance(grid, Mapping) or not grid:
        raise ScenarioError(f"{scenario._shown()}: sweep grid: expected a non-empty mapping of key -> list of values")
    keys = list(grid)
    for k in keys:
        values = grid[k]
        if not isinstance(k, str) or isinstance(values, (str, bytes)) or not isinstance(values, Sequence) \
                or len(values) == 0:
            raise ScenarioError(f"{scenario._shown()}: sweep grid key {k!r}: expected a non-empty list of values")
    return keys, [dict(zip(keys, combo)) for combo in itertools.product(*(list(grid[k]) for k in keys))]


class _PointStore:
    """The folder a sweep streams to: `points/<key>.parquet`, one per
    finished point, each holding its rows and (in its metadata) its cases
    as exact JSON, so a resumed sweep rebuilds the same Results; then
    `results.parquet`, the whole sweep."""

    def __init__(self, folder: Path, grid_keys: Sequence[str]):
        self.folder = folder
        self.points = folder / "points"
        self.grid_keys = list(grid_keys)

    def key(self, s: Scenario) -> str:
        """What a point's results depend on: every key of its scenario, its
        input files' contents and the routertwin version."""
        import hashlib

        from routertwin.results import provenance

        inputs = provenance(s.loaded)["input_files"]
        inputs.pop("<python>", None)  # the scenario's keys are below, whatever their origin
        files = sorted(inputs.values())  # contents, not paths: a moved project is the same input
        text = json.dumps({"scenario": s.to_dict(), "inputs": files, "version": _version()},
                          sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def read(self, s: Scenario) -> list[CaseResult] | None:
        """The cases of a point already done, or None."""
        path = self.points / f"{self.key(s)}.parquet"
        if not path.exists():
            return None
        import pyarrow.parquet as pq

        meta = pq.read_schema(path).metadata or {}
        attrs = json.loads(meta.get(b"PANDAS_ATTRS", b"{}"))
        if "routertwin_cases" not in attrs:
            return None  # not one of ours (or an older layout): run it again
        return [CaseResult(**c) for c in json.loads(attrs["routertwin_cases"])]

    def write(self, s: Scenario, run_: Run) -> None:
        from routertwin.results import write_atomic

        cases = json.dumps([dataclasses.asdict(c) for c in run_.cases], default=_plain_number)
        data = Results([run_], self.grid_keys)._parquet_bytes(routertwin_cases=cases)
        write_atomic({self.points / f"{self.key(s)}.parquet": data})

    def finish(self, results: Results) -> None:
        results.to_parquet(self.folder / "results.parquet")


def _plain_number(x: Any) -> Any:
    if hasattr(x, "item"):  # numpy scalars
        return x.item()
    raise TypeError(f"cannot store {type(x).__name__} in a sweep's point file")


def _version() -> str:
    from routertwin import __version__

    return __version__


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
             root: str | Path | None = None, progress: bool = False, intervals: str | None = None):
    """Replay the reference measurements mapped in validation/mapping/ (all
    studies, or `studies`), as `routertwin validate` does, writing nothing.
    Returns a DataFrame, one row per mapped reference row: study, id, system,
    condition, reference value and unit, role, twin value, error_pct,
    tolerance, status (pass, FAIL, ERROR), bottleneck, message, derived (what
    the core's derived prices alone give, for the rows routertwin.cost speaks to).
    `intervals` ("quick" or "full", as `routertwin validate --intervals`)
    adds seed_min, seed_max (over the replications), assumption_min,
    assumption_max (over the assumption ranges, one at a time, refitted) and
    moved_most_by; the status column is unchanged by them."""
    import pandas as pd

    from routertwin.progress import Progress, silent
    from routertwin.project import find_root
    from routertwin.validation.replay import replay

    root_path = find_root(explicit=Path(root)) if root is not None else find_root()
    with (Progress("validate") if progress else silent()) as p:
        rep = replay(root_path, studies=list(studies), jobs=jobs, scheduler=scheduler, progress=p,
                     intervals=intervals)
    rows = []
    for study, results in rep.report.by_study.items():
        for r in results:
            rows.append({"study": study, "id": r.ref.id, "seed_file": r.ref.seed, "system": r.ref.system,
                         "condition": r.ref.condition, "reference": r.ref.value, "unit": r.ref.unit,
                         "role": r.ref.role, "consistency_check": r.mapped.consistency_check,
                         "twin": r.twin, "error_pct": r.error_pct, "tolerance": r.mapped.tolerance_text(),
                         "status": r.status, "bottleneck": r.bottleneck, "message": r.message,
                         "derived": r.derived, **(_interval_columns(r.interval) if intervals else {})})
    df = pd.DataFrame(rows)
    df.attrs = {"summaries": list(rep.report.summaries)}
    return df


def _interval_columns(interval) -> dict:
    if interval is None:
        return {"seed_min": None, "seed_max": None, "assumption_min": None, "assumption_max": None,
                "moved_most_by": None}
    lo, hi = interval.rep_range if interval.rep_values else (None, None)
    alo, ahi = interval.assumption_range
    d = interval.driver
    return {"seed_min": lo, "seed_max": hi, "assumption_min": alo, "assumption_max": ahi,
            "moved_most_by": None if d is None else d.assumption.name}


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


def run_lab_haproxy(configs: Sequence[str | Path], *, workload: str = "", seed: int = 1, twin: bool = True,
                    out: str | Path | None = None, plots: bool = True):
    """`routertwin lab haproxy CONFIG...` (docs/lab.md): each haproxy.cfg run
    by Debian's haproxy in a network namespace the lab creates (its bind and
    server addresses moved into 198.18.0.0/15, HTTP backends, a client
    workload; torn down afterwards), imported into the twin and replayed
    there, compared under the criterion its scheduler states before
    measuring. `workload` is `--workload`'s KEY=VALUE list. Needs root:
    raises `UserError` without it, and on a bad CONFIG (`FILE:LINE`) or
    workload key. Writes JSON/CSV/PNG to `out` when given.

    Returns a DataFrame, one row per CONFIG and server: kind, scheduler,
    measured (requests HAProxy sent there), twin, their shares, ok and the
    case's verdict; `df.attrs` holds the whole results document (every
    request, the criteria, the twin's runs, haproxy and kernel versions, seed)."""
    import pandas as pd

    from routertwin.lab.haproxy import LabHaproxyParameters
    from routertwin.lab.haproxy import run_lab_haproxy as _run
    from routertwin.lab.haproxy_report import document, rows

    params = LabHaproxyParameters(configs=tuple(Path(c) for c in configs), workload=workload, seed=seed, twin=twin)
    report = _run(params, out=Path(out) if out is not None else None, plots=plots)
    df = pd.DataFrame(rows(report))
    df.attrs = document(report)
    return df


def import_file(kind: str, path: str | Path, out: str | Path | None = None, *, strict: bool = False,
                write: bool = True, **options):
    """`routertwin import KIND FILE` (docs/import.md): read what a user
    runs -- a routing table (`linux`: `ip -j route show table all`, `frr`:
    `show ip route json`, `bird`: `birdc show route all`, `mrt`: a
    TABLE_DUMP_V2 RIB dump) -- and write a scenario they can read and edit
    (`out`, default FILE's name with .yaml in the current folder) with its
    data files (a router's FIB file). `options` are the kind's command-line
    options by their Python names (`ports=Path("map.yaml")`,
    `port=["dev eth0=0"]`, `select="ecmp"`, `grow=1_000_000`, `root=...`).
    Bad input raises `UserError` (`FILE:LINE: ...` or a byte offset) and
    writes nothing; with `strict`, so does anything the twin does not model.

    Returns `routertwin.importers.Imported`: `files` (path -> text or bytes,
    the scenario first), `summary`, `unmodelled` (`FILE:LINE: what`, never
    dropped silently). `write=False` only converts."""
    from routertwin import importers

    args = importers.options(kind, out=Path(out) if out is not None else None, strict=strict, **options)
    imported = importers.convert(kind, Path(path), args)
    if write:
        importers.write(imported)
    return imported
