"""Sweeps give the same results inline, on the local process pool and on a
Dask cluster (a LocalCluster here)."""

import pytest

from conftest import DATA
from routertwin.parallel import Job, parallel_map, run_jobs

SCENARIO = (DATA / "mmc_teaching.yaml").read_text().replace("customers: 40000", "customers: 8000")


@pytest.fixture
def scenario_jobs(write):
    paths = [write(f"s{seed}.yaml", SCENARIO.replace("seed: 7", f"seed: {seed}").replace("scenario: mmc-teaching", f"scenario: s{seed}"))
             for seed in (1, 2, 3)]
    bad = write("bad.yaml", SCENARIO.replace("model: mmc", "model: mm9"))
    return [Job(str(p)) for p in paths] + [Job(str(bad))]


def _cases(outcomes):
    return [(o.error, o.cases, o.scenario.name if o.scenario else None) for o in outcomes]


def test_local_pool_equals_inline(scenario_jobs):
    pooled = run_jobs(scenario_jobs, jobs=2)
    inline = run_jobs(scenario_jobs, jobs=1)
    assert _cases(pooled) == _cases(inline)
    assert [o.scenario.name for o in pooled[:3]] == ["s1", "s2", "s3"]  # input order
    assert pooled[3].error and "key 'model'" in pooled[3].error  # one bad scenario does not stop the others
    assert pooled[0].cases != pooled[1].cases  # seeds differ, so simulated metrics differ


def test_dask_local_cluster_equals_local_pool(scenario_jobs):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = run_jobs(scenario_jobs, scheduler=cluster.scheduler_address)
    assert _cases(on_dask) == _cases(run_jobs(scenario_jobs, jobs=2))


def test_parallel_map_keeps_input_order():
    assert parallel_map(abs, [-3, 2, -1, 0], jobs=2) == [3, 2, 1, 0]
