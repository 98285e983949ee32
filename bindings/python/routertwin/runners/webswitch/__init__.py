"""kind: webswitch -- web switches (L4 and L7 load balancers) on the NCTU
testbed of seed 003: WebBench clients, IIS servers on 100 Mbit/s links, an
L2 switch and a gigabit uplink to the switch under test (docs/nctu.md).

The testbed is a closed queueing network solved exactly by mean value
analysis: every WebBench thread is a customer, each request one cycle
through client, links, uplink, switch and server. The switch's processor
time per request comes from its product profile's cycles per operation
(packets, connection sides, URL rules, parsed bytes, rewrites) and the
operations its strategies imply (L4 DR or NAT path; delayed binding;
keep-alive by reset, downgrade, 302 redirect or server-connection reuse;
first-match, best-match or per-server rule lists).

Modules: `profiles` (product profiles), `tables` (the paper's tables 3-7
from them), `testbed` (workload profile and segment arithmetic), `mva`,
`model` (stations and the switch's work per request, URL switching or
cookie persistence), `schema`, `runner`, `figures` (the paper's figures
6-12 redrawn beside the twin).

Example (scenarios/nctu/nctu-l7.yaml):

    scenario: nctu-l7
    kind: webswitch
    seed: 1
    testbed: ../workloads/webbench-nctu.yaml
    mode: l7
    servers: 6
    http: ["1.0", "1.1"]
    rules: [3, 50]
    products:
      - ../platforms/nctu-nortel-ace180e.yaml
      - ../platforms/nctu-cisco-css11154-v510.yaml
"""

from routertwin.runners.webswitch.runner import check, run, unread_assumption
from routertwin.runners.webswitch.schema import Schema

# Every metric a case may report (validation mappings are checked against it).
METRICS = ("requests_per_s", "latency_avg", "throughput_mbps", "switch_utilization", "switch_us_per_request",
           "gain", "drop", "offered_rps", "latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us",
           "refused_pct", "unanswered_pct")
# Units (Results.to_dataframe's df.attrs["units"]).
UNITS = {"requests_per_s": "requests/s", "latency_avg": "ms", "throughput_mbps": "Mbit/s",
         "switch_utilization": "fraction", "switch_us_per_request": "us", "gain": "%", "drop": "%",
         "rules": "rules", "clients": "PCs", "servers": "PCs", "threads": "threads",
         "offered_rps": "requests/s", "latency_p50_us": "us", "latency_p99_us": "us", "latency_p999_us": "us",
         "latency_max_us": "us", "refused_pct": "%", "unanswered_pct": "%"}

__all__ = ["METRICS", "UNITS", "Schema", "check", "run", "unread_assumption"]
