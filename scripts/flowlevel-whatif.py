#!/usr/bin/env python3
"""How the answer to a capacity question moves between constant-rate flows
and flows that come and go with heavy-tailed sizes (docs/workloads.md,
"Constant-rate flows against heavy-tailed flows"):

- CN78xx simple executive, ATOMIC tags, simple IMIX at 80 % of 100G: cores
  against latency and loss for 16 or 1000 flows, fixed (the tester's
  rotation at constant spacing, or with Poisson packets) or flow-level
  (Poisson flow starts, Pareto(1.2) or lognormal(2, 1.5) packets a flow,
  the same mean number active):
  scenarios/whatif/flowlevel-cn78-{fixed,poisson,pareto,lognormal}.yaml;
- T640, 32 x OC-192c, 40-byte packets at 90 % of the line rate, packet mode:
  constant spacing, Poisson packets, and Pareto(1.2) flows of 16 or 1000
  flows a port (scenarios/whatif/flowlevel-t640.yaml's cases, run here with
  each arrival form).

Usage: python3 scripts/flowlevel-whatif.py [--out build/flowlevel] [--figure docs/figures]
Prints the tables the docs quote; writes OUT/octeon.csv, OUT/t640.csv and
OUT/flowlevel.png (with --figure DIR, DIR/flowlevel-whatif.png instead).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHATIF = ROOT / "scenarios" / "whatif"


def octeon() -> list[dict]:
    from routertwin.progress import silent
    from routertwin.runners import pipeline
    from routertwin.scenario_loader import load_scenario

    rows = []
    for law in ("fixed", "poisson", "pareto", "lognormal"):
        for c in pipeline.run(load_scenario(WHATIF / f"flowlevel-cn78-{law}.yaml"), silent()):
            m = c.metrics
            rows.append({"flows": law, "flows_mean": c.params["flows"], "cores": c.params["cores"],
                         "gbps": m["gbps"], "loss_pct": m["loss_pct"], "latency_avg_us": m["latency_avg_us"],
                         "latency_p99_us": m.get("latency_p99_us", float("nan")),
                         "latency_max_us": m["latency_max_us"],
                         "flows_active_mean": m.get("flows_active_mean", float(c.params["flows"])),
                         "flows_active_max": m.get("flows_active_max", float(c.params["flows"])),
                         "bottleneck": c.bottleneck})
    return rows


T640_FORMS = {
    "constant": "",
    "poisson": "arrivals: {process: poisson}",
    "pareto-16": "arrivals: {process: poisson}\nflow_mix: {sizes: pareto, pareto_alpha: 1.2, flows: 16}",
    "pareto-1000": "arrivals: {process: poisson}\nflow_mix: {sizes: pareto, pareto_alpha: 1.2, flows: 1000}",
}


def t640(out: Path) -> list[dict]:
    from routertwin.progress import silent
    from routertwin.runners import router
    from routertwin.scenario_loader import load_scenario

    base = (WHATIF / "flowlevel-t640.yaml").read_text(encoding="utf-8")
    rows = []
    for form, keys in T640_FORMS.items():
        scen = out / f"t640-{form}.yaml"
        # the scenario's own keys, with this arrival form appended (paths
        # made absolute: the copy lives elsewhere)
        text = base.replace("../platforms/", f"{ROOT}/scenarios/platforms/").replace(
            "route_file: ", f"route_file: {WHATIF}/")
        scen.write_text(text + ("\n" + keys + "\n" if keys else ""), encoding="utf-8")
        for c in router.run(load_scenario(scen), silent()):
            m = c.metrics
            rows.append({"arrivals": form, "case": c.case, "offered_load": c.params["offered_load"],
                         "tx_pct": m["pct_of_theoretical"], "loss_pct": m["loss_pct"],
                         "latency_avg_us": m["latency_avg"], "latency_p99_us": m.get("latency_p99", float("nan")),
                         "latency_max_us": m["latency_max"],
                         "tester_wait_avg_us": m.get("tester_wait_avg_us", 0.0),
                         "tester_wait_max_us": m.get("tester_wait_max_us", 0.0),
                         "egress_queue_max": m.get("egress_queue_max", 0.0),
                         "flows_active_mean": m.get("flows_active_mean", 0.0)})
    return rows


def save(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def table(rows: list[dict], cols: list[str]) -> str:
    def cell(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    for ax, flows in zip(axes, (16, 1000)):
        for law, style in (("fixed", "o-"), ("poisson", "x--"), ("pareto", "s-"), ("lognormal", "^-")):
            pts = [r for r in rows if r["flows"] == law and r["flows_mean"] == flows]
            ax.plot([r["cores"] for r in pts], [max(r["latency_p99_us"], 0.1) for r in pts], style, label=law)
        ax.set_yscale("log")
        ax.set_xlabel("cores")
        ax.set_title(f"flows: {flows} (each at offered rate / {flows})")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("p99 latency (us)")
    axes[0].legend()
    fig.suptitle("CN78xx SE, ATOMIC tags, simple IMIX at 80 % of 100G: constant-rate vs heavy-tailed flows")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "flowlevel")
    ap.add_argument("--figure", type=Path, default=None)
    ap.add_argument("--skip-t640", action="store_true")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    oct_rows = octeon()
    save(oct_rows, args.out / "octeon.csv")
    print(table(oct_rows, ["flows", "flows_mean", "cores", "gbps", "loss_pct", "latency_avg_us", "latency_p99_us",
                           "latency_max_us", "flows_active_mean", "flows_active_max", "bottleneck"]))
    plot(oct_rows, (args.figure / "flowlevel-whatif.png") if args.figure else args.out / "flowlevel.png")
    if not args.skip_t640:
        t_rows = t640(args.out)
        save(t_rows, args.out / "t640.csv")
        print()
        print(table(t_rows, list(t_rows[0])))


if __name__ == "__main__":
    main()
