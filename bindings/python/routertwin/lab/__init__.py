"""The live lab (issue 13, seed 004): seed 004's three L3 paths rebuilt from
network namespaces on this machine, measured with iperf3, beside the twin.

```python
from routertwin.lab import LabParameters, run_lab
report = run_lab(LabParameters(seconds=2), out=Path("build/lab"))
```

Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); raises `LabError` (a UserError)
otherwise. docs/lab.md says what each namespace is and what the numbers mean.
"""

from routertwin.lab.runner import LabParameters, LabReport, cleanup, run_lab
from routertwin.lab.system import LabError, NotPrivilegedError
from routertwin.lab.topology import PATHS

__all__ = ["LabParameters", "LabReport", "LabError", "NotPrivilegedError", "PATHS", "cleanup", "run_lab"]
