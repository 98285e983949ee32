"""Intervals on twin values: replications and assumption ranges.

Two intervals, kept apart because they mean different things
(docs/validation.md "Intervals"):

- replications: the scenario rerun with R seeds (its own first, then seeds
  derived from it by a hash); the spread is the min..max of a value over
  them. A deterministic scenario shows none.
- assumptions: one at a time, each assumed number (routertwin.assumptions)
  of every profile the scenario reads is set to the low, then the high end
  of its declared range, and the scenario rerun with its own seed (common
  random numbers: the difference is the assumption's, not noise). When a
  study's fit read that profile, the study is fitted again first, with the
  assumption at that end, because its fitted parameters were calibrated with
  the assumption at its nominal value: the refit keeps the calibrate rows
  reproduced and carries the assumption's effect into the predict rows. A
  refit that changes a fitted file also varies every other scenario that
  reads that file.

Each variant is a "shadow" project in a temporary folder: a copy of
scenarios/ with the one number changed and the refitted files written there,
and links to everything else of the project. Scenario files refer to their
profiles and fitted files by relative paths, so a scenario run from the
shadow reads the variant with no help from its runner: any study, present
or future, gets intervals with no code of its own. The project's own files,
scenarios/platforms/fitted/ included, are never written.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from routertwin.assumptions import Assumption, numbers, profile_assumptions, set_number
from routertwin.errors import UserError
from routertwin.parallel import Job, Outcome

# --intervals MODE -> replications (seeds per scenario, its own included).
# Both modes run every assumption of a scenario's own profiles at both ends
# of its range, refitting what it feeds. `full` also runs the scenarios that
# an assumption reaches only through a refitted parameter file they share
# (the CN68xx I/O ceiling, fitted on the 1.5 GHz profile, read by the
# 1.3 GHz scenarios); that roughly doubles the Octeon study's runs, most of
# them identical to the nominal run, since a shared file holds many
# parameters and each scenario reads few.
MODES = {"quick": 3, "full": 5}
THROUGH_SHARED_FITS = {"quick": False, "full": True}
ENDS = ("low", "high")


def replication_seeds(seed: int, n: int) -> list[int]:
    """`seed` and n-1 more, derived from it by SHA-256 (deterministic, so a
    replicated run is reproducible; distinct; in 1..2^31-1)."""
    seeds = [seed]
    i = 0
    while len(seeds) < n:
        i += 1
        digest = hashlib.sha256(f"routertwin-replication:{seed}:{i}".encode()).digest()
        s = int.from_bytes(digest[:8], "big") % (2**31 - 1) + 1
        if s not in seeds:
            seeds.append(s)
    return seeds


@dataclass
class ScenarioInputs:
    """What a scenario reads that intervals vary."""

    path: Path
    seed: int
    assumptions: list[Assumption]  # of every profile it refers to
    fitted: dict[Path, str]  # fitted file it refers to -> its study


def _fitted_study(path: Path) -> str | None:
    """The study of a fitted-parameter file (top-level `study` and `params`), else None."""
    from ruamel.yaml import YAML

    if path.suffix not in (".yaml", ".yml"):
        return None
    try:
        doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except Exception:  # not YAML: a route file or other data, nothing to refit
        return None
    if isinstance(doc, dict) and isinstance(doc.get("params"), dict) and isinstance(doc.get("study"), str):
        return doc["study"]
    return None


def scenario_inputs(path: Path, seed: int | None = None, overrides: tuple = ()) -> ScenarioInputs | None:
    """The assumptions and fitted files of a scenario file (with `routertwin
    run`'s --seed and --set); None when it does not load (its own run
    reports why)."""
    from routertwin.results import referenced_files
    from routertwin.scenario_loader import load_scenario

    try:
        sc = load_scenario(path, seed=seed, overrides=overrides)
    except UserError:
        return None
    asm: list[Assumption] = []
    fitted: dict[Path, str] = {}
    for f in dict.fromkeys(Path(p).resolve() for p in referenced_files(sc.config)):
        study = _fitted_study(f)
        if study is not None:
            fitted[f] = study
            continue
        if f.suffix in (".yaml", ".yml"):
            try:
                asm += profile_assumptions(f)
            except UserError:
                continue  # the run names the profile's error
    # A runner may name assumed numbers its model never reads for this
    # scenario (the tcp_path runner: the node and link types its path does
    # not use); varying them would rerun the nominal case.
    from routertwin import runners

    unread = getattr(runners.get(sc.kind), "unread_assumption", None)
    if unread is not None:
        asm = [a for a in asm if not unread(sc, a.file, a.path)]
    return ScenarioInputs(Path(path), sc.seed, asm, fitted)


# ------------------------------------------------------------- variants --

@dataclass
class Variant:
    """One assumption at one end of its range, as a shadow project."""

    assumption: Assumption
    end: str  # "low" or "high"
    root: Path  # the shadow project
    refitted: dict[str, dict[str, tuple]] = field(default_factory=dict)  # study -> param -> (nominal, refitted)
    changed_fitted: set[Path] = field(default_factory=set)  # the project's fitted files this variant rewrote
    error: str | None = None

    @property
    def value(self):
        return getattr(self.assumption, self.end)


class _FileReads:
    """The files opened while active (a Python audit hook: installed once,
    idle otherwise). Tells which profiles a study's fit reads, so a fit is
    rerun only for assumptions it depends on."""

    installed = False
    active: set[str] | None = None

    @classmethod
    def hook(cls, event: str, args) -> None:
        if cls.active is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            cls.active.add(os.path.realpath(os.fsdecode(args[0])))

    @classmethod
    def record(cls, fn):
        if not cls.installed:
            sys.addaudithook(cls.hook)
            cls.installed = True
        cls.active = set()
        try:
            result = fn()
            return result, {Path(p) for p in cls.active}
        finally:
            cls.active = None


def _shadow(root: Path, dest: Path) -> None:
    """A project at `dest` whose scenarios/ is a copy of root's and whose
    other top-level entries link to root's (build/ and .git left out)."""
    dest.mkdir(parents=True)
    shutil.copytree(root / "scenarios", dest / "scenarios", symlinks=False)
    for entry in root.iterdir():
        if entry.name not in ("scenarios", "build", ".git"):
            (dest / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())


def _param_changes(old: dict, new: dict) -> dict[str, tuple]:
    """name -> (nominal value, refitted value) of the parameters that differ."""
    return {n: (old.get(n), new.get(n)) for n in sorted(set(old) | set(new)) if old.get(n) != new.get(n)}


@dataclass(frozen=True)
class _Refit:
    """What a variant's preparation needs to know of one study."""

    study: str
    nominal: str  # the fitted file text a fresh nominal fit renders
    values: tuple  # (parameter, nominal value) pairs of that fit
    read: frozenset[Path]  # the files the nominal fit read
    files: tuple[Path, ...]  # the project's fitted files of the study that scenarios read


def _prepare(task: tuple) -> tuple[dict, list[str], str | None]:
    """Build one variant's shadow project and refit what it needs (in a
    worker process): (refitted parameter changes, rewritten fitted files
    relative to the project, error)."""
    from routertwin.validation.calibration import fit_all, load_studies, render
    from routertwin.validation.reference import load_reference, reference_path

    root, dest, rel, path, value, refits = task
    root, dest = Path(root), Path(dest)
    _shadow(root, dest)
    profile = root / "scenarios" / rel
    leaf = numbers(profile)[path]
    (dest / "scenarios" / rel).write_text(set_number(profile.read_text(encoding="utf-8"), leaf, value),
                                          encoding="utf-8")
    refitted: dict[str, dict[str, tuple]] = {}
    rewritten: list[str] = []
    if not any(profile.resolve() in r.read for r in refits):
        return refitted, rewritten, None
    load_studies()
    reference = load_reference(reference_path(root))
    for r in refits:
        if profile.resolve() not in r.read:
            continue  # the fit does not read this profile: its parameters stand
        try:
            new = fit_all(reference, [r.study], dest)[r.study]
        except Exception as exc:  # a fit that fails at an end of a range: the variant is reported, not run
            return refitted, rewritten, f"refit of study '{r.study}' failed: {type(exc).__name__}: {exc}"
        text = render(r.study, new)
        if text == r.nominal:
            continue
        refitted[r.study] = _param_changes(dict(r.values), {n: f.value for n, f in new.items()})
        for f in r.files:
            (dest / f.relative_to(root)).write_text(text, encoding="utf-8")
            rewritten.append(str(f.relative_to(root)))
    return refitted, rewritten, None


def prepare_variants(root: Path, inputs: list[ScenarioInputs], workdir: Path, *, jobs: int | None = None,
                     scheduler=None, progress=None) -> list[Variant]:
    """A shadow project per (assumption, end) of the given scenarios, with
    every study whose fit read the assumption's profile fitted again there;
    built in parallel (routertwin.parallel.parallel_map)."""
    from routertwin.parallel import parallel_map
    from routertwin.validation.calibration import fit_all, load_studies, registered, render
    from routertwin.validation.reference import load_reference, reference_path

    root = Path(root).resolve()
    unique: dict[tuple[Path, str], Assumption] = {}
    for s in inputs:
        for a in s.assumptions:
            unique.setdefault((a.file.resolve(), a.path), a)
    if not unique:
        return []
    study_files: dict[str, set[Path]] = {}
    for s in inputs:
        for f, study in s.fitted.items():
            study_files.setdefault(study, set()).add(f)
    load_studies()
    reference = load_reference(reference_path(root))
    refits = []
    for study in sorted(study_files):
        if study in registered():  # none is committed without one (tests/test_calibration.py)
            fits, read = _FileReads.record(lambda: fit_all(reference, [study], root))
            refits.append(_Refit(study, render(study, fits[study]),
                                 tuple((n, f.value) for n, f in sorted(fits[study].items())),
                                 frozenset(read), tuple(sorted(study_files[study]))))
    variants: list[Variant] = []
    tasks = []
    scen_root = root / "scenarios"
    for (file, path), a in sorted(unique.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        try:
            rel = file.relative_to(scen_root)
        except ValueError:
            continue  # a profile outside the project's scenarios/: no shadow can hold it
        for end in ENDS:
            v = Variant(a, end, Path(workdir).resolve() / f"v{len(variants):03d}")
            variants.append(v)
            tasks.append((str(root), str(v.root), str(rel), path, v.value, tuple(refits)))
    if progress is not None:
        progress.restart(len(tasks), "preparing assumption variants (shadow projects, refits)")
    done = parallel_map(_prepare, tasks, jobs=jobs, scheduler=scheduler, progress=progress)
    if progress is not None:
        progress.restart(status="running")
    for v, (refitted, rewritten, error) in zip(variants, done):
        v.refitted, v.error = refitted, error
        v.changed_fitted = {root / f for f in rewritten}
    return variants


def applies(v: Variant, s: ScenarioInputs, through_shared_fits: bool = True) -> bool:
    """Whether variant `v` changes what scenario `s` reads: one of its
    profiles holds the assumption, or (`through_shared_fits`) the refit
    rewrote a fitted file it reads."""
    direct = any(a.file.resolve() == v.assumption.file.resolve() and a.path == v.assumption.path
                 for a in s.assumptions)
    return direct or (through_shared_fits and bool(v.changed_fitted & set(s.fitted)))


# ---------------------------------------------------------------- plan --

@dataclass
class ScenarioRuns:
    """The interval runs of one scenario."""

    inputs: ScenarioInputs
    seeds: list[int]
    replications: list[Outcome] = field(default_factory=list)  # one per seed; [0] is the nominal run
    variants: list[tuple[Variant, Outcome]] = field(default_factory=list)


@dataclass
class Plan:
    """Jobs for the interval runs of a set of scenarios, and where each
    outcome goes once they have run."""

    mode: str
    runs: dict[Path, ScenarioRuns]
    variants: list[Variant]
    jobs: list[Job] = field(default_factory=list)
    # Where the plan's jobs share native results (parallel.Job.memo); give
    # it to the nominal jobs too (nominal_job), so a variant identical to
    # its nominal run takes that run's results.
    memo: str | None = None
    slots: list[tuple[Path, str, object]] = field(default_factory=list)  # (scenario, "rep"|"var", seed | Variant)

    def nominal_job(self, job: Job) -> Job:
        """The nominal run's job, sharing the plan's native results."""
        return replace(job, memo=self.memo)

    def fill(self, outcomes: list[Outcome], nominal: dict[Path, Outcome]) -> None:
        for path, run in self.runs.items():
            if path in nominal:
                run.replications = [nominal[path]]
        for (path, what, key), outcome in zip(self.slots, outcomes):
            if what == "rep":
                self.runs[path].replications.append(outcome)
            else:
                self.runs[path].variants.append((key, outcome))


def plan(root: Path, scenario_files: list[Path], mode: str, workdir: Path, progress=None, *,
         seed: int | None = None, overrides: tuple = (), jobs: int | None = None, scheduler=None,
         replications: int | None = None) -> Plan:
    """The replications and variants of the scenarios (their nominal runs
    are the caller's: outcome [0] of every replication list). `seed` and
    `overrides` are those of the nominal runs (`routertwin run --seed/--set`);
    variants keep them, replications replace the seed. A scenario outside
    the project's scenarios/ gets replications only (no shadow holds it).
    `replications` replaces the mode's number of seeds."""
    if mode not in MODES:
        raise UserError(f"--intervals {mode}: expected one of {', '.join(MODES)}")
    inputs = [i for i in (scenario_inputs(p, seed, overrides) for p in scenario_files) if i is not None]
    root = Path(root).resolve()
    variants = prepare_variants(root, inputs, workdir, jobs=jobs, scheduler=scheduler, progress=progress)
    p = Plan(mode, {}, variants, memo=str(Path(workdir).resolve() / "native-memo"))
    for s in inputs:
        seeds = replication_seeds(s.seed, replications or MODES[mode])
        p.runs[s.path] = ScenarioRuns(s, seeds)
        for rep_seed in seeds[1:]:
            p.jobs.append(Job(str(s.path), seed=rep_seed, overrides=tuple(overrides), memo=p.memo))
            p.slots.append((s.path, "rep", rep_seed))
        try:
            rel = s.path.resolve().relative_to(root / "scenarios")
        except ValueError:
            continue
        for v in variants:
            if v.error is None and applies(v, s, THROUGH_SHARED_FITS[mode]):
                p.jobs.append(Job(str(v.root / "scenarios" / rel), seed=seed, overrides=tuple(overrides),
                                  memo=p.memo))
                p.slots.append((s.path, "var", v))
    return p


# ---------------------------------------------------------- row values --

def metric_of(outcome: Outcome, case: str, metric: str) -> tuple[float | None, str]:
    """(a case's metric in an outcome, "") or (None, why there is none)."""
    if outcome is None or outcome.cases is None:
        return None, (outcome.error if outcome is not None and outcome.error else "the run failed")
    for c in outcome.cases:
        if c.case == case:
            v = c.metrics.get(metric)
            if isinstance(v, (int, float)) and math.isfinite(v):
                return float(v), ""
            return None, f"case '{case}' reports no finite '{metric}'"
    return None, f"the run produced no case '{case}'"


@dataclass
class Effect:
    """What one assumption does to one value: the value at each end."""

    assumption: Assumption
    low: float | None
    high: float | None
    refitted: list[str] = field(default_factory=list)  # studies fitted again for this assumption

    def delta_pct(self, nominal: float) -> tuple[float | None, float | None]:
        def d(v):
            if v is None or nominal == 0:
                return None
            return (v - nominal) / abs(nominal) * 100.0
        return d(self.low), d(self.high)

    def swing_pct(self, nominal: float) -> float:
        """The larger |change| of the two ends, in % of the nominal value."""
        return max((abs(x) for x in self.delta_pct(nominal) if x is not None), default=0.0)


@dataclass
class ValueInterval:
    """The intervals of one twin value (a case's metric)."""

    nominal: float
    seeds: list[int]
    replicated: list[float | None]  # per seed; [0] is the nominal
    effects: list[Effect]  # per assumption, biggest swing first
    failed: list[str] = field(default_factory=list)  # variants or replications that gave no value, and why

    @property
    def rep_values(self) -> list[float]:
        return [v for v in self.replicated if v is not None]

    @property
    def rep_range(self) -> tuple[float, float]:
        vals = self.rep_values
        return (min(vals), max(vals))

    @property
    def rep_sd(self) -> float:
        vals = self.rep_values
        return statistics.stdev(vals) if len(vals) > 1 else 0.0

    @property
    def assumption_range(self) -> tuple[float, float]:
        vals = [self.nominal] + [x for e in self.effects for x in (e.low, e.high) if x is not None]
        return (min(vals), max(vals))

    @property
    def driver(self) -> Effect | None:
        """The assumption that moves this value most (None: none moves it)."""
        if not self.effects or self.effects[0].swing_pct(self.nominal) == 0:
            return None
        return self.effects[0]


def value_interval(runs: ScenarioRuns, case: str, metric: str, nominal: float) -> ValueInterval:
    got = [metric_of(o, case, metric) for o in runs.replications]
    reps = [v for v, _ in got]
    failed = [f"seed {s}: {why}" for s, (v, why) in zip(runs.seeds, got) if v is None]
    by_assumption: dict[tuple, Effect] = {}
    for v, outcome in runs.variants:
        a = v.assumption
        e = by_assumption.setdefault((a.file, a.path), Effect(a, None, None))
        val, why = metric_of(outcome, case, metric)
        if val is None:
            failed.append(f"{a.name} at {v.end} {v.value!r}: {why}")
        setattr(e, v.end, val)
        for study in v.refitted:
            if study not in e.refitted:
                e.refitted.append(study)
    effects = sorted(by_assumption.values(), key=lambda e: (-e.swing_pct(nominal), e.assumption.name))
    return ValueInterval(nominal, runs.seeds, reps, effects, failed)


def fmt_range(lo: float, hi: float) -> str:
    from routertwin.results import fmt

    return "±0" if lo == hi else f"{fmt(lo)}–{fmt(hi)}"


def record(p: Plan, root: Path, scenarios: list[Path] | None = None) -> dict:
    """What the interval runs were (of all scenarios, or `scenarios`): mode,
    seeds per scenario, each variant's assumption, end, value and refitted
    parameters, version and git commit."""
    from routertwin import __version__
    from routertwin.project import display_path
    from routertwin.results import git_commit

    runs = {path: r for path, r in p.runs.items() if scenarios is None or path in scenarios}
    used = [v for v in p.variants if any(x is v for r in runs.values() for x, _ in r.variants)]
    return {
        "routertwin_version": __version__,
        "git_commit": git_commit(Path(root).resolve()),
        "mode": p.mode,
        "through_shared_fits": THROUGH_SHARED_FITS[p.mode],
        "replications": max((len(r.seeds) for r in runs.values()), default=0),
        "seeds": {display_path(path, root): r.seeds for path, r in sorted(runs.items())},
        "variants": [
            {"profile": display_path(v.assumption.file, root), "path": v.assumption.path,
             "range": [v.assumption.low, v.assumption.high], "nominal": v.assumption.nominal,
             "end": v.end, "value": v.value, "why": v.assumption.why,
             "refitted": {s: {n: list(c) for n, c in ch.items()} for s, ch in v.refitted.items()},
             "scenarios": sorted(display_path(path, root) for path, r in runs.items()
                                 if any(x is v for x, _ in r.variants)),
             **({"error": v.error} if v.error else {})}
            for v in (used if scenarios is not None else p.variants)],
    }


# ------------------------------------------------------- routertwin run --

def case_intervals(runs: ScenarioRuns) -> list[tuple[str, str, ValueInterval]]:
    """(case, metric, interval) of every finite metric of the nominal run."""
    nominal = runs.replications[0]
    out = []
    for c in nominal.cases or []:
        for m, v in sorted(c.metrics.items()):
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                out.append((c.case, m, value_interval(runs, c.case, m, float(v))))
    return out


def intervals_table(title: str, items: list[tuple[str, str, ValueInterval]]):
    """A rich Table: case, metric, twin value, its seed and assumption
    intervals, and the assumption that moves it most."""
    from rich.table import Table

    from routertwin.results import fmt

    t = Table(title=title, title_justify="left")
    for h in ("case", "metric", "twin", f"seeds (R={len(items[0][2].seeds) if items else 0})", "assumptions",
              "moved most by"):
        t.add_column(h, justify="right" if h not in ("case", "metric", "moved most by") else "left")
    for case, metric, iv in items:
        d = iv.driver
        t.add_row(case, metric, fmt(iv.nominal), fmt_range(*iv.rep_range) if iv.rep_values else "—",
                  fmt_range(*iv.assumption_range),
                  "" if d is None else f"{d.assumption.name} ({d.swing_pct(iv.nominal):.2g}%)")
    return t


def intervals_csv(items: list[tuple[str, str, ValueInterval]]) -> str:
    """One line per case and metric: the value, its intervals and its driver."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["case", "metric", "twin", "seeds", "seed_min", "seed_max", "seed_sd", "assumption_min",
                "assumption_max", "moved_most_by", "moved_most_pct", "no_value"])
    for case, metric, iv in items:
        d = iv.driver
        lo, hi = iv.rep_range if iv.rep_values else (None, None)
        alo, ahi = iv.assumption_range
        w.writerow([case, metric, repr(iv.nominal), " ".join(map(str, iv.seeds)), repr(lo), repr(hi),
                    repr(iv.rep_sd), repr(alo), repr(ahi), "" if d is None else d.assumption.name,
                    "" if d is None else repr(d.swing_pct(iv.nominal)), "; ".join(iv.failed)])
    return buf.getvalue()
