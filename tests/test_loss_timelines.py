"""Loss per port, over time and by reason for the pipeline (Octeon) and lb
(ADX) kinds (issue 15), against line-rate arithmetic.

Independent truths: a constant-rate stream offered at twice what one core
serves loses, once its queue is full, exactly (offered - capacity) x bin
packets in every time bin, all for the queue's reason and all on the port
the overload comes in on; round-robin flows with one flow in four unrouted
lose exactly every fourth packet, for `no_route`; and the bins of a run add
up to the drop counters the engine keeps on its own. Same seed, same bins.
"""

from __future__ import annotations

import pytest

from routertwin import _core
from routertwin.distributions import (lb_distributions, lb_metrics, loss_clustering, loss_distribution, loss_rows,
                                      loss_timeline_plot)

# One core of 1,000 cycles at 1 GHz serves 1 Mpps; 2 Mpps of 64-byte frames
# (far below the 14.88 Mpps line rate of 10GbE) arrive at constant spacing.
PIPE = {"num_cores": 1, "clock_hz": 1e9, "fixed_cycles_per_packet": 1000, "offered_pps": 2e6,
        "frame_bytes": 64, "duration_s": 1e-3, "input_queue_depth": 16, "loss_bins": 10, "seed": 7}


def test_pipeline_overload_loses_the_excess_rate_in_every_bin():
    r = _core.run_pipeline(dict(PIPE))
    tl = r["loss_timeline"]
    lost = r["tx_packets"] - r["rx_packets"]
    assert r["tx_packets"] == 2000
    # admitted: what the core served by the end (1 per us) + the full queue + the one in service
    assert lost == pytest.approx(2000 - 1000 - 16 - 1, abs=2)
    assert tl["bin_s"] == pytest.approx(1e-4)
    assert len(tl["ports"]) == 1 and len(tl["ports"][0]) == 10
    assert sum(tl["ports"][0]) == lost == r["drops"]["input_queue_full"]
    assert set(tl["reasons"]) == {"input_queue_full"}
    assert tl["reasons"]["input_queue_full"] == tl["ports"]
    # the queue fills in its first 17 us (16 + 1 packets at 1 Mpps net); after that
    # (2 - 1) Mpps x 100 us = 100 drops per bin, +-1 for where a bin edge cuts the spacing
    row = tl["ports"][0]
    for b in range(1, 10):
        assert row[b] == pytest.approx(100, abs=1), b
    assert row[0] == pytest.approx(100 - 17, abs=2)
    m = loss_clustering(tl)
    assert m == {"loss_ports": 1.0, "loss_top_port_share": 100.0, "loss_bins": 10.0}


def test_pipeline_without_overload_loses_nothing_and_keeps_no_reason():
    r = _core.run_pipeline(dict(PIPE, offered_pps=5e5))
    assert r["tx_packets"] == r["rx_packets"]
    assert sum(r["loss_timeline"]["ports"][0]) == 0
    assert r["loss_timeline"]["reasons"] == {}


def test_pipeline_unrouted_flow_loses_every_fourth_packet_for_no_route():
    # no overload (0.5 Mpps on a 1 Mpps core); flows round robin, the last of four has no route
    r = _core.run_pipeline(dict(PIPE, offered_pps=5e5, num_flows=4, unrouted_flows=1))
    tl = r["loss_timeline"]
    (reason,) = tl["reasons"]
    assert reason in r["drops"] and r["drops"][reason] == r["tx_packets"] // 4
    assert "route" in reason
    # 0.5 Mpps x 100 us = 50 packets a bin, one in four dropped: 12.5 (12 or 13)
    assert all(12 <= n <= 13 for n in tl["ports"][0])
    assert sum(tl["ports"][0]) == r["tx_packets"] - r["rx_packets"]


def test_pipeline_same_seed_same_timeline_poisson():
    cfg = dict(PIPE, arrivals="poisson", offered_pps=1.1e6, seed=11)
    a, b = _core.run_pipeline(dict(cfg)), _core.run_pipeline(dict(cfg))
    assert a["loss_timeline"] == b["loss_timeline"]
    assert sum(a["loss_timeline"]["ports"][0]) == a["tx_packets"] - a["rx_packets"] > 0
    c = _core.run_pipeline(dict(cfg, seed=12))
    assert c["loss_timeline"] != a["loss_timeline"]


# A SYN flood on one of 16 ports, answered with cookies by one core of 1,000
# cycles a SYN (its priced cycles are read back from the run below).
LB_FLOOD = {"workload": "synflood", "syn_cookies": True, "num_cores": 1, "clock_hz": 1e9,
            "fixed_cycles_per_packet": 1000, "flood_ports": 1, "ports": 16, "arrivals": "constant",
            "duration_s": 2e-3, "core_queue_depth": 8, "loss_bins": 10, "seed": 3}


def test_lb_flood_on_one_port_loses_the_excess_there_only():
    probe = _core.run_lb(dict(LB_FLOOD, rate=1e5))
    assert probe["drops"] == {}
    capacity = 1e9 / probe["cycles_per_packet"]  # SYNs a second the core answers
    r = _core.run_lb(dict(LB_FLOOD, rate=2 * capacity))
    tl = r["loss_timeline"]
    assert len(tl["ports"]) == 16
    total = sum(map(sum, tl["ports"]))
    assert total == sum(r["drops"].values()) == r["drops"]["core_queue_full"] > 0
    assert set(tl["reasons"]) == {"core_queue_full"}
    # every drop on port 1 (index 0), the flood's only port
    assert sum(tl["ports"][0]) == total
    assert all(sum(row) == 0 for row in tl["ports"][1:])
    # (2 - 1) x capacity x 200 us per bin once the 8-deep queue is full
    per_bin = capacity * tl["bin_s"]
    for b in range(1, 10):
        assert tl["ports"][0][b] == pytest.approx(per_bin, abs=1.5), b
    m = lb_metrics(r)
    assert (m["loss_ports"], m["loss_top_port_share"], m["loss_bins"]) == (1.0, 100.0, 10.0)
    again = _core.run_lb(dict(LB_FLOOD, rate=2 * capacity))
    assert again["loss_timeline"] == tl


def test_lb_packet_level_records_the_balancers_drops_per_port():
    probe = _core.run_lb(dict(LB_FLOOD, rate=1e5, level="packet"))
    capacity = 1e9 / probe["cycles_per_packet"]
    r = _core.run_lb(dict(LB_FLOOD, rate=2 * capacity, level="packet"))
    tl = r["loss_timeline"]
    total = sum(map(sum, tl["ports"]))
    assert total == r["drops"]["core_queue_full"] > 0
    assert sum(tl["ports"][0]) == total  # the flood enters on the first port only


def test_loss_heat_map_shows_reasons_for_a_one_port_run(tmp_path):
    from routertwin.results import CaseResult

    # overloaded and one flow in four unrouted: two reasons on the one port
    tl = loss_distribution(_core.run_pipeline(dict(PIPE, num_flows=4, unrouted_flows=1))["loss_timeline"])
    labels, rows, _ = loss_rows(tl)
    assert set(labels) == {"input_queue_full", *[k for k in tl["reasons"] if "route" in k]}
    assert [sum(r) for r in rows] == [sum(tl["reasons"][n][0]) for n in labels]
    case = CaseResult(case="x", distributions={"loss_timeline": tl})
    assert loss_timeline_plot(case, tmp_path / "loss.png", "t").stat().st_size > 0


def test_lb_distributions_carry_the_timeline():
    r = _core.run_lb(dict(LB_FLOOD, rate=1e5))
    d = lb_distributions(r)
    assert d["loss_timeline"]["ports"] == [[0.0] * 10 for _ in range(16)]


def test_router_timeline_keeps_its_drop_reasons_apart():
    # the router case of tests/test_distributions.py whose fabric drops at every PFE
    cfg = {"ports": 4, "ports_per_pfe": 2, "ip_bytes": 40, "duration_s": 2e-5, "seed": 3, "fixed_latency_us": 18.0,
           "fabric_gbps_per_pfe": 10.0, "ingress_buffer_us": 0.01, "loss_bins": 10}
    r = _core.run_router(cfg)
    tl = r["loss_timeline"]
    assert set(tl["reasons"]) == {k for k, v in r["drops"].items() if v} == {"ingress_buffer_full"}
    for port, row in enumerate(tl["ports"]):
        assert row == tl["reasons"]["ingress_buffer_full"][port]
    assert sum(map(sum, tl["ports"])) == r["tx_packets"] - r["rx_packets"]
