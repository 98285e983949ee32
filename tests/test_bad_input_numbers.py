"""Numbers no physical run can have -- infinite, NaN, subnormal, beyond what
fits in memory or time -- are refused when the scenario loads: one line
naming file, line (or the --set flag) and key, exit status 2, no output
file. Each test runs the CLI as a user would."""

import json
import math
import time

import pytest
from ruamel.yaml import YAML

from conftest import MM1_SCENARIO, PLATFORMS, ROOT, line_of, one_line, run_cli
from routertwin.results import CaseResult, NotANumberError, write_results
from routertwin.scenario_loader import load_scenario

QUEUE = MM1_SCENARIO

ROUTER = f"""
scenario: r
kind: router
seed: 1
platform: {PLATFORMS}/t640.yaml
fitted: {PLATFORMS}/fitted/t640.yaml
mode: steady
duration_s: 1
cases:
  - case: c40
    ip_bytes: 40
    routes: 500
"""

PIPELINE = f"""
scenario: p
kind: pipeline
seed: 1
platform: {PLATFORMS}/cn68xx-1500-ddr3-1066.yaml
workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
fitted: {PLATFORMS}/fitted/octeon.yaml
method: packet
duration_us: 100
warmup_us: 20
sweep: {{frame: [64], cores: [1]}}
"""


def refused(write, tmp_path, text: str, *flags) -> tuple[str, str]:
    """Run the CLI on `text`; assert exit 2, one stderr line, no output
    folder; return (path, the line)."""
    path = write("s.yaml", text)
    out = tmp_path / "out"
    return str(path), one_line(run_cli("run", path, "--out", out, *flags), out)


def test_router_duration_of_1e300_seconds_is_refused_not_reported_as_zero_pps(write, tmp_path):
    text = ROUTER.replace("duration_s: 1", "duration_s: 1e300")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'duration_s')}: key 'duration_s': ")
    assert "less than or equal to 86400" in line


@pytest.mark.parametrize("value", [".inf", "1e400", ".nan"])
def test_queue_service_rate_that_is_not_finite_is_refused(write, tmp_path, value):
    text = QUEUE.replace("service_rate: 100", f"service_rate: {value}")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'service_rate')}: key 'service_rate': ")
    assert "finite number" in line


def test_queue_subnormal_service_rate_is_refused_not_reported_as_null(write, tmp_path):
    # 1e-320 is subnormal: 1/mu overflows to inf and every wait came back null.
    text = QUEUE.replace("service_rate: 100", "service_rate: 1e-320")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'service_rate')}: key 'service_rate': ")
    assert "greater than or equal to 0.000001 (got 1e-320)" in line


def test_queue_with_a_billion_servers_is_refused_at_once(write, tmp_path):
    text = QUEUE.replace("model: mm1", "model: mmc").replace("utilization", "servers: [1000000000]\nutilization")
    start = time.monotonic()
    path, line = refused(write, tmp_path, text)
    assert time.monotonic() - start < 60  # the Erlang B recursion over 1e9 servers never finished
    assert line.startswith(f"{path}:{line_of(text, 'servers')}: key 'servers[0]': ")
    assert "less than or equal to 100000" in line


@pytest.mark.parametrize("value", ["1e400", ".inf"])
def test_set_of_an_infinite_duration_is_a_flag_error_not_an_internal_error(write, tmp_path, value):
    path, line = refused(write, tmp_path, PIPELINE, "--set", f"duration_us={value}")
    assert line == f"{path}: --set key 'duration_us': Input should be a finite number (got inf)"


@pytest.mark.parametrize("method", ["packet", "analytic", "both"])
def test_offered_load_above_line_rate_is_refused_whatever_the_method(write, tmp_path, method):
    text = PIPELINE.replace("method: packet", f"method: {method}") + "offered_load: 5\n"
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'offered_load')}: key 'offered_load': ")
    assert "less than or equal to 1" in line


def test_pipeline_duration_of_1e30_us_is_refused(write, tmp_path):
    text = PIPELINE.replace("duration_us: 100", "duration_us: 1e30").replace("warmup_us: 20", "warmup_us: 1e29")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'duration_us')}: key 'duration_us': ")
    assert "less than or equal to 1000000" in line


def test_pipeline_with_a_billion_flows_is_refused(write, tmp_path):
    path, line = refused(write, tmp_path, PIPELINE + "flows: 1000000000\n")
    assert line.startswith(f"{path}:{line_of(PIPELINE + 'flows: 1', 'flows')}: key 'flows': ")


def test_router_packet_mode_beyond_memory_is_refused_before_allocating(write, tmp_path):
    # Independent count: 32 OC-192 ports, 9584640000 bit/s of SONET payload
    # each, 40-byte packets in 49-byte frames (shared flag, address, control,
    # protocol, 32-bit FCS): 1000 s is 7.8e11 frames, far over 5e7.
    text = ROUTER.replace("mode: steady", "mode: packet").replace("duration_s: 1", "duration_s: 1000")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'duration_s')}: key 'duration_s': mode packet would simulate ")
    frames = 1000 * 32 * 9584640000 / (8 * (40 + 1 + 2 + 2 + 4))
    assert f"{frames:.3g} frames" in line


def test_router_two_billion_routes_are_refused(write, tmp_path):
    text = ROUTER.replace("routes: 500", "routes: 2000000000")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'routes:')}: key 'cases[0].routes': ")
    assert f"less than or equal to {2**24}" in line


def test_router_routes_beyond_the_slash24s_after_the_first_prefix_are_refused(write, tmp_path):
    plat = YAML(typ="safe").load((PLATFORMS / "t640.yaml").read_text())
    first = [int(x) for x in plat["route_first_prefix"].split(".")]
    free = 2**24 - (first[0] << 16 | first[1] << 8 | first[2])  # /24s from the first prefix to 255.255.255.0
    text = ROUTER.replace("routes: 500", f"routes: {free + 1}")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, 'routes:')}: key 'cases[0].routes': {free + 1} routes do not fit")
    assert line.endswith(f"give at most {free}")
    # ... and exactly that many load.
    load_scenario(write("ok.yaml", ROUTER.replace("routes: 500", f"routes: {free}")))


@pytest.mark.parametrize("key,value,bound", [
    ("resolution", "1e-300", "greater than or equal to 0.000001"),  # log2(1e300) ~ 1000 bisection trials
    ("step", "1e-300", "greater than or equal to 0.001"),  # 1e300 loss-curve trials
    ("offered_load", "1e-300", "greater than or equal to 0.000001"),
])
def test_router_search_granularity_that_would_never_finish_is_refused(write, tmp_path, key, value, bound):
    text = ROUTER.replace("    routes: 500", f"    routes: 500\n    {key}: {value}")
    path, line = refused(write, tmp_path, text)
    assert line.startswith(f"{path}:{line_of(text, key + ':')}: key 'cases[0].{key}': ")
    assert bound in line


def test_rfc2544_duration_flag_beyond_memory_or_time_is_one_line_exit_2(write, tmp_path):
    packet = write("r.yaml", ROUTER.replace("mode: steady", "mode: packet").replace("duration_s: 1", "duration_s: 0.001"))
    pipe = write("p.yaml", PIPELINE)
    for path, duration, says in ((packet, "10", "mode packet would simulate 7.82e+09 frames"),
                                 (pipe, "1e9", "a trial of 1e+09 s is longer than the packet engine's limit of 1 s")):
        proc = run_cli("rfc2544", path, "--method", "frmol", "--duration", duration, "--out", tmp_path / "out")
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and f"{path}: case '" in proc.stderr and says in proc.stderr
    assert not (tmp_path / "out").exists()


def test_unstable_queue_writes_inf_as_a_string_not_null(write, tmp_path):
    path = write("u.yaml", QUEUE.replace("utilization: [0.5]", "utilization: [1.5]"))
    assert run_cli("run", path, "--out", tmp_path).returncode == 0
    metrics = json.loads((tmp_path / "q.json").read_text())["cases"][0]["metrics"]
    assert metrics["wait_s"] == "inf" and metrics["queue_len"] == "inf"
    assert metrics["throughput"] == 100.0  # c mu at saturation


def test_nan_metric_is_an_internal_error_naming_the_metric_and_writes_nothing(write, tmp_path):
    sc = load_scenario(write("q.yaml", QUEUE))
    cases = [CaseResult(case="c1", metrics={"pps": 1.0, "wait_s": math.nan})]
    with pytest.raises(NotANumberError, match=r"scenario 'q' case 'c1': metric 'wait_s' is NaN"):
        write_results(tmp_path / "out", sc, cases)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_native_value_error_is_a_scenario_error_and_other_scenarios_still_run(write, monkeypatch):
    # A value the load-time checks let through and the native model rejects
    # (simulated here: no real input reaches it any more) must name the
    # scenario file and the native key, and must not stop the other scenarios.
    from routertwin import _core
    from routertwin.parallel import Job, run_jobs

    def rejects(cfg):
        raise ValueError("key 'duration_s': must be positive")

    monkeypatch.setattr(_core, "run_router", rejects)
    bad, good = write("r.yaml", ROUTER), write("q.yaml", QUEUE)
    first, second = run_jobs([Job(str(bad)), Job(str(good))], jobs=1)
    assert first.error == f"{bad}: case 'c40': native model: key 'duration_s': must be positive"
    assert second.error is None and second.cases[0].metrics["utilization"] == 0.5
