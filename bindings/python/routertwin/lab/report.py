"""The lab's table, its results files (JSON, CSV) and its plot.

Files go to OUT/lab-<UTC time>.{json,csv,png} and are written only after a
complete run, each through a temporary name, so a failed run leaves nothing.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import time
from pathlib import Path

from routertwin.lab import topology


def _mbps(x: float) -> str:
    return f"{x / 1e6:.1f}"


def rows(report) -> list[dict]:
    """One row per path: measured, twin, error (twin vs measured average)."""
    out = []
    for name, res in report.results.items():
        path = topology.PATHS[name]
        twin_bps = report.twin.predictions_bps.get(name)
        row = {
            "path": name,
            "role": res.role,
            "measured_avg_mbps": res.avg_bps / 1e6,
            "measured_min_mbps": res.min_bps / 1e6,
            "measured_max_mbps": res.max_bps / 1e6,
            "runs": len(res.runs),
            "intervals": len(res.intervals_bps),
            "retransmits": sum(m.retransmits for m in res.runs),
            "twin_mbps": twin_bps / 1e6 if twin_bps is not None else None,
            "error_pct": 100 * (twin_bps - res.avg_bps) / res.avg_bps if twin_bps is not None else None,
            "response_time_s": res.runs[0].response_time_s(res.avg_bps),
            "seed_case": path.seed_case,
            "seed_mbps": path.seed_mbps,
        }
        out.append(row)
    return out


def table(report):
    from rich.table import Table

    p = report.parameters
    t = Table(title=f"routertwin lab: seed 004's paths on this machine ({p.seconds:g} s x {p.rounds} per path, "
                    f"{p.interval_s:g} s intervals, links {p.wire_rate_bps / 1e6:g} Mbit/s)")
    for col in ("path", "measured avg", "min", "max", "twin", "error", "role", "response time",
                "seed (GbE testbed)"):
        t.add_column(col, justify="left" if col in ("path", "role") else "right")
    for r in rows(report):
        twin = f"{r['twin_mbps']:.1f}" if r["twin_mbps"] is not None else f"not available"
        err = f"{r['error_pct']:+.1f}%" if r["error_pct"] is not None else "-"
        t.add_row(r["path"], f"{r['measured_avg_mbps']:.1f}", f"{r['measured_min_mbps']:.1f}",
                  f"{r['measured_max_mbps']:.1f}", twin, err, r["role"], f"{r['response_time_s']:.3f} s",
                  f"{r['seed_mbps']:.1f}")
    t.caption = ("Mbit/s of TCP goodput (iperf3 receiver); error = (twin - measured) / measured; response time: "
                 "one 999,999,999-byte file (IxChariot's Throughput.scr) at the measured average")
    return t


def print_report(report, console) -> None:
    console.print(table(report))
    tw = report.twin
    if not tw.available:
        console.print(f"twin: not available ({tw.reason})")
    else:
        for c in tw.calibrated:
            console.print(f"calibrated on {c.from_path}: {c.name} = {c.value:.6g} {c.unit} ({c.note})")
        predicted = [n for n, r in report.results.items() if r.role == "predict"]
        console.print(f"predicted (not fitted): {', '.join(predicted) or 'none'}")
        for name, bottleneck in tw.bottlenecks.items():
            console.print(f"twin bottleneck on {name}: {bottleneck}")
        for note in tw.notes:
            console.print(f"twin: {note}")
    for name, res in report.results.items():
        path = topology.PATHS[name]
        cpu = ", ".join(f"{m.cpu_sender_pct:.0f}% / {m.cpu_receiver_pct:.0f}%" for m in res.runs)
        console.print(f"{name}: iperf3 CPU sender / receiver {cpu}; retransmits "
                      f"{sum(m.retransmits for m in res.runs)}; congestion control {res.runs[0].congestion}")
        if path.nat:
            m = res.runs[-1]
            console.print(f"{name}: client connected to {m.client_connected_to}, server accepted on "
                          f"{m.server_local} from {m.server_saw_client} (DNAT); the VM's own connection arrived "
                          f"from {m.snat_seen_as} (SNAT); NAT rule packets {m.nat_rule_packets}")
    mach = report.machine
    console.print(f"machine: {mach['cpus']} x {mach['cpu']}, kernel {mach['kernel']}, {mach['iperf3']}, "
                  f"load average {mach.get('loadavg_before', 0):.2f} before / {mach.get('loadavg_after', 0):.2f} "
                  "after: a busy machine measures its CPUs, not the link")
    for kind, path in report.files.items():
        console.print(f"wrote {path}")


def document(report, root: Path | None) -> dict:
    from routertwin import __version__
    from routertwin.results import git_commit

    p = report.parameters
    return {
        "what": "routertwin lab: seed 004's three L3 paths rebuilt from network namespaces, measured with iperf3",
        "routertwin_version": __version__,
        "git_commit": git_commit(Path(root).resolve()) if root is not None else "unknown",
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seed": p.seed,
        "parameters": {**dataclasses.asdict(p), "paths": list(p.paths),
                       "tbf_rate_bps": topology.tbf_rate_bps(p.wire_rate_bps),
                       "tbf_burst_bytes": topology.TBF_BURST_BYTES, "tbf_latency_ms": topology.TBF_LATENCY_MS,
                       "mtu": topology.MTU},
        "machine": report.machine,
        "namespaces": {f"{p.prefix}-<pid>-{role}": what for role, what in topology.ROLE_DOC.items()},
        "paths": {name: {"target": path.target, "server": path.server_address, "hops": list(path.hops),
                         "seed_case": path.seed_case, "seed_mbps": path.seed_mbps}
                  for name, path in topology.PATHS.items() if name in p.paths},
        "rows": rows(report),
        "measurements": {name: [dataclasses.asdict(m) for m in res.runs] for name, res in report.results.items()},
        "twin": dataclasses.asdict(report.twin),
    }


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def plot(report, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.6))
    names = list(report.results)
    for i, name in enumerate(names):
        res = report.results[name]
        xs = [i + 0.8 * (k / max(1, len(res.intervals_bps) - 1) - 0.5) * 0.5 for k in range(len(res.intervals_bps))]
        ax.scatter(xs, [x / 1e6 for x in res.intervals_bps], s=10, color="tab:blue",
                   label="measured interval" if i == 0 else None)
        ax.hlines(res.avg_bps / 1e6, i - 0.3, i + 0.3, color="tab:blue", label="measured average" if i == 0 else None)
        twin = report.twin.predictions_bps.get(name)
        if twin is not None:
            ax.hlines(twin / 1e6, i - 0.3, i + 0.3, color="tab:red", linestyles="--",
                      label="twin" if i == 0 else None)
        ax.hlines(topology.PATHS[name].seed_mbps, i - 0.3, i + 0.3, color="0.6", linestyles=":",
                  label="seed (GbE testbed)" if i == 0 else None)
    mss = next(m.mss for r in report.results.values() for m in r.runs)
    ax.axhline(topology.goodput_ceiling_bps(report.parameters.wire_rate_bps, mss) / 1e6, color="k", lw=0.8,
               label=f"wire goodput ceiling (MSS {mss})")
    ax.set_xticks(range(len(names)), [f"{n}\n({report.results[n].role})" for n in names])
    ax.set_ylabel("TCP goodput, Mbit/s")
    ax.set_title("routertwin lab on this machine")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    _write_atomic(path, buf.getvalue())


def write(report, out: Path, root: Path | None, plots: bool = True) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = "lab-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    doc = document(report, root)
    jpath, cpath, ppath = out / f"{stem}.json", out / f"{stem}.csv", out / f"{stem}.png"
    buf = io.StringIO()
    fields = list(doc["rows"][0])
    w = csv.DictWriter(buf, fieldnames=["utc", "git_commit", "kernel", "seed", *fields], lineterminator="\n")
    w.writeheader()
    for r in doc["rows"]:
        w.writerow({"utc": doc["utc"], "git_commit": doc["git_commit"], "kernel": doc["machine"]["kernel"],
                    "seed": doc["seed"], **r})
    if plots:
        plot(report, ppath)
    _write_atomic(cpath, buf.getvalue().encode())
    _write_atomic(jpath, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    return {"json": jpath, "csv": cpath, **({"png": ppath} if plots else {})}
