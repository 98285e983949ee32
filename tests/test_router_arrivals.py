"""Random arrivals on the router's tester ports (issue 15; the arrival
processes of issue 16's traffic-profile.h), checked against closed forms,
and the packet-level window beside a steady-state trial.

A port offers frames at the instants of its arrival process; a frame starts
at its instant or when the previous frame has left the line. With Poisson
instants and frames of (nearly) one length that is an M/D/1 queue in front
of the tester's line: the mean wait is rho D / (2 (1 - rho)) and the share of
frames that wait is rho (Pollaczek-Khinchine; P(wait) = rho holds for any
M/G/1 by PASTA). D is the POS frame's wire time: 49 octets + its escapes,
which vary a little from frame to frame; their spread adds at most
2 e / (49 + e)^2 (e the mean escapes per frame, escapes being 0, 1 or 2) to
E[S^2] / E[S]^2, i.e. 1e-4 here, far below the sampling error allowed.
"""

from __future__ import annotations

import math
import statistics

import pytest

from routertwin import _core
from routertwin.progress import silent
from routertwin.runners import router
from routertwin.scenario_loader import load_scenario

from conftest import run_cli

SEEDS = range(1, 11)


def small_router(**over) -> dict:
    """Two OC-3 ports, one per forwarding engine: a port's frames meet only
    its own line at the tester (the fabric at 1 Gbit/s is loaded about 10 %,
    the egress line runs at the ingress rate)."""
    cfg = {"mode": "packet", "ports": 2, "ports_per_pfe": 1, "sonet": "OC-3", "ip_bytes": 40,
           "offered_load": 0.5, "fabric_gbps_per_pfe": 1.0, "duration_s": 0.5, "batch_us": 100.0,
           "fixed_latency_us": 10.0, "seed": 1}
    cfg.update(over)
    return cfg


def md1(out: dict, load: float) -> tuple[float, float]:
    """(rho, mean wait in us) of M/D/1 for a run's frames: Poisson at load x
    the port's theoretical rate (49-octet frames without escapes), each
    frame on the line for (49 + mean escapes) octets."""
    byte_s = 8.0 / _core.sonet_payload_bps("OC-3")
    lam = load / (49 * byte_s)
    service = (49 + out["mean_ingress_escapes"]) * byte_s
    rho = lam * service
    return rho, rho * service / (2 * (1 - rho)) * 1e6


@pytest.mark.parametrize("load", [0.5, 0.8])
def test_poisson_tester_wait_is_md1(load):
    waits, waited, expect = [], [], []
    for seed in SEEDS:
        out = _core.run_router(small_router(arrivals="poisson", offered_load=load, seed=seed))
        rho, wq = md1(out, load)
        waits.append(out["tester_wait_avg_us"])
        waited.append(out["tester_waited_fraction"])
        expect.append((rho, wq))
        # Poisson at the offered rate: frames sent match it within sampling.
        sent = out["tx_packets"] / 2
        assert sent == pytest.approx(load * out["theoretical_pps"] / 2 * 0.5, rel=5 * (1 / math.sqrt(sent)))
    rho = statistics.fmean(r for r, _ in expect)
    wq = statistics.fmean(w for _, w in expect)
    se = statistics.stdev(waits) / math.sqrt(len(waits))
    assert abs(statistics.fmean(waits) - wq) < 4 * se, (statistics.fmean(waits), wq, se)
    se_p = statistics.stdev(waited) / math.sqrt(len(waited))
    assert abs(statistics.fmean(waited) - rho) < 4 * se_p + 1e-4, (statistics.fmean(waited), rho, se_p)
    # The check has power: a wait off by 5 % would be outside 4 standard errors.
    assert 4 * se < 0.05 * wq


def test_constant_arrivals_with_slack_never_wait():
    # D/D/1 below capacity: every frame's instant finds the line free.
    out = _core.run_router(small_router(offered_load=0.5, duration_s=0.05))
    assert out["tester_waited_fraction"] == 0.0
    assert out["tester_wait_max_us"] == 0.0


@pytest.mark.parametrize("arrivals", [
    {"arrivals": "onoff", "burst_mean_frames": 16.0, "burst_peak_load": 0.9},
    {"arrivals": "mmpp", "mmpp_rate_ratio": 4.0, "mmpp_high_fraction": 0.2, "mmpp_cycle_s": 1e-3},
])
def test_bursty_arrivals_keep_the_long_run_rate(arrivals):
    # The offered rate is the process's long-run rate (within 3 %: 2 s hold
    # 2,000 MMPP cycles and about 12,000 on/off bursts per port).
    load = 0.4
    out = _core.run_router(small_router(offered_load=load, duration_s=2.0, **arrivals))
    assert out["tx_pps"] == pytest.approx(load * out["theoretical_pps"], rel=0.03)


def test_mmpp_waits_longer_than_poisson_at_the_same_rate():
    # The high state offers rate 1.0 of the line (0.4 / (0.2 x 4 + 0.8) x 4):
    # the line is saturated a fifth of the time, which Poisson at 0.4 never is.
    load = 0.4
    poisson = _core.run_router(small_router(arrivals="poisson", offered_load=load, duration_s=2.0))
    mmpp = _core.run_router(small_router(arrivals="mmpp", mmpp_rate_ratio=4.0, mmpp_high_fraction=0.2,
                                         mmpp_cycle_s=1e-3, offered_load=load, duration_s=2.0))
    assert mmpp["tester_wait_avg_us"] > 5 * poisson["tester_wait_avg_us"]


def test_random_arrivals_are_seeded_and_reproducible():
    a = _core.run_router(small_router(arrivals="poisson", duration_s=0.05, seed=3))
    b = _core.run_router(small_router(arrivals="poisson", duration_s=0.05, seed=3))
    c = _core.run_router(small_router(arrivals="poisson", duration_s=0.05, seed=4))
    assert a["tester_wait_avg_us"] == b["tester_wait_avg_us"]
    assert a["latency_histogram"] == b["latency_histogram"]
    assert a["tx_packets"] != c["tx_packets"]


def test_random_arrivals_are_refused_where_they_cannot_apply():
    with pytest.raises(ValueError, match="packet only"):
        _core.run_router(small_router(mode="steady", arrivals="poisson"))
    with pytest.raises(ValueError, match="'constant', 'poisson', 'onoff' or 'mmpp'"):
        _core.run_router(small_router(arrivals="uniform"))
    with pytest.raises(ValueError, match="burst_peak_load"):
        _core.run_router(small_router(arrivals="onoff", burst_peak_load=0.3))


SCENARIO = """\
scenario: arrivals
kind: router
seed: 1
platform: {platform}
fitted: {fitted}
mode: {mode}
duration_s: 0.0002
{extra}
cases:
  - {{case: 40b, method: load, offered_load: 0.97, ip_bytes: 40}}
"""


def write_scenario(tmp_path, mode: str, extra: str):
    from conftest import ROOT

    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(platform=ROOT / "scenarios/platforms/t640.yaml",
                                    fitted=ROOT / "scenarios/platforms/fitted/t640.yaml", mode=mode, extra=extra))
    return path


def test_a_scenario_offers_poisson_frames_in_packet_mode(tmp_path):
    sc = load_scenario(write_scenario(tmp_path, "packet", "arrivals: {process: poisson}"))
    [case] = router.run(sc, silent())
    assert case.metrics["tester_waited_fraction"] > 0.5  # rho is about 0.97
    const = load_scenario(write_scenario(tmp_path, "packet", ""))
    [case0] = router.run(const, silent())
    # constant spacing at 0.97 leaves 1.5 octets per frame: only frames
    # after a two-escape frame can find the line busy
    assert case0.metrics["tester_waited_fraction"] < 0.05


def test_random_arrivals_in_steady_mode_name_the_line(tmp_path):
    path = write_scenario(tmp_path, "steady", "arrivals: {process: mmpp}")
    r = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert f"{path}:8:" in r.stderr and "mode packet only" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_the_packet_window_is_the_same_trial_at_packet_level(tmp_path):
    # A steady-state case with packet_window_s carries the window's metrics
    # and distributions, equal to a packet-mode run of the same case over
    # the window's length.
    steady = load_scenario(write_scenario(tmp_path, "steady", "packet_window_s: 0.0001"))
    [case] = router.run(steady, silent())
    window = case.distributions["packet_window"]
    packet_path = write_scenario(tmp_path, "packet", "")
    packet_path.write_text(packet_path.read_text().replace("duration_s: 0.0002", "duration_s: 0.0001"))
    [ref] = router.run(load_scenario(packet_path), silent())
    assert window["latency_histogram"] == ref.distributions["latency_histogram"]
    assert window["egress_queue"] == ref.distributions["egress_queue"]
    assert window["loss_timeline"] == ref.distributions["loss_timeline"]
    for name in ("latency_p50", "latency_p99", "latency_p999", "latency_max", "lost_packets", "egress_queue_p99"):
        assert case.metrics[f"window_{name}"] == ref.metrics[name]
    # the case's own figures stay the steady state's
    assert "egress_queue" not in {k for k in case.distributions if k != "packet_window"}
    assert case.params["mode"] == "steady"
    # the report shows the window as a case of its own, beside the case
    from types import SimpleNamespace

    from routertwin.distributions import fmt_window_name, markdown_study, queue_length_plot, with_packet_windows

    rows = [SimpleNamespace(mapped=SimpleNamespace(scenario=steady.path, case="40b"), ref=SimpleNamespace(id="r"))]
    lines = markdown_study(rows, {steady.path: SimpleNamespace(error=None, cases=[case])})
    name = fmt_window_name(case.case, 0.0001)
    assert name == "40b-packet-0.1ms"
    [row] = [line for line in lines if line.startswith(f"| {name} |")]
    from routertwin.results import fmt

    assert f"| {fmt(ref.metrics['latency_p99'])} |" in row
    assert "egress ports" in row  # the window has the queue the steady state lacks
    assert [c.case for c in with_packet_windows([case])] == ["40b", name]
    assert queue_length_plot(with_packet_windows([case]), tmp_path / "q.png", "t").stat().st_size > 0


def test_a_packet_window_beyond_memory_names_the_line(tmp_path):
    path = write_scenario(tmp_path, "steady", "packet_window_s: 1.0")
    r = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert f"{path}:8:" in r.stderr and "packet_window_s" in r.stderr and "Traceback" not in r.stderr
