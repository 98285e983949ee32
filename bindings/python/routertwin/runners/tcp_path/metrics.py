"""What a tcp_path case reports."""

from __future__ import annotations

METRICS = (
    # IxChariot's table: over the timing records, file_bytes x 8 / response time
    "throughput_mbps", "throughput_min_mbps", "throughput_max_mbps",
    "response_time_s", "response_time_min_s", "response_time_max_s",
    # the run behind it
    "steady_goodput_mbps", "ceiling_mbps", "simulated_bytes", "rtt_mean_ms", "rtt_min_ms",
    # the sender's RTT samples of the last record (a Boost histogram, 2.3 % bins)
    "rtt_p50_ms", "rtt_p99_ms", "rtt_p999_ms", "rtt_max_ms",
    "recoveries", "timeouts", "bottleneck_utilization", "nat_ns_per_packet",
    # duration mode (iperf3 -t): goodput over the duration
    "goodput_mbps",
)
# Units (Results.to_dataframe's df.attrs["units"]) the suffixes (_mbps, _s, _ms) do not give.
UNITS = {"simulated_bytes": "bytes", "recoveries": "fast recoveries", "timeouts": "retransmission timeouts",
         "bottleneck_utilization": "fraction", "nat_ns_per_packet": "ns"}
