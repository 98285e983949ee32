"""The same scenario and seed give the same result whatever ran before it
in the process. ns-3's globals outlive a run (attribute defaults such as a
tcp_path run's MinRto, SACK and congestion control; ChecksumEnabled; the
seed; the next automatic random stream; the next MAC address), and the
redundant pair's CSMA backoff and ARP jitter draw random numbers: before
every run started from ns-3's defaults and assigned its random streams
itself, a webswitch_pair run in a `routertwin validate` worker depended on
the runs the worker had made before. The truth is the run in a fresh
Python process, where nothing ran before it."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import PLATFORMS, write_scenario

PROBE = ("import json, sys, routertwin; r = routertwin.run(routertwin.load(sys.argv[1]));"
         "print(json.dumps([[c.case, c.metrics, c.counters] for run in r.runs for c in run.cases], sort_keys=True))")

# tcp_path: a lossy gigabit link (random loss from the seed's own stream)
TCP_PATH = f"""
    scenario: tcp
    kind: tcp_path
    seed: 1
    platform: {PLATFORMS / 'zstack-gbe.yaml'}
    transfer: {{duration_s: 0.1}}
    link_types:
      lossy-1g: {{rate_bps: 1.0e9, frame_overhead_bytes: 38, queue_packets: 50, loss_rate: 0.0005}}
    path:
      - {{node: client, type: vm}}
      - {{node: server, type: vm, link: lossy-1g}}
"""
# the web switch's ns-3 engine: two clients, two servers, L7, a short window
WEBSWITCH = f"""
    scenario: web
    kind: webswitch
    seed: 1
    testbed: {PLATFORMS.parent / 'workloads' / 'webbench-nctu.yaml'}
    mode: l7
    clients: 2
    servers: 2
    http: ["1.0"]
    engine: ns3
    ns3: {{warmup_s: 0.03, duration_s: 0.1}}
    products: [{PLATFORMS / 'nctu-nortel-ace180e.yaml'}]
"""
# an L7 active/active pair: closed-loop threads and two downloads share
# the CSMA client segment (backoff), the hosts' ARP requests are jittered
PAIR = f"""
    scenario: pair
    kind: webswitch_pair
    seed: 1
    products: [{PLATFORMS / 'nctu-f5-bigip-ha.yaml'}]
    mode: l7
    redundancy: [active_active]
    session_sync: [none]
    clock_scale: 0.01
    advert_interval_s: 0.1
    kill_at_s: 1.2
    window_s: 0.3
    load_start_s: 0.5
    settle_s: 0.2
    threads_per_vip: 2
    downloads: 2
    download_start_s: 1.0
    download_bytes: 500000
"""


def in_a_fresh_process(path) -> list:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def here(path) -> list:
    import routertwin

    r = routertwin.run(routertwin.load(path))
    return json.loads(json.dumps([[c.case, c.metrics, c.counters] for run in r.runs for c in run.cases],
                                 sort_keys=True))


def test_each_ns3_kind_after_the_others_in_one_process_gives_its_fresh_process_result(tmp_path):
    paths = {name: write_scenario(tmp_path, text, "", f"{name}.yaml")[0]
             for name, text in (("tcp", TCP_PATH), ("web", WEBSWITCH), ("pair", PAIR))}
    # in this process: each kind after others (the pair after both, the web
    # switch after a tcp_path run, a tcp_path run after the pair)
    order = ["tcp", "web", "pair", "tcp"]
    results = [(name, here(paths[name])) for name in order]
    for name, result in results[1:]:
        assert result == in_a_fresh_process(paths[name]), name
    # the runs measured something (a pair's takeover, answers before the death)
    pair = dict(results)["pair"][0][1]
    assert pair["takeover_s"] > 0 and pair["requests_per_s_before"] > 0
