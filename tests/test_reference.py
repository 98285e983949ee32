"""validation/reference.csv carries every shared measurement, exactly."""

import csv
from pathlib import Path

import pytest

from routertwin.validation.reference import load_reference

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "measurements.csv"


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_reference_equals_shared_measurements_row_for_row(root):
    if not SHARED.is_file():
        pytest.skip(f"shared measurements not found at {SHARED.resolve()} (expected ../shared from the project root)")
    ours, theirs = rows(root / "validation" / "reference.csv"), rows(SHARED)
    assert len(ours) == len(theirs)
    for mine, shared in zip(ours, theirs):
        # Every shared column with the same text; extra columns of ours are allowed.
        assert {k: mine.get(k) for k in shared} == shared


def test_reference_loads_with_roles_and_numeric_values(root):
    ref = load_reference(root / "validation" / "reference.csv")
    assert len(ref) == len(rows(root / "validation" / "reference.csv"))
    assert {r.role for r in ref.values()} == {"calibrate", "predict"}
    assert ref["t640-40b-500k-pct"].value_text == "99.700"  # text kept exactly
    assert ref["t640-40b-500k-pct"].value == 99.7
