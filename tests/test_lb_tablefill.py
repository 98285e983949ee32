"""The table-fill what-if (case method tablefill; `fill-SERVICE` as
`routertwin import haproxy|ipvs` writes it; runners/lb/tablefill.py).

Independent truth: Erlang's loss formula and the M/M/c/K stationary
distribution, computed here in exact rational arithmetic (Fractions of
a^n / n!), not with the runner's ratios, against the C++ timed engine's
simulation (routertwin._core.lb_timed with a frontend limit and an accept
queue) over independent replications: blocking, the mean wait (Little's
law, L_q / accepted rate) and the waiting-time distribution (an accepted
arrival that finds n >= c waits the sum of n - c + 1 exponential
departures of rate c mu); Erlang B's recursion for a large
table and its limit 1 - c/a; Little's law (held = accepted rate x holding
time); HAProxy's manual for what sets the limit, the queue and the bytes
(maxconn, backlog, tune.bufsize; "about 33 kB" a connection), read from a
configuration Debian ships (content-sw-sample.cfg: global maxconn 10000,
defaults maxconn 8000).
"""

import json
import math
import statistics
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import one_line, run_cli
from routertwin import _core
from routertwin.importers import haproxy, ipvs
from routertwin.runners.lb import tablefill

CONTENT_SW = Path("/usr/share/doc/haproxy/examples/content-sw-sample.cfg")


def mmck_blocking_exact(a: Fraction, c: int, k: int) -> Fraction:
    """P(full) of M/M/c/(c+K): p_n = a^n / n! (n <= c), a^c / c! (a/c)^(n-c) beyond."""
    p = [a ** n / math.factorial(n) for n in range(c + 1)]
    p += [p[c] * (a / c) ** j for j in range(1, k + 1)]
    return p[-1] / sum(p)


def mmck_exact(a: Fraction, c: int, k: int) -> list[Fraction]:
    """p_0 .. p_{c+K} of M/M/c/(c+K), normalised."""
    p = [a ** n / math.factorial(n) for n in range(c + 1)]
    p += [p[c] * (a / c) ** j for j in range(1, k + 1)]
    total = sum(p)
    return [x / total for x in p]


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
    p = mmck_exact(Fraction(a), c, k)
    lq = float(sum(j * p[c + j] for j in range(1, k + 1)))
    assert tablefill.mean_waiting(a, c, k) == pytest.approx(lq, rel=1e-12, abs=1e-300)


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


def engine(a: float, c: int, k: int, seed: int, measure_holdings: float, holding_s: float = 1.0) -> dict:
    """The runner's engine keys for offered load a: c held, K waiting, from min(a, c + K) at time 0,
    3 holding times of warm-up."""
    start = int(min(round(a), c + k))
    return _core.lb_timed(tablefill.engine_keys(a / holding_s, holding_s, c, k, seed, 3.0, measure_holdings, start))


def test_same_seed_same_run_other_seed_other_run():
    a = engine(25.0, 20, 3, seed=7, measure_holdings=50)
    assert a == engine(25.0, 20, 3, seed=7, measure_holdings=50)
    assert a != engine(25.0, 20, 3, seed=8, measure_holdings=50)


REPLICATIONS = 8


def replicated(a: float, c: int, k: int, measure_holdings: float, holding_s: float = 1.0) -> list[dict]:
    return [engine(a, c, k, seed, measure_holdings, holding_s) for seed in range(1, REPLICATIONS + 1)]


def agrees(samples: list[float], truth: float, slack: float = 0.0) -> tuple[bool, str]:
    """The replications' mean within 4.5 standard errors of the truth (+ slack): the replications are
    independent, so their spread is the estimate's own (a queue's successive refusals and waits are
    correlated: a binomial error would understate it); Student's t with 7 degrees of freedom exceeds
    4.5 with probability 0.003."""
    mean = statistics.fmean(samples)
    se = statistics.stdev(samples) / math.sqrt(len(samples))
    return abs(mean - truth) <= 4.5 * se + slack, f"mean {mean:.6g} truth {truth:.6g} se {se:.3g}"


@pytest.mark.parametrize("a, c, k", [(8, 10, 0), (12, 10, 0), (20, 20, 5), (6, 5, 10), (0.8, 1, 4), (1.5, 1, 3)])
def test_engine_blocks_as_erlang_b_and_mmck_and_waits_as_littles_law(a, c, k):
    """Blocking (refused / arrivals in the window) against Erlang B (K = 0)
    or M/M/c/K; the time-averaged accept queue against L_q; the mean wait of
    the accepted (0 for those accepted at once) against L_q / (lambda (1 - B))."""
    p = mmck_exact(Fraction(a).limit_denominator(10**6), c, k)
    block = float(p[-1])
    lq = float(sum(j * p[c + j] for j in range(1, k + 1)))
    outs = replicated(a, c, k, measure_holdings=400)
    ok, why = agrees([o["before_refused_frontend"] / o["before_requests"] for o in outs], block)
    assert ok, ("blocking", why)
    assert all(o["frontend_held_max"] <= c and o["accept_queue_max"] <= k for o in outs)
    held = float(sum(min(n, c) * p[n] for n in range(c + k + 1)))
    ok, why = agrees([o["before_active"][0] for o in outs], held)
    assert ok, ("held", why)
    if k:
        ok, why = agrees([o["before_accept_queue"] for o in outs], lq)
        assert ok, ("L_q", why)
        accepted = [o["before_requests"] - o["before_refused_frontend"] for o in outs]
        waits = [o["queue_wait_mean_ms"] / 1000.0 * o["before_queued"] / n for o, n in zip(outs, accepted)]
        ok, why = agrees(waits, lq / (a * (1 - block)))
        assert ok, ("mean wait", why)


def erlang_tail(shape: int, rate: float, t: float) -> float:
    """P(Erlang(shape, rate) > t)."""
    x = rate * t
    return math.exp(-x) * sum(x ** i / math.factorial(i) for i in range(shape))


def wait_quantile(p: list[Fraction], c: int, k: int, q: float) -> float:
    """The q-quantile of the wait of an accepted arrival that waits (holding time 1): it finds n in
    c..c+K-1 with probability p_n (PASTA) and waits Erlang(n - c + 1, c), the departures of c busy
    servers; bisection on P(W > t | W > 0) = 1 - q."""
    weights = [float(p[n]) for n in range(c, c + k)]
    total = sum(weights)

    def above(t: float) -> float:
        return sum(w * erlang_tail(n - c + 1, float(c), t) for w, n in zip(weights, range(c, c + k))) / total

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if above(mid) > 1 - q else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("a, c, k", [(0.8, 1, 4), (1.5, 1, 3), (6, 5, 10)])
def test_engine_wait_percentiles_are_mmck_waiting_time_quantiles(a, c, k):
    """The queued requests' p50, p99 and p99.9 (read from the engine's
    Boost.Histogram, within one bin, 2.33 %, of the order statistic) against
    the closed-form quantiles of the wait of M/M/c/K (for c = 1, M/M/1/K's:
    a sum of up to K - 1 exponential services). Holding times of 100 ms keep
    the tail inside the histogram's axis (1 ns to 10 s); 20,000 of them give
    each run some 10,000 waits or more, so that its p99.9 is not its maximum."""
    p = mmck_exact(Fraction(a).limit_denominator(10**6), c, k)
    outs = replicated(a, c, k, measure_holdings=20000, holding_s=0.1)
    for name, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
        truth = 0.1 * wait_quantile(p, c, k, q)
        ok, why = agrees([o[f"queue_wait_{name}_us"] / 1e6 for o in outs], truth, slack=0.0233 * truth)
        assert ok, (name, why)


def test_a_large_table_runs_within_the_event_budget(tmp_path):
    """IPVS with 1 GiB of 320-byte entries: 3,355,443 held 121 s each (Little's law: 27,731 new/s at the
    limit). Offered twice that, Erlang B's limit 1 - c/a = 0.5; the engine starts at the limit and
    simulates within EVENT_BUDGET (about 2 events a connection)."""
    c, holding = (1 << 30) // 320, 121.0
    a = 2.0 * c
    warmup, measured, start = tablefill.spans(a, c, 0, 12.0)
    assert 2 * a * (warmup + measured) <= tablefill.EVENT_BUDGET * 1.0001
    out = _core.lb_timed(tablefill.engine_keys(a / holding, holding, c, 0, 1, warmup, measured, start))
    assert out["frontend_held_max"] == c
    blocked = out["before_refused_frontend"] / out["before_requests"]
    b = tablefill.blocking(a, c, 0)
    assert b == pytest.approx(0.5, abs=1e-3)
    # the window holds about 1.6 million arrivals: the binomial error is 4e-4; 4 of it, widened by 2
    assert blocked == pytest.approx(b, abs=8 * math.sqrt(b * (1 - b) / out["before_requests"]))
