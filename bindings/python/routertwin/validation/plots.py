"""Validation plots (PNG, matplotlib Agg).

- `scatter`: twin vs reference per study, log-log, with the y = x line and
  the band of the study's median tolerance; calibrate and predict rows have
  different markers, failures are red.
- `scaling_curve`: a case metric against a case parameter (cores, frame size,
  servers, offered load...), one line per series, reference points drawn on
  top. Studies ask for these in their mapping's `plots:` section, optionally
  restricted to cases with given parameter values (`where:`), e.g. the loss
  curve of an RFC 2544 scenario: x offered_load, y loss_pct, where method
  loss_curve (docs/validation.md).
- `tornado`: with `--intervals`, per study, the assumptions that move its
  predict rows most, each as the change (% of the twin value) at the low and
  at the high end of its range, at the row it moves most.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from routertwin.results import CaseResult


def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display), unless
    the environment chose a backend (MPLBACKEND: a Jupyter kernel sets its
    inline one, so figures returned by Results.plot show in notebooks)."""
    import os

    import matplotlib

    if not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: Path, dpi: int, metadata: dict | None = None) -> Path:
    """Lay out `fig`, write it to `path` as PNG (folders made) and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, metadata=metadata)
    pyplot().close(fig)
    return path


def _sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


def scatter(rows, title: str, path: Path) -> bool:
    """Twin vs reference of `rows` (RowResult); False when nothing is plottable
    (log axes need positive values)."""
    pts = [r for r in rows if r.twin is not None and r.twin > 0 and r.ref.value > 0]
    if not pts:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 6))
    lo = min(min(r.ref.value, r.twin) for r in pts) / 2
    hi = max(max(r.ref.value, r.twin) for r in pts) * 2
    tols = [r.mapped.tolerance_pct for r in pts if r.mapped.tolerance_pct is not None]
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="twin = reference")
    if tols:
        t = statistics.median(tols) / 100.0
        ax.fill_between([lo, hi], [lo * (1 - t), hi * (1 - t)], [lo * (1 + t), hi * (1 + t)],
                        color="tab:blue", alpha=0.15, label=f"±{t * 100:g}% (median tolerance)")
    for role, marker in (("calibrate", "s"), ("predict", "o")):
        for ok, color in ((True, "tab:green"), (False, "tab:red")):
            sel = [r for r in pts if r.ref.role == role and (r.status == "pass") == ok]
            if sel:
                ax.scatter([r.ref.value for r in sel], [r.twin for r in sel], marker=marker, color=color,
                           label=f"{role} {'pass' if ok else 'fail'}", zorder=3)
    ivs = [r for r in pts if r.interval is not None]
    if ivs:  # the twin's interval over assumptions and seeds together, as a vertical bar
        lows = [min(r.interval.assumption_range[0], *r.interval.rep_values) for r in ivs]
        highs = [max(r.interval.assumption_range[1], *r.interval.rep_values) for r in ivs]
        ax.errorbar([r.ref.value for r in ivs], [r.twin for r in ivs],
                    yerr=[[max(r.twin - lo, 0) for r, lo in zip(ivs, lows)],
                          [max(hi - r.twin, 0) for r, hi in zip(ivs, highs)]],
                    fmt="none", ecolor="gray", elinewidth=1, capsize=2, zorder=2,
                    label="interval (seeds, assumption ranges)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("reference (measured)")
    ax.set_ylabel("twin (predicted)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    save_png(fig, path, dpi=110)
    return True


def scaling_curve(cases: Iterable[CaseResult], x: str, y: str, path: Path, *, series: str | None = None,
                  refs: Iterable[tuple[float, float, object, str, str]] = (), title: str = "",
                  log_x: bool = False, log_y: bool = False,
                  ref_line: tuple[str, list[tuple[float, float]]] | None = None) -> bool:
    """Plot metric `y` against parameter `x` over `cases`, one line per value
    of parameter `series`; `refs` are reference points (x, y, series value,
    role, label); `ref_line` the reference's own line (label, its points).
    False when no case has both x and y."""
    fig = scaling_figure(cases, x, y, series=series, refs=refs, title=title, log_x=log_x, log_y=log_y,
                         ref_line=ref_line)
    if fig is None:
        return False
    save_png(fig, path, dpi=110)
    return True


def scaling_figure(cases: Iterable[CaseResult], x: str, y: str, *, series: str | None = None,
                   refs: Iterable[tuple[float, float, object, str, str]] = (), title: str = "",
                   log_x: bool = False, log_y: bool = False,
                   ref_line: tuple[str, list[tuple[float, float]]] | None = None):
    """The figure of `scaling_curve` (a matplotlib Figure, not saved), or None
    when no case has both x and y."""
    lines: dict[object, list[tuple[float, float]]] = defaultdict(list)
    for c in cases:
        if x in c.params and y in c.metrics and c.metrics[y] is not None:
            lines[c.params.get(series) if series else None].append((c.params[x], c.metrics[y]))
    if not lines:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    colors = {}
    for i, (key, pts) in enumerate(sorted(lines.items(), key=lambda kv: _sort_key(kv[0]))):
        pts.sort(key=lambda p: _sort_key(p[0]))
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".",
                          label=f"twin {series}={key}" if series else "twin")
        colors[key] = line.get_color()
    for rx, ry, key, role, label in refs:
        ax.scatter([rx], [ry], marker="s" if role == "calibrate" else "o", facecolors="none",
                   edgecolors=colors.get(key, "black"), s=60, zorder=3)
        ax.annotate(label, (rx, ry), fontsize=6, xytext=(3, 3), textcoords="offset points")
    if ref_line:
        label, pts = ref_line
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        # least squares (the line through two points), from zero load to the largest point
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((v - mx) ** 2 for v in xs)
        slope = sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sxx if sxx else 0.0
        x_end = max(xs)
        ax.plot([0.0, x_end], [my - slope * mx, my + slope * (x_end - mx)], linestyle="--", color="black",
                label=label)
        ax.scatter(xs, ys, marker="D", color="black", s=30, zorder=4)
    ax.scatter([], [], marker="o", facecolors="none", edgecolors="black", label="reference (predict)")
    ax.scatter([], [], marker="s", facecolors="none", edgecolors="black", label="reference (calibrate)")
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def tornado(rows, title: str, path: Path, top_n: int = 15) -> bool:
    """The assumptions that move predict rows of `rows` (RowResult with
    intervals) most: per assumption, the change at the low and the high end
    of its range at the predict row it moves most. False when no assumption
    reaches a predict row."""
    from routertwin.validation.sensitivity import study_sensitivity

    sens = [s for s in study_sensitivity(rows) if s.biggest is not None][:top_n]
    if not sens:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(sens) + 1.6))
    ys = list(range(len(sens)))[::-1]
    for y, s in zip(ys, sens):
        lo, hi = s.biggest.deltas
        ax.barh(y, lo or 0.0, color="tab:blue", height=0.6, label="low end" if y == ys[0] else None)
        ax.barh(y, hi or 0.0, color="tab:orange", height=0.6, alpha=0.8, label="high end" if y == ys[0] else None)
        for v in (lo, hi):
            if v:
                ax.annotate(f"{v:+.3g}%", (v, y), xytext=(3 if v > 0 else -3, 0), textcoords="offset points",
                            ha="left" if v > 0 else "right", va="center", fontsize=6)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{s.name}\n({s.biggest.row.ref.id})" for s in sens], fontsize=7)
    ax.axvline(0, color="black", lw=0.8)
    # Symmetric log: a fabric that overloads moves a latency by 10^5 %, a
    # lookup rate a throughput by 50 %; both must stay readable.
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("change of the twin value at the range's end (% of nominal, symmetric log), "
                  "at the predict row it moves most")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    save_png(fig, path, dpi=110)
    return True


def study_plots(report, plots, outcomes, out_dir: Path) -> list[str]:
    """Every study's scatter (and tornado, with intervals) and its requested
    scaling curves; file names written."""
    written = []
    for study, rows in report.by_study.items():
        name = f"{study}-scatter.png"
        if scatter(rows, f"{study}: twin vs reference", out_dir / name):
            written.append(name)
        name = f"{study}-tornado.png"
        if any(r.interval is not None for r in rows) and tornado(
                rows, f"{study}: which assumption moves which predict row", out_dir / name):
            written.append(name)
    written += distribution_plots(report, outcomes, out_dir)
    for plot in plots:
        spec = plot.spec
        outcome = outcomes[plot.scenario]
        if outcome.error:
            continue
        # `where` keeps the cases of one kind (e.g. method: loss_curve) out of
        # a scenario that also has others.
        selected = [c for c in outcome.cases if all(c.params.get(k) == v for k, v in spec.where.items())]
        cases = {c.case: c for c in selected}
        refs = []
        for r in report.by_study.get(plot.study, []):
            case = cases.get(r.mapped.case)
            if r.mapped.scenario == plot.scenario and r.mapped.metric == spec.y and case and spec.x in case.params:
                refs.append((case.params[spec.x], r.ref.value, case.params.get(spec.series) if spec.series else None,
                             r.ref.role, r.ref.id))
        ref_line = None
        if spec.reference_line:
            values = {r.ref.id: r.ref.value for r in report.by_study.get(plot.study, [])}
            pts = [(values.get(p.x_row), values.get(p.y_row) if p.y_row else p.y) for p in spec.reference_line.points]
            if all(a is not None and b is not None for a, b in pts):
                ref_line = (spec.reference_line.label, pts)
        name = f"{plot.study}-{spec.name}.png"
        if scaling_curve(selected, spec.x, spec.y, out_dir / name, series=spec.series, refs=refs,
                         title=spec.title or f"{plot.study}: {spec.y} vs {spec.x}", log_x=spec.log_x, log_y=spec.log_y,
                         ref_line=ref_line):
            written.append(name)
    return written


def distribution_plots(report, outcomes, out_dir: Path) -> list[str]:
    """Per study, the latency distributions (complementary CDFs) of the cases
    its rows replay (and the lb units' response times), their time-weighted
    queue lengths, a drops-per-port-and-time heat map of each such case
    that lost packets, and the latency per port of each such case whose
    ports differ (routertwin.distributions); file names written."""
    from routertwin.distributions import (WindowCase, distribution_source, latency_plot, loss_timeline_plot,
                                          ports_plot, queue_length_plot, with_packet_windows)

    written = []
    for study, rows in report.by_study.items():
        cases, rtt_cases, seen = [], [], set()
        for r in rows:
            source = distribution_source(r.mapped)
            outcome = outcomes.get(source)
            if outcome is None or outcome.error or (source, r.mapped.case) in seen:
                continue
            seen.add((source, r.mapped.case))
            cases += [c for c in outcome.cases if c.case == r.mapped.case and c.distributions]
            # TCP paths name their one case alike (ixchariot): label by scenario
            rtt_cases += [WindowCase(f"{Path(r.mapped.scenario).stem} {c.case}", c.metrics, c.distributions)
                          for c in outcome.cases if c.case == r.mapped.case and "rtt_histogram" in c.distributions]
        cases = with_packet_windows(cases)
        name = f"{study}-latency-distribution.png"
        if latency_plot(cases, out_dir / name, f"{study}: latency distribution of the replayed cases"):
            written.append(name)
        name = f"{study}-response-time-distribution.png"
        if latency_plot(cases, out_dir / name, f"{study}: response time of the units of the replayed cases",
                        key="unit_latency_histogram", what="units", xlabel="response time (us)"):
            written.append(name)
        name = f"{study}-queue-wait-distribution.png"
        if latency_plot(cases, out_dir / name, f"{study}: queue wait of the requests that waited",
                        key="queue_wait_histogram", what="requests that waited", xlabel="queue wait (us)"):
            written.append(name)
        name = f"{study}-rtt-distribution.png"
        if latency_plot(rtt_cases, out_dir / name, f"{study}: TCP round-trip time samples of the replayed cases",
                        key="rtt_histogram", what="RTT samples", xlabel="round-trip time (us)"):
            written.append(name)
        name = f"{study}-queue-length-distribution.png"
        if queue_length_plot(cases, out_dir / name, f"{study}: time-weighted queue lengths of the replayed cases"):
            written.append(name)
        # TCP paths' cases by their scenario's label: their one case name is alike
        for c in [c for c in cases if "rtt_histogram" not in c.distributions] + rtt_cases:
            name = f"{study}-loss-{c.case.replace(' ', '-')}.png"
            if loss_timeline_plot(c, out_dir / name, f"{study} {c.case}: drops per port and over time"):
                written.append(name)
            name = f"{study}-ports-{c.case}.png"
            if ports_plot(c, out_dir / name, f"{study} {c.case}: latency per port"):
                written.append(name)
    return written
