"""kind fabric: the crossbar of model/fabric as a scenario, against the
published saturation throughputs of FIFO input queueing (Karol, Hluchyj and
Morgan 1987: exactly 3/4 for 2 ports) and VOQ + iSLIP (McKeown 1999); its
delay distribution against the exact output-queue distribution, and its
drops per input and over time."""

import math

import numpy as np
import pytest

import routertwin as rt


def _fabric(**keys):
    return rt.scenario({"scenario": "xbar", "kind": "fabric", "seed": 1, "warmup_slots": 1000,
                        "measure_slots": 20000, **keys})


def test_two_fifo_ports_saturate_at_three_quarters_and_a_voq_fabric_near_one():
    fifo = rt.run(_fabric(queueing="fifo", scheduler="fifo_random", ports=[2], input_buffer_cells=64))
    (case,) = fifo.cases
    assert abs(case.metrics["throughput"] - 0.75) < 4 * case.metrics["throughput_stderr"] + 1e-3
    assert case.params == {"ports": 2, "load": 1.0, "queueing": "fifo", "scheduler": "fifo_random", "iterations": 1}
    voq = rt.run(_fabric(queueing="voq", scheduler="islip", iterations=4, ports=[16], load=[0.5, 0.9]))
    df = voq.to_dataframe()
    # below saturation a stable fabric carries what it is offered (per output per slot)
    assert list(df["metric.throughput"]) == pytest.approx([0.5, 0.9], abs=0.01)
    assert df.attrs["units"]["metric.throughput"] == "cells/slot/output"
    assert (df["counter.input_drops"] == 0).all()


def test_a_scheduler_that_does_not_fit_the_queueing_is_named():
    with pytest.raises(rt.ScenarioError, match=r"key 'scheduler': VOQ input queueing needs the islip scheduler"):
        _fabric(queueing="voq", scheduler="fifo_rr", ports=[4])
    with pytest.raises(rt.ScenarioError, match=r"key 'ports\[0\]': Input should be greater than or equal to 2"):
        _fabric(ports=[1])


def output_queue_waits(ports: int, load: float, states: int = 600) -> np.ndarray:
    """P(a cell waits w slots), w = 0..states-1, in an output-queued switch
    under uniform Bernoulli traffic, computed exactly: each slot an output
    gets A ~ Binomial(ports, load / ports) cells, then sends one, so its
    backlog at the start of a slot is the chain B' = max(B + A - 1, 0)
    (solved here, truncated where its mass is below 1e-16); the cells of a
    slot take the places B, B+1, ..., B+A-1 and leave after that many slots,
    in whatever order they entered (the output-queueing model of Karol,
    Hluchyj and Morgan 1987)."""
    a = np.array([math.comb(ports, k) * (load / ports) ** k * (1 - load / ports) ** (ports - k)
                  for k in range(ports + 1)])
    p = np.zeros((states, states))
    for b in range(states):
        for k, pk in enumerate(a):
            p[b, min(max(b + k - 1, 0), states - 1)] += pk
    m = p.T - np.eye(states)
    m[-1, :] = 1.0
    rhs = np.zeros(states)
    rhs[-1] = 1.0
    backlog = np.linalg.solve(m, rhs)
    waits = np.zeros(states + ports)
    for b, pb in enumerate(backlog):
        for k, pk in enumerate(a):
            waits[b:b + k] += pb * pk  # one cell at each place b..b+k-1
    return waits[:states] / load  # per cell: divide by the mean arrivals per slot


def test_output_queued_delays_match_karol_hluchyj_morgan_and_the_exact_distribution():
    """VOQ + iSLIP with as many iterations and phases as ports moves every
    cell to its output in the slot it arrives (each output takes one cell
    from each requesting input per phase, and an input holds at most one
    new cell): an output-queued switch. Its mean wait is Karol, Hluchyj and
    Morgan's W = (N-1)/N p / (2 (1-p)) slots (1987, output queueing). 8 ports at
    p = 0.8, 200k slots: 1.28M cells. Tolerances: the standard error of the
    mean delay is sd / sqrt(cells / tau), sd ~2 slots, and the cells of
    tau = 50 slots' worth (longer than a busy period at this load) taken as
    one independent sample: 0.013 slots; 3 % of 1.75 is 4 of them. A
    percentile is exact when the measured fraction at or below it, whose
    standard error is sqrt(q (1-q) tau / cells), is within 4 of them of q."""
    n, p = 8, 0.8
    res = rt.run(_fabric(queueing="voq", scheduler="islip", iterations=n, speedup=n, ports=[n], load=[p],
                         measure_slots=200_000))
    (case,) = res.cases
    m = case.metrics
    khm = (n - 1) / n * p / (2 * (1 - p))
    assert m["mean_delay_slots"] == pytest.approx(khm, rel=0.03)
    exact = np.cumsum(output_queue_waits(n, p))
    assert float(np.dot(np.arange(exact.size), np.diff(np.concatenate(([0.0], exact))))) == pytest.approx(khm, rel=1e-9)
    cells = case.distributions["delay_histogram"]["cells"]
    assert cells == pytest.approx(n * p * 200_000, rel=0.01)
    for q in ("p50", "p99", "p999"):
        level = {"p50": 0.5, "p99": 0.99, "p999": 0.999}[q]
        slack = 4 * math.sqrt(level * (1 - level) * 50 / cells)
        measured = int(m[f"delay_{q}_slots"])
        # the smallest w with P(W <= w) >= level, up to the sampling slack
        assert exact[measured] >= level - slack and (measured == 0 or exact[measured - 1] < level + slack), \
            (q, measured, exact[max(measured - 1, 0)], exact[measured])
    assert m["delay_max_slots"] >= m["delay_p999_slots"]
    hist = case.distributions["delay_histogram"]
    assert sum(c for _, c in hist["bins"]) == pytest.approx(cells)
    assert hist["mean"] == pytest.approx(m["mean_delay_slots"])
    assert case.counters["input_drops"] == 0 and m["loss_ports"] == 0


def test_input_drops_are_counted_per_input_and_over_the_window():
    """FIFO inputs of 8 cells at full load: HOL blocking caps them at 3/4 of
    a cell a slot (2 ports) and the rest is refused, about 1/4 of what each
    input is offered; the drops of the inputs add up to the fabric's own
    count, and spread over every time bin."""
    res = rt.run(_fabric(queueing="fifo", scheduler="fifo_random", ports=[2], input_buffer_cells=8,
                         measure_slots=20_000))
    (case,) = res.cases
    per_input = case.distributions["input_drops"]
    total = case.counters["input_drops"]
    assert len(per_input) == 2 and sum(per_input) == total
    timeline = case.distributions["drop_timeline"]
    assert timeline["bin_slots"] == 200 and [sum(r) for r in timeline["ports"]] == per_input
    for d in per_input:  # each input offered a cell every slot of the window, carries 3/4
        assert d / 20_000 == pytest.approx(0.25, abs=0.02)
    assert case.metrics["loss_ports"] == 2 and case.metrics["loss_bins"] == 100
    assert case.metrics["loss_top_port_share"] == pytest.approx(50, abs=3)
