"""The Python API (`import routertwin as rt`): each call against a truth
computed independently of the twin (closed forms, Ethernet arithmetic,
itertools), its errors naming key, file and line, and determinism."""

import itertools
import math

import pandas as pd
import pytest
from conftest import DATA, MM1_SCENARIO, ROOT, line_of

import routertwin as rt

OCTEON_1C = ROOT / "scenarios" / "octeon" / "cn68-se-1core.yaml"


def test_the_package_exposes_a_documented_public_api():
    expected = {"load", "scenario", "run", "sweep", "rfc2544", "validate", "calibrate", "Scenario", "Results",
                "ScenarioError", "UserError", "__version__"}
    assert expected <= set(rt.__all__)
    for name in rt.__all__:
        assert hasattr(rt, name), name
        if name != "__version__":
            assert (getattr(rt, name).__doc__ or "").strip(), f"{name} has no docstring"


def test_no_public_name_shadows_a_submodule():
    # `import routertwin.x as m` reads the attribute `x` of the package first:
    # a function of the same name would be returned instead of the module.
    import importlib
    import pkgutil

    submodules = {m.name for m in pkgutil.iter_modules(rt.__path__) if not m.name.startswith("_")}
    assert not submodules & set(rt.__all__), submodules & set(rt.__all__)
    assert callable(rt.scenario) and callable(rt.sweep)
    for name in submodules:
        module = importlib.import_module(f"routertwin.{name}")
        assert getattr(rt, name) is module, name


# ------------------------------------------------------------- scenarios --

def test_load_gives_a_validated_scenario():
    s = rt.load(DATA / "mmc_teaching.yaml")
    assert (s.name, s.kind, s.seed) == ("mmc-teaching", "queue_analytic", 7)
    assert s.path == (DATA / "mmc_teaching.yaml").resolve()
    assert s.parameters["servers"] == [1, 2, 4]


def test_with_returns_a_new_scenario_and_leaves_the_old_one():
    s = rt.load(DATA / "mmc_teaching.yaml")
    t = s.with_({"simulate.warmup": 100}, seed=3, servers=[2])
    assert (t.seed, t.parameters["servers"], t.parameters["simulate"]["warmup"]) == (3, [2], 100)
    assert t.parameters["simulate"]["customers"] == s.parameters["simulate"]["customers"]
    assert (s.seed, s.parameters["servers"], s.parameters["simulate"]["warmup"]) == (7, [1, 2, 4], 4000)


def test_a_bad_override_names_the_file_and_key():
    s = rt.load(DATA / "mmc_teaching.yaml")
    with pytest.raises(rt.ScenarioError) as e:
        s.with_({"simulate.warmupp": 1})
    assert str(e.value) == f"{s.path}: with_() key 'simulate.warmupp': unknown key; did you mean 'warmup'?"
    with pytest.raises(rt.ScenarioError, match=r"with_\(\) key 'service_rate': Input should be a finite number"):
        s.with_(service_rate=math.inf)
    with pytest.raises(rt.ScenarioError, match=r"with_\(\) key 'servers\[1\]': Input should be greater than 0"):
        s.with_(servers=[1, -2])


def test_a_mistake_in_the_file_names_its_line(write):
    text = MM1_SCENARIO.replace("service_rate: 100", "service_rate: fast")
    path = write("q.yaml", text)
    with pytest.raises(rt.ScenarioError) as e:
        rt.load(path)
    assert str(e.value).startswith(f"{path}:{line_of(text, 'service_rate')}: key 'service_rate': ")


def test_an_override_cannot_hide_a_mistake_elsewhere_in_the_file(write):
    text = MM1_SCENARIO.replace("seed: 1", "seed: 1\nservce_rate: 3")
    path = write("q.yaml", text)
    with pytest.raises(rt.ScenarioError, match=rf"q.yaml:{line_of(text, 'servce_rate')}: key 'servce_rate'"):
        rt.load(path)


def test_scenario_builds_one_from_python_and_names_the_bad_key():
    keys = {"scenario": "q", "kind": "queue_analytic", "model": "mm1", "service_rate": 100, "utilization": [0.5]}
    s = rt.scenario(keys)
    assert s.path is None and s.kind == "queue_analytic"
    with pytest.raises(rt.ScenarioError) as e:
        rt.scenario({**keys, "utilisation": [0.5]})
    assert str(e.value) == "<scenario 'q'>: key 'utilisation': unknown key; did you mean 'utilization'?"
    with pytest.raises(rt.ScenarioError, match="key 'kind': unknown kind 'queue_analytc'; did you mean"):
        rt.scenario({**keys, "kind": "queue_analytc"})


def test_profile_paths_of_a_python_scenario_are_relative_to_base_dir():
    from ruamel.yaml import YAML

    keys = YAML(typ="safe").load(OCTEON_1C.read_text())
    s = rt.scenario(keys, base_dir=OCTEON_1C.parent)
    assert s.config.platform == (OCTEON_1C.parent / keys["platform"])
    with pytest.raises(rt.ScenarioError, match="key 'platform': file not found"):
        rt.scenario(keys, base_dir=ROOT)


# ------------------------------------------------------------------ runs --

def test_an_mm1_queue_waits_one_over_mu_minus_lambda():
    mu, lam = 100.0, 70.0
    s = rt.scenario({"scenario": "mm1", "kind": "queue_analytic", "model": "mm1", "service_rate": mu,
                     "arrival_rate": [lam]})
    df = rt.run(s).to_dataframe()
    assert len(df) == 1
    row = df.iloc[0]
    # W = 1/(mu - lambda) is the sojourn; the wait in queue is W - 1/mu (textbook M/M/1).
    assert row["metric.sojourn_s"] == pytest.approx(1 / (mu - lam), rel=1e-12)
    assert row["metric.wait_s"] == pytest.approx(1 / (mu - lam) - 1 / mu, rel=1e-12)
    assert df.attrs["units"]["metric.wait_s"] == "s"


def test_a_pipeline_at_line_rate_forwards_10g_over_84_byte_slots():
    # 64-byte frames on 10GbE: 64 + 8 preamble + 12 IFG = 84 bytes on the wire.
    s = rt.load(OCTEON_1C).with_({"port_rate_bps": 10e9, "method": "analytic",
                                  "sweep": {"frame": [64], "cores": [8]}})
    df = rt.run(s).to_dataframe()
    (row,) = df.to_dict("records")
    assert row["bottleneck"] == "line_rate_in"
    assert row["metric.pps"] == pytest.approx(10e9 / (8 * 84), rel=1e-12)
    assert df.attrs["units"]["metric.pps"] == "packets/s"


def test_every_row_records_scenario_seed_and_provenance():
    s = rt.load(DATA / "mmc_teaching.yaml").with_(seed=11)
    res = rt.run(s)
    df = res.to_dataframe()
    assert set(df["seed"]) == {11} and set(df["scenario"]) == {"mmc-teaching"}
    assert df.attrs["routertwin_version"] == rt.__version__
    assert df.attrs["git_commit"]
    (runinfo,) = df.attrs["runs"]
    assert runinfo["seed"] == 11 and runinfo["parameters"]["servers"] == [1, 2, 4]
    assert "tests/data/mmc_teaching.yaml" in runinfo["input_files"]
    (doc,) = __import__("json").loads(res.to_json())["runs"]
    assert doc["seed"] == 11 and doc["routertwin_version"] == rt.__version__ and "git_commit" in doc


def test_same_scenario_and_seed_give_an_identical_dataframe():
    s = rt.load(DATA / "mmc_teaching.yaml").with_({"simulate.customers": 5000, "simulate.warmup": 500})
    a, b = rt.run(s).to_dataframe(), rt.run(s).to_dataframe()
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs
    c = rt.run(s.with_(seed=8)).to_dataframe()
    assert not a["metric.sim_wait_s"].equals(c["metric.sim_wait_s"])


def test_a_sweep_runs_exactly_the_cartesian_product():
    s = rt.scenario({"scenario": "grid", "kind": "queue_analytic", "model": "mmc", "service_rate": 10,
                     "servers": [1], "utilization": [0.5]})
    grid = {"service_rate": [10, 20, 40], "servers": [[1], [2]], "utilization": [[0.3], [0.6]]}
    df = rt.sweep(s, grid, jobs=2).to_dataframe()
    got = [tuple(r) for r in df[["grid.service_rate", "grid.servers", "grid.utilization"]].itertuples(index=False)]
    assert got == list(itertools.product(*grid.values()))
    assert list(df["param.service_rate"]) == [float(p[0]) for p in itertools.product(*grid.values())]
    assert list(df["param.servers"]) == [p[1][0] for p in itertools.product(*grid.values())]


def test_a_sweep_equals_the_runs_it_is_made_of():
    s = rt.load(DATA / "mmc_teaching.yaml").with_({"simulate.customers": 3000, "simulate.warmup": 300})
    swept = rt.sweep(s, {"seed": [1, 2]}, jobs=2).to_dataframe()
    for seed in (1, 2):
        alone = rt.run(s.with_(seed=seed)).to_dataframe()
        part = swept[swept["seed"] == seed].drop(columns=["grid.seed"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(part, alone)


def test_a_bad_grid_key_is_named_before_anything_runs():
    s = rt.load(DATA / "mmc_teaching.yaml")
    with pytest.raises(rt.ScenarioError, match=r"with_\(\) key 'simulate.customerz': unknown key"):
        rt.sweep(s, {"simulate.customerz": [1, 2]})
    with pytest.raises(rt.ScenarioError, match="sweep grid key 'seed': expected a non-empty list"):
        rt.sweep(s, {"seed": []})


def test_parquet_round_trips_the_dataframe(tmp_path):
    s = rt.load(DATA / "mmc_teaching.yaml")
    res = rt.run(s)
    df = res.to_dataframe()
    back = pd.read_parquet(res.to_parquet(tmp_path / "r.parquet"))
    pd.testing.assert_frame_equal(back, df)
    assert back.attrs == df.attrs


def test_csv_has_one_row_per_case(tmp_path):
    res = rt.run(rt.load(DATA / "mmc_teaching.yaml"))
    text = res.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == text
    back = pd.read_csv(tmp_path / "r.csv")
    assert list(back["case"]) == [c.case for c in res.cases]


def test_plot_returns_the_scaling_figure():
    s = rt.load(DATA / "mmc_teaching.yaml")
    fig = rt.run(s).plot("wait_s", "utilization", series="servers")
    (ax,) = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("utilization", "wait_s")
    lines = [line for line in ax.get_lines() if line.get_label().startswith("twin")]
    assert sorted(line.get_label() for line in lines) == ["twin servers=1", "twin servers=2", "twin servers=4"]
    with pytest.raises(rt.UserError, match="no metric 'nope'"):
        rt.run(s).plot("nope", "utilization")


def test_plot_over_a_grid_key():
    s = rt.scenario({"scenario": "g", "kind": "queue_analytic", "model": "mm1", "service_rate": 10,
                     "utilization": [0.5]})
    fig = rt.sweep(s, {"service_rate": [10, 20, 40]}, jobs=1).plot("wait_s", "service_rate")
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "twin"]
    # M/M/1 at rho = 0.5: Wq = rho / (mu - lambda) = 0.5 / (mu / 2) = 1 / mu
    assert list(line.get_xdata()) == [10, 20, 40]
    assert list(line.get_ydata()) == pytest.approx([1 / 10, 1 / 20, 1 / 40])


# ------------------------------------------------------------- methods --

def test_rfc2544_throughput_of_a_line_rate_device_is_full_load():
    s = rt.load(OCTEON_1C).with_({"port_rate_bps": 10e9, "duration_us": 200, "warmup_us": 50,
                                  "sweep": {"frame": [64], "cores": [8]}})
    df = rt.rfc2544(s, "throughput", resolution=0.01)
    (row,) = df.to_dict("records")
    assert row["case"] == "64b-8c" and row["method"] == "throughput"
    assert row["throughput_load"] == 1.0
    assert row["throughput_fps"] == pytest.approx(10e9 / (8 * 84), rel=1e-12)
    trials = rt.rfc2544(s, "frmol", trials=True)
    assert list(trials["offered_load"]) == [1.0] and trials["lost"].iloc[0] == 0


def test_rfc2544_refuses_a_kind_without_a_tester_and_a_bad_method():
    q = rt.load(DATA / "mmc_teaching.yaml")
    with pytest.raises(rt.UserError, match="kind 'queue_analytic' offers no tester"):
        rt.rfc2544(q, "throughput")
    with pytest.raises(rt.UserError, match="method='fastest': not a method"):
        rt.rfc2544(rt.load(OCTEON_1C), "fastest")
    with pytest.raises(rt.UserError, match=r"routertwin.rfc2544: resolution=2: must be in \(0, 1\)"):
        rt.rfc2544(rt.load(OCTEON_1C), "throughput", resolution=2)
    with pytest.raises(rt.UserError, match=r"sizes=\(64, 65\): applies to method='size-sweep' only"):
        rt.rfc2544(rt.load(OCTEON_1C), "throughput", sizes=(64, 65))


def test_calibrate_check_reports_fresh_fits_equal_to_the_committed_files():
    df = rt.calibrate(check=True, root=ROOT)
    assert len(df) > 0 and set(df["study"]) >= {"octeon"}
    assert not df["stale"].any(), df[df["stale"]]
    assert all(isinstance(r, list) and r for r in df["rows"])


def test_validate_returns_every_mapped_row():
    df = rt.validate(["t640"], root=ROOT, jobs=2)
    from routertwin.validation.mapping import load_mappings

    mapped = load_mappings(ROOT)["t640"].rows
    assert list(df["id"]) == list(mapped)
    assert set(df["status"]) <= {"pass", "FAIL"}, df[df["status"] == "ERROR"][["id", "message"]]
    for r in df.itertuples(index=False):  # each verdict follows from its numbers
        m = mapped[r.id]
        if r.reference != 0:
            assert r.error_pct == pytest.approx((r.twin - r.reference) / abs(r.reference) * 100, rel=1e-9)
        ok = abs(r.error_pct) <= m.tolerance_pct if m.tolerance_pct is not None \
            else abs(r.twin - r.reference) <= m.tolerance_abs
        assert (r.status == "pass") == ok, r.id
    assert df.attrs["summaries"][-1].startswith("overall:")


def test_a_sweep_given_a_scheduler_runs_on_that_dask_cluster():
    distributed = pytest.importorskip("distributed")
    s = rt.scenario({"scenario": "d", "kind": "queue_analytic", "model": "mm1", "service_rate": 10,
                     "utilization": [0.5]})
    grid = {"service_rate": [10, 20]}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = rt.sweep(s, grid, scheduler=cluster.scheduler_address).to_dataframe()
    pd.testing.assert_frame_equal(on_dask, rt.sweep(s, grid, jobs=1).to_dataframe())
