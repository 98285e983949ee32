// Runs a RouterConfig under the ns-3 scheduler through a RouterNode
// (router-node.h): one event per batch of
// simulated time (RouterConfig::batchSeconds), each advancing the
// packet-level engine to the event's time. Inside a batch packets are
// compact descriptors; ns-3 sees only the batch boundaries.
//
// The result equals RunRouterPacketLevel() for the same config (same seed,
// same batches); `wallSeconds` reports the wall time of the run.
//
// Config keys of routertwin._core.run_router (bindings/bind_router.cc), each
// a RouterConfig field (router-model.h) in these units:
//   mode "packet" (this helper) | "steady" (RunRouterSteadyState)
//   ports, ports_per_pfe, sonet ("OC-192"), fcs_bits (16|32), shared_flag,
//   address_control, protocol_bytes
//   ip_bytes, offered_load (fraction of theoretical), routes,
//   arrivals ("constant" | "poisson" | "onoff" | "mmpp": each port's frame
//   instants, traffic-profile.h; random kinds in packet mode, not with a
//   trace), burst_mean_frames, burst_peak_load (on/off: share of the port's rate),
//   mmpp_rate_ratio, mmpp_high_fraction, mmpp_cycle_s,
//   flow_sizes ("none" | "pareto" | "lognormal": flow-level traffic, flows
//   starting by `arrivals` with heavy-tailed packet counts; packet mode; not
//   with a trace nor destination_popularity), pareto_alpha, pareto_min_packets,
//   lognormal_mu, lognormal_sigma, flow_pps (0: offered rate / flows), flows
//   (mean flows active a port),
//   ip_mix ({"<IP bytes>": weight}: every packet its own size; packet mode;
//   ip_bytes is then the reference size of fixed_latency_us), ip_mix_order
//   ("random" | "sequence"), trace_file (a pcap or pcapng file every port
//   replays: IP sizes and inter-arrival times rescaled to offered_load, looped;
//   packet mode; not with ip_mix), trace_files (one file per port instead,
//   "" for an idle port), trace_destinations (true: each packet goes where
//   the FIB sends the trace's own IPv4 destination; false: the tester's
//   port-to-peer destinations),
//   routes_as_destinations, route_first_prefix ("16.0.0.0"), route_file (a FIB
//   file: "a.b.c.d/len TARGET" lines, TARGET a port, ECMP ports "p,q,..." or
//   blackhole | unreachable | prohibit; docs/import.md)
//   lookup_probes_per_second, lookup_queue_us
//   cell_bytes, internal_header_bytes, fabric_gbps_per_pfe, queueing
//   ("fifo"|"voq"), scheduler ("islip"|"fifo_random"|"fifo_rr"),
//   islip_iterations, speedup, ingress_buffer_us, egress_buffer_us
//   fixed_latency_us, duration_s, seed, batch_us, sample_frames, block_packets,
//   loss_bins (time bins of the per-port drop timeline)
// Results: tx/rx packets and pps, theoretical_pps, tx_pct, rx_pct,
// throughput_gbps (IP octets), mean_ip_bytes, latency_{min,avg,max,p50,p99,p999}_us,
// latency_histogram, loss_timeline (drops per port and time bin), mean escapes per
// frame on each link, tester_wait_avg_us, tester_wait_max_us,
// tester_waited_fraction (frames' wait for the tester's line; packet mode),
// flows_started, flows_active_mean (all ports), flows_active_max_port
// (flow-level traffic), fabric_load, lookup_load, bottleneck, drops by reason,
// per-port counters (packet mode also egress_packets, egress_ip_bytes and
// egress_load: what left each port, whichever port sent it); wall_s and
// events (packet mode).
#ifndef ROUTERTWIN_ROUTER_SCENARIO_H
#define ROUTERTWIN_ROUTER_SCENARIO_H

#include "router-model.h"

namespace routertwin
{

struct RouterScenarioResult
{
    RouterResult result;
    double wallSeconds = 0;
    uint64_t events = 0; ///< ns-3 events executed
};

/// Runs under ns3::Simulator and destroys the simulator afterwards.
RouterScenarioResult RunRouterScenario(const RouterConfig& cfg);

} // namespace routertwin

#endif
