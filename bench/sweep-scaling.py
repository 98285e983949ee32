"""How a sweep's wall time grows with its number of points: inline (jobs=1),
the local process pool (jobs=2) and a Dask cluster on 127.0.0.1 (one
`dask scheduler` and two `dask worker --nworkers 1 --nthreads 1` processes,
started here as a user starts them on several machines).

Each point is an M/M/1 closed form (microseconds of model work), so the
times are the sweep machinery's own cost: validating the point, shipping it,
loading the scenario in the worker, returning the cases. The per-point cost
is the slope of a least-squares line through (N, wall time); the intercept is
the fixed cost (starting the pool, connecting to the scheduler).

    python bench/sweep-scaling.py [N ...]     # default: 8 32 128

Prints a table; docs/sweeps.md quotes a run of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import routertwin as rt


@contextlib.contextmanager
def local_cluster(workers: int = 2):
    """The address of a scheduler and `workers` worker processes on 127.0.0.1."""
    folder = Path(tempfile.mkdtemp(prefix="rt-bench-"))
    procs = []

    def start(*args):
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True))

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(folder / "s.json"))
        deadline = time.monotonic() + 120
        while not (folder / "s.json").exists() or not (folder / "s.json").read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError("the scheduler did not start")
            time.sleep(0.2)
        address = json.loads((folder / "s.json").read_text())["address"]
        for i in range(workers):
            start("worker", address, "--nworkers", "1", "--nthreads", "1", "--name", f"w{i}",
                  "--host", "127.0.0.1", "--no-dashboard")
        from distributed import Client

        with Client(address, timeout=120) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()


def main(sizes: list[int]) -> None:
    base = rt.scenario({"scenario": "bench", "kind": "queue_analytic", "model": "mm1", "service_rate": 1000.0,
                        "utilization": [0.5]})

    def timed(**how) -> list[float]:
        out = []
        for n in sizes:
            grid = {"service_rate": [1000.0 + k for k in range(n)]}
            t0 = time.perf_counter()
            res = rt.sweep(base, grid, **how)
            out.append(time.perf_counter() - t0)
            assert len(res.runs) == n and not res.failures
        return out

    rows = {"inline (jobs=1)": timed(jobs=1), "local pool (jobs=2)": timed(jobs=2)}
    with local_cluster() as address:
        timed(scheduler=address)  # the workers' first import of routertwin, not the sweep's cost
        rows["dask, 2 worker processes"] = timed(scheduler=address)
    print(f"{'':28}" + "".join(f"{f'N={n}':>10}" for n in sizes) + f"{'per point':>12}{'fixed':>10}")
    for name, times in rows.items():
        slope, intercept = np.polyfit(sizes, times, 1)
        print(f"{name:28}" + "".join(f"{t:>9.2f}s" for t in times) + f"{slope * 1e3:>10.1f}ms{intercept:>9.2f}s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [8, 32, 128])
