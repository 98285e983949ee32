"""kind: lb -- an L4 load balancer (the Brocade ServerIron ADX 8000 of seed
000) offered the Tolly report's test traffic.

Each frame runs through the real C core (session table, scheduler, full NAT,
SYN cookies, rate limit, DNS answer) inside the C++ model
(`routertwin._core.run_lb`, keys in model/lb/helper/lb-scenario.h); its
counted operations, priced by the platform profile and the fitted prices,
are its cycles on one of the application cores (RSS: the core that owns the
connection's session shard). A case is one of:

- `step`: one load step at `rate` units/s (transactions, connections,
  queries, or attack SYNs): completed rate, mean and per-core CPU, cycles per
  unit, drops by reason;
- `tolly`: the Tolly method (routertwin.methods.tolly): load steps, the
  least-squares line CPU = a + b x rate with its covariance, the rate at 100 %
  CPU with its interval, and a run to true saturation that shows whether the
  line holds and what saturates first;
- `fill`: connections inserted into one core's session shard until it
  refuses one; the box holds cores x that.

Modules: `schema` (keys and cases), `profiles` (platform and fitted files),
`native` (the run_lb config of a case, the call), `metrics`, `runner`
(check and run).

Example (scenarios/adx/adx-tps.yaml):

    scenario: adx-tps
    kind: lb
    seed: 1
    platform: ../platforms/adx8000.yaml
    fitted: ../platforms/fitted/adx.yaml
    workload: http11
    cases:
      - {id: 5m, rate: 5.0e6}
      - {id: tolly, method: tolly, steps: [1.0e6, 2.0e6, 3.0e6, 4.0e6, 5.0e6]}
"""

from routertwin.runners.lb.metrics import METRICS, UNITS
from routertwin.runners.lb.runner import check, run
from routertwin.runners.lb.schema import Schema

__all__ = ["METRICS", "UNITS", "Schema", "check", "run"]
