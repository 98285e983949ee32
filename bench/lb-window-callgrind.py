"""Instructions per frame of the lb kind's long flows, paced and under TCP
windows, by callgrind (issue 16: the tester's window schedule must not make
the per-frame path dear).

Runs `_core.run_lb` under valgrind's callgrind for an http10 step of 100 kB
responses (110 frames a connection) at two durations, collecting only inside
routertwin::RunLbScenario, and prints the marginal instructions per frame
(the difference between the runs over the difference of their frames: the
set-up is the same in both). Modes: paced (segments one step gap apart, the
script of before), windowed (tcp_windows: slow start and a 64 KiB receive
window on a 100 us RTT). With --python another interpreter (another build of
routertwin, e.g. main's) runs the paced mode for comparison.

    python3 bench/lb-window-callgrind.py [--python /path/to/python] [--modes paced,windowed]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = {"workload": "http10", "rate": 2e4, "num_cores": 32, "fixed_cycles_per_packet": 100,
          "response_table": {"100000": 1.0}}
WINDOWED = {"tcp_windows": True, "tcp_rtt_s": 1e-4, "tcp_receive_window_bytes": 65535}

DRIVER = """
import json, sys
from routertwin import _core
cfg = json.loads(sys.argv[1])
out = _core.run_lb(cfg)
frames = out["frames_measured"]
print(json.dumps({"frames": frames, "packets_per_unit": out["packets_per_unit"]}))
"""


def measure(python: str, cfg: dict) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               "--toggle-collect=routertwin::RunLbScenario*", python, "-c", DRIVER, json.dumps(cfg)]
        run = subprocess.run(cmd, capture_output=True, text=True, check=True)
        total = int(re.search(r"^summary: (\d+)", out.read_text(), re.M).group(1))
        return total, json.loads(run.stdout.strip().splitlines()[-1])["frames"]


def marginal(python: str, cfg: dict) -> float:
    short = measure(python, {**cfg, "duration_s": 0.002, "warmup_s": 0.0005})
    long = measure(python, {**cfg, "duration_s": 0.006, "warmup_s": 0.0005})
    return (long[0] - short[0]) / (long[1] - short[1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=None, help="also run the paced mode with this interpreter")
    ap.add_argument("--modes", default="paced,windowed")
    args = ap.parse_args()
    for mode in args.modes.split(","):
        cfg = {**CONFIG, **(WINDOWED if mode == "windowed" else {})}
        print(f"{mode}: {marginal(sys.executable, cfg):,.0f} instructions per frame", flush=True)
    if args.python:
        print(f"paced ({args.python}): {marginal(args.python, CONFIG):,.0f} instructions per frame", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
