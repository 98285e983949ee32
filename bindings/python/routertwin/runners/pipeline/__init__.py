"""kind: pipeline -- a multi-core packet-processing pipeline (an Octeon-style
network processor) offered frames by an RFC 2544-style tester.

A packet enters through the port (line rate with preamble and inter-frame
gap), is handed by the packet-input and work-scheduling units to one of the
cores, costs that core a number of cycles (fixed + the C core's priced
operation counters + per-byte + crypto per byte), and leaves through the port
again (line rate of the *output* frame, which ESP tunnelling makes longer).
Shared resources the cores contend for are stations of a closed queueing
network whose customers are the busy cores:

- the packet-I/O engine (SSO get_work + PKO send + buffer free), visited once
  per packet for a time fitted once per chip family (its ceiling);
- an optional lock (a serialized critical section per packet, e.g. the Linux
  transmit path), held for a fitted number of core cycles.

Work ordering: with the SSO's ATOMIC tag a flow's packets are processed one
at a time, so at most `flows` cores are busy; ORDERED (and UNTAGGED) tags let
every core work and only restore order on output.

Two methods compute a case: `packet` runs the C++ packet-level engine
(`routertwin._core.run_pipeline`, keys in model/pipeline/helper/forwarding-scenario.h);
`analytic` is the closed form (exact Mean Value Analysis of the closed
network, capped by line rate in/out, offered load and memory bandwidth).
`both` runs the packet level and reports the analytic throughput beside it.
At packet level a case may offer a frame-size mix, an empirical size file or
a pcap trace, with on/off or MMPP arrivals and Zipf flows (`arrivals`,
`flow_mix`, `traces`; docs/workloads.md); the closed form takes the mix's
(or the trace's) size distribution.

Modules: `schema` (the scenario's keys and its cases), `profiles` (platform,
workload and fitted-parameter files), `frame_cost` (ESP growth and cycles
per frame), `resolve` (a case on its profiles), `analytic` (the closed
form), `native` (the packet-level engine), `metrics`, `tester` (the RFC 2544
trial protocol) and `runner` (check and run).

Example (scenarios/octeon/cn68-se-1core.yaml):

    scenario: cn68-se-1core
    kind: pipeline
    seed: 1
    platform: ../platforms/cn68xx-1500-ddr3-1066.yaml
    workload: ../workloads/ipfwd-se.yaml
    fitted: ../platforms/fitted/octeon.yaml
    flows: 4
    tag_type: ORDERED
    duration_us: 1000
    warmup_us: 250
    sweep: {frame: [64, 128, 256, 1518], cores: [1]}
"""

from routertwin.runners.pipeline.metrics import METRICS, UNITS
from routertwin.runners.pipeline.runner import check, run
from routertwin.runners.pipeline.schema import Schema
from routertwin.runners.pipeline.tester import testers

__all__ = ["METRICS", "UNITS", "Schema", "check", "run", "testers"]
