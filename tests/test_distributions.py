"""Distributions beyond min/avg/max (issue 15): latency percentiles and
histograms from the native models, latency per port, drops per port and
over time, and where they show (routertwin run, JSON, the validation report).

Independent truths: the packets a run counts (a histogram holds every
delivered packet, a loss timeline every dropped one), a zero-queueing run
whose every packet has the same latency, the closed form of a queue that
holds at most one packet, and the Python reading of the histogram's bins
against the native percentiles (the same definition, computed twice). The
M/M/1 sojourn-time percentiles are checked in C++
(model/pipeline/test/pipeline-engine-test.cc, MM1Sojourn), and the
histogram against exact sorted samples in model/common/test/latency-histogram-test.cc.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from routertwin import _core
from routertwin.distributions import loss_clustering, ports_differ, quantile

ROOT = Path(__file__).resolve().parents[1]

# Four OC-192 ports at 40 bytes, two per PFE, no routes: small and fast.
SMALL = {"ports": 4, "ports_per_pfe": 2, "ip_bytes": 40, "duration_s": 2e-5, "seed": 3,
         "fixed_latency_us": 18.0}

BIN = 10 ** 0.01 - 1  # relative width of a histogram bin (100 per decade)


def test_router_histogram_holds_every_delivered_packet_and_orders_its_percentiles():
    r = _core.run_router(dict(SMALL))
    h = r["latency_histogram"]
    assert h["count"] == pytest.approx(r["rx_packets"])
    assert sum(b[2] for b in h["bins"]) == pytest.approx(r["rx_packets"])
    assert r["latency_min_us"] <= r["latency_p50_us"] <= r["latency_p99_us"] <= r["latency_p999_us"]
    assert r["latency_p999_us"] <= r["latency_max_us"]
    assert h["bins"][-1][1] >= r["latency_max_us"] * (1 - 1e-12)
    for p in r["ports"]:
        assert p["dropped_packets"] == p["tx_packets"] - p["rx_packets"]
        assert p["latency_min_us"] <= p["latency_p50_us"] <= p["latency_p99_us"] <= p["latency_max_us"]


def test_python_reading_of_the_bins_equals_the_native_percentiles():
    r = _core.run_router(dict(SMALL))
    for q, key in ((0.5, "latency_p50_us"), (0.99, "latency_p99_us"), (0.999, "latency_p999_us")):
        got = min(max(quantile(r["latency_histogram"], q), r["latency_min_us"]), r["latency_max_us"])
        assert got == pytest.approx(r[key], rel=1e-12)


def test_loss_timeline_counts_every_drop_at_its_port():
    # A 1-cell ingress buffer and a fabric at 10 Gbit/s per PFE (two ports
    # offer 2 x 9.58 Gbit/s of 64-byte cells at 40 bytes -- 40 + 24 octets
    # fill one cell -- each packet's cell every 64 * 8 / 10e9 = 51.2 ns against
    # 2 packets per 40.9 ns): every PFE drops, on both of its ports.
    cfg = dict(SMALL, fabric_gbps_per_pfe=10.0, ingress_buffer_us=0.01, loss_bins=10)
    r = _core.run_router(cfg)
    lost = r["tx_packets"] - r["rx_packets"]
    assert lost > 0
    tl = r["loss_timeline"]
    assert tl["bin_s"] == pytest.approx(cfg["duration_s"] / 10)
    assert len(tl["ports"]) == 4 and all(len(row) == 10 for row in tl["ports"])
    assert sum(map(sum, tl["ports"])) == pytest.approx(lost)
    for p, row in zip(r["ports"], tl["ports"]):
        assert sum(row) == pytest.approx(p["dropped_packets"])
    c = loss_clustering(tl)
    assert c["loss_ports"] == 4
    assert 25.0 <= c["loss_top_port_share"] < 100.0
    assert 1 <= c["loss_bins"] <= 10


def test_loss_clustering_of_a_hand_made_timeline():
    tl = {"bin_s": 1.0, "ports": [[0, 0, 0], [5, 0, 3], [0, 0, 0], [0, 0, 2]]}
    assert loss_clustering(tl) == {"loss_ports": 2.0, "loss_top_port_share": 80.0, "loss_bins": 2.0}
    same = {"ports": [{"latency_p99": 20.0, "dropped": 0}, {"latency_p99": 20.1, "dropped": 0}]}
    assert not ports_differ(same)
    assert ports_differ({"ports": [{"latency_p99": 20.0, "dropped": 0}, {"latency_p99": 30.0, "dropped": 0}]})
    assert ports_differ({"ports": [{"latency_p99": 20.0, "dropped": 1}, {"latency_p99": 20.0, "dropped": 0}]})


def test_steady_state_distributions_weigh_blocks_by_their_packets():
    cfg = dict(SMALL, mode="steady", duration_s=0.01, block_packets=1000)
    r = _core.run_router(cfg)
    assert r["latency_histogram"]["count"] == pytest.approx(r["rx_packets"], rel=1e-3)
    assert r["latency_p50_us"] >= 18.0
    assert r["latency_p999_us"] <= r["latency_max_us"] * (1 + BIN)
    assert sum(map(sum, r["loss_timeline"]["ports"])) == pytest.approx(r["tx_packets"] - r["rx_packets"], abs=2)


def test_pipeline_without_queueing_has_one_latency_at_every_percentile():
    # One core far faster than the offered 1 Mpps of 64-byte frames with
    # constant spacing: no packet waits, so every latency is the same
    # (fixed + service + serialization) and p50 = p99 = p99.9 = min = max
    # within one bin.
    r = _core.run_pipeline({"num_cores": 1, "clock_hz": 1e9, "offered_pps": 1e6, "duration_s": 1e-3,
                            "frame_bytes": 64, "fixed_cycles_per_packet": 200})
    lat = r["latency_min_us"]
    assert r["latency_max_us"] == pytest.approx(lat, rel=1e-6)
    for key in ("latency_p50_us", "latency_p99_us", "latency_p999_us"):
        assert r[key] == pytest.approx(lat, rel=BIN)
    assert r["latency_histogram"]["count"] == r["rx_packets"]


def test_run_prints_the_distribution_and_writes_it_to_json(tmp_path):
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "routertwin", "--root", str(ROOT), "run", "--out", str(out),
                          str(ROOT / "scenarios" / "t640" / "t640-packet-1ms.yaml"),
                          str(ROOT / "scenarios" / "octeon" / "cn68-se-1core.yaml")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "latency distribution (us) and loss clustering" in res.stdout
    doc = json.loads((out / "t640-packet-1ms.json").read_text())
    for c in doc["cases"]:
        d = c["distributions"]
        assert len(d["ports"]) == 32 and len(d["loss_timeline"]["ports"]) == 32
        assert c["metrics"]["latency_p50"] <= c["metrics"]["latency_p99"] <= c["metrics"]["latency_max"]
        assert math.isfinite(c["metrics"]["latency_p999"])
    octeon = json.loads((out / "cn68-se-1core.json").read_text())
    for c in octeon["cases"]:
        assert c["distributions"]["latency_histogram"]["count"] > 0
        assert c["metrics"]["latency_p99_us"] >= c["metrics"]["latency_min_us"]


def test_a_case_without_distributions_writes_none():
    from routertwin.results import CaseResult, _case_doc

    assert "distributions" not in _case_doc(CaseResult(case="x", metrics={"pps": 1.0}))
    assert _case_doc(CaseResult(case="x", distributions={"a": 1}))["distributions"] == {"a": 1}


def test_report_lines_and_plots_of_a_replayed_case(tmp_path):
    from types import SimpleNamespace

    from routertwin.distributions import latency_plot, loss_timeline_plot, markdown_study
    from routertwin.results import CaseResult

    r = _core.run_router(dict(SMALL, fabric_gbps_per_pfe=10.0, ingress_buffer_us=0.01, loss_bins=10))
    from routertwin.distributions import router_distributions

    case = CaseResult(case="lossy", metrics={"latency_p50": r["latency_p50_us"], "latency_p99": r["latency_p99_us"],
                                             "latency_p999": r["latency_p999_us"], "latency_max": r["latency_max_us"],
                                             "lost_packets": float(r["tx_packets"] - r["rx_packets"])},
                      distributions=router_distributions(r))
    scenario = Path("/x/s.yaml")
    rows = [SimpleNamespace(mapped=SimpleNamespace(scenario=scenario, case="lossy"), ref=SimpleNamespace(id="row-a")),
            SimpleNamespace(mapped=SimpleNamespace(scenario=scenario, case="lossy"), ref=SimpleNamespace(id="row-b"))]
    outcomes = {scenario: SimpleNamespace(error=None, cases=[case])}
    lines = markdown_study(rows, outcomes)
    table = [line for line in lines if line.startswith("| lossy |")]
    assert len(table) == 1 and "`row-a`, `row-b`" in table[0]  # one line per case, naming its rows
    assert latency_plot([case], tmp_path / "lat.png", "t").stat().st_size > 0
    assert loss_timeline_plot(case, tmp_path / "loss.png", "t").stat().st_size > 0
    assert loss_timeline_plot(CaseResult(case="none"), tmp_path / "none.png", "t") is None
    from routertwin.distributions import ports_plot

    assert ports_plot(case, tmp_path / "ports.png", "t").stat().st_size > 0  # its ports drop unevenly
    assert ports_plot(CaseResult(case="none"), tmp_path / "none.png", "t") is None
