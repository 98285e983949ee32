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
from dataclasses import dataclass
from typing import Any, Callable, Sequence

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

    def load(self):
        """The validated scenario (LoadedScenario) this job runs."""
        from routertwin.scenario import load_scenario, validate_scenario

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

    try:
        scenario = job.load()
        cases = runners.get(scenario.kind).run(scenario, silent())
    except UserError as exc:
        return Outcome(error=str(exc))
    return Outcome(scenario=scenario, cases=list(cases))


def parallel_map(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    jobs: int | None = None,
    scheduler: Any = None,
    progress: Progress | None = None,
) -> list[Any]:
    """[fn(x) for x in items], in input order, run in parallel.

    `scheduler` (a Dask scheduler address or a distributed.Client) sends the
    work to that cluster; otherwise a ProcessPoolExecutor of `jobs` processes
    (default: CPU count) runs it; with one job or one item it runs inline.
    `fn` must be importable by name (a module-level function).
    """
    progress = progress or silent()
    progress.set_total(len(items))
    if scheduler is not None:
        return _dask_map(fn, items, scheduler, progress)
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(items) <= 1:
        out = []
        for x in items:
            out.append(fn(x))
            progress.advance()
        return out
    results: list[Any] = [None] * len(items)
    # spawn, not fork: the parent may run threads (rich's refresher, Dask).
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx) as pool:
        futures = {pool.submit(fn, x): i for i, x in enumerate(items)}
        try:
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                progress.advance()
        except BaseException:
            # Ctrl-C (or a job that raised): drop the queued work instead of
            # running it all before the error reaches the user.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return results


def _dask_map(fn, items, scheduler, progress: Progress) -> list[Any]:
    from distributed import Client
    from distributed import as_completed as dask_completed

    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler) if own else scheduler
    except OSError as exc:
        raise UserError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
    try:
        futures = client.map(fn, list(items), pure=False)
        for _ in dask_completed(futures):
            progress.advance()
        return client.gather(futures)
    finally:
        if own:
            client.close()


def run_jobs(jobs_list: Sequence[Job], *, jobs: int | None = None, scheduler: Any = None,
             progress: Progress | None = None) -> list[Outcome]:
    """Run scenario jobs in parallel; outcomes in input order."""
    return parallel_map(run_job, list(jobs_list), jobs=jobs, scheduler=scheduler, progress=progress)
