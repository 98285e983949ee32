"""The M/D/c queue's waiting-time distribution, the M/D/1/K blocking
probability (exact, any load) and an approximation of M/D/c/K's (any load):
the distributions a closed form with constant service times gives beside
its mean (issue 15; the pipeline's `method: analytic`).

Model: FIFO, Poisson arrivals at rate `lam`, `c` servers each serving a
customer in the constant time `d`; offered load a = lam d, rho = a / c.

Stationary number in system, p_n. Look at the system at the instants
0, d, 2d, ...: every customer in service at one of them has left by the
next, and none that starts in between does, so
N((m+1)d) = max(N(md) - c, 0) + A with A ~ Poisson(a) independent of the
past (Crommelin 1932, "Delay probability formulae when the holding times
are constant", P.O.E.E. Journal 25). The stationary law of that chain is
the time-stationary p_n (the process is regenerative with non-lattice
cycles). For c = 1 it is also the chain of the queue left behind at
departures, and level crossing between n-1 and n gives a recursion of
positive terms only,

    d_n alpha_0 = d_0 Abar_n + sum_{i=1}^{n-1} d_i Abar_{n-i+1},   Abar_k = P(A >= k),

which loses no precision however far it runs (no subtraction, one division
by alpha_0 = e^-a); d_0 = 1 - rho. This replaces the textbook
Erlang/Crommelin alternating series sum_k [lam(kd - t)]^k / k! e^{-lam(kd - t)},
whose terms grow like e^{lam t} and cancel to a result of order 1: in
double precision it has no correct digit left once lam t passes ~37. For
c > 1 the chain is solved as a truncated linear system (LU with partial
pivoting, backward stable), truncated where its geometric tail, rate 1/z0
with z0 > 1 the root of z^c = e^{a(z-1)}, is below 1e-15.

Waiting-time distribution (derived here from the chain; Franx 2001, "A
simple solution for the M/D/c waiting time distribution", Oper. Res.
Letters 29, gives the same construction). A customer arriving at s waits
at most kd + u (k >= 0, 0 <= u < d) iff at most (k+1)c - 1 of the earlier
customers are still in the system at s + u: with constant service and
FIFO the servers take the earlier customers c at a time, one round per d.
Those customers are exactly the ones waiting at s + u - d (everyone in
service then has left by s + u) plus the arrivals in (s + u - d, s), which
are Poisson(lam (d - u)) and independent of the state at s + u - d. By
PASTA that state has law p, so, with q_0 = sum_{n<=c} p_n and
q_j = p_{c+j},

    P(W <= kd + u) = sum_j q_j P(Poisson(lam (d - u)) <= (k+1)c - 1 - j),

again a sum of positive terms. P(W = 0) = sum_{n<c} p_n (1 - rho for
c = 1) and the mean wait is L_q / lam (Little) with L_q = sum (n-c)+ p_n.
The buffer is infinite, so the largest wait is unbounded: there is no
`max` to report.

M/D/1/K (K in system, an arrival finding K is lost): the queue left behind
at departures is the infinite system's recursion above, cut at K - 1 and
renormalised, pi_n = d_n / sum_{i<K} d_i; the blocking probability is
P_K = 1 - 1 / (pi_0 + rho) (Gross & Harris, Fundamentals of Queueing
Theory, M/G/1/K). It holds at any rho; below rho = 1 it is evaluated as
(1 - rho) T / (1 - rho + rho S), S and T the infinite system's mass below
and from K, so that a blocking of 1e-200 is not lost to 1 - 1/(1 + 1e-200).
T needs the weights from K on to all but TAIL of it: K + states_needed of
them. Past MAX_STATES_MD1 weights (any K up to 2^32 - 1 costs that much
at most: 0.13 s of CPU measured) the weights are continued as their geometric tail,
d_{n+1} / d_n = e^L, L = md1_tail_log_ratio(rho): the other roots of the
generating function's denominator are far from the unit circle, so the
ratio is reached to double precision within ~100 weights at every rho
tried (0.01 .. 100), and 20000 are computed before it is used.

M/D/c/K, c > 1 (mdck_blocking): no exact method is used. The chain at
multiples of d above does not carry over: with a finite room, whether an
arrival in (md, (m+1)d) is lost depends on when within the interval the
customers in service at md leave, which the number in system does not
tell (with one server the departure epochs are the embedded chain, hence
M/D/1/K is exact). Tijms (2006, "New and old results for the M/D/c
queue", AEU Int. J. Electron. Commun. 60, 125-130, section 3) likewise
computes M/D/c/c+N exactly for one server only and approximates it for
several. Here: Tijms' approximation p_j(K) ~ gamma w_j (j < K), w the
weights of Crommelin's chain, with the carried load a (1 - P) =
E[min(N, c)] and P = p_K(K) (PASTA): P = (a - m) / (a - m + c), m the mean
of min(N, c) over w_0..w_{K-1} (tijms_loss). Below saturation, w the
infinite chain's law, it is the M/G/1/K relation (1 - rho) T / (1 - rho T),
T = P(N >= K) (exact for M/D/1/K and M/M/c/K); it needs only the weights
under K, so it exists at any load on the chain cut a little above K
(cut_chain_log_weights; below saturation it equals the infinite chain's to
1e-6). It is scaled so that at K = c (no waiting room) it is Erlang's loss
formula B(a, c), exact for any service time distribution of the mean d
(Sevastyanov 1957); the factor applies to the loss above the fluid model's
max(0, 1 - c/a), which is M/D/c/K's limit as K grows. The factor is 1 at
c = 1, so there it is the M/D/1/K result above exactly.

Its error, against long simulations of the queue (4e6 to 4e8 arrivals, the
engine's admission rule; docs/validation.md has the table): biased low,
more so as c grows and rho falls, worst at rooms of 4 to 16 places:
  c 2:      -4.3 .. -2.1 % at rho 0.3..0.6; -2.0 .. +1.4 % at 0.7..0.98
  c 4:      -8.6 .. -3.3 % at rho 0.3..0.6; -4.9 .. +2.2 % at 0.7..0.98
  c 8:      -12 % at rho 0.5..0.6 (room 4); -10.6 .. -3.7 % at 0.7..0.8;
            -3.9 .. +2.4 % at 0.9..0.98
  c 16:     -14 % at rho 0.6; -17 % at 0.7, -14 .. -4 % at 0.8 (room 8:
            -11.4 %, room 16: -14 %); -5.8 .. +1.8 % at 0.9..0.98
  c 32:     -21 % at rho 0.7..0.8 (room 8: -17 %, room 16: -21 %);
            -9.4 .. +0.2 % at 0.9..0.98
  rho 1..1.5, c 2..32, rooms 2..32: -3.1 .. +6.0 % (+6 % at rho 1 and
            room 32; -3 % at room 2 and c 16..32); it tends to the fluid
            loss (room 32, rho 1.2: 0.16667, the simulation 0.16670).
Rooms of 32 at rho 0.9: -4.2 .. -0.8 % (c 2..16, 2e8 arrivals).
Where losses are tiny the simulations do not reach: below saturation
the cut chain resolves them whenever K + finite_chain_margin(a, c) <=
MAX_FINITE_STATES (at a = 1e-9, c 4, K 8 it gives a^8 / 8!, the light-load
limit, where a geometric continuation at rate 1/z0 from P(N >= K) = 1e-10
was 6e4 times too low: the asymptotic rate is not the local one at light
load or with many servers). Only past that room is the infinite chain's
tail continued at rate 1/z0, from where its local rate has reached 1/z0
to 1e-9 (else from P(N >= K) = 1e-10, as before).

Loads too close to 1 for M/D/c's truncated distribution (rho above about
0.9991 with one server: MAX_STATES_MD1; above about 0.9942 with four
servers: MAX_STATES) raise ValueError in number_in_system; the blockings
are still computed there: M/D/1/K's at any load, M/D/c/K's on the cut
chain of K + finite_chain_margin(a, c) states, at most MAX_FINITE_STATES.
A longer room raises ValueError, but only near saturation: above it the
room is first shortened (4c + 64, doubled while its chain stays within
MAX_FINITE_STATES), and once a shorter room loses within 1e-13 of the fluid
loss, any longer one does too; far above saturation (a > 700, where
P(A < c) and e^-a underflow) the fluid loss where it is within
B(a, c) - fluid <= 1e-4 of it (c well below a), otherwise ValueError.
"""

from __future__ import annotations

import math

import numpy as np

# Truncate the number-in-system distribution where its tail is below this.
TAIL = 1e-15
# Largest truncated chain solved (c > 1: a dense matrix of this side, 72 MB).
MAX_STATES = 3000
# M/D/c/K: the infinite system's tail mass P(N >= K) is read off the chain
# down to this; further out it is continued geometrically (rate 1/z0), so
# that a buffer of any size (2^32 - 1 in a profile) costs nothing more and
# the chain's last states, lumped at the truncation, are never used.
TAIL_CONTINUE_BELOW = 1e-10
# Longest M/D/1 recursion (O(n^2): 20000 states take 0.13-0.15 s of CPU,
# measured on the 2-core build host at rho 0.5, 0.999 and 1.5), enough up to rho = 0.9991 (the states needed
# grow like 17 / (1 - rho)).
MAX_STATES_MD1 = 20_000
# Largest cut chain for M/D/c/K near and above saturation (cut_chain_log_weights:
# 3800 states at c = 32 take 0.2 s of CPU, measured).
MAX_FINITE_STATES = 10_000


def poisson_pmf(z: float, n: int) -> np.ndarray:
    """P(Poisson(z) = k), k = 0..n-1, from logarithms (no overflow of z^k / k!)."""
    k = np.arange(n, dtype=float)
    if z <= 0.0:
        out = np.zeros(n)
        out[0] = 1.0
        return out
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    return np.exp(k * math.log(z) - z - log_fact)


def tail_root(a: float, c: int) -> float:
    """z0 > 1 with z0^c = e^{a (z0 - 1)} (rho = a / c < 1): the number in
    system has a tail decaying like z0^-n."""
    f = lambda z: c * math.log(z) - a * (z - 1.0)  # noqa: E731 -- concave, 0 at 1, rising there
    lo, hi = 1.0, 2.0
    while f(hi) > 0.0:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return hi


def states_needed(a: float, c: int) -> int:
    """Number-in-system states that hold all but TAIL of the mass."""
    z0 = tail_root(a, c)
    return int(2 * c + math.ceil(-math.log(TAIL) / math.log(z0)) + 16)


def md1_departure_weights(a: float, n: int) -> np.ndarray:
    """d_0..d_{n-1} of the M/D/1 queue left behind at departures, up to a
    common factor (d_0 = 1 before rescaling), by the positive level-crossing
    recursion; any a > 0 (rho = a may exceed 1: M/D/1/K). Rescaled whenever
    the terms grow past 1e250, so that rho >> 1 does not overflow."""
    pmf = poisson_pmf(a, n + 1 + int(a + 40.0 * math.sqrt(a) + 50))  # past it: below 1e-300
    # P(A >= k) summed from the far end: small tails keep their digits.
    tail = np.cumsum(pmf[::-1])[::-1][: n + 1]
    tail[0] = 1.0
    d = np.zeros(n)
    d[0] = 1.0
    for j in range(1, n):
        # sum_{i=1}^{j-1} d_i Abar_{j-i+1}: Abar indices j..2 for i = 1..j-1.
        # A product and a sum, not np.dot: OpenBLAS threads its dot past a few
        # thousand terms, and on the shared 2-core host 20000 weights then took
        # 12 s of CPU (this: 0.2 s).
        s = d[0] * tail[j] + ((d[1:j] * tail[j:1:-1]).sum() if j > 1 else 0.0)
        d[j] = s / pmf[0]
        if d[j] > 1e250:
            d[: j + 1] *= 1e-250
    return d


def number_in_system(a: float, c: int) -> np.ndarray:
    """Time-stationary P(N = n) of M/D/c, n = 0..len-1, all but TAIL of the mass."""
    if not a < c:
        raise ValueError(f"M/D/c is unstable at offered load {a:g} >= {c} servers")
    n = states_needed(a, c)
    if n > (MAX_STATES_MD1 if c == 1 else MAX_STATES):
        raise ValueError(f"utilization {a / c:.6g} is too close to 1: the M/D/{c} distribution needs "
                         f"{n} states (at most {MAX_STATES_MD1 if c == 1 else MAX_STATES})")
    if c == 1:
        d = md1_departure_weights(a, n)
        return d / d.sum()
    return lattice_chain(a, c, n)


def lattice_chain(a: float, c: int, n: int) -> np.ndarray:
    """Stationary law of N' = max(N - c, 0) + Poisson(a) on 0..n-1 (the
    transitions past n-1 lumped into it), solved as a linear system."""
    pmf = poisson_pmf(a, n)
    cdf_tail = 1.0 - np.cumsum(pmf)  # P(A > k), only for the lumped last state
    p = np.zeros((n, n))
    for i in range(n):
        base = max(i - c, 0)
        width = n - base
        p[i, base:] = pmf[:width]
        p[i, n - 1] += max(cdf_tail[width - 1], 0.0)
    m = p.T - np.eye(n)
    m[-1, :] = 1.0  # replace one balance equation by sum p = 1
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    pi = np.linalg.solve(m, rhs)
    return np.clip(pi, 0.0, None)


class MDcWait:
    """Waiting time (before service) of M/D/c: lam arrivals/s, c servers,
    constant service d seconds, rho = lam d / c < 1."""

    def __init__(self, lam: float, d: float, c: int = 1, p: np.ndarray | None = None):
        """`p`: number_in_system(lam d, c) if the caller has it already."""
        self.lam, self.d, self.c = lam, d, c
        self.rho = lam * d / c
        self.p = number_in_system(lam * d, c) if p is None else p
        q = self.p[c:].copy()
        q[0] += self.p[:c].sum()  # max(N - c, 0) = 0 for every N <= c
        self.q = q

    def p_wait_zero(self) -> float:
        return float(self.p[: self.c].sum())

    def mean(self) -> float:
        """E[W] = L_q / lam (Little's law)."""
        n = np.arange(self.p.size)
        return float(np.dot(np.maximum(n - self.c, 0), self.p)) / self.lam

    def cdf(self, t: float) -> float:
        """P(W <= t) (t in seconds)."""
        if t < 0:
            return 0.0
        k = math.floor(t / self.d)
        u = t - k * self.d
        top = (k + 1) * self.c - 1  # the most earlier customers still present
        j_max = min(top, self.q.size - 1)
        if j_max < 0:
            return 0.0
        pois = np.cumsum(poisson_pmf(self.lam * (self.d - u), top + 1))
        # P(Poisson <= top - j) for j = 0..j_max
        return float(min(1.0, np.dot(self.q[: j_max + 1], pois[top - np.arange(j_max + 1)])))

    def quantile(self, prob: float) -> float:
        """The smallest t with P(W <= t) >= prob (seconds), prob in (0, 1)."""
        if self.cdf(0.0) >= prob:
            return 0.0
        k = 0
        while self.cdf((k + 1) * self.d) < prob:
            k += 1
        lo, hi = k * self.d, (k + 1) * self.d
        for _ in range(60):  # the CDF is continuous and increasing on (0, inf)
            mid = 0.5 * (lo + hi)
            if self.cdf(mid) >= prob:
                hi = mid
            else:
                lo = mid
        return hi


def md1_tail_log_ratio(a: float) -> float:
    """L = log(d_{n+1} / d_n) far out in M/D/1's departure weights: -log z,
    z != 1 the other real root of z = e^{a (z - 1)} (z0 > 1 below rho = 1:
    L < 0; z < 1 above it: L > 0; 0 at rho = 1, where the weights tend to a
    constant). Solved as expm1(y) / y = 1 / a for y = log z, increasing in
    y, so that no digit is lost near a = 1 or to z underflowing at large a."""
    if a == 1.0:
        return 0.0
    ratio = lambda y: math.expm1(y) / y if y != 0.0 else 1.0  # noqa: E731
    target = 1.0 / a
    if a < 1.0:
        lo, hi = 0.0, 1.0
        while ratio(hi) < target:
            lo, hi = hi, 2.0 * hi
    else:
        lo, hi = -1.0, 0.0
        while ratio(lo) > target:
            lo, hi = 2.0 * lo, lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ratio(mid) < target:
            lo = mid
        else:
            hi = mid
    return -0.5 * (lo + hi)


def log_geometric_sum(count: float, log_ratio: float) -> float:
    """log sum_{j=0}^{count-1} e^{j L}, count possibly math.inf (L < 0 then)."""
    if log_ratio == 0.0:
        return math.log(count)
    if log_ratio < 0.0:
        head = 0.0 if math.isinf(count) else math.log(-math.expm1(count * log_ratio))
        return head - math.log(-math.expm1(log_ratio))
    return count * log_ratio + math.log(-math.expm1(-count * log_ratio)) - math.log(math.expm1(log_ratio))


def md1k_blocking(a: float, k: int) -> float:
    """P(an arrival is lost) in M/D/1/K: Poisson arrivals of offered load
    a = lam d, room for k customers in the system (waiting and in service)."""
    if k < 1:
        raise ValueError("M/D/1/K needs room for at least one customer")
    if a > 700.0:
        # e^-a would underflow in the recursion past 745. K = 1 is M/G/1/1
        # (lost iff the server is busy); past it pi_0 <= d_0 / d_1 =
        # e^-a / (1 - e^-a) < 1e-304, below the rounding of 1 - 1/a.
        return a / (1.0 + a) if k == 1 else 1.0 - 1.0 / a
    # Weights d_0..d_{m-1} exactly; d_i = d_{m-1} e^{(i - m + 1) L} past them.
    need = k + states_needed(a, 1) if a < 1.0 else k
    m = min(need, MAX_STATES_MD1)
    d = md1_departure_weights(a, m)
    log_ratio = md1_tail_log_ratio(a)
    log_last = math.log(d[-1]) if d[-1] > 0.0 else -math.inf

    def log_mass(lo: int, hi: float) -> float:
        """log sum_{lo <= i < hi} d_i (hi may be math.inf)."""
        exact = float(d[lo:min(hi, m)].sum()) if lo < m else 0.0
        out = math.log(exact) if exact > 0.0 else -math.inf
        start = max(lo, m)
        if hi > start and log_last > -math.inf:
            out = np.logaddexp(out, log_last + (start - m + 1) * log_ratio
                               + log_geometric_sum(hi - start, log_ratio))
        return float(out)

    below = log_mass(0, k)
    if a < 1.0:
        beyond = log_mass(k, math.inf)
        total = float(np.logaddexp(below, beyond))
        return float((1.0 - a) * math.exp(beyond - total) / (1.0 - a + a * math.exp(below - total)))
    pi0 = math.exp(math.log(d[0]) - below) if d[0] > 0.0 else 0.0  # 0: rescaled past 1e-308
    return float((pi0 + a - 1.0) / (pi0 + a))


def erlang_b(a: float, c: int) -> float:
    """Erlang's loss formula B(a, c): M/G/c/c, offered load a, c servers, no
    waiting room; by the recursion B_k = a B_{k-1} / (k + a B_{k-1}), B_0 = 1
    (positive terms only, no factorials to overflow)."""
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def mdck_blocking(a: float, c: int, k: int, p: np.ndarray | None = None) -> float:
    """P(an arrival is lost) in M/D/c/K: Poisson arrivals of offered load
    a = lam d > 0, c >= 1 servers of constant service d, room for k >= c
    customers in the system; any load. One server: md1k_blocking (exact).
    Several: the approximation of the module docstring (exact at k = c:
    Erlang's B). From Crommelin's chain cut at k + finite_chain_margin(a, c)
    states wherever that is at most MAX_FINITE_STATES; below saturation with
    a longer room from the infinite chain (`p` is number_in_system(a, c) if
    the caller has it) and its tail continued geometrically. Raises
    ValueError where neither fits (a load too close to c for the infinite
    chain with a longer room) and far above saturation where the fluid loss
    is not within 1e-4 (a > 700, c near a)."""
    if not (math.isfinite(a) and a > 0.0):
        raise ValueError(f"M/D/c/K needs a positive offered load (got {a!r})")
    if c < 1:
        raise ValueError(f"M/D/c/K needs at least one server (c = {c})")
    if k < c:
        raise ValueError(f"M/D/c/K needs room for the {c} customers in service (K = {k})")
    if c == 1:
        return md1k_blocking(a, k)
    if k == c:
        return erlang_b(a, c)
    fluid = max(0.0, 1.0 - c / a)
    margin = finite_chain_margin(a, c)
    if a < c and k + margin <= MAX_FINITE_STATES:
        # The cut chain resolves the weights under K at any size (no
        # geometric continuation of a tail that, at light load or with
        # many servers, has not yet reached its asymptotic rate 1/z0).
        return cut_chain_blocking(a, c, k, fluid)
    if p is None and a < c:
        try:
            p = number_in_system(a, c)
        except ValueError:  # too close to c for the infinite chain: the cut chain below
            p = None
    if p is not None:
        return mdck_blocking_from_chain(a, c, k, p)
    if a > 700.0 or float(poisson_pmf(a, c).sum()) < 1e-300:
        # So far above saturation that the chain's small steps, P(A < c) and
        # e^-a (0 past a = 745: the state reduction divided 0 by 0, NaN),
        # underflow: the loss, between Erlang's B at K = c and the fluid loss
        # as K grows, is the fluid loss to within B - fluid (4.7e-6 at
        # a = 650, c = 2, where the chain still gives fluid + 8e-12 at K = 3;
        # 5.2e-5 at a = 800, c = 32). With c near a that bound is loose
        # (0.023 at a 800, c 790) and no chain is solved: ValueError.
        bound = erlang_b(a, c) - fluid
        if bound > 1e-4:
            raise ValueError(f"M/D/{c}/{k} at offered load {a:g}: the cut chain underflows past a = 700, and "
                             f"the fluid loss {fluid:.6g} is only within {bound:.3g} of the loss")
        return fluid
    short = 4 * c + 64
    while a > c and short < k and short + margin <= MAX_FINITE_STATES:
        # Above saturation the loss falls with the room to the fluid loss:
        # if a shorter room (doubled from 4c + 64, its chain no longer than
        # MAX_FINITE_STATES) is within 1e-13 of it, so is K (c 48, rho 1.05,
        # K 3632: 0.3 s instead of 1.0; any K, 2^32 - 1 too). Closer to
        # rho = 1 no room that fits gets there: K itself must fit, or
        # ValueError below.
        at_short = cut_chain_blocking(a, c, short, fluid)
        if at_short - fluid <= 1e-13 * fluid:
            return at_short
        short *= 2
    states = k + margin
    if states > MAX_FINITE_STATES:
        raise ValueError(f"M/D/{c}/{k} at utilization {a / c:.9g}: the cut chain needs {states} states "
                         f"(at most {MAX_FINITE_STATES})")
    return cut_chain_blocking(a, c, k, fluid)


def cut_chain_blocking(a: float, c: int, k: int, fluid: float) -> float:
    """mdck_blocking on the chain cut k + finite_chain_margin(a, c) states up;
    `fluid` = max(0, 1 - c/a)."""
    log_w = cut_chain_log_weights(a, c, k + finite_chain_margin(a, c))
    # Scaled so that it is Erlang's B at K = c, as below saturation, but only
    # the loss beyond the fluid model's 1 - c/a: far above saturation, or with
    # much room, the chain's relation tends to the fluid loss, which is the
    # M/D/c/K limit as K grows, and a factor on all of it would not (measured
    # against the simulated queue: +2.6 .. +7.5 % at rho 1.1..1.5 with the
    # factor on the whole loss, -3.1 .. +0.2 % on the excess; docs/validation.md).
    return float(fluid + (tijms_loss(a, c, k, log_w) - fluid) * (erlang_b(a, c) - fluid)
                 / (tijms_loss(a, c, c, log_w) - fluid))


def finite_chain_margin(a: float, c: int) -> int:
    """States kept above K in the cut chain (cut_chain_log_weights): past the
    largest Poisson jump (a + 40 sqrt(a) + 50) and 4c more. Measured: the
    blocking moves by less than 1e-6 relative from a margin of 2c + 10 to
    one of 300 (c 2..32, K - c 2..32, rho 0.8..1.5), and it equals the
    infinite chain's below rho = 1 to 7 digits."""
    return poisson_width(a) + 4 * c


def poisson_width(a: float) -> int:
    """Poisson(a) is below 1e-300 from here on (md1_departure_weights' bound)."""
    return int(a + 40.0 * math.sqrt(a) + 50)


def cut_chain_log_weights(a: float, c: int, n: int) -> np.ndarray:
    """Logarithms of the stationary weights (up to a factor) of Crommelin's chain
    N' = min(max(N - c, 0) + A, n - 1), any a > 0, by Grassmann, Taksar and
    Heyman's state reduction (1985, "Regenerative analysis and steady state
    distributions for Markov chains", Oper. Res. 33): no subtraction, so
    weights far below the largest keep their digits (above rho = 1 the
    weights under K are 1e-100 of those at the cut, and an LU solve loses
    them to rounding). The chain is banded: it falls by c at most and rises
    by less than poisson_width(a), and the reduction fills in only within
    that band, so the cost is n (width + 2c) c, not n^3. Logarithms: far
    above saturation the weights span more than the doubles' range."""
    width = poisson_width(a)
    pmf = poisson_pmf(a, width)
    below, above = c, width + c  # band: column j - row i in [-below, above]
    band = np.zeros((n, below + above + 1))
    for i in range(n):
        base = max(i - c, 0)
        m = min(width, n - base)
        band[i, base - i + below: base - i + below + m] = pmf[:m]
        if m < width:  # the jumps past the cut are lumped into its last state
            band[i, n - 1 - i + below] += max(1.0 - pmf[:m].sum(), 0.0)
    out_down = np.zeros(n)
    for k in range(n - 1, 0, -1):  # censor the chain on 0..k-1
        j = np.arange(max(0, k - c), k)
        row = band[k, j - k + below]
        out_down[k] = row.sum()
        i = np.arange(max(0, k - above), k)
        col = band[i, k - i + below]
        band[i[:, None], j[None, :] - i[:, None] + below] += np.outer(col, row / out_down[k])
    # Back-substitution in logarithms: far above saturation one step up
    # multiplies the weight by up to 1 / P(A < c), past 1e250.
    log_w = np.full(n, -np.inf)
    log_w[0] = 0.0
    with np.errstate(divide="ignore"):
        log_band = np.log(band)
        log_down = np.log(out_down)
    for k in range(1, n):
        i = np.arange(max(0, k - above), k)
        log_w[k] = np.logaddexp.reduce(log_w[i] + log_band[i, k - i + below]) - log_down[k]
    return log_w


def tijms_loss(a: float, c: int, k: int, log_w: np.ndarray) -> float:
    """Tijms' M/G/c/K relation written for any load, on the cut chain's
    weights w (cut_chain_log_weights, n states): with p_j(K) = gamma w_j
    (j < K), the carried load a (1 - P) = E[min(N, c)] and P = p_K(K) (PASTA),
    P = (a - m) / (a - m + c), m the mean of min(N, c) over w_0..w_{K-1}.
    Below rho = 1, on the infinite chain's law, it is (1 - rho) T / (1 - rho T)
    with T = P(N >= K). a - m is formed without subtracting nearly equal
    numbers (m is within 1e-16 of a when little is lost): on the cut chain
    E[min(N, c)] = a - L, L = E[(max(N - c, 0) + A - (n - 1))^+] the arrivals
    the cut turns away, so with T = P(N >= K) and S = 1 - T (normalised w),
    a - m = (L + (c - a) T) / S, positive terms below saturation."""
    if a >= c:  # the weights pile up at the cut: a - m is not small, take m directly
        head = np.exp(log_w[:k] - log_w[:k].max())
        a_minus_m = a - float(np.dot(np.minimum(np.arange(k), c), head)) / float(head.sum())
        # m <= c makes it at least the fluid loss 1 - c/a; said explicitly so
        # that rounding in m cannot put it below that floor.
        return max(1.0 - c / a, a_minus_m / (a_minus_m + c))
    n = log_w.size
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    t_k = float(np.cumsum(w[::-1])[::-1][k]) if k < n else 0.0  # from the far end: keeps its digits
    # L: E[(A - r)^+] = sum_{j > r} P(A >= j), r = n - 1 - max(i - c, 0) the room above row i
    width = poisson_width(a)
    pmf = poisson_pmf(a, width)
    a_bar = np.cumsum(pmf[::-1])[::-1]  # P(A >= j), j = 0..width-1
    excess_mean = np.concatenate((np.cumsum(a_bar[::-1])[::-1][1:], [0.0]))  # E[(A - r)^+], r = 0..width-1
    rows = np.arange(max(0, n - 1 - width + c), n)
    room = n - 1 - np.maximum(rows - c, 0)
    near = room < width
    lost = float(np.dot(w[rows[near]], excess_mean[room[near]]))
    a_minus_m = (lost + (c - a) * t_k) / float(w[:k].sum())
    return a_minus_m / (a_minus_m + c)


def mdck_blocking_from_chain(a: float, c: int, k: int, p: np.ndarray) -> float:
    """The approximation of the module docstring from p = number_in_system(a, c),
    any c >= 1 (at c = 1 it is M/D/1/K's exact blocking below rho = 1)."""
    rho = a / c
    # P(N >= n) summed from the far end: the small tail keeps its digits.
    tail = np.cumsum(p[::-1])[::-1]
    resolved = int(np.searchsorted(-tail, -TAIL_CONTINUE_BELOW, side="right"))  # tail[n] >= it for n < resolved
    # Continue from the first resolved n where the local rate tail[n+1] /
    # tail[n] is 1/z0 to 1e-9 (it is not yet at light load or with many
    # servers), else from the last resolved one.
    z0 = tail_root(a, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        converged = np.nonzero(np.abs(tail[c + 1:resolved] / tail[c:resolved - 1] * z0 - 1.0) < 1e-9)[0]
    ref = c + int(converged[0]) if converged.size else max(resolved - 1, c)

    def tail_from(n: int) -> float:
        if n <= ref:
            return float(tail[n])
        return math.exp(math.log(tail[ref]) - (n - ref) * math.log(z0))

    def tijms(n: int) -> float:
        t = tail_from(n)
        return (1.0 - rho) * t / (1.0 - rho * t)

    at_c = tijms(c)  # 0 only where P(N >= c) underflows: nothing is lost then
    return erlang_b(a, c) * tijms(k) / at_c if at_c > 0.0 else 0.0
