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


# The lb kind (issue 15): frames' latency, units' response time, the cores' queue.
LB_DNS = {"workload": "dns", "rate": 2e6, "num_cores": 4, "clock_hz": 1e9, "fixed_cycles_per_packet": 1500,
          "arrivals": "poisson", "duration_s": 0.002, "seed": 5}


def test_lb_histograms_hold_every_frame_and_every_completed_unit():
    r = _core.run_lb(dict(LB_DNS))
    assert r["latency_histogram"]["count"] == r["frames_measured"] > 1000
    assert r["unit_latency_histogram"]["count"] == r["units_completed"]
    for name in ("latency", "unit_latency"):
        p = [r[f"{name}_{q}_us"] for q in ("p50", "p99", "p999", "max")]
        assert p == sorted(p), name
        # the native percentiles read the bins as the Python reading does
        got = quantile(r[f"{name}_histogram"], 0.99)
        assert min(got, p[3]) == pytest.approx(p[1], rel=1e-12)
    # a DNS unit is one frame: its response time is that frame's latency
    assert r["unit_latency_p50_us"] == pytest.approx(r["latency_p50_us"], rel=BIN)
    # the mean of the histogram's bins agrees with the exact mean within a bin
    h = r["latency_histogram"]
    mid = sum((lo + hi) / 2 * n for lo, hi, n in h["bins"]) / h["count"]
    assert mid == pytest.approx(r["mean_latency_s"] * 1e6, rel=BIN)


def _merged_bins(hists):
    """Bins of several histograms of the same axis, added bin by bin."""
    out: dict = {}
    for h in hists:
        for lo, hi, n in h["bins"]:
            out[(lo, hi)] = out.get((lo, hi), 0.0) + n
    return sorted(out.items())


def test_lb_port_latency_histograms_add_up_to_the_runs():
    # descriptor level: every measured frame in the histogram of the one
    # port it entered on, so the ports' bins add up, bin by bin, to the run's
    r = _core.run_lb(dict(LB_DNS))
    ports = r["ports"]
    assert len(ports) == 16
    assert sum(p["rx_packets"] for p in ports) == r["latency_histogram"]["count"] == r["frames_measured"]
    assert _merged_bins([p["latency_histogram"] for p in ports]) == \
        sorted(((lo, hi), n) for lo, hi, n in r["latency_histogram"]["bins"])
    assert max(p["latency_max_us"] for p in ports) == r["latency_max_us"]
    # the ports' means, weighted by their frames, are the run's exact mean
    mean = sum(p["latency_avg_us"] * p["rx_packets"] for p in ports) / r["frames_measured"]
    assert mean == pytest.approx(r["mean_latency_s"] * 1e6, rel=1e-9)
    assert sum(p["dropped_packets"] for p in ports) == sum(map(sum, r["loss_timeline"]["ports"]))


def test_lb_port_latency_is_empty_on_ports_without_traffic():
    # a SYN flood on the first port only, well inside one core's capacity:
    # every frame the balancer handles came in on port 1
    r = _core.run_lb({"workload": "synflood", "syn_cookies": True, "num_cores": 1, "clock_hz": 1e9,
                      "fixed_cycles_per_packet": 1000, "flood_ports": 1, "ports": 16, "rate": 1e5,
                      "duration_s": 2e-3, "seed": 3})
    first, rest = r["ports"][0], r["ports"][1:]
    assert first["rx_packets"] == r["frames_measured"] > 100
    assert first["latency_p99_us"] == r["latency_p99_us"]
    for p in rest:
        assert p["rx_packets"] == 0 and p["latency_histogram"]["bins"] == []
        assert p["latency_p50_us"] == p["latency_max_us"] == p["latency_avg_us"] == 0


def test_lb_packet_level_port_latency_adds_up_and_stays_on_the_flood_port():
    # packet level: each frame timed on the tester port it was sent on
    r = _core.run_lb({"workload": "synflood", "syn_cookies": True, "num_cores": 1, "clock_hz": 1e9,
                      "fixed_cycles_per_packet": 1000, "flood_ports": 1, "ports": 16, "rate": 1e5,
                      "duration_s": 2e-3, "seed": 3, "level": "packet"})
    ports = r["ports"]
    assert sum(p["rx_packets"] for p in ports) == r["frames_measured"] == ports[0]["rx_packets"] > 100
    assert _merged_bins([p["latency_histogram"] for p in ports]) == \
        sorted(((lo, hi), n) for lo, hi, n in r["latency_histogram"]["bins"])
    assert all(p["rx_packets"] == 0 for p in ports[1:])


def test_lb_port_medians_agree_under_symmetric_load():
    # DNS clients take consecutive addresses, which go round the 8 client
    # ports (LbPortMap), each port a sample of the same Poisson-loaded cores.
    # Each port's median lies inside the distribution-free 99.9 % interval of
    # the pooled median for n samples (order statistics n/2 +- 3.3 sqrt(n)/2),
    # widened by one histogram bin.
    r = _core.run_lb(dict(LB_DNS))
    busy = [p for p in r["ports"] if p["rx_packets"] > 0]
    assert len(busy) == 8
    counts = [p["rx_packets"] for p in busy]
    assert max(counts) - min(counts) <= 1  # round robin over the ports
    pooled = r["latency_histogram"]
    for p in busy:
        half = 3.3 * 0.5 / math.sqrt(p["rx_packets"])
        lo, hi = quantile(pooled, 0.5 - half), quantile(pooled, 0.5 + half)
        assert lo * (1 - BIN) <= p["latency_p50_us"] <= hi * (1 + BIN), p
    # ...while the ports' medians are not all one number (each its own sample)
    assert len({p["latency_p50_us"] for p in busy}) > 1


def test_lb_port_latency_same_seed_same_histograms():
    a, b = _core.run_lb(dict(LB_DNS)), _core.run_lb(dict(LB_DNS))
    assert a["ports"] == b["ports"]
    c = _core.run_lb(dict(LB_DNS, seed=6))
    assert c["ports"] != a["ports"]


def test_lb_distributions_show_ports_like_the_router(tmp_path):
    from routertwin.distributions import lb_distributions, ports_plot
    from routertwin.results import CaseResult

    d = lb_distributions(_core.run_lb(dict(LB_DNS)))
    assert [p["port"] for p in d["ports"]] == list(range(1, 17))
    assert {"rx", "dropped", "latency_avg", "latency_p50", "latency_p99", "latency_p999",
            "latency_max"} <= set(d["ports"][0])
    assert "tx" not in d["ports"][0] and "egress_latency_p99" not in d["ports"][0]
    assert ports_differ(d)  # 8 client ports with traffic, 8 without
    assert ports_plot(CaseResult(case="q", distributions=d), tmp_path / "p.png", "t").stat().st_size > 0


def test_lb_core_queue_area_is_the_frames_time_at_the_cores():
    # Little's law over a finite run that starts and ends empty: the area
    # under the queue-length curve (mean x time) is the sum of every frame's
    # wait and service at its core, which the engine counts on its own.
    r = _core.run_lb(dict(LB_DNS))
    q = r["core_queue"]
    area = q["mean"] * q["seconds"]
    frames = r["frames_measured"]
    assert r["drops"] == {}
    assert area == pytest.approx((r["mean_core_wait_s"] + r["mean_core_service_s"]) * frames, rel=1e-9)
    assert sum(s for _, s in q["bins"]) == pytest.approx(q["seconds"], rel=1e-12)
    assert q["p50"] <= q["p99"] <= q["p999"] <= q["max"]


def test_pipeline_core_queue_is_reported_and_ordered():
    r = _core.run_pipeline({"num_cores": 1, "clock_hz": 1e9, "offered_pps": 2e6, "duration_s": 1e-3,
                            "arrivals": "poisson", "frame_bytes": 64, "fixed_cycles_per_packet": 300})
    q = r["core_queue"]
    assert q["seconds"] > 0.9e-3
    assert sum(s for _, s in q["bins"]) == pytest.approx(q["seconds"], rel=1e-12)
    assert 0 < q["mean"] <= q["max"]
    # busy fraction = offered work: 2 Mpps x 0.3 us (utilization law), within the run's sampling
    busy = 1 - dict(q["bins"]).get(0, 0.0) / q["seconds"]
    assert busy == pytest.approx(0.6, abs=0.03)


def test_router_egress_queue_and_egress_latency_per_port():
    r = _core.run_router(dict(SMALL))
    assert r["egress_queue"]["seconds"] > 0
    ports = r["ports"]
    for q, p in enumerate(ports):
        # paired ports: what leaves q came in on its peer, the same packets
        peer = ports[(q + len(ports) // 2) % len(ports)]
        assert p["egress_latency_p99_us"] == peer["latency_p99_us"]
        assert p["egress_queue_max"] >= 1 and p["egress_queue_mean"] <= p["egress_queue_max"]
    steady = _core.run_router(dict(SMALL, mode="steady", duration_s=0.01, block_packets=1000))
    assert "egress_queue" not in steady  # the Lindley walks keep no lengths
    assert steady["ports"][0]["egress_latency_p99_us"] == steady["ports"][2]["latency_p99_us"]


def test_report_lines_and_plots_of_an_lb_case(tmp_path):
    from types import SimpleNamespace

    from routertwin.distributions import (latency_plot, lb_distributions, lb_metrics, markdown_study,
                                          queue_length_plot)
    from routertwin.results import CaseResult

    r = _core.run_lb(dict(LB_DNS))
    case = CaseResult(case="q", metrics=lb_metrics(r), distributions=lb_distributions(r))
    scenario = Path("/x/lb.yaml")
    rows = [SimpleNamespace(mapped=SimpleNamespace(scenario=scenario, case="q"), ref=SimpleNamespace(id="row-q"))]
    lines = markdown_study(rows, {scenario: SimpleNamespace(error=None, cases=[case])})
    row = [line for line in lines if line.startswith("| q | `row-q`")]
    assert len(row) == 1 and "| cores |" in row[0]  # the latency row names the queue and gives its figures
    assert row[0].endswith(f"| {r['core_queue']['p99']} | {r['core_queue']['max']} |")
    units = [line for line in lines if line.startswith(f"| q | {int(r['units_completed'])} |")]
    assert len(units) == 1  # the response-time row: units completed, p50 .. max
    assert queue_length_plot([case], tmp_path / "queue.png", "t").stat().st_size > 0
    assert latency_plot([case], tmp_path / "resp.png", "t", key="unit_latency_histogram").stat().st_size > 0
    assert queue_length_plot([CaseResult(case="none")], tmp_path / "none.png", "t") is None


def test_a_rows_distribution_scenario_gives_the_report_its_distribution(tmp_path):
    # issue 15, seed 003: the NCTU latency rows are judged on the MVA engine
    # (means only); their mapping names the ns-3 twin of the same cases,
    # whose case of the row's id the report's table and plots then show
    from types import SimpleNamespace

    from routertwin.distributions import markdown_study
    from routertwin.results import CaseResult
    from routertwin.validation.mapping import load_mappings
    from routertwin.validation.plots import distribution_plots

    rows = {rid: m for rid, m in load_mappings(ROOT)["nctu"].rows.items() if m.metric == "latency_avg"}
    assert len(rows) == 7
    for rid, m in rows.items():
        assert m.distribution_scenario == m.scenario.parent / "ns3" / m.scenario.name, rid

    mva, ns3 = Path("/x/nctu-l4-dr.yaml"), Path("/x/ns3/nctu-l4-dr.yaml")
    hist = {"count": 3.0, "bins": [[1000.0, 1023.3, 2.0], [2000.0, 2046.6, 1.0]]}
    twin = CaseResult(case="c", metrics={"latency_avg": 1.4, "latency_p50_us": 1011.0, "latency_p99_us": 2040.0,
                                         "latency_p999_us": 2046.0, "latency_max_us": 2046.6},
                      distributions={"latency_histogram": hist})
    outcomes = {mva: SimpleNamespace(error=None, cases=[CaseResult(case="c", metrics={"latency_avg": 2.5})]),
                ns3: SimpleNamespace(error=None, cases=[twin])}
    row = SimpleNamespace(mapped=SimpleNamespace(scenario=mva, distribution_scenario=ns3, case="c"),
                          ref=SimpleNamespace(id="row-a"))
    table = [line for line in markdown_study([row], outcomes) if line.startswith("| c ")]
    assert table == ["| c (ns3/nctu-l4-dr.yaml) | `row-a` | 1011 | 2040 | 2046 | 2047 |  |  |  |  |  |  |  |  |"]
    # without it, the MVA case: no distribution, no line
    alone = SimpleNamespace(mapped=SimpleNamespace(scenario=mva, case="c"), ref=SimpleNamespace(id="row-a"))
    assert markdown_study([alone], outcomes) == []
    report = SimpleNamespace(by_study={"nctu": [row]})
    assert distribution_plots(report, outcomes, tmp_path) == ["nctu-latency-distribution.png"]


def test_timed_replications_pool_their_waits_and_refusals(tmp_path):
    """Two lb_timed runs on hand-worked traces (tests/test_lb_timed.py,
    model/lb/test/lb-timed-test.cc): a burst whose four queued requests wait
    460 ms each and whose last two get a 503 at 780 and 790 ms, and one whose
    three wait 90, 580 and 1070 ms. Pooled: seven waits, median 460 ms (the
    sorted 90, 460 x 4, 580, 1070), maximum 1070 ms; two 503s in the bin of
    780-790 ms; the heat map of the pooled timeline draws a row per reason."""
    from routertwin.distributions import (latency_plot, loss_timeline_plot, merged_histogram,
                                          queue_wait_percentiles, timed_distributions)
    from routertwin.results import CaseResult

    common = {"scheduler": "roundrobin", "servers": 2, "maxconn": {"0": 2, "1": 2}, "action": "none",
              "warmup_s": 0.0, "at_s": 0.0, "settle_s": 0.0, "end_s": 5.0, "timeout_queue_ms": 700}
    burst = _core.lb_timed({**common, "clients": 1, "arrivals_s": {str(k): 0.01 * k for k in range(10)},
                            "lifetimes_ms": {str(k): 500.0 for k in range(10)}})
    trace = {str(k): 0.01 * k for k in range(4)}
    cookie = _core.lb_timed({**common, "maxconn": {"0": 1, "1": 1}, "timeout_queue_ms": 2000, "redispatch": True,
                             "action": "remove", "server": 0, "at_s": 0.1, "end_s": 5.0, "arrivals_s": trace,
                             "lifetimes_ms": {k: 500.0 for k in trace}, "cookies": {k: 0 for k in trace}})
    pooled = merged_histogram([burst["queue_wait_histogram"], cookie["queue_wait_histogram"]])
    assert pooled["count"] == 7
    m = queue_wait_percentiles([burst, cookie])
    assert m["queue_wait_p50_ms"] == pytest.approx(460.0, rel=0.0233)
    assert m["queue_wait_max_ms"] == pytest.approx(1070.0, rel=1e-9)
    dist = timed_distributions([burst, cookie])
    tl = dist["loss_timeline"]
    assert tl["reasons"]["queue_timeout"][0][9] == 2 and sum(tl["reasons"]["broken"][0]) == 1
    assert sum(tl["ports"][0]) == 3
    case = CaseResult(case="t", metrics=m, distributions=dist)
    assert loss_timeline_plot(case, tmp_path / "loss.png", "t").stat().st_size > 0
    assert latency_plot([case], tmp_path / "wait.png", "t", key="queue_wait_histogram").stat().st_size > 0
