"""RouterTwin: a discrete-event digital twin of routers, switches and load balancers.

Use it from Python as a researcher or a student would:

```python
import routertwin as rt

s = rt.load("tests/data/mmc_teaching.yaml")       # a scenario file, validated
s2 = s.with_({"service_rate": 2000, "simulate.warmup": 1000})   # a changed copy, validated
df = rt.run(s2).to_dataframe()                     # one row per case
res = rt.sweep(s, {"service_rate": [500, 1000, 2000]})   # every grid point, in parallel
fig = res.plot("wait_s", "utilization", series="service_rate")
```

- `load`, `scenario` and `Scenario.with_` build validated scenarios; every
  mistake raises `ScenarioError` with one line naming the key (and file and
  line when there is a file).
- `run` and `sweep` return `Results`: `to_dataframe`, `to_parquet`,
  `to_csv`, `to_json`, `plot`; a sweep's points that could not run are in
  `Results.failures` (`Failure`: the point and its message). `sweep` runs
  on local processes or a Dask cluster (`scheduler=`), streams to Parquet
  and resumes (`out=`).
- `rfc2544`, `validate` and `calibrate` return pandas DataFrames.
- `import_file` is `routertwin import KIND FILE`: a routing table the user
  runs (Linux, FRR, BIRD, MRT) becomes a scenario and its FIB file
  (docs/import.md).
- `run_lab` runs the live lab (root only): seed 004's paths built from
  network namespaces, measured with iperf3 beside the twin (docs/lab.md);
  `run_lab_haproxy` runs a haproxy.cfg in Debian's haproxy beside the twin.

docs/python-api.md is the tour; docs/sweeps.md sweeps on several machines;
docs/tutorials/ teaches with notebooks; docs/scenarios.md the scenario format.
"""

from routertwin._core import __version__
from routertwin.api import (Failure, Results, Scenario, calibrate, import_file, load, rfc2544, run, run_lab,
                            run_lab_haproxy, scenario, sweep, validate)
from routertwin.errors import ScenarioError, UserError

__all__ = [
    "__version__",
    "Scenario",
    "Results",
    "Failure",
    "ScenarioError",
    "UserError",
    "load",
    "scenario",
    "run",
    "sweep",
    "rfc2544",
    "validate",
    "calibrate",
    "run_lab",
    "run_lab_haproxy",
    "import_file",
]
