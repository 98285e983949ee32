"""Seed 003's 12 rows on both engines of the `webswitch` kind, beside the
reference (docs/nctu.md "The ns-3 engine"):

    python -m routertwin.runners.webswitch.engines [--duration S] [--warmup S] [--plot PNG]

Each row's scenario (validation/mapping/nctu.yaml) runs on the MVA engine
as it is, and its ns-3 twin (scenarios/nctu/ns3/, the same file name: the
same testbed and profiles, the products the rows name) on the ns-3
engine; the table prints reference, MVA, ns-3 and both errors. The rows
of a mean latency also get, on the ns-3 engine, the distribution behind
the mean (issue 15: p50, p99, p99.9 and max of every request's WebBench
cycle in the window; the MVA gives means only), and `--plot` draws those
distributions. Nothing is fitted: every number comes from the profiles and
the testbed file."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from ruamel.yaml import YAML

def _root(root: Path | None) -> Path:
    r = root or Path.cwd()
    if not (r / "validation" / "mapping" / "nctu.yaml").is_file():
        raise SystemExit(f"{r}: no validation/mapping/nctu.yaml (run from the project's checkout)")
    return r


def _cases(path: Path, overrides: dict | None = None) -> dict:
    """The scenario's cases (CaseResult) by case id."""
    from routertwin import api

    keys = YAML(typ="safe").load(path.read_text())
    if overrides:
        keys.update(overrides)
    results = api.run(api.scenario(keys, base_dir=path.parent))
    return {c.case: c for c in results.cases}


QUANTILES = ("p50", "p99", "p999", "max")


def replay(root: Path | None = None, warmup_s: float | None = None, duration_s: float | None = None) -> list[dict]:
    """One dict per row: id, metric, unit, reference, mva, ns3; a latency
    row also ns3_quantiles (ms: p50, p99, p999, max) and ns3_case (its
    CaseResult, with the histogram)."""
    root = _root(root)
    mapping = YAML(typ="safe").load((root / "validation" / "mapping" / "nctu.yaml").read_text())["rows"]
    with open(root / "validation" / "reference.csv", newline="") as f:
        reference = {r["id"]: r for r in csv.DictReader(f)}
    ns3_options = {k: v for k, v in (("warmup_s", warmup_s), ("duration_s", duration_s)) if v is not None}
    mva: dict[str, dict] = {}
    ns3: dict[str, dict] = {}
    out = []
    for rid, row in mapping.items():
        scenario = root / row["scenario"]
        if scenario not in mva:
            mva[scenario] = _cases(scenario)
            twin = scenario.parent / "ns3" / scenario.name
            opts = YAML(typ="safe").load(twin.read_text()).get("ns3", {})
            ns3[scenario] = _cases(twin, {"ns3": {**opts, **ns3_options}} if ns3_options else None)
        ref = reference[rid]
        ns3_case = ns3[scenario][row["case"]]
        out.append({"id": rid, "metric": row["metric"], "unit": ref["unit"], "reference": float(ref["value"]),
                    "tolerance_pct": row.get("tolerance_pct"), "tolerance_abs": row.get("tolerance_abs"),
                    "mva": mva[scenario][row["case"]].metrics[row["metric"]], "ns3": ns3_case.metrics[row["metric"]]})
        if row["metric"] == "latency_avg" and "latency_p50_us" in ns3_case.metrics:
            out[-1]["ns3_quantiles"] = {q: ns3_case.metrics[f"latency_{q}_us"] / 1e3 for q in QUANTILES}
            out[-1]["ns3_case"] = ns3_case
    return out


def judge(r: dict, engine: str) -> tuple[str, bool]:
    """The error as validation/mapping/nctu.yaml judges it (relative, or in
    points for the rows with an absolute tolerance) and whether it passes."""
    value, ref = r[engine], r["reference"]
    if r["tolerance_abs"] is not None:
        d = value - ref
        return f"{d:+.1f} points", abs(d) <= r["tolerance_abs"]
    e = (value / ref - 1) * 100
    return f"{e:+.0f} %", abs(e) <= r["tolerance_pct"]


def markdown(rows: list[dict]) -> str:
    lines = ["| row | reference | MVA | error | ns-3 | error |", "|---|---|---|---|---|---|"]
    passes = {"mva": 0, "ns3": 0}
    for r in rows:
        u = r["unit"]
        cells = []
        for engine in ("mva", "ns3"):
            err, ok = judge(r, engine)
            passes[engine] += ok
            cells.append(f"{r[engine]:.3g} {u} | {err}{' (pass)' if ok else ''}")
        lines.append(f"| {r['id']} | {r['reference']:g} {u} | {cells[0]} | {cells[1]} |")
    lines.append("")
    lines.append(f"pass: MVA {passes['mva']} of {len(rows)}, ns-3 {passes['ns3']} of {len(rows)}")
    dist = [r for r in rows if "ns3_quantiles" in r]
    if dist:
        lines += ["", "ns-3: the distribution behind each mean latency (ms; every request's WebBench cycle in the "
                      "window, a Boost.Histogram of 2.3 % bins; the MVA gives means only):", "",
                  "| row | reference mean | ns-3 mean | p50 | p99 | p99.9 | max |", "|---|---|---|---|---|---|---|"]
        for r in dist:
            q = r["ns3_quantiles"]
            lines.append(f"| {r['id']} | {r['reference']:g} | {r['ns3']:.3g} | "
                         + " | ".join(f"{q[k]:.3g}" for k in QUANTILES) + " |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> Path | None:
    """The ns-3 response-time distributions of the latency rows (complementary
    CDFs, routertwin.distributions.latency_plot), labelled by row."""
    from routertwin.distributions import WindowCase, latency_plot

    cases = [WindowCase(r["id"], r["ns3_case"].metrics, r["ns3_case"].distributions)
             for r in rows if "ns3_case" in r]
    return latency_plot(cases, path, "NCTU, ns-3 engine: WebBench response times, latency rows", what="requests",
                        xlabel="response time (us)")


def replay_cli(module: str, doc: str, replay_fn, markdown_fn, argv: list[str] | None = None, plot_fn=None) -> int:
    """`python -m MODULE [--warmup S] [--duration S] [--root DIR]`: replay
    both engines and print markdown (with plot_fn, also `--plot PNG`)."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    ap.add_argument("--warmup", type=float, default=None, help="simulated warm-up seconds (default: the scenario's)")
    ap.add_argument("--duration", type=float, default=None, help="simulated measured seconds (default: the scenario's)")
    ap.add_argument("--root", type=Path, default=None, help="the project's checkout (default: this one)")
    if plot_fn:
        ap.add_argument("--plot", type=Path, default=None, help="write the plot here (PNG)")
    a = ap.parse_args(argv)
    rows = replay_fn(a.root, a.warmup, a.duration)
    print(markdown_fn(rows))
    if plot_fn and a.plot:
        print(f"plot: {plot_fn(rows, a.plot)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return replay_cli("routertwin.runners.webswitch.engines", __doc__, replay, markdown, argv, plot)


if __name__ == "__main__":
    sys.exit(main())
