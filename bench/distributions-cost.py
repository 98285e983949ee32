"""What recording the distributions of issue 15 costs, as callgrind
instruction counts in the same run: the instructions spent in
QueueOccupancy::Enter (time-weighted queue lengths) and LatencyHistogram::Add
(latency histograms), against the instructions of the run's simulation
function, for three runs:

- lb: 20 ms of scenarios/adx/adx-tps.yaml's 5M TPS step (descriptor level;
  every frame's latency, every completed unit's response time, the 32 RSS
  cores' queues);
- router: 20 us of 32 OC-192 ports at 40 bytes, packet mode (every
  packet's latency per ingress port, each egress port's queue);
- pipeline: 2 ms of Poisson 64-byte frames at 5 Mpps on 4 cores (every
  frame's latency at the tester, the cores' queue).

    python bench/distributions-cost.py [lb router pipeline]

Needs valgrind; runs each case in a child python under callgrind (the lb
case takes about two minutes). Prints, per case, the packets, the
instructions of the simulation function and of each recorder, and the
recorders' share of the simulation.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r'''
import sys
from pathlib import Path
from routertwin import _core
case = sys.argv[1]
if case == "lb":
    import routertwin as rt
    from routertwin.runners.lb.native import step_config
    from routertwin.runners.lb.profiles import load_platform, load_prices
    s = rt.load(Path(sys.argv[2]) / "scenarios/adx/adx-tps.yaml")
    c = next(c for c in s.config.cases if c.id == "5m")
    keys = step_config(s.config, load_platform(s.config.platform), load_prices(s.config.fitted), s.seed, c, c.rate)
    keys.update({"duration_s": 0.02, "warmup_s": 0.002})
    print("packets", _core.run_lb(keys)["frames_measured"])
elif case == "router":
    print("packets", _core.run_router({"ports": 32, "ip_bytes": 40, "duration_s": 2e-5, "seed": 3})["rx_packets"])
else:
    print("packets", _core.run_pipeline({"num_cores": 4, "clock_hz": 1e9, "offered_pps": 5e6, "duration_s": 2e-3,
                                         "arrivals": "poisson", "frame_bytes": 64,
                                         "fixed_cycles_per_packet": 600})["rx_packets"])
'''

# the function whose inclusive count is the simulation of each case
SIMULATION = {"lb": "routertwin::RunLbScenario(", "router": "routertwin::RouterEngine::Advance(",
              "pipeline": "routertwin::RunForwardingScenario("}
RECORDERS = ("routertwin::QueueOccupancy::Enter(", "routertwin::LatencyHistogram::Add(")


def inclusive(annotated: str, name: str) -> int:
    for line in annotated.splitlines():
        if name in line:
            m = re.match(r"\s*([\d,]+)", line)
            if m:
                return int(m.group(1).replace(",", ""))
    return 0


def measure(case: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        child = Path(tmp) / "child.py"
        child.write_text(CHILD)
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                              str(child), case, str(ROOT)], capture_output=True, text=True, check=True)
        packets = int(re.search(r"packets (\d+)", run.stdout).group(1))
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                                   capture_output=True, text=True, check=True).stdout
    sim = inclusive(annotated, SIMULATION[case])
    parts = {name.split("::")[1] + "::" + name.split("::")[2].rstrip("("): inclusive(annotated, name)
             for name in RECORDERS}
    rec = sum(parts.values())
    detail = ", ".join(f"{k} {v:,} ({v / packets:.0f}/packet)" for k, v in parts.items())
    print(f"{case}: {packets:,} packets; simulation {sim:,} instructions ({sim / packets:,.0f}/packet); "
          f"{detail}; recording {100 * rec / sim:.1f} % of the simulation "
          f"(+{100 * rec / (sim - rec):.1f} % over it without)", flush=True)


def main() -> int:
    for case in sys.argv[1:] or ["router", "pipeline", "lb"]:
        measure(case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
