"""What a pipeline case reports."""

from __future__ import annotations

# Metrics a case may report (mappings are checked against them). Packet level
# adds core<i>_util per core and <resource>_util for each engine resource.
METRICS = (
    "pps", "gbps", "gbps_out", "line_rate_fraction", "latency_avg_us", "latency_min_us",
    "latency_max_us", "latency_p50_us", "latency_p99_us", "latency_p999_us", "cycles_per_packet", "loss_pct", "core_util", "cores_util", "packet_input_util",
    "packet_output_util", "lock_util", "memory_util", "line_rate_util", "ordering_util",
    "pps_analytic", "latency_analytic_us", "latency_analytic_p50_us", "latency_analytic_p99_us",
    "latency_analytic_p999_us", "loss_analytic_pct", "core_queue_mean", "core_queue_p99", "core_queue_max",
    "flows_started", "flows_active_mean", "flows_active_max",
    # loss clustering over the drop timeline (issue 15; one tester port)
    "loss_ports", "loss_top_port_share", "loss_bins",
)

# Units (Results.to_dataframe's df.attrs["units"]); names or regular
# expressions. Utilizations are fractions of the resource's capacity.
UNITS = {
    "pps": "packets/s", "pps_analytic": "packets/s", "gbps": "Gbit/s", "gbps_out": "Gbit/s",
    "line_rate_fraction": "fraction", r".*_util": "fraction", "cycles_per_packet": "cycles",
    "frame": "bytes", "port_rate_bps": "bit/s", "cores": "cores", r"core_queue_(mean|p99|max)": "packets",
    "flows_started": "flows", r"flows_active_(mean|max)": "flows",
    "loss_ports": "ports", "loss_top_port_share": "% of drops", "loss_bins": "time bins",
}


def rate_metrics(pps: float, frame: float, out_frame: float, line_in_pps: float) -> dict[str, float]:
    """The rates of `pps` forwarded frames, the first metrics of every case
    (analytic and packet level): frames/s, Gbit/s in (frames of `frame`
    bytes) and out (`out_frame` bytes), and the share of the input line rate."""
    return {
        "pps": pps,
        "gbps": pps * frame * 8.0 / 1e9,
        "gbps_out": pps * out_frame * 8.0 / 1e9,
        "line_rate_fraction": pps / line_in_pps,
    }
