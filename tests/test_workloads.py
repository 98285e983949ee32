"""Realistic workloads (issue 16) at packet level against closed forms:
frame-size mixes (line rate of the mix's mean wire frame, cores = pps x mean
cycles / clock), the IMIX what-ifs at packet level beside their closed form,
bursty arrivals and Zipf flows reproducible by seed, pcap traces the test
writes itself (sizes, flows, rescale, loop) and the errors of a bad trace or
a mistyped key: file, line or packet index, exit 2, no traceback."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from conftest import PLATFORMS, ROOT, line_of, one_line, run_cli
from routertwin import _core
from routertwin.progress import silent
from routertwin.runners import pipeline
from routertwin.scenario_loader import load_scenario

WHATIF = ROOT / "scenarios" / "whatif"
SIMPLE_IMIX = [(64, 7), (594, 4), (1518, 1)]


def mean_frame(mix) -> float:
    return sum(b * w for b, w in mix) / sum(w for _, w in mix)


def run_cases(path: Path, **overrides) -> dict:
    sc = load_scenario(path, overrides=[f"{k}={v}" for k, v in overrides.items()])
    return {c.case: c for c in pipeline.run(sc, silent())}


# ------------------------------------------------------------ frame mixes --

def test_mix_at_line_rate_forwards_the_mix_line_rate_in_frames_and_bits():
    # 10GbE, enough cores: simple IMIX 7:4:1 of 64/594/1518 at line rate is
    # 10e9 / (8 x (361.83 + 20)) = 3.2737 Mpps, and 10e9 x 361.83/381.83 bit/s
    # of frames. In sequence order each 12-frame cycle is the exact mix.
    out = _core.run_pipeline({"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 10e9,
                              "frame_mix": "simple_imix", "frame_order": "sequence", "duration_s": 0.004,
                              "warmup_s": 0.001})
    m = mean_frame(SIMPLE_IMIX)
    line = 10e9 / (8 * (m + 20))
    assert out["line_rate_pps"] == pytest.approx(line, rel=1e-12)
    assert out["mean_frame_bytes"] == pytest.approx(m, rel=1e-4)
    # the window holds ~9800 frames: one frame more or less is 1e-4
    assert out["forwarded_pps"] == pytest.approx(line, rel=5e-4)
    assert out["forwarded_bps"] == pytest.approx(10e9 * m / (m + 20), rel=5e-4)
    assert out["loss_pct"] == 0


def test_random_mix_order_agrees_within_its_sampling_error():
    # Drawn at random, the mean of N frames has sd sigma/sqrt(N) (sigma = 426 B
    # for simple IMIX); the forwarded rate agrees with the closed form within
    # 3 sd of the mean wire frame.
    out = _core.run_pipeline({"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 10e9,
                              "frame_mix": {"64": 7, "594": 4, "1518": 1}, "duration_s": 0.02,
                              "warmup_s": 0.002})
    m = mean_frame(SIMPLE_IMIX)
    var = sum(w * (b - m) ** 2 for b, w in SIMPLE_IMIX) / 12
    n = out["tx_packets"]
    tol = 3 * math.sqrt(var / n) / (m + 20)
    assert out["forwarded_pps"] == pytest.approx(10e9 / (8 * (m + 20)), rel=tol + 1e-3)


def test_per_packet_cost_follows_each_frame_size():
    # 100 cycles fixed + 2 cycles per frame byte, 1 core at 1 GHz, offered far
    # below capacity: mean service = 100 + 2 x 361.83 cycles exactly in
    # sequence order (the C core's own counters are not priced here).
    out = _core.run_pipeline({"num_cores": 1, "clock_hz": 1e9, "fixed_cycles_per_packet": 100,
                              "cycles_per_frame_byte": 2, "port_bit_rate": 10e9, "offered_pps": 1e5,
                              "frame_mix": "simple_imix", "frame_order": "sequence", "duration_s": 0.0012,
                              "warmup_s": 0.0001})
    assert out["tx_packets"] == 120  # 10 full cycles of 12
    assert out["service_cycles"] == pytest.approx(100 + 2 * mean_frame(SIMPLE_IMIX), abs=0.5)


def test_cores_needed_for_a_mix_is_pps_times_mean_cycles_over_clock():
    # Cycles that differ by size (frame_fixed_cycles): 64 B 400, 594 B 900,
    # 1518 B 2000; mean (7x400 + 4x900 + 2000) / 12 = 700 cycles. Two 1 GHz
    # cores carry 2e9 / 700 = 2.857 Mpps: at 98 % of that nothing is lost and
    # the cores are 98 % busy (cores needed = pps x mean cycles / clock =
    # 1.96); at 102 % the cores saturate and frames are lost.
    base = {"num_cores": 2, "clock_hz": 1e9, "port_bit_rate": 10e9, "frame_mix": "simple_imix",
            "frame_order": "sequence", "frame_fixed_cycles": {"64": 400, "594": 900, "1518": 2000},
            "duration_s": 0.004, "warmup_s": 0.001, "input_queue_depth": 64}
    capacity = 2e9 / 700
    under = _core.run_pipeline({**base, "offered_pps": 0.98 * capacity})
    assert under["service_cycles"] == pytest.approx(700, rel=1e-3)
    assert under["loss_pct"] == 0
    assert under["forwarded_pps"] == pytest.approx(0.98 * capacity, rel=2e-3)
    assert 2 * under["utilization"]["cores"] == pytest.approx(0.98 * capacity * 700 / 1e9, rel=1e-2)
    over = _core.run_pipeline({**base, "offered_pps": 1.02 * capacity})
    assert over["loss_pct"] > 0.5
    assert over["bottleneck"] == "cores"


@pytest.mark.parametrize("scenario", ["imix-100g-cn78-se.yaml", "imix-100g-cn68-linux.yaml",
                                      "imix-100g-cn78-l2.yaml"])
def test_imix_whatifs_run_at_packet_level_and_agree_with_the_closed_form(scenario):
    cases = run_cases(WHATIF / scenario, method="both", duration_us=1000, warmup_us=200)
    assert len(cases) >= 10
    for cid, c in cases.items():
        # sequence order: the mix is exact per cycle; the window counts whole
        # frames and the engine rounds cycles: within 0.5 % (as single sizes)
        assert c.metrics["pps"] == pytest.approx(c.metrics["pps_analytic"], rel=5e-3), cid


def test_esp_mix_at_packet_level_is_refused_clearly():
    from routertwin.errors import UserError

    with pytest.raises(UserError, match="output frame grows"):
        run_cases(WHATIF / "imix-100g-cn78-ipsec.yaml", method="packet")


# ------------------------------------------ arrivals and flows by seed --

BURSTY = {"num_cores": 4, "fixed_cycles_per_packet": 1500, "port_bit_rate": 10e9, "offered_pps": 2e6,
          "frame_mix": "spirent_imix", "arrivals": "mmpp", "mmpp_rate_ratio": 6, "mmpp_high_fraction": 0.1,
          "mmpp_cycle_s": 2e-4, "flow_popularity": "zipf", "zipf_exponent": 1.2, "num_flows": 1000,
          "scheduling": "atomic", "duration_s": 0.003}


def test_same_seed_bit_identical_other_seed_differs():
    a = _core.run_pipeline({**BURSTY, "seed": 5})
    b = _core.run_pipeline({**BURSTY, "seed": 5})
    c = _core.run_pipeline({**BURSTY, "seed": 6})
    assert a == b
    assert a["latency_avg_us"] != c["latency_avg_us"]


def test_bursts_raise_latency_over_poisson_at_the_same_mean_rate():
    # Same mean rate and service: an MMPP with a 6:1 rate ratio queues far
    # more than Poisson (its index of dispersion is >> 1), on/off likewise.
    base = {**BURSTY, "flow_popularity": "uniform", "scheduling": "ordered", "num_cores": 2,
            "fixed_cycles_per_packet": 800, "duration_s": 0.01}
    poisson = _core.run_pipeline({**base, "arrivals": "poisson"})
    mmpp = _core.run_pipeline(base)
    onoff = _core.run_pipeline({**base, "arrivals": "onoff", "burst_mean_frames": 64})
    for r in (poisson, mmpp, onoff):
        assert r["offered_pps"] == 2e6
        assert r["tx_packets"] == pytest.approx(2e4, rel=0.05)  # the long-run rate
    assert mmpp["latency_avg_us"] > 2 * poisson["latency_avg_us"]
    assert onoff["latency_avg_us"] > 2 * poisson["latency_avg_us"]


def test_zipf_flows_make_atomic_ordering_the_bottleneck():
    # 16 cores, ATOMIC tags: a flow's packets are served one at a time. With
    # Zipf(1.2) over 100 flows the top flow carries p1 = 1 / H(100, 1.2) of
    # the frames; its tag saturates once p1 x pps x service > 1.
    h = sum(k ** -1.2 for k in range(1, 101))
    p1 = 1 / h
    service_s = 400e-9
    cfg = {"num_cores": 16, "clock_hz": 1e9, "fixed_cycles_per_packet": 400, "port_bit_rate": 10e9,
           "frame_bytes": 64, "num_flows": 100, "scheduling": "atomic", "duration_s": 0.003,
           "flow_popularity": "zipf", "zipf_exponent": 1.2}
    zipf = _core.run_pipeline(cfg)
    uniform = _core.run_pipeline({**cfg, "flow_popularity": "round_robin"})
    assert uniform["loss_pct"] == 0
    # the hottest tag caps throughput near 1 / (p1 x service)
    assert zipf["forwarded_pps"] == pytest.approx(1 / (p1 * service_s), rel=0.05)
    assert zipf["bottleneck"] == "ordering"


# --------------------------------------------------------------- traces --

def write_pcap(path: Path, packets: list[tuple[float, int, int, int]]) -> Path:
    """A classic pcap (microseconds, Ethernet) of (time s, frame bytes
    without FCS, source host, source port) UDP packets."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for t, length, host, port in packets:
        frame = bytearray(length)
        frame[12:14] = b"\x08\x00"
        frame[14] = 0x45
        frame[23] = 17
        frame[26:30] = bytes([198, 18, 0, host])
        frame[30:34] = bytes([198, 19, 0, 1])
        frame[34:38] = struct.pack(">HH", port, 7)
        sec = int(t)
        out.append(struct.pack("<IIII", sec, round((t - sec) * 1e6), length, length) + bytes(frame))
    path.write_bytes(b"".join(out))
    return path


def trace_packets(n: int, gap_s: float) -> list[tuple[float, int, int, int]]:
    sizes = [60, 590, 1514]  # + FCS: 64 / 594 / 1518
    return [(1.7e9 + i * gap_s, sizes[i % 3], i % 5, 1000 + i % 7) for i in range(n)]


def test_trace_replays_its_sizes_flows_and_instants(tmp_path):
    pcap = write_pcap(tmp_path / "t.pcap", trace_packets(3000, 1e-6))  # 1 Mpps for 3 ms
    summary = _core.trace_summary(str(pcap))
    assert summary["packets"] == 3000 and summary["flows"] == 35  # lcm(5, 7) 5-tuples
    assert summary["mean_frame_bytes"] == pytest.approx((64 + 594 + 1518) / 3)
    out = _core.run_pipeline({"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 10e9,
                              "trace_file": str(pcap), "duration_s": 0.004, "warmup_s": 0.0005})
    assert out["tx_packets"] == 3000 and out["trace_flows"] == 35
    assert out["mean_frame_bytes"] == pytest.approx((64 + 594 + 1518) / 3)
    assert out["offered_pps"] == pytest.approx(1e6, rel=1e-6)
    assert out["loss_pct"] == 0 and out["sequence_errors"] == 0


def test_trace_rescaled_and_looped_offers_the_target_rate(tmp_path):
    pcap = write_pcap(tmp_path / "t.pcap", trace_packets(300, 1e-5))  # 100 kpps, 3 ms
    out = _core.run_pipeline({"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 100e9,
                              "trace_file": str(pcap), "trace_rescale": True, "offered_pps": 2e6,
                              "trace_loop": True, "duration_s": 0.002, "warmup_s": 0.0002})
    # 2 Mpps for 2 ms: 4000 frames, the 300-packet trace replayed 13 times and a bit
    assert out["tx_packets"] == pytest.approx(4000, abs=15)
    assert out["trace_loops"] == 13
    assert out["forwarded_pps"] == pytest.approx(2e6, rel=0.01)
    # 2 Mpps of 725-byte mean frames is more than 10GbE carries (1.66 Mpps)
    with pytest.raises(ValueError, match="exceeds the port line rate"):
        _core.run_pipeline({"port_bit_rate": 10e9, "trace_file": str(pcap), "trace_rescale": True,
                            "offered_pps": 2e6})


def test_trace_scenario_runs_and_a_truncated_trace_is_one_error_line(write, tmp_path):
    pcap = write_pcap(tmp_path / "t.pcap", trace_packets(600, 2e-6))
    text = f"""
        scenario: tr
        kind: pipeline
        seed: 1
        platform: {PLATFORMS}/cn78xx-1800-ddr4-1866.yaml
        workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
        fitted: {PLATFORMS}/fitted/octeon.yaml
        method: both
        duration_us: 1000
        warmup_us: 100
        traces:
          lab: {{file: {pcap}, rescale: true, loop: true}}
        cases:
          - {{frame: lab, cores: 2}}
          - {{frame: lab, cores: 32}}
    """
    path = write("tr.yaml", text)
    cases = run_cases(path)
    assert cases["lab-2c"].bottleneck == "cores"
    assert cases["lab-2c"].metrics["pps"] == pytest.approx(cases["lab-2c"].metrics["pps_analytic"], rel=5e-3)
    assert cases["lab-32c"].metrics["pps"] == pytest.approx(cases["lab-32c"].metrics["pps_analytic"], rel=1e-2)

    data = pcap.read_bytes()
    start4 = 24 + (16 + 60) + (16 + 590) + (16 + 1514) + (16 + 60)
    pcap.write_bytes(data[:start4 + 16 + 100])  # cut inside packet 4's 590 bytes
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert f"{pcap}: packet 4: truncated record data" in line


def test_unknown_arrivals_key_names_file_and_line(write, tmp_path):
    text = f"""
        scenario: a
        kind: pipeline
        seed: 1
        platform: {PLATFORMS}/cn78xx-1800-ddr4-1866.yaml
        workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
        fitted: {PLATFORMS}/fitted/octeon.yaml
        method: packet
        arrivals:
          process: mmpp
          burst_lenght: 3
        cases:
          - {{frame: simple_imix, cores: 2}}
    """
    path = write("a.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'burst_lenght')}: key 'arrivals.burst_lenght'")


# ------------------------------------------------------ router (T640) --

def router_scenario(write, cases: str, order: str = "sequence") -> Path:
    return write("r.yaml", f"""
        scenario: rmix
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0002
        mix_order: {order}
        cases:
    """ + cases)


def test_router_mix_rate_and_fabric_cells_follow_each_packet(write):
    # 32 x OC-192c POS: SONET payload 9,584.64 Mbit/s, PPP/HDLC 9 octets a
    # frame (t640.yaml). Simple IMIX of 40/576/1500-byte IP packets 7:4:1:
    # mean frame 4084/12 + 9 = 349.33 octets, so 32 x 9,584.64e6 / (8 x
    # 349.33) = 109.75 Mpps at line rate with no escapes; the tester's frames
    # are longer by the escapes the model counts on each one. Cells of
    # ceil((ip + 24) / 64) = 1, 10, 24: a mean of 71/12 per packet, so a PFE
    # (2 ports) offers pps/16 x 71/12 cells of 64 x 8 / 48.4e9 s each.
    from ruamel.yaml import YAML

    plat = YAML(typ="safe").load((PLATFORMS / "t640.yaml").read_text())
    slot = 8 * 64 / (plat["fabric"]["gbps_per_pfe"] * 1e9)
    path = router_scenario(write, """
          - {case: imix, method: load, offered_load: 1.0, ip_mix: simple_imix}
          - {case: light, method: load, offered_load: 0.05, ip_mix: simple_imix, duration_s: 0.0024}
          - {case: b40, method: load, offered_load: 0.05, ip_bytes: 40, duration_s: 0.0024}
    """)
    from routertwin.runners import router

    cases = {c.case: c for c in router.run(load_scenario(path), silent())}
    m = cases["imix"].metrics
    frame = 4084 / 12 + 9
    theoretical = 32 * 9584.64e6 / (8 * frame)
    assert m["tx_pps"] == pytest.approx(32 * 9584.64e6 / (8 * (frame + m["mean_ingress_escapes"])), rel=5e-3)
    assert m["pct_of_theoretical"] == pytest.approx(100 * theoretical / theoretical, abs=0.5)
    assert m["mean_ip_bytes"] == pytest.approx(4084 / 12, rel=5e-3)
    assert m["throughput_gbps"] == pytest.approx(m["pps"] * m["mean_ip_bytes"] * 8 / 1e9, rel=1e-9)
    assert m["fabric_load"] == pytest.approx(m["tx_pps"] / 16 * 71 / 12 * slot, rel=5e-3)
    assert m["loss_pct"] == 0
    # At 5 % load (411 packets a port: 34 cycles of the mix) the smallest packet's latency is that of a 40-byte packet;
    # the mean adds each size's own serialization and cells beyond it.
    light, b40 = cases["light"].metrics, cases["b40"].metrics
    assert light["latency_min"] == pytest.approx(b40["latency_min"], rel=1e-9)
    byte_us = 8 / 9584.64e6 * 1e6
    extra_us = sum(w * ((ip - 40) * byte_us + (cells - 1) * slot * 1e6)
                   for ip, w, cells in ((40, 7, 1), (576, 4, 10), (1500, 1, 24))) / 12
    assert light["latency_avg"] - b40["latency_avg"] == pytest.approx(extra_us, rel=0.1)


def test_router_mix_is_refused_in_steady_mode_at_its_line(write, tmp_path):
    text = f"""
        scenario: rs
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: steady
        cases:
          - {{case: imix, method: load, ip_mix: simple_imix}}
    """
    path = write("rs.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'ip_mix')}: key 'cases[0].ip_mix': an ip_mix runs in mode packet")


def test_empirical_size_file_is_a_mix_of_its_samples(write, tmp_path):
    # One size per row (samples): 64 three times, 1518 once -> 64:3, 1518:1;
    # at line rate the packet level forwards 10e9 / (8 x (427.5 + 20)).
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("bytes\n64\n64\n1518\n64\n", encoding="utf-8")
    text = f"""
        scenario: emp
        kind: pipeline
        seed: 1
        platform: {PLATFORMS}/cn78xx-1800-ddr4-1866.yaml
        workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
        fitted: {PLATFORMS}/fitted/octeon.yaml
        port_rate_bps: 1.0e10
        method: both
        frame_order: sequence
        duration_us: 2000
        warmup_us: 200
        mixes:
          emp: {{file: {sizes}}}
        cases:
          - {{frame: emp, cores: 8}}
    """
    c = run_cases(write("emp.yaml", text))["emp-8c"]
    assert c.metrics["pps_analytic"] == pytest.approx(10e9 / (8 * ((3 * 64 + 1518) / 4 + 20)), rel=1e-12)
    assert c.metrics["pps"] == pytest.approx(c.metrics["pps_analytic"], rel=2e-3)

    bad = tmp_path / "bad.csv"
    bad.write_text("64\nsixty\n", encoding="utf-8")
    bad_text = text.replace(str(sizes), str(bad))
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(write("bad.yaml", bad_text)), "--out", str(out)), out)
    assert f"{bad}:2: expected 'bytes[,weight]'" in line


def test_one_size_mix_is_that_frame_size():
    one = _core.run_pipeline({"num_cores": 2, "fixed_cycles_per_packet": 300, "frame_mix": {"1518": 1},
                              "duration_s": 0.001})
    plain = _core.run_pipeline({"num_cores": 2, "fixed_cycles_per_packet": 300, "frame_bytes": 1518,
                                "duration_s": 0.001})
    assert one == plain


# ------------------------------------------------- flow-level traffic --

def lognormal_mean_packets(mu: float, sigma: float) -> float:
    """E[ceil X] of a lognormal X: the sum over k >= 0 of P(X > k), summed
    here term by term (P is below 1e-15 long before 10^6 for these)."""
    return 1 + sum(0.5 * math.erfc((math.log(k) - mu) / (sigma * math.sqrt(2))) for k in range(1, 10**6))


def test_flow_level_traffic_starts_flows_at_the_rate_over_their_mean_size():
    # Lognormal(2, 1) packets per flow, Poisson flow starts at offered /
    # E[S]: 2 Mpps for 50 ms is 1e5 packets in ~7,500 flows. Flows started
    # are Poisson (sd sqrt(n)); packets are a compound Poisson sum (variance
    # n E[S^2], E[S^2] <= E[(X + 1)^2]) less the unsent rest of the flows
    # active at the end (about num_flows of them, E[S] each at most).
    mean_s = lognormal_mean_packets(2, 1)
    es2 = math.exp(6) + 2 * math.exp(2.5) + 1
    cfg = {"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 10e9, "frame_bytes": 64,
           "offered_pps": 2e6, "arrivals": "poisson", "flow_sizes": "lognormal", "lognormal_mu": 2.0,
           "lognormal_sigma": 1.0, "num_flows": 100, "duration_s": 0.05, "warmup_s": 0.005}
    out = _core.run_pipeline(cfg)
    flows = 2e6 * 0.05 / mean_s
    assert out["flows_started"] == pytest.approx(flows, abs=4 * math.sqrt(flows) + 1)
    assert out["tx_packets"] == pytest.approx(1e5, abs=4 * math.sqrt(flows * es2) + 100 * mean_s)
    assert out["loss_pct"] == 0 and out["sequence_errors"] == 0
    assert _core.run_pipeline(cfg) == out  # same seed, bit-identical
    # the flow ids are the flows: many more than the fixed flows' 100
    assert out["flows_started"] > 50 * 100


def test_pareto_flow_sizes_are_a_scenario_key_and_exclude_zipf(write, tmp_path):
    head = f"""
        scenario: fl
        kind: pipeline
        seed: 1
        platform: {PLATFORMS}/cn78xx-1800-ddr4-1866.yaml
        workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
        fitted: {PLATFORMS}/fitted/octeon.yaml
        method: packet
        duration_us: 1000
        warmup_us: 100
        offered_load: 0.5
        arrivals: {{process: poisson}}
    """
    ok = write("fl.yaml", head + """
        flow_mix: {sizes: pareto, pareto_alpha: 1.5, pareto_min_packets: 2}
        cases:
          - {frame: simple_imix, cores: 16, flows: 64}
    """)
    (case,) = run_cases(ok).values()
    assert case.metrics["loss_pct"] == 0
    bad = write("bad.yaml", head + """
        flow_mix: {sizes: pareto, popularity: zipf}
        cases:
          - {frame: simple_imix, cores: 16}
    """)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(bad), "--out", str(out)), out)
    assert line.startswith(f"{bad}:") and "picks its own flows" in line
    bad_alpha = write("alpha.yaml", head + """
        flow_mix: {sizes: pareto, pareto_alpha: 1.0}
        cases:
          - {frame: simple_imix, cores: 16}
    """)
    line = one_line(run_cli("run", str(bad_alpha), "--out", str(out)), out)
    assert "pareto_alpha" in line


# ------------------------------------------------------------ pcapng --

def write_pcapng(path: Path, packets: list[tuple[float, int, int, int]], big_endian: bool = False) -> Path:
    """The packets of write_pcap as pcapng (draft-ietf-opsawg-pcapng): a
    Section Header, an Ethernet Interface Description with if_tsresol 10^-9,
    Enhanced Packet Blocks with nanosecond timestamps, and a Simple Packet
    Block-free, statistics-free file of one section."""
    o = ">" if big_endian else "<"

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack(o + "II", kind, 12 + len(body)) + body + struct.pack(o + "I", 12 + len(body))

    out = [block(0x0A0D0D0A, struct.pack(o + "IHHq", 0x1A2B3C4D, 1, 0, -1)),
           block(1, struct.pack(o + "HHI", 1, 0, 0) + struct.pack(o + "HH", 9, 1) + bytes([9, 0, 0, 0])
                 + struct.pack(o + "HH", 0, 0))]
    for t, length, host, port in packets:
        frame = bytearray(length)
        frame[12:14] = b"\x08\x00"
        frame[14] = 0x45
        frame[23] = 17
        frame[26:30] = bytes([198, 18, 0, host])
        frame[30:34] = bytes([198, 19, 0, 1])
        frame[34:38] = struct.pack(">HH", port, 7)
        ns = round(t * 1e9)
        out.append(block(6, struct.pack(o + "IIIII", 0, ns >> 32, ns & 0xFFFFFFFF, length, length) + bytes(frame)))
    path.write_bytes(b"".join(out))
    return path


@pytest.mark.parametrize("big_endian", [False, True])
def test_pcapng_trace_replays_as_the_same_pcap(tmp_path, big_endian):
    packets = trace_packets(3000, 1e-6)
    pcap = write_pcap(tmp_path / "t.pcap", packets)
    ng = write_pcapng(tmp_path / "t.pcapng", packets, big_endian)
    a, b = _core.trace_summary(str(pcap)), _core.trace_summary(str(ng))
    assert b["packets"] == 3000 and b["flows"] == 35
    assert b["frame_sizes"] == a["frame_sizes"] and b["span_s"] == pytest.approx(a["span_s"], abs=1e-6)
    cfg = {"num_cores": 8, "fixed_cycles_per_packet": 300, "port_bit_rate": 10e9, "duration_s": 0.004,
           "warmup_s": 0.0005}
    ra = _core.run_pipeline({**cfg, "trace_file": str(pcap)})
    rb = _core.run_pipeline({**cfg, "trace_file": str(ng)})
    for key in ("tx_packets", "trace_flows", "mean_frame_bytes", "loss_pct", "sequence_errors"):
        assert rb[key] == ra[key], key
    assert rb["forwarded_pps"] == pytest.approx(ra["forwarded_pps"], rel=1e-3)


def test_truncated_pcapng_is_one_error_line_with_its_packet(tmp_path):
    ng = write_pcapng(tmp_path / "t.pcapng", trace_packets(10, 1e-6))
    data = ng.read_bytes()
    # section 28 + interface 32 octets, then blocks of 32 + the frame padded to 4 (60, 590, 1514 in turn)
    start3 = 28 + 32 + (32 + 60) + (32 + 592) + (32 + 1516)
    ng.write_bytes(data[:start3 + 28 + 10])  # inside packet 3's data
    with pytest.raises(ValueError, match=rf"{ng}: packet 3: truncated record data"):
        _core.trace_summary(str(ng))


# ------------------------------------------------- router trace replay --

def test_router_replays_a_trace_at_the_offered_load(write, tmp_path):
    # Ethernet frames of 60/590/1514 bytes (IP 46/576/1500) in turn: every
    # port offers half its theoretical rate for that mix (POS frame = IP + 9
    # octets, t640.yaml), and carries the trace's IP sizes.
    pcap = write_pcap(tmp_path / "t.pcap", trace_packets(300, 2e-6))
    path = write("rt.yaml", f"""
        scenario: rtrace
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0002
        traces:
          lab: {{file: {pcap}, destinations: tester}}
        cases:
          - {{case: half, method: load, offered_load: 0.5, ip_mix: lab}}
    """)
    from routertwin.runners import router

    (case,) = router.run(load_scenario(path), silent())
    m = case.metrics
    mean_ip = (46 + 576 + 1500) / 3
    theoretical = 32 * 9584.64e6 / (8 * (mean_ip + 9))
    assert m["mean_ip_bytes"] == pytest.approx(mean_ip, rel=5e-3)
    assert m["tx_pps"] == pytest.approx(0.5 * theoretical, rel=1e-2)
    assert m["loss_pct"] == 0
    assert m["throughput_gbps"] == pytest.approx(m["pps"] * m["mean_ip_bytes"] * 8 / 1e9, rel=1e-9)


def write_addressed_pcap(path: Path, dsts: list[str], gap_s: float) -> Path:
    """A classic pcap (microseconds, Ethernet) of 590-byte UDP frames from
    198.18.0.1 to each destination in turn."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, dst in enumerate(dsts):
        frame = bytearray(590)
        frame[12:14] = b"\x08\x00"
        frame[14] = 0x45
        frame[23] = 17
        frame[26:30] = bytes([198, 18, 0, 1])
        frame[30:34] = bytes(int(x) for x in dst.split("."))
        frame[34:38] = struct.pack(">HH", 1000 + i % 7, 7)
        t = 1.7e9 + i * gap_s
        sec = int(t)
        out.append(struct.pack("<IIII", sec, round((t - sec) * 1e6), 590, 590) + bytes(frame))
    path.write_bytes(b"".join(out))
    return path


def test_router_routes_each_port_trace_by_its_destinations(write, tmp_path):
    # Ports 0 and 3 each replay their own capture; a FIB file sends
    # 198.19.q.0/24 to port q. What leaves each port is what the test counts
    # from the traces themselves, packet for packet: port p's first tx
    # packets, its trace looped; 198.20.0.1 has no route.
    fib = tmp_path / "fib.txt"
    fib.write_text("".join(f"198.19.{q}.0/24 {q}\n" for q in range(32)))
    traces = {0: [f"198.19.{(5 * k) % 7 + 10}.{k % 200 + 1}" for k in range(70)] + ["198.20.0.1"],
              3: [f"198.19.{20 + k % 3}.1" for k in range(30)]}
    files = {p: write_addressed_pcap(tmp_path / f"p{p}.pcap", d, 2e-6) for p, d in traces.items()}
    path = write("rp.yaml", f"""
        scenario: rports
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0002
        traces:
          lab: {{ports: {{0: {files[0]}, 3: {files[3]}}}}}
        cases:
          - {{case: half, method: load, offered_load: 0.5, ip_mix: lab, route_file: {fib}}}
    """)
    from routertwin.runners import router

    runs = [router.run(load_scenario(path), silent())[0] for _ in range(2)]
    ports = runs[0].distributions["ports"]
    want = [0] * 32
    no_route = 0
    for p, dsts in traces.items():
        sent = ports[p]["tx"]
        assert sent > len(dsts)  # more than one pass
        for k in range(sent):
            a = dsts[k % len(dsts)].split(".")
            if a[1] == "19":
                want[int(a[2])] += 1
            else:
                no_route += 1
    assert [pt["egress"] for pt in ports] == want
    assert sum(pt["tx"] for i, pt in enumerate(ports) if i not in traces) == 0  # idle ports
    assert runs[0].counters["no_route"] == no_route > 0
    # each replaying port offers half its own theoretical rate (590-byte frames: IP 576, POS + 9)
    theoretical = 2 * 9584.64e6 / (8 * (576 + 9))
    assert runs[0].metrics["tx_pps"] == pytest.approx(0.5 * theoretical, rel=2e-2)
    assert runs[1].distributions == runs[0].distributions and runs[1].metrics == runs[0].metrics


def test_router_trace_ports_are_checked_at_their_line(write, tmp_path):
    pcap = write_addressed_pcap(tmp_path / "p.pcap", ["198.19.0.1"] * 4, 1e-6)
    text = f"""
        scenario: rbad
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0002
        traces:
          lab: {{ports: {{40: {pcap}}}}}
        cases:
          - {{case: x, method: load, ip_mix: lab}}
    """
    path = write("rbad.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'ports: {40')}:")
    assert "port 40 is not one of the platform's ports 0..31" in line


# ----------------------------------------------------- lb arrivals --

def test_lb_bursty_unit_starts_keep_the_rate_within_the_mmpp_dispersion():
    # DNS queries (one packet a unit) started by an MMPP at 2e5/s: the count
    # in the 18 ms window is within 4 sd of its mean, the variance at most
    # the asymptotic index of dispersion x the mean (Fischer and
    # Meier-Hellstern 1993; the index grows towards it with the window).
    rate, ratio, high, cycle = 2e5, 6.0, 0.1, 2e-3
    low = rate / (high * ratio + (1 - high))
    l1, l2 = ratio * low, low
    r1, r2 = 1 / (high * cycle), 1 / ((1 - high) * cycle)
    idc = 1 + 2 * r1 * r2 * (l1 - l2) ** 2 / ((r1 + r2) ** 2 * (l1 * r2 + l2 * r1))
    cfg = {"workload": "dns", "rate": rate, "num_cores": 4, "arrivals": "mmpp", "mmpp_rate_ratio": ratio,
           "mmpp_high_fraction": high, "mmpp_cycle_s": cycle, "duration_s": 0.02, "warmup_s": 0.002}
    out = _core.run_lb(cfg)
    window = 0.018
    n = rate * window
    assert out["offered_rate"] == pytest.approx(rate, abs=4 * math.sqrt(idc * n) / window)
    assert out["units_failed"] == 0
    assert _core.run_lb(cfg) == out
    # on/off: bursts of a geometric number of units (mean B) are at most as
    # dispersed as Poisson batches of that size, index E[B^2] / E[B] = 2B - 1
    onoff = _core.run_lb({**cfg, "arrivals": "onoff", "burst_mean_units": 32, "burst_peak_ratio": 8})
    assert onoff["offered_rate"] == pytest.approx(rate, abs=4 * math.sqrt((2 * 32 - 1) * n) / window)
    with pytest.raises(ValueError, match="burst_peak_ratio"):
        _core.run_lb({**cfg, "arrivals": "onoff", "burst_peak_ratio": 1.0})


# ------------------------------------------------ lb request/response sizes --

def test_lb_response_table_gives_its_mean_packets_and_a_trace_needs_http10(write, tmp_path):
    # http10 responses of 500 / 3000 / 10000 bytes at 1:1:2: 1, 3 and 7
    # segments of 1460, plus the client's ACK of every second segment but
    # the last (0, 1, 3): 6 + 1 + (1 + 4 + 2 x 10) / 4 = 13.25 packets a
    # connection on average; the per-unit sd is 3.9 (1, 4 or 10 packets).
    cfg = {"workload": "http10", "rate": 5e5, "num_cores": 32, "duration_s": 0.02, "warmup_s": 0.005,
           "response_table": {"500": 1, "3000": 1, "10000": 2}}
    out = _core.run_lb(cfg)
    units = 5e5 * 0.02
    assert out["packets_per_unit"] == pytest.approx(13.25, abs=4 * 3.9 / math.sqrt(units))
    assert _core.run_lb(cfg) == out
    text = f"""
        scenario: lbsizes
        kind: lb
        seed: 1
        platform: {PLATFORMS}/adx8000.yaml
        fitted: {PLATFORMS}/fitted/adx.yaml
        workload: http11
        trace: {{file: {write_pcap(tmp_path / "t.pcap", trace_packets(10, 1e-6))}}}
        cases:
          - {{id: a, rate: 1.0e5}}
    """
    path = write("lb.yaml", text)
    out_dir = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out_dir)), out_dir)
    assert line.startswith(f"{path}:{line_of(text, 'trace:')}:")
    assert "a trace's connections are http10 units, not http11" in line


def test_lb_sizes_belong_to_http_units(write, tmp_path):
    text = f"""
        scenario: lbdns
        kind: lb
        seed: 1
        platform: {PLATFORMS}/adx8000.yaml
        fitted: {PLATFORMS}/fitted/adx.yaml
        workload: dns
        response_sizes: {{sizes: pareto, pareto_alpha: 1.5}}
        cases:
          - {{id: a, rate: 1.0e5}}
    """
    path = write("lbdns.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'response_sizes')}:")
    assert "sizes are those of http11 and http10 units, not dns" in line


# ------------------------------------------------------- lb TCP windows --

def lb_window_scenario(write, window: str) -> Path:
    return write("lbwin.yaml", f"""
        scenario: lbwin
        kind: lb
        seed: 1
        platform: {PLATFORMS}/adx8000.yaml
        fitted: {PLATFORMS}/fitted/adx.yaml
        workload: http10
        response_sizes: {{sizes: table, table: {{100000: 1}}}}
        {window}
        duration_us: 20000
        warmup_us: 4000
        cases:
          - {{id: a, rate: 2000}}
    """)


def test_lb_window_response_time_is_slow_starts_rounds(write):
    # 100 kB = 69 segments of 1460: ceil(log2(69 / 10 + 1)) = 3 rounds of a
    # 1 ms RTT. The response starts after the SYN, the SYN-ACK (a step gap,
    # 10 us), the client's ACK (an RTT), the request and a step gap; round k
    # starts k (RTT + 2 tx) after the first segment (tx = 1538 octets at 10
    # Gbit/s); the last segment, 68, is at position 38 of round 2; then the
    # server's FIN (a step gap), the client's FIN (an RTT), the last ACK.
    from routertwin.runners import lb

    gap, rtt, tx = 10e-6, 1e-3, 1538 * 8 / 10e9
    windowed = lb_window_scenario(write, "tcp_window: {rtt_us: 1000, receive_window_bytes: 1000000}")
    (c,) = lb.run(load_scenario(windowed), silent())
    last = 3 * gap + rtt + 2 * (rtt + 2 * tx) + 38 * tx + gap + rtt + gap
    assert c.metrics["unit_latency_max_us"] == pytest.approx(last * 1e6, abs=5)
    assert c.metrics["units_failed"] == 0
    # the paced script: 110 packets one step gap apart
    (p,) = lb.run(load_scenario(lb_window_scenario(write, "")), silent())
    assert p.metrics["unit_latency_max_us"] == pytest.approx(109 * gap * 1e6, abs=5)


def test_lb_window_below_two_segments_is_one_error_line(write, tmp_path):
    text = f"""
        scenario: lbwin
        kind: lb
        seed: 1
        platform: {PLATFORMS}/adx8000.yaml
        fitted: {PLATFORMS}/fitted/adx.yaml
        workload: http10
        mss: 8960
        tcp_window: {{receive_window_bytes: 10000}}
        cases:
          - {{id: a, rate: 1000}}
    """
    path = write("lbwin.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'tcp_window')}:")
    assert "must hold two segments of mss 8960 (>= 17920)" in line


# ------------------------------------------------------- router arrivals --

ROUTER_BASE = {"mode": "packet", "ports": 32, "ports_per_pfe": 2, "ip_bytes": 40, "offered_load": 0.5,
               "duration_s": 0.0005, "seed": 1}


def test_router_random_arrivals_offer_the_load_and_are_seeded():
    # Poisson frames at half the theoretical rate on every port: the count
    # over the run is Poisson, n = 0.5 x theoretical x T, sd sqrt(n) (the
    # port's shaping at load 0.5 leaves a fraction of a frame queued at the end)
    constant = _core.run_router(ROUTER_BASE)
    poisson = _core.run_router({**ROUTER_BASE, "arrivals": "poisson"})
    n = 0.5 * poisson["theoretical_pps"] * ROUTER_BASE["duration_s"]
    assert poisson["tx_packets"] == pytest.approx(n, abs=4 * math.sqrt(n) + 32)
    assert poisson["tx_packets"] != constant["tx_packets"]
    again = _core.run_router({**ROUTER_BASE, "arrivals": "poisson"})
    assert {k: v for k, v in again.items() if k != "wall_s"} == {k: v for k, v in poisson.items() if k != "wall_s"}
    assert _core.run_router({**ROUTER_BASE, "arrivals": "poisson", "seed": 2})["tx_packets"] != poisson["tx_packets"]
    # on/off: bursts of a geometric number of frames (mean B) at line rate
    # are at most as dispersed as Poisson batches of B, index 2B - 1
    onoff = _core.run_router({**ROUTER_BASE, "arrivals": "onoff", "burst_mean_frames": 16, "burst_peak_load": 1.0})
    assert onoff["tx_packets"] == pytest.approx(n, abs=4 * math.sqrt((2 * 16 - 1) * n) + 32)
    assert onoff["lost_packets"] == 0


def test_router_arrivals_are_refused_where_they_cannot_apply(write, tmp_path):
    with pytest.raises(ValueError, match="mode packet only"):
        _core.run_router({**ROUTER_BASE, "mode": "steady", "arrivals": "poisson"})
    with pytest.raises(ValueError, match="burst_peak_load"):
        _core.run_router({**ROUTER_BASE, "arrivals": "onoff", "burst_peak_load": 0.4})
    pcap = write_pcap(tmp_path / "t.pcap", trace_packets(30, 2e-6))
    text = f"""
        scenario: rarr
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0002
        traces:
          lab: {{file: {pcap}}}
        arrivals: {{process: poisson}}
        cases:
          - {{case: t, method: load, offered_load: 0.5, ip_mix: lab}}
    """
    path = write("rarr.yaml", text)
    out = tmp_path / "out"
    line = one_line(run_cli("run", str(path), "--out", str(out)), out)
    assert line.startswith(f"{path}:{line_of(text, 'arrivals:')}:")
    assert "replays a trace, which brings its own instants" in line


def test_lb_zipf_connections_load_the_hottest_connections_core():
    # http11, Zipf(1.2) over the 96 x 20 persistent connections: the core
    # holding the hottest connection carries at least its share p1 of the
    # transactions, so its CPU is at least p1 x cores x the mean CPU (every
    # transaction costs the same); the report's rotation loads the cores evenly.
    cfg = {"workload": "http11", "rate": 1e6, "num_cores": 32, "fixed_cycles_per_packet": 100,
           "duration_s": 0.002, "warmup_s": 0.0002}
    p1 = 1 / sum(k ** -1.2 for k in range(1, 96 * 20 + 1))
    zipf = _core.run_lb({**cfg, "flow_popularity": "zipf", "zipf_exponent": 1.2})
    assert zipf["cpu_max_pct"] >= 0.95 * p1 * 32 * zipf["cpu_mean_pct"]
    rotation = _core.run_lb(cfg)
    assert rotation["cpu_max_pct"] < 1.5 * rotation["cpu_mean_pct"]
    assert zipf["offered_rate"] == pytest.approx(rotation["offered_rate"], rel=1e-9)
    with pytest.raises(ValueError, match="flow_popularity"):
        _core.run_lb({**cfg, "flow_popularity": "pareto"})


def test_router_zipf_destinations_split_egress_by_the_pmf(tmp_path):
    # 4 ports; route i (10.0.i.0/24, i < 40) is destination of rank
    # i // 4 + 1 of the port whose peer is i % 4 (route order). Every port's
    # rank-1 destination leaves by port 0, rank r > 1 by port 1 + (r - 2) mod 3.
    # Under Zipf(1) over 10 destinations each port's frames split by the pmf,
    # binomially (4 sd): port 0 carries 1 / H(10) = 34 % of all; the
    # rotation gives it exactly a tenth.
    ports = 4
    egress_of_rank = [0] + [1 + (r - 2) % 3 for r in range(2, 11)]
    fib = tmp_path / "fib.txt"
    fib.write_text("".join(f"10.0.{i}.0/24 {egress_of_rank[i // ports]}\n" for i in range(40)))
    cfg = {"mode": "packet", "ports": ports, "ports_per_pfe": 2, "ip_bytes": 40, "offered_load": 0.5,
           "duration_s": 0.0005, "seed": 1, "route_file": str(fib), "routes_as_destinations": True}

    def split(pmf: list[float], out: dict) -> None:
        tx = sum(pt["tx_packets"] for pt in out["ports"])
        assert out["rx_packets"] == tx
        for q in range(ports):
            share = sum(w for r, w in enumerate(pmf) if egress_of_rank[r] == q)
            sd = math.sqrt(tx * share * (1 - share))
            assert out["ports"][q]["egress_packets"] == pytest.approx(tx * share, abs=4 * sd + 4), q

    zipf = [k ** -1.0 for k in range(1, 11)]
    split([w / sum(zipf) for w in zipf], _core.run_router({**cfg, "destination_popularity": "zipf",
                                                            "zipf_exponent": 1.0}))
    split([0.1] * 10, _core.run_router(cfg))
    with pytest.raises(ValueError, match="packet only"):
        _core.run_router({**cfg, "mode": "steady", "destination_popularity": "zipf"})


def test_router_and_lb_scenarios_carry_arrivals_and_popularity(write):
    # the YAML keys reach the models: an MMPP router case offers its load
    # (count dispersion of the MMPP: 4 sd of sqrt(IDC x n) with the
    # asymptotic index, 1 + 2 r1 r2 (l1 - l2)^2 / ((r1 + r2)^2 (l1 r2 + l2 r1))
    # per port); an lb scenario's Zipf connections load one core as above
    # (with the ADX's fitted prices: 42.8 % against a bound of 37.7 %)
    from routertwin.runners import lb, router

    path = write("rarr.yaml", f"""
        scenario: rarr
        kind: router
        seed: 1
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        mode: packet
        duration_s: 0.0005
        arrivals: {{process: mmpp, mmpp_rate_ratio: 2, mmpp_high_fraction: 0.5, mmpp_cycle_us: 20}}
        flow_mix: {{popularity: zipf, zipf_exponent: 1.0}}
        cases:
          - {{case: m, method: load, offered_load: 0.3, ip_bytes: 1500}}
    """)
    (c,) = router.run(load_scenario(path), silent())
    theoretical = 32 * 9584.64e6 / (8 * (1500 + 9))
    n = 0.3 * theoretical * 0.0005
    mean = 0.3 * theoretical / 32
    l1, l2 = 2 * mean / 1.5, mean / 1.5  # ratio 2, half the time high
    r1 = r2 = 1 / 10e-6  # mean sojourns 10 us each
    idc = 1 + 2 * r1 * r2 * (l1 - l2) ** 2 / ((r1 + r2) ** 2 * (l1 * r2 + l2 * r1))
    assert c.metrics["tx_pps"] * 0.0005 == pytest.approx(n, abs=4 * math.sqrt(idc * n) + 32)
    text = f"""
        scenario: lbzipf
        kind: lb
        seed: 1
        platform: {PLATFORMS}/adx8000.yaml
        fitted: {PLATFORMS}/fitted/adx.yaml
        workload: http11
        flow_mix: {{popularity: zipf, zipf_exponent: 1.2}}
        duration_us: 2000
        cases:
          - {{id: a, rate: 1.0e6}}
    """
    (z,) = lb.run(load_scenario(write("lbz.yaml", text)), silent())
    p1 = 1 / sum(k ** -1.2 for k in range(1, 96 * 20 + 1))
    # the idle-aging sweeps' CPU is spread over the shards, not carried by
    # transactions: the bound takes the transactions' share of the mean
    assert z.metrics["cpu_max"] >= 0.95 * p1 * 32 * (z.metrics["cpu_util"] - z.metrics["aging_cpu"])
