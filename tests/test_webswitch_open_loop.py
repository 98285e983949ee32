"""Open-loop offered requests on the webswitch kind's ns-3 engine (issue 16):
the arrival counts are those of the process (Poisson, MMPP: within 4 sd of
rate x T), the response time tends to the unloaded path's at low load and
follows Pollaczek-Khinchine's M/D/1 mean in front of one deterministic
server CPU, the throughput is capped by that CPU above it, the bytes per
request are those of the file popularity, a seed gives the same numbers,
and the keys are checked (FILE:LINE: key)."""

from __future__ import annotations

import math

import pytest

from conftest import ROOT, line_of, one_line, run_cli, write_scenario
from routertwin.runners.webswitch.model import Case
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.runner import case_result_ns3
from routertwin.runners.webswitch.schema import Ns3Options, OpenLoop
from routertwin.runners.webswitch.testbed import load_testbed

PLATFORMS = ROOT / "scenarios" / "platforms"
TESTBED = ROOT / "scenarios" / "workloads" / "webbench-nctu.yaml"
NORTEL = PLATFORMS / "nctu-nortel-ace180e.yaml"
HEAD = f"""
    scenario: s
    kind: webswitch
    seed: 1
    testbed: {TESTBED}
"""
# one server whose CPU takes 2 ms a request (nothing a connection): a
# deterministic FIFO server of 500 requests/s, far below every link
SERVICE_S = 2e-3


def one_server_testbed(one_class: bool = True):
    tb = load_testbed(TESTBED)
    tb = tb.model_copy(update={"server": tb.server.model_copy(update={"cpu_per_request_us": SERVICE_S * 1e6,
                                                                        "cpu_per_connection_us": 0.0})})
    if one_class:  # every request the same: the response time has no size spread
        tb = tb.model_copy(update={"file_classes": [tb.file_classes[0].model_copy(update={"share": 1.0})]})
    return tb


def run_open(rps: float, tb=None, arrivals: str = "poisson", seed: int = 1, duration_s: float = 1.0,
             warmup_s: float = 0.1, mode: str = "l4", servers: int = 1, **open_keys):
    tb = tb or one_server_testbed()
    ol = OpenLoop(offered_rps=[rps], **open_keys) if "trace" in open_keys else \
        OpenLoop(arrivals=arrivals, offered_rps=[rps], **open_keys)
    case = Case(load_webswitch(NORTEL), mode, "nat", "1.0", 3, 14, servers, "none")
    result, _ = case_result_ns3("o", case, NORTEL, tb, Ns3Options(warmup_s=warmup_s, duration_s=duration_s), seed,
                                ol.native_keys(rps))
    return result


def test_poisson_arrivals_in_the_window_are_within_4_sd_of_rate_times_t():
    # Poisson: Var N(T) = rate x T
    r = run_open(300.0, duration_s=1.0)
    n = r.counters["offered_requests"]
    assert abs(n - 300.0) <= 4 * math.sqrt(300.0)
    assert r.counters["answered_requests"] == n  # a light load: every one answered


def test_mmpp_arrivals_are_within_4_sd_of_rate_times_t_with_the_mmpp_dispersion():
    # the asymptotic index of dispersion of a two-state MMPP (Fischer and
    # Meier-Hellstern, "The MMPP cookbook", 1993), computed here by hand; it
    # bounds Var N(T) / E N(T) from above for any window
    rate, ratio, high, cycle, t = 300.0, 4.0, 0.2, 0.1, 1.0
    low = rate / (high * ratio + 1 - high)
    l1, l2 = ratio * low, low
    r1, r2 = 1 / (high * cycle), 1 / ((1 - high) * cycle)
    idc = 1 + 2 * r1 * r2 * (l1 - l2) ** 2 / ((r1 + r2) ** 2 * (l1 * r2 + l2 * r1))
    assert idc > 2  # bursty enough that a Poisson bound would be the wrong one
    counts = [run_open(rate, arrivals="mmpp", seed=s, duration_s=t, mmpp_rate_ratio=ratio, mmpp_high_fraction=high,
                       mmpp_cycle_s=cycle).counters["offered_requests"] for s in (1, 2)]
    for n in counts:
        assert abs(n - rate * t) <= 4 * math.sqrt(idc * rate * t)
    assert counts[0] != counts[1]


def test_low_load_response_time_is_the_unloaded_path_and_poisson_load_follows_md1():
    # At 10 requests/s (server CPU 2 % busy) a request meets nobody: its
    # response time is the unloaded path's, which WebBench's closed loop of
    # one thread on one client PC measures another way (its cycle: client
    # CPU, connection, request, response; a different client code path).
    # At 250/s the server CPU is a FIFO server of deterministic service
    # D = 2 ms under (nearly) Poisson arrivals, rho = 0.5: Pollaczek-
    # Khinchine's M/D/1 mean wait rho D / (2 (1 - rho)) = 1 ms comes on top
    # of the unloaded path (the links, below 15 % busy, add little).
    # Tolerance 20 % of that wait: about 3 sd of a 10-second window's mean
    # (seeds 1-4 over 40 s gave 0.96, 0.96, 1.02, 0.98 ms).
    tb = one_server_testbed()
    idle = run_open(10.0, tb=tb, duration_s=2.0)
    assert idle.metrics["latency_p999_us"] <= idle.metrics["latency_p50_us"] * 1.05  # nobody waits
    one_thread = tb.model_copy(update={"client": tb.client.model_copy(update={"threads": 1})})
    closed, _ = case_result_ns3("c", Case(load_webswitch(NORTEL), "l4", "nat", "1.0", 3, 1, 1, "none"), NORTEL,
                                one_thread, Ns3Options(warmup_s=0.1, duration_s=0.5), 1)
    unloaded_ms = closed.metrics["latency_avg"]
    assert idle.metrics["latency_avg"] == pytest.approx(unloaded_ms, rel=0.01)
    assert unloaded_ms > SERVICE_S * 1e3  # the server's 2 ms are inside it
    lam, rho = 250.0, 250.0 * SERVICE_S
    busy = run_open(lam, tb=tb, duration_s=10.0)
    wait_ms = rho * SERVICE_S / (2 * (1 - rho)) * 1e3
    assert busy.counters["answered_requests"] == busy.counters["offered_requests"]
    assert busy.metrics["latency_avg"] - unloaded_ms == pytest.approx(wait_ms, rel=0.2)
    assert busy.metrics["latency_p99_us"] > busy.metrics["latency_p50_us"]


def test_offered_above_the_server_cpu_is_served_at_its_rate_and_the_rest_wait():
    # 800 requests/s at a 500/s server CPU: it is busy all the window, the
    # answers come at 1 / D, and the backlog is unanswered after the drain
    r = run_open(800.0, duration_s=1.0, warmup_s=0.2)
    assert r.metrics["requests_per_s"] == pytest.approx(1 / SERVICE_S, rel=0.03)
    assert r.counters["unanswered_requests"] + r.counters["refused_requests"] > 0
    assert r.metrics["latency_p99_us"] > 100 * SERVICE_S * 1e6  # a growing queue: p99 over 200 ms


@pytest.mark.parametrize("popularity", ["uniform", "zipf"])
def test_bytes_per_answer_are_those_of_the_popularity_over_the_file_classes(popularity):
    # The mean response bytes (head + body) of the answered requests is
    # sum_k p_k (head + bytes_k), p_k uniform or Zipf(1) over the classes as
    # listed; within 4 standard errors of the class sizes' spread.
    tb = load_testbed(TESTBED)
    classes = tb.file_classes
    w = [1.0] * len(classes) if popularity == "uniform" else [(k + 1) ** -1.0 for k in range(len(classes))]
    p = [x / sum(w) for x in w]
    size = [tb.response_header_bytes + f.bytes for f in classes]
    mean = sum(pk * s for pk, s in zip(p, size))
    sd = math.sqrt(sum(pk * (s - mean) ** 2 for pk, s in zip(p, size)))
    r = run_open(600.0, tb=tb, mode="l7", servers=6, duration_s=1.0, popularity=popularity, zipf_exponent=1.0)
    n = r.metrics["requests_per_s"] * 1.0
    got = r.metrics["throughput_mbps"] * 1e6 / 8 / r.metrics["requests_per_s"]
    assert got == pytest.approx(mean, abs=4 * sd / math.sqrt(n))
    assert r.metrics["refused_pct"] == 0.0


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others():
    a, b, c = (run_open(300.0, seed=s, duration_s=0.3, arrivals="onoff") for s in (7, 7, 8))
    assert a.metrics == b.metrics and a.counters == b.counters and a.distributions == b.distributions
    assert a.metrics != c.metrics


def test_an_open_loop_scenario_runs_and_reports_percentiles(tmp_path):
    path, _ = write_scenario(tmp_path, HEAD, f"""
        mode: l7
        servers: 2
        clients: 2
        http: ["1.0"]
        engine: ns3
        ns3: {{warmup_s: 0.02, duration_s: 0.1, drain_s: 0.1}}
        open_loop:
          arrivals: poisson
          offered_rps: [100, 200]
          popularity: zipf
        products: [{NORTEL}]
    """)
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    import json

    doc = json.loads(next((tmp_path / "out").rglob("*.json")).read_text())
    cases = {c["case"]: c for c in doc["cases"]}
    assert set(cases) == {"nortel-ace180e-l7-nat-http10-r3-o100", "nortel-ace180e-l7-nat-http10-r3-o200"}
    for c in cases.values():
        assert c["metrics"]["latency_p50_us"] <= c["metrics"]["latency_p99_us"] <= c["metrics"]["latency_max_us"]


@pytest.mark.parametrize("body,key,words", [
    ("engine: mva\nopen_loop: {offered_rps: [10]}", "open_loop:", "engine: ns3"),
    ("engine: ns3\nhttp: ['1.1']\nopen_loop: {offered_rps: [10]}", "http:", "HTTP/1.0"),
    ("engine: ns3\nhttp: ['1.0']\nopen_loop: {offered_rps: [10], arivals: poisson}", "open_loop:", "arivals"),
])
def test_bad_open_loop_keys_name_file_line_and_key(tmp_path, body, key, words):
    path, text = write_scenario(tmp_path, HEAD, f"mode: l4\nproducts: [{NORTEL}]\n" + body)
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    line = one_line(proc, tmp_path / "out")
    assert f"s.yaml:{line_of(text, key)}:" in line and words in line


def http_head(target: str, size: int, version: str = "1.1", host: str = "www.example.com", extra: str = "") -> bytes:
    """A GET head of `target`, padded with an X-Pad line to `size` octets."""
    head = f"GET {target} HTTP/{version}\r\nHost: {host}\r\n{extra}"
    pad = size - len(head) - len("X-Pad: \r\n\r\n")
    assert pad >= 0, (target, size)
    return (head + f"X-Pad: {'p' * pad}\r\n\r\n").encode()


def write_keepalive_pcap(path, conns, mss=1460, snaplen=65535):
    """A pcap (Ethernet) of TCP connections from 10.0.0.2:(40000 + k) to
    10.0.0.1:80, each (syn_s, [(request octets, response_bytes[, think_s]),
    ...]): the handshake, then per exchange the request (one segment; a
    later one think_s, default 10 us, after the previous response's last
    segment) and the response in mss segments 10 us apart, then both FINs.
    Returns (path, the 0-based packet index of every request, connection
    by connection)."""
    import struct

    records, index = [], []

    def frame(t, src, dst, sport, dport, flags, payload=b""):
        tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 1, 5 << 4, flags, 65535, 0, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 20 + len(payload), 0, 0, 64, 6, 0, bytes(src), bytes(dst))
        pkt = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp + payload
        sec = int(t)
        cap = pkt[:snaplen]
        records.append(struct.pack("<IIII", sec, int(round((t - sec) * 1e6)), len(cap), len(pkt)) + cap)

    client, server = (10, 0, 0, 2), (10, 0, 0, 1)
    SYN, ACK, FIN, PSH = 0x02, 0x10, 0x01, 0x08
    for k, (t, exchanges) in enumerate(conns):
        c2s, s2c = (client, server, 40000 + k, 80), (server, client, 80, 40000 + k)
        frame(t, *c2s, SYN)
        frame(t + 1e-4, *s2c, SYN | ACK)
        frame(t + 2e-4, *c2s, ACK)
        dt, mine = 3e-4, []
        for j, (request, resp, *think) in enumerate(exchanges):
            if j and think:
                dt += think[0] - 1e-5  # from the last response segment
            mine.append(len(records))
            frame(t + dt, *c2s, PSH | ACK, request)
            sent, dt = 0, dt + 1e-4
            while sent < resp:
                n = min(mss, resp - sent)
                frame(t + dt, *s2c, ACK, b"r" * n)
                sent, dt = sent + n, dt + 1e-5
        frame(t + dt, *s2c, FIN | ACK)
        frame(t + dt + 1e-5, *c2s, FIN | ACK)
        frame(t + dt + 2e-5, *c2s, ACK)
        index.append(mine)
    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, 1) + b"".join(records))
    return path, index


def write_http_pcap(path, conns, mss=1460):
    """A pcap of HTTP/1.0 connections of one request each: (syn_s,
    request_bytes, response_bytes), the request a GET of /f<k> padded to
    request_bytes."""
    return write_keepalive_pcap(path, [(t, [(http_head(f"/f{k}", req, "1.0"), resp)])
                                       for k, (t, req, resp) in enumerate(conns)], mss)[0]


def test_a_traces_connections_arrive_looped_at_the_rate_with_their_response_bytes(tmp_path):
    # 20 connections, SYNs 5 ms apart, responses of 1,250, 5,250 and 20,250
    # bytes (head + body) in turn. Rescaled to 400/s a pass lasts 50 ms:
    # the 0.5 s window holds exactly 10 passes, 200 requests, and the bytes
    # of an answer average the trace's (the window's edges move a few
    # answers: 2 %). As captured: 200/s, 100 requests. (The window, from
    # 0.101 s, keeps its edges 1 ms off every instant.)
    sizes = [1250, 5250, 20250]
    conns = [(1.0 + 0.005 * k, 200, sizes[k % 3]) for k in range(20)]
    pcap = write_http_pcap(tmp_path / "http.pcap", conns)
    mean = sum(c[2] for c in conns) / len(conns)
    tb = load_testbed(TESTBED)
    assert tb.response_header_bytes < min(sizes)
    r = run_open(400.0, tb=tb, mode="l7", servers=2, warmup_s=0.101, duration_s=0.5, trace={"file": pcap})
    assert r.counters["offered_requests"] == 200
    assert r.counters["answered_requests"] == 200
    got = r.metrics["throughput_mbps"] * 1e6 / 8 / r.metrics["requests_per_s"]
    assert got == pytest.approx(mean, rel=0.02)
    captured = run_open(400.0, tb=tb, mode="l7", servers=2, warmup_s=0.101, duration_s=0.5,
                        trace={"file": pcap, "rescale": False})
    assert captured.counters["offered_requests"] == 100


def trace_run_error(tmp_path, pcap) -> str:
    """`routertwin run` of an L7 open-loop replay of `pcap`: its one error line."""
    path, _ = write_scenario(tmp_path, HEAD, f"""
        mode: l7
        servers: 2
        http: ["1.0"]
        engine: ns3
        open_loop:
          offered_rps: [100]
          trace: {{file: {pcap}}}
        products: [{NORTEL}]
    """)
    return one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")


def test_a_truncated_trace_is_one_line_naming_the_file_and_packet(tmp_path):
    pcap = write_http_pcap(tmp_path / "h.pcap", [(1.0, 200, 1250), (1.01, 200, 1250)])
    pcap.write_bytes(pcap.read_bytes()[:-30])
    line = trace_run_error(tmp_path, pcap)
    assert str(pcap) in line and "packet" in line and "truncated" in line


def test_a_traces_keepalive_requests_are_read_with_their_real_targets_hosts_and_packets(tmp_path):
    # what the C core's HTTP parser must read from the payload: each
    # exchange's request-target, Host and version as written, persistence
    # by RFC 7230 6.3 (1.1 unless "close"; 1.0 only with "keep-alive"), the
    # head's octets, the server's payload of the exchange and the packet
    # the request came in (the generator's own record count)
    conns = [(1.0, [(http_head("/img/a.gif", 300), 2000),
                    (http_head("/doc/b.htm?x=1", 280, host="shop.example.org"), 9000, 0.03),
                    (http_head("/c", 250, extra="Connection: close\r\n"), 500, 0.2)]),
             (1.01, [(http_head("/d.gif", 220, "1.0"), 800)]),
             (1.02, [(http_head("/e.htm", 240, "1.0", extra="Connection: keep-alive\r\n"), 700),
                     (http_head("/f.gif", 240, "1.0", extra="Connection: keep-alive\r\n"), 600)])]
    pcap, index = write_keepalive_pcap(tmp_path / "ka.pcap", conns)
    from routertwin.runners.webswitch.runner import http_trace

    trace = http_trace(pcap)
    got = [[(q["target"], q["host"], q["version"], q["keep_alive"], q["head_bytes"], q["response_bytes"],
             q["packet"]) for q in c["requests"]] for c in trace]
    # think times from the previous answer's last segment (microsecond stamps)
    think = [[q["think_ns"] for q in c["requests"]] for c in trace]
    assert think[0][0] == think[1][0] == think[2][0] == 0
    assert think[0][1] == pytest.approx(30e6, abs=2e3) and think[0][2] == pytest.approx(200e6, abs=2e3)
    assert think[2][1] == pytest.approx(10e3, abs=2e3)
    assert got == [
        [("/img/a.gif", "www.example.com", "1.1", True, 300, 2000, index[0][0]),
         ("/doc/b.htm?x=1", "shop.example.org", "1.1", True, 280, 9000, index[0][1]),
         ("/c", "www.example.com", "1.1", False, 250, 500, index[0][2])],
        [("/d.gif", "www.example.com", "1.0", False, 220, 800, index[1][0])],
        [("/e.htm", "www.example.com", "1.0", True, 240, 700, index[2][0]),
         ("/f.gif", "www.example.com", "1.0", True, 240, 600, index[2][1])]]


@pytest.mark.parametrize("what", ["malformed", "cut"])
def test_a_request_the_parser_refuses_is_one_line_naming_the_file_and_packet(tmp_path, what):
    # an HTTP/2.0 request line (the parser takes 1.0 and 1.1 only) in the
    # second exchange, or every head cut by an 80-octet snaplen (26 octets
    # of payload captured): refused before any case runs, exit 2
    good = (http_head("/a.gif", 200), 1000)
    if what == "malformed":
        pcap, index = write_keepalive_pcap(tmp_path / "h.pcap", [(1.0, [good, (b"GET /b HTTP/2.0\r\n\r\n", 900)])])
        packet, words = index[0][1], "bad_version"
    else:
        pcap, index = write_keepalive_pcap(tmp_path / "h.pcap", [(1.0, [good])], snaplen=80)
        packet, words = index[0][0], "not whole in the capture"
    line = trace_run_error(tmp_path, pcap)
    assert f"{pcap}: packet {packet}: " in line and words in line


def run_trace_native(pcap, product: str, rps: float, servers: int = 4, duration_s: float = 0.5):
    """_core.run_webbench_testbed of a trace in mode l7 (every utilization)."""
    from routertwin import _core
    from routertwin.runners.webswitch.runner import ns3_config

    path = PLATFORMS / f"nctu-{product}.yaml"
    tb = load_testbed(TESTBED)
    case = Case(load_webswitch(path), "l7", "nat", "1.0", 3, 14, servers, "none")
    keys = OpenLoop(offered_rps=[rps], trace={"file": pcap}).native_keys(rps)
    return _core.run_webbench_testbed(ns3_config(case, path, tb, Ns3Options(warmup_s=0.101, duration_s=duration_s),
                                                 1, keys))


@pytest.mark.parametrize("kind,busy,idle", [("gif", (1, 2), (3, 4)), ("htm", (3, 4), (1, 2))])
def test_url_rules_switch_the_replayed_requests_by_their_real_urls(tmp_path, kind, busy, idle):
    # section 3.4's rules: .gif to the first half of the servers, .htm to
    # the second. A trace whose keep-alive connections ask only for .gif
    # (or only .htm) paths must leave the other half's links idle; the
    # synthetic CLASS_<bytes> path a trace used to get (no extension: the
    # default rule, any server) would load all four
    conns = [(1.0 + 0.01 * k, [(http_head(f"/p{k}/i{j}.{kind}", 260), 3000 + 500 * j) for j in range(3)])
             for k in range(10)]
    pcap, _ = write_keepalive_pcap(tmp_path / f"{kind}.pcap", conns)
    r = run_trace_native(pcap, "nortel-ace180e", 300.0)
    assert r["answered"] == r["offered"] > 0
    for k in busy:
        assert r["utilization"][f"server{k}.link_out"] > 0.005
    for k in idle:
        assert r["utilization"][f"server{k}.link_out"] == 0.0


def test_each_products_keepalive_strategy_applies_to_every_replayed_request(tmp_path):
    # seed 003 section 5.4 per request, on connections of 4 HTTP/1.1
    # requests each (the switch counts a connection side at each open):
    # Nortel keeps the client side and resets the server side after each
    # request: 1/4 + 1 sides a request; Foundry downgrades to close: a new
    # connection each way for every request, 2; F5 keeps the server
    # connection of a client connection and rebinds it (docs/nctu.md, "The
    # ns-3 web switch" step 5): all four .gif requests go to one server, so
    # one side each way per connection, 2/4. Every request is answered
    # with the captured body. Tolerance 0.1: connections cut by the
    # window's edges.
    sizes = [1200, 5200, 20200, 2200]
    conns = [(1.0 + 0.02 * k, [(http_head(f"/c{k}/o{j}.gif", 250), sizes[j]) for j in range(4)]) for k in range(20)]
    pcap, _ = write_keepalive_pcap(tmp_path / "ka.pcap", conns)
    expect = {"nortel-ace180e": 1.25, "foundry-serveironxl": 2.0, "f5-bigip-ha": 0.5}
    for product, sides in expect.items():
        r = run_trace_native(pcap, product, 400.0)
        assert r["answered"] == r["offered"] > 100, product
        assert r["offered"] % 4 == 0, product  # whole connections arrive in the window
        assert r["connection_sides_per_request"] == pytest.approx(sides, abs=0.1), product
        per_answer = r["response_mbps"] * 1e6 / 8 / r["requests_per_s"]
        assert per_answer == pytest.approx(sum(sizes) / 4, rel=0.03), product


def test_a_connection_alternating_gif_and_htm_moves_between_server_groups_as_each_strategy_says(tmp_path):
    # .gif, .htm, .gif, .htm on each connection: three of its four requests
    # go to the other group. Cisco answers each of those with a 302 and a
    # reset to the old server (0.75 redirects a request) and binds a new
    # server connection: (1 + 4) / 4 = 1.25 sides a request; F5 keeps one
    # server connection per group for the client connection: (1 + 2) / 4
    sizes = [1200, 5200, 20200, 2200]
    conns = [(1.0 + 0.02 * k, [(http_head(f"/c{k}/o{j}.{'gif' if j % 2 == 0 else 'htm'}", 250), sizes[j])
                               for j in range(4)]) for k in range(20)]
    pcap, _ = write_keepalive_pcap(tmp_path / "mixed.pcap", conns)
    cisco = run_trace_native(pcap, "cisco-css11154-v510", 400.0)
    assert cisco["answered"] == cisco["offered"] > 100
    assert cisco["redirects_per_request"] == pytest.approx(0.75, abs=0.05)
    assert cisco["connection_sides_per_request"] == pytest.approx(1.25, abs=0.1)
    f5 = run_trace_native(pcap, "f5-bigip-ha", 400.0)
    assert f5["redirects_per_request"] == 0
    assert f5["connection_sides_per_request"] == pytest.approx(0.75, abs=0.1)


def test_a_replayed_client_thinks_as_captured_before_its_next_request(tmp_path):
    # one connection of three requests 100 ms of think time apart, as
    # captured (rescale: false), arriving at 0: its answers come at about
    # 2 ms, 104 ms and 206 ms, so a window of [50, 150) ms holds exactly
    # the second (10 answers/s); sent back to back, all three would come
    # before 10 ms and the window would hold none
    pcap, _ = write_keepalive_pcap(tmp_path / "think.pcap", [
        (1.0, [(http_head(f"/t{j}.gif", 250), 1500, 0.1) for j in range(3)])])
    from routertwin import _core
    from routertwin.runners.webswitch.runner import ns3_config

    tb = load_testbed(TESTBED)
    case = Case(load_webswitch(NORTEL), "l7", "nat", "1.0", 3, 14, 2, "none")
    keys = OpenLoop(offered_rps=[1.0], trace={"file": pcap, "rescale": False}).native_keys(1.0)
    r = _core.run_webbench_testbed(ns3_config(case, NORTEL, tb, Ns3Options(warmup_s=0.05, duration_s=0.1), 1,
                                              keys))
    assert r["requests"] == 1 and r["requests_per_s"] == pytest.approx(10.0)
