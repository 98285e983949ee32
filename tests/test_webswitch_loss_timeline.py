"""Loss over time on the webswitch kind's ns-3 engine (issue 15): the
switch's refusals per time bin by drop name, and the open loop's refused
and unanswered requests at their arrival, in one LossTimeline whose bins
add up to the run's counters; an open-loop overload of known rate above
the switch's processor, with a SYN backlog limit, loses the SYNs
line-rate arithmetic of the profile's prices says it cannot take, bin
after bin."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from routertwin.runners.webswitch.model import Case
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.runner import case_result_ns3
from routertwin.runners.webswitch.schema import Ns3Options, OpenLoop
from routertwin.runners.webswitch.testbed import load_testbed

NORTEL = ROOT / "scenarios" / "platforms" / "nctu-nortel-ace180e.yaml"
TESTBED = ROOT / "scenarios" / "workloads" / "webbench-nctu.yaml"
CLOCK_HZ = 1e6        # the profile's 200 MHz slowed 200 times: the switch is the bottleneck
L4_PACKET_CYCLES = 200  # the profile's costs.l4_packet_cycles, the only price of an L4 packet
BACKLOG_S = 0.02
WARMUP_S, DURATION_S = 0.2, 1.4
# 400 ms bins over warm-up and window: the saturated switch drops SYNs in
# waves (its backlog refills as the accepted connections' later segments
# come back), a 50 ms bin holding from 0 to 56 of them; 400 ms average them
BINS = 4


def slow_nortel(tmp_path):
    """The Nortel profile with a 1 MHz processor (nothing else changed)."""
    text = NORTEL.read_text()
    assert re.search(r"^  clock_mhz: 200$", text, re.M) and f"l4_packet_cycles: {L4_PACKET_CYCLES}\n" in text
    path = tmp_path / "slow-nortel.yaml"
    path.write_text(re.sub(r"^  clock_mhz: 200$", f"  clock_mhz: {CLOCK_HZ / 1e6:g}", text, flags=re.M))
    return path


def fast_hosts_testbed():
    """Two servers with no CPU time and every request the same small file:
    only the switch's processor is slow."""
    tb = load_testbed(TESTBED)
    return tb.model_copy(update={
        "server": tb.server.model_copy(update={"cpu_per_request_us": 0.0, "cpu_per_connection_us": 0.0}),
        "file_classes": [tb.file_classes[0].model_copy(update={"share": 1.0})]})


def run(profile, rps, bins=BINS, **native):
    ol = OpenLoop(arrivals="constant", offered_rps=[rps])
    case = Case(load_webswitch(NORTEL), "l4", "nat", "1.0", 3, 14, 2, "none")
    result, _ = case_result_ns3("o", case, profile, fast_hosts_testbed(),
                                Ns3Options(warmup_s=WARMUP_S, duration_s=DURATION_S), 1,
                                {**ol.native_keys(rps), "loss_bins": bins, **native})
    return result


def reason_rows(result, bins=BINS) -> dict[str, list[float]]:
    tl = result.distributions["loss_timeline"]
    assert tl["port_names"] == ["web switch"] and len(tl["ports"]) == 1 and len(tl["ports"][0]) == bins
    assert tl["bin_s"] == pytest.approx((WARMUP_S + DURATION_S) / bins, rel=1e-12)
    return {name: rows[0] for name, rows in tl.get("reasons", {}).items()}


def test_an_overload_is_refused_at_offered_minus_capacity_in_every_bin(tmp_path):
    # Line-rate arithmetic on the switch's one processor (C = 1e6 cycles/s):
    # an accepted request costs c_acc cycles (its packets at 200 cycles
    # each, measured at a light load where nothing waits or is refused), a
    # refused one c_ref = 200 (its SYN read and dropped). Saturated, the
    # processor is busy all the time: a c_acc + r c_ref = C with
    # a + r = offered, so r = (offered c_acc - C) / (c_acc - c_ref) per second.
    profile = slow_nortel(tmp_path)
    light = run(profile, 50.0, syn_backlog_limit_s=BACKLOG_S)
    assert light.counters["answered_requests"] == light.counters["offered_requests"] == pytest.approx(50 * DURATION_S, abs=1)
    assert "overload_syn_dropped" not in reason_rows(light)
    c_acc = light.counters["switch.cycles_per_request"]
    c_ref = L4_PACKET_CYCLES
    capacity = CLOCK_HZ / c_acc
    assert 300 < capacity < 600  # the server CPUs and links (zero, 100 Mbit/s) are far above it
    offered = 2 * capacity
    refused_per_s = (offered * c_acc - CLOCK_HZ) / (c_acc - c_ref)

    r = run(profile, offered, syn_backlog_limit_s=BACKLOG_S)
    rows = reason_rows(r)
    bin_s = (WARMUP_S + DURATION_S) / BINS
    # every bin after the first (whose start fills the backlog and holds
    # the warm-up), within 5 %: the SYNs the switch dropped, and the
    # requests left unanswered by their arrival (none come in the drain)
    for b in range(1, BINS):
        assert rows["overload_syn_dropped"][b] == pytest.approx(refused_per_s * bin_s, rel=0.05), b
        assert rows["request_unanswered"][b] == pytest.approx(refused_per_s * bin_s, rel=0.05), b
    assert r.metrics["switch_utilization"] == pytest.approx(1.0, abs=0.02)
    # the accepted rest is answered (nothing waits longer than the backlog
    # lets it); a dropped SYN is not retried within the run (ns-3's SYN
    # timeout, ConnTimeout, is 3 s) and no RST refuses anything
    assert r.counters["refused_requests"] == 0
    assert r.counters["answered_requests"] + r.counters["unanswered_requests"] == r.counters["offered_requests"]
    assert r.counters["answered_requests"] / DURATION_S == pytest.approx(offered - refused_per_s, rel=0.05)
    # the report's heat map: a row per reason of the one switch
    from routertwin.distributions import loss_rows, loss_timeline_plot

    labels, _, ylabel = loss_rows(r.distributions["loss_timeline"])
    assert set(labels) == set(rows) and "web switch" in ylabel
    assert loss_timeline_plot(r, tmp_path / "loss.png", "t").stat().st_size > 0


def test_the_bins_add_up_to_the_run_counters(tmp_path):
    # every drop name's bins are the switch's counter of it (the whole run,
    # the drain in the last bin), the request rows the window's refused and
    # unanswered counters; an overload without a backlog limit refuses
    # nothing and leaves requests unanswered, in the bins they arrived in
    profile = slow_nortel(tmp_path)
    bins = 16  # 100 ms: the warm-up is the first two
    for limit in (BACKLOG_S, 0.0):
        r = run(profile, 900.0, bins, syn_backlog_limit_s=limit)
        rows = reason_rows(r, bins)
        drops = {k.removeprefix("drops."): v for k, v in r.counters.items() if k.startswith("drops.")}
        assert {k: sum(v) for k, v in rows.items() if not k.startswith("request_")} == \
            {k: v for k, v in drops.items() if v}
        assert sum(rows.get("request_refused", [0.0])) == r.counters["refused_requests"]
        assert sum(rows.get("request_unanswered", [0.0])) == r.counters["unanswered_requests"]
        # the warm-up's requests are not the window's: none in its bins
        warm_bins = round(WARMUP_S / ((WARMUP_S + DURATION_S) / bins))
        assert warm_bins == 2 and all(rows.get(k, [0.0] * bins)[b] == 0 for k in ("request_refused", "request_unanswered")
                   for b in range(warm_bins))
        assert r.counters["refused_requests"] == 0 and r.counters["unanswered_requests"] > 0
        if limit:
            assert drops["overload_syn_dropped"] > 0
        else:
            assert "overload_syn_dropped" not in drops
            # FIFO without bound: the last arrivals are the unanswered ones
            unanswered = rows["request_unanswered"]
            assert unanswered[-1] > 0 and unanswered[warm_bins] == 0
