"""`routertwin rfc2544`: the RFC 2544 methods over any scenario whose runner
offers a tester (kind router and kind pipeline), checked against closed-form
capacities; its files (JSON, CSV, PNG) and its one-line errors."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math

import pytest

from routertwin import _core
from routertwin.errors import UserError
from routertwin.methods import command
from routertwin.methods.tester import case_testers
from routertwin.runners import pipeline
from routertwin.runners.pipeline.profiles import PlatformProfile, load_profile
from routertwin.runners.router.analytic import max_frame_rate
from routertwin.runners.router.platform import load_platform
from routertwin.scenario_loader import load_scenario

from conftest import ROOT, run_cli

OCTEON_1C = ROOT / "scenarios" / "octeon" / "cn68-se-1core.yaml"
T640_PLATFORM = ROOT / "scenarios" / "platforms" / "t640.yaml"


def _args(**kw) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    command.add_arguments(p)
    ns = p.parse_args(["x.yaml", "--method", kw.pop("method")])
    for k, v in kw.items():
        setattr(ns, k, v)
    return ns


def _octeon_case(duration_s: float):
    sc = load_scenario(OCTEON_1C)
    cases = {tc.case: tc for tc in case_testers(pipeline, sc, duration_s=duration_s)}
    return sc, cases["64b-1c"]


def _service_s(tc) -> float:
    """The core's per-packet service time as the engine prices it: one light
    trial, no queueing."""
    return tc.trial_at(tc.size, 1)(0.01).extra["service_us"] * 1e-6


def test_octeon_one_core_ndr_is_the_closed_form_capacity():
    # 1 core, 64-byte frames: capacity mu = 1 / service time. The tester
    # loses a frame only once the input queue (D packets) overflows, which at
    # a load above capacity takes D / (offered - mu) seconds: over a trial of
    # T seconds the NDR can exceed mu by at most (D + 1) / T frames/s.
    duration = 0.1
    sc, tc = _octeon_case(duration)
    mu = 1.0 / _service_s(tc)
    line = tc.max_frame_rate(64)
    assert line == pytest.approx(40e9 / (8 * (64 + 20)))  # IEEE 802.3 line rate, preamble + IFG
    depth = load_profile(sc.config.platform, PlatformProfile).input_buffer_packets
    res, log = command.run_method(tc, "ndr-pdr", _args(method="ndr-pdr", resolution=0.0002), seed=1)
    cap = mu / line
    assert cap - 0.0002 <= res["ndr_load"] <= cap + (depth + 1) / (duration * line)
    ndr_trial = [r for r in log.trials() if r.offered_load == res["ndr_load"]][0]
    assert ndr_trial.lost == 0
    assert res["pdr_load"] >= res["ndr_load"]
    # every trial above the capacity plus the buffer's allowance lost frames
    assert all(r.lost > 0 for r in log.trials() if r.offered_load > cap + (depth + 1) / (duration * line))


def test_octeon_back_to_back_burst_is_the_queue_over_the_excess_rate():
    # A burst of N frames at line rate L into one core of rate mu leaves
    # N (1 - mu / L) frames waiting when it ends; none is lost while that
    # stays within the D-packet input queue (plus the one in service).
    sc, tc = _octeon_case(0.001)
    mu, line = 1.0 / _service_s(tc), tc.max_frame_rate(64)
    depth = load_profile(sc.config.platform, PlatformProfile).input_buffer_packets
    res, _ = command.run_method(tc, "back-to-back", _args(method="back-to-back", repeats=1, max_frames=5000),
                                seed=1)
    expect = depth / (1 - mu / line)
    assert expect - 2 <= res["frames_mean"] <= (depth + 2) / (1 - mu / line) + 1


def test_router_throughput_at_41_bytes_is_the_fabric_cell_capacity(tmp_path, write):
    # Small ingress buffer so overload shows within a 1 s trial; 8 ports keep
    # it quick and change no per-PFE arithmetic.
    text = T640_PLATFORM.read_text().replace("ingress_us: 100000", "ingress_us: 10")
    text = text.replace("\nports: 32\n", "\nports: 8\n")
    (tmp_path / "plat.yaml").write_text(text)
    scen = write("r.yaml", f"""
        scenario: t640-small
        kind: router
        platform: plat.yaml
        fitted: {ROOT}/scenarios/platforms/fitted/t640.yaml
        mode: steady
        duration_s: 1
        cases:
          - {{case: c41, ip_bytes: 41}}
    """)
    out = tmp_path / "out"
    p = run_cli("--root", ROOT, "rfc2544", scen, "--method", "throughput", "--resolution", "0.001", "--out", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads((out / "t640-small-c41-throughput.json").read_text())
    plat = load_platform(tmp_path / "plat.yaml")
    cells = math.ceil((41 + plat.fabric.internal_header_bytes) / plat.fabric.cell_bytes)
    cap_cells = plat.fabric.gbps_per_pfe * 1e9 / (8 * plat.fabric.cell_bytes)
    demand = plat.ports_per_pfe * cells * _core.pos_theoretical_pps("OC-192", 41)
    expected = min(1.0, cap_cells / demand)
    assert expected - 0.001 <= doc["result"]["throughput_load"] <= expected + 1e-9
    assert (out / "t640-small-c41-throughput-loss-vs-load.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "throughput" in p.stdout and "% of max" in p.stdout


def test_router_max_frame_rate_is_the_reports_theoretical_maximum():
    plat = load_platform(T640_PLATFORM)
    assert max_frame_rate(plat, 40) == pytest.approx(782_419_591.8, abs=0.1)
    assert max_frame_rate(plat, 42) == pytest.approx(751_736_470.6, abs=0.1)


def test_size_sweep_writes_json_csv_and_plot_and_stops_at_first_loss_free_size(tmp_path):
    out = tmp_path / "out"
    # One core (3.3 Mpps) behind a 40G port: line rate exceeds the core's
    # capacity until the frame is long enough; the first loss-free size is
    # the smallest F with line_rate(F) <= mu (+ what the queue absorbs).
    args = ["--root", ROOT, "rfc2544", OCTEON_1C, "--method", "size-sweep", "--case", "64b-1c",
            "--sizes", "1400", "1600", "--size-step", "10", "--duration", "0.02", "--out", out]
    p = run_cli(*args)
    assert p.returncode == 0, p.stderr
    stem = out / "cn68-se-1core-64b-1c-size-sweep"
    doc = json.loads(stem.with_suffix(".json").read_text())
    rows = list(csv.DictReader(io.StringIO(stem.with_suffix(".csv").read_text())))
    assert [int(r["size"]) for r in rows] == [t["size"] for t in doc["trials"]]
    first = doc["result"]["first_zero_loss_size"]
    assert first == int(rows[-1]["size"])
    assert int(rows[-1]["lost"]) == 0 and all(int(r["lost"]) > 0 for r in rows[:-1])
    sc, tc = _octeon_case(0.02)
    mu = 1.0 / _service_s(tc)
    # the first loss-free size offers at most mu plus the queue's allowance
    depth = load_profile(sc.config.platform, PlatformProfile).input_buffer_packets
    assert tc.max_frame_rate(first) <= mu + (depth + 1) / 0.02
    assert tc.max_frame_rate(first - 10) > mu
    assert (out / "cn68-se-1core-64b-1c-size-sweep-size-sweep.png").stat().st_size > 1000
    # same seed, same files
    first_json = stem.with_suffix(".json").read_bytes()
    assert run_cli(*args).returncode == 0
    assert stem.with_suffix(".json").read_bytes() == first_json


@pytest.mark.parametrize("argv, message", [
    (["--method", "ndr-pdr", "--resolution", "1.5"], "routertwin rfc2544: --resolution 1.5: must be in (0, 1)"),
    (["--method", "frmol", "--case", "64b-9c"], "--case 64b-9c: no such case; cases: 64b-1c, 128b-1c"),
    (["--method", "fast"], "argument --method: invalid choice: 'fast'"),
    (["--method", "loss-curve", "--step", "0.2"], "--step 0.2: must be in (0, 0.1]"),
    (["--method", "size-sweep", "--sizes", "40", "80"], "--sizes: size 40 is outside 64..9216"),
    (["--method", "frmol", "--sizes", "64", "80"], "--sizes 64 80: applies to --method size-sweep only"),
])
def test_bad_flags_are_one_line_with_exit_status_2(argv, message, tmp_path):
    p = run_cli("--root", ROOT, "rfc2544", OCTEON_1C, *argv, "--out", tmp_path)
    assert p.returncode == 2
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    assert message in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_scenario_key_names_file_and_line(write, tmp_path):
    scen = write("bad.yaml", """
        scenario: bad
        kind: router
        platform: ../nowhere.yaml
        cases:
          - {case: a}
    """)
    p = run_cli("--root", ROOT, "rfc2544", scen, "--method", "frmol", "--out", tmp_path / "o")
    assert p.returncode == 2
    assert p.stderr.strip().startswith(f"{scen}:3: key 'platform': file not found")


def test_kind_without_a_tester_is_refused_in_one_line(tmp_path, write):
    from routertwin.runners import queue_analytic

    assert not hasattr(queue_analytic, "testers")
    sc = write("q.yaml", """
        scenario: q
        kind: queue_analytic
        model: mm1
        service_rate: 1000
        utilization: [0.5]
    """)
    p = run_cli("--root", ROOT, "rfc2544", sc, "--method", "frmol", "--out", tmp_path / "o")
    assert p.returncode == 2 and "offers no tester" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_frame_mix_case_cannot_be_offered(write):
    scen = write("mix.yaml", f"""
        scenario: mix
        kind: pipeline
        platform: {ROOT}/scenarios/platforms/cn68xx-1500-ddr3-1066.yaml
        workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
        fitted: {ROOT}/scenarios/platforms/fitted/octeon.yaml
        method: analytic  # a mix loads only for the analytic method; the tester is packet level
        mixes:
          imix: [{{bytes: 64, weight: 7}}, {{bytes: 1518, weight: 1}}]
        cases:
          - {{frame: imix, cores: 1}}
    """)
    tc = case_testers(pipeline, load_scenario(scen))[0]
    with pytest.raises(UserError, match="frame mix 'imix'"):
        command.run_method(tc, "frmol", _args(method="frmol"), seed=1)
