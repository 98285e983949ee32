"""The queue_analytic kind against textbook closed forms worked by hand, the
factorial form of Erlang C in exact arithmetic, and its own seeded simulation."""

import json
import math
from fractions import Fraction

import pytest

from conftest import run_cli
from routertwin import runners
from routertwin.progress import silent
from routertwin.runners.queue_analytic import closed_form, erlang_c
from routertwin.scenario_loader import load_scenario


def test_mm1_matches_textbook_at_half_load():
    m = closed_form("mm1", lam=500.0, mu=1000.0, c=1)
    assert m["sojourn_s"] == pytest.approx(1 / (1000 - 500))  # W = 1/(mu - lambda)
    assert m["wait_s"] == pytest.approx(0.001)
    assert m["in_system"] == pytest.approx(1.0)  # L = rho/(1 - rho)
    assert m["queue_len"] == pytest.approx(0.5)  # Lq = rho^2/(1 - rho)
    assert m["p_wait"] == pytest.approx(0.5)


def test_md1_waits_half_as_long_as_mm1():
    m = closed_form("md1", lam=500.0, mu=1000.0, c=1)
    assert m["queue_len"] == pytest.approx(0.25)  # Lq = rho^2 / (2 (1 - rho))
    assert m["wait_s"] == pytest.approx(0.0005)
    assert m["sojourn_s"] == pytest.approx(0.0015)


def test_mm2_erlang_c_worked_by_hand():
    # a = 1 Erlang on 2 servers: C = (1/2 * 2) / (1 + 1 + 1) = 1/3; Wq = C / (2 mu - lambda)
    m = closed_form("mmc", lam=1000.0, mu=1000.0, c=2)
    assert m["p_wait"] == pytest.approx(1 / 3)
    assert m["wait_s"] == pytest.approx(1 / 3000)


@pytest.mark.parametrize("c,a", [(1, Fraction(1, 2)), (5, Fraction(4)), (32, Fraction(30)), (48, Fraction(47, 1))])
def test_erlang_c_recursion_equals_factorial_formula(c, a):
    top = a**c / math.factorial(c) * Fraction(c) / (c - a)
    exact = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    assert erlang_c(c, float(a)) == pytest.approx(float(exact), rel=1e-12)


def test_unstable_queue_has_infinite_wait_and_servers_bottleneck(write, tmp_path):
    path = write("u.yaml", """
        scenario: unstable
        kind: queue_analytic
        seed: 1
        model: mm1
        service_rate: 100
        utilization: [1.25]
        """)
    sc = load_scenario(path)
    (case,) = runners.get("queue_analytic").run(sc, silent())
    assert case.metrics["throughput"] == 100.0
    assert math.isinf(case.metrics["wait_s"])
    assert case.bottleneck == "servers"
    assert run_cli("run", path, "--out", tmp_path).returncode == 0
    doc = json.loads((tmp_path / "unstable.json").read_text())
    assert doc["cases"][0]["metrics"]["wait_s"] == "inf"  # JSON has no infinity; null would hide it


@pytest.mark.parametrize("model,servers", [("mm1", 1), ("md1", 1), ("mmc", 4)])
def test_simulation_converges_to_closed_form(write, model, servers):
    path = write("s.yaml", f"""
        scenario: sim
        kind: queue_analytic
        seed: 11
        model: {model}
        service_rate: 1000
        servers: [{servers}]
        utilization: [0.6]
        simulate: {{customers: 200000, warmup: 20000}}
        """)
    (case,) = runners.get("queue_analytic").run(load_scenario(path), silent())
    m = case.metrics
    assert m["sim_wait_s"] == pytest.approx(m["wait_s"], rel=0.06)
    assert m["sim_p_wait"] == pytest.approx(m["p_wait"], rel=0.03)
    assert m["sim_sojourn_s"] == pytest.approx(m["sojourn_s"], rel=0.03)


def test_single_server_models_reject_several_servers(write):
    from routertwin.errors import ScenarioError

    path = write("s.yaml", """
        scenario: x
        kind: queue_analytic
        model: md1
        service_rate: 1
        servers: [2]
        utilization: [0.5]
        """)
    with pytest.raises(ScenarioError, match="model 'md1' has one server"):
        load_scenario(path)
