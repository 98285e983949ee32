"""The timed drain / remove / add what-if (model/lb/helper/lb-timed.h,
routertwin._core.lb_timed) against closed forms: the drain of exponential
connections (the last of N0 to end: H_N0 / mu; N(t) = N0 exp(-mu t)), the
M/G/infinity mean lambda x share x E[L] per server (any lifetime law), and
HAProxy's maxconn and queues as the queueing systems they make: Erlang C
(a backend queue without timeout), M/M/c with deterministic patience
(timeout queue: 503s), and M/M/c/K (maxqueue: 503s)."""

from __future__ import annotations

import math
import statistics

import pytest

from conftest import adx_scenario as scenario, line_of, one_line, run_adx as run, run_cli
from routertwin import _core


def timed(**keys) -> dict:
    return _core.lb_timed(keys)


def runs(n: int, **keys) -> list[dict]:
    return [timed(**keys, seed=seed) for seed in range(1, n + 1)]


def harmonic(n: int) -> float:
    return sum(1.0 / k for k in range(1, n + 1))


def test_exponential_drain_time_is_the_last_of_n0_to_end():
    """Exponential lifetimes (mean 1 s): the drained server's N0 connections
    end independently at rate mu each, so the last ends H_N0 / mu after the
    drain on average (variance sum 1/(k mu)^2), and N(t) / N0 = exp(-mu t)."""
    out = runs(120, scheduler="roundrobin", servers=4, rate=100.0, lifetime="exponential", lifetime_mean_ms=1000.0,
               warmup_s=10.0, at_s=20.0, settle_s=10.0, end_s=40.0, sample_s=0.5, action="drain", server=0)
    assert all(o["draining_new"] == 0 and o["drain_s"] >= 0 for o in out)
    diff = [o["drain_s"] - harmonic(o["n0"]) for o in out]
    se = math.sqrt(sum(sum(1.0 / k**2 for k in range(1, o["n0"] + 1)) for o in out)) / len(out)
    assert abs(statistics.fmean(diff)) < 4 * se, (statistics.fmean(diff), se)
    # N0: the server's share of the M/G/infinity population, lambda x 1/4 x E[L] = 25
    n0 = [o["n0"] for o in out]
    assert abs(statistics.fmean(n0) - 25.0) < 4 * statistics.stdev(n0) / math.sqrt(len(n0))
    # decay: each of the N0 is still open at t with probability exp(-t)
    total = sum(n0)
    for k in range(1, 8):
        t = 0.5 * k
        p = math.exp(-t)
        left = sum(o["samples"][k] for o in out) / total
        assert abs(left - p) < 4 * math.sqrt(p * (1 - p) / total), (t, left, p)
    assert [o["samples"][0] for o in out] == n0


@pytest.mark.parametrize("lifetime", [{"lifetime": "exponential", "lifetime_mean_ms": 800.0},
                                      {"lifetime": "lognormal", "lognormal_mu": 6.0, "lognormal_sigma": 1.0},
                                      {"lifetime": "pareto", "pareto_alpha": 3.0, "pareto_min_ms": 400.0}])
def test_mginf_mean_per_server_is_rate_share_mean_lifetime(lifetime):
    """Poisson arrivals dealt 3:1:1 by weighted round robin: each server's
    mean connections are lambda x w/W x E[L], whatever the lifetime's law
    (M/G/infinity insensitivity); after the weight-3 server is drained the
    two others take half each."""
    mean_ms = {"exponential": 800.0, "lognormal": math.exp(6.0 + 0.5),
               "pareto": 3.0 * 400.0 / 2.0}[lifetime["lifetime"]]
    rate = 200.0
    out = runs(12, scheduler="roundrobin", servers=3, weights={"0": 3, "1": 1, "2": 1}, rate=rate, **lifetime,
               warmup_s=10.0, at_s=60.0, settle_s=20.0, end_s=110.0, action="drain", server=0)
    for i, share in enumerate((0.6, 0.2, 0.2)):
        active = statistics.fmean(o["before_active"][i] for o in out)
        cps = statistics.fmean(o["before_new_per_s"][i] for o in out)
        assert active == pytest.approx(rate * share * mean_ms / 1000.0, rel=0.05)
        assert cps == pytest.approx(rate * share, rel=0.01)  # round robin deals exactly 3:1:1
    for i in (1, 2):
        assert statistics.fmean(o["after_active"][i] for o in out) == pytest.approx(rate * 0.5 * mean_ms / 1000.0,
                                                                                     rel=0.05)
        assert statistics.fmean(o["after_new_per_s"][i] for o in out) == pytest.approx(rate * 0.5, rel=0.01)
    assert all(o["after_new_per_s"][0] == 0 for o in out)


def test_remove_cuts_its_connections_and_add_takes_its_share():
    removed = runs(4, scheduler="leastconn", servers=4, rate=100.0, lifetime_mean_ms=1000.0, warmup_s=10.0,
                   at_s=30.0, settle_s=10.0, end_s=60.0, action="remove", server=2)
    assert all(o["broken"] == o["n0"] > 0 for o in removed)
    for i in (0, 1, 3):
        assert statistics.fmean(o["after_active"][i] for o in removed) == pytest.approx(100 / 3, rel=0.06)
    added = runs(4, scheduler="roundrobin", servers=3, rate=120.0, lifetime_mean_ms=1000.0, warmup_s=10.0,
                 at_s=30.0, settle_s=10.0, end_s=60.0, action="add")
    for i in range(4):
        assert statistics.fmean(o["after_new_per_s"][i] for o in added) == pytest.approx(30.0, rel=0.01)
    assert all(o["before_new_per_s"][3] == 0 for o in added)


def erlang(c: int, a: float):
    """pi_0 .. pi_{c-1} of M/M/c (unnormalised, pi_0 = 1)."""
    return [a**k / math.factorial(k) for k in range(c)]


def mmc_patience(c: int, lam: float, mu: float, tau: float) -> tuple[float, float]:
    """M/M/c with FIFO and a deterministic patience tau (HAProxy's timeout
    queue): (P(wait > 0), P(abandon)) for an arrival. The offered wait V has
    density lambda pi_{c-1} exp(-(c mu - lambda) v) up to tau and falls at
    rate c mu beyond (only arrivals with V <= tau add work); an arrival
    abandons when V > tau. tau -> inf gives Erlang C, tau -> 0 Erlang B."""
    d = c * mu - lam
    head = erlang(c, lam / mu)
    decay = math.exp(-d * tau)
    body = c * mu * (1 - decay) / d if d else c * mu * tau
    pi_c1 = head[-1]
    norm = sum(head) + lam * pi_c1 / (c * mu) * (body + decay)
    scale = lam * pi_c1 / (c * mu) / norm
    return scale * (body + decay), scale * decay


def test_backend_queue_without_timeout_is_erlang_c():
    """Two servers of maxconn 5 behind roundrobin, no timeout queue: every
    request that finds the ten slots taken waits in the backend queue and the
    next slot freed anywhere takes the oldest: M/M/10. Erlang C at a = 8:
    P(wait) = C(10, 8) and the wait of those who wait is Exp(c mu - lambda)."""
    c, lam = 10, 8.0
    out = runs(8, scheduler="roundrobin", servers=2, maxconn={"0": 5, "1": 5}, rate=lam, lifetime_mean_ms=1000.0,
               warmup_s=0.0, at_s=0.0, settle_s=0.0, end_s=3000.0, action="none")
    requests = sum(o["requests"] for o in out)
    p_wait, _ = mmc_patience(c, lam, 1.0, math.inf)
    assert sum(o["queued"] for o in out) / requests == pytest.approx(p_wait, rel=0.05)
    assert statistics.fmean(o["queue_wait_mean_ms"] for o in out) == pytest.approx(1000.0 / (c - lam), rel=0.06)
    assert all(o["queue_timeouts"] == 0 and o["refused_maxqueue"] == 0 and o["server_queue_max"] == 0 for o in out)


@pytest.mark.parametrize("lam,tau_ms", [(12.0, 500), (9.0, 200)])
def test_timeout_queue_503s_are_mmc_with_deterministic_patience(lam, tau_ms):
    c = 10
    out = runs(8, scheduler="leastconn", servers=2, maxconn={"0": 5, "1": 5}, rate=lam, lifetime_mean_ms=1000.0,
               warmup_s=0.0, at_s=0.0, settle_s=0.0, end_s=2500.0, action="none", timeout_queue_ms=tau_ms)
    requests = sum(o["requests"] for o in out)
    p_wait, p_abandon = mmc_patience(c, lam, 1.0, tau_ms / 1000.0)
    assert sum(o["queued"] for o in out) / requests == pytest.approx(p_wait, rel=0.05)
    assert sum(o["queue_timeouts"] for o in out) / requests == pytest.approx(p_abandon, rel=0.08)


def test_maxqueue_on_a_hashed_server_is_mmck():
    """balance source over one server of maxconn 3 and maxqueue 2: the hash
    returns it full or not, the request waits in its own queue while fewer
    than 2 wait and gets a 503 otherwise (no redispatch for a hashed
    request): M/M/3/5. P(block) = pi_5, P(queued) = pi_3 + pi_4."""
    c, q, lam = 3, 2, 3.0
    out = runs(8, scheduler="source", servers=1, maxconn={"0": c}, maxqueue={"0": q}, rate=lam,
               lifetime_mean_ms=1000.0, warmup_s=0.0, at_s=0.0, settle_s=0.0, end_s=3000.0, action="none")
    a = lam
    pi = [a**k / math.factorial(k) for k in range(c + 1)] + [a**c / math.factorial(c) * (a / c) ** j
                                                            for j in range(1, q + 1)]
    z = sum(pi)
    requests = sum(o["requests"] for o in out)
    assert sum(o["refused_maxqueue"] for o in out) / requests == pytest.approx(pi[c + q] / z, rel=0.05)
    assert sum(o["queued"] for o in out) / requests == pytest.approx(sum(pi[c:c + q]) / z, rel=0.05)
    assert max(o["server_queue_max"] for o in out) == q and all(o["backend_queue_max"] == 0 for o in out)


def test_cookie_clients_keep_a_draining_server_busy_and_maxqueue_redispatches_them():
    """HAProxy honours a cookie naming a draining server: its clients keep
    coming, so with returning clients it never drains in the run (it may
    hold nothing for a moment, and takes the next cookie client after). With
    maxconn 1 and maxqueue 1 on it, a cookie request that finds its queue
    full is sent to the scheduler with option redispatch, and gets a 503
    without."""
    keys = dict(scheduler="roundrobin", servers=4, rate=100.0, lifetime_mean_ms=200.0, warmup_s=5.0, at_s=10.0,
                settle_s=5.0, end_s=30.0, action="drain", server=0, persistence="cookie", clients=40)
    out = runs(4, **keys)
    assert all(o["drain_s"] < 0 and o["draining_new"] > 0 for o in out)
    # the clients whose cookie names it (about a quarter) bring a quarter of the arrivals
    share = statistics.fmean(o["draining_new"] for o in out) / (100.0 * 20.0)
    assert 0.1 < share < 0.4
    tight = dict(keys, maxconn={"0": 1}, maxqueue={"0": 1})
    without = runs(3, **tight)
    with_ = runs(3, **tight, redispatch=True)
    assert all(o["refused_maxqueue"] > 0 and o["redispatched_full"] == 0 for o in without)
    assert all(o["refused_maxqueue"] == 0 and o["redispatched_full"] > 0 for o in with_)


def test_same_seed_same_result_and_bad_keys_name_the_key():
    keys = dict(scheduler="random", servers=3, rate=50.0, lifetime="pareto", pareto_alpha=2.5, pareto_min_ms=300.0,
                warmup_s=5.0, at_s=10.0, settle_s=2.0, end_s=20.0, action="drain", server=1, seed=7)
    assert timed(**keys) == timed(**keys)
    with pytest.raises(ValueError, match=r"key 'pareto_alpha'"):
        timed(**dict(keys, pareto_alpha=0.9))
    with pytest.raises(ValueError, match=r"key 'maxconn'.*'5'"):
        timed(**dict(keys, maxconn={"5": 10}))
    with pytest.raises(ValueError, match=r"key 'at_s'"):
        timed(**dict(keys, at_s=19.0))
    with pytest.raises(ValueError, match=r"key 'lifetim'.*unknown key"):
        timed(**dict(keys, lifetim="exponential"))
    with pytest.raises(ValueError, match=r"key 'lifetimes_ms'"):
        timed(**dict(keys, arrivals_s={"0": 1.0, "1": 2.0}, lifetimes_ms={"0": 5.0}))
    with pytest.raises(ValueError, match=r"key 'arrivals_s'.*increasing"):
        timed(**dict(keys, arrivals_s={"0": 2.0, "1": 1.0}, lifetimes_ms={"0": 5.0, "1": 5.0}))
    with pytest.raises(ValueError, match=r"key 'arrivals_s'.*twice"):
        timed(**dict(keys, arrivals_s={"1": 2.0, "01": 1.0}, lifetimes_ms={"0": 5.0, "1": 5.0}))


BALANCED = """
        balancer:
          source: haproxy
          pools:
            - name: web
              scheduler: roundrobin
              queue_timeout_ms: 2000
              servers:
                - {name: a, address: 198.18.0.1, port: 80, maxconn: 30}
                - {name: b, address: 198.18.0.2, port: 80, maxconn: 30}
                - {name: c, address: 198.18.0.3, port: 80, maxconn: 30}
        cases:
          - id: d
            method: timed
            pool: web
            server: a
            timed: {rate: %s, lifetime_mean_ms: 1000, warmup_s: 10, at_s: 30, settle_s: 10, end_s: 60,
                    replications: 6, sample_s: 1}
"""


def test_timed_case_reports_drain_percentiles_beside_the_closed_form(tmp_path):
    cases = run(tmp_path, BALANCED % 30)
    m = cases["d"]["metrics"]
    assert m["replications"] == 6 and m["drained_runs"] == 6
    assert m["drain_s_p50"] <= m["drain_s_p90"] <= m["drain_s_max"]
    # the closed form from each run's N0 (about 10: 30/s x 1/3 x 1 s), within the spread of 6 runs
    assert abs(m["drain_s_mean"] - m["drain_s_closed_form"]) < 4 * 1.3 / math.sqrt(6)
    assert m["before_a_active"] == pytest.approx(10.0, rel=0.2) and m["after_b_cps"] == pytest.approx(15, rel=0.1)
    assert m["http_503_pct"] == 0 and m["queued_pct"] == 0  # 30 slots each, far from full
    assert "d-t-0" in cases and cases["d-t-0"]["metrics"]["connections"] == pytest.approx(m["n0_mean"])


def test_timed_case_over_capacity_queues_and_times_out(tmp_path):
    """120/s of 1 s connections on 90 slots: the backend queue grows and its
    requests time out after the pool's timeout queue (2 s); after the drain
    only 60 slots are left and more of them do."""
    m = run(tmp_path, BALANCED % 120)["d"]["metrics"]
    assert m["queued_pct"] > 10 and m["queue_timeouts_pct"] > 5 and m["http_503_pct"] == m["queue_timeouts_pct"]
    assert m["queue_wait_mean_ms"] <= 2000
    # the servers left run at their maxconn after the drain: 30 each
    assert m["after_b_active"] == pytest.approx(30, abs=0.5) and m["after_c_active"] == pytest.approx(30, abs=0.5)


def test_bad_timed_key_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: t, method: timed, scheduler: roundrobin, servers: 3, timed: {at_s: 200, end_s: 100}}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'at_s: 200')}: key 'cases[0].timed" in line and "at_s" in line


@pytest.mark.parametrize("lifetime", [{"lifetime": "lognormal", "lognormal_mu": 6.0, "lognormal_sigma": 0.8},
                                      {"lifetime": "pareto", "pareto_alpha": 4.0, "pareto_min_ms": 300.0}])
def test_heavy_tailed_drain_is_the_last_of_n0_equilibrium_residuals(lifetime):
    """balance source over random client addresses thins the Poisson
    arrivals into a Poisson stream per server, so the drained server's N0
    connections have independent residual lifetimes of the equilibrium law
    F_e (M/G/infinity): the drain lasts int 1 - F_e(x)^N0 dx on average
    (runner._residual_max_s, numerically)."""
    from types import SimpleNamespace

    from routertwin.runners.lb.runner import _residual_max_s

    t = SimpleNamespace(**{"lifetime_mean_ms": 1000.0, "pareto_alpha": 4.0, "pareto_min_ms": 300.0,
                           "lognormal_mu": 6.0, "lognormal_sigma": 0.8, **lifetime})
    out = runs(150, scheduler="source", servers=4, rate=100.0, **lifetime, warmup_s=10.0, at_s=20.0, settle_s=5.0,
               end_s=60.0, action="drain", server=0)
    assert all(o["drain_s"] >= 0 and o["draining_new"] == 0 for o in out)
    diff = [o["drain_s"] - _residual_max_s(t, o["n0"]) for o in out]
    assert abs(statistics.fmean(diff)) < 4 * statistics.stdev(diff) / math.sqrt(len(diff)), statistics.fmean(diff)


def test_503s_per_second_before_and_after_a_drain_that_overloads_the_others():
    """4 servers of maxconn 10 with timeout queue 3 s under 35 connections/s
    of 1 s: 40 slots before the drain, 30 after it. Each window's 503 rate
    is lambda x P(abandon) of M/M/c with patience tau at its c (40, then 30:
    overloaded, the queue settles where the wait reaches tau)."""
    lam, tau = 35.0, 3.0
    out = runs(10, scheduler="leastconn", servers=4, maxconn={str(i): 10 for i in range(4)}, rate=lam,
               lifetime_mean_ms=1000.0, timeout_queue_ms=int(tau * 1000), warmup_s=20.0, at_s=120.0, settle_s=60.0,
               end_s=400.0, action="drain", server=3)
    before = statistics.fmean(o["before_503_per_s"] for o in out)
    after = statistics.fmean(o["after_503_per_s"] for o in out)
    assert before == pytest.approx(lam * mmc_patience(40, lam, 1.0, tau)[1], abs=0.05)
    assert after == pytest.approx(lam * mmc_patience(30, lam, 1.0, tau)[1], rel=0.05)


@pytest.mark.parametrize("redispatch", [True, False])
def test_remove_redistributes_its_queue_only_with_redispatch(redispatch):
    """Four requests 10 ms apart carry server 0's cookie and hold 500 ms;
    maxconn 1 each, so 1 runs on server 0 and 3 wait in its queue. Server 0
    is removed at 100 ms: its connection is cut; with option redispatch its
    queue goes back to the scheduler (pendconn_redistribute): one takes
    server 1 at once, the others wait in the backend queue and are served at
    600 and 1100 ms; without it they stay in the removed server's queue
    until timeout queue (2 s) gives them a 503."""
    trace = {str(k): 0.01 * k for k in range(4)}
    o = timed(scheduler="roundrobin", servers=2, maxconn={"0": 1, "1": 1}, timeout_queue_ms=2000,
              redispatch=redispatch, action="remove", server=0, warmup_s=0.0, at_s=0.1, settle_s=0.0, end_s=5.0,
              arrivals_s=trace, lifetimes_ms={k: 500.0 for k in trace}, cookies={k: 0 for k in trace})
    assert (o["n0"], o["broken"]) == (4, 1)
    if redispatch:
        assert (o["served"], o["queue_timeouts"], o["backend_queue_max"]) == (4, 0, 2)
    else:
        assert (o["served"], o["queue_timeouts"], o["backend_queue_max"]) == (1, 3, 0)
