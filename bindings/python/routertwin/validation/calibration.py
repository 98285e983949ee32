"""Calibration discipline in code.

A study fits its model parameters with a function registered by
`register_fit(study, fn)`; `fn(data: CalibrationData)` returns a dict of
parameter name -> `Fitted` (value plus the calibrate row ids it came from) or
a plain number (then its provenance is every row the fit read).
`CalibrationData` is built from the reference table but holds the values of
`calibrate` rows only: reading a `predict` row or an unknown id raises
CalibrationDisciplineError, and iterating yields calibrate rows only.

`routertwin calibrate` imports every module of `routertwin.studies` (where
studies call `register_fit`), runs the fits and writes
scenarios/platforms/fitted/<study>.yaml. Tests check that the committed files
equal a fresh fit and that perturbing every predict value changes nothing.
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from routertwin.errors import CalibrationDisciplineError, ScenarioError, UserError
from routertwin.project import display_path
from routertwin.validation.reference import ReferenceRow, load_reference, reference_path


class CalibrationData:
    """The calibrate rows of the reference table, and nothing else."""

    def __init__(self, rows: dict[str, ReferenceRow] | list[ReferenceRow], root: Path | None = None):
        rows = list(rows.values()) if isinstance(rows, dict) else list(rows)
        # The project whose platform profiles and workloads the fits read;
        # None means the project around the current directory.
        self.root = Path(root) if root is not None else None
        self._rows = {r.id: r for r in rows if r.role == "calibrate"}
        # Only the ids of other rows are kept, to tell "predict" from "unknown".
        self._withheld = {r.id: r.role for r in rows if r.role != "calibrate"}
        self.used: list[str] = []  # ids read so far, in order (provenance)

    def row(self, rid: str) -> ReferenceRow:
        """The calibrate row `rid`; raises for predict rows and unknown ids."""
        if rid in self._rows:
            if rid not in self.used:
                self.used.append(rid)
            return self._rows[rid]
        if rid in self._withheld:
            raise CalibrationDisciplineError(
                f"calibration read row '{rid}', a {self._withheld[rid]} row: fits may use calibrate rows only")
        raise CalibrationDisciplineError(f"calibration read row '{rid}': no such reference row")

    def value(self, rid: str) -> float:
        return self.row(rid).value

    def __iter__(self) -> Iterator[ReferenceRow]:
        for rid in self._rows:
            yield self.row(rid)

    def __contains__(self, rid: str) -> bool:
        return rid in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def select(self, *, seed: str | None = None, metric: str | None = None, prefix: str | None = None) -> list[ReferenceRow]:
        """Calibrate rows matching every given filter (each one read)."""
        return [self.row(r.id) for r in self._rows.values()
                if (seed is None or r.seed == seed) and (metric is None or r.metric == metric)
                and (prefix is None or r.id.startswith(prefix))]


@dataclass(frozen=True)
class Fitted:
    """A fitted parameter and where it came from."""

    value: float | int | list[float]
    rows: tuple[str, ...]  # calibrate row ids the value was fitted from
    note: str = ""  # method, units


FitFn = Callable[[CalibrationData], dict]
_REGISTRY: dict[str, FitFn] = {}


def register_fit(study: str, fn: FitFn | None = None):
    """Register `fn` as the fit of `study` (also usable as a decorator)."""

    def add(f: FitFn) -> FitFn:
        old = _REGISTRY.get(study)
        if old is not None and (old.__module__, old.__qualname__) != (f.__module__, f.__qualname__):
            raise ValueError(f"study '{study}' already has a fit: {old.__module__}.{old.__qualname__}")
        _REGISTRY[study] = f
        return f

    return add(fn) if fn is not None else add


def unregister_fit(study: str) -> None:
    _REGISTRY.pop(study, None)


def registered() -> dict[str, FitFn]:
    return dict(sorted(_REGISTRY.items()))


def load_studies() -> list[str]:
    """Import every module of routertwin.studies so their fits register."""
    try:
        pkg = importlib.import_module("routertwin.studies")
    except ModuleNotFoundError:
        return []
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))
    for name in names:
        importlib.import_module(f"routertwin.studies.{name}")
    return names


def run_fit(study: str, data: CalibrationData) -> dict[str, Fitted]:
    """Run one registered fit; every value finite, every cited row a calibrate row."""
    fn = _REGISTRY[study]
    data.used.clear()
    raw = fn(data)
    if not isinstance(raw, dict):
        raise TypeError(f"fit of study '{study}' returned {type(raw).__name__}, not a dict")
    out: dict[str, Fitted] = {}
    for name, item in sorted(raw.items()):
        fitted = item if isinstance(item, Fitted) else Fitted(value=item, rows=tuple(data.used))
        fitted = Fitted(_plain_value(fitted.value, study, name), tuple(fitted.rows), fitted.note)
        if not fitted.rows:
            raise CalibrationDisciplineError(f"study '{study}': parameter '{name}' cites no calibrate row")
        for rid in fitted.rows:
            data.row(rid)  # raises unless rid is a calibrate row
        out[name] = fitted
    return out


def _plain_value(v, study: str, name: str):
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        v = v.tolist()
    vals = v if isinstance(v, list) else [v]
    for x in vals:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"study '{study}': parameter '{name}' is not a finite number: {x!r}")
    return [float(x) for x in v] if isinstance(v, list) else (v if isinstance(v, int) else float(v))


def fit_all(reference: dict[str, ReferenceRow], studies: list[str] | None = None,
            root: Path | None = None) -> dict[str, dict[str, Fitted]]:
    """Fresh fits of the given (default: all registered) studies."""
    chosen = studies or list(registered())
    unknown = [s for s in chosen if s not in _REGISTRY]
    if unknown:
        raise UserError(f"no registered fit for study {', '.join(unknown)} (registered: {', '.join(registered()) or 'none'})")
    return {s: run_fit(s, CalibrationData(reference, root)) for s in chosen}


def fitted_path(root: Path, study: str) -> Path:
    return Path(root) / "scenarios" / "platforms" / "fitted" / f"{study}.yaml"


def render(study: str, params: dict[str, Fitted]) -> str:
    """The fitted file's text: YAML, deterministic (sorted, repr of floats)."""
    lines = [
        f"# Fitted by `routertwin calibrate` for study '{study}' from calibrate rows of",
        "# validation/reference.csv only (docs/validation.md). Do not edit: rerun the",
        "# command; a test checks this file equals a fresh fit.",
        f"study: {study}",
        "params:",
    ]
    for name, f in sorted(params.items()):
        value = "[" + ", ".join(repr(x) for x in f.value) + "]" if isinstance(f.value, list) else repr(f.value)
        lines.append(f"  {name}:")
        lines.append(f"    value: {value}")
        lines.append(f"    rows: [{', '.join(f.rows)}]")
        if f.note:
            lines.append(f"    note: {json.dumps(f.note, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def load_fitted(path: Path) -> dict[str, float | int | list[float]]:
    """Parameter name -> value of a fitted file (for runners and scenarios).
    A file that is not one (edited by hand, or not fitted at all) raises
    ScenarioError naming file, line and key."""
    from routertwin.scenario_loader import Locator, plain, read_yaml_file

    doc, shown = read_yaml_file(path)
    params = doc.get("params") if isinstance(doc, dict) else None
    if not isinstance(params, dict):
        raise ScenarioError(f"{shown}:1: key 'params': missing: not a fitted-parameter file "
                            "(run `routertwin calibrate`)")
    where = Locator(doc, shown)
    if "assumption_ranges" in doc:
        raise ScenarioError(where.at(("assumption_ranges",), "a fitted file takes no assumption ranges: its numbers "
                                     "follow from calibrate rows (the ranges of the assumptions a fit used live "
                                     "in their profiles)"))
    out: dict[str, float | int | list[float]] = {}
    for name, entry in params.items():
        value = plain(entry.get("value")) if isinstance(entry, dict) else None
        numbers = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
            raise ScenarioError(where.at(("params", name, "value"), "expected a finite number (or a list of "
                                         "them) under 'value'"))
        out[str(name)] = value
    return out


@dataclass(frozen=True)
class FittedFile:
    """One study's fresh fit beside its committed file."""

    study: str
    params: dict[str, Fitted]
    path: Path  # scenarios/platforms/fitted/<study>.yaml
    text: str  # the file a fresh fit renders
    current: str | None  # the committed file's text (None: no file yet)

    @property
    def stale(self) -> bool:
        return self.current != self.text


def fitted_files(root: Path, studies: list[str] | None = None) -> list[FittedFile]:
    """Fresh fits of the registered studies (all, or `studies`), each beside
    its committed file; writes nothing."""
    load_studies()
    if not registered():
        return []
    fits = fit_all(load_reference(reference_path(root)), studies or None, root)
    out = []
    for study, params in fits.items():
        path = fitted_path(root, study)
        out.append(FittedFile(study, params, path, render(study, params),
                              path.read_text(encoding="utf-8") if path.exists() else None))
    return out


def write_fitted(files: list[FittedFile]) -> None:
    """Write the fitted files that differ from a fresh fit."""
    from routertwin.results import write_atomic

    for f in files:
        if f.stale:
            write_atomic({f.path: f.text})


def calibrate_command(root: Path, studies: list[str], check: bool) -> int:
    files = fitted_files(root, studies)
    if not files:
        print("calibrate: no study registers a fit yet (routertwin.studies.*)", file=sys.stderr)
        return 0
    stale = [display_path(f.path, root) for f in files if f.stale]
    if check:
        if stale:
            print(f"calibrate --check: stale fitted files: {', '.join(stale)}", file=sys.stderr)
            return 1
        return 0
    write_fitted(files)
    for f in files:
        rows = sorted({r for p in f.params.values() for r in p.rows})
        print(f"{display_path(f.path, root)}: {len(f.params)} parameters from {len(rows)} calibrate rows"
              f"{'' if f.stale else ' (unchanged)'}")
    return 0
