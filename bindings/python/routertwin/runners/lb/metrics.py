"""What an lb case reports."""

from __future__ import annotations

# The rate metric of each workload, named as the reference rows name it.
UNIT_METRIC = {"http11": "tps", "http10": "cps", "dns": "qps", "synflood": "attack_pps"}

METRICS = (
    # step
    "rate", "tps", "cps", "qps", "attack_pps", "attack_gbps", "offered_rate", "cpu_util", "cpu_max",
    "cpu_closed_form", "cycles_per_unit", "packets_per_unit", "throughput_gbps", "legit_tps",
    "legit_offered_tps", "legit_success_pct", "cookies_sent", "connections_end", "seconds_to_fill",
    # tunnel: ICMP fragmentation needed sent by the balancer, and acted on by the clients (PMTUD)
    "icmp_frag_needed", "icmp_frag_needed_used",
    # tolly
    "intercept_pct", "slope_pct_per_munit", "r2", "rate_at_100", "rate_at_100_lo", "rate_at_100_hi",
    "saturation_rate", "saturation_cpu", "saturation_cpu_max", "saturation_vs_line_pct", "line_cpu_at_saturation",
    "units_failed", "frames_to_servers", "delivery_errors", "expired", "time_wait_end", "aging_cpu", "latency_us",
    # distributions (issue 15): frames' latency, units' response time, the cores' queue lengths
    "latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us", "unit_latency_p50_us",
    "unit_latency_p99_us", "unit_latency_p999_us", "unit_latency_max_us", "core_queue_mean", "core_queue_p99",
    "core_queue_max", "loss_ports", "loss_top_port_share", "loss_bins",
    # fill
    "max_concurrent", "concurrent", "connections_per_core", "bytes_per_connection", "insert_rate",
    # max-cps, max-tps, max-concurrent (RFC 3511 / RFC 9411)
    "max_cps", "max_tps", "trials", "lowest_failing_rate", "rate_at_full_cpu", "passed", "fill_validated",
    # occupancy samples
    "connections", "time_wait",
    # remap
    "moved", "moved_pct", "on_failed_pct", "on_added_pct", "on_drained_pct", "redirected_pct",
    "refused_pct", "table_changes_pct", "after_max_pct",
    # ecmp
    "on_failed_instance_pct", "on_added_instance_pct", "broken_local_pct", "broken_local_sloppy_pct",
    "broken_shared_pct", "broken_maglev_pct", "hash_space_moved_pct", "instance_after_max_pct", "buckets_moved",
    "buckets_moved_pct", "buckets_busy_pct",
    # split (content switching; to_<pool>_pct and rule_<n>_pct per pool and rule)
    "requests", "terms_per_request", "bytes_compared_per_request", "default_pct", "no_pool_pct",
)

# Units of what a case reports and takes (Results.to_dataframe's df.attrs["units"]);
# keys are names or regular expressions. CPU is in percent, as the Tolly report gives it.
UNITS = {
    "rate": "units/s", "offered_rate": "units/s", "tps": "transactions/s", "legit_tps": "transactions/s",
    "legit_offered_tps": "transactions/s", "cps": "connections/s", "qps": "queries/s", "attack_pps": "packets/s",
    "cpu_util": "%", "cpu_max": "%", "aging_cpu": "%", "latency_us": "us",
    r"(unit_)?latency_(p50|p99|p999|max)_us": "us", r"core_queue_(mean|p99|max)": "packets", "cpu_closed_form": "%", r"core\d+_util": "%", "saturation_cpu": "%",
    "saturation_cpu_max": "%", "line_cpu_at_saturation": "%", "slope_pct_per_munit": "% per 10^6 units/s",
    "rate_at_100": "units/s", "rate_at_100_lo": "units/s", "rate_at_100_hi": "units/s", "saturation_rate": "units/s",
    "cycles_per_unit": "cycles", "packets_per_unit": "packets", "cookies_sent": "packets", "icmp_frag_needed": "packets", "icmp_frag_needed_used": "packets",
    "connections_end": "connections", "max_concurrent": "connections", "concurrent": "connections",
    "connections_per_core": "connections", "moved": "connections", "keys": "connections", "r2": "1",
    "cores": "cores", "servers": "servers", "steps": "units/s",
    "buckets_moved": "buckets", "instances": "instances",
    "loss_ports": "ports", "loss_top_port_share": "% of drops", "loss_bins": "time bins",
    "requests": "requests", "terms_per_request": "pattern tests", "bytes_compared_per_request": "bytes",
    r"(to_.+|rule_\d+|default|no_pool)_pct": "% of requests",
}
