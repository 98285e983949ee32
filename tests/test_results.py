"""Result files: byte-identical for the same seed, written atomically, and
nothing that looks valid after a failed run."""

import json
import os

import pytest

from conftest import DATA, run_cli
from routertwin import results
from routertwin.results import CaseResult, write_results
from routertwin.scenario_loader import load_scenario


def test_same_seed_gives_byte_identical_json_and_csv(tmp_path):
    # Run outside the project: its git commit (recorded in the JSON) moves
    # whenever anyone commits; tests/test_provenance.py pins it in a fixed tree.
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run_cli("run", DATA / "mmc_teaching.yaml", "--out", out, cwd=tmp_path).returncode == 0
    for name in ("mmc-teaching.json", "mmc-teaching.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_json_records_version_file_seed_and_parameters(tmp_path, root):
    assert run_cli("run", DATA / "mmc_teaching.yaml", "--out", tmp_path, "--seed", "5", cwd=root).returncode == 0
    doc = json.loads((tmp_path / "mmc-teaching.json").read_text())
    assert doc["seed"] == 5
    assert doc["scenario_file"] == "tests/data/mmc_teaching.yaml"  # relative to the project root
    assert doc["parameters"]["servers"] == [1, 2, 4]
    assert doc["routertwin_version"]
    assert list(doc) == sorted(doc)
    assert len(doc["cases"]) == 6


def test_other_seed_changes_simulated_metrics_only(tmp_path):
    for seed in (1, 2):
        assert run_cli("run", DATA / "mmc_teaching.yaml", "--out", tmp_path / str(seed), "--seed", seed).returncode == 0
    one, two = (json.loads((tmp_path / s / "mmc-teaching.json").read_text())["cases"] for s in ("1", "2"))
    assert [c["metrics"]["wait_s"] for c in one] == [c["metrics"]["wait_s"] for c in two]
    assert [c["metrics"]["sim_wait_s"] for c in one] != [c["metrics"]["sim_wait_s"] for c in two]


def test_failed_run_leaves_no_output_files(write, tmp_path):
    bad = write("bad.yaml", (DATA / "mmc_teaching.yaml").read_text().replace("utilization:", "utilisation:"))
    out = tmp_path / "out"
    proc = run_cli("run", DATA / "mmc_teaching.yaml", bad, "--out", out)
    assert proc.returncode == 2
    assert not out.exists() or list(out.iterdir()) == []


def test_write_failure_leaves_neither_file_nor_temporary(tmp_path, monkeypatch):
    sc = load_scenario(DATA / "mmc_teaching.yaml")
    cases = [CaseResult("c1", {"servers": 1}, {"wait_s": 1.0})]
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(results.os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_results(tmp_path, sc, cases)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert not (tmp_path / "mmc-teaching.csv").exists()
    assert not (tmp_path / "mmc-teaching.json").exists()  # renamed first, removed on failure


def test_csv_has_one_row_per_case_and_union_of_columns(tmp_path):
    cases = [CaseResult("a", {"x": 1}, {"m": 0.5}, "cpu"), CaseResult("b", {"x": 2}, {"m": 1.5, "n": 2.0})]
    text = results.to_csv(cases)
    assert text.splitlines() == [
        "case,metric.m,metric.n,param.x,bottleneck",
        "a,0.5,,1,cpu",
        "b,1.5,2.0,2,",
    ]
    frame = results.to_frame(cases)
    assert list(frame["metric.m"]) == [0.5, 1.5]
