"""`routertwin lab haproxy`'s tables, results files (JSON, CSV) and plot.

Files go to OUT/lab-haproxy-<UTC time>.{json,csv,png}, written only after a
complete run, each through a temporary name (lab/report.py's writer).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import time
from pathlib import Path

from routertwin.lab.report import _write_atomic


def rows(report) -> list[dict]:
    """One row per CONFIG and server: requests measured and by the twin."""
    out = []
    for case in report.cases:
        c = case.comparison
        for r in c["rows"]:
            out.append({"config": case.config.shown, "kind": c["kind"], "scheduler": c["scheduler"] or "none",
                        "server": r["server"], "measured": r["measured"], "measured_pct": round(r["measured_pct"], 2),
                        "twin": r.get("twin"), "twin_pct": round(r["twin_pct"], 2) if "twin_pct" in r else None,
                        "ok": r.get("ok"), "verdict": c["verdict"]})
    return out


def _case_table(case):
    from rich.table import Table

    c = case.comparison
    w = case.config.workload
    if c["kind"] == "failover":
        what = (f"{w['rate']:g} requests/s for {w['seconds']:g} s, server {w['kill']} killed at {w['kill_at_s']:g} s, "
                f"{w['clients']} client address(es)")
    elif c["kind"] == "cookie":
        what = f"{w['clients']} clients x {w['requests']} requests, cookie kept between them"
    else:
        what = (f"{w['requests']} requests, {w['concurrency']} at a time, {w['clients']} client address(es), "
                f"{w['paths']} URI(s)" + (f", server delays {w['delays_ms']} ms" if w["delays_ms"] else ""))
    t = Table(title=f"{case.config.shown}: {c['kind']}, {c['scheduler'] or 'no twin scheduler'} ({what})")
    for col in ("server", "HAProxy", "share", "twin", "share ", "ok"):
        t.add_column(col, justify="left" if col == "server" else "right")
    for r in c["rows"]:
        twin = "-" if "twin" not in r else str(r["twin"])
        twin_pct = "-" if "twin_pct" not in r else f"{r['twin_pct']:.1f}%"
        ok = {True: "yes", False: "NO", None: "-"}[r.get("ok")]
        t.add_row(r["server"], str(r["measured"]), f"{r['measured_pct']:.1f}%", twin, twin_pct, ok)
    return t


def _failover_lines(c: dict) -> list[str]:
    det = c["measured_detection_ms"]
    lines = [f"  HAProxy: kill to DOWN {det:.0f} ms (stats socket, 5 ms polling); {c['failed']} of {c['requests']} "
             "requests failed" if det is not None else
             f"  HAProxy: never marked the server DOWN; {c['failed']} of {c['requests']} requests failed"]
    if "twin_window_ms" in c:
        window = ("never (the killed server has no check)" if c["twin_window_ms"][0] < 0 else
                  f"detection window {c['twin_window_ms'][0]:.0f}..{c['twin_window_ms'][1]:.0f} ms "
                  f"(its runs: {c['twin_detection_ms'][0]:.0f}..{c['twin_detection_ms'][1]:.0f})")
        lines.append(f"  twin:    {window}; failed "
                     f"{c['twin_failed'][0]}..{c['twin_failed'][1]} over {len(c['twin_runs'])} check phases; "
                     f"redispatched {c['twin_redispatched'][0]}..{c['twin_redispatched'][1]}")
        if "measured_slow" in c:
            lines.append(f"  silent server: {c['measured_slow']} HAProxy requests waited a connect timeout or "
                         f"more; twin: {c['twin_to_dead_server'][0]}..{c['twin_to_dead_server'][1]} met it first"
                         f" ({'within' if c['slow_ok'] else 'OUTSIDE'} the range)")
        lines.append(f"  longest served request: HAProxy {c['measured_longest_served_ms']:.0f} ms, twin "
                     f"{c['twin_max_delay_ms'][0]:.0f}..{c['twin_max_delay_ms'][1]:.0f} ms "
                     f"({'no' if c['delay_ok'] else 'a'} wait more or less than the twin's)")
        lines.append(f"  detection {'as' if c['detection_ok'] else 'NOT as'} the twin's, failed requests "
                     f"{'within' if c['failed_ok'] else 'OUTSIDE'} the twin's range")
    return lines


def print_report(report, console) -> None:
    for case in report.cases:
        c = case.comparison
        console.print(_case_table(case))
        if c["kind"] == "failover":
            for line in _failover_lines(c):
                console.print(line)
        if c["kind"] == "cookie":
            console.print(f"  requests carrying the cookie that reached its server: HAProxy "
                          f"{c['measured_sticky_pct']:.1f}%" + (f", twin {c['twin_sticky_pct']:.1f}%"
                                                              if "twin_sticky_pct" in c else "")
                          + f"; Set-Cookie answers {c['measured_set_cookies']}")
        if "same_server_pct" in c:
            console.print(f"  the same server as the twin, request by request: {c['same_server_pct']:.1f}%")
        console.print(f"  criterion (fixed before measuring): {c['criterion']['text']}")
        for note in c["notes"]:
            console.print(f"  note: {note}")
        console.print(f"  verdict: {c['verdict']}")
        console.print("")
    m = report.machine
    console.print(f"machine: haproxy {m['haproxy']}, kernel {m['kernel']}, {m['cpus']} CPUs, load average "
                  f"{m.get('loadavg_before', 0):.2f} before / {m.get('loadavg_after', 0):.2f} after")
    for path in report.files.values():
        console.print(f"wrote {path}")


def document(report) -> dict:
    from routertwin import __version__
    from routertwin.results import git_commit

    p = report.parameters
    cases = []
    for case in report.cases:
        cfg = case.config
        cases.append({"config": cfg.shown, "service": cfg.service["name"], "pool": cfg.pool["name"],
                      "workload": cfg.workload, "backends": cfg.backends, "not_modelled": cfg.not_modelled,
                      "lab_config": cfg.text, "comparison": case.comparison,
                      "measured": {"requests": case.measured["requests"], "events": case.measured["events"],
                                   "show_stat": case.measured["show_stat"],
                                   "haproxy_log": case.measured["haproxy_log"]}})
    return {"what": "routertwin lab haproxy: Debian's haproxy in a network namespace beside the twin",
            "routertwin_version": __version__,
            "git_commit": git_commit(Path.cwd()),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seed": p.seed,
            "parameters": {**dataclasses.asdict(p), "configs": [str(c) for c in p.configs]},
            "machine": report.machine, "passed": report.passed, "rows": rows(report), "cases": cases}


def plot(report, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(report.cases)
    cols = min(3, n)
    nrows = (n + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False)
    for ax, case in zip(axes.flat, report.cases):
        c = case.comparison
        title = f"{Path(case.config.shown).name}\n{c['kind']}, {c['scheduler'] or 'none'}: {c['verdict']}"
        if c["kind"] == "failover":
            recs = sorted(case.measured["requests"], key=lambda r: r["t0_ms"])
            t0 = case.measured["events"]["start_ms"]
            ok = [(r["t0_ms"] - t0) / 1000 for r in recs if r["status"] == 200]
            bad = [(r["t0_ms"] - t0) / 1000 for r in recs if r["status"] != 200]
            ax.eventplot([ok, bad], colors=["tab:blue", "tab:red"], lineoffsets=[1, 0], linelengths=0.8)
            if c.get("kill_at_ms") is not None:
                ax.axvline(c["kill_at_ms"] / 1000, color="k", ls=":", label="killed")
            if c.get("down_at_ms") is not None:
                ax.axvline(c["down_at_ms"] / 1000, color="tab:red", ls="--", label="HAProxy: DOWN")
            if "twin_window_ms" in c and c.get("kill_at_ms") is not None:
                k = c["kill_at_ms"] / 1000
                ax.axvspan(k + c["twin_window_ms"][0] / 1000, k + c["twin_window_ms"][1] / 1000, color="tab:orange",
                           alpha=0.25, label="twin: DOWN window")
            ax.set_yticks([0, 1], [f"failed ({len(bad)})\ntwin {c.get('twin_failed', '-')}", f"served ({len(ok)})"])
            ax.set_xlabel("request sent at, s")
            ax.legend(fontsize=6, loc="upper right")
        else:
            names = [r["server"] for r in c["rows"]]
            xs = range(len(names))
            ax.bar([x - 0.2 for x in xs], [r["measured"] for r in c["rows"]], width=0.4, label="HAProxy")
            if any("twin" in r for r in c["rows"]):
                ax.bar([x + 0.2 for x in xs], [r.get("twin", 0) for r in c["rows"]], width=0.4, label="twin",
                       color="tab:orange")
            else:
                ax.text(0.5, 0.5, "twin: not modelled", transform=ax.transAxes, ha="center", color="tab:orange")
            ax.set_xticks(list(xs), names, fontsize=7)
            ax.set_ylabel("requests")
            ax.legend(fontsize=7)
        ax.set_title(title, fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"routertwin lab haproxy (haproxy {report.machine['haproxy']})", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    _write_atomic(path, buf.getvalue())


def write(report, out: Path, plots: bool = True) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = "lab-haproxy-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    doc = document(report)
    jpath, cpath, ppath = out / f"{stem}.json", out / f"{stem}.csv", out / f"{stem}.png"
    buf = io.StringIO()
    fields = ["utc", "git_commit", "routertwin_version", "haproxy", "kernel", "seed", *doc["rows"][0]]
    wr = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    wr.writeheader()
    for r in doc["rows"]:
        wr.writerow({"utc": doc["utc"], "git_commit": doc["git_commit"], "routertwin_version": doc["routertwin_version"],
                     "haproxy": doc["machine"]["haproxy"], "kernel": doc["machine"]["kernel"], "seed": doc["seed"],
                     **r})
    if plots:
        plot(report, ppath)
    _write_atomic(cpath, buf.getvalue().encode())
    _write_atomic(jpath, (json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n").encode())
    return {"json": jpath, "csv": cpath, **({"png": ppath} if plots else {})}
