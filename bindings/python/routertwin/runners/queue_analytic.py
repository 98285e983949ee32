"""kind: queue_analytic -- the textbook queues, in closed form (and optionally
simulated, to see the formula emerge from random arrivals).

Models (FIFO, infinite buffer, Poisson arrivals at rate lambda, c servers each
serving at rate mu; a = lambda/mu offered load in Erlangs, rho = a/c):

- `mm1`: exponential service, one server. Wq = rho / (mu - lambda).
- `md1`: deterministic service, one server (Pollaczek-Khinchine with zero
  service variance). Wq = rho / (2 mu (1 - rho)).
- `mmc`: exponential service, c servers. P(wait) is Erlang C, computed from the
  Erlang B recursion B(k) = a B(k-1) / (k + a B(k-1)) (stable for large c);
  C = B / (1 - rho (1 - B)); Wq = C / (c mu - lambda).

For every model W = Wq + 1/mu, Lq = lambda Wq, L = lambda W (Little's law).
At rho >= 1 the queue is unstable: throughput is c mu, waits are infinite
(written as the string "inf" in JSON) and the bottleneck is "servers".

Example:

    scenario: mmc-teaching
    kind: queue_analytic
    seed: 1
    model: mmc
    service_rate: 1000        # per server, customers/s
    servers: [1, 2, 4]
    utilization: [0.5, 0.9]   # per-server load; or arrival_rate: [...]
    simulate: {customers: 200000, warmup: 20000}
"""

from __future__ import annotations

import heapq
import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from routertwin.results import CaseResult
from routertwin.runners._shared.schema import exactly_one
from routertwin.scenario_loader import FieldError, ScenarioModel


# Every metric a case may report (validation mappings are checked against it).
METRICS = ("utilization", "throughput", "p_wait", "wait_s", "sojourn_s", "queue_len", "in_system",
           "sim_wait_s", "sim_sojourn_s", "sim_p_wait")
# Units (Results.to_dataframe's df.attrs["units"]); the _s metrics are seconds by their suffix.
UNITS = {"utilization": "fraction", "throughput": "customers/s", "service_rate": "customers/s",
         "arrival_rate": "customers/s", "p_wait": "probability", "sim_p_wait": "probability",
         "queue_len": "customers", "in_system": "customers", "servers": "servers"}


class Simulate(ScenarioModel):
    """Also simulate each case: a seeded FIFO queue of `customers` arrivals,
    the first `warmup` of which are not measured."""

    # At most 10^7: the simulation holds three arrays of 8-byte floats per
    # customer (240 MB) and visits each customer once in Python (~10 s).
    customers: int = Field(default=200_000, ge=1, le=10_000_000)
    warmup: int = Field(default=20_000, ge=0)

    @model_validator(mode="after")
    def _warmup_leaves_customers(self):
        if self.warmup >= self.customers:
            raise FieldError(("warmup",), f"warmup {self.warmup} must be smaller than customers {self.customers}")
        return self


class Schema(ScenarioModel):
    model: Literal["mm1", "md1", "mmc"]
    # Per server, customers per second. 1e-6/s (one customer in 11 days) to
    # 1e12/s (a terahertz server, beyond any packet engine) keeps 1/mu, the
    # waits and every product of rates finite and normal in double precision
    # (1e-320 is subnormal: 1/mu overflows and the formula reports nothing).
    service_rate: float = Field(ge=1e-6, le=1e12)
    # At most 10^5 servers: Erlang B is a recursion over the servers (O(c) per
    # case) and the simulation keeps a heap of c free times; 10^5 take
    # milliseconds, 10^9 would never finish.
    servers: list[Annotated[int, Field(gt=0, le=100_000)]] = [1]
    # rho = lambda / (c mu), per case. Any rho >= 1 is an unstable queue
    # (infinite waits); 1000 is far beyond and keeps lambda finite. From 1e-9:
    # a lower load rounds lambda towards 0 and the simulated inter-arrival
    # time 1/lambda towards infinity.
    utilization: list[Annotated[float, Field(ge=1e-9, le=1000)]] | None = None
    # lambda, customers per second: 1e-12 (1/lambda stays finite) to 1e3 x
    # the largest c mu (1e17/s).
    arrival_rate: list[Annotated[float, Field(ge=1e-12, le=1e20)]] | None = None
    simulate: Simulate | None = None

    @model_validator(mode="after")
    def _one_load_axis(self):
        exactly_one(self, "utilization", "arrival_rate", blame_missing="utilization", blame_both="arrival_rate")
        if self.model in ("mm1", "md1") and self.servers != [1]:
            raise FieldError(("servers",), f"model '{self.model}' has one server; use model 'mmc' for "
                             f"{self.servers}")
        return self


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = lambda/mu."""
    if a >= c:
        return 1.0
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def closed_form(model: str, lam: float, mu: float, c: int) -> dict[str, float]:
    rho = lam / (c * mu)
    if rho >= 1.0:
        inf = math.inf
        return {"utilization": rho, "throughput": c * mu, "p_wait": 1.0,
                "wait_s": inf, "sojourn_s": inf, "queue_len": inf, "in_system": inf}
    if model == "md1":
        p_wait = rho
        wq = rho / (2.0 * mu * (1.0 - rho))
    else:  # mm1 is mmc with c = 1, where Erlang C reduces to rho
        p_wait = erlang_c(c, lam / mu)
        wq = p_wait / (c * mu - lam)
    w = wq + 1.0 / mu
    return {"utilization": rho, "throughput": lam, "p_wait": p_wait,
            "wait_s": wq, "sojourn_s": w, "queue_len": lam * wq, "in_system": lam * w}


def simulate(model: str, lam: float, mu: float, c: int, sim: Simulate, rng: np.random.Generator) -> dict[str, float]:
    """FIFO c-server queue: each arrival takes the server that frees first
    (Kiefer-Wolfowitz), so its wait is max(0, earliest free time - arrival)."""
    n = sim.customers
    arrivals = np.cumsum(rng.exponential(1.0 / lam, n))
    service = np.full(n, 1.0 / mu) if model == "md1" else rng.exponential(1.0 / mu, n)
    free = [0.0] * c
    waits = np.empty(n)
    for i in range(n):
        t = arrivals[i]
        start = max(t, free[0])
        waits[i] = start - t
        heapq.heapreplace(free, start + service[i])
    measured = waits[sim.warmup:]
    return {"sim_wait_s": float(measured.mean()),
            "sim_sojourn_s": float(measured.mean() + service[sim.warmup:].mean()),
            "sim_p_wait": float(np.count_nonzero(measured > 0.0) / measured.size)}


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    mu = cfg.service_rate
    cases = []
    for c in cfg.servers:
        if cfg.utilization is not None:
            cases += [(c, u * c * mu, f"c{c}-u{u:g}") for u in cfg.utilization]
        else:
            cases += [(c, lam, f"c{c}-lambda{lam:g}") for lam in cfg.arrival_rate]
    progress.set_total(len(cases))
    out = []
    for index, (c, lam, case_id) in enumerate(cases):
        metrics = closed_form(cfg.model, lam, mu, c)
        if cfg.simulate is not None:
            # One independent stream per case, derived from the scenario seed.
            rng = np.random.default_rng([scenario.seed, index])
            metrics.update(simulate(cfg.model, lam, mu, c, cfg.simulate, rng))
        out.append(CaseResult(
            case=case_id,
            params={"servers": c, "arrival_rate": lam, "service_rate": mu},
            metrics=metrics,
            bottleneck="servers" if metrics["utilization"] >= 1.0 else "",
        ))
        progress.advance(status=case_id)
    return out
