"""Every runner kind through rt.run / rt.sweep / Results, with nothing kind-
specific in the API: the load balancer (kind lb) against arithmetic that
does not come from the model, and a kind the API has never seen, added the
way a new kind (tcp-path) is added: one module under routertwin.runners."""

import math
import sys
import textwrap

import pandas as pd
import pytest
from conftest import ROOT

import routertwin as rt
import routertwin.runners

ADX_TPS = ROOT / "scenarios" / "adx" / "adx-tps.yaml"
REMAP = ROOT / "scenarios" / "whatif" / "adx-failover-remap.yaml"


def _short_lb(cases):
    return rt.load(ADX_TPS).with_({"cases": cases, "duration_us": 500, "warmup_us": 50})


def test_an_lb_sweep_completes_every_offered_transaction_below_saturation():
    s = _short_lb([{"id": "step", "rate": 1.0e6}])
    grid = {"cases": [[{"id": "a", "rate": 1.0e6}], [{"id": "b", "rate": 2.0e6}], [{"id": "c", "rate": 4.0e6}]]}
    res = rt.sweep(s, grid, jobs=2)
    df = res.to_dataframe()
    # constant arrivals far below the 32 cores' capacity: every offered transaction completes,
    # counted in a 450 us window (to one transaction, 1 / 450 us = 2222/s)
    one = 1 / 450e-6
    assert list(df["metric.tps"]) == pytest.approx([1.0e6, 2.0e6, 4.0e6], abs=one * 1.001)
    # CPU is linear in the rate when nothing queues (the Tolly method's premise)
    cpu = list(df["metric.cpu_util"])
    assert cpu[1] - cpu[0] == pytest.approx((cpu[2] - cpu[0]) / 3, rel=2e-3)
    units = df.attrs["units"]
    assert (units["metric.cpu_util"], units["metric.core0_util"], units["metric.tps"]) == ("%", "%", "transactions/s")
    fig = res.plot("cpu_util", "rate")
    assert fig.axes[0].get_ylabel() == "cpu_util"


def test_round_robin_with_a_session_table_moves_only_the_failed_servers_connections():
    df = rt.run(rt.load(REMAP)).to_dataframe().set_index("case")
    rr = df.loc["rr"]
    keys, servers = rr["param.keys"], rr["param.servers"]
    assert rr["metric.moved_pct"] == rr["metric.on_failed_pct"]
    # each connection lands on the failed server with probability 1/servers: within 5 binomial sigmas
    p = 1 / servers
    assert abs(rr["metric.moved"] - keys * p) <= 5 * math.sqrt(keys * p * (1 - p))
    # hashing modulo the pool size remaps most connections when the pool shrinks by one
    assert df.loc["sh", "metric.moved_pct"] > 50 > df.loc["maglev", "metric.moved_pct"]
    assert df.attrs["units"]["metric.moved_pct"] == "%"


def test_an_lb_mistake_from_python_names_the_case_key():
    with pytest.raises(rt.ScenarioError, match=r"with_\(\) key 'cases\[0\].rate': a step case needs 'rate'"):
        _short_lb([{"id": "x"}])
    res = rt.sweep(_short_lb([{"id": "s", "rate": 1e6}]), {"flood_ports": [8, 0]}, jobs=1)
    assert len(res.runs) == 1 and "key 'flood_ports'" in res.failures[0].message


NEW_KIND = '''
"""kind: coin_toss -- a test kind: n seeded tosses, heads counted."""
import random

from routertwin.results import CaseResult
from routertwin.scenario_loader import ScenarioModel

UNITS = {"heads": "tosses", r"share_\\w+": "fraction"}


class Schema(ScenarioModel):
    tosses: int


def run(scenario, progress):
    rng = random.Random(scenario.seed)
    heads = sum(rng.random() < 0.5 for _ in range(scenario.config.tosses))
    return [CaseResult("all", {"tosses": scenario.config.tosses},
                       {"heads": float(heads), "share_heads": heads / scenario.config.tosses})]
'''


def test_a_new_kind_is_run_swept_and_tabled_without_touching_the_api(tmp_path, monkeypatch):
    folder = tmp_path / "kinds"
    folder.mkdir()
    (folder / "coin_toss.py").write_text(textwrap.dedent(NEW_KIND))
    monkeypatch.setattr(routertwin.runners, "__path__", [*routertwin.runners.__path__, str(folder)])
    monkeypatch.delitem(sys.modules, "routertwin.runners.coin_toss", raising=False)
    s = rt.scenario({"scenario": "coins", "kind": "coin_toss", "seed": 3, "tosses": 1000})
    res = rt.sweep(s, {"seed": [1, 2], "tosses": [10, 1000]}, jobs=1)
    df = res.to_dataframe()
    import random

    for _, row in df.iterrows():  # the same tosses, made here
        rng = random.Random(int(row["seed"]))
        assert row["metric.heads"] == sum(rng.random() < 0.5 for _ in range(int(row["grid.tosses"])))
    assert df.attrs["units"]["metric.heads"] == "tosses"
    assert df.attrs["units"]["metric.share_heads"] == "fraction"
    with pytest.raises(rt.ScenarioError, match="key 'tosses': Input should be a valid integer"):
        s.with_(tosses="many")
    pd.testing.assert_frame_equal(rt.run(s.with_(seed=2, tosses=10)).to_dataframe().drop(columns=["seed"]),
                                  df[(df["seed"] == 2) & (df["grid.tosses"] == 10)]
                                  .drop(columns=["seed", "grid.seed", "grid.tosses"]).reset_index(drop=True),
                                  check_exact=True)


def test_the_tcp_path_kind_runs_through_the_api_below_the_tagged_gbe_line_rate():
    s = rt.load(ROOT / "scenarios" / "zstack" / "zstack-flat-direct.yaml").with_(
        {"transfer.window_bytes": 2_000_000})
    res = rt.sweep(s, {"seed": [1, 2]}, jobs=1)
    df = res.to_dataframe()
    # 1448 payload bytes per 1500-byte packet + 42 bytes of tagged Ethernet framing
    line = 1e9 * 1448 / 1542 / 1e6
    assert len(df) == 2 and ((df["metric.throughput_mbps"] <= line) & (df["metric.throughput_mbps"] > 0.9 * line)).all()
    assert df.attrs["units"]["metric.throughput_mbps"] == "Mbit/s"
    assert df.attrs["units"]["metric.response_time_s"] == "s"
