"""RFC 3511 / RFC 9411 methods on the lb kind, the forwarding methods end to
end, and TIME_WAIT, each against an independent truth: the search against a
known threshold; the maximum rates on one application core against the rate
at which that core is 100 % busy (clock / cycles per unit, the cycles
measured at a low load); the capacity against the session table's
arithmetic (sessions per core / sessions per connection) and its memory
formula (dp_session.h); DR and tunnel frames as their server would receive
them and the frames per unit each method sends through the balancer; the
table's occupancy under TIME_WAIT against Little's law."""

from __future__ import annotations

import math

import pytest

import routertwin as rt
from conftest import adx_scenario as scenario, line_of, one_line, run_adx as run, run_cli
from routertwin.methods import rfc3511

# ---------------------------------------------------------------- search --

def threshold_run(limit: float):
    return lambda load: {"ok": load <= limit}


def ok(out, load):
    return out["ok"], ""


def test_search_brackets_a_known_threshold_within_the_resolution():
    res = rfc3511.search_max(threshold_run(1234.5), ok, target=1000, resolution=0.001)
    assert res.maximum <= 1234.5 < res.lowest_failing
    assert res.lowest_failing - res.maximum <= 0.001 * res.lowest_failing
    # RFC 9411 7.2.4: qualification at 10 % of the target, then the target, then doubling
    assert [t.load for t in res.trials[:3]] == [100, 1000, 2000]


def test_integer_search_finds_the_exact_count():
    res = rfc3511.search_max(threshold_run(777), ok, target=5000, integer=True)
    assert res.maximum == 777 and res.lowest_failing == 778


def test_search_refuses_a_target_whose_qualification_fails():
    with pytest.raises(ValueError, match="qualification"):
        rfc3511.search_max(threshold_run(50), ok, target=1000)


def test_rate_criteria_are_the_rfc_9411_counts():
    good = {"units_started": 200000, "units_completed": 200000, "units_failed": 2}
    assert rfc3511.rate_passes(good)[0]  # 1e-5: 2 of 200,000 allowed
    assert not rfc3511.rate_passes({**good, "units_failed": 3})[0]
    assert not rfc3511.rate_passes({**good, "units_completed": 198000})[0]  # 1 % behind: not sustained
    assert rfc3511.rate_passes({**good, "units_completed": 200000 - 1001})[0]  # 0.5 % and one unit
    assert not rfc3511.rate_passes({**good, "units_completed": 200000 - 1002})[0]


# ------------------------------------------------- the methods on the twin --

def low_load_cycles(tmp_path, workload: str, rate: float) -> tuple[float, float]:
    """Cycles per unit on one core at a load far below saturation, and the
    share of that core (%) the idle-aging sweep takes at any load."""
    cases = run(tmp_path / f"low-{workload}", f"""
        workload: {workload}
        duration_us: 2000
        cases:
          - {{id: low, rate: {rate}, cores: 1}}
    """)
    m = cases["low"]["metrics"]
    return m["cycles_per_unit"], m["aging_cpu"]


def test_max_connection_rate_of_one_core_is_its_clock_over_the_cycles_per_connection(tmp_path):
    (tmp_path / "low-http10").mkdir()
    cycles, aging = low_load_cycles(tmp_path, "http10", 5000)
    assert aging > 0
    # connections/s at which the one core is 100 % busy: what the aging sweep leaves of it
    capacity = (1 - aging / 100) * 1e9 / cycles
    cases = run(tmp_path, f"""
        workload: dns
        duration_us: 20000
        warmup_us: 2000
        cases:
          - {{id: m, method: max-cps, target: 30000, cores: 1, resolution: 0.005}}
    """)
    m = cases["m"]["metrics"]
    # above the capacity the core completes `capacity` units/s: a rate passes
    # while that is within 0.5 % + one unit of the offered rate (18 ms window)
    # and the bisection stops within 0.5 % of the lowest failing rate
    allowance = 0.005 + 1 / (capacity * 0.018)
    assert capacity * (1 - 0.005) <= m["max_cps"] <= capacity / (1 - allowance)
    # cores x clock / cycles per unit: the units' work alone, without the sweep
    assert m["rate_at_full_cpu"] == pytest.approx(1e9 / cycles, rel=1e-3)
    assert cases["m"]["params"]["workload"] == "http10"  # the method's workload, whatever the scenario's
    trials = [c for k, c in cases.items() if k.startswith("m-trial-")]
    assert trials[0]["params"]["rate"] == pytest.approx(3000)  # qualification: 10 % of the target
    assert any(t["metrics"]["passed"] == 0 for t in trials)


def test_max_transaction_rate_of_one_core_is_its_clock_over_the_cycles_per_transaction(tmp_path):
    (tmp_path / "low-http11").mkdir()
    cycles, aging = low_load_cycles(tmp_path, "http11", 50000)
    capacity = (1 - aging / 100) * 1e9 / cycles
    cases = run(tmp_path, """
        workload: http10
        duration_us: 5000
        warmup_us: 500
        cases:
          - {id: m, method: max-tps, target: 300000, cores: 1}
    """)
    m = cases["m"]["metrics"]
    allowance = 0.005 + 1 / (capacity * 0.0045)
    assert capacity * (1 - 0.005) <= m["max_tps"] <= capacity / (1 - allowance)


@pytest.mark.parametrize("forwarding,per_connection", [("fullnat", 2), ("dr", 1)])
def test_concurrent_capacity_is_the_table_arithmetic_and_every_connection_carries_data(tmp_path, forwarding,
                                                                                       per_connection):
    cases = run(tmp_path, f"""
        cases:
          - {{id: c, method: max-concurrent, target: 20000, cores: 4, sessions_per_core: 2000,
              forwarding: {forwarding}}}
    """)
    m = cases["c"]["metrics"]
    held = 2000 // per_connection
    assert m["connections_per_core"] == held
    assert m["max_concurrent"] == 4 * held
    # dp_session.h: 127 + 128 + shards x (256 + 128 x ceil(sessions x 6 / 25)) bytes, one shard here
    table = 127 + 128 + 256 + 128 * math.ceil(2000 * 6 / 25)
    assert m["bytes_per_connection"] == pytest.approx(table / held)
    passing = [c for k, c in cases.items() if k.startswith("c-trial-") and c["metrics"]["passed"]]
    assert all(c["metrics"]["fill_validated"] == c["metrics"]["connections_per_core"] for c in passing)
    assert m["insert_rate"] > 0


def test_the_methods_run_from_python(tmp_path):
    path, _ = scenario(tmp_path, """
        workload: http11
        cases:
          - {id: x, rate: 1.0e6}
    """)
    res = rt.run(rt.load(path).with_(cases=[{"id": "c", "method": "max-concurrent", "target": 2000,
                                             "cores": 2, "sessions_per_core": 600}]))
    top = [c for c in res.cases if c.case == "c"][0]
    assert top.metrics["max_concurrent"] == 2 * 300


def test_max_case_without_a_target_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: m, method: max-cps}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'method: max-cps')}:" in line and "target" in line


# ------------------------------------------------ forwarding end to end --

def units_started(rate: float, duration_s: float) -> int:
    """Units of a constant-rate tester started in [0, duration): unit n at round(n x 1e12 / rate) ps."""
    mean = 1e12 / rate
    dur = round(duration_s * 1e12)
    return sum(1 for n in range(int(rate * duration_s) + 2) if round(n * mean) < dur)


def test_dr_and_tunnel_reach_the_connection_server_and_replies_bypass_the_balancer(tmp_path):
    cases = run(tmp_path, """
        workload: http10
        duration_us: 2000
        cases:
          - {id: nat, rate: 200000, forwarding: fullnat}
          - {id: dr, rate: 200000, forwarding: dr}
          - {id: tun, rate: 200000, forwarding: tunnel}
    """)
    n = units_started(200000, 2e-3)
    nat, dr, tun = (cases[k]["metrics"] for k in ("nat", "dr", "tun"))
    for m in (nat, dr, tun):
        assert m["delivery_errors"] == 0
        # the client's SYN, ACK, request and FIN reach the server in every method
        assert m["frames_to_servers"] == 4 * n
        assert m["cps"] == pytest.approx(m["offered_rate"])
    # full NAT: the server's 4 packets come back through the balancer; DR and tunnel: they do not
    assert nat["packets_per_unit"] == 8 and dr["packets_per_unit"] == 4 and tun["packets_per_unit"] == 4
    assert dr["cycles_per_unit"] < tun["cycles_per_unit"] < nat["cycles_per_unit"]
    # full NAT removes a connection at its last ACK; DR and tunnel see only the
    # client's FIN: every connection waits in FIN_WAIT (120 s) in the table
    assert nat["connections_end"] == 0
    assert dr["connections_end"] == n and tun["connections_end"] == n


def test_dr_persistent_connections_send_one_frame_per_transaction_through_the_balancer(tmp_path):
    cases = run(tmp_path, """
        workload: http11
        cases:
          - {id: dr, rate: 1.0e6, forwarding: dr}
    """)
    m = cases["dr"]["metrics"]
    assert m["packets_per_unit"] == 1
    assert m["delivery_errors"] == 0
    assert m["tps"] == pytest.approx(1e6, rel=1e-3)


# ------------------------------------------------------------- TIME_WAIT --

def test_time_wait_occupancy_follows_littles_law(tmp_path):
    rate, linger = 100000.0, 0.010
    cases = run(tmp_path, f"""
        workload: http10
        duration_us: 30000
        warmup_us: 1000
        time_wait_s: {linger}
        occupancy_sample_us: 1000
        cases:
          - {{id: tw, rate: {rate}}}
    """)
    occ = {round(c["params"]["t_ms"]): c["metrics"] for k, c in cases.items() if k.startswith("tw-occ-")}
    # before the first linger ends the table only grows: rate x t (within a unit of the slice)
    assert occ[5]["connections"] == pytest.approx(rate * 5e-3, abs=3)
    # then Little's law: N = rate x time held. A connection is held from its
    # SYN to its last ACK (70 us) plus the linger, judged on millisecond
    # ticks (-1 ms .. +1 ms) and found by a sweep that visits every bucket
    # once a millisecond (+0 .. +1 ms)
    lo, hi = rate * (linger - 1e-3), rate * (70e-6 + linger + 2e-3)
    for t in range(15, 30):
        assert lo <= occ[t]["connections"] <= hi, (t, occ[t])
        # all but those in their 70 us handshake-to-close are in TIME_WAIT
        assert occ[t]["time_wait"] >= occ[t]["connections"] - rate * 80e-6
    assert cases["tw"]["metrics"]["expired"] > 0


def test_unknown_scheduler_of_a_case_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: r, method: remap, scheduler: bogus}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'scheduler: bogus')}: key 'cases[0].scheduler'" in line
    assert "maglev" in line  # the valid names


def test_unknown_forwarding_method_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: x, rate: 1.0e5, forwarding: nat}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'forwarding: nat')}: key 'cases[0].forwarding'" in line
