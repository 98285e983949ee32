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

`simulate` runs that system event by event (a birth-death chain, seeded);
`blocking` is its closed form; the case reports both, so a reader sees the
simulation agree with the formula. Little's law gives the mean held:
rate x (1 - blocking) x holding time.
"""

from __future__ import annotations

import math

import numpy as np


def blocking(offered: float, servers: int, queue: int) -> float:
    """P(an arrival finds c + K in the system) for M/M/c/(c+K), offered load
    a = rate x holding time in Erlangs: p_n proportional to a^n / n! for
    n <= c and a^c / c! (a / c)^(n - c) beyond; computed as ratios to p_c
    (summed from the top down, no factorials) so large c stay finite."""
    if offered <= 0:
        return 0.0
    # below c: p_{n-1} / p_n = n / a, from n = c down (p_c = 1)
    below, term = 1.0, 1.0
    for n in range(servers, 0, -1):
        term *= n / offered
        below += term
        if term > 1e290:
            return 0.0  # p_c, hence the blocking, is below 1e-290 of the total
        if term < 1e-300:
            break
    rho = offered / servers
    if rho <= 1:  # p_{c+K} / p_c = rho^K over 1 + ... + rho^K beyond c
        tail = queue if rho == 1 else rho * (1 - rho ** queue) / (1 - rho)
        return rho ** queue / (below + tail)
    r = 1 / rho  # divided through by rho^K: no overflow for a long queue
    return 1 / (below * r ** queue + (1 - r ** queue) / (1 - r))


# events a load point may take (about 1.5 s of Python): a large table is simulated over fewer holding
# times, from its expected occupancy rather than from empty
EVENT_BUDGET = 1_000_000


def spans(offered: float, servers: int, queue: int, measure_holdings: float) -> tuple[float, float, int]:
    """(warm-up, measured) holding times and the start occupancy of a load point within EVENT_BUDGET
    (about two events, an arrival and a departure, per connection offered)."""
    per_holding = 2.0 * max(offered, 1.0)
    measured = min(measure_holdings, EVENT_BUDGET / per_holding * 0.8)
    warmup = min(3.0, EVENT_BUDGET / per_holding * 0.2)
    return warmup, measured, int(min(round(offered), servers + queue))


def simulate(rate: float, holding_s: float, servers: int, queue: int, seed: int,
             warmup_holdings: float = 3.0, measure_holdings: float = 12.0, start: int = 0) -> dict:
    """The M/M/c/(c+K) system from `start` in the system, event by event:
    after a warm-up of `warmup_holdings` holding times, `measure_holdings`
    of them measured. Returns arrivals, refused, queued (accepted after a
    wait), the time-average held and waiting, and the most held."""
    rng = np.random.default_rng(seed)
    cap = servers + queue
    t, n = 0.0, min(start, cap)
    begin, end = warmup_holdings * holding_s, (warmup_holdings + measure_holdings) * holding_s
    arrivals = refused = queued = 0
    area_held = area_wait = 0.0
    most = 0
    chunk = 65536
    expo, unif = rng.standard_exponential(chunk), rng.random(chunk)
    k = 0
    while True:
        if k == chunk:
            expo, unif, k = rng.standard_exponential(chunk), rng.random(chunk), 0
        busy = min(n, servers)
        total = rate + busy / holding_s
        dt = expo[k] / total
        if t + dt > end:
            if t < end:
                lo = max(t, begin)
                area_held += busy * (end - lo)
                area_wait += (n - busy) * (end - lo)
            break
        if t + dt > begin:
            lo = max(t, begin)
            area_held += busy * (t + dt - lo)
            area_wait += (n - busy) * (t + dt - lo)
        t += dt
        counting = t >= begin
        if unif[k] * total < rate:  # an arrival
            if counting:
                arrivals += 1
            if n >= cap:
                refused += counting
            else:
                if n >= servers and counting:
                    queued += 1
                n += 1
                if counting:
                    most = max(most, min(n, servers))
        else:
            n -= 1
        k += 1
    span = end - begin
    return {"arrivals": int(arrivals), "refused": int(refused), "queued": int(queued),
            "held_mean": float(area_held / span), "waiting_mean": float(area_wait / span), "held_max": int(most),
            "seconds": float(span)}
