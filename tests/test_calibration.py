"""Calibration discipline: fits see calibrate rows only, predict values cannot
move any fitted parameter, and committed fitted files equal a fresh fit.

The perturbation test iterates the registry, so every study registered in
routertwin.studies is covered as soon as it exists; a small study defined
here keeps the checks running before any real study registers."""

import csv
import shutil

import numpy as np
import pytest

from routertwin.errors import CalibrationDisciplineError
from routertwin.validation import calibration
from routertwin.validation.calibration import (CalibrationData, Fitted, fit_all, fitted_path, load_studies,
                                               register_fit, registered, render, run_fit, unregister_fit)
from routertwin.validation.lsq import nnls
from routertwin.validation.reference import load_reference


def _cn68_cost_fit(data: CalibrationData) -> dict:
    """Per-packet cycles of a 1.5 GHz core, c(size) = a + b * size >= 0, from
    the one-core simple-executive calibrate rows (a test study, not a model)."""
    rows = [data.row(r) for r in ("cn68-se-64b-1c", "cn68-se-128b-1c", "cn68-se-256b-1c")]
    sizes = np.array([64.0, 128.0, 256.0])
    cycles = np.array([1.5e9 / r.value for r in rows])
    (a, b), _ = nnls(np.column_stack([np.ones(3), sizes]), cycles)
    ids = tuple(r.id for r in rows)
    return {"base_cycles": Fitted(a, ids, "cycles per packet"), "cycles_per_byte": Fitted(b, ids),
            "calibrate_rows_seen": float(len(list(data)))}


@pytest.fixture
def test_study():
    load_studies()
    register_fit("pytest-cn68-cost", _cn68_cost_fit)
    yield "pytest-cn68-cost"
    unregister_fit("pytest-cn68-cost")


@pytest.fixture
def reference(root):
    return load_reference(root / "validation" / "reference.csv")


def test_reading_a_predict_row_raises(reference, root):
    def peeking_fit(data):
        return {"x": data.value("cn68-se-64b-16c")}  # a predict row

    register_fit("pytest-peek", peeking_fit)
    try:
        with pytest.raises(CalibrationDisciplineError, match="'cn68-se-64b-16c', a predict row"):
            run_fit("pytest-peek", CalibrationData(reference, root))
    finally:
        unregister_fit("pytest-peek")


def test_unknown_row_id_raises(reference, root):
    with pytest.raises(CalibrationDisciplineError, match="no such reference row"):
        CalibrationData(reference, root).value("cn68-se-64b-99c")


def test_citing_a_predict_row_as_provenance_raises(reference, root):
    register_fit("pytest-cite", lambda data: {"x": Fitted(1.0, ("cn68-se-64b-16c",))})
    try:
        with pytest.raises(CalibrationDisciplineError):
            run_fit("pytest-cite", CalibrationData(reference, root))
    finally:
        unregister_fit("pytest-cite")


def test_iteration_yields_calibrate_rows_only(reference, root):
    data = CalibrationData(reference, root)
    seen = [r.id for r in data]
    assert seen == [r.id for r in reference.values() if r.role == "calibrate"]
    assert "cn68-se-64b-16c" not in data
    assert all(r.role == "calibrate" for r in data.select(seed="002_2e27b0c2a734f3ea.txt"))


def test_plain_number_cites_the_rows_the_fit_read(reference, root):
    register_fit("pytest-plain", lambda data: {"x": data.value("cn68-se-64b-1c") * 2})
    try:
        fitted = run_fit("pytest-plain", CalibrationData(reference, root))
    finally:
        unregister_fit("pytest-plain")
    assert fitted["x"] == Fitted(6600000.0, ("cn68-se-64b-1c",))


def _perturbed_copy(src, dst):
    with open(src, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    changed = 0
    for r in rows:
        if r["role"] == "predict":
            r["value"] = repr(float(r["value"]) * 1.37 + 11.0)
            changed += 1
    with open(dst, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return changed


def test_perturbing_every_predict_value_changes_no_fitted_parameter(test_study, root, tmp_path, reference):
    assert test_study in registered()
    changed = _perturbed_copy(root / "validation" / "reference.csv", tmp_path / "reference.csv")
    perturbed = load_reference(tmp_path / "reference.csv")
    assert changed > 0 and any(perturbed[i].value != reference[i].value for i in reference)
    fresh, other = fit_all(reference, root=root), fit_all(perturbed, root=root)
    assert set(fresh) == set(registered())
    for study in fresh:
        assert render(study, fresh[study]) == render(study, other[study]), study


def test_test_study_fits_the_one_core_costs(test_study, reference, root):
    fitted = run_fit(test_study, CalibrationData(reference, root))
    # 3.3 Mpps at 64, 128 and 256 bytes: 454.5 cycles, no per-byte cost.
    assert fitted["base_cycles"].value == pytest.approx(1.5e9 / 3.3e6)
    assert fitted["cycles_per_byte"].value == pytest.approx(0.0, abs=1e-9)
    assert fitted["calibrate_rows_seen"].value == sum(r.role == "calibrate" for r in reference.values())


def test_committed_fitted_files_equal_a_fresh_fit(root, reference):
    load_studies()
    studies = [s for s in registered() if not s.startswith("pytest-")]
    if not studies:
        pytest.skip("no study registers a fit yet (routertwin.studies.*)")
    fresh = fit_all(reference, studies, root)
    for study, params in fresh.items():
        path = fitted_path(root, study)
        assert path.is_file(), f"{path} missing: run `routertwin calibrate`"
        assert path.read_text(encoding="utf-8") == render(study, params), f"{path} is stale: run `routertwin calibrate`"


def test_calibrate_command_writes_fitted_file_with_row_ids(test_study, root, tmp_path):
    (tmp_path / "validation").mkdir()
    shutil.copy(root / "validation" / "reference.csv", tmp_path / "validation" / "reference.csv")
    assert calibration.calibrate_command(tmp_path, [test_study], check=False) == 0
    text = fitted_path(tmp_path, test_study).read_text()
    assert "rows: [cn68-se-64b-1c, cn68-se-128b-1c, cn68-se-256b-1c]" in text
    params = calibration.load_fitted(fitted_path(tmp_path, test_study))
    assert params["base_cycles"] == pytest.approx(1.5e9 / 3.3e6)
    assert calibration.calibrate_command(tmp_path, [test_study], check=True) == 0
    fitted_path(tmp_path, test_study).write_text(text.replace("value: 0", "value: 1", 1) + "# edited\n")
    assert calibration.calibrate_command(tmp_path, [test_study], check=True) == 1
