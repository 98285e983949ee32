"""rt.sweep point by point: a failing point does not stop the others, results
stream to Parquet as points finish, an interrupted sweep resumes without
rerunning what finished, progress shows on stderr, and a mistake made from
Python reads like the same mistake in a file."""

import json
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from conftest import DATA

import routertwin as rt
import routertwin.parallel
import routertwin.runners.queue_analytic as queue

REAL_RUN_JOB = routertwin.parallel.run_job
MM1 = {"scenario": "q", "kind": "queue_analytic", "model": "mm1", "service_rate": 100.0, "utilization": [0.5]}


def _teaching(customers=3000):
    return rt.load(DATA / "mmc_teaching.yaml").with_({"simulate.customers": customers,
                                                      "simulate.warmup": customers // 10})


# ---------------------------------------------------------------- failures --

def test_a_point_with_an_impossible_value_fails_alone(capfd):
    s = rt.scenario(MM1)
    res = rt.sweep(s, {"service_rate": [100.0, -5.0, 400.0]}, jobs=1)
    # the others ran, and each is the M/M/1 closed form: W = 1 / (mu - lambda), lambda = mu / 2
    assert [r.point for r in res.runs] == [{"service_rate": 100.0}, {"service_rate": 400.0}]
    assert [c.metrics["sojourn_s"] for c in res.cases] == pytest.approx([1 / 50.0, 1 / 200.0], rel=1e-12)
    (failure,) = res.failures
    assert failure.point == {"service_rate": -5.0}
    assert failure.message.startswith("<scenario 'q'>: with_() key 'service_rate': ")
    assert "greater than or equal to" in failure.message
    df = res.to_dataframe()
    assert list(df["grid.service_rate"]) == [100.0, 400.0]
    assert df.attrs["failures"] == [{"grid": {"service_rate": -5.0}, "message": failure.message}]
    err = capfd.readouterr().err
    assert err.splitlines() == [f"sweep q: point {{'service_rate': -5.0}} failed: {failure.message}"]
    assert "Traceback" not in err


def test_a_point_the_model_refuses_at_run_time_fails_alone(monkeypatch):
    # The runner raises a user error for one seed, as a native model refusing a
    # combination of keys would: that point is reported, the others return.
    real_run = queue.run

    def run(scenario, progress):
        if scenario.seed == 2:
            raise rt.UserError(f"{scenario.name}: key 'seed': refused by the model")
        return real_run(scenario, progress)

    monkeypatch.setattr(queue, "run", run)
    res = rt.sweep(rt.scenario(MM1), {"seed": [1, 2, 3]}, jobs=1)
    assert [r.point["seed"] for r in res.runs] == [1, 3]
    assert [(f.point, f.message) for f in res.failures] == [({"seed": 2}, "q: key 'seed': refused by the model")]


def test_a_grid_no_point_accepts_raises_naming_the_key():
    with pytest.raises(rt.ScenarioError, match=r"with_\(\) key 'service_rate': Input should be a valid number"):
        rt.sweep(rt.scenario(MM1), {"service_rate": ["fast", "faster"]})


@pytest.mark.parametrize("key, value, named, expected", [
    ("service_rate", "fast", "service_rate", "Input should be a valid number, unable to parse string as a number"),
    ("servers", [0], "servers[0]", "Input should be greater than 0"),
    ("model", "mm2", "model", "Input should be 'mm1', 'md1' or 'mmc'"),
    ("sevice_rate", 1.0, "sevice_rate", "unknown key; did you mean 'service_rate'?"),
])
def test_a_mistake_from_python_reads_like_the_same_mistake_in_a_file(write, key, value, named, expected):
    keys = {**MM1, key: value}
    # the same keys as a file, one per line (JSON values are YAML)
    path = write("q.yaml", "".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items()))
    line = list(keys).index(key) + 1
    with pytest.raises(rt.ScenarioError) as in_file:
        rt.load(path)
    with pytest.raises(rt.ScenarioError) as from_python:
        rt.scenario(keys)
    with pytest.raises(rt.ScenarioError) as changed:
        rt.scenario(MM1).with_({key: value})
    assert str(in_file.value).startswith(f"{path}:{line}: key '{named}': {expected}")
    message = str(in_file.value).split(f"key '{named}': ")[1]
    assert str(from_python.value) == f"<scenario 'q'>: key '{named}': {message}"
    assert str(changed.value) == f"<scenario 'q'>: with_() key '{named}': {message}"


# ---------------------------------------------------- streaming and resume --

def test_points_stream_to_parquet_and_the_whole_table_lands_at_the_end(tmp_path):
    s = _teaching()
    res = rt.sweep(s, {"seed": [1, 2, 3]}, jobs=1, out=tmp_path / "out")
    parts = sorted((tmp_path / "out" / "points").glob("*.parquet"))
    assert len(parts) == 3
    streamed = pd.concat([pd.read_parquet(p) for p in parts]).sort_values(["seed", "case"]).reset_index(drop=True)
    whole = pd.read_parquet(tmp_path / "out" / "results.parquet")
    df = res.to_dataframe()
    pd.testing.assert_frame_equal(whole, df, check_exact=True)
    pd.testing.assert_frame_equal(streamed, df.sort_values(["seed", "case"]).reset_index(drop=True),
                                  check_exact=True)


def _counting(monkeypatch, stop_after=None):
    calls = []
    real = REAL_RUN_JOB

    def run_job(job):
        if stop_after is not None and len(calls) == stop_after:
            raise KeyboardInterrupt  # Ctrl-C while the next point runs
        calls.append(job)
        return real(job)

    monkeypatch.setattr(routertwin.parallel, "run_job", run_job)
    return calls


def test_an_interrupted_sweep_resumes_without_rerunning_finished_points(tmp_path, monkeypatch):
    s = _teaching()
    grid = {"seed": [1, 2, 3, 4, 5]}
    out = tmp_path / "out"
    _counting(monkeypatch, stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        rt.sweep(s, grid, jobs=1, out=out)
    assert len(list((out / "points").glob("*.parquet"))) == 2
    assert not (out / "results.parquet").exists()  # the whole table only once every point is done
    assert not list(out.rglob("*.tmp"))
    calls = _counting(monkeypatch)
    resumed = rt.sweep(s, grid, jobs=1, out=out)
    assert sorted(job.overrides[-1][1] for job in calls) == [3, 4, 5]  # only the points not yet done
    fresh = rt.sweep(s, grid, jobs=1)
    pd.testing.assert_frame_equal(resumed.to_dataframe(), fresh.to_dataframe(), check_exact=True)
    assert resumed.to_json() == fresh.to_json()
    # a changed scenario is a different point: nothing is read back
    calls = _counting(monkeypatch)
    rt.sweep(s.with_(service_rate=2000), grid, jobs=1, out=out)
    assert len(calls) == 5


def test_ctrl_c_on_a_pooled_sweep_keeps_the_finished_points(tmp_path):
    out = tmp_path / "out"
    # A shell without job control starts background jobs with SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler: a CI that runs the
    # suite as such a job would see the sweep finish (rc 0). Ctrl-C in a
    # terminal always interrupts, so the script asks for Python's own handler.
    # Points of about 0.5 s: with 0.13 s ones the sweep could finish between
    # the first point's file and the signal.
    script = ("import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
              f"import routertwin as rt\n"
              f"s = rt.load({str(DATA / 'mmc_teaching.yaml')!r}).with_("
              f"{{'simulate.customers': 160000, 'simulate.warmup': 16000}})\n"
              f"rt.sweep(s, {{'seed': list(range(1, 9))}}, jobs=2, out={str(out)!r})\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("points/*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err
    done = {p.name: p.stat().st_mtime_ns for p in out.glob("points/*.parquet")}
    assert 1 <= len(done) < 8 and not list(out.rglob("*.tmp"))
    s = rt.load(DATA / "mmc_teaching.yaml").with_({"simulate.customers": 160000, "simulate.warmup": 16000})
    resumed = rt.sweep(s, {"seed": list(range(1, 9))}, jobs=2, out=out)
    assert len(resumed.runs) == 8
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("points/*.parquet") if p.name in done} == done


def test_progress_shows_on_stderr(capfd):
    rt.sweep(rt.scenario(MM1), {"service_rate": [100.0, 200.0, 300.0]}, jobs=1, progress=True)
    assert capfd.readouterr().err.splitlines()[-1] == "sweep q: 3/3"
