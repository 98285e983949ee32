"""kind: router -- a cell-switched router with POS line cards (the Juniper
T640 of seed 001) offered traffic by an RFC 2544 tester.

The native model is `routertwin._core.run_router` (keys documented in
model/router/helper/router-scenario.h): POS framing with byte stuffing computed from
each packet's octets, a dp_lpm route lookup, segmentation into fabric cells,
an iSLIP crossbar per packet forwarding engine, egress re-framing and queues.
`mode: packet` simulates every packet (windows of milliseconds); `mode:
steady` is the long-run mode for the 30 s and 5 minute tests (rates from a
sample of real packets, queues as Lindley recursions over blocks).

Each case runs one RFC 2544 method (routertwin.methods.rfc2544) over the
model as a tester would:

    frmol       one trial at 100 % offered load
    load        one trial at `offered_load`
    throughput  zero-loss throughput by bisection (`resolution`), then the
                trial at that load
    ndr_pdr     NDR and PDR (loss <= pdr_loss_pct %) bisections
    loss_curve  RFC 2544 26.3 from 100 % in steps of `step`; one result per load
    size_sweep  FRMOL at each size from `sizes[0]` up in 1-byte steps until the
                first loss-free size (at most to `sizes[1]`); one result per size

Example (scenarios/t640/t640-30s.yaml):

    scenario: t640-30s
    kind: router
    seed: 1
    platform: ../platforms/t640.yaml
    fitted: ../platforms/fitted/t640.yaml
    mode: steady
    duration_s: 30
    cases:
      - {case: 40b-500k, method: frmol, ip_bytes: 40, routes: 500000,
         routes_as_destinations: true}

Modules: `schema` (the scenario's keys and the trial limits), `platform`
(the platform profile and the fitted pipeline latency), `analytic` (POS
frame overhead, the tester's theoretical maximum rate, zero-load latency),
`native` (the native model `_core.run_router`), `tester` (the device behind
an RFC 2544 tester), `metrics` (a trial as a CaseResult) and `runner`
(check and run).

Metrics (per case): pps (frames forwarded per second, the report's packet
rate), tx_pps, pct_of_theoretical (tester transmit rate as % of the
no-escape maximum), rx_pct, throughput_gbps (IP octets), latency_min,
latency_avg, latency_max (us), lost_packets, zero_loss (1 or 0),
mean_ip_bytes, mean_ingress_escapes, fabric_load, lookup_load; counters are
the drop reasons. A case's `ip_mix` (a mix in `mixes`, or simple_imix)
offers every packet its own IP size in packet mode (docs/workloads.md).
`arrivals:` (constant, poisson, onoff, mmpp; packet mode) sets when each
tester port offers its frames; packet mode then also reports
tester_wait_avg_us, tester_wait_max_us and tester_waited_fraction (the
frames' wait for the tester's line, outside the latency).
`packet_window_s` runs each steady-state trial again at packet level for
that long and adds its figures as window_<metric> and
distributions["packet_window"]. Wall-clock time is reported on the progress line only.
"""

from routertwin.runners.router.metrics import UNITS
from routertwin.runners.router.runner import check, run
from routertwin.runners.router.schema import Schema
from routertwin.runners.router.tester import testers

__all__ = ["UNITS", "Schema", "check", "run", "testers"]
