"""Distributions of a run beyond min/avg/max (issue 15): latency percentiles
and histograms, latency per port, and drops per port and over time.

The native models fill Boost.Histogram histograms (model/common/model/
latency-histogram.h): a log axis of 100 bins per decade, so a percentile is
within 2.33 % of the exact order statistic. Their runners return, beside the
scalar metrics `latency_p50`, `latency_p99`, `latency_p999` (us), a
`CaseResult.distributions` dict:

- `latency_histogram`: {"count", "bins": [[lower_us, upper_us, packets], ...]}
  (non-empty bins only; mergeable by adding counts of equal bins);
- `ports` (router, lb): per tester port, rx, dropped
  and the latency avg/p50/p99/p999/max (us) of the packets that came in on
  it (the lb's ports by LbPortMap, the loss timeline's rule; each lb port
  also keeps its `latency_histogram`, and they add up to the run's); tx
  (router);
- `loss_timeline` (router, pipeline, lb): {"bin_s", "ports": [[drops per
  time bin] per port]}, drops counted at the port the packet came in on
  (the pipeline's tester has one port; the lb's are its LbPortMap ports),
  over the tester's transmit time (drops while queues drain count in the
  last bin); "reasons": {VPP-style drop name: [[drops per time bin] per
  port]} for each reason with a drop (the rows of all reasons add up to
  "ports");
- `unit_latency_histogram` (lb): the response times of the transactions,
  connections or queries completed in the window (a unit's first packet
  sent to its last delivered), beside the frames' `latency_histogram`;
- `rtt_histogram` (tcp_path): every RTT sample the sender's TCP took over
  the last record (ns-3's "RTT" trace), in the latency histogram's bins;
  its `loss_timeline` has a row per path server (a wire direction or a
  box's CPU, named in "port_names") over the whole run, by reason, and its
  `retransmission_timeline` the sender's fast recoveries and timeouts
  (reasons "fast_recovery", "timeout") in the same bins;
- `loss_timeline` (webswitch, ns-3 engine): one row, the switch ("port_names"),
  by reason: the segments it refused or absorbed under their drop names at
  their time, and (open loop) "request_refused" and "request_unanswered",
  the requests of those counters at their arrival;
- `delay_histogram` (fabric): the cells' delays in whole slots, {"cells",
  "mean", "p50", "p99", "p999", "max", "bins": [[slots, cells], ...]},
  with `input_drops` (per input) and `drop_timeline` ({"bin_slots",
  "ports"}: a loss timeline whose time axis is slots);
- `latency_histogram` of a closed form (pipeline `method: analytic`; under
  `analytic_latency_histogram` beside the engine's with `method: both`):
  the bins hold probabilities ("count" 1), from its CDF on the same axis;
- `queue_wait_histogram` (lb timed and tablefill): the waits of the requests
  that queued (accept, server or backend queue) until they got a server, in
  the latency histogram's bins, pooled over the case's replications; their
  `loss_timeline` is one row over the run, by reason (the three 503s,
  accept_queue_full, broken), and lb failover's is its failed requests
  (failed, balancer_dead);
- `timeline` (webswitch_pair): {"bin_s", "answers_per_s", "survivor_resets",
  "failed_requests"}: per time bin over the whole run, the closed-loop
  answers per second, the survivor's RSTs for segments of no connection it
  knows and the clients' requests that ended without their answer (the
  downloads still waiting at the run's end in the last bin; the
  bins add up to the counters answers, survivor_resets, failed_requests);
- `cycle_before_histogram`, `cycle_after_histogram` (webswitch_pair): the
  closed-loop threads' cycle times (a request's start to its answer, us)
  of the answers in the window before the death and the one after the
  takeover (counts: the rates x window_s); metrics cycle_<window>_p50/p99/
  p999/max_us, and across_death, across_death_max_us (the requests whose
  cycle spans the death, and the longest of them);
- `core_queue` (pipeline, lb) and `egress_queue` (router, packet mode):
  time-weighted queue lengths (model/common/model/queue-length-histogram.h):
  {"seconds", "mean", "p50", "p99", "p999", "max", "bins": [[length,
  seconds], ...]}, the packets waiting or in service at the cores (RSS:
  each core's queue, added) or at the egress ports (each port's, added).
  The router's `ports` then carry egress_queue_mean/p99/max and
  egress_latency_p50/p99/p999/max (the packets that left on the port).

This module turns those into clustering figures, console tables and plots.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

PERCENTILES = (("latency_p50", 0.5), ("latency_p99", 0.99), ("latency_p999", 0.999))


def percentile_metrics(out: dict, suffix: str = "") -> dict[str, float]:
    """latency_p50/p99/p999 (us) from a native result dict (suffix e.g. "_us")."""
    return {f"{name}{suffix}": float(out[f"{name}_us"]) for name, _ in PERCENTILES}


def queue_metrics(queue: dict, prefix: str) -> dict[str, float]:
    """<prefix>_mean, _p99, _max (packets) of a time-weighted queue-length dict."""
    return {f"{prefix}_mean": float(queue["mean"]), f"{prefix}_p99": float(queue["p99"]),
            f"{prefix}_max": float(queue["max"])}


def queue_distribution(queue: dict) -> dict[str, Any]:
    """A native queue-length dict as plain Python numbers."""
    return {"seconds": float(queue["seconds"]), "mean": float(queue["mean"]),
            **{k: int(queue[k]) for k in ("p50", "p99", "p999", "max")},
            "bins": [[int(n), float(s)] for n, s in queue["bins"]]}


def _hist(h: dict) -> dict[str, Any]:
    return {"count": float(h["count"]), "bins": [list(map(float, b)) for b in h["bins"]]}


def rtt_distribution(out: dict) -> dict[str, Any]:
    """The `distributions` of a tcp_path run: its sender's RTT samples, and
    its drops per path server (a wire direction or a box's CPU, named) and
    over the whole run, by reason."""
    d = {"rtt_histogram": _hist(out["rtt_histogram"])}
    if "loss_timeline" in out:
        d["loss_timeline"] = loss_distribution(out["loss_timeline"], [s["name"] for s in out["servers"]])
    if "retransmission_timeline" in out:
        d["retransmission_timeline"] = loss_distribution(out["retransmission_timeline"], ["sender"])
    return d


def latency_distribution(out: dict) -> dict[str, Any]:
    """The `distributions` of a run with one latency histogram and no queue
    (the webswitch kind's response times, closed or open loop), and its
    loss timeline where it has one (the switch's refusals by reason)."""
    d = {"latency_histogram": _hist(out["latency_histogram"])}
    if "loss_timeline" in out:
        d["loss_timeline"] = loss_distribution(out["loss_timeline"], ["web switch"])
    return d


def loss_distribution(timeline: dict, port_names: list[str] | None = None) -> dict[str, Any]:
    """A native loss timeline as plain Python numbers (its per-reason rows
    too, where the model keeps reasons apart); `port_names` where its rows
    are not tester ports (tcp_path: the path's servers)."""
    def rows(ports):
        return [list(map(float, row)) for row in ports]

    d = {"bin_s": float(timeline["bin_s"]), "ports": rows(timeline["ports"])}
    if port_names is not None:
        d["port_names"] = list(port_names)
    if "reasons" in timeline:
        d["reasons"] = {str(name): rows(ports) for name, ports in timeline["reasons"].items()}
    return d


def lb_distributions(out: dict) -> dict[str, Any]:
    """The `distributions` of an lb load step (native run_lb result)."""
    d = {"latency_histogram": _hist(out["latency_histogram"]),
         "unit_latency_histogram": _hist(out["unit_latency_histogram"]),
         "core_queue": queue_distribution(out["core_queue"]),
         "loss_timeline": loss_distribution(out["loss_timeline"])}
    if out.get("ports"):  # per ingress port (LbPortMap)
        d["ports"] = port_rows(out["ports"])
    return d


def cycle_distributions(out: dict) -> dict[str, Any]:
    """The closed-loop cycle-time histograms of a webswitch_pair run (native
    run_redundant_pair result): the windows before the death and after the
    takeover."""
    return {f"cycle_{w}_histogram": _hist(out[f"cycle_{w}_histogram"]) for w in ("before", "after")}


def merged_histogram(hists: list[dict]) -> dict[str, Any]:
    """Latency histograms of one axis (replications, runs) as one: the counts
    of equal bins added, as Boost.Histogram's += adds them."""
    counts: dict[tuple[float, float], float] = {}
    for h in hists:
        for lo, hi, n in h["bins"]:
            counts[(float(lo), float(hi))] = counts.get((float(lo), float(hi)), 0.0) + float(n)
    return {"count": float(sum(h["count"] for h in hists)),
            "bins": [[lo, hi, n] for (lo, hi), n in sorted(counts.items())]}


def merged_timeline(timelines: list[dict]) -> dict[str, Any]:
    """Native loss timelines of one shape (replications) as one: drops added
    per port and bin, and per reason."""
    def add(rows_list):
        return [[sum(vals) for vals in zip(*rows)] for rows in zip(*rows_list)]

    d = {"bin_s": timelines[0]["bin_s"], "ports": add([t["ports"] for t in timelines])}
    names = sorted({name for t in timelines for name in t.get("reasons", {})})
    if names:
        zero = [[0.0] * len(row) for row in timelines[0]["ports"]]
        d["reasons"] = {n: add([t.get("reasons", {}).get(n, zero) for t in timelines]) for n in names}
    return d


def timed_distributions(outs: list[dict]) -> dict[str, Any]:
    """The `distributions` of an lb timed or tablefill case (native lb_timed
    results of its replications): the queued requests' waits and the
    refusals over time, pooled."""
    return {"queue_wait_histogram": merged_histogram([o["queue_wait_histogram"] for o in outs]),
            "loss_timeline": loss_distribution(merged_timeline([o["refusal_timeline"] for o in outs]))}


def queue_wait_percentiles(outs: list[dict]) -> dict[str, float]:
    """queue_wait_p50/p99/p999/max_ms of the requests that waited, over the
    replications (their histograms pooled; the max exact)."""
    h = merged_histogram([o["queue_wait_histogram"] for o in outs])
    top = max(o["queue_wait_max_us"] for o in outs)
    m = {f"queue_wait_{name[len('latency_'):]}_ms": min(quantile(h, q), top) / 1000.0 for name, q in PERCENTILES}
    m["queue_wait_max_ms"] = top / 1000.0
    return m


def lb_metrics(out: dict) -> dict[str, float]:
    """Frame latency and unit response-time percentiles (us), the cores'
    queue lengths and the loss clustering of an lb load step."""
    m = {f"{name}_{q}_us": float(out[f"{name}_{q}_us"])
         for name in ("latency", "unit_latency") for q in ("p50", "p99", "p999", "max")}
    m.update(queue_metrics(out["core_queue"], "core_queue"))
    m.update(loss_clustering(out["loss_timeline"]))
    return m


def loss_clustering(timeline: dict) -> dict[str, float]:
    """How concentrated the drops of a run are, from its loss timeline:
    `loss_ports` (ports with any drop), `loss_top_port_share` (% of all drops
    on the worst port), `loss_bins` (time bins with any drop, of all bins).
    Uniform loss over 32 ports gives 32 ports and a 3.1 % share."""
    ports = timeline["ports"]
    per_port = [sum(row) for row in ports]
    total = sum(per_port)
    nbins = len(ports[0]) if ports else 0
    bins_hit = sum(1 for b in range(nbins) if any(row[b] > 0 for row in ports))
    return {
        "loss_ports": float(sum(1 for x in per_port if x > 0)),
        "loss_top_port_share": 100.0 * max(per_port) / total if total > 0 else 0.0,
        "loss_bins": float(bins_hit),
    }


def port_rows(native_ports: list) -> list[dict[str, Any]]:
    """Per-port figures of a native result's `ports` (router, lb), one
    dict per port numbered from 1: rx, dropped and the
    latency avg/p50/p99/p999/max (us) of the packets that entered on it;
    tx, egress load and the egress latency and queue where the model has
    them (the router)."""
    rows = []
    for i, p in enumerate(native_ports):
        row = {"port": i + 1, "rx": int(p["rx_packets"]), "dropped": int(p["dropped_packets"]),
               **{k: float(p[f"{k}_us"]) for k in ("latency_avg", "latency_p50", "latency_p99", "latency_p999",
                                                    "latency_max")}}
        if "tx_packets" in p:
            row["tx"] = int(p["tx_packets"])
        # what left the port, whichever port sent it (router, packet mode)
        if "egress_packets" in p:
            row.update({"egress": int(p["egress_packets"]), "egress_ip_bytes": int(p["egress_ip_bytes"]),
                        "egress_load": float(p["egress_load"])})
        # the packets that left on this port (router)
        row.update({k: float(p[f"{k}_us"]) for k in ("egress_latency_p50", "egress_latency_p99",
                                                     "egress_latency_p999", "egress_latency_max")
                    if f"{k}_us" in p})
        row.update({k: float(p[k]) for k in ("egress_queue_mean", "egress_queue_p99", "egress_queue_max") if k in p})
        if "latency_histogram" in p:
            row["latency_histogram"] = _hist(p["latency_histogram"])
        rows.append(row)
    return rows


def router_distributions(out: dict) -> dict[str, Any]:
    """The `distributions` of a router trial (native run_router result)."""
    dist = {
        "latency_histogram": _hist(out["latency_histogram"]),
        "ports": port_rows(out["ports"]),
        "loss_timeline": loss_distribution(out["loss_timeline"]),
    }
    if "egress_queue" in out:
        dist["egress_queue"] = queue_distribution(out["egress_queue"])
    return dist


def histogram_distribution(out: dict) -> dict[str, Any]:
    """The `distributions` of a run with one latency histogram (pipeline)."""
    return {"latency_histogram": _hist(out["latency_histogram"]), "core_queue": queue_distribution(out["core_queue"]),
            "loss_timeline": loss_distribution(out["loss_timeline"])}


def quantile(hist: dict, q: float) -> float:
    """The q-quantile (us) of a histogram dict, read as the native code reads
    it (linear inside the bin that reaches q of the count)."""
    bins = hist["bins"]
    total = sum(b[2] for b in bins)
    if total <= 0:
        return 0.0
    target, before = q * total, 0.0
    for lo, hi, n in bins:
        if before + n >= target:
            return lo + (target - before) / n * (hi - lo)
        before += n
    return bins[-1][1]


def ports_differ(dist: dict, rel: float = 0.01) -> bool:
    """True when the ports' p99 latencies or drops differ (by more than `rel`
    of the largest p99, or any drops unevenly): then a per-port table says
    something a run-wide figure does not."""
    ports = dist.get("ports") or []
    if len(ports) < 2:
        return False
    drops = [p["dropped"] for p in ports]
    for key in ("latency_p99", "egress_latency_p99"):
        p99 = [p[key] for p in ports if key in p]
        if p99 and (max(p99) - min(p99)) > rel * max(max(p99), 1e-12):
            return True
    return max(drops) != min(drops)


def queue_of(dist: dict) -> tuple[str, dict | None]:
    """The queue-length distribution of a case and its name ("cores",
    "egress ports"), or ("", None)."""
    for key, name in (("core_queue", "cores"), ("egress_queue", "egress ports")):
        if dist.get(key, {}).get("seconds"):
            return name, dist[key]
    return "", None


@dataclass
class WindowCase:
    """A steady-state router case's packet-level window (RouterTester.
    packet_window), shown as a case of its own beside it."""

    case: str
    metrics: dict
    distributions: dict


def with_packet_windows(cases) -> list:
    """The cases, each followed by its packet-level window if it has one,
    named `<case>-packet-<window>ms` (a steady-state case run with
    `packet_window_s`: its per-packet histogram, ports, loss timeline and
    egress queue, where the case's own distributions are Lindley blocks)."""
    out = []
    for c in cases:
        out.append(c)
        window = (getattr(c, "distributions", None) or {}).get("packet_window")
        if window:
            dist = {k: v for k, v in window.items() if k not in ("duration_s", "metrics")}
            out.append(WindowCase(fmt_window_name(c.case, window["duration_s"]), window["metrics"], dist))
    return out


def fmt_window_name(case: str, duration_s: float) -> str:
    """The name a case's packet window shows under: `<case>-packet-<ms>ms`."""
    return f"{case}-packet-{duration_s * 1e3:g}ms"


SHOWN_BINS = 40


def timeline_table(name: str, cases):
    """A webswitch_pair run over time: per case, up to SHOWN_BINS bins from
    the first with anything, its answers/s, the survivor's RSTs and the
    failed requests (the death and the takeover show as the answers' gap;
    the JSON holds every bin)."""
    from rich.table import Table

    t = Table(title=f"{name}: over the run, per time bin (at most {SHOWN_BINS} from the first with anything)")
    for col in ("case", "bin (s)", "from (s)", "answers/s", "survivor RSTs", "failed requests"):
        t.add_column(col, justify="left" if col in ("case", "answers/s", "survivor RSTs", "failed requests")
                     else "right")
    for c in cases:
        tl = c.distributions["timeline"]
        rows = (tl["answers_per_s"], tl["survivor_resets"], tl["failed_requests"])
        busy = [i for i in range(len(rows[0])) if any(r[i] for r in rows)]
        if not busy:
            continue
        span = range(busy[0], min(busy[-1] + 1, busy[0] + SHOWN_BINS))
        t.add_row(c.case, f"{tl['bin_s']:g}", f"{busy[0] * tl['bin_s']:g}",
                  *(" ".join(f"{r[i]:g}" for i in span) for r in rows))
    return t


def cycle_table(name: str, cases):
    """The webswitch_pair kind's closed-loop cycle times (ms): the window
    before the death, the one after the takeover, and the requests whose
    cycle spans the death (their count and the longest)."""
    from rich.table import Table

    from routertwin.results import fmt

    t = Table(title=f"{name}: closed-loop cycle time (ms; a request's start to its answer)")
    for col in ("case", "window", "answers", "p50", "p99", "p99.9", "max"):
        t.add_column(col, justify="left" if col in ("case", "window") else "right")
    for c in cases:
        m = c.metrics
        for w, label in (("before", "before the death"), ("after", "after the takeover")):
            # a window without answers has no percentiles (not a 0 ms cycle)
            t.add_row(c.case, label, fmt(c.distributions[f"cycle_{w}_histogram"]["count"]),
                      *(fmt(m[key] / 1e3) if (key := f"cycle_{w}_{q}_us") in m else ""
                        for q in ("p50", "p99", "p999", "max")))
        t.add_row(c.case, "across the death", fmt(m["across_death"]), "", "", "",
                  fmt(m["across_death_max_us"] / 1e3) if "across_death_max_us" in m else "")
    return t


def print_distributions(console, scenario, cases) -> None:
    """After a run's table: per case with a distribution, its percentiles,
    and, where ports differ, the ports ranked by p99 latency and by drops,
    with the loss clustering figures."""
    from rich.table import Table

    from routertwin.results import fmt

    shown = with_packet_windows([c for c in cases if getattr(c, "distributions", None)])
    if not shown:
        return
    t = Table(title=f"{scenario.name}: latency distribution (us) and loss clustering; queue lengths (packets)")
    for col in ("case", "p50", "p99", "p99.9", "max", "lost", "ports with loss", "worst port %",
                "time bins with loss", "queue", "queue mean", "queue p99", "queue max"):
        t.add_column(col, justify="right" if col not in ("case", "queue") else "left")
    for c in shown:
        m = c.metrics
        if not c.distributions.get("latency_histogram") and not queue_of(c.distributions)[1]:
            continue  # no latency of its own (a tcp_path run: its RTT below)

        def get(name: str) -> str:  # the router's names, or the pipeline's (with _us)
            for key in (name, f"{name}_us"):
                if key in m:
                    return fmt(m[key])
            return ""

        lost = get("lost_packets") or (f"{fmt(m['loss_pct'])} %" if "loss_pct" in m else "")
        qname, q = queue_of(c.distributions)
        t.add_row(c.case, get("latency_p50"), get("latency_p99"), get("latency_p999"), get("latency_max"),
                  lost, get("loss_ports"), get("loss_top_port_share"), get("loss_bins"), qname,
                  *((fmt(q["mean"]), str(q["p99"]), str(q["max"])) if q else ("", "", "")))
    if t.row_count:
        console.print(t)
    rtts = [c for c in shown if c.distributions.get("rtt_histogram", {}).get("count")]
    if rtts:
        rt = Table(title=f"{scenario.name}: TCP round-trip time samples of the last record (ms)")
        for col in ("case", "samples", "min", "p50", "p99", "p99.9", "max", "drops (bins)",
                    "fast recoveries (bins)", "timeouts (bins)"):
            rt.add_column(col, justify="right" if col != "case" else "left")
        for c in rtts:
            rt.add_row(c.case, fmt(c.distributions["rtt_histogram"]["count"]),
                       *(fmt(c.metrics[f"rtt_{q}_ms"]) for q in ("min", "p50", "p99", "p999", "max")),
                       *(events_in_bins(c.distributions, k) for k in ("drops", "fast_recovery", "timeout")))
        console.print(rt)
    timelines = [c for c in shown if c.distributions.get("timeline")]
    if timelines:
        console.print(timeline_table(scenario.name, timelines))
    cycles = [c for c in shown if "cycle_before_histogram" in c.distributions  # a pair with closed-loop threads
              and (c.metrics["across_death"]
                   or any(c.distributions[f"cycle_{w}_histogram"]["count"] for w in ("before", "after")))]
    if cycles:
        console.print(cycle_table(scenario.name, cycles))
    cells = [c for c in shown if c.distributions.get("delay_histogram", {}).get("cells")]
    if cells:  # the fabric kind: whole slots, drops per input
        ft = Table(title=f"{scenario.name}: cell delay (slots, enqueue to departure) and input drops")
        for col in ("case", "cells", "mean", "p50", "p99", "p99.9", "max", "input drops", "inputs with drops",
                    "worst input %", "time bins with drops"):
            ft.add_column(col, justify="right" if col != "case" else "left")
        for c in cells:
            m = c.metrics
            ft.add_row(c.case, fmt(c.distributions["delay_histogram"]["cells"]), fmt(m["mean_delay_slots"]),
                       *(fmt(m[f"delay_{q}_slots"]) for q in ("p50", "p99", "p999", "max")),
                       fmt(sum(c.distributions["input_drops"])), fmt(m["loss_ports"]),
                       fmt(m["loss_top_port_share"]), fmt(m["loss_bins"]))
        console.print(ft)
    units = [c for c in shown if c.distributions.get("unit_latency_histogram", {}).get("count")]
    if units:
        ut = Table(title=f"{scenario.name}: response time of the units completed (us; first packet sent to "
                         "last delivered)")
        for col in ("case", "units", "p50", "p99", "p99.9", "max"):
            ut.add_column(col, justify="right" if col != "case" else "left")
        for c in units:
            m = c.metrics
            ut.add_row(c.case, fmt(c.distributions["unit_latency_histogram"]["count"]),
                       *(fmt(m[f"unit_latency_{q}_us"]) for q in ("p50", "p99", "p999", "max")))
        console.print(ut)
    timed = [c for c in shown if not c.distributions.get("latency_histogram")
             and ("queue_wait_histogram" in c.distributions or "loss_timeline" in c.distributions)]
    if timed:
        wt = Table(title=f"{scenario.name}: queue wait of the requests that waited (ms), and the refusals and "
                         "failures over time (all replications)")
        for col in ("case", "waited", "p50", "p99", "p99.9", "max", "refused/failed", "by reason",
                    "time bins with any", "busiest bin"):
            wt.add_column(col, justify="right" if col not in ("case", "by reason") else "left")
        for c in timed:
            m, h = c.metrics, c.distributions.get("queue_wait_histogram")
            waits = (fmt(h["count"]), *(fmt(m[f"queue_wait_{q}_ms"]) for q in ("p50", "p99", "p999", "max"))) \
                if h and h["count"] else ("0" if h else "", "", "", "", "")  # failover: no queue
            tl = c.distributions.get("loss_timeline")
            row = [sum(col) for col in zip(*tl["ports"])] if tl else []
            total = sum(row)
            reasons = ", ".join(f"{n} {sum(map(sum, r)):.0f}" for n, r in sorted((tl or {}).get("reasons", {}).items()))
            busiest = max(range(len(row)), key=row.__getitem__) if total else None
            wt.add_row(c.case, *waits, fmt(total), reasons, fmt(m.get("loss_bins", 0.0)),
                       f"{busiest * tl['bin_s']:.4g} s: {row[busiest]:.0f}" if busiest is not None else "")
        console.print(wt)
    for c in shown:
        if not ports_differ(c.distributions):
            continue
        ports = c.distributions["ports"]
        worst = sorted(ports, key=lambda p: (-p["latency_p99"], p["port"]))[:5]
        lossy = sorted((p for p in ports if p["dropped"] > 0), key=lambda p: (-p["dropped"], p["port"]))[:5]
        egress = [k for k in ("egress_latency_p99", "egress_queue_p99", "egress_queue_max")
                  if any(k in p for p in ports)]  # the router's; the lb keeps ingress only
        pt = Table(title=f"{c.case}: ports differ (the 5 with the highest p99, the 5 with most drops"
                         + ("; egress: the packets that left on the port, and its queue)" if egress else
                            "; by the port a packet entered on)"))
        for col in ("port", "avg", "p50", "p99", "p99.9", "max", "dropped",
                    *(k.replace("_", " ").replace("latency ", "") for k in egress)):
            pt.add_column(col, justify="right")
        for p in worst + [p for p in lossy if p not in worst]:
            pt.add_row(str(p["port"]), fmt(p["latency_avg"]), fmt(p["latency_p50"]), fmt(p["latency_p99"]),
                       fmt(p["latency_p999"]), fmt(p["latency_max"]), str(p["dropped"]),
                       *(fmt(p.get(k, "")) for k in egress))
        console.print(pt)


def latency_plot(cases, path: Path, title: str, key: str = "latency_histogram", what: str = "packets",
                 xlabel: str = "latency (us)") -> Path | None:
    """The latency distributions (`key` of each case's distributions) of the
    cases as complementary CDFs (fraction of `what` slower than x, log
    scale: the tail is visible), with p50/p99/p99.9 marked, and dashed the
    closed form's (`analytic_<key>`) where the case carries one. None when
    no case has that histogram."""
    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()

    hists = [(c.case, c.distributions[key], c.distributions.get(f"analytic_{key}")) for c in cases
             if getattr(c, "distributions", None) and c.distributions.get(key, {}).get("count")]
    if not hists:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))

    def ccdf(h):
        total = sum(b[2] for b in h["bins"])
        xs, ys, above = [], [], total
        for lo, hi, n in h["bins"]:
            xs += [lo, hi]
            ys += [above / total, (above - n) / total]
            above -= n
        return xs, [max(y, 1e-9) for y in ys]

    for name, h, closed in hists[:12]:
        line, = ax.step(*ccdf(h), where="post", label=name)
        for q, marker in ((0.5, "o"), (0.99, "s"), (0.999, "^")):
            ax.plot([quantile(h, q)], [1 - q], marker, color=line.get_color(), markersize=4)
        if closed:  # the closed form's distribution beside the engine's (pipeline, method both)
            ax.step(*ccdf(closed), where="post", linestyle="--", linewidth=0.8, color=line.get_color())
    ax.set_yscale("log")
    ax.set_xscale("log")  # a tail 10x the body, or a full buffer 1000x it, stays readable
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"fraction of {what} slower")
    dashed = ", dashed: closed form" if any(closed for _, _, closed in hists[:12]) else ""
    ax.set_title(title + f"  (o p50, s p99, ^ p99.9{dashed})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path, dpi=110)


def queue_length_plot(cases, path: Path, title: str) -> Path | None:
    """The time-weighted queue lengths of the cases (the cores' queue, or the
    egress ports'): the fraction of time the queue held n packets or more,
    log scale, with the mean marked. None when no case has one."""
    from routertwin.validation.plots import pyplot, save_png

    queues = [(c.case, *queue_of(c.distributions)) for c in cases if getattr(c, "distributions", None)]
    queues = [(case, name, q) for case, name, q in queues if q]
    if not queues:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for case, name, q in queues[:12]:
        total = sum(sec for _, sec in q["bins"])
        xs, ys, above = [], [], total
        for n, sec in q["bins"]:
            xs.append(n)
            ys.append(above / total)  # P(N >= n)
            above -= sec
        line, = ax.step(xs, [max(y, 1e-9) for y in ys], where="post", label=f"{case} ({name})")
        ax.axvline(q["mean"], color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xscale("symlog", linthresh=10)  # lengths 0..10 linear, a long queue still readable
    ax.set_xlim(left=0)
    ax.set_xlabel("queue length n (packets waiting or in service)")
    ax.set_ylabel("fraction of time with n or more")
    ax.set_title(title + "  (dotted: time-weighted mean)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path, dpi=110)


def loss_rows(timeline: dict) -> tuple[list[str], list[list[float]], str]:
    """The rows a loss heat map shows: one per port (labels "1", "2", ...),
    or, for a one-port timeline that keeps reasons (the pipeline's tester),
    one per drop reason, so that what dropped shows instead of one row."""
    reasons = timeline.get("reasons") or {}
    if len(timeline["ports"]) == 1 and reasons:
        names = sorted(reasons)
        where = timeline["port_names"][0] if timeline.get("port_names") else "the tester's one port"
        return names, [reasons[n][0] for n in names], f"drop reason ({where})"
    if timeline.get("port_names"):
        return list(timeline["port_names"]), timeline["ports"], "server (where the packet was dropped)"
    return [str(i + 1) for i in range(len(timeline["ports"]))], timeline["ports"], "tester port (packet's ingress)"


def loss_timeline_plot(case, path: Path, title: str) -> Path | None:
    """Drops per port (rows) and time bin (columns) of one case as a heat map,
    with the drops per port beside it: clustering on ports or in time shows.
    A one-port run with drop reasons has a row per reason (loss_rows). A
    tcp_path run's retransmission timeline (the sender's fast recoveries
    and timeouts, the same bins) is drawn under it on the same time axis,
    so that each loss response shows below the drops it follows.
    None when the case has no drops."""
    import numpy as np

    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()

    dist = getattr(case, "distributions", None) or {}
    tl = dist.get("loss_timeline")
    if not tl:
        return None
    labels, rows, ylabel = loss_rows(tl)
    m = np.array(rows, dtype=float)
    if m.sum() <= 0:
        return None
    rt = dist.get("retransmission_timeline")
    rt_names = sorted((rt or {}).get("reasons") or {})
    span = tl["bin_s"] * m.shape[1]
    if rt_names:
        # the same time extent and a colorbar each: the two time axes line up
        fig, axes = plt.subplots(2, 2, figsize=(9, 6),
                                 gridspec_kw={"width_ratios": [4, 1], "height_ratios": [max(m.shape[0], 2), 2]})
        (ax, bx), (rx, rbx) = axes
    else:
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 4.5), gridspec_kw={"width_ratios": [4, 1]}, sharey=True)
    im = ax.imshow(m, aspect="auto", origin="lower", interpolation="nearest", cmap="magma_r",
                   extent=(0, span, 0.5, m.shape[0] + 0.5))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    if not labels[0].isdigit():
        ax.set_yticks(np.arange(1, m.shape[0] + 1), labels, fontsize=7)
    fig.colorbar(im, ax=ax, label=f"drops per {tl['bin_s']:.3g} s bin")
    bx.barh(np.arange(1, m.shape[0] + 1), m.sum(axis=1), color="tab:red")
    bx.set_xlabel("drops")
    if rt_names:
        bx.set_ylim(0.5, m.shape[0] + 0.5)  # the heat map's rows (not shared in this layout)
        bx.tick_params(labelleft=False)
        r = np.array([rt["reasons"][n][0] for n in rt_names], dtype=float)
        rim = rx.imshow(r, aspect="auto", origin="lower", interpolation="nearest", cmap="Blues",
                        extent=(0, rt["bin_s"] * r.shape[1], 0.5, r.shape[0] + 0.5), vmin=0)
        rx.set_yticks(np.arange(1, r.shape[0] + 1), [f"sender: {n}" for n in rt_names], fontsize=7)
        rx.set_xlabel("time (s)")
        fig.colorbar(rim, ax=rx, label="events per bin")
        rbx.barh(np.arange(1, r.shape[0] + 1), r.sum(axis=1), color="tab:blue")
        rbx.set_ylim(0.5, r.shape[0] + 0.5)
        rbx.set_yticks([])
        rbx.set_xlabel("loss responses")
    reasons = tl.get("reasons") or {}
    if reasons and (labels[0].isdigit() or tl.get("port_names")):
        # several ports: the reasons' totals in the title
        title += " (" + ", ".join(f"{n} {sum(map(sum, r)):.0f}" for n, r in sorted(reasons.items())) + ")"
    fig.suptitle(title, fontsize=9)
    return save_png(fig, path, dpi=110)


def distribution_source(mapped) -> Path:
    """The scenario whose case of a mapped row's id holds the distribution
    behind it: its distribution_scenario (the same cases on an engine that
    has one; the webswitch kind's ns-3 twins of MVA rows), else its own."""
    return getattr(mapped, "distribution_scenario", None) or mapped.scenario


def markdown_study(rows, outcomes) -> list[str]:
    """REPORT.md lines for one study: the latency percentiles and loss
    clustering of every case its rows replay (once per case, with the rows
    it replays), and the ports of cases whose ports differ."""
    from routertwin.results import fmt

    by_case: dict[tuple, list[str]] = {}
    cases: dict[tuple, Any] = {}
    labels: dict[tuple, str] = {}
    for r in rows:
        source = distribution_source(r.mapped)
        outcome = outcomes.get(source)
        if outcome is None or outcome.error:
            continue
        key = (source, r.mapped.case)
        case = next((c for c in outcome.cases if c.case == r.mapped.case and c.distributions), None)
        if case is None:
            continue
        cases[key] = case
        if source != r.mapped.scenario:  # another engine's twin of the row's case: say which
            labels[key] = f"{case.case} ({Path(source).parent.name}/{Path(source).name})"
        by_case.setdefault(key, []).append(r.ref.id)
    if not cases:
        return []
    for key, case in list(cases.items()):
        for w in with_packet_windows([case])[1:]:
            cases[key + (w.case,)] = w
            by_case[key + (w.case,)] = by_case[key]
    out = ["", "Latency distribution and loss clustering of the replayed cases (twin; us; "
                "percentiles from a Boost.Histogram of 100 log bins per decade, within 2.3 % of exact; "
                "steady-state cases histogram per-block means, so their upper percentiles understate "
                "per-packet ones and `max` is the walks' bound; a `-packet-<N>ms` row is such a case's "
                "packet-level window: the same trial, every packet, over its first N ms from empty "
                "queues), and the time-weighted length of the "
                "queue in front of the cores or of the egress ports (packets waiting or in service; "
                "RSS cores and ports: each one's queue, pooled; none in steady state):", "",
           "| case | rows | p50 | p99 | p99.9 | max | lost | ports with loss | worst port % of loss | "
           "time bins with loss | queue | queue mean | queue p99 | queue max |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    header = len(out)
    for key, case in cases.items():
        m = case.metrics
        if not case.distributions.get("latency_histogram") and not queue_of(case.distributions)[1]:
            continue  # no latency of its own (a tcp_path run: its RTT below)

        def g(name: str) -> str:  # the router's names, or the pipeline's (with _us)
            for key in (name, f"{name}_us"):
                if key in m:
                    return fmt(m[key])
            return ""

        lost = g("lost_packets") or (f"{fmt(m['loss_pct'])} %" if "loss_pct" in m else "")
        qname, q = queue_of(case.distributions)
        qcells = f"{fmt(q['mean'])} | {q['p99']} | {q['max']}" if q else " |  | "
        out.append(f"| {labels.get(key, case.case)} | {', '.join(f'`{i}`' for i in by_case[key])} | {g('latency_p50')} "
                   f"| {g('latency_p99')} | {g('latency_p999')} | {g('latency_max')} | {lost} "
                   f"| {g('loss_ports')} | {g('loss_top_port_share')} | {g('loss_bins')} | {qname} | {qcells} |")
    if len(out) == header:
        out = []  # no case with a latency of its own
    rtts = [(key, c) for key, c in cases.items() if c.distributions.get("rtt_histogram", {}).get("count")]
    if rtts:
        out += ["", "Round-trip times the TCP sender measured (its RTT samples over the last record, ms; "
                    "queueing on the path shows as the spread above the minimum), and the run's drops beside "
                    "the sender's loss responses (fast recoveries, timeouts), each with the time bins it fell "
                    "in (of 100 over the run; the heat maps show them bin by bin):", "",
                "| case | rows | samples | min | p50 | p99 | p99.9 | max | drops (bins) | fast recoveries (bins) "
                "| timeouts (bins) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for key, c in rtts:
            m = c.metrics
            out.append(f"| {c.case} | {', '.join(f'`{i}`' for i in by_case[key])} | "
                       f"{fmt(c.distributions['rtt_histogram']['count'])} | "
                       + " | ".join(fmt(m[f"rtt_{q}_ms"]) for q in ("min", "p50", "p99", "p999", "max"))
                       + " | " + " | ".join(events_in_bins(c.distributions, k)
                                            for k in ("drops", "fast_recovery", "timeout")) + " |")
    units = [(key, c) for key, c in cases.items() if c.distributions.get("unit_latency_histogram", {}).get("count")]
    if units:
        out += ["", "Response time of the units (transactions, connections, queries) completed in the window, "
                    "from a unit's first packet sent to its last delivered (us; the step gaps between its "
                    "packets included):", "", "| case | units | p50 | p99 | p99.9 | max |", "|---|---|---|---|---|---|"]
        for key, c in units:
            m = c.metrics
            out.append(f"| {c.case} | {fmt(c.distributions['unit_latency_histogram']['count'])} | "
                       + " | ".join(fmt(m[f"unit_latency_{q}_us"]) for q in ("p50", "p99", "p999", "max")) + " |")
    return out


def events_in_bins(dist: dict, kind: str) -> str:
    """'N (b bins)' of a tcp_path case: its drops (kind "drops", every
    server) or its sender's loss responses of one kind ("fast_recovery",
    "timeout"), and the time bins they fell in; "" without the timeline."""
    tl = dist.get("loss_timeline" if kind == "drops" else "retransmission_timeline")
    if not tl:
        return ""
    rows = tl["ports"] if kind == "drops" else (tl.get("reasons") or {}).get(kind, [[0.0]])
    per_bin = [sum(col) for col in zip(*rows)]
    return f"{sum(per_bin):.0f} ({sum(1 for x in per_bin if x > 0)})"


def ports_plot(case, path: Path, title: str) -> Path | None:
    """Latency per tester port of one case (avg, p99, max as bars over the
    ports), so latency clustered on a few ports shows. None unless the case
    has per-port figures and its ports differ (ports_differ)."""
    import numpy as np

    from routertwin.validation.plots import pyplot, save_png

    dist = getattr(case, "distributions", None) or {}
    if not ports_differ(dist):
        return None
    plt = pyplot()
    ports = dist["ports"]
    x = np.array([p["port"] for p in ports])
    queued = any("egress_queue_p99" in p for p in ports)
    fig, axes = plt.subplots(2 if queued else 1, 1, figsize=(9, 7 if queued else 4), sharex=True, squeeze=False)
    ax = axes[0][0]
    ax.bar(x, [p["latency_max"] for p in ports], color="tab:red", alpha=0.35, label="max (ingress)")
    ax.bar(x, [p["latency_p99"] for p in ports], color="tab:orange", alpha=0.7, label="p99 (ingress)")
    ax.bar(x, [p["latency_avg"] for p in ports], color="tab:blue", label="avg (ingress)")
    if all("egress_latency_p99" in p for p in ports):
        ax.plot(x, [p["egress_latency_p99"] for p in ports], "k_", markersize=12, label="p99 of what left the port")
    ax.set_ylabel("latency (us)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    if queued:
        bx = axes[1][0]
        bx.bar(x, [p.get("egress_queue_max", 0) for p in ports], color="tab:red", alpha=0.35, label="max")
        bx.bar(x, [p.get("egress_queue_p99", 0) for p in ports], color="tab:orange", alpha=0.7, label="p99")
        bx.bar(x, [p.get("egress_queue_mean", 0) for p in ports], color="tab:blue", label="mean")
        bx.set_ylabel("egress queue (packets, time-weighted)")
        bx.legend(fontsize=7)
        bx.grid(True, axis="y", alpha=0.3)
    axes[-1][0].set_xlabel("tester port (latency: packet's ingress; egress: what left the port)" if queued
                           else "tester port (latency: packet's ingress)")
    return save_png(fig, path, dpi=110)
