"""Results of a run: one `CaseResult` per case, tables, JSON and CSV files.

Files are deterministic (sorted keys, repr of floats, no wall-clock values)
so the same scenario and seed give byte-identical output, and written
atomically (temporary name in the same folder, then os.replace) so a failed
run leaves nothing that looks like a valid result.

The JSON header says what produced it: the routertwin version, the git
commit of the project (`git describe --always --dirty`) and the sha256 of the
scenario file and of every file it refers to, so results of different inputs
never look alike. JSON has no infinity: an infinite value (an unstable
queue's wait) is written as the string "inf"; a NaN is never written -- it
means a computation failed, and writing it is refused as an internal error.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import math
import os
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from routertwin.project import display_path


@dataclass
class CaseResult:
    """One case of a scenario (see docs/contracts.md)."""

    case: str  # id such as "64b-1c"
    params: dict[str, Any] = field(default_factory=dict)  # the case's inputs
    metrics: dict[str, float] = field(default_factory=dict)  # name -> value
    bottleneck: str = ""  # the binding resource, or ""
    counters: dict[str, float] = field(default_factory=dict)  # drop reasons, counts
    # Latency histogram, per-port figures, drops per port over time
    # (routertwin.distributions); written to JSON only when present.
    distributions: dict[str, Any] = field(default_factory=dict)


class NotANumberError(RuntimeError):
    """A result holds a NaN: a computation failed (an internal error, never
    the user's), and no file may present it as a value."""


def _finite(x: Any, where: str = "") -> Any:
    """`x` made JSON-safe: +-inf as the strings "inf"/"-inf" (an unstable
    queue's wait is infinite, which null would hide); a NaN raises
    NotANumberError naming where it is (e.g. `cases[2].metrics.wait_s`)."""
    if isinstance(x, float) and math.isnan(x):
        raise NotANumberError(f"result value '{where}' is NaN (a failed computation); nothing written")
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, dict):
        return {str(k): _finite(v, f"{where}.{k}" if where else str(k)) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v, f"{where}[{i}]") for i, v in enumerate(x)]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):  # numpy scalars
        return _finite(x.item(), where)
    return x


@functools.lru_cache(maxsize=None)
def git_commit(folder: Path) -> str:
    """`git describe --always --dirty` of `folder` when it is a git checkout
    (and git is installed), else "unknown". Stable for a given tree, so
    same-scenario-same-seed files stay byte-identical."""
    try:
        out = subprocess.run(["git", "-C", str(folder), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def referenced_files(value: Any) -> list[Path]:
    """Every file path in a validated scenario config (its ScenarioPath
    fields, at any depth: profiles, fitted parameters, route files)."""
    from pydantic import BaseModel

    if isinstance(value, Path):
        return [value]
    if isinstance(value, BaseModel):
        return [p for name in type(value).model_fields for p in referenced_files(getattr(value, name))]
    if isinstance(value, dict):
        return [p for v in value.values() for p in referenced_files(v)]
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in referenced_files(v)]
    return []


def provenance(scenario, root: Path | None = None) -> dict:
    """What produced a result: version, git commit of the project root
    ("unknown" without one), and the sha256 of the scenario file and each
    file it refers to, keyed by display path."""
    from routertwin import __version__

    files = {}
    if scenario.path is None:  # built in Python: its keys are the input, hashed as canonical JSON
        text = json.dumps(_finite({"scenario": scenario.name, "kind": scenario.kind, "seed": scenario.seed,
                                   "description": scenario.description, "parameters": scenario.parameters}),
                          sort_keys=True, default=str)
        files["<python>"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for path in [*([scenario.path] if scenario.path is not None else []), *referenced_files(scenario.config)]:
        files[display_path(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    commit = git_commit(Path(root).resolve()) if root is not None else "unknown"
    return {"routertwin_version": __version__, "git_commit": commit, "input_files": files}


def record(scenario, cases: Iterable[CaseResult], root: Path | None = None) -> dict:
    """The JSON document of a run. Raises NotANumberError if a metric is NaN."""
    cases = list(cases)
    for c in cases:
        for name, v in c.metrics.items():
            if isinstance(v, float) and math.isnan(v):
                raise NotANumberError(f"scenario '{scenario.name}' case '{c.case}': metric '{name}' is NaN "
                                      "(a failed computation); no result file written")
    return _finite(
        {
            **provenance(scenario, root),
            "scenario": scenario.name,
            "kind": scenario.kind,
            "description": scenario.description,
            "scenario_file": display_path(scenario.path, root) if scenario.path is not None else None,
            "seed": scenario.seed,
            "parameters": scenario.parameters,
            "cases": [_case_doc(c) for c in cases],
        }
    )


def _case_doc(c: CaseResult) -> dict:
    doc = asdict(c)
    if not doc["distributions"]:
        del doc["distributions"]  # runners without distributions keep their documents unchanged
    return doc


def to_json(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _columns(cases: list[CaseResult]) -> list[str]:
    cols: set[str] = set()
    for c in cases:
        cols.update(f"param.{k}" for k in c.params)
        cols.update(f"metric.{k}" for k in c.metrics)
        cols.update(f"counter.{k}" for k in c.counters)
    return ["case", *sorted(cols), "bottleneck"]


def _flat(c: CaseResult) -> dict[str, Any]:
    row: dict[str, Any] = {"case": c.case, "bottleneck": c.bottleneck}
    row.update({f"param.{k}": v for k, v in c.params.items()})
    row.update({f"metric.{k}": v for k, v in c.metrics.items()})
    row.update({f"counter.{k}": v for k, v in c.counters.items()})
    return row


def to_csv(cases: list[CaseResult]) -> str:
    cols = _columns(cases)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for c in cases:
        row = _flat(c)
        w.writerow([_cell(row.get(k, "")) for k in cols])
    return buf.getvalue()


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def to_frame(cases: list[CaseResult]):
    """A tidy pandas DataFrame: one row per case, columns param.*, metric.*, counter.*."""
    import pandas as pd

    return pd.DataFrame([_flat(c) for c in cases], columns=_columns(cases))


def write_atomic(files: dict[Path, str | bytes]) -> None:
    """Write every file (text, or bytes such as a PNG) under a temporary name,
    then rename them all; on any failure remove the temporaries and any
    destination already renamed, so the set is written completely or not at all."""
    temps: list[tuple[str, Path]] = []
    renamed: list[Path] = []
    try:
        for dest, text in files.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            temps.append((tmp, dest))
            if isinstance(text, bytes):
                with os.fdopen(fd, "wb") as f:
                    f.write(text)
            else:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        for tmp, dest in temps:
            os.replace(tmp, dest)
            renamed.append(dest)
    except BaseException:
        # A half-renamed set would pair a new JSON with an old CSV: remove it.
        for path in [tmp for tmp, _ in temps] + renamed:
            if os.path.exists(path):
                os.unlink(path)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_results(out_dir: Path, scenario, cases: list[CaseResult], root: Path | None = None) -> tuple[Path, Path]:
    """Write OUT/<scenario>.json and OUT/<scenario>.csv; return their paths."""
    out_dir = Path(out_dir)
    jpath = out_dir / f"{scenario.name}.json"
    cpath = out_dir / f"{scenario.name}.csv"
    write_atomic({jpath: to_json(record(scenario, cases, root)), cpath: to_csv(cases)})
    return jpath, cpath


def fmt(v: Any) -> str:
    """A number for people: 4 significant digits in at most 8 characters."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, int) and abs(v) < 10**8:
        return str(v)
    text = f"{v:.4g}"
    return text if len(text) <= 8 else f"{v:.2e}"


def console():
    """A rich Console on stdout; piped output (files, CI logs) gets wide
    tables instead of 80 columns."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=240)


def table(scenario, cases: list[CaseResult]):
    """A rich Table of the cases: parameters, metrics, bottleneck. One row per
    case, or one row per field when there are more fields than cases (it
    then still fits a terminal)."""
    from rich.table import Table

    params = sorted({k for c in cases for k in c.params})
    metrics = sorted({k for c in cases for k in c.metrics})
    show_bn = any(c.bottleneck for c in cases)
    fields = [(k, "param") for k in params] + [(k, "metric") for k in metrics]
    t = Table(title=f"{scenario.name} ({scenario.kind}, seed {scenario.seed})")

    def cell(c: CaseResult, key: str, where: str) -> str:
        return fmt((c.params if where == "param" else c.metrics).get(key, ""))

    if len(cases) < len(fields):
        t.add_column("case", no_wrap=True)
        for c in cases:
            t.add_column(c.case, justify="right")
        for key, where in fields:
            t.add_row(key, *(cell(c, key, where) for c in cases), style="bold" if where == "metric" else None)
        if show_bn:
            t.add_row("bottleneck", *(c.bottleneck for c in cases))
        return t
    t.add_column("case")
    for key, where in fields:
        t.add_column(key, justify="right", style="bold" if where == "metric" else None)
    if show_bn:
        t.add_column("bottleneck")
    for c in cases:
        t.add_row(c.case, *(cell(c, key, where) for key, where in fields), *([c.bottleneck] if show_bn else []))
    return t
