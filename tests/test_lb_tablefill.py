"""The table-fill what-if (case method tablefill; `fill-SERVICE` as
`routertwin import haproxy|ipvs` writes it; runners/lb/tablefill.py).

Independent truth: Erlang's loss formula and the M/M/c/K stationary
distribution, computed here in exact rational arithmetic (Fractions of
a^n / n!), not with the runner's ratios; Erlang B's recursion for a large
table and its limit 1 - c/a; Little's law (held = accepted rate x holding
time); HAProxy's manual for what sets the limit, the queue and the bytes
(maxconn, backlog, tune.bufsize; "about 33 kB" a connection), read from a
configuration Debian ships (content-sw-sample.cfg: global maxconn 10000,
defaults maxconn 8000).
"""

import json
import math
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import one_line, run_cli
from routertwin.importers import haproxy, ipvs
from routertwin.runners.lb import tablefill

CONTENT_SW = Path("/usr/share/doc/haproxy/examples/content-sw-sample.cfg")


def mmck_blocking_exact(a: Fraction, c: int, k: int) -> Fraction:
    """P(full) of M/M/c/(c+K): p_n = a^n / n! (n <= c), a^c / c! (a/c)^(n-c) beyond."""
    p = [a ** n / math.factorial(n) for n in range(c + 1)]
    p += [p[c] * (a / c) ** j for j in range(1, k + 1)]
    return p[-1] / sum(p)


def erlang_b_recursion(a: float, c: int) -> float:
    """B(0) = 1, B(n) = a B(n-1) / (n + a B(n-1)): the textbook recursion."""
    b = 1.0
    for n in range(1, c + 1):
        b = a * b / (n + a * b)
    return b


@pytest.mark.parametrize("a, c, k", [(5, 10, 0), (10, 10, 0), (20, 10, 0), (3, 1, 0), (20, 10, 5), (8, 10, 4),
                                     (10, 10, 7), (50, 20, 30)])
def test_closed_form_is_erlang_b_and_mmck(a, c, k):
    exact = float(mmck_blocking_exact(Fraction(a), c, k))
    assert tablefill.blocking(a, c, k) == pytest.approx(exact, rel=1e-12)


def test_large_table_blocking_tends_to_one_minus_c_over_a():
    # 8000 connections offered 16000 Erlangs: the recursion's B and 1 - c/a agree to 1 %
    c, a = 8000, 16000.0
    b = erlang_b_recursion(a, c)
    assert tablefill.blocking(a, c, 0) == pytest.approx(b, rel=1e-9)
    assert b == pytest.approx(1 - c / a, abs=0.01)
    # with a long queue the refusals are those of the overload itself: 1 - c/a
    assert tablefill.blocking(a, c, 4096) == pytest.approx(1 - c / a, abs=1e-9)


def _cfg(tmp_path, text: str) -> Path:
    path = tmp_path / "h.cfg"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _run(tmp_path, path: Path, measure_holdings: float) -> dict:
    """Import PATH, keep its fill cases (measured over `measure_holdings`), run them: {case id: case}."""
    from ruamel.yaml import YAML

    out = tmp_path / "s.yaml"
    proc = run_cli("import", "haproxy", path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    yaml = YAML()
    doc = yaml.load(out.read_text())
    doc["cases"] = [c for c in doc["cases"] if c["method"] == "tablefill"]
    for c in doc["cases"]:
        c["tablefill"]["measure_holdings"] = measure_holdings
    with out.open("w") as fh:
        yaml.dump(doc, fh)
    proc = run_cli("run", out, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    (result,) = (tmp_path / "out").glob("*.json")  # named after the scenario
    return {c["case"]: c for c in json.loads(result.read_text())["cases"]}


def test_loss_system_refuses_erlang_b_and_holds_littles_law(tmp_path):
    # backlog 0 is "the frontend's maxconn"; a backlog of 1 is the smallest queue HAProxy passes:
    # the test compares against M/M/20/21, computed here exactly
    path = _cfg(tmp_path, """
        global
            maxconn 20
        frontend f
            bind 198.18.0.1:80
            backlog 1
            default_backend b
        backend b
            server s1 198.18.0.2:80
        """)
    cases = _run(tmp_path, path, measure_holdings=400)
    head = cases["fill-f"]["metrics"]
    assert head["limit"] == 20 and head["rate_at_limit_per_s"] == pytest.approx(20.0)
    assert head["memory_at_limit_bytes"] == 20 * (2 * 16384 + 1024)
    for factor in (0.5, 0.9, 1.0, 1.25, 2.0):
        m = cases[f"fill-f-x{factor:g}"]["metrics"]
        rate = 20.0 * factor
        truth = float(mmck_blocking_exact(Fraction(rate).limit_denominator(10**6), 20, 1))
        assert m["refused_closed_form_pct"] / 100 == pytest.approx(truth, rel=1e-9, abs=1e-15)
        # the simulation: about 8000 x factor arrivals; 4 binomial standard deviations (loss events
        # cluster, so widened by 2) plus 0.5 point
        n = m["arrivals"]
        sd = math.sqrt(truth * (1 - truth) / n)
        assert abs(m["refused_pct"] / 100 - truth) < 8 * sd + 0.005, (factor, m["refused_pct"], truth)
        # Little's law: held = accepted rate x 1 s, within 3 %
        assert m["held_mean"] == pytest.approx(rate * (1 - truth), rel=0.03)
        assert m["held_max"] <= 20


def test_far_beyond_the_limit_the_refused_fraction_is_one_minus_c_over_a(tmp_path):
    path = _cfg(tmp_path, """
        global
            maxconn 30
        frontend f
            bind 198.18.0.1:80
            backlog 1
        """)
    from ruamel.yaml import YAML

    out = tmp_path / "s.yaml"
    assert run_cli("import", "haproxy", path, "-o", out).returncode == 0
    yaml = YAML()
    doc = yaml.load(out.read_text())
    doc["cases"] = [c for c in doc["cases"] if c["method"] == "tablefill"]
    doc["cases"][0]["tablefill"].update(load_factors=[5.0], measure_holdings=200)
    with out.open("w") as fh:
        yaml.dump(doc, fh)
    proc = run_cli("run", out, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    (result,) = (tmp_path / "out").glob("*.json")
    m = {c["case"]: c for c in json.loads(result.read_text())["cases"]}["fill-f-x5"]["metrics"]
    # offered 150 Erlangs to 30: 1 - 30/150 = 0.8 (Erlang B with one waiting place: 0.8000...)
    assert m["refused_pct"] / 100 == pytest.approx(1 - 30 / 150, abs=0.01)


def test_content_sw_sample_limit_memory_and_queue():
    """content-sw-sample.cfg: global maxconn 10000 (line 11), defaults maxconn 8000 (line 28)
    that its frontend inherits; no tune.bufsize, no backlog."""
    lines = CONTENT_SW.read_text().splitlines()
    assert lines[10].split() == ["maxconn", "10000"] and lines[27].split() == ["maxconn", "8000"]
    r = haproxy.import_file(CONTENT_SW, env={})
    fills = [c for c in r.scenario["cases"] if c["method"] == "tablefill"]
    assert [c["id"] for c in fills] == ["fill-public"]
    f = fills[0]["tablefill"]
    assert f["limit"] == 8000 and f["limit_source"].endswith(":28: maxconn 8000")
    # manual 4.2 maxconn: two 16 kB buffers, "about 33 kB" in all
    assert f["bytes_per_connection"] == 2 * 16384 + 1024 == 33 * 1024
    # backlog: the frontend's maxconn (8000), capped by somaxconn 4096
    assert f["accept_queue"] == 4096
    assert not any(n.line in (11, 28) for n in r.not_modelled)


def test_global_below_frontend_bufsize_and_the_assumed_limit(tmp_path):
    path = _cfg(tmp_path, """
        global
            maxconn 300
            tune.bufsize 8192
        frontend low
            bind :80
            maxconn 1000
        frontend high
            bind :81
            maxconn 100
            backlog 50
        """)
    fills = {c["id"]: c["tablefill"] for c in haproxy.import_file(path).scenario["cases"]
             if c["method"] == "tablefill"}
    assert fills["fill-low"]["limit"] == 300 and "global maxconn 300" in fills["fill-low"]["limit_source"]
    assert fills["fill-high"]["limit"] == 100 and fills["fill-high"]["accept_queue"] == 50
    assert fills["fill-low"]["bytes_per_connection"] == 2 * 8192 + 1024
    bare = _cfg(tmp_path, "frontend f\n    bind :80\n")
    f = next(c["tablefill"] for c in haproxy.import_file(bare).scenario["cases"] if c["method"] == "tablefill")
    assert f["limit"] == 512 and f["limit_source"].startswith("assumption")


@pytest.mark.parametrize("text, line, message", [
    ("global\n    maxconn ten\n", 2, "maxconn: 'ten' must be an integer"),
    ("global\n    tune.bufsize 100\n", 2, "tune.bufsize: '100' must be an integer in 1024"),
    ("frontend f\n    bind :80\n    backlog -1\n", 3, "backlog: '-1' must be an integer"),
    ("frontend f\n    maxconn 1 2\n", 2, "maxconn takes one number"),
])
def test_bad_limits_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "h.cfg"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "haproxy", path, "-o", out), out)
    assert err.startswith(f"{path}:{line}: ") and message in err, err


def test_bad_tablefill_case_names_file_and_line(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent("""
        scenario: t
        kind: lb
        cases:
          - id: fill-x
            method: tablefill
            tablefill:
              limit_source: none
              bytes_per_connection: 100
              bytes_source: none
        """).lstrip(), encoding="utf-8")
    err = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert err.startswith(f"{path}:6") and "'limit'" in err and "memory_bytes" in err, err


def test_ipvs_table_is_bounded_by_memory(tmp_path):
    rules = tmp_path / "rules"
    rules.write_text("-A -t 198.18.0.1:80 -s rr\n-a -t 198.18.0.1:80 -r 198.18.1.1:80 -g -w 1\n")
    r = ipvs.import_file(rules)
    f = next(c["tablefill"] for c in r.scenario["cases"] if c["method"] == "tablefill")
    assert f["memory_bytes"] == 1 << 30 and f["bytes_per_connection"] == 320
    assert f["linger_ms"] == 120_000  # FIN_WAIT / TIME_WAIT two minutes
    from routertwin.runners.lb.schema import TableFillWhatIf

    model = TableFillWhatIf(**f)
    assert model.held_limit() == (1 << 30) // 320 == 3_355_443
    # Little's law: 3,355,443 entries held for 1 s + 120 s fill at 27,731 new connections/s
    assert model.held_limit() / 121.0 == pytest.approx(27731, rel=1e-4)


def test_same_seed_same_run_other_seed_other_run():
    a = tablefill.simulate(25.0, 1.0, 20, 3, seed=7, measure_holdings=50)
    assert a == tablefill.simulate(25.0, 1.0, 20, 3, seed=7, measure_holdings=50)
    assert a != tablefill.simulate(25.0, 1.0, 20, 3, seed=8, measure_holdings=50)
