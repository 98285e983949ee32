#!/usr/bin/env python3
"""What WebBench's thread count per client PC does to the 12 seed-003 rows
(docs/nctu.md, "The misses re-examined"): the replays run with the
testbed's `client.threads` set to each value given, every other number as
the profiles have it. A what-if, not a calibration: the paper gives no
thread count and no calibrate row pins it, so the profile keeps its
assumption whatever this prints.

Usage (from the checkout): python3 scripts/nctu-threads-whatif.py 2 5
                           python3 scripts/nctu-threads-whatif.py --engine ns3 2 6
Prints a markdown table: each row's reference value and, per thread
count, the twin's value and its error (percent, or points for the drops).
With --engine ns3 each row's ns-3 twin runs (scenarios/nctu/ns3/, the
same file name: the testbed at packet level, the servers sharing the
gigabit uplink with the clients).
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

from routertwin import api
from routertwin.scenario_loader import read_yaml_file

TESTBED = Path("scenarios") / "workloads" / "webbench-nctu.yaml"


def testbed_with_threads(root: Path, threads: int, folder: Path) -> Path:
    """A copy of the testbed profile whose client.threads is `threads`."""
    text = (root / TESTBED).read_text(encoding="utf-8")
    line = "  threads: 2\n"
    if text.count(line) != 1:
        raise SystemExit(f"{TESTBED}: expected one '{line.strip()}' line to replace")
    path = folder / f"webbench-threads-{threads}.yaml"
    path.write_text(text.replace(line, f"  threads: {threads}\n"), encoding="utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("threads", type=int, nargs="+", help="WebBench threads per client PC, one what-if each")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="the repository checkout (default: .)")
    ap.add_argument("--engine", choices=("mva", "ns3"), default="mva",
                    help="mva: the replay scenarios; ns3: their twins in scenarios/nctu/ns3/")
    args = ap.parse_args()
    root = args.root.resolve()
    mapping, _ = read_yaml_file(root / "validation" / "mapping" / "nctu.yaml")
    with open(root / "validation" / "reference.csv", newline="", encoding="utf-8") as fh:
        ref = {r["id"]: r for r in csv.DictReader(fh)}
    with tempfile.TemporaryDirectory() as tmp:
        testbeds = {t: testbed_with_threads(root, t, Path(tmp)) for t in args.threads}
        runs: dict[tuple[str, int], dict] = {}
        print("| row | paper | " + " | ".join(f"{t} threads" for t in args.threads) + " |")
        print("|---|---|" + "---|" * len(args.threads))
        for row, m in mapping["rows"].items():
            paper = float(ref[row]["value"])
            cells = []
            for t in args.threads:
                if (m["scenario"], t) not in runs:
                    path = root / m["scenario"]
                    if args.engine == "ns3":
                        path = path.parent / "ns3" / path.name
                    s = api.load(path).with_(testbed=str(testbeds[t]))
                    runs[m["scenario"], t] = {c.case: c.metrics for c in api.run(s).cases}
                v = runs[m["scenario"], t][m["case"]][m["metric"]]
                err = f"{v - paper:+.1f} points" if m["metric"] == "drop" else f"{(v - paper) / paper * 100:+.0f} %"
                cells.append(f"{v:.3g} ({err})")
            print(f"| {row} | {paper:g} {ref[row]['unit']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
