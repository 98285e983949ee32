"""Flow-level traffic on the router's tester ports (issue 16): flows that
start by an arrival process, carry a heavy-tailed number of packets at a
per-flow rate, then end (FlowLevelProcess, traffic-profile.h), checked
against closed forms computed here, not by the model:

- offered load: each port offers offered_load x its theoretical rate, so the
  packets sent are a compound Poisson sum of flow sizes, mean lambda T E[S]
  = load x theoretical x T, variance lambda T E[S^2];
- Little's law for the flows active (a flow from its first packet to its
  last: D = (S - 1) / flow_pps): L = lambda (E[S] - 1) / flow_pps; with
  flow_pps 0 each flow sends at the port's offered rate / flows, so L =
  flows (1 - 1 / E[S]) a port. E[S] = E[ceil X] is summed here term by
  term. The time-average over T of an M/G/infinity occupancy varies by
  about lambda E[D^2] / T;
- same seed, same bits; another seed, other instants.
"""

from __future__ import annotations

import math

import pytest

from routertwin import _core
from routertwin.progress import silent
from routertwin.runners import router
from routertwin.scenario_loader import load_scenario

from conftest import ROOT, run_cli


def small_router(**over) -> dict:
    """Two OC-3 ports, one per forwarding engine (test_router_arrivals.py's
    setup): a port's frames meet only its own line at the tester."""
    cfg = {"mode": "packet", "ports": 2, "ports_per_pfe": 1, "sonet": "OC-3", "ip_bytes": 40,
           "offered_load": 0.5, "fabric_gbps_per_pfe": 1.0, "duration_s": 0.5, "batch_us": 100.0,
           "fixed_latency_us": 10.0, "seed": 1, "arrivals": "poisson", "flow_sizes": "lognormal",
           "lognormal_mu": 2.0, "lognormal_sigma": 1.0}
    cfg.update(over)
    return cfg


def lognormal_moments(mu: float, sigma: float) -> tuple[float, float]:
    """E[ceil X] (the sum over k >= 0 of P(X > k), term by term) and a bound
    on E[(ceil X)^2] <= E[(X + 1)^2] of a lognormal X."""
    es = 1 + sum(0.5 * math.erfc((math.log(k) - mu) / (sigma * math.sqrt(2))) for k in range(1, 10**5))
    ex = math.exp(mu + sigma**2 / 2)
    return es, math.exp(2 * mu + 2 * sigma**2) + 2 * ex + 1


def test_flow_level_traffic_offers_the_cases_load():
    out = _core.run_router(small_router(flows=50))
    port_pps = out["theoretical_pps"] / 2
    es, es2 = lognormal_moments(2, 1)
    starts = 0.5 * port_pps / es * 0.5  # a port's flows in 0.5 s
    for p in out["ports"]:
        # compound Poisson: sd sqrt(starts E[S^2]); the stationary start and
        # the flows cut at the end move it by at most a few flows' packets
        assert p["tx_packets"] == pytest.approx(0.5 * port_pps * 0.5, abs=4 * math.sqrt(starts * es2) + 50 * es)
    assert out["flows_started"] == pytest.approx(2 * starts, abs=4 * math.sqrt(2 * starts))
    assert out["lost_packets"] == 0


def test_active_flows_obey_littles_law():
    es, es2 = lognormal_moments(2, 1)
    out = _core.run_router(small_router(flows=50))
    port_pps = out["theoretical_pps"] / 2
    lam = 0.5 * port_pps / es  # flow starts a port
    flow_pps = 0.5 * port_pps / 50
    sd = math.sqrt(2 * lam * es2 / flow_pps**2 / 0.5)  # two ports' time-averages
    assert out["flows_active_mean"] == pytest.approx(2 * 50 * (1 - 1 / es), abs=4 * sd)
    assert out["flows_active_max_port"] > 50 * (1 - 1 / es)
    # an explicit per-flow rate: L = lambda (E[S] - 1) / flow_pps (about 5.4 flows a port)
    fast = _core.run_router(small_router(flow_pps=30000.0))
    sd = math.sqrt(2 * lam * es2 / 30000.0**2 / 0.5)
    assert fast["flows_active_mean"] == pytest.approx(2 * lam * (es - 1) / 30000.0, abs=4 * sd)


def test_flow_level_traffic_is_seeded_and_reproducible():
    cfg = small_router(duration_s=0.05, flow_sizes="pareto", pareto_alpha=1.3, pareto_min_packets=2.0)
    a = _core.run_router(cfg)
    b = _core.run_router(cfg)
    a.pop("wall_s", None), b.pop("wall_s", None)  # the only figure that is not simulated
    assert a == b
    c = _core.run_router({**cfg, "seed": 2})
    assert c["tx_packets"] != a["tx_packets"]


def test_flow_level_traffic_is_refused_where_it_cannot_apply():
    with pytest.raises(ValueError, match="packet only"):
        _core.run_router(small_router(mode="steady"))
    with pytest.raises(ValueError, match="pareto_alpha must be > 1"):
        _core.run_router(small_router(flow_sizes="pareto", pareto_alpha=1.0))
    with pytest.raises(ValueError, match="picks its own destinations"):
        _core.run_router(small_router(destination_popularity="zipf"))


SCENARIO = """\
scenario: flows
kind: router
seed: 1
platform: {platform}
fitted: {fitted}
mode: {mode}
duration_s: 0.0002
arrivals: {{process: poisson}}
flow_mix: {flow_mix}
cases:
  - {{case: 40b, method: load, offered_load: 0.5, ip_bytes: 40}}
"""


def write_scenario(tmp_path, mode: str, flow_mix: str):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(platform=ROOT / "scenarios/platforms/t640.yaml",
                                    fitted=ROOT / "scenarios/platforms/fitted/t640.yaml", mode=mode,
                                    flow_mix=flow_mix))
    return path


def test_a_scenario_runs_heavy_tailed_flows_and_reports_them(tmp_path):
    sc = load_scenario(write_scenario(tmp_path, "packet", "{sizes: pareto, pareto_alpha: 1.5, flows: 100}"))
    [case] = router.run(sc, silent())
    # 32 ports with about 100 (1 - 1 / E[S]) flows each, E[S] = 1 +
    # zeta(1.5) = 3.61 for Pareto(1.5, 1): the 200 us
    # window's time-average, within 25 % (a heavy tail over 0.2 ms)
    assert case.metrics["flows_active_mean"] == pytest.approx(3200 * (1 - 1 / 3.61), rel=0.25)
    assert case.metrics["flows_started"] > 0 and case.metrics["loss_pct"] == 0


@pytest.mark.parametrize("mode, flow_mix, line, words", [
    ("packet", "{sizes: pareto, pareto_alpha: 1.0}", 9, "pareto_alpha"),
    ("packet", "{sizes: lognormal, popularity: zipf}", 9, "gives each flow its destination"),
    ("packet", "{sizes: pareto, flow_size: 3}", 9, "flow_size"),
    ("steady", "{sizes: lognormal}", 9, "mode packet only"),
])
def test_bad_flow_keys_name_the_line(tmp_path, mode, flow_mix, line, words):
    path = write_scenario(tmp_path, mode, flow_mix)
    r = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert f"{path}:{line}:" in r.stderr and words in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()
