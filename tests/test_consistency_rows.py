"""Rows flagged `consistency_check` are judged but kept out of the predict statistics."""

from pathlib import Path

from conftest import ROOT
from routertwin.validation.mapping import MappedRow
from routertwin.validation.reference import ReferenceRow
from routertwin.validation.replay import RowResult, summary_line


def _row(rid: str, ref: float, twin: float, check: bool) -> RowResult:
    ref_row = ReferenceRow(rid, "001_x.txt", "sys", "test", "cond", "pps", ref, "1/s", "predict", "",
                           str(ref), 2)
    mapped = MappedRow("s", rid, Path("/x.yaml"), "c", "pps", 10.0, None, "why", "m.yaml:1", "m.yaml:1",
                       consistency_check=check)
    return RowResult(ref_row, mapped, twin=twin, error_pct=(twin - ref) / ref * 100, status="pass")


def test_consistency_rows_are_counted_but_not_in_predict_statistics():
    rows = [_row("a", 100, 102, False), _row("b", 100, 104, False), _row("c", 100, 109, True)]
    line = summary_line("s", rows, 3)
    # median of |2%| and |4%| is 3%; the 9% consistency row is neither median nor worst
    assert "3/3 rows replayed, 3 pass (1 consistency check, not predictions)" in line
    assert "predict median 3.0%, worst 4.0% (b)" in line


def test_t640_boundary_rows_are_marked_as_consistency_checks():
    text = (ROOT / "validation" / "mapping" / "t640.yaml").read_text()
    block = text[text.index("  t640-41b-drop:"):text.index("  t640-42b-pps:")]
    assert "consistency_check: true" in block
