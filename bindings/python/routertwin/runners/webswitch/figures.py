"""Figures 6 to 12 of seed 003 (NCTU's six web switches) redrawn: the twin's
bars or curves with the paper's values on the same axes.

The paper's figures are images that are not in the seed's text; what it
prints of them (the numbers its prose quotes, the comparisons it states)
is transcribed with seed line and quote in validation/figures/nctu.yaml.
Each plot draws the twin from the replay scenarios (scenarios/nctu/*.yaml)
and the paper's numbers as black markers where it gives one; where it
gives none, the plot says so and quotes what the paper says instead.

    python3 -m routertwin.runners.webswitch.figures [--out docs/figures]

writes nctu-fig06.png ... nctu-fig12.png (docs/nctu.md shows them).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from routertwin.scenario_loader import read_yaml_file

# Relative to the repository checkout (--root; the working directory by
# default): the installed package draws the checkout it is run in.
DATA = Path("validation") / "figures" / "nctu.yaml"
SCENARIOS = Path("scenarios") / "nctu"
# Seed 003's order (tables 2 to 7), and the short names the plots print.
PRODUCTS = ["nortel-ace180e", "cisco-css11154-v510", "cisco-css11154-v310", "f5-bigip-ha", "foundry-serveironxl",
            "radware-wsdpro", "3com-superstack3"]
LABEL = {"nortel-ace180e": "Nortel", "cisco-css11154-v510": "Cisco 5.10", "cisco-css11154-v310": "Cisco 3.10",
         "f5-bigip-ha": "F5", "foundry-serveironxl": "Foundry", "radware-wsdpro": "Radware",
         "3com-superstack3": "3Com"}
COOKIE_METHOD_NUMBER = {"prearranged": 1, "insert": 2, "learn": 3}  # section 5.6's order, figure 12's bar labels
TWIN = "#4c78a8"
TWIN_2 = "#f58518"
PAPER = "black"
DPI = 110


@dataclass(frozen=True)
class PaperFigures:
    """validation/figures/nctu.yaml: per figure, its values and claims."""

    figures: dict[int, dict]

    def values(self, figure: int, metric: str | None = None) -> list[dict]:
        return [v for v in self.figures[figure].get("values", []) if metric is None or v["metric"] == metric]

    def claims(self, figure: int) -> list[dict]:
        return list(self.figures[figure].get("claims", []))


def load_paper(root: Path) -> PaperFigures:
    data, _ = read_yaml_file(root / DATA)
    return PaperFigures({int(f["figure"]): f for f in data["figures"]})


def run_replays(root: Path) -> dict[str, dict]:
    """Every case of the four replay scenarios, by case id: params and metrics."""
    from routertwin import api

    out: dict[str, dict] = {}
    for name in ("nctu-l4-dr", "nctu-l4-nat", "nctu-l7", "nctu-cookie"):
        for c in api.run(api.load(root / SCENARIOS / f"{name}.yaml")).cases:
            out[c.case] = {"params": dict(c.params), "metrics": dict(c.metrics), "bottleneck": c.bottleneck}
    return out


def _metric(cases: dict[str, dict], case: str, metric: str) -> float | None:
    c = cases.get(case)
    return None if c is None else c["metrics"].get(metric)


def _claims_note(ax, claims: list[dict], head: str = "the paper prints no value; it says:") -> None:
    """What the paper says of the figure, under the axes, with seed lines."""
    lines = [head] + [textwrap.fill(f"- {c['says']} (seed line {c['line']})", 80, subsequent_indent="  ")
                      for c in claims]
    ax.text(0.0, -0.16, "\n".join(lines), transform=ax.transAxes, va="top", ha="left", fontsize=7)


def _paper_marker(ax, x, y, label: str | None, hollow: bool = False) -> None:
    ax.plot([x], [y], marker="D", ms=7, ls="none", color=PAPER, mfc="white" if hollow else PAPER, label=label,
            zorder=5)


def _bars(ax, names: list[str], values: list[float | None], color: str, offset: float = 0.0, width: float = 0.8,
          label: str | None = None) -> None:
    for i, v in enumerate(values):
        if v is None:
            ax.text(i + offset, 0, "not\nmodelled", ha="center", va="bottom", fontsize=7, color="0.4")
            continue
        ax.bar(i + offset, v, width=width, color=color, label=label if i == 0 or label is None else None)
    ax.set_xticks(range(len(names)), [LABEL[n] for n in names], fontsize=8)


def _l4_figure(plt, paper: PaperFigures, cases: dict, number: int, forwarding: str, products: list[str]):
    fig, (ax_rate, ax_lat) = plt.subplots(1, 2, figsize=(11, 5.6))
    rate = [_metric(cases, f"{p}-l4-{forwarding}-http11", "requests_per_s") for p in products]
    lat = [_metric(cases, f"{p}-l4-{forwarding}-http11", "latency_avg") for p in products]
    _bars(ax_rate, products, rate, TWIN, label="twin")
    ax_rate.set_ylabel("requests/s (14 client PCs)")
    ax_rate.set_title(f"figure {number}: requests/s, L4 {forwarding.upper()}, HTTP/1.1", fontsize=9)
    _claims_note(ax_rate, paper.claims(number))
    ax_rate.set_ylim(0, max(v for v in rate if v) * 1.25)
    _bars(ax_lat, products, lat, TWIN, label="twin")
    first = True
    for v in paper.values(number, "latency_avg"):
        _paper_marker(ax_lat, products.index(v["product"]), v["value"], "paper (section text)" if first else None)
        first = False
    ax_lat.set_ylabel("mean latency at the maximum rate (ms)")
    ax_lat.set_title("mean WebBench latency: the rows the text prints", fontsize=9)
    if number == 6:
        mbps = _metric(cases, f"{products[0]}-l4-dr-http11", "throughput_mbps")
        (ref,) = paper.values(6, "throughput_mbps")
        ax_rate.text(0.99, 0.99, f"response traffic: twin {mbps:.0f} Mbit/s,\npaper: over {ref['value']:.0f} Mbit/s "
                                 f"(section 6.2, seed line {ref['line']})", transform=ax_rate.transAxes,
                     ha="right", va="top", fontsize=7, bbox={"facecolor": "white", "edgecolor": "0.7"})
    ax_lat.legend(fontsize=7, loc="upper right")
    return fig


def figure_6(plt, paper, cases):
    return _l4_figure(plt, paper, cases, 6, "dr", ["nortel-ace180e", "foundry-serveironxl", "radware-wsdpro",
                                                   "f5-bigip-ha"])


def figure_7(plt, paper, cases):
    return _l4_figure(plt, paper, cases, 7, "nat", ["nortel-ace180e", "cisco-css11154-v510", "f5-bigip-ha",
                                                    "foundry-serveironxl", "radware-wsdpro", "3com-superstack3"])


def figure_8(plt, paper, cases):
    products = ["nortel-ace180e", "cisco-css11154-v510", "f5-bigip-ha", "foundry-serveironxl", "radware-wsdpro",
                "3com-superstack3"]
    fig, ax = plt.subplots(figsize=(8, 5.6))
    l4 = [_metric(cases, f"{p}-l4-nat-http11", "requests_per_s") for p in products]
    l7 = [_metric(cases, f"{p}-l7-nat-http11-r3", "requests_per_s") or 0.0 for p in products]
    _bars(ax, products, l4, TWIN, -0.2, 0.4, "twin L4 NAT")
    _bars(ax, products, l7, TWIN_2, 0.2, 0.4, "twin L7, 3 rules (3Com: none)")
    ax.set_ylabel("requests/s, HTTP/1.1")
    ax.set_title("figure 8: L4 against L7 (3 rules), HTTP/1.1", fontsize=9)
    ax.set_ylim(0, max(l4) * 1.25)
    _claims_note(ax, paper.claims(8))
    ax.legend(fontsize=7, loc="upper right")
    return fig


def figure_9(plt, paper, cases):
    products = ["nortel-ace180e", "cisco-css11154-v510", "cisco-css11154-v310", "f5-bigip-ha",
                "foundry-serveironxl", "radware-wsdpro"]
    fig, (ax_rate, ax_gain) = plt.subplots(1, 2, figsize=(12, 5.6))
    r10 = [_metric(cases, f"{p}-l7-nat-http10-r3", "requests_per_s") for p in products]
    r11 = [_metric(cases, f"{p}-l7-nat-http11-r3", "requests_per_s") for p in products]
    _bars(ax_rate, products, r10, TWIN, -0.2, 0.4, "twin HTTP/1.0")
    _bars(ax_rate, products, r11, TWIN_2, 0.2, 0.4, "twin HTTP/1.1")
    ax_rate.set_ylabel("L7 requests/s (3 rules)")
    ax_rate.set_title("figure 9: HTTP/1.0 against HTTP/1.1", fontsize=9)
    ax_rate.set_ylim(0, max(r11) * 1.25)
    _claims_note(ax_rate, paper.claims(9))
    ax_rate.legend(fontsize=7, loc="upper right")
    gains = [_metric(cases, f"{p}-l7-r3-http11-gain", "gain") for p in products]
    _bars(ax_gain, products, gains, TWIN, label="twin")
    shown = False
    for v in paper.values(9, "gain"):
        x = products.index(v["product"])
        if v.get("unreliable"):
            ax_gain.annotate(f"paper: ~{v['value']:.0f} % (tenfold),\nnot to be used", (x, 0), xytext=(x, 150),
                             ha="center", fontsize=7, arrowprops={"arrowstyle": "-", "color": "0.5"})
            continue
        _paper_marker(ax_gain, x, v["value"], "paper (section text)" if not shown else None)
        shown = True
    for p in ("foundry-serveironxl", "radware-wsdpro"):
        _paper_marker(ax_gain, products.index(p), 0.0, None, hollow=True)
    ax_gain.plot([], [], marker="D", ls="none", color=PAPER, mfc="white",
                 label="paper: HTTP/1.0 value reused (0 by construction)")
    ax_gain.set_ylabel("HTTP/1.1 gain over HTTP/1.0 (%)")
    ax_gain.set_ylim(0, 200)
    ax_gain.set_title("gain: the rows the text prints", fontsize=9)
    ax_gain.legend(fontsize=7, loc="upper right")
    return fig


def figure_10(plt, paper, cases):
    products = ["nortel-ace180e", "cisco-css11154-v510", "f5-bigip-ha", "foundry-serveironxl", "radware-wsdpro"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.6), sharey=True)
    for ax, http in zip(axes, ("1.0", "1.1")):
        for p in products:
            pts = sorted((c["params"]["rules"], c["metrics"]["requests_per_s"]) for cid, c in cases.items()
                         if c["params"].get("product") == f"nctu-{p}" and c["params"].get("mode") == "l7"
                         and c["params"].get("http") == http and c["params"].get("persistence") == "none")
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", ms=3, label=f"twin {LABEL[p]}")
        ax.set_xlabel("URL rules configured")
        ax.set_title(f"figure 10: requests/s against rules, HTTP/{http}", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    axes[0].set_ylabel("L7 requests/s")
    axes[0].set_ylim(0, axes[0].get_ylim()[1] * 1.1)
    _claims_note(axes[0], paper.claims(10))
    return fig


def figure_11(plt, paper, cases):
    # section 5.5: HTTP/1.0 drops, except F5 and Cisco in HTTP/1.1
    version = {"nortel-ace180e": "10", "cisco-css11154-v510": "11", "f5-bigip-ha": "11",
               "foundry-serveironxl": "10", "radware-wsdpro": "10"}
    products = list(version)
    fig, ax = plt.subplots(figsize=(8, 5.6))
    drops = [_metric(cases, f"{p}-l7-http{v}-rules-drop", "drop") for p, v in version.items()]
    _bars(ax, products, drops, TWIN, label="twin")
    ax.set_xticks(range(len(products)), [f"{LABEL[p]}\nHTTP/{version[p][0]}.{version[p][1]}" for p in products],
                  fontsize=8)
    first = True
    for v in paper.values(11, "drop"):
        _paper_marker(ax, products.index(v["product"]), v["value"], "paper (section text)" if first else None)
        first = False
    ax.set_ylabel("drop in requests/s, 3 to 50 rules (%)")
    ax.set_title("figure 11: the drop with more rules", fontsize=9)
    ax.set_ylim(0, max(max(d for d in drops if d is not None), 10) * 1.7)
    _claims_note(ax, paper.claims(11), head="the paper also says:")
    ax.legend(fontsize=7, loc="upper right")
    return fig


def figure_12(plt, paper, cases):
    products = ["nortel-ace180e", "cisco-css11154-v510", "f5-bigip-ha", "foundry-serveironxl", "radware-wsdpro",
                "3com-superstack3"]
    fig, (ax_rate, ax_cost) = plt.subplots(1, 2, figsize=(12, 5.6))
    ids = {p: next((cid for cid, c in cases.items() if c["params"].get("product") == f"nctu-{p}"
                    and c["params"].get("persistence") == "cookie"), None) for p in products}
    rate = [cases[ids[p]]["metrics"]["requests_per_s"] if ids[p] else None for p in products]
    cost = [cases[ids[p]]["metrics"]["switch_us_per_request"] if ids[p] else None for p in products]
    _bars(ax_rate, products, rate, TWIN, label="twin (14 PCs, 6 servers, one 6 KB ASP page)")
    _bars(ax_cost, products, cost, TWIN_2, label="twin")
    for ax, vals in ((ax_rate, rate), (ax_cost, cost)):
        for i, p in enumerate(products):
            if ids[p]:
                n = COOKIE_METHOD_NUMBER[cases[ids[p]]["params"]["cookie_method"]]
                ax.text(i, vals[i], str(n), ha="center", va="bottom", fontsize=9, fontweight="bold")
    ax_rate.set_ylabel("requests/s with cookie persistence")
    ax_rate.set_title("figure 12: cookie persistence (bar label: method 1 pre-arranged, 2 insert, 3 learn)",
                      fontsize=9)
    ax_rate.set_ylim(0, max(v for v in rate if v) * 1.25)
    _claims_note(ax_rate, paper.claims(12))
    ax_rate.legend(fontsize=7, loc="upper right")
    ax_cost.set_ylabel("switch processor time per request (us)")
    ax_cost.set_title("the twin's cookie cost: switch time per request", fontsize=9)
    return fig


FIGURES = {6: figure_6, 7: figure_7, 8: figure_8, 9: figure_9, 10: figure_10, 11: figure_11, 12: figure_12}


def draw(root: Path, out: Path) -> list[Path]:
    """Run the replays and write nctu-fig06.png ... nctu-fig12.png into `out`."""
    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()
    paper = load_paper(root)
    cases = run_replays(root)
    written = []
    for number, draw_one in FIGURES.items():
        fig = draw_one(plt, paper, cases)
        # no Software/date in the PNG: the same twin draws the same bytes
        written.append(save_png(fig, out / f"nctu-fig{number:02d}.png", DPI, metadata={"Software": None}))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m routertwin.runners.webswitch.figures",
                                 description="Redraw seed 003's figures 6-12: the twin beside the paper's values.")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="the repository checkout (default: .)")
    ap.add_argument("--out", type=Path, default=None, help="folder for the PNGs (default: ROOT/docs/figures)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not (root / DATA).is_file():
        print(f"{root / DATA}: not found (run from the repository, or give --root)", file=sys.stderr)
        return 2
    for path in draw(root, args.out or root / "docs" / "figures"):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
