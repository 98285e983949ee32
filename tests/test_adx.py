"""The lb kind and the ADX 8000 study (seed 000): the Tolly regression
against textbook least squares (numpy.polyfit), the CPU of a load step
against the closed form rate x cycles / (cores x clock), the extrapolation of
a twin without background load against the origin line and a run to true
saturation, the concurrency fill against the table arithmetic, and scenario
mistakes as one FILE:LINE line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import adx_scenario as scenario, line_of, one_line, run_adx as run, run_cli
from routertwin.methods.tolly import fit_line, t975

# ------------------------------------------------------------ regression --

def test_tolly_line_through_exact_points_is_the_line_with_a_closed_interval():
    rates = [1e6, 2e6, 3e6, 4e6, 5e6]
    line = fit_line(rates, [2.0 + 5e-6 * r for r in rates])
    assert line.intercept == pytest.approx(2.0)
    assert line.slope == pytest.approx(5e-6)
    assert line.rate_at_100 == pytest.approx(98 / 5e-6)
    assert line.rate_at_100_hi - line.rate_at_100_lo == pytest.approx(0, abs=1e-3)


def test_tolly_line_and_interval_agree_with_polyfit_and_the_delta_method():
    rng = np.random.default_rng(3)
    rates = np.array([1e6, 2e6, 3e6, 4e6, 5e6, 6e6])
    cpu = 1.5 + 5.5e-6 * rates + rng.normal(0, 0.4, rates.size)
    line = fit_line(list(rates), list(cpu))
    (b, a), cov = np.polyfit(rates, cpu, 1, cov="unscaled")
    resid = cpu - (a + b * rates)
    s2 = resid @ resid / (rates.size - 2)
    assert (line.intercept, line.slope) == pytest.approx((a, b))
    # polyfit orders (slope, intercept)
    assert line.cov[1, 1] == pytest.approx(s2 * cov[0, 0])
    assert line.cov[0, 0] == pytest.approx(s2 * cov[1, 1])
    x100 = (100 - a) / b
    var = (s2 * cov[1, 1]) / b**2 + 2 * (100 - a) / b**3 * (s2 * cov[0, 1]) + (100 - a) ** 2 / b**4 * (s2 * cov[0, 0])
    half = t975(4) * math.sqrt(var)
    assert line.rate_at_100 == pytest.approx(x100)
    assert (line.rate_at_100_lo, line.rate_at_100_hi) == pytest.approx((x100 - half, x100 + half))


def test_tolly_line_needs_three_points_and_a_rising_cpu():
    with pytest.raises(ValueError):
        fit_line([1e6, 2e6], [5.0, 10.0])
    with pytest.raises(ValueError):
        fit_line([1e6, 2e6, 3e6], [10.0, 9.0, 8.0])


# ------------------------------------------------------------ the model --

def test_load_step_cpu_is_rate_times_cycles_over_cores_and_clock(tmp_path):
    cases = run(tmp_path, """
        workload: http11
        cases:
          - {id: s, rate: 3.0e6}
    """)
    m = cases["s"]["metrics"]
    assert m["tps"] == pytest.approx(3e6, rel=1e-3)
    assert m["packets_per_unit"] == 2  # request and response; the ACKs ride on them
    # the units' work, plus the idle-aging sweeps on the cores that own the shards
    assert m["aging_cpu"] > 0
    assert m["cpu_util"] - m["aging_cpu"] == pytest.approx(100 * 3e6 * m["cycles_per_unit"] / (32 * 1e9), rel=2e-3)
    per_core = [m[f"core{i}_util"] for i in range(32)]
    assert sum(per_core) / 32 == pytest.approx(m["cpu_util"], rel=1e-9)
    assert max(per_core) == pytest.approx(m["cpu_max"])


def test_twin_extrapolates_through_the_origin_and_saturates_where_the_line_ends(tmp_path):
    cases = run(tmp_path, """
        workload: http11
        cases:
          - {id: t, method: tolly, steps: [1.0e6, 2.0e6, 3.0e6]}
    """)
    t = cases["t"]["metrics"]
    cycles = cases["t-step-1"]["metrics"]["cycles_per_unit"]
    aging = cases["t-step-1"]["metrics"]["aging_cpu"]
    # the only background load is the aging sweep, the same at every step:
    # CPU = aging + rate x cycles / (cores x clock), so 100 % at (100 - aging) % of cores x clock / cycles
    assert aging > 0
    assert t["intercept_pct"] == pytest.approx(aging, abs=0.05)
    assert t["rate_at_100"] == pytest.approx((1 - aging / 100) * 32e9 / cycles, rel=2e-3)
    # the run to saturation: every core busy, the completed rate at the line's end
    assert t["saturation_cpu"] > 99
    assert t["saturation_rate"] == pytest.approx(t["rate_at_100"], rel=0.01)
    assert cases["t"]["bottleneck"]


def test_fill_holds_sessions_per_core_over_two_connections_per_core(tmp_path):
    cases = run(tmp_path, """
        cases:
          - {id: f, method: fill, sessions_per_core: 20000}
    """)
    m = cases["f"]["metrics"]
    assert m["connections_per_core"] == 10000  # full NAT: an inbound and an outbound session each
    assert m["max_concurrent"] == 10000 * 32
    assert cases["f"]["counters"]["refused_full"] == 1


def test_syn_cookies_keep_the_tables_empty_and_without_them_the_flood_fills_them(tmp_path):
    cases = run(tmp_path, """
        workload: synflood
        legit_rate: 20000
        duration_us: 1000
        warmup_us: 100
        cases:
          - {id: on, rate: 2.0e6, syn_cookies: true}
          - {id: off, rate: 2.0e6, syn_cookies: false}
    """)
    on, off = cases["on"]["metrics"], cases["off"]["metrics"]
    assert on["connections_end"] == 0
    assert on["legit_success_pct"] == 100
    assert on["attack_pps"] == pytest.approx(2e6, rel=0.01)
    # 84 wire bytes per 64-byte SYN
    assert on["attack_gbps"] == pytest.approx(on["attack_pps"] * 84 * 8 / 1e9)
    assert off["connections_end"] > 1000
    # 8M sessions per core, 2 per connection, filled at the per-core open rate
    assert off["seconds_to_fill"] == pytest.approx(4e6 / (off["attack_pps"] / 32))


def test_packet_level_over_the_cli_agrees_with_descriptor_level_but_for_the_framing(tmp_path):
    """The same TPS step at both levels (real ns3::Packets over 16 x 10GbE
    cables at packet level): the same CPU to the frames at the window's edges,
    and a latency longer by what the ports and cables add."""
    runs = {}
    for level in ("descriptor", "packet"):
        (tmp_path / level).mkdir()
        runs[level] = run(tmp_path / level, f"""
            workload: http11
            level: {level}
            link_delay_ns: 100
            duration_us: 1000
            warmup_us: 100
            cases:
              - {{id: s, rate: 1.0e6}}
        """)["s"]["metrics"]
    d, p = runs["descriptor"], runs["packet"]
    assert p["tps"] == pytest.approx(d["tps"], abs=2 / 0.9e-3)  # a unit at either edge of the 0.9 ms window
    # a 64-byte request is a 122-byte frame: 104 ns on a 10GbE port from first to last bit
    ser = 8 * (8 + 122) / 10e9
    # one frame at either window edge of the busiest core, at most a transaction's cycles
    assert p["cpu_util"] == pytest.approx(d["cpu_util"], abs=100 * 2 * d["cycles_per_unit"] / (1e9 * 0.9e-3))
    assert p["cycles_per_unit"] == d["cycles_per_unit"]
    assert p["units_failed"] == d["units_failed"] == 0
    # two serialisations and two cables, less the aggregate 160G line's 7.1 ns; the cores'
    # queueing differs only through the aging sweeps (same instants, frames shifted): by less
    # than a core's aging time per 10 us slice on average (the gtest checks the exact decomposition)
    extra = 2 * (ser + 100e-9) - 8 * 142 / 160e9
    assert d["aging_cpu"] > 0
    assert (p["latency_us"] - d["latency_us"]) * 1e-6 == pytest.approx(extra, abs=d["aging_cpu"] / 100 * 10e-6)


def test_packet_level_runs_http10_over_the_cli_with_the_descriptor_levels_work(tmp_path):
    """HTTP/1.0 at packet level: the tester learns each connection's server
    and SNAT port from its SYN as it reaches the servers' side, so every
    connection completes, through the same frames and so the same cycles per
    connection as at descriptor level (the gtest checks the rest)."""
    runs = {}
    for level in ("descriptor", "packet"):
        (tmp_path / level).mkdir()
        runs[level] = run(tmp_path / level, f"""
            workload: http10
            level: {level}
            link_delay_ns: 50
            duration_us: 500
            warmup_us: 50
            cases:
              - {{id: s, rate: 2.0e5}}
        """)["s"]["metrics"]
    d, p = runs["descriptor"], runs["packet"]
    assert p["cycles_per_unit"] == d["cycles_per_unit"]
    assert p["units_failed"] == d["units_failed"] == 0


# ------------------------------------------------------- scenario errors --

def test_flood_above_eight_ports_line_rate_is_one_line_naming_the_case(tmp_path):
    path, text = scenario(tmp_path, """
        workload: synflood
        cases:
          - {id: x, rate: 1.2e8}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'rate: 1.2e8')}: key 'cases[0].rate'" in line
    assert "line rate" in line


def test_misspelled_lb_key_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        workloda: http11
        cases:
          - {id: x, rate: 1.0e6}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'workloda')}: key 'workloda'" in line


def test_tolly_case_with_two_steps_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: t, method: tolly, steps: [1.0e6, 2.0e6]}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'steps')}: key 'cases[0].steps'" in line
