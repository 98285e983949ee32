"""The webswitch kind (seed 003's testbed as a closed queueing network)
against independent truth: the machine-repairman closed form and a brute-
force Markov chain for the MVA, hand-counted segments for the traffic
arithmetic, a simulated Markov chain for the 302 redirect rate, the
servers' line rate for the saturated response traffic; and its bad input."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, line_of, one_line, run_cli, write_scenario
from routertwin.runners.webswitch.model import Case, evaluate, path_rule_ops, redirect_probability, rule_list
from routertwin.runners.webswitch.mva import Station, solve
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.testbed import load_testbed, traffic

PLATFORMS = ROOT / "scenarios" / "platforms"
TESTBED = ROOT / "scenarios" / "workloads" / "webbench-nctu.yaml"


def product(name: str):
    return load_webswitch(PLATFORMS / f"nctu-{name}.yaml")


# ------------------------------------------------------------------ MVA --

@pytest.mark.parametrize("customers", [1, 2, 5, 20])
def test_mva_equals_the_machine_repairman_closed_form(customers):
    """One FIFO exponential server (demand D) and a delay Z: the finite-
    source queue M/M/1//N. P(k at the server) is proportional to
    N!/(N-k)! (D/Z)^k, and X = (1 - P(0)) / D (Kleinrock, Queueing Systems
    vol. 1, 3.8)."""
    d, z = 0.002, 0.010
    weights = [math.factorial(customers) / math.factorial(customers - k) * (d / z) ** k
               for k in range(customers + 1)]
    x = (1.0 - weights[0] / sum(weights)) / d
    sol = solve([Station("server", d), Station("think", z, delay=True)], customers)
    assert sol.throughput == pytest.approx(x, rel=1e-12)
    assert sol.response_s == pytest.approx(customers / x, rel=1e-12)  # Little's law over the cycle


def test_mva_equals_a_brute_force_markov_chain():
    """Three exponential FIFO servers with different rates and 4 customers
    circulating: the CTMC's stationary distribution, solved as a linear
    system over every placement of the customers, gives the same
    throughput and per-station queue lengths."""
    demands = [0.001, 0.0025, 0.004]
    n = 4
    states = [s for s in itertools.product(range(n + 1), repeat=3) if sum(s) == n]
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    for s in states:
        for k in range(3):
            if s[k] == 0:
                continue
            t = list(s)
            t[k] -= 1
            t[(k + 1) % 3] += 1  # a cycle visits each station once, in turn
            q[index[s], index[tuple(t)]] += 1.0 / demands[k]
    np.fill_diagonal(q, -q.sum(axis=1))
    a = np.vstack([q.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(a, b, rcond=None)[0]
    x_ctmc = sum(pi[index[s]] for s in states if s[0] > 0) / demands[0]
    sol = solve([Station(f"s{k}", d) for k, d in enumerate(demands)], n)
    assert sol.throughput == pytest.approx(x_ctmc, rel=1e-9)
    for k in range(3):
        mean_k = sum(pi[index[s]] * s[k] for s in states)
        assert sol.queue_len[f"s{k}"] == pytest.approx(mean_k, rel=1e-9)


def test_mva_refuses_a_cycle_that_takes_no_time():
    with pytest.raises(ValueError, match="takes no time"):
        solve([Station("a", 0.0)], 3)


# -------------------------------------------------------------- traffic --

def test_traffic_is_the_appendix_4_file_set_cut_into_segments_by_hand():
    tb = load_testbed(TESTBED)
    # Hand count, MSS 1460, 250 header bytes, 40 + 38 bytes per frame, an
    # ACK per 2 segments (shares as printed: they add to 99).
    classes = [(223, 20), (735, 8), (1522, 12), (2895, 20), (6040, 14), (11426, 16), (22132, 7), (3000, 2)]
    segments = {473: 1, 985: 1, 1772: 2, 3145: 3, 6290: 5, 11676: 8, 22382: 16, 3250: 3}
    total = 99
    mean_bytes = sum((b + 250) * s for b, s in classes) / total
    mean_segs = sum(segments[b + 250] * s for b, s in classes) / total
    mean_acks = sum(math.ceil(segments[b + 250] / 2) * s for b, s in classes) / total
    t = traffic(tb)
    assert t.response_bytes == pytest.approx(mean_bytes)
    assert t.response_segments == pytest.approx(mean_segs)
    assert t.acks == pytest.approx(mean_acks)
    assert t.response_wire_bytes == pytest.approx(mean_bytes + 78 * mean_segs)
    assert t.group_share == pytest.approx({"gif": 60 / 99, "htm": 37 / 99, "other": 2 / 99})


def test_saturated_servers_send_their_line_rate_of_responses():
    """With many WebBench threads, L4 DR is bound by the 8 servers' 100
    Mbit/s links: response bytes/s = 8 x 1e8 / 8 x (HTTP bytes / wire
    bytes of a response), round robin spreading requests evenly."""
    tb = load_testbed(TESTBED)
    many = tb.model_copy(update={"client": tb.client.model_copy(update={"threads": 60})})
    t = traffic(tb)
    r = evaluate(Case(product("nortel-ace180e"), "l4", "dr", "1.1", 3, 14, 8), many)
    ceiling = 8 * 100.0 * t.response_bytes / t.response_wire_bytes
    assert r.solution.bottleneck.endswith("link_out") and r.solution.bottleneck.startswith("server")
    assert r.response_mbps == pytest.approx(ceiling, rel=0.01)
    assert r.response_mbps < ceiling


# ------------------------------------------------- strategies and rules --

def test_redirect_rate_equals_a_simulated_keep_alive_connection():
    """Section 5.4's 302 strategy on a connection bound to the .gif or .htm
    half: draw 400,000 requests by the file shares and count how often the
    content is on the other half."""
    share = {"gif": 60 / 99, "htm": 37 / 99, "other": 2 / 99}
    rng = np.random.default_rng(3)
    kinds = rng.choice(3, size=400_000, p=[share["gif"], share["htm"], share["other"]])
    half, moves = 0, 0
    for k in kinds:
        if k < 2 and k != half:
            moves += 1
            half = k
    assert redirect_probability(share) == pytest.approx(moves / kinds.size, rel=0.01)


@pytest.mark.parametrize("method, servers, path, rules, compared", [
    # section 5.5: "50 條規則 ... 14 台伺服器的話就必需要檢查 700 條 rules"; each
    # ext rule compares the 4-byte suffix of the path left to right up to the
    # first mismatch (dp_urlrule.h): ".gif" all 4, ".htm" and the padding
    # ".aaa".. 2 ('.' then a mismatch), the default path_beg "/" 1
    ("per_server_all", 14, "/wbtree/CLASS_223.gif", 700, 14 * (4 + 2 + 47 * 2 + 1)),
    # first match: .gif is the first rule, .htm the second
    ("first_match", 6, "/wbtree/CLASS_223.gif", 1, 4),
    ("first_match", 6, "/wbtree/CLASS_6040.htm", 2, 2 + 4),
    # a name with neither: every ext rule fails at its first byte ('4' of
    # "_404" is not '.'), the default matches last
    ("first_match", 6, "/wbtree/CLASS_404", 50, 49 * 1 + 1),
    ("best_match", 6, "/wbtree/CLASS_6040.htm", 50, 2 + 4 + 47 * 2 + 1),
])
def test_the_c_core_counts_the_rules_section_5_5_describes(method, servers, path, rules, compared):
    assert path_rule_ops(method, 50, servers, path) == (rules, compared)


def test_the_paper_rule_list_is_gif_htm_padding_default():
    rules = rule_list(50)
    assert len(rules) == 50 and rules[:3] == [("ext", "gif"), ("ext", "htm"), ("ext", "aaa")]
    assert rules[3] == ("ext", "aab") and rules[-1] == ("path_beg", "/")
    assert rule_list(3) == [("ext", "gif"), ("ext", "htm"), ("path_beg", "/")]


def test_direct_routing_spares_the_switch_the_responses():
    """Section 3.3: in DR the responses go from the servers to the clients
    through the L2 switch; only the client's packets cross the switch."""
    tb = load_testbed(TESTBED)
    t = traffic(tb)
    nortel = product("nortel-ace180e")
    dr = evaluate(Case(nortel, "l4", "dr", "1.1", 3, 14, 8), tb)
    nat = evaluate(Case(nortel, "l4", "nat", "1.1", 3, 14, 8), tb)
    assert dr.work.packets == pytest.approx(1 + t.acks)
    assert nat.work.packets == pytest.approx(1 + t.acks + t.response_segments)


@pytest.mark.parametrize("name, client_side, server_side", [
    ("nortel-ace180e", 0, 1),        # RST to the server after each request
    ("foundry-serveironxl", 1, 1),   # downgraded to HTTP/1.0: both sides per request
    ("f5-bigip-ha", 0, 0),           # server connections kept and reused
])
def test_keep_alive_strategies_open_the_connections_section_5_4_describes(name, client_side, server_side):
    tb = load_testbed(TESTBED)
    r = evaluate(Case(product(name), "l7", "nat", "1.1", 3, 14, 6), tb)
    assert r.work.connections == client_side + server_side


# ----------------------------------------------------------- scenarios --

HEAD = f"""
    scenario: s
    kind: webswitch
    seed: 1
    testbed: {TESTBED}
"""


def test_a_scenario_runs_twice_to_the_same_json(tmp_path):
    path, _ = write_scenario(tmp_path, HEAD, f"""
        mode: l7
        servers: 6
        http: ["1.0", "1.1"]
        rules: [3, 10, 50]
        products: [{PLATFORMS / 'nctu-nortel-ace180e.yaml'}]
    """)
    outs = []
    for name in ("a", "b"):
        proc = run_cli("run", path, "--out", tmp_path / name)
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads((tmp_path / name / "s.json").read_text())["cases"])
    assert outs[0] == outs[1]
    cases = {c["case"]: c for c in outs[0]}
    assert {"nortel-ace180e-l7-r3-http11-gain", "nortel-ace180e-l7-http11-rules-drop",
            "nortel-ace180e-l7-nat-http10-r10"} <= set(cases)
    # the rule-count sweep: more rules, fewer requests per second
    rates = [cases[f"nortel-ace180e-l7-nat-http11-r{n}"]["metrics"]["requests_per_s"] for n in (3, 10, 50)]
    assert rates == sorted(rates, reverse=True)


def test_a_product_without_url_switching_in_l7_names_file_line_and_key(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        mode: l7
        servers: 6
        products:
          - {PLATFORMS / 'nctu-nortel-ace180e.yaml'}
          - {PLATFORMS / 'nctu-3com-superstack3.yaml'}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'nctu-3com')}: key 'products[1]'" in line
    assert "does no URL switching" in line


def test_direct_routing_on_a_product_without_it_is_refused(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        mode: l4
        forwarding: dr
        products: [{PLATFORMS / 'nctu-cisco-css11154-v510.yaml'}]
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'products')}: key 'products[0]'" in line and "direct routing" in line


def test_an_unknown_key_names_file_line_and_key(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        mode: l4
        clents: 14
        products: [{PLATFORMS / 'nctu-nortel-ace180e.yaml'}]
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'clents')}: key 'clents'" in line


def test_f5_nat_saturates_its_pci_bus_at_the_dma_bytes_per_request():
    """Section 5.2: F5 (a PC) did not reach gigabit, limited by its PCI bus.
    Saturated, its NAT rate is the bus rate over the bytes each request's
    frames move by DMA, into memory and out (wire bytes less 20 bytes of
    preamble and gap per frame, IEEE 802.3)."""
    tb = load_testbed(TESTBED)
    many = tb.model_copy(update={"client": tb.client.model_copy(update={"threads": 60})})
    t = traffic(tb)
    frames = 1 + t.acks + t.response_segments
    wire = t.request_wire_bytes + t.acks * t.ack_wire_bytes + t.response_wire_bytes
    dma = 2 * (wire - 20 * frames)
    r = evaluate(Case(product("f5-bigip-ha"), "l4", "nat", "1.1", 3, 14, 8), many)
    assert r.solution.bottleneck == "switch.io_bus"
    assert r.requests_per_s == pytest.approx(1.33e8 / dma, rel=0.01)
    assert r.requests_per_s <= 1.33e8 / dma * (1 + 1e-12)  # a bound: never above it


def test_webbench_mixes_step_the_load_and_never_lower_the_rate(tmp_path):
    """WebBench steps its load by client PCs (mixes). In a closed network
    the throughput never falls as customers are added (Reiser-Lavenberg:
    X(n) is nondecreasing for product-form queues), and each mix's rate is
    its threads over its response time (Little's law, think time 0)."""
    path, _ = write_scenario(tmp_path, HEAD, f"""
        mode: l4
        forwarding: nat
        mixes: [1, 4, 8, 14]
        products: [{PLATFORMS / 'nctu-radware-wsdpro.yaml'}]
    """)
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    cases = {c["case"]: c for c in json.loads((tmp_path / "out" / "s.json").read_text())["cases"]}
    rates = []
    for pcs in (1, 4, 8, 14):
        c = cases[f"radware-wsdpro-l4-nat-http11-c{pcs}"]
        assert c["params"]["clients"] == pcs
        x, r_ms = c["metrics"]["requests_per_s"], c["metrics"]["latency_avg"]
        assert x == pytest.approx(c["params"]["threads"] / (r_ms * 1e-3), rel=1e-9)
        rates.append(x)
    assert rates == sorted(rates)


def test_a_mix_larger_than_the_testbed_names_file_line_and_key(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        mode: l4
        clients: 14
        mixes: [4, 16]
        products: [{PLATFORMS / 'nctu-nortel-ace180e.yaml'}]
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'mixes')}: key 'mixes'" in line and "more than clients 14" in line
