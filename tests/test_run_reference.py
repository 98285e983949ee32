"""`routertwin run` on a scenario that replays seed figures shows them beside the twin."""

import subprocess
import sys
from conftest import ROOT


def test_run_prints_the_reference_rows_the_scenario_replays(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "routertwin", "run", "scenarios/octeon/cn68-se-1core.yaml", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, env={"COLUMNS": "250", "PATH": "/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "reference vs twin" in proc.stdout
    # the four 1-core rows of seed 002 (64/128/256/1518 bytes), each judged
    for rid in ("cn68-se-64b-1c", "cn68-se-128b-1c", "cn68-se-256b-1c", "cn68-se-1518b-1c"):
        line = next(ln for ln in proc.stdout.splitlines() if rid in ln)
        assert "pass" in line or "FAIL" in line
    # the 1518-byte prediction is the 40G line rate, 40e9 / (8 * (1518 + 20)) = 3.2510 Mpps
    line = next(ln for ln in proc.stdout.splitlines() if "cn68-se-1518b-1c" in ln)
    assert "3.25e+06" in line and "line_rate" in line
