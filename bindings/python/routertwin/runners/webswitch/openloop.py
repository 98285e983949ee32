"""The open-loop what-if (docs/workloads.md "Web switches under open-loop
load"): an open_loop scenario's cases as a table of offered rate,
answered rate, mean and p50/p99/p99.9 response time and the requests left
unanswered, and a plot of response time against offered load per product:

    python -m routertwin.runners.webswitch.openloop SCENARIO [--plot PNG]

Nothing is fitted: every number comes from the scenario's profiles and
testbed file (the same as the closed-loop NCTU rows)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run_cases(path: Path):
    from routertwin import api

    return api.run(api.load(path)).cases


def markdown(cases) -> str:
    lines = ["| case | offered req/s | answered req/s | mean ms | p50 ms | p99 ms | p99.9 ms | switch CPU | "
             "unanswered % | refused % |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        m = c.metrics
        lines.append(f"| {c.case} | {m['offered_rps']:.0f} | {m['requests_per_s']:.0f} | {m['latency_avg']:.2f} | "
                     f"{m['latency_p50_us'] / 1e3:.2f} | {m['latency_p99_us'] / 1e3:.2f} | "
                     f"{m['latency_p999_us'] / 1e3:.2f} | {m['switch_utilization']:.0%} | "
                     f"{m['unanswered_pct']:.1f} | {m['refused_pct']:.1f} |")
    return "\n".join(lines)


def plot(cases, path: Path) -> Path:
    """Mean and p99 response time (log scale) against the offered rate, one
    colour per product."""
    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    products: dict[str, list] = {}
    for c in cases:
        products.setdefault(c.params["product"], []).append(c)
    for product, cs in products.items():
        cs = sorted(cs, key=lambda c: c.params["offered_rps"])
        x = [c.params["offered_rps"] for c in cs]
        line, = ax.plot(x, [c.metrics["latency_avg"] for c in cs], "o-", label=f"{product} mean")
        ax.plot(x, [c.metrics["latency_p99_us"] / 1e3 for c in cs], "s--", color=line.get_color(),
                label=f"{product} p99")
    ax.set_yscale("log")
    ax.set_xlabel("offered requests/s (Poisson)")
    ax.set_ylabel("response time (ms)")
    ax.set_title("NCTU testbed, L7 URL switching, HTTP/1.0, open-loop Poisson requests (ns-3 engine)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m routertwin.runners.webswitch.openloop",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--plot", type=Path, default=None, help="write the response-time plot here (PNG)")
    a = ap.parse_args(argv)
    cases = run_cases(a.scenario)
    print(markdown(cases))
    if a.plot:
        print(f"plot: {plot(cases, a.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
