"""What an lb case reports."""

from __future__ import annotations

# The rate metric of each workload, named as the reference rows name it.
UNIT_METRIC = {"http11": "tps", "http10": "cps", "dns": "qps", "synflood": "attack_pps"}

METRICS = (
    # step
    "rate", "tps", "cps", "qps", "attack_pps", "attack_gbps", "offered_rate", "cpu_util", "cpu_max",
    "cpu_closed_form", "cycles_per_unit", "packets_per_unit", "throughput_gbps", "legit_tps",
    "legit_offered_tps", "legit_success_pct", "cookies_sent", "connections_end", "seconds_to_fill",
    # tolly
    "intercept_pct", "slope_pct_per_munit", "r2", "rate_at_100", "rate_at_100_lo", "rate_at_100_hi",
    "saturation_rate", "saturation_cpu", "saturation_cpu_max", "saturation_vs_line_pct", "line_cpu_at_saturation",
    "units_failed", "frames_to_servers", "delivery_errors", "expired", "time_wait_end",
    # fill
    "max_concurrent", "concurrent", "connections_per_core", "bytes_per_connection", "insert_rate",
    # max-cps, max-tps, max-concurrent (RFC 3511 / RFC 9411)
    "max_cps", "max_tps", "trials", "lowest_failing_rate", "rate_at_full_cpu", "passed", "fill_validated",
    # occupancy samples
    "connections", "time_wait",
    # remap
    "moved", "moved_pct", "on_failed_pct", "table_changes_pct",
)
