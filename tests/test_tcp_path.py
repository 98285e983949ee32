"""The tcp_path kind and the ZStack study (seed 004): the closed-form
ceiling against hand arithmetic of Ethernet framing, the packet-level run
against that ceiling, the duration mode the live lab uses, the window
extrapolation against a full run, and scenario mistakes as one FILE:LINE
line."""

from __future__ import annotations

import textwrap

import pytest

from conftest import PLATFORMS, ROOT, line_of, one_line, run_cases, run_cli, write_scenario
from routertwin.runners.tcp_path.analytic import ceiling
from routertwin.runners.tcp_path.native import resolve
from routertwin.runners.tcp_path.profiles import load_platform
from routertwin.scenario_loader import load_scenario

ZSTACK = ROOT / "scenarios" / "zstack"
LAB_TYPES = """
    link_types:
      veth-1g: {rate_bps: 1.0e9, frame_overhead_bytes: 38, queue_packets: 1000}
    node_types:
      ns-router: {cpu_per_packet_us: 1.0}
"""


HEAD = f"""
    scenario: s
    kind: tcp_path
    seed: 1
    platform: {PLATFORMS / 'zstack-gbe.yaml'}
"""


def scenario(tmp_path, body: str, name: str = "s.yaml"):
    return write_scenario(tmp_path, HEAD, body, name)


def run(tmp_path, body: str) -> dict:
    path, _ = scenario(tmp_path, body)
    return run_cases(tmp_path, path)[0]


def analytic_of(path) -> float:
    s = load_scenario(path)
    plat = load_platform(s.config.platform)
    from routertwin.runners.tcp_path.native import merged_tcp
    nodes, links = resolve(s.config, plat)
    return ceiling(nodes, links, merged_tcp(s.config, plat)).goodput_bps


def test_ceiling_of_the_flat_paths_is_the_tagged_gbe_line_rate():
    # 1448 payload bytes per 1500-byte packet + 42 bytes of tagged Ethernet
    # framing: 1e9 x 1448 / 1542 = 939.040 Mbit/s
    for name in ("zstack-flat-direct", "zstack-flat-eip"):
        assert analytic_of(ZSTACK / f"{name}.yaml") == pytest.approx(1e9 * 1448 / 1542, rel=1e-12)


def test_ceiling_of_the_vpc_path_counts_acks_on_the_vrouter_hosts_nic():
    # each direction of that NIC carries 2 data frames (1542 bytes on the
    # wire) and one ACK (52 + 42 = 94) per 2 segments: 1e9 x 2896 / 3178
    assert analytic_of(ZSTACK / "zstack-vpc-eip.yaml") == pytest.approx(1e9 * 2 * 1448 / (2 * 1542 + 94), rel=1e-12)


def test_packet_level_goodput_meets_the_closed_form(tmp_path):
    case = run(tmp_path, f"""
        transfer: {{file_bytes: 12000000, records: 2, simulate: full}}
        {textwrap.indent(textwrap.dedent(LAB_TYPES), ' ' * 8).strip()}
        path:
          - {{node: client, type: vm}}
          - {{node: router, type: ns-router, link: veth-1g}}
          - {{node: server, type: vm, link: veth-1g}}
    """)
    m = case["metrics"]
    assert m["ceiling_mbps"] == pytest.approx(1e3 * 1448 / 1538, rel=1e-12)
    assert m["steady_goodput_mbps"] == pytest.approx(m["ceiling_mbps"], rel=0.003)
    # a record is file x 8 / response time, the average of the records'
    assert m["throughput_mbps"] == pytest.approx(
        (12e6 * 8 / m["response_time_min_s"] + 12e6 * 8 / m["response_time_max_s"]) / 2 / 1e6, rel=1e-9)
    assert case["bottleneck"].startswith("wire client->router (veth-1g)")


def test_window_extrapolation_agrees_with_the_full_transfer(tmp_path):
    full = run(tmp_path, """
        transfer: {file_bytes: 30000000, records: 2, simulate: full}
        path:
          - {node: a, type: vm}
          - {node: h, type: host-bridge, link: virtio}
          - {node: sw, type: l3-switch, link: gbe-vlan}
          - {node: b, type: vm, link: gbe-vlan}
    """)["metrics"]
    window = run(tmp_path, """
        transfer: {file_bytes: 30000000, records: 2, simulate: window, window_bytes: 10000000}
        path:
          - {node: a, type: vm}
          - {node: h, type: host-bridge, link: virtio}
          - {node: sw, type: l3-switch, link: gbe-vlan}
          - {node: b, type: vm, link: gbe-vlan}
    """)["metrics"]
    assert window["response_time_s"] == pytest.approx(full["response_time_s"], rel=0.005)
    assert window["simulated_bytes"] == 2e7 and full["simulated_bytes"] == 6e7


def test_duration_mode_reports_goodput_like_iperf3(tmp_path):
    m = run(tmp_path, f"""
        transfer: {{duration_s: 0.2}}
        tcp: {{timestamps: false}}
        {textwrap.indent(textwrap.dedent(LAB_TYPES), ' ' * 8).strip()}
        path:
          - {{node: client, type: vm}}
          - {{node: server, type: vm, link: veth-1g}}
    """)["metrics"]
    # without timestamps: 1460 of 1500 + 38 bytes; slow start costs a little
    assert m["ceiling_mbps"] == pytest.approx(1e3 * 1460 / 1538, rel=1e-12)
    assert 0.9 * m["ceiling_mbps"] < m["goodput_mbps"] <= m["ceiling_mbps"] * 1.0001


@pytest.mark.parametrize("edit, needle, key, message", [
    ("  - {node: b, type: vm, link: gbe-vlan}", "type: vmm", "path[2].type", "unknown node type 'vmm'"),
    ("  - {node: b, type: vm, link: gbe-vlan}", "link: gbe}", "path[2].link", "unknown link type 'gbe'"),
    ("transfer: {records: 3}", "recordz", "transfer.recordz", "unknown key"),
    ("  - {node: a, type: vm}", "link: virtio}", "path[0].link", "the first node has no link before it"),
])
def test_mistakes_are_one_line_naming_file_line_and_key(tmp_path, edit, needle, key, message):
    body = """
        transfer: {records: 3}
        path:
          - {node: a, type: vm}
          - {node: sw, type: l3-switch, link: gbe-vlan}
          - {node: b, type: vm, link: gbe-vlan}
    """
    replacement = {
        "type: vmm": edit.replace("type: vm", "type: vmm"),
        "link: gbe}": edit.replace("link: gbe-vlan", "link: gbe"),
        "recordz": "transfer: {recordz: 3}",
        "link: virtio}": "  - {node: a, type: vm, link: virtio}",
    }[needle]
    path, text = scenario(tmp_path, textwrap.dedent(body).replace(edit, replacement, 1))
    out = tmp_path / "out"
    line = one_line(run_cli("run", path, "--out", out), out)
    assert line.startswith(f"{path}:{line_of(text, needle)}: key '{key}': {message}"), line


def test_a_nat_box_at_an_end_of_the_path_is_named(tmp_path):
    path, text = scenario(tmp_path, """
        path:
          - {node: a, type: vm}
          - {node: b, type: eip-host, link: gbe-vlan}
    """)
    out = tmp_path / "out"
    line = one_line(run_cli("run", path, "--out", out), out)
    assert line == (f"{path}:{line_of(text, 'eip-host')}: key 'path[1].type': 'eip-host' does NAT: the sender "
                    "and the receiver cannot be the NAT box")


def test_rtt_samples_fill_a_histogram_bounded_by_the_path(tmp_path):
    # One flow over one 1 Gbit/s link with a 1000-packet queue (issue 15:
    # latency distributions for every kind that measures one). Every RTT
    # sample holds at least the data frame's and the ACK's serialization
    # (1538 and 52 + 38 octets: 12.304 + 0.72 us) and at most a full queue
    # of data frames more than the fastest sample (1000 x 12.304 us).
    case = run(tmp_path, f"""
        transfer: {{duration_s: 0.2}}
        {textwrap.indent(textwrap.dedent(LAB_TYPES), ' ' * 8).strip()}
        path:
          - {{node: client, type: vm}}
          - {{node: server, type: vm, link: veth-1g}}
    """)
    m, h = case["metrics"], case["distributions"]["rtt_histogram"]
    frame_ms, ack_ms = 1538 * 8 / 1e9 * 1e3, 90 * 8 / 1e9 * 1e3
    assert h["count"] > 1000
    assert m["rtt_min_ms"] >= frame_ms + ack_ms
    assert m["rtt_max_ms"] <= m["rtt_min_ms"] + 1000 * frame_ms
    assert m["rtt_min_ms"] <= m["rtt_p50_ms"] <= m["rtt_p99_ms"] <= m["rtt_p999_ms"] <= m["rtt_max_ms"]
    # the histogram holds the same samples as the exact mean and minimum
    lo, hi, _ = h["bins"][0]
    assert lo <= m["rtt_min_ms"] * 1e3 <= hi
    mean_us = sum((a + b) / 2 * n for a, b, n in h["bins"]) / h["count"]
    assert mean_us == pytest.approx(m["rtt_mean_ms"] * 1e3, rel=0.0233)
    # TCP fills the queue: the samples spread over milliseconds, not one value
    assert m["rtt_p99_ms"] > 100 * m["rtt_min_ms"]


# TCP fills the one link's 50-packet queue (queue_full) and the link loses 1
# frame in 2,000 at random (random_loss)
LOSSY_1G_PATH = """
        transfer: {duration_s: 0.2}
        link_types:
          lossy-1g: {rate_bps: 1.0e9, frame_overhead_bytes: 38, queue_packets: 50, loss_rate: 0.0005}
        path:
          - {node: client, type: vm}
          - {node: server, type: vm, link: lossy-1g}
    """


def test_drops_over_time_add_up_to_each_servers_counters(tmp_path):
    # TCP fills the one link's 50-packet queue (queue_full) and the link
    # loses 1 frame in 2,000 at random (random_loss): every drop is in the
    # loss timeline (issue 15), on the server that dropped it, in the time
    # bin of the run it happened in, under its reason; the rows add up to
    # the servers' own drop counters.
    path, _ = scenario(tmp_path, LOSSY_1G_PATH)
    case = run_cases(tmp_path, path)[0]
    tl, counters = case["distributions"]["loss_timeline"], case["counters"]
    names = tl["port_names"]
    assert len(names) == len(tl["ports"]) >= 2 and all(len(row) == 100 for row in tl["ports"])
    total = 0.0
    for reason in ("queue_full", "random_loss", "nat"):
        rows = tl.get("reasons", {}).get(reason, [[0.0] * 100 for _ in names])
        for name, row in zip(names, rows):
            assert sum(row) == counters.get(f"{name}: {reason}", 0.0), (name, reason)
            total += sum(row)
    assert sum(map(sum, tl["ports"])) == total
    assert tl["reasons"]["queue_full"] and tl["reasons"]["random_loss"]  # both happened
    assert total == sum(v for k, v in counters.items() if k.endswith(("queue_full", "random_loss", "nat")))
    # the bins cover the whole run: 100 x bin = the simulated seconds
    assert tl["bin_s"] * 100 == pytest.approx(counters["simulated_seconds"], rel=1e-12)
    # random loss is spread over the run, not one burst: drops in many bins
    random_bins = sum(1 for b in range(100) if any(row[b] for row in tl["reasons"]["random_loss"]))
    assert random_bins > 10


def test_a_web_switch_run_earlier_in_the_process_does_not_change_a_nat_path():
    """ns-3's globals outlive a run: the web switch testbed turns checksums
    on, and the EIP paths' NAT boxes rewrite addresses without fixing TCP
    checksums, so a ZStack replay after a web switch run in the same worker
    (as `routertwin validate` schedules them) never finished its transfer.
    The path now sets every global it depends on: the same result as a run
    in a fresh process."""
    import json
    import subprocess
    import sys

    import routertwin

    path = ZSTACK / "zstack-flat-eip.yaml"
    probe = ("import json, sys, routertwin; c = routertwin.run(routertwin.load(sys.argv[1])).runs[0].cases[0];"
             "print(json.dumps(c.metrics, sort_keys=True))")
    alone = json.loads(subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True,
                                      check=True).stdout)
    routertwin.run(routertwin.load(ROOT / "scenarios" / "nctu" / "ns3" / "nctu-l4-dr.yaml"))
    after = routertwin.run(routertwin.load(path)).runs[0].cases[0].metrics
    assert json.loads(json.dumps(after, sort_keys=True)) == alone


def run_api(tmp_path, body: str, seed: int = 1, name: str = "s.yaml"):
    """One case of a scenario run in this process (routertwin.run)."""
    import routertwin

    path, _ = write_scenario(tmp_path, HEAD.replace("seed: 1", f"seed: {seed}"), body, name)
    return routertwin.run(routertwin.load(path)).runs[0].cases[0]


def retransmission_rows(case) -> dict[str, list[float]]:
    """The sender's loss responses per time bin by kind (fast_recovery,
    timeout), zero rows for a kind without one."""
    rt = case.distributions["retransmission_timeline"]
    bins = len(rt["ports"][0])
    assert rt["port_names"] == ["sender"] and len(rt["ports"]) == 1
    assert rt["bin_s"] == case.distributions["loss_timeline"]["bin_s"]  # the drops' bins
    return {k: (rt.get("reasons", {}).get(k) or [[0.0] * bins])[0] for k in ("fast_recovery", "timeout")}


def test_without_loss_the_sender_never_retransmits(tmp_path):
    # a window of 181 segments (256 KiB) in front of a 1000-packet queue:
    # nothing is dropped, so TCP has nothing to recover from
    case = run_api(tmp_path, f"""
        transfer: {{duration_s: 0.2}}
        tcp: {{rcv_buf_bytes: 262144, snd_buf_bytes: 262144}}
        {textwrap.indent(textwrap.dedent(LAB_TYPES), ' ' * 8).strip()}
        path:
          - {{node: client, type: vm}}
          - {{node: server, type: vm, link: veth-1g}}
    """)
    assert sum(map(sum, case.distributions["loss_timeline"]["ports"])) == 0
    rows = retransmission_rows(case)
    assert sum(rows["fast_recovery"]) == sum(rows["timeout"]) == 0
    assert case.metrics["recoveries"] == case.metrics["timeouts"] == 0


def test_every_loss_response_follows_a_drop(tmp_path):
    # A 50-packet queue TCP overflows and random loss of 1 frame in 2,000:
    # the sender's fast recoveries and timeouts per bin add up to its
    # counters, and by every bin there have been at least as many drops as
    # loss responses (each response answers a loss of its own, or of its
    # retransmission), the first response in or after the first drop's bin.
    case = run_api(tmp_path, LOSSY_1G_PATH)
    rows = retransmission_rows(case)
    assert sum(rows["fast_recovery"]) == case.metrics["recoveries"] > 0
    assert sum(rows["timeout"]) == case.metrics["timeouts"]
    drops = [sum(col) for col in zip(*case.distributions["loss_timeline"]["ports"])]
    responses = [a + b for a, b in zip(rows["fast_recovery"], rows["timeout"])]
    first = lambda xs: next(i for i, x in enumerate(xs) if x > 0)  # noqa: E731
    assert first(responses) >= first(drops)
    seen_drops = seen_responses = 0.0
    for d, r in zip(drops, responses):
        seen_drops, seen_responses = seen_drops + d, seen_responses + r
        assert seen_responses <= seen_drops
    # the report: the counts and their bins beside the drops', and the heat
    # map with the sender's row under the servers'
    from routertwin.distributions import events_in_bins, loss_timeline_plot

    hit = sum(1 for x in rows["fast_recovery"] if x)
    assert events_in_bins(case.distributions, "fast_recovery") == f"{case.metrics['recoveries']:.0f} ({hit})"
    assert loss_timeline_plot(case, tmp_path / "loss.png", "t").stat().st_size > 0


def test_one_dropped_data_segment_is_one_fast_recovery(tmp_path):
    # Random loss of 3 frames in 10,000 on a 100 Mbit/s link for 0.3 s
    # (about 2,600 data segments and 1,300 ACKs): the first seed whose run
    # lost exactly one frame, a data segment, before the last fifth of the
    # run (so three duplicate ACKs can follow it) must recover from it by
    # one fast retransmit (RFC 5681 3.2), no timeout, in or after its bin.
    # The seeds whose runs lost nothing must not retransmit at all.
    body = f"""
        transfer: {{duration_s: 0.3}}
        tcp: {{rcv_buf_bytes: 262144, snd_buf_bytes: 262144}}
        link_types:
          lossy-100m: {{rate_bps: 1.0e8, frame_overhead_bytes: 38, queue_packets: 1000, loss_rate: 0.0003}}
        path:
          - {{node: client, type: vm}}
          - {{node: server, type: vm, link: lossy-100m}}
    """
    found = lossless = 0
    for seed in range(1, 31):
        case = run_api(tmp_path, body, seed, name=f"s{seed}.yaml")
        tl = case.distributions["loss_timeline"]
        rows = retransmission_rows(case)
        total = sum(map(sum, tl["ports"]))
        if total == 0:
            lossless += 1
            assert sum(rows["fast_recovery"]) + sum(rows["timeout"]) == 0, seed
            continue
        data = tl["port_names"].index("wire client->server (lossy-100m)")
        at = [b for b, x in enumerate(tl["ports"][data]) if x > 0]
        if total != 1 or len(at) != 1 or at[0] >= 80:
            continue
        assert sum(rows["fast_recovery"]) == 1 and sum(rows["timeout"]) == 0, seed
        assert next(b for b, x in enumerate(rows["fast_recovery"]) if x) >= at[0]
        found += 1
        if found == 2:
            break
    assert found == 2, "no seed in 1..30 lost exactly one data segment"
