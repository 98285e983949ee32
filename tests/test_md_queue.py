"""The M/D/c waiting-time distribution (routertwin.runners._shared.md_queue)
against independent truth: the Pollaczek-Khinchine mean and P(W = 0) = 1 - rho
of M/D/1, and a numpy simulation of the queue (the Lindley recursion; for c
servers the Kiefer-Wolfowitz recursion, which with constant service is c
interleaved Lindley recursions)."""

import numpy as np
import pytest

from routertwin.runners._shared.md_queue import MDcWait, lattice_chain, md1k_blocking

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


def test_far_tails_keep_their_digits_where_the_alternating_series_has_none():
    # rho 0.99: the p99.9 wait is ~344 D, lam t ~ 340 (terms of the textbook
    # series reach e^340 / k!): the distribution still has P(W <= t) rising
    # to 1 without exceeding it, and the mean matches Pollaczek-Khinchine.
    w = MDcWait(0.99 / D, D, 1)
    q999 = w.quantile(0.999)
    assert 300 * D < q999 < 400 * D
    assert 0.999 <= w.cdf(q999) <= 1.0 and w.cdf(2 * q999) <= 1.0
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


def test_md1k_blocking_matches_a_simulated_finite_queue():
    # rho 0.95, room for 10: simulate arrivals into a FIFO single server that
    # refuses an arrival finding 10 in the system
    a, k, n = 0.95, 10, 400_000
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(D / a, n))
    departures: list[float] = []
    head, lost, free = 0, 0, 0.0
    for t in arrivals:
        while head < len(departures) and departures[head] <= t:
            head += 1
        if len(departures) - head >= k:
            lost += 1
            continue
        free = max(free, t) + D
        departures.append(free)
    p = md1k_blocking(a, k)
    se = np.sqrt(p * (1 - p) / n) * 5  # busy periods correlate the refusals: a generous factor
    assert abs(lost / n - p) < 4 * se, (lost / n, p)
