"""validation/reference.csv: every figure of the seeds, with its citation and
role (`calibrate` may be fitted, `predict` must be predicted)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from routertwin.errors import MappingError

COLUMNS = ("id", "seed", "system", "test", "condition", "metric", "value", "unit", "role", "note")
ROLES = ("calibrate", "predict")


@dataclass(frozen=True)
class ReferenceRow:
    id: str
    seed: str  # seed file name, e.g. 002_2e27b0c2a734f3ea.txt
    system: str
    test: str
    condition: str
    metric: str
    value: float
    unit: str
    role: str  # "calibrate" or "predict"
    note: str
    value_text: str  # the value exactly as written
    line: int  # line in the CSV file


def reference_path(root: Path) -> Path:
    return Path(root) / "validation" / "reference.csv"


def load_reference(path: Path) -> dict[str, ReferenceRow]:
    """Rows by id, in file order. Raises MappingError naming file and line."""
    path = Path(path)
    try:
        f = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise MappingError(f"{path}: cannot read reference table: {exc.strerror}") from None
    rows: dict[str, ReferenceRow] = {}
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise MappingError(f"{path}:1: missing column(s): {', '.join(missing)}")
        for rec in reader:
            line = reader.line_num
            rid = rec["id"]
            if rid in rows:
                raise MappingError(f"{path}:{line}: duplicate row id '{rid}' (first at line {rows[rid].line})")
            if rec["role"] not in ROLES:
                raise MappingError(f"{path}:{line}: row '{rid}': role must be calibrate or predict, not {rec['role']!r}")
            try:
                value = float(rec["value"])
            except ValueError:
                raise MappingError(f"{path}:{line}: row '{rid}': value is not a number: {rec['value']!r}") from None
            if not math.isfinite(value):
                raise MappingError(f"{path}:{line}: row '{rid}': value is not finite")
            rows[rid] = ReferenceRow(
                id=rid, seed=rec["seed"], system=rec["system"], test=rec["test"],
                condition=rec["condition"], metric=rec["metric"], value=value, unit=rec["unit"],
                role=rec["role"], note=rec["note"], value_text=rec["value"], line=line,
            )
    return rows
