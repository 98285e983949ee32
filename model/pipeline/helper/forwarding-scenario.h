// ForwardingScenario: wires an Rfc2544Tester to a PipelineDevice running the
// IPv4 forwarding workload, runs ns3::Simulator until every frame is back or
// dropped, and returns the figures an RFC 2544 report has. Simulator::Destroy
// runs at the end of each Run, so runs repeat in one process.
//
// The same configuration arrives from Python as a dict
// (routertwin._core.run_pipeline); ForwardingScenarioConfig::FromKeys maps
// the keys below onto the struct, and rejects any other key with
// std::invalid_argument naming it (ValueError in Python).
//
// Keys (units, default):
//   seed                        int, 1           Poisson arrival stream
//   num_cores                   int, 1           cores
//   clock_hz                    float Hz, 1e9    core clock
//   scheduling                  str, "ordered"   ordered | atomic | untagged | rss
//   input_pps_ceiling           float pps, 0     packet input engine; 0 = none
//   output_pps_ceiling          float pps, 0     packet output engine; 0 = none
//   memory_bytes_per_s          float B/s, 0     memory/IO bandwidth; 0 = none
//   memory_bytes_per_frame_byte float, 2         memory traffic per frame byte
//   memory_bytes_per_packet     float B, 0       fixed memory traffic per packet
//   port_bit_rate               float bit/s, 10e9  tester ports and device egress port
//   frame_bytes                 int B, 64        frame incl. FCS, 64..9216
//   offered_pps                 float pps, 0     0 = line rate of the port
//   arrivals                    str, "constant"  constant | poisson
//   num_flows                   int, 4           flows, offered round-robin
//   unrouted_flows              int, 0           the last N flows have no route (no_route drops)
//   duration_s                  float s, 0.01    offered traffic duration
//   warmup_s                    float s, -1      start of the forwarded-rate window;
//                                                -1 = duration_s / 10
//   batch_interval_s            float s, 1e-5    tester time slice per ns-3 event
//   loss_bins                   int, 100         time bins of the drop timeline over duration_s
//   input_queue_depth           int pkts, 1024   packets waiting for a core; 0 = unbounded
//   core_queue_depth            int pkts, 1024   rss: per-core queue; 0 = unbounded
//   lock_hold_cycles            float cycles, 0  per-packet service under a global lock
//   flow_section_cycles         float cycles, 0  ordered: the end of each packet's service under
//                                                its flow's ATOMIC tag (a tag switch the core
//                                                waits for); not with lock_hold_cycles
//   fixed_latency_s             float s, 0       pipeline depth (I/O engines, DMA)
//   copy_cycles_per_byte        float, 0         extra core cycles per frame byte
//   crypto_cycles_per_byte      float, 0         extra core cycles per frame byte
//   fixed_cycles_per_packet     float cycles, 0  CycleCost fixed part
//   cycles_per_frame_byte       float, 0         CycleCost per frame byte
//   counter_prices              dict str->float, {}  cycles per dp_ops counter unit,
//                                                by dp_ops_counter_name (e.g. table_probes)
//   extra_routes                int, 0           filler /24 routes in the FIB (<= 65536)
//   run_core_per_packet         bool, false      run the core on every packet
// Workloads beyond one frame size at constant spacing (issue 16; the tester's
// TrafficConfig in model/testers/model/rfc2544-tester.h):
//   frame_mix                   str or dict, none  a named mix (simple_imix, imix_570,
//                                                spirent_imix, four_size_imix) or
//                                                {"<frame bytes>": weight, ...}; every frame
//                                                carries its own size; not with frame_bytes
//   frame_order                 str, "random"    random (each frame drawn) | sequence (a fixed
//                                                interleaving with exact shares per cycle)
//   frame_fixed_cycles          dict, {}         {"<frame bytes>": cycles}: fixed cycles per
//                                                packet of that size (in place of
//                                                fixed_cycles_per_packet)
//   arrivals                    also "onoff" | "mmpp"
//   burst_mean_frames           float, 16        onoff: mean frames per burst (geometric)
//   burst_peak_pps              float pps, 0     onoff: rate in a burst; 0 = port line rate
//   mmpp_rate_ratio             float, 4         mmpp: high-state rate / low-state rate
//   mmpp_high_fraction          float, 0.2       mmpp: share of time in the high state
//   mmpp_cycle_s                float s, 1e-3    mmpp: mean high + low sojourn
//   flow_popularity             str, "round_robin"  round_robin | uniform | zipf
//   zipf_exponent               float, 1         zipf: flow of rank k has weight k^-s
//   flow_sizes                  str, "none"      none | pareto | lognormal: flow-level traffic:
//                                                flows start by `arrivals` (at offered_pps /
//                                                mean packets per flow), send that many packets
//                                                at flow_pps, then end (FlowLevelProcess); not
//                                                with flow_popularity or trace_file
//   pareto_alpha                float, 1.2       pareto: tail index, > 1
//   pareto_min_packets          float, 1         pareto: xm, packets, >= 1
//   lognormal_mu                float, 2         lognormal: mean of ln(packets)
//   lognormal_sigma             float, 1         lognormal: sd of ln(packets)
//   flow_pps                    float pps, 0     each flow's packet rate; 0 = offered_pps / num_flows
//                                                (num_flows ~ the mean number of active flows)
//   trace_file                  str, ""          pcap file replayed as the offered traffic
//                                                (sizes, flows by 5-tuple, instants); not
//                                                with frame_bytes, frame_mix or arrivals
//   trace_rescale               bool, false      scale the trace's instants to offered_pps
//                                                (0 = the port's line rate)
//   trace_loop                  bool, false      replay the trace until duration_s
#ifndef ROUTERTWIN_FORWARDING_SCENARIO_H
#define ROUTERTWIN_FORWARDING_SCENARIO_H

#include "config-keys.h"
#include "latency-histogram.h"
#include "queue-length-histogram.h"
#include "traffic-profile.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct ForwardingScenarioConfig
{
    uint64_t seed = 1;
    uint32_t numCores = 1;
    double clockHz = 1e9;
    std::string scheduling = "ordered";
    double inputPpsCeiling = 0;
    double outputPpsCeiling = 0;
    double memoryBytesPerSecond = 0;
    double memoryBytesPerFrameByte = 2;
    double memoryBytesPerPacket = 0;
    double portBitRate = 10e9;
    uint32_t frameBytes = 64;
    double offeredPps = 0;
    std::string arrivals = "constant";
    uint32_t numFlows = 4;
    uint32_t unroutedFlows = 0;
    double durationSeconds = 0.01;
    double warmupSeconds = -1;
    double batchIntervalSeconds = 1e-5;
    uint32_t lossBins = 100;
    uint32_t inputQueueDepth = 1024;
    uint32_t coreQueueDepth = 1024;
    double lockHoldCycles = 0;
    double flowSectionCycles = 0;
    double fixedLatencySeconds = 0;
    double copyCyclesPerByte = 0;
    double cryptoCyclesPerByte = 0;
    double fixedCyclesPerPacket = 0;
    double cyclesPerFrameByte = 0;
    std::map<std::string, double> counterPrices;
    uint32_t extraRoutes = 0;
    bool runCorePerPacket = false;
    FrameSizeMix frameMix;        ///< empty: frameBytes
    std::string frameOrder = "random";
    std::map<uint32_t, double> frameFixedCycles;
    double burstMeanFrames = 16;
    double burstPeakPps = 0;
    double mmppRateRatio = 4;
    double mmppHighFraction = 0.2;
    double mmppCycleSeconds = 1e-3;
    std::string flowPopularity = "round_robin";
    double zipfExponent = 1;
    FlowSizeDistribution flowSizes; ///< kind kNone: the fixed flows of num_flows
    double flowPps = 0;
    std::string traceFile;
    bool traceRescale = false;
    bool traceLoop = false;

    /// Defaults overridden by `keys` (names above). Throws
    /// std::invalid_argument naming the key for an unknown key, a value of
    /// the wrong type or out of range.
    static ForwardingScenarioConfig FromKeys(const std::map<std::string, ConfigValue>& keys);

    /// Every key FromKeys accepts, in documentation order.
    static std::vector<std::string> KeyNames();

    /// warmupSeconds, or durationSeconds / 10 when it is negative (not given).
    double EffectiveWarmupSeconds() const;
};

struct ForwardingScenarioResult
{
    double offeredPps = 0;
    uint64_t txPackets = 0, rxPackets = 0, lostPackets = 0;
    double lossPct = 0;
    double forwardedPps = 0;     ///< steady window [warmup, duration]
    double forwardedBitRate = 0; ///< frame bits (FCS incl.) received in the window / window
    double meanFrameBytes = 0;   ///< over the frames offered
    double lineRatePps = 0;      ///< the port's line rate for the offered sizes
    uint32_t traceFlows = 0;     ///< distinct 5-tuples of a replayed trace
    uint64_t traceLoops = 0;
    uint64_t flowsStarted = 0;   ///< flow-level traffic: flows started
    double flowsActiveMean = 0;  ///< flow-level traffic: time-average of flows active
    uint64_t flowsActiveMax = 0; ///< flow-level traffic: most flows active at once
    double latencyMinUs = 0, latencyAvgUs = 0, latencyMaxUs = 0;
    LatencyHistogram latency; ///< every received frame's latency (seconds)
    /// Time-weighted lengths of the cores' queue (PipelineEngine::CoreQueueLengths).
    QueueLengthHistogram coreQueue;
    uint64_t sequenceErrors = 0;
    double serviceCyclesMean = 0; ///< priced cycles per packet of the workload
    double serviceUsMean = 0;     ///< core service time incl. per-byte costs
    uint64_t coreRuns = 0;        ///< times the data-plane core ran
    std::map<std::string, double> opsPerPacket; ///< dp_ops counters / packets
    std::map<std::string, double> utilization;  ///< per resource, see PipelineReport
    std::vector<double> coreUtilization;
    std::string bottleneck;       ///< "" when nothing saturated
    double bottleneckUtilization = 0;
    std::map<std::string, uint64_t> drops; ///< by reason name
    /// Every drop at the arrival time of the packet, on the tester's one
    /// port, by reason (PipelineDropReasons): loss over time (issue 15).
    LossTimeline lossTimeline;
    uint64_t simEvents = 0;       ///< ns-3 events executed
};

/// Runs one scenario. Throws std::invalid_argument for a bad configuration.
/// Uses the process-wide ns3::Simulator: callers must not run it from two
/// threads at once (nor overlap it with another ns-3 simulation).
ForwardingScenarioResult RunForwardingScenario(const ForwardingScenarioConfig& config);

} // namespace routertwin

#endif
