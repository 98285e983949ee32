"""kind: fabric -- a cell crossbar (model/fabric, the T640's fabric model)
under uniform Bernoulli traffic: every input receives a cell with
probability `load` per slot, for a uniformly random output.

Shows head-of-line blocking (one FIFO per input saturates near
2 - sqrt(2) = 58.6 % of capacity for many ports; Karol, Hluchyj and Morgan
1987) and what virtual output queues with iSLIP (McKeown 1999) recover. A
case is one (ports, load) pair; metrics are per output per slot. Beyond the
mean delay (issue 15): the cells' delay percentiles p50/p99/p99.9/max in
whole slots (a Boost.Histogram in the model, exact), and the cells a full
input buffer refused, per input and over the measured window, with the
clustering figures of the other kinds (loss_ports, loss_top_port_share,
loss_bins; fabric_distributions).

Example:

    scenario: hol
    kind: fabric
    seed: 1
    queueing: fifo
    scheduler: fifo_random
    input_buffer_cells: 64     # saturated inputs need a finite queue
    ports: [2, 8, 32]
    load: [1.0]
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from routertwin.distributions import loss_clustering
from routertwin.results import CaseResult
from routertwin.scenario_loader import FieldError, ScenarioModel

METRICS = ("throughput", "throughput_stderr", "mean_delay_slots", "backlog_start", "backlog_end",
           # the cells' delays beyond the mean, and how the input drops cluster (issue 15)
           "delay_p50_slots", "delay_p99_slots", "delay_p999_slots", "delay_max_slots",
           "loss_ports", "loss_top_port_share", "loss_bins")
UNITS = {"throughput": "cells/slot/output", "throughput_stderr": "cells/slot/output", "load": "cells/slot/input",
         r"(mean_)?delay_.*slots": "slots", "backlog_start": "cells", "backlog_end": "cells", "ports": "ports",
         "loss_ports": "ports", "loss_top_port_share": "% of drops", "loss_bins": "time bins"}


class Schema(ScenarioModel):
    queueing: Literal["fifo", "voq"] = "voq"
    scheduler: Literal["islip", "fifo_random", "fifo_rr"] = "islip"
    iterations: int = Field(default=1, ge=1, le=64)  # iSLIP request-grant-accept rounds per phase
    speedup: int = Field(default=1, ge=1, le=16)  # matching phases per slot
    # Up to 256 ports: a VOQ crossbar keeps ports^2 queues and iSLIP visits
    # them every slot (256 ports x 10^6 slots is about a minute).
    ports: list[Annotated[int, Field(ge=2, le=256)]] = Field(min_length=1)
    load: list[Annotated[float, Field(gt=0, le=1)]] = Field(default=[1.0], min_length=1)
    warmup_slots: int = Field(default=2000, ge=0, le=10_000_000)
    # At least 2 slots (the standard error comes from 2+ batches of slots).
    measure_slots: int = Field(default=100_000, ge=2, le=10_000_000)
    input_buffer_cells: int = Field(default=0, ge=0, le=2**31)  # per input, all its queues; 0 = unbounded

    @model_validator(mode="after")
    def _scheduler_fits_queueing(self):
        if self.queueing == "voq" and self.scheduler != "islip":
            raise FieldError(("scheduler",), "VOQ input queueing needs the islip scheduler")
        if self.queueing == "fifo" and self.scheduler == "islip":
            raise FieldError(("scheduler",), "FIFO input queueing needs fifo_random or fifo_rr")
        return self


def run(scenario, progress) -> list[CaseResult]:
    from routertwin import _core

    cfg: Schema = scenario.config
    cases = [(n, x) for n in cfg.ports for x in cfg.load]
    progress.set_total(len(cases))
    out = []
    for n, x in cases:
        r = _core.fabric_uniform(n, cfg.queueing, cfg.scheduler, iterations=cfg.iterations, speedup=cfg.speedup,
                                 load=x, warmup=cfg.warmup_slots, measure=cfg.measure_slots,
                                 input_buffer_cells=cfg.input_buffer_cells, seed=scenario.seed)
        delay, drops = r["delay_slots"], r["drop_timeline"]
        metrics = {k: float(r[k]) for k in ("throughput", "throughput_stderr", "mean_delay_slots", "backlog_start",
                                             "backlog_end")}
        metrics.update({f"delay_{q}_slots": float(delay[q]) for q in ("p50", "p99", "p999", "max")})
        metrics.update(loss_clustering(drops))
        # growing queues at the end of the run: the fabric does not carry this load
        bottleneck = "fabric" if r["input_drops"] > 0 or r["backlog_end"] > 2 * max(r["backlog_start"], 1.0) else ""
        out.append(CaseResult(f"{n}p-{x:g}", {"ports": n, "load": x, "queueing": cfg.queueing,
                                              "scheduler": cfg.scheduler, "iterations": cfg.iterations},
                              metrics, bottleneck, {"input_drops": float(r["input_drops"])},
                              distributions=fabric_distributions(delay, drops)))
        progress.advance(status=f"{n} ports, load {x:g}")
    return out


def fabric_distributions(delay: dict, drops: dict) -> dict:
    """A run's `distributions`: `delay_histogram` {"cells", "mean", "p50",
    "p99", "p999", "max", "bins": [[delay slots, cells], ...]} (whole slots,
    exact quantiles), `input_drops` (cells refused per input, inputs from 1)
    and `drop_timeline` {"bin_slots", "ports": [[drops per time bin] per
    input]} over the measured window."""
    rows = [list(map(float, row)) for row in drops["ports"]]
    return {
        "delay_histogram": {"cells": float(delay["cells"]), "mean": float(delay["mean"]),
                            **{q: int(delay[q]) for q in ("p50", "p99", "p999", "max")},
                            "bins": [[int(n), float(c)] for n, c in delay["bins"]]},
        "input_drops": [sum(row) for row in rows],
        "drop_timeline": {"bin_slots": float(drops["bin_slots"]), "ports": rows},
    }
