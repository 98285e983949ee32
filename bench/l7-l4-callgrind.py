"""Instructions per HTTP request on the L4 path and the L7 path, by callgrind.

Runs build/release/bench/l7_l4_request_bench under valgrind's callgrind
twice, collecting only inside the balancer's per-frame work:
  l4: routertwin::L4Balancer::Process (model/lb), 14 frames per request;
  l7: routertwin::WebSwitch::ReceiveFromClient / ReceiveFromServer
      (model/l7: parse, delayed binding, splice, the segments it builds,
      the ns3::Packets it sends), the same request between ns-3 TCP hosts.
Prints instructions per request and per frame, and the L7/L4 ratio (the
issue's goal: at most 3). Usage: python3 bench/l7-l4-callgrind.py [REQUESTS]
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "build" / "release" / "bench" / "l7_l4_request_bench"
TOGGLES = {
    "l4": ["routertwin::L4Balancer::Process*"],
    "l7": ["routertwin::WebSwitch::ReceiveFromClient*", "routertwin::WebSwitch::ReceiveFromServer*"],
}


def measure(mode: str, requests: int) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"callgrind.{mode}"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        cmd += [f"--toggle-collect={t}" for t in TOGGLES[mode]]
        cmd += [str(BENCH), mode, str(requests)]
        print(f"running {mode} under callgrind ...", file=sys.stderr, flush=True)
        run = subprocess.run(cmd, capture_output=True, text=True, check=True)
        total = int(re.search(r"^summary: (\d+)", out.read_text(), re.M).group(1))
        return total, run.stdout.strip()


def main() -> int:
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if not BENCH.exists():
        print(f"{BENCH} is not built (cmake --build build/release --target l7_l4_request_bench)", file=sys.stderr)
        return 2
    per = {}
    for mode in ("l4", "l7"):
        total, said = measure(mode, requests)
        frames = int(re.search(r"(\d+) (?:frames|packets)", said).group(1))
        per[mode] = total / requests
        print(said)
        print(f"{mode}: {total:,} instructions, {total / requests:,.0f} per request, {total / frames:,.0f} per frame")
    print(f"L7 / L4 instructions per request: {per['l7'] / per['l4']:.2f} (goal: at most 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
