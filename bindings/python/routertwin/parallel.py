"""Sweeps: many independent scenario runs, on a local process pool by default
or on a Dask cluster when a scheduler address is given.

The unit of work is one scenario file (one process runs all its cases), so a
validation replay costs one process start per scenario, not per row. Workers
return plain picklable `Outcome`s; a user error in one scenario becomes that
outcome's `error` line instead of stopping the others.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from routertwin.errors import UserError
from routertwin.progress import Progress, silent
from routertwin.results import CaseResult


@dataclass(frozen=True)
class Job:
    path: str | None  # scenario file (None: the scenario is `data`, built in Python)
    seed: int | None = None  # replaces the file's seed when given
    overrides: tuple = ()  # "KEY=VALUE" as `routertwin run --set`, or (dotted key, value) pairs
    data: dict | None = None  # the scenario's keys when it has no file
    base_dir: str | None = None  # folder relative paths of `data` are resolved against
    shown: str | None = None  # the name errors give a scenario without a file
    # A folder of native results shared by the jobs of one interval replay
    # (runners/_shared/native.NativeMemo): a native call identical to one
    # already made there takes its result. None: every call runs.
    memo: str | None = None

    def load(self):
        """The validated scenario (LoadedScenario) this job runs."""
        from routertwin.scenario_loader import load_scenario, validate_scenario

        if self.data is None:
            return load_scenario(self.path, seed=self.seed, overrides=self.overrides)
        return validate_scenario(self.data, shown=self.shown or "<scenario>", base_dir=self.base_dir,
                                 seed=self.seed, overrides=self.overrides)


@dataclass
class Outcome:
    """What one job gave; run_jobs returns them in the order of its jobs."""

    scenario: Any = None  # LoadedScenario, None on error
    cases: list[CaseResult] | None = None
    error: str | None = None  # one line, when the scenario could not run


def run_job(job: Job) -> Outcome:
    """Load and run one scenario (in whichever process or worker runs it)."""
    from routertwin import runners
    from routertwin.runners._shared.native import NativeMemo

    if job.memo is not None:
        NativeMemo.enable(job.memo)
    try:
        scenario = job.load()
        cases = runners.get(scenario.kind).run(scenario, silent())
    except UserError as exc:
        return Outcome(error=str(exc))
    finally:
        if job.memo is not None:
            NativeMemo.disable()
    return Outcome(scenario=scenario, cases=list(cases))


# Spawned processes import the caller's script again (multiprocessing's rule);
# a script that sweeps at import time makes each of them die at start.
_BROKEN_POOL = ("a process of the local pool died before finishing its point: out of memory or killed, or "
                "the script calling rt.sweep runs it at import time (spawned processes import the script "
                "again): put the call under `if __name__ == \"__main__\":`, or pass jobs=1")


def completed(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    jobs: int | None = None,
    scheduler: Any = None,
) -> Iterator[tuple[int, Any]]:
    """(index, fn(items[index])) for every item, as each finishes (in any
    order), run in parallel.

    `scheduler` (a Dask scheduler address or a distributed.Client) sends the
    work to that cluster: a worker that dies takes its running items with it
    and the scheduler runs them again on another worker, so none is lost.
    Otherwise a ProcessPoolExecutor of `jobs` processes (default: CPU count)
    runs them; with one job or one item they run inline. `fn` must be
    importable by name (a module-level function). Closing the iterator early
    (an interrupt) cancels what has not started.
    """
    items = list(items)
    if scheduler is not None:
        yield from _dask_completed(fn, items, scheduler)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(items) <= 1:
        for i, x in enumerate(items):
            yield i, fn(x)
        return
    # spawn, not fork: the parent may run threads (rich's refresher, Dask).
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx)
    try:
        futures = {pool.submit(fn, x): i for i, x in enumerate(items)}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()
    except BrokenProcessPool:
        raise UserError(_BROKEN_POOL) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def parallel_map(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    jobs: int | None = None,
    scheduler: Any = None,
    progress: Progress | None = None,
) -> list[Any]:
    """[fn(x) for x in items], in input order, run in parallel as
    `completed` runs them; `progress` advances as each finishes."""
    progress = progress or silent()
    progress.set_total(len(items))
    results: list[Any] = [None] * len(items)
    for i, r in completed(fn, items, jobs=jobs, scheduler=scheduler):
        results[i] = r
        progress.advance()
    return results


def _dask_completed(fn, items, scheduler) -> Iterator[tuple[int, Any]]:
    from distributed import Client
    from distributed import as_completed as dask_completed

    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout=30) if own else scheduler
    except (OSError, TimeoutError) as exc:
        raise UserError(f"scheduler {scheduler}: cannot connect: {exc}") from None
    futures = []
    try:
        futures = client.map(fn, items, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for fut, result in dask_completed(futures, with_results=True):
            yield index[fut.key], result
    finally:
        for f in futures:
            f.cancel()
        if own:
            client.close()


def run_jobs(jobs_list: Sequence[Job], *, jobs: int | None = None, scheduler: Any = None,
             progress: Progress | None = None) -> list[Outcome]:
    """Run scenario jobs in parallel; outcomes in input order."""
    return parallel_map(run_job, list(jobs_list), jobs=jobs, scheduler=scheduler, progress=progress)
