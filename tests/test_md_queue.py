"""The M/D/c waiting-time distribution (routertwin.runners._shared.md_queue)
against independent truth: the Pollaczek-Khinchine mean and P(W = 0) = 1 - rho
of M/D/1, the textbook alternating series in 400-digit arithmetic, a numpy
simulation of the queue (the Lindley recursion; for c servers the
Kiefer-Wolfowitz recursion, which with constant service is c interleaved
Lindley recursions), and for M/D/1/K the embedded chain's balance equations
solved in high precision; M/D/c/K's blocking (an approximation) against
Erlang's loss formula, M/D/1/K and a simulation of the finite queue."""

import math
import warnings

import mpmath
import numpy as np
import pytest

from routertwin.runners._shared import md_queue
from routertwin.runners._shared.md_queue import (MDcWait, erlang_b, lattice_chain, md1k_blocking, mdck_blocking,
                                                 mdck_blocking_from_chain, number_in_system, states_needed)

D = 1.0  # service time; every figure below scales with it


def simulated_waits(rho: float, c: int, n: int, seed: int) -> np.ndarray:
    """Waits of n Poisson customers (rate c rho / D) in FIFO M/D/c, from an
    empty system. Customer i starts at max(a_i, start_{i-c} + D) (the
    server that frees first is the one that took customer i - c), so the
    customers of each residue class mod c form a Lindley recursion
    W' = max(0, W + D - (a_i - a_{i-c})), solved in closed form as
    S - min(0, running min of S), S the partial sums of D - gap."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(D / (c * rho), n))
    waits = np.empty(n)
    for r in range(c):
        a = arrivals[r::c]
        s = np.concatenate(([0.0], np.cumsum(D - np.diff(a))))
        waits[r::c] = s - np.minimum.accumulate(np.minimum(s, 0.0))
    return waits


def test_md1_at_half_load_waits_with_probability_rho_and_has_the_pollaczek_khinchine_mean():
    rho = 0.5
    w = MDcWait(rho / D, D, 1)
    assert w.cdf(0.0) == pytest.approx(1 - rho, rel=1e-12)
    # E[W] = integral of P(W > t), on a grid fine enough for the kinks at multiples of D
    top = w.quantile(1 - 1e-13)
    t = np.linspace(0.0, top, 20001)
    survival = 1.0 - np.array([w.cdf(x) for x in t])
    mean = float(np.sum((survival[1:] + survival[:-1]) / 2 * np.diff(t)))
    assert mean == pytest.approx(rho * D / (2 * (1 - rho)), rel=1e-5)
    assert w.mean() == pytest.approx(rho * D / (2 * (1 - rho)), rel=1e-12)


def test_the_cdf_is_continuous_across_multiples_of_the_service_time():
    # the two sides of kD come from different terms of the formula
    for c, rho in ((1, 0.9), (3, 0.8)):
        w = MDcWait(c * rho / D, D, c)
        for k in (1, 2, 5):
            assert w.cdf(k * D - 1e-9) == pytest.approx(w.cdf(k * D), abs=1e-8)


def test_the_positive_recursion_and_the_linear_system_agree_for_one_server():
    w = MDcWait(0.95 / D, D, 1)
    assert np.abs(lattice_chain(0.95, 1, w.p.size) - w.p).max() < 1e-12


def erlang_series_cdf(rho: float, t: float, digits: int = 400) -> float:
    """M/D/1 P(W <= t) (D = 1) by the textbook alternating series
    (1 - rho) sum_{k=0}^{floor t} [rho (k - t)]^k / k! e^{-rho (k - t)} (Erlang
    1909, Crommelin 1932), in `digits`-digit arithmetic: its terms reach
    e^{rho t}, ~1e147 at t ~ 340, and cancel to a result of order 1."""
    with mpmath.workdps(digits):
        lam, t = mpmath.mpf(rho), mpmath.mpf(t)
        total = mpmath.fsum((lam * (k - t)) ** k / mpmath.factorial(k) * mpmath.exp(-lam * (k - t))
                            for k in range(int(mpmath.floor(t)) + 1))
        return float((1 - lam) * total)


def test_far_tails_keep_their_digits_where_the_alternating_series_has_none():
    # rho 0.99: the p99.9 wait is ~344 D, lam t ~ 340 (terms of the textbook
    # series reach e^340 / k!); in 400 digits the series is still exact, and
    # the positive-term form agrees with it in double precision.
    w = MDcWait(0.99 / D, D, 1)
    q999 = w.quantile(0.999)
    assert w.cdf(q999) == pytest.approx(erlang_series_cdf(0.99, q999 / D), abs=1e-12)
    assert erlang_series_cdf(0.99, q999 / D) == pytest.approx(0.999, abs=1e-12)  # the quantile itself
    for t in (0.5, 17.25, 2 * q999 / D):
        assert w.cdf(t * D) == pytest.approx(erlang_series_cdf(0.99, t), abs=1e-12), t
    assert w.mean() == pytest.approx(0.99 * D / (2 * 0.01), rel=1e-9)


@pytest.mark.parametrize("c, rho", [(1, 0.5), (1, 0.9), (2, 0.8)])
def test_percentiles_match_a_simulated_queue(c, rho):
    """4 million customers, the first 10^5 dropped; the simulated fraction
    at or below each closed-form percentile, from 40 batch means (batches of
    ~10^5 customers, far longer than a busy period at these loads: their
    means are nearly independent), lies within 4 standard errors of it."""
    w = MDcWait(c * rho / D, D, c)
    waits = simulated_waits(rho, c, 4_000_000, seed=7)[100_000:]
    batches = waits[: waits.size // 40 * 40].reshape(40, -1)
    for q in (0.99, 0.999):
        t = w.quantile(q)
        frac = (batches <= t).mean(axis=1)
        se = frac.std(ddof=1) / np.sqrt(frac.size)
        assert abs(frac.mean() - q) < 4 * se + 1e-5, (q, t, np.quantile(waits, q), frac.mean(), se)
    zero = (batches == 0.0).mean(axis=1)
    assert abs(zero.mean() - w.p_wait_zero()) < 4 * zero.std(ddof=1) / np.sqrt(zero.size) + 1e-5
    assert waits.mean() == pytest.approx(w.mean(), rel=0.03)


def test_md1k_blocking_at_room_for_one_is_the_loss_system():
    # M/G/1/1: an arrival is lost iff the server is busy; P = rho / (1 + rho)
    for a in (0.3, 1.0, 4.0):
        assert md1k_blocking(a, 1) == pytest.approx(a / (1 + a), rel=1e-12)


def md1k_blocking_exact(a: float, k: int, digits: int = 160) -> float:
    """M/D/1/K blocking from the chain embedded at departures (states
    0..K-1: from i the next is min(max(i - 1, 0) + A, K - 1), A ~ Poisson(a)),
    its balance equations pi_j = pi_0 a_j + sum_{i=1}^{j+1} pi_i a_{j-i+1}
    solved forward for pi_{j+1} in `digits`-digit arithmetic (the subtractions
    lose about as many digits as the blocking is small), then
    P_K = 1 - 1 / (pi_0 + a) (Gross & Harris, M/G/1/K)."""
    with mpmath.workdps(digits):
        a = mpmath.mpf(a)
        pmf = [mpmath.exp(-a) * a**j / mpmath.factorial(j) for j in range(k + 1)]
        pi = [mpmath.mpf(1)]
        for j in range(k - 1):
            rest = mpmath.fsum(pi[i] * pmf[j - i + 1] for i in range(1, j + 1))
            pi.append((pi[j] - pi[0] * pmf[j] - rest) / pmf[0])
        pi0 = pi[0] / mpmath.fsum(pi)
        return float(1 - 1 / (pi0 + a))


# rho 0.5 / 0.3 / 0.9 at these K: room above the states the infinite
# system's tail needs, where the blocking once lost all but the first weight
# beyond K (0.715x, 0.873x, 0.187x of the truth); then rho 1, above 1, and
# a small buffer.
CHAIN_CASES = [(0.5, 60), (0.3, 80), (0.9, 300), (0.95, 10), (1.0, 50), (1.3, 100)]


@pytest.mark.parametrize("a, k", CHAIN_CASES)
def test_md1k_blocking_is_the_embedded_chains(a, k):
    assert md1k_blocking(a, k) == pytest.approx(md1k_blocking_exact(a, k), rel=1e-12, abs=0.0)


def test_the_chain_cases_include_room_above_the_states_needed():
    assert any(a < 1 and k > states_needed(a, 1) for a, k in CHAIN_CASES)


@pytest.mark.parametrize("a, k, cap", [(0.9, 300, 120), (0.9, 100, 150), (0.5, 60, 40), (1.0, 50, 30),
                                       (1.3, 100, 60), (0.999, 200, 100)])
def test_the_geometric_continuation_past_the_computed_weights_keeps_the_chains_blocking(monkeypatch, a, k, cap):
    # A buffer beyond MAX_STATES_MD1 weights (up to 2^32 - 1 in a profile)
    # continues them geometrically; with the cap lowered the same continuation
    # covers these K, and must still give the exact chain's blocking.
    monkeypatch.setattr(md_queue, "MAX_STATES_MD1", cap)
    assert md1k_blocking(a, k) == pytest.approx(md1k_blocking_exact(a, k), rel=1e-12, abs=0.0)


def test_huge_buffers_and_huge_loads_give_the_limits_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero once came from e^-a underflowing
        # a buffer of 2^32 - 1: nothing lost below rho 1, the excess 1 - 1/rho above
        assert md1k_blocking(0.5, 2**32 - 1) == 0.0
        assert md1k_blocking(1.5, 2**32 - 1) == pytest.approx(1 - 1 / 1.5, rel=1e-15)
        # rho 800: e^-800 underflows; pi_0 < e^-800, so the blocking is 1 - 1/rho
        assert md1k_blocking(800.0, 5) == pytest.approx(1 - 1 / 800, rel=1e-15)
        assert md1k_blocking(800.0, 1) == pytest.approx(800 / 801, rel=1e-15)


def simulated_blocking(rho: float, c: int, buffer: int, n: int, seed: int, batches: int = 40) -> tuple[float, float]:
    """Fraction of n Poisson arrivals (rate c rho / D) lost by FIFO M/D/c with
    room for `buffer` waiting customers (K = c + buffer), from an empty
    system, the first 5 % dropped; with its standard error from `batches`
    batch means. The packet engine's rule (pipeline-engine.cc): an arrival
    at t is admitted iff fewer than `buffer` admitted customers have not yet
    started, i.e. the one `buffer` places back has started by t (with no
    buffer: iff a server is free, the one c places back has left); admitted
    customer m starts at max(t, start[m - c] + D)."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(D / (c * rho), n)).tolist()
    start: list[float] = []
    lost = np.zeros(n, dtype=bool)
    for i, t in enumerate(arrivals):
        m = len(start)
        full = (m >= buffer and start[m - buffer] > t) if buffer else (m >= c and start[m - c] + D > t)
        if full:
            lost[i] = True
            continue
        start.append(t if m < c else max(t, start[m - c] + D))
    kept = lost[n // 20:]
    per_batch = kept[: kept.size // batches * batches].reshape(batches, -1).mean(axis=1)
    return float(per_batch.mean()), float(per_batch.std(ddof=1) / math.sqrt(batches))


def test_erlang_b_is_the_loss_formula_with_factorials():
    for a, c in ((0.5, 1), (3.2, 4), (7.2, 8), (30.0, 32)):
        terms = [a**k / math.factorial(k) for k in range(c + 1)]
        assert erlang_b(a, c) == pytest.approx(terms[-1] / sum(terms), rel=1e-12)


@pytest.mark.parametrize("a, k", [(0.5, 60), (0.3, 80), (0.9, 300), (0.95, 10), (0.5, 2)])
def test_the_m_d_c_k_formula_at_one_server_is_m_d_1_k(a, k):
    """Its one-server case is the exact M/G/1/K relation (Erlang's factor is
    1 there): from the time-stationary M/D/1 chain it gives M/D/1/K's
    blocking solved in high precision (to 1e-5: past P(N >= K) = 1e-10 the
    tail is the geometric continuation, 1.3e-6 off at 1e-72)."""
    p = number_in_system(a, 1)
    assert mdck_blocking_from_chain(a, 1, k, p) == pytest.approx(md1k_blocking_exact(a, k), rel=1e-5, abs=0.0)
    assert mdck_blocking(a, 1, k) == md1k_blocking(a, k)


def test_no_waiting_room_is_erlangs_loss_formula():
    for c, rho in ((2, 0.5), (4, 0.8), (8, 0.95), (4, 1.5)):
        assert mdck_blocking(c * rho, c, c) == pytest.approx(erlang_b(c * rho, c), rel=1e-12)
    # far below the chains' resolution (once returned as 0): 1/32! / sum 1/k!
    exact = (1.0 / math.factorial(32)) / sum(1.0 / math.factorial(k) for k in range(33))
    assert mdck_blocking(1.0, 32, 32) == pytest.approx(exact, rel=1e-12)
    assert 1e-36 < exact < 2e-36


# (c, rho, buffer, allowed relative error). The formula is exact at buffer 0
# (Erlang) and at c = 1 (M/D/1/K): there only the simulation's scatter is
# allowed; elsewhere it is an approximation, and the allowance is its error
# against long simulations of the queue (docs/validation.md, "M/D/c/K"):
# -5.8 .. +2.4 % at c 2..16, rho 0.9..0.98, and within -5.3 .. +6.0 % from
# rho 1 to 1.5 at c 2..32; below rho 0.9 it is low by more as c grows:
# (16, 0.8, 8) -11.4 % (4e6 arrivals, se 2.2 %; -11.9 % with 4e8).
SIMULATED_CASES = [(1, 0.8, 4, 0.0), (4, 0.8, 0, 0.0), (2, 0.9, 4, 0.06), (4, 0.8, 8, 0.06), (4, 0.95, 16, 0.06),
                   (8, 0.9, 2, 0.06), (16, 0.8, 8, 0.16), (4, 1.0, 8, 0.06), (8, 1.1, 2, 0.06), (16, 1.2, 8, 0.06)]


@pytest.mark.parametrize("c, rho, buffer, approx_error", SIMULATED_CASES)
def test_m_d_c_k_blocking_against_a_simulated_queue(c, rho, buffer, approx_error):
    """600k arrivals; the simulated loss (40 batch means of 14k arrivals,
    each far longer than a busy period here) lies within 4 standard errors
    of the formula, plus its approximation error where it is not exact."""
    formula = mdck_blocking(c * rho, c, c + buffer)
    sim, se = simulated_blocking(rho, c, buffer, 600_000, seed=11 + c + buffer)
    assert abs(sim - formula) < 4 * se + approx_error * formula, (sim, se, formula)


def test_the_geometric_continuation_of_the_tail_keeps_the_chains_blocking(monkeypatch):
    """Past where the chain resolves P(N >= K) (TAIL_CONTINUE_BELOW) the tail
    goes on at rate 1/z0; started far earlier (from 1e-3) it must still
    give the chain's blocking where the chain resolves it."""
    for a, ks in ((3.2, (12, 20, 40)), (3.6, (20, 40, 80))):
        p = number_in_system(a, 4)
        direct = [mdck_blocking_from_chain(a, 4, k, p) for k in ks]
        monkeypatch.setattr(md_queue, "TAIL_CONTINUE_BELOW", 1e-3)
        continued = [mdck_blocking_from_chain(a, 4, k, p) for k in ks]
        monkeypatch.undo()
        assert continued == pytest.approx(direct, rel=1e-6)
        assert min(direct) < 1e-7  # the continuation reached far past 1e-3


def test_m_d_c_k_with_huge_buffers_and_tiny_loads_loses_nothing_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mdck_blocking(3.2, 4, 2**32 - 1) == 0.0
        # Light load: a loss needs all K = 8 present at once, the 8 arrivals
        # of one service time d: a^8 / 8! (once asserted only as 0 <= x,
        # which 0 passed; then as a band read off a geometric continuation
        # that was 6e4 times too low).
        tiny, ten_x = mdck_blocking(1e-9, 4, 8), mdck_blocking(1e-8, 4, 8)
        assert tiny == pytest.approx(1e-72 / math.factorial(8), rel=1e-2)
        assert ten_x / tiny == pytest.approx(1e8, rel=1e-6)  # a^8: ten times the load, 1e8 times the loss
        # Above saturation a huge room loses the fluid excess 1 - 1/rho; a
        # shorter room that is there already stands for it (md_queue), and
        # must agree with the whole chain where that can be solved.
        assert mdck_blocking(4.4, 4, 2**32 - 1) == pytest.approx(1.0 - 1.0 / 1.1, rel=1e-12)
        for a, c, k in ((50.4, 48, 944), (4.4, 4, 900), (4.04, 4, 900)):
            assert mdck_blocking(a, c, k) == pytest.approx(md_queue.cut_chain_blocking(a, c, k, 1.0 - c / a),
                                                           rel=1e-12)


def test_m_d_c_k_just_above_saturation_with_a_room_too_long_for_the_cut_chain_is_a_value_error():
    """rho 1.00001 and 1.000001 at c = 4: no room the cut chain holds
    (MAX_FINITE_STATES) is within 1e-13 of the fluid loss, and K (200000,
    2^32 - 1) does not fit either: ValueError, the runner's to handle
    (review: the shortened rooms once doubled on up to K, 12 s, then 79 s
    and a MemoryError)."""
    for a, k in ((4 * 1.00001, 200_000), (4 * 1.000001, 2**32 - 1)):
        with pytest.raises(ValueError, match="the cut chain needs"):
            mdck_blocking(a, 4, k)


def test_m_d_c_k_far_above_saturation_is_the_fluid_loss_within_erlangs_b_or_a_value_error():
    """Past a = 745 e^-a underflows and the cut chain once gave NaN (review:
    746/16/24, 760/24/32, 800/32/40). The loss lies between the fluid loss
    1 - c/a (K -> inf) and Erlang's B(a, c) (K = c): the fluid loss where
    that band is within 1e-4, a ValueError where it is not (c near a)."""
    for a, c, k in ((746.0, 16, 24), (760.0, 24, 32), (800.0, 32, 40)):
        loss = mdck_blocking(a, c, k)
        assert 1.0 - c / a <= loss <= erlang_b(a, c)
        assert loss == pytest.approx(1.0 - c / a, abs=1e-4)
    with pytest.raises(ValueError, match="underflows"):
        mdck_blocking(800.0, 790, 800)


def test_m_d_c_k_rejects_meaningless_arguments_clearly():
    for a, c, k in ((-1.0, 4, 8), (0.0, 4, 8), (math.nan, 4, 8), (1.0, 0, 8), (1.0, 4, 3)):
        with pytest.raises(ValueError, match="M/D/c/K needs"):
            mdck_blocking(a, c, k)


@pytest.mark.parametrize("c, buffer", [(2, 8), (4, 8), (4, 896), (16, 8), (32, 16)])
def test_m_d_c_k_blocking_rises_with_the_load_through_saturation(c, buffer):
    """From rho 0.95 to 1.2 in steps of 0.005, and of 0.001 from 0.99 to 1.002,
    through where M/D/c's infinite chain ends (rho ~0.9942 at c = 4) and
    where it stops existing (rho = 1):
    the loss never falls (it once fell from 5.3 % to none, then to the fluid
    0.1 %), and far above it tends to the fluid loss 1 - 1/rho."""
    rhos = np.union1d(np.arange(950, 1201, 5), np.arange(990, 1003)) / 1000.0
    loss = np.array([mdck_blocking(c * r, c, c + buffer) for r in rhos])
    assert np.all(np.diff(loss) > 0.0)
    assert loss[-1] > (1.0 - 1.0 / 1.2) * (1.0 - 1e-12)
    assert mdck_blocking(8.0 * c, c, c + buffer) == pytest.approx(1.0 - 1.0 / 8.0, rel=1e-6)


def test_the_cut_chain_is_the_infinite_chains_formula_below_saturation():
    """Below rho = 1 both exist; the chain cut past the room
    (finite_chain_margin) must give the infinite chain's blocking."""
    for a, c, k in ((3.2, 4, 12), (3.96, 4, 12), (12.8, 16, 24), (28.8, 32, 48), (3.2, 4, 50)):
        log_w = md_queue.cut_chain_log_weights(a, c, k + md_queue.finite_chain_margin(a, c))
        cut = md_queue.tijms_loss(a, c, k, log_w) * erlang_b(a, c) / md_queue.tijms_loss(a, c, c, log_w)
        assert cut == pytest.approx(mdck_blocking_from_chain(a, c, k, number_in_system(a, c)), rel=1e-6)
    # Where only the cut chain exists (rho 0.995 at c = 4) and little is lost
    # (896 + 4 places): no cancellation in a - m (it once gave 1e-16 noise,
    # negative too): Tijms' (1 - rho) T with M/D/c's tail T ~ z0^-K.
    a, c, k = 3.98, 4, 3620
    z0 = md_queue.tail_root(a, c)
    assert 0.1 < mdck_blocking(a, c, k) / ((1.0 - a / c) * z0**-k) < 10.0
