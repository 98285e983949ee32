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
    # Erlang C's tail: P(W > t | W > 0) = exp(-(c mu - lambda) t), so the waits' q-quantile is
    # -ln(1 - q) / (c mu - lambda): 347 ms, 2.30 s, 3.45 s. Each run's percentiles (its Boost.Histogram,
    # within 2.33 % of the order statistic) over 8 runs: within 4.5 standard errors of their mean
    # (Student's t, 7 degrees of freedom: P = 0.003) and one bin
    for name, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
        truth = -math.log(1 - q) / (c - lam) * 1e6
        got = [o[f"queue_wait_{name}_us"] for o in out]
        se = statistics.stdev(got) / math.sqrt(len(got))
        assert abs(statistics.fmean(got) - truth) <= 4.5 * se + 0.0233 * truth, (name, statistics.fmean(got), truth)
    # every queued request got a server but those still waiting at the end: the histogram holds them
    # all, and nothing was refused over time
    assert all(o["queue_wait_histogram"]["count"] == o["queued"] - (o["requests"] - o["served"]) for o in out)
    assert all(sum(o["refusal_timeline"]["ports"][0]) == 0 for o in out)


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
    # "01" would name request 1 twice: indices are canonical decimal
    with pytest.raises(ValueError, match=r"key 'arrivals_s': '01'"):
        timed(**dict(keys, arrivals_s={"1": 2.0, "01": 1.0}, lifetimes_ms={"0": 5.0, "1": 5.0}))
    with pytest.raises(ValueError, match=r"key 'weights': '\+1'"):
        timed(**dict(keys, weights={"1": 2.0, "+1": 1.0}))
    # a trace gives every request: initial connections beyond it would have no lifetime in it
    with pytest.raises(ValueError, match=r"key 'initial_connections': a trace"):
        timed(**dict(keys, initial_connections=3, arrivals_s={"0": 0.5}, lifetimes_ms={"0": 100.0}))


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
               end_s=400.0, action="drain", server=3, timeline_bins=40)
    before = statistics.fmean(o["before_503_per_s"] for o in out)
    after = statistics.fmean(o["after_503_per_s"] for o in out)
    assert before == pytest.approx(lam * mmc_patience(40, lam, 1.0, tau)[1], abs=0.05)
    assert after == pytest.approx(lam * mmc_patience(30, lam, 1.0, tau)[1], rel=0.05)
    # over time: 10 s bins, the windows [20, 120) and [180, 400) are bins 2-11 and 18-39; every 503 is
    # a queue timeout, and the bins hold each one once
    for o in out:
        tl = o["refusal_timeline"]
        assert tl["bin_s"] == 10.0 and list(tl["reasons"]) == ["queue_timeout"]
        row = tl["ports"][0]
        assert sum(row) == o["queue_timeouts"]
        assert sum(row[2:12]) / 100.0 == pytest.approx(o["before_503_per_s"], rel=1e-12)
        assert sum(row[18:40]) / 220.0 == pytest.approx(o["after_503_per_s"], rel=1e-12)
    # the drain's effect shows in time: 40 slots before it, 30 after (P(abandon) rises about 40-fold)
    mean_bins = [statistics.fmean(o["refusal_timeline"]["ports"][0][b] for o in out) for b in range(40)]
    assert max(mean_bins[2:12]) < min(mean_bins[18:40])


def cookie_burst(action: str, redispatch: bool) -> dict:
    """Four requests 10 ms apart carry server 0's cookie and hold 500 ms;
    maxconn 1 on each of 2 servers, so request 0 runs on server 0 and 1-3
    wait in its queue; server 0 is drained or removed at 100 ms."""
    trace = {str(k): 0.01 * k for k in range(4)}
    return timed(scheduler="roundrobin", servers=2, maxconn={"0": 1, "1": 1}, timeout_queue_ms=2000,
                 redispatch=redispatch, action=action, server=0, warmup_s=0.0, at_s=0.1, settle_s=0.0, end_s=5.0,
                 arrivals_s=trace, lifetimes_ms={k: 500.0 for k in trace}, cookies={k: 0 for k in trace})


@pytest.mark.parametrize("redispatch", [True, False])
def test_remove_redistributes_its_queue_only_with_redispatch(redispatch):
    """Server 0 is removed at 100 ms (maint with its sessions shut down): its
    connection is cut. With option redispatch its queue goes back to the
    scheduler (pendconn_redistribute): request 1 takes server 1 at once,
    2 and 3 wait in the backend queue and get server 1 at 600 and 1100 ms.
    Without it they stay in server 0's queue, and the slot the cut stream
    frees serves them there (stream_free -> process_srv_queue, which takes a
    server's own queue whatever its state): at 100, 600 and 1100 ms. Either
    way the waits are 90, 580 and 1070 ms (from the first queueing), under
    timeout queue (2 s)."""
    o = cookie_burst("remove", redispatch)
    assert (o["n0"], o["broken"]) == (4, 1)
    # the cut connection at 100 ms: bin 1 of 60 bins of 5 s / 60
    assert o["refusal_timeline"]["reasons"]["broken"][0] == [0.0, 1.0] + [0.0] * 58
    assert o["queue_wait_histogram"]["count"] == 3 and o["queue_wait_max_us"] == pytest.approx(1070e3, rel=1e-9)
    assert (o["served"], o["queue_timeouts"]) == (4, 0)
    assert o["backend_queue_max"] == (2 if redispatch else 0)
    assert o["queue_wait_mean_ms"] == pytest.approx((90 + 580 + 1070) / 3, abs=1e-6)


@pytest.mark.parametrize("redispatch", [True, False])
def test_drain_redistributes_its_queue_only_with_redispatch(redispatch):
    """HAProxy 2.6's srv_update_status calls pendconn_redistribute on
    entering drain as on entering maintenance (src/server.c, "enters drain
    state"). With option redispatch the 3 requests queued on server 0 go to
    the balancer without their cookie: request 1 takes server 1 at 100 ms,
    2 and 3 wait in the backend queue (a draining server does not take from
    it) and get server 1 at 600 and 1100 ms; server 0 ends its one
    connection at 500 ms: drained in 0.4 s, nothing new on it (N0 = 1). Without
    redispatch they stay and server 0 serves them at 500, 1000 and 1500 ms
    (waits 490, 980, 1470 ms): drained at 2.0 s, 3 new connections while
    draining."""
    o = cookie_burst("drain", redispatch)
    # N0: what the drained server still has to finish (the closed form's N0)
    assert (o["n0"], o["served"], o["queue_timeouts"]) == (1 if redispatch else 4, 4, 0)
    if redispatch:
        assert (o["backend_queue_max"], o["draining_new"]) == (2, 0)
        assert o["drain_s"] == pytest.approx(0.4, abs=1e-9)
        assert o["queue_wait_mean_ms"] == pytest.approx((90 + 580 + 1070) / 3, abs=1e-6)
    else:
        assert (o["backend_queue_max"], o["draining_new"]) == (0, 3)
        assert o["drain_s"] == pytest.approx(1.9, abs=1e-9)
        assert o["queue_wait_mean_ms"] == pytest.approx((490 + 980 + 1470) / 3, abs=1e-6)


def test_timeout_queue_zero_falls_back_to_timeout_connect(tmp_path):
    """HAProxy 2.6 (cfgparse.c): `if (!timeout.queue) timeout.queue =
    timeout.connect`: `timeout queue 0` is unset, like no line at all, and
    the backend queue times out after timeout connect (700 ms here)."""
    body = BALANCED.replace("queue_timeout_ms: 2000", "queue_timeout_ms: 0\n              connect_timeout_ms: 700")
    body = body.replace("replications: 6, sample_s: 1", "replications: 1")
    assert run(tmp_path, body % 30)["d"]["params"]["timeout_queue_ms"] == 700


def test_a_cookie_naming_the_server_not_yet_added_is_ignored():
    """With action add, server 2 joins at 1 s; two trace requests at 0.1 and
    0.2 s carry a cookie naming it. Before it exists the cookie names no
    server, so HAProxy ignores it and round robin deals them to servers 0
    and 1; after the add, a request with that cookie goes to it."""
    o = timed(scheduler="roundrobin", servers=2, action="add", warmup_s=0.0, at_s=1.0, settle_s=0.5, end_s=3.0,
              arrivals_s={"0": 0.1, "1": 0.2, "2": 2.0}, lifetimes_ms={"0": 100.0, "1": 100.0, "2": 100.0},
              cookies={"0": 2, "1": 2, "2": 2})
    assert o["before_new_per_s"] == [1.0, 1.0, 0.0]
    assert o["after_new_per_s"] == [0.0, 0.0, 1.0 / 1.5]


def test_an_unknown_scheduler_of_a_timed_case_is_blamed_on_its_scheduler_key(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - id: t
            method: timed
            scheduler: nope
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert line.startswith(f"{path}:{line_of(text, 'scheduler: nope')}: key 'cases[0].scheduler': "
                           f"unknown scheduler 'nope'"), line


@pytest.mark.parametrize("timed,key", [("{lifetime: pareto, lifetime_mean_ms: 1000}", "lifetime_mean_ms"),
                                       ("{pareto_alpha: 3}", "pareto_alpha"),
                                       ("{lifetime: pareto, lognormal_sigma: 1}", "lognormal_sigma")])
def test_a_lifetime_parameter_of_another_law_is_refused(tmp_path, timed, key):
    """A parameter of a law the case does not draw from would be unused: an
    explicit lifetime_mean_ms of 1000 (the default's value) with pareto
    passed before, and pareto_alpha with the default exponential law."""
    path, text = scenario(tmp_path, f"""
        cases:
          - {{id: t, method: timed, scheduler: roundrobin, servers: 3, timed: {timed}}}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"key 'cases[0].timed.{key}': {key} is the " in line, line


def test_a_server_takes_its_own_queue_head_over_the_backend_queue_head_queued_in_the_same_ms():
    """HAProxy's queue key is the ms the request was queued in (pendconn_add:
    now_ms); pendconn_process_next_strm takes the backend head only when its
    key is strictly older. Server 0 (maxconn 1) holds request 0 (0-100 ms),
    server 1 request 1 (1-1001 ms); request 2, without cookie, waits in the
    backend queue from 50.2 ms, request 3, with server 0's cookie, in server
    0's queue from 50.7 ms: the same ms. At 100 ms server 0 takes request 3
    (held 300 ms), request 2 gets server 0 at 400 ms. Waits 49.3 and
    349.8 ms; mean 199.55 (taking request 2 first would give 99.55)."""
    o = timed(scheduler="roundrobin", servers=2, maxconn={"0": 1, "1": 1}, action="none", warmup_s=0.0, at_s=0.0,
              settle_s=0.0, end_s=3.0, arrivals_s={"0": 0.0, "1": 0.001, "2": 0.0502, "3": 0.0507},
              lifetimes_ms={"0": 100.0, "1": 1000.0, "2": 100.0, "3": 300.0},
              cookies={"0": 0, "1": 1, "2": -1, "3": 0})
    assert (o["served"], o["queued"], o["backend_queue_max"], o["server_queue_max"]) == (4, 2, 1, 1)
    assert o["queue_wait_mean_ms"] == pytest.approx((49.3 + 349.8) / 2, abs=1e-6)


def test_a_frontend_limit_with_an_accept_queue_is_haproxy_maxconn_and_backlog():
    """frontend_maxconn 2 with an accept queue of 1 before a server of
    maxconn 1 (trace, 1 s each): request 0 runs, 1 is accepted and waits in
    the backend queue (the frontend counts it), 2 waits in the accept queue,
    3 is refused (no 503: the kernel drops it). At 1 s request 0 ends: 1 gets
    the server and 2 is accepted into the backend queue; at 2 s it runs."""
    o = timed(scheduler="roundrobin", servers=1, maxconn={"0": 1}, frontend_maxconn=2, accept_queue=1,
              action="none", warmup_s=0.0, at_s=5.0, settle_s=0.0, end_s=5.0,
              arrivals_s={"0": 0.0, "1": 0.1, "2": 0.2, "3": 0.3}, lifetimes_ms={str(k): 1000.0 for k in range(4)})
    assert (o["served"], o["queued"], o["refused_frontend"]) == (3, 2, 1)
    assert (o["frontend_held_max"], o["accept_queue_max"], o["backend_queue_max"]) == (2, 1, 1)
    assert o["queue_wait_mean_ms"] == pytest.approx((900 + 1800) / 2, abs=1e-6)
    assert o["refusal_timeline"]["reasons"]["accept_queue_full"][0][3] == 1.0  # 0.3 s: bin 3 of 60 x 83 ms
    assert o["before_503_per_s"] == 0
    # the accept queue was 1 long from 0.2 s to 1 s, over the 5 s window
    assert o["before_accept_queue"] == pytest.approx(0.8 / 5.0, rel=1e-9)


def test_an_accept_queue_needs_a_frontend_limit():
    with pytest.raises(ValueError, match="key 'accept_queue'"):
        timed(accept_queue=4)
