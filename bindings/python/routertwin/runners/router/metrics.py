"""What a router case reports: a tester's trial as a CaseResult."""

from __future__ import annotations

from routertwin.distributions import loss_clustering, queue_metrics
from routertwin.methods import rfc2544
from routertwin.results import CaseResult

# Optional packet-mode results, passed from the native run to the metrics:
# how long frames waited for the tester's line, and flow-level churn.
TESTER_WAIT = ("tester_wait_avg_us", "tester_wait_max_us", "tester_waited_fraction")
FLOW_CHURN = ("flows_started", "flows_active_mean", "flows_active_max_port")

# Units (Results.to_dataframe's df.attrs["units"]); names or regular expressions.
UNITS = {
    "pps": "packets/s", "tx_pps": "packets/s", "pct_of_theoretical": "%", "rx_pct": "%",
    "throughput_gbps": "Gbit/s", r"latency_(min|avg|max|p50|p99|p999)": "us", "lost_packets": "packets",
    "zero_loss": "1 if no frame was lost", r"mean_(ingress|egress)_escapes": "escapes per frame",
    "fabric_load": "fraction", "lookup_load": "fraction", "ip_bytes": "bytes", "routes": "routes",
    "offered_load": "fraction of max rate", "loss_ports": "ports", "loss_top_port_share": "% of drops",
    "loss_bins": "time bins", r"egress_queue_(mean|p99|max)": "packets",
    r"window_latency_(min|avg|max|p50|p99|p999)": "us", "window_lost_packets": "packets",
    "window_loss_ports": "ports", "window_loss_top_port_share": "% of drops", "window_loss_bins": "time bins",
    r"window_egress_queue_(mean|p99|max)": "packets",
    r"tester_wait_(avg|max)_us": "us", "tester_waited_fraction": "fraction of frames",
    "flows_started": "flows", "flows_active_mean": "flows (all ports, time-average)",
    "flows_active_max_port": "flows (one port, most at once)",
}


def case_result(case_id: str, params: dict, t: rfc2544.TrialResult, more: dict | None = None,
                window: dict | None = None) -> CaseResult:
    """A trial as a CaseResult; `window` (RouterTester.packet_window) adds
    its packet-level metrics as window_<name> and its distributions as
    distributions["packet_window"]."""
    e = t.extra
    metrics = {
        "pps": e["rx_pps"],
        "tx_pps": e["tx_pps"],
        "pct_of_theoretical": e["tx_pct"],
        "rx_pct": e["rx_pct"],
        "throughput_gbps": e["throughput_gbps"],
        "mean_ip_bytes": e["mean_ip_bytes"],
        "latency_min": t.latency_min_us,
        "latency_avg": t.latency_avg_us,
        "latency_max": t.latency_max_us,
        **{k: e[k] for k in ("latency_p50", "latency_p99", "latency_p999") if k in e},
        "lost_packets": float(t.lost),
        "loss_pct": 100.0 * t.loss_ratio,
        "zero_loss": 1.0 if t.lost == 0 else 0.0,
        "mean_ingress_escapes": e["mean_ingress_escapes"],
        "mean_egress_escapes": e["mean_egress_escapes"],
        **{k: e[k] for k in TESTER_WAIT if k in e},
        **{k: float(e[k]) for k in FLOW_CHURN if k in e},
        "fabric_load": e["fabric_load"],
        "lookup_load": e["lookup_load"],
    }
    dist = dict(e.get("distributions", {}))
    if "loss_timeline" in dist:
        metrics.update(loss_clustering(dist["loss_timeline"]))
    if "egress_queue" in dist:
        metrics.update(queue_metrics(dist["egress_queue"], "egress_queue"))
    metrics.update(more or {})
    if window is not None:
        metrics.update({f"window_{k}": v for k, v in window["metrics"].items()})
        dist["packet_window"] = {"duration_s": window["duration_s"], "metrics": window["metrics"],
                                 **window["distributions"]}
    bottleneck = e["bottleneck"] if t.lost > 0 else ""
    counters = {k: float(v) for k, v in sorted(e["drops"].items())}
    return CaseResult(case=case_id, params=params, metrics=metrics, bottleneck=bottleneck,
                      counters=counters, distributions=dist)
