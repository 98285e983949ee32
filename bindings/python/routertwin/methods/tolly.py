"""The Tolly method (Tolly Common RFP #1077, as used in seed 000): load steps,
the CPU of every application core at each step, the least-squares line
CPU = a + b x rate, and its extrapolation to 100 % CPU -- plus what Tolly
could not do: a run to true saturation, showing whether the line holds and
which resource saturates first.

The line is ordinary least squares with numpy (`numpy.linalg.lstsq`), its
parameter covariance s^2 (X'X)^-1 with s^2 = RSS / (n - 2), and the rate at
100 % CPU, x100 = (100 - a) / b, with a 95 % interval by the delta method
(gradient (-1/b, -(100 - a)/b^2)) and Student's t on n - 2 degrees of
freedom. The method runs as a `tolly` case of any lb scenario, from a file
or from the command line:

    routertwin run scenarios/adx/adx-dns.yaml \
        --set 'cases=[{id: t, method: tolly, steps: [1.0e6, 2.0e6, 3.0e6]}]'

A twin without background load puts every point on a line through
the origin: then a = 0 and RSS = 0 (the interval collapses to the point,
which is the honest answer: the spread of Tolly's points is not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# Student's t, two-sided 95 % (0.975 quantile), by degrees of freedom
# (Abramowitz and Stegun, table 26.10); 1.96 (the normal) beyond 30.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}


def t975(dof: int) -> float:
    if dof < 1:
        raise ValueError("no degrees of freedom left for an interval")
    if dof > 30:
        return 1.96
    return _T975[max(k for k in _T975 if k <= dof)]  # conservative: the next smaller tabulated dof


@dataclass(frozen=True)
class Line:
    """CPU % = intercept + slope x rate, with covariance and the 100 % rate."""

    intercept: float        # % CPU at zero load
    slope: float            # % CPU per unit/s
    cov: np.ndarray         # 2x2 covariance of (intercept, slope)
    r2: float
    rate_at_100: float
    rate_at_100_lo: float   # 95 % interval
    rate_at_100_hi: float
    n: int


def fit_line(rates: list[float], cpus: list[float]) -> Line:
    """The least-squares line through (rate, CPU %) points (at least 3)."""
    x = np.asarray(rates, dtype=float)
    y = np.asarray(cpus, dtype=float)
    if x.size < 3 or x.size != y.size:
        raise ValueError("the Tolly regression needs at least three (rate, CPU) points")
    X = np.column_stack([np.ones_like(x), x])
    coef, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    if rank < 2:
        raise ValueError("the load steps must have at least two different rates")
    a, b = float(coef[0]), float(coef[1])
    resid = y - X @ coef
    dof = x.size - 2
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(X.T @ X)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else 1.0
    if b <= 0:
        raise ValueError("CPU does not grow with rate: no extrapolation to 100 %")
    x100 = (100.0 - a) / b
    g = np.array([-1.0 / b, -(100.0 - a) / b**2])
    half = t975(dof) * math.sqrt(max(float(g @ cov @ g), 0.0))
    return Line(a, b, cov, r2, x100, x100 - half, x100 + half, int(x.size))


@dataclass
class Saturation:
    rate: float               # highest completed rate seen
    offered: float            # the offered rate it was seen at
    cpu_mean: float           # mean CPU % there
    cpu_max: float            # busiest core's CPU % there
    busiest_core: int
    resource: str             # what saturated first
    points: list[tuple[float, float, float]] = field(default_factory=list)  # (offered, completed, cpu mean)


def run_to_saturation(step: Callable[[float], dict], start: float, *, factor: float = 1.15,
                      max_steps: int = 20) -> Saturation:
    """Offer start, start x factor, ... until the completed rate stops
    growing (it falls behind the offered rate by more than 1 % and the next
    step completes no more); `step(rate)` returns the run_lb dict. The
    resource that saturated first is the busiest core when it is at >= 99 %
    while the mean is below, else "cores"."""
    best = None
    points = []
    rate = start
    for _ in range(max_steps):
        out = step(rate)
        done = out["completed_rate"]
        points.append((rate, done, out["cpu_mean_pct"]))
        if best is None or done > best[1]:
            best = (rate, done, out)
        elif done <= best[1] and best[1] < 0.99 * best[0]:
            break
        rate *= factor
    rate, done, out = best
    util = out["core_utilization_pct"]
    busiest = int(np.argmax(util))
    if util[busiest] >= 99.0 and out["cpu_mean_pct"] < 99.0:
        resource = f"core {busiest} (RSS: its connections' share; mean CPU {out['cpu_mean_pct']:.1f} %)"
    elif out["cpu_mean_pct"] >= 99.0:
        resource = "cores (all)"
    else:
        resource = out.get("bottleneck") or "none reached"
    return Saturation(done, rate, out["cpu_mean_pct"], util[busiest], busiest, resource, points)
