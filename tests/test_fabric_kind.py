"""kind fabric: the crossbar of model/fabric as a scenario, against the
published saturation throughputs of FIFO input queueing (Karol, Hluchyj and
Morgan 1987: exactly 3/4 for 2 ports) and VOQ + iSLIP (McKeown 1999)."""

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
