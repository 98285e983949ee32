"""Every assumed number of a profile declares its plausible range, and every
range points at an assumed number (routertwin.assumptions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from routertwin import assumptions
from routertwin.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
PROFILES = sorted([*(ROOT / "scenarios" / "platforms").glob("*.yaml"),
                   *(ROOT / "scenarios" / "workloads").glob("*.yaml")])
# core-types.yaml is read by routertwin.cost (derived prices, informative
# only) and declares each assumed figure's range beside it: cpi_low/cpi_high
# for cpi, stall_low/stall_high for stall_cycles_per_line.
SIBLING_RANGES = {"core-types.yaml": {"cpi": ("cpi_low", "cpi_high"),
                                     "stall_cycles_per_line": ("stall_low", "stall_high")}}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_assumed_number_has_a_range_and_every_range_an_assumed_number(path):
    leaves = assumptions.numbers(path)
    assumed = {p for p, leaf in leaves.items() if leaf.assumed}
    if path.name in SIBLING_RANGES:
        pairs = SIBLING_RANGES[path.name]
        ends = {e for lo_hi in pairs.values() for e in lo_hi}
        for p in sorted(assumed):
            *parent, key = p.split(".")
            assert key in pairs or key in ends, f"{path.name}: {p} is assumed and has no range"
            if key in pairs:
                lo, hi = (leaves[".".join([*parent, e])].value for e in pairs[key])
                assert lo < hi and lo <= leaves[p].value <= hi, f"{path.name}: {p} outside its range"
        return
    ranges = {a.path: a for a in assumptions.profile_assumptions(path, nominal_inside=True)}
    missing = sorted(assumed - set(ranges))
    assert not missing, f"{path.name}: assumed numbers without a range in assumption_ranges: {', '.join(missing)}"
    for a in ranges.values():  # profile_assumptions already refuses the rest; this says it again, plainly
        assert a.path in assumed and a.low < a.high and a.low <= a.nominal <= a.high
        assert len(a.why.split()) >= 4


def test_the_project_profiles_declare_ranges():
    # The test above must not pass because no file has a range.
    total = sum(len(assumptions.profile_assumptions(p)) for p in PROFILES if p.name not in SIBLING_RANGES)
    assert total >= 60


PROFILE = """\
cores:
  count: 32           # seed 002 section 2.1 table: rows go up to "64byte-32core"
  clock_hz: 1.5e9     # seed 002 section 2.1 table header "CN68-1.5G"
memory:
  # assumption: a common planning figure for sustained DRAM efficiency
  efficiency: 0.7
  controllers: 4      # assumption: the product brief lists four controllers
assumption_ranges:
  memory.efficiency: {low: 0.5, high: 0.85, why: "planning figures run 50 to 85 percent"}
  RANGES
"""


def _write(tmp_path, extra: str) -> Path:
    p = tmp_path / "plat.yaml"
    p.write_text(PROFILE.replace("RANGES", extra), encoding="utf-8")
    return p


def test_ranges_are_read_with_their_nominal_values(tmp_path):
    p = _write(tmp_path, "memory.controllers: {low: 2, high: 4, why: \"a board may populate two\"}")
    got = {a.path: a for a in assumptions.profile_assumptions(p)}
    assert got["memory.efficiency"].nominal == 0.7 and got["memory.efficiency"].high == 0.85
    c = got["memory.controllers"]
    assert (c.low, c.high, c.nominal) == (2, 4, 4) and isinstance(c.low, int)
    assert c.where.endswith("plat.yaml:10")


@pytest.mark.parametrize("extra, message", [
    ("memory.efficiencyy: {low: 0.5, high: 0.9, why: \"four words of reason\"}",
     "plat.yaml:10: key 'assumption_ranges.memory.efficiencyy': unknown path: 'memory.efficiencyy' names no "
     "number of this file; did you mean 'memory.efficiency'?"),
    ("cores.count: {low: 16, high: 48, why: \"four words of reason\"}",
     "plat.yaml:10: key 'assumption_ranges.cores.count': 'cores.count' (line 2) is cited, not marked "
     "'assumption:': only assumed numbers take a range"),
    ("memory.controllers: {low: 4, high: 2, why: \"four words of reason\"}",
     "plat.yaml:10: key 'assumption_ranges.memory.controllers': low 4 must be below high 2"),
    ("memory.controllers: {low: 2, high: 8, why: \"too short\"}",
     "plat.yaml:10: key 'assumption_ranges.memory.controllers': why: say on what the range rests"),
    ("memory.controllers: {low: 2, high: 8, why: \"four words of reason\", source: x}",
     "plat.yaml:10: key 'assumption_ranges.memory.controllers': source: Extra inputs are not permitted"),
])
def test_bad_ranges_name_file_line_and_key(tmp_path, extra, message):
    with pytest.raises(ScenarioError) as exc:
        assumptions.profile_assumptions(_write(tmp_path, extra))
    assert str(exc.value).startswith(f"{tmp_path}/{message}")


def test_a_value_outside_its_range_loads_but_fails_the_project_check(tmp_path):
    # A what-if copy of a profile may set a number outside the range its
    # source declared; the project's own profiles may not.
    p = _write(tmp_path, "memory.controllers: {low: 1, high: 3, why: \"four words of reason\"}")
    assert {a.path for a in assumptions.profile_assumptions(p)} == {"memory.efficiency", "memory.controllers"}
    with pytest.raises(ScenarioError, match=r"plat.yaml:10: key 'assumption_ranges.memory.controllers': the "
                                            r"assumed value 4 lies outside \[1, 3\]"):
        assumptions.profile_assumptions(p, nominal_inside=True)


def test_a_fitted_parameter_takes_no_range(tmp_path):
    (tmp_path / "fitted").mkdir()
    (tmp_path / "fitted" / "s.yaml").write_text(
        "study: s\nparams:\n  io.ceiling:\n    value: 3.0\n    rows: [r]\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"plat.yaml:10: key 'assumption_ranges.io.ceiling': 'io.ceiling' is a "
                                            r"fitted parameter"):
        assumptions.profile_assumptions(_write(tmp_path, "io.ceiling: {low: 1, high: 4, why: \"four words of reason\"}"))


def test_an_end_the_profile_model_refuses_is_an_error_when_the_profile_loads(tmp_path):
    # PlatformProfile.memory.efficiency must be in (0, 1]: an end of 1.2 is no platform.
    from routertwin.runners._shared.profiles import load_profile
    from routertwin.runners.pipeline.profiles import PlatformProfile

    src = (ROOT / "scenarios" / "platforms" / "cn68xx-1500-ddr3-1066.yaml").read_text(encoding="utf-8")
    bad = src.replace("memory.efficiency: {low: 0.5, high: 0.85", "memory.efficiency: {low: 0.5, high: 1.2")
    assert bad != src
    p = tmp_path / "cn68.yaml"
    p.write_text(bad, encoding="utf-8")
    line = next(i for i, t in enumerate(bad.splitlines(), 1) if t.lstrip().startswith("memory.efficiency:"))
    with pytest.raises(ScenarioError, match=rf"cn68.yaml:{line}: key 'assumption_ranges.memory.efficiency': high end "
                                            r"1.2 is not a valid value here: Input should be less than or equal to 1"):
        load_profile(p, PlatformProfile)
    good = tmp_path / "good.yaml"
    good.write_text(src, encoding="utf-8")
    assert load_profile(good, PlatformProfile).memory.efficiency == 0.7


def test_a_bad_range_stops_routertwin_run_with_status_2(tmp_path):
    import shutil

    proj = tmp_path / "proj"
    shutil.copytree(ROOT / "scenarios", proj / "scenarios")
    plat = proj / "scenarios" / "platforms" / "cn68xx-1500-ddr3-1066.yaml"
    text = plat.read_text(encoding="utf-8")
    plat.write_text(text.replace("  memory.efficiency:", "  memory.efficency:"), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "routertwin", "run", str(proj / "scenarios" / "octeon" / "cn68-se.yaml"),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "key 'assumption_ranges.memory.efficency': unknown path" in out.stderr
    assert "did you mean 'memory.efficiency'?" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()


def test_set_number_changes_one_number_and_nothing_else():
    path = ROOT / "scenarios" / "platforms" / "t640.yaml"
    text = path.read_text(encoding="utf-8")
    leaf = assumptions.numbers(path)["fabric.gbps_per_pfe"]
    new = assumptions.set_number(text, leaf, 40.0)
    diff = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
    assert diff == [("  gbps_per_pfe: 48.4", "  gbps_per_pfe: 40.0")]
