#!/usr/bin/env python3
"""How the answer to "how many cores / ports for 100G" moves between 64-byte
frames, IMIX and a trace (docs/workloads.md): the CN78xx simple-executive
forwarder at packet level beside its closed form, and the T640's POS ports
(the trace's sizes as a mix, and the trace itself replayed on every port).

Usage: python3 scripts/workload-whatif.py [--out build/workloads] [--figure docs/figures]
Writes OUT/bulk-tcp.pcap (the trace, generated here), OUT/octeon.csv,
OUT/t640.csv and OUT/*.png, and prints the tables docs/workloads.md quotes.
With --figure DIR it also writes DIR/workloads-100g.png, the figure the docs
show, and DIR/workloads-100g.csv, the numbers it draws; the PNG carries the
CSV's SHA-256 in its Description, so a test can tie the committed figure to
its data and the data to a regeneration (tests/test_workload_figure.py).

The trace is synthetic (no external data): 1000 TCP bulk flows seen in one
direction, full-size 1518-byte data frames and the 64-byte ACKs of the
reverse flows 2:1 (RFC 1122 section 4.2.3.2: a receiver acknowledges at
least every second full-size segment), flows picked Zipf(1) (assumption),
arrivals on/off: bursts of 1-32 frames back to back at 100G (assumption:
TCP sends a window's worth at line rate), then a silence. The trace is
rescaled to 90 % of the line rate: at 100 % its bursts would queue in the
tester without bound (a port at load 1 with variable arrivals), so the
tester itself could not offer it.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import math
import random
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_trace(path: Path, packets: int = 60000, seed: int = 1) -> None:
    rng = random.Random(seed)
    weights = [1 / k for k in range(1, 1001)]
    flows = rng.choices(range(1000), weights=weights, k=packets)
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    t_ns = 0
    left = 0
    for i in range(packets):
        length = 60 if i % 3 == 2 else 1514  # + FCS: 64 / 1518
        if left == 0:
            left = rng.randint(1, 32)
            t_ns += int(rng.expovariate(1 / 4000))  # silence, mean 4 us (assumption)
        left -= 1
        frame = bytearray(length)
        frame[12:14] = b"\x08\x00"
        frame[14] = 0x45
        frame[23] = 6  # TCP
        f = flows[i]
        frame[26:30] = bytes([198, 18, f >> 8, f & 0xFF])
        frame[30:34] = bytes([198, 19, 0, 1])
        frame[34:38] = struct.pack(">HH", 1024 + f, 80)
        out.append(struct.pack("<IIII", t_ns // 10**9, (t_ns % 10**9) // 1000, length, length) + bytes(frame))
        t_ns += math.ceil((length + 4 + 20) * 8 / 100e9 * 1e9)  # back to back at 100G
    path.write_bytes(b"".join(out))


def octeon(out: Path, trace: Path) -> list[dict]:
    from routertwin.progress import silent
    from routertwin.runners import pipeline
    from routertwin.scenario_loader import load_scenario

    cores = [1, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48]
    scen = out / "octeon.yaml"
    scen.write_text(f"""
scenario: workloads-cn78-se
kind: pipeline
seed: 1
platform: {ROOT}/scenarios/platforms/cn78xx-1800-ddr4-1866.yaml
workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
fitted: {ROOT}/scenarios/platforms/fitted/octeon.yaml
flows: 1000
tag_type: ORDERED
method: both
frame_order: sequence
duration_us: 400
warmup_us: 100
traces:
  bulk_tcp: {{file: {trace}, rescale: true, loop: true}}
cases:
""" + "".join(f"  - {{frame: {f}, cores: {n}, offered_load: {load}}}\n"
              for f, load in (("64", 1.0), ("simple_imix", 1.0), ("bulk_tcp", 0.9)) for n in cores))
    rows = []
    for c in pipeline.run(load_scenario(scen), silent()):
        m = c.metrics
        rows.append({"workload": str(c.params["frame"]), "cores": c.params["cores"],
                     "offered_load": c.params["offered_load"], "mpps": m["pps"] / 1e6,
                     "mpps_closed_form": m["pps_analytic"] / 1e6, "gbps": m["gbps"],
                     "line_rate_fraction": m["line_rate_fraction"], "latency_avg_us": m["latency_avg_us"],
                     "bottleneck": c.bottleneck})
    return rows


def t640(out: Path, trace: Path) -> list[dict]:
    from routertwin import _core
    from routertwin.progress import silent
    from routertwin.runners import router
    from routertwin.scenario_loader import load_scenario

    sizes = _core.trace_summary(str(trace))["ip_sizes"]
    # POS carries the IP packet: the trace's sizes as a mix at line rate
    # (bulk_tcp_sizes), and the trace itself replayed on every port, its
    # bursts rescaled to 90 % of the line rate as for the Octeon (bulk_tcp).
    mix = ", ".join(f"{{bytes: {max(32, b)}, weight: {n}}}" for b, n in sorted(sizes.items()))
    scen = out / "t640.yaml"
    scen.write_text(f"""
scenario: workloads-t640
kind: router
seed: 1
platform: {ROOT}/scenarios/platforms/t640.yaml
fitted: {ROOT}/scenarios/platforms/fitted/t640.yaml
mode: packet
duration_s: 0.0002
mix_order: sequence
mixes:
  bulk_tcp_sizes: [{mix}]
traces:
  # the tester's port-to-peer destinations: the trace's one destination
  # (198.19.0.1) has no route in the T640's generated FIB
  bulk_tcp: {{file: {trace}, destinations: tester}}
cases:
  - {{case: 40B, method: load, ip_bytes: 40}}
  - {{case: simple_imix, method: load, ip_mix: simple_imix}}
  - {{case: bulk_tcp_sizes, method: load, ip_mix: bulk_tcp_sizes}}
  - {{case: bulk_tcp, method: load, ip_mix: bulk_tcp, offered_load: 0.9, duration_s: 0.005}}
""")
    rows = []
    for c in router.run(load_scenario(scen), silent()):
        m = c.metrics
        per_port = m["throughput_gbps"] / 32
        rows.append({"workload": c.case, "offered_load": c.params["offered_load"],
                     "mpps_32_ports": m["pps"] / 1e6, "ip_gbps_32_ports": m["throughput_gbps"],
                     "ip_gbps_per_port": per_port, "ports_for_100g": math.ceil(100 / per_port),
                     "mean_ip_bytes": m["mean_ip_bytes"], "fabric_load": m["fabric_load"],
                     "lookup_load": m["lookup_load"], "loss_pct": m["loss_pct"],
                     "latency_avg_us": m["latency_avg"]})
    return rows


def save(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def figure_rows(oct_rows: list[dict], t640_rows: list[dict]) -> list[dict]:
    """Every number the figure draws: the CN78xx's Gbit/s by cores (packet
    level and closed form) and the T640's IP Gbit/s a port and ports for 100G."""
    rows = [{"panel": "cn78xx", "series": r["workload"], "x": r["cores"], "gbps": r["gbps"],
             "gbps_closed_form": r["gbps"] * r["mpps_closed_form"] / r["mpps"], "ports_for_100g": ""}
            for r in oct_rows]
    rows += [{"panel": "t640", "series": r["workload"], "x": "", "gbps": r["ip_gbps_per_port"],
              "gbps_closed_form": "", "ports_for_100g": r["ports_for_100g"]} for r in t640_rows]
    return rows


def plot(oct_rows: list[dict], t640_rows: list[dict], out: Path, description: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for wl in ("64", "simple_imix", "bulk_tcp"):
        rows = [r for r in oct_rows if r["workload"] == wl]
        ax[0].plot([r["cores"] for r in rows], [r["gbps"] for r in rows], marker="o", label=f"{wl} packet")
        ax[0].plot([r["cores"] for r in rows], [r["gbps"] * r["mpps_closed_form"] / r["mpps"] for r in rows],
                   linestyle=":", color=ax[0].lines[-1].get_color(), label=f"{wl} closed form")
    ax[0].axhline(100, color="grey", linewidth=0.8)
    ax[0].set(xlabel="cores", ylabel="Gbit/s of frames forwarded", title="CN78xx 1.8 GHz SE, 100G port")
    ax[0].legend(fontsize=7)
    names = [r["workload"] for r in t640_rows]
    ax[1].bar(names, [r["ip_gbps_per_port"] for r in t640_rows])
    for i, r in enumerate(t640_rows):
        ax[1].text(i, r["ip_gbps_per_port"], f"{r['ports_for_100g']} ports", ha="center", va="bottom")
    ax[1].set(ylabel="IP Gbit/s per OC-192c port", title="T640: ports for 100G of IP")
    fig.tight_layout()
    fig.savefig(out / "workloads-100g.png", dpi=120, metadata={"Description": description})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "workloads")
    ap.add_argument("--figure", type=Path, help="also write the docs' figure and its data here (docs/figures)")
    args = ap.parse_args()
    args.out = args.out.resolve()  # the scenarios written there name the trace by this path
    args.out.mkdir(parents=True, exist_ok=True)
    trace = args.out / "bulk-tcp.pcap"
    write_trace(trace)
    print("octeon ...", file=sys.stderr)
    oct_rows = octeon(args.out, trace)
    print("t640 ...", file=sys.stderr)
    t_rows = t640(args.out, trace)
    save(oct_rows, args.out / "octeon.csv")
    save(t_rows, args.out / "t640.csv")
    plot(oct_rows, t_rows, args.out)
    if args.figure is not None:
        args.figure.mkdir(parents=True, exist_ok=True)
        data = args.figure / "workloads-100g.csv"
        save(figure_rows(oct_rows, t_rows), data)
        digest = hashlib.sha256(data.read_bytes()).hexdigest()
        plot(oct_rows, t_rows, args.figure, description=f"data {data.name} sha256 {digest}")
    for wl in ("64", "simple_imix", "bulk_tcp"):
        rows = [r for r in oct_rows if r["workload"] == wl]
        # the fewest cores at which the cores no longer bind: what binds then
        first = next(r for r in rows if r["bottleneck"] != "cores")
        print(f"CN78xx SE {wl:12s}: from {first['cores']} cores {first['gbps']:.1f} Gbit/s of frames, "
              f"{first['mpps']:.2f} Mpps (closed form {first['mpps_closed_form']:.2f}), bound by "
              f"{first['bottleneck'] or 'the offered load'}; {rows[-1]['gbps']:.1f} Gbit/s at 48 cores")
    for r in t_rows:
        print(f"T640 {r['workload']:14s} at {r['offered_load']:.0%}: {r['ip_gbps_per_port']:.2f} IP Gbit/s per port, "
              f"{r['ports_for_100g']} ports for 100G; fabric load {r['fabric_load']:.3f}, lookup load "
              f"{r['lookup_load']:.3f}, latency {r['latency_avg_us']:.2f} us, loss {r['loss_pct']:.3f} %")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
