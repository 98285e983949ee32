"""The table-fill what-if (case method `tablefill`, id `fill-SERVICE` as the
importers write it): how many connections a balancer holds, the memory they
take, at which new-connection rate the limit is reached, and what is refused
beyond it.

The system is a loss-and-wait queue: connections arrive as a Poisson stream
of `rate` per second; an accepted one is held for an exponential time of
mean `lifetime_mean_ms + linger_ms` (linger: IPVS keeps a closed
connection's entry in TIME_WAIT); at most `limit` are held at once (HAProxy:
the frontend's maxconn, else global maxconn; IPVS: the memory given over to
its connection entries); beyond it up to `accept_queue` wait (HAProxy: the
kernel's accept queue of the paused listener, taken one by one as held
connections close), and an arrival that finds the queue full is refused
(HAProxy: the kernel drops the SYN/ACK, or resets with
tcp_abort_on_overflow=1; IPVS: the entry's allocation fails, the packet is
dropped). That is M/M/c/(c+K) with c = limit and K = accept_queue; K = 0 is
Erlang's loss system, whose blocking is Erlang B.

The runner simulates it on the C++ timed engine (routertwin._core.lb_timed,
model/lb/helper/lb-timed.h: its frontend limit and accept queue in front of
one server); `blocking` and `mean_waiting` are its closed forms, reported
beside the simulation so a reader sees the two agree. Little's law gives
the mean held, rate x (1 - blocking) x holding time, and the mean wait,
mean_waiting / (rate x (1 - blocking)).
"""

from __future__ import annotations

import math


def _stationary(offered: float, servers: int, queue: int) -> tuple[float, float, float]:
    """M/M/c/(c+K)'s stationary distribution as sums of p_n / p_c, scaled by
    s (1 when rho <= 1, rho^-K beyond, so a long queue stays finite):
    (s x sum_{n<=c} p_n/p_c, s x sum_{j=1..K} rho^j, s x sum_{j=1..K} j rho^j).
    p_n proportional to a^n / n! for n <= c and a^c / c! (a/c)^(n - c)
    beyond; the sum below c is taken from n = c down (p_{n-1} / p_n = n / a),
    no factorials. The first entry is inf when p_c is below 1e-290 of it."""
    below, term = 1.0, 1.0
    for n in range(servers, 0, -1):
        term *= n / offered
        below += term
        if term > 1e290:
            return math.inf, 0.0, 0.0
        if term < 1e-300:
            break
    rho = offered / servers
    k = queue
    if rho == 1:
        return below, float(k), k * (k + 1) / 2.0
    if rho < 1:  # sum rho^j and sum j rho^j, j = 1..K, in closed form
        geo = rho * (1 - rho ** k) / (1 - rho)
        lin = rho * (1 - (k + 1) * rho ** k + k * rho ** (k + 1)) / (1 - rho) ** 2
        return below, geo, lin
    r = 1 / rho  # divided through by rho^K: rho^(j-K) = r^(K-j)
    rk = r ** k
    geo = (1 - rk) / (1 - r)  # sum_{i=0..K-1} r^i
    # sum_{j=1..K} j r^(K-j) = sum_{i=0..K-1} (K - i) r^i
    sum_i = r * (1 - k * r ** (k - 1) + (k - 1) * rk) / (1 - r) ** 2 if k > 0 else 0.0
    return below * rk, geo, k * geo - sum_i


def blocking(offered: float, servers: int, queue: int) -> float:
    """P(an arrival finds c + K in the system) for M/M/c/(c+K), offered load
    a = rate x holding time in Erlangs."""
    if offered <= 0:
        return 0.0
    below, geo, _ = _stationary(offered, servers, queue)
    if math.isinf(below):
        return 0.0  # p_c, hence the blocking, is below 1e-290 of the total
    rho = offered / servers
    top = 1.0 if rho > 1 else rho ** queue  # p_{c+K} / p_c, scaled as the sums are
    return top / (below + geo)


def mean_waiting(offered: float, servers: int, queue: int) -> float:
    """L_q of M/M/c/(c+K): the time-averaged number waiting beyond the c held,
    sum_{j=1..K} j p_{c+j}."""
    if offered <= 0 or queue == 0:
        return 0.0
    below, geo, lin = _stationary(offered, servers, queue)
    if math.isinf(below):
        return 0.0
    return lin / (below + geo)


# events a load point may take: about two (an arrival, a close) per connection offered. A large table
# is simulated over fewer holding times, from its expected occupancy rather than from empty, so that a
# load point stays within a few seconds (docs/validation.md, "lb tablefill": measured)
EVENT_BUDGET = 4_000_000


def spans(offered: float, servers: int, queue: int, measure_holdings: float) -> tuple[float, float, int]:
    """(warm-up, measured) holding times and the start occupancy of a load point within EVENT_BUDGET."""
    per_holding = 2.0 * max(offered, 1.0)
    measured = min(measure_holdings, EVENT_BUDGET / per_holding * 0.8)
    warmup = min(3.0, EVENT_BUDGET / per_holding * 0.2)
    return warmup, measured, int(min(round(offered), servers + queue))


def engine_keys(rate: float, holding_s: float, servers: int, queue: int, seed: int, warmup_holdings: float,
                measure_holdings: float, start: int) -> dict:
    """lb_timed's keys for M/M/c/(c+K): one server without maxconn behind a
    frontend limit c with an accept queue K, `start` connections arriving at
    time 0, the before window [warm-up, end) measured."""
    warmup_s = warmup_holdings * holding_s
    end_s = (warmup_holdings + measure_holdings) * holding_s
    return {"scheduler": "roundrobin", "servers": 1, "action": "none", "rate": rate, "lifetime": "exponential",
            "lifetime_mean_ms": holding_s * 1000.0, "frontend_maxconn": servers, "accept_queue": queue,
            "initial_connections": start, "warmup_s": warmup_s, "at_s": end_s, "settle_s": 0.0, "end_s": end_s,
            "seed": seed}
