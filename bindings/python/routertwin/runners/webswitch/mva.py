"""Exact mean value analysis of a closed, single-class, product-form queueing
network (Reiser and Lavenberg, "Mean-Value Analysis of Closed Multichain
Queuing Networks", JACM 27(2), 1980): N customers, each station a FIFO
queue (exponential service, or any service at a processor-sharing server)
or a delay (infinite server), given its demand D_k = visits x service time
per cycle. For n = 1..N:

    R_k(n) = D_k (1 + Q_k(n-1))   queue          R_k(n) = D_k   delay
    X(n)   = n / (Z + sum_k R_k(n))
    Q_k(n) = X(n) R_k(n)

Z is the think time (WebBench's is 0). The cycle's response time is
sum_k R_k(N), the throughput X(N); a station's utilization is X D_k.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Station:
    name: str
    demand_s: float  # seconds of service per cycle (visits x time per visit)
    delay: bool = False  # an infinite server: no queueing


@dataclass(frozen=True)
class Solution:
    customers: int
    throughput: float  # cycles per second
    response_s: float  # mean time of a cycle outside think time
    residence_s: dict[str, float]  # per station
    utilization: dict[str, float]  # per queue station (X D_k)
    queue_len: dict[str, float]

    @property
    def bottleneck(self) -> str:
        return max(self.utilization, key=lambda k: (self.utilization[k], k)) if self.utilization else ""


def solve(stations: list[Station], customers: int, think_s: float = 0.0) -> Solution:
    if customers < 1:
        raise ValueError(f"customers must be at least 1, not {customers}")
    if any(s.demand_s < 0 for s in stations):
        raise ValueError("a station's demand is negative")
    names = [s.name for s in stations]
    if len(set(names)) != len(names):
        raise ValueError("station names must be unique")
    q = {s.name: 0.0 for s in stations}
    x = 0.0
    r: dict[str, float] = {}
    for n in range(1, customers + 1):
        r = {s.name: s.demand_s if s.delay else s.demand_s * (1.0 + q[s.name]) for s in stations}
        total = think_s + sum(r.values())
        if total <= 0.0:
            raise ValueError("every demand and the think time are zero: the cycle takes no time")
        x = n / total
        q = {k: x * v for k, v in r.items()}
    return Solution(customers=customers, throughput=x, response_s=sum(r.values()), residence_s=r,
                    utilization={s.name: x * s.demand_s for s in stations if not s.delay},
                    queue_len=q)
