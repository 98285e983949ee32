#include "forwarding-scenario.h"

#include "ethernet-framing.h"
#include "pipeline-device.h"
#include "rfc2544-tester.h"

#include <ns3/boolean.h>
#include <ns3/double.h>
#include <ns3/enum.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace routertwin
{

using namespace ns3;
using namespace config;

namespace
{

using Key = config::Key<ForwardingScenarioConfig>;

// {"<frame bytes>": value}: sizes 64..9216 written as decimal integers.
std::map<uint32_t, double>
SizeTable(const std::string& k, const ConfigValue& v, const std::string& what)
{
    const auto* m = std::get_if<std::map<std::string, double>>(&v);
    if (!m)
    {
        Bad(k, "must be a mapping of frame bytes to " + what);
    }
    std::map<uint32_t, double> out;
    for (const auto& [name, value] : *m)
    {
        char* end = nullptr;
        const unsigned long bytes = std::strtoul(name.c_str(), &end, 10);
        if (name.empty() || *end != '\0' || bytes < ethernet::kMinFrameBytes || bytes > ethernet::kMaxFrameBytes)
        {
            Bad(k, "'" + name + "' is not a frame size in 64..9216");
        }
        if (!std::isfinite(value) || value < 0)
        {
            Bad(k, what + " of " + name + " must be >= 0");
        }
        out[static_cast<uint32_t>(bytes)] = value;
    }
    return out;
}

const std::vector<Key>&
Keys()
{
    using C = ForwardingScenarioConfig;
    using S = const std::string&;
    using V = const ConfigValue&;
    static const std::vector<Key> keys = {
        {"seed", [](C& c, S k, V v) { c.seed = static_cast<uint64_t>(AsInt(k, v, 0, INT64_MAX)); }},
        {"num_cores", [](C& c, S k, V v) { c.numCores = static_cast<uint32_t>(AsInt(k, v, 1, 4096)); }},
        {"clock_hz", [](C& c, S k, V v) { c.clockHz = Positive(k, v); }},
        {"scheduling",
         [](C& c, S k, V v) {
             c.scheduling = AsString(k, v);
             ParseWorkScheduling(c.scheduling);
         }},
        {"input_pps_ceiling", [](C& c, S k, V v) { c.inputPpsCeiling = NonNeg(k, v); }},
        {"output_pps_ceiling", [](C& c, S k, V v) { c.outputPpsCeiling = NonNeg(k, v); }},
        {"memory_bytes_per_s", [](C& c, S k, V v) { c.memoryBytesPerSecond = NonNeg(k, v); }},
        {"memory_bytes_per_frame_byte", [](C& c, S k, V v) { c.memoryBytesPerFrameByte = NonNeg(k, v); }},
        {"memory_bytes_per_packet", [](C& c, S k, V v) { c.memoryBytesPerPacket = NonNeg(k, v); }},
        {"port_bit_rate", [](C& c, S k, V v) { c.portBitRate = Positive(k, v); }},
        {"frame_bytes",
         [](C& c, S k, V v) {
             c.frameBytes = static_cast<uint32_t>(
                 AsInt(k, v, ethernet::kMinFrameBytes, ethernet::kMaxFrameBytes));
         }},
        {"offered_pps", [](C& c, S k, V v) { c.offeredPps = NonNeg(k, v); }},
        {"arrivals",
         [](C& c, S k, V v) {
             c.arrivals = AsString(k, v);
             ParseArrivalKind(c.arrivals);
         }},
        {"num_flows", [](C& c, S k, V v) { c.numFlows = static_cast<uint32_t>(AsInt(k, v, 1, 1 << 20)); }},
        {"unrouted_flows",
         [](C& c, S k, V v) { c.unroutedFlows = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 20)); }},
        {"duration_s", [](C& c, S k, V v) { c.durationSeconds = Positive(k, v); }},
        {"warmup_s", [](C& c, S k, V v) { c.warmupSeconds = AsDouble(k, v); }},
        {"batch_interval_s", [](C& c, S k, V v) { c.batchIntervalSeconds = Positive(k, v); }},
        {"loss_bins", [](C& c, S k, V v) { c.lossBins = static_cast<uint32_t>(AsInt(k, v, 1, 100000)); }},
        {"input_queue_depth",
         [](C& c, S k, V v) { c.inputQueueDepth = static_cast<uint32_t>(AsInt(k, v, 0, UINT32_MAX)); }},
        {"core_queue_depth",
         [](C& c, S k, V v) { c.coreQueueDepth = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 24)); }},
        {"lock_hold_cycles", [](C& c, S k, V v) { c.lockHoldCycles = NonNeg(k, v); }},
        {"flow_section_cycles", [](C& c, S k, V v) { c.flowSectionCycles = NonNeg(k, v); }},
        {"fixed_latency_s", [](C& c, S k, V v) { c.fixedLatencySeconds = NonNeg(k, v); }},
        {"copy_cycles_per_byte", [](C& c, S k, V v) { c.copyCyclesPerByte = NonNeg(k, v); }},
        {"crypto_cycles_per_byte", [](C& c, S k, V v) { c.cryptoCyclesPerByte = NonNeg(k, v); }},
        {"fixed_cycles_per_packet", [](C& c, S k, V v) { c.fixedCyclesPerPacket = NonNeg(k, v); }},
        {"cycles_per_frame_byte", [](C& c, S k, V v) { c.cyclesPerFrameByte = NonNeg(k, v); }},
        {"counter_prices",
         [](C& c, S k, V v) {
             const auto* m = std::get_if<std::map<std::string, double>>(&v);
             if (!m)
             {
                 Bad(k, "must be a mapping of counter name to cycles");
             }
             CycleCost probe;
             for (const auto& [name, price] : *m)
             {
                 probe.SetCounterPrice(name, price);
                 if (!std::isfinite(price) || price < 0)
                 {
                     Bad(k, "price of '" + name + "' must be >= 0");
                 }
             }
             c.counterPrices = *m;
         }},
        {"extra_routes",
         [](C& c, S k, V v) { c.extraRoutes = static_cast<uint32_t>(AsInt(k, v, 0, 65536)); }},
        {"run_core_per_packet", [](C& c, S k, V v) { c.runCorePerPacket = AsBool(k, v); }},
        {"frame_mix",
         [](C& c, S k, V v) {
             if (const auto* name = std::get_if<std::string>(&v))
             {
                 c.frameMix = FrameSizeMix::Named(*name);
                 return;
             }
             c.frameMix.parts.clear();
             for (const auto& [bytes, weight] : SizeTable(k, v, "weight"))
             {
                 c.frameMix.parts.emplace_back(bytes, weight);
             }
             c.frameMix.Validate();
         }},
        {"frame_order",
         [](C& c, S k, V v) {
             c.frameOrder = AsString(k, v);
             if (c.frameOrder != "random" && c.frameOrder != "sequence")
             {
                 Bad(k, "must be 'random' or 'sequence'");
             }
         }},
        {"frame_fixed_cycles", [](C& c, S k, V v) { c.frameFixedCycles = SizeTable(k, v, "cycles"); }},
        {"burst_mean_frames",
         [](C& c, S k, V v) {
             c.burstMeanFrames = AsDouble(k, v);
             if (!(c.burstMeanFrames >= 1))
             {
                 Bad(k, "must be >= 1");
             }
         }},
        {"burst_peak_pps", [](C& c, S k, V v) { c.burstPeakPps = NonNeg(k, v); }},
        {"mmpp_rate_ratio",
         [](C& c, S k, V v) {
             c.mmppRateRatio = AsDouble(k, v);
             if (!(c.mmppRateRatio >= 1))
             {
                 Bad(k, "must be >= 1");
             }
         }},
        {"mmpp_high_fraction",
         [](C& c, S k, V v) {
             c.mmppHighFraction = AsDouble(k, v);
             if (!(c.mmppHighFraction > 0 && c.mmppHighFraction < 1))
             {
                 Bad(k, "must be between 0 and 1 (exclusive)");
             }
         }},
        {"mmpp_cycle_s", [](C& c, S k, V v) { c.mmppCycleSeconds = Positive(k, v); }},
        {"flow_popularity",
         [](C& c, S k, V v) {
             c.flowPopularity = AsString(k, v);
             ParseFlowPopularity(c.flowPopularity);
         }},
        {"zipf_exponent", [](C& c, S k, V v) { c.zipfExponent = NonNeg(k, v); }},
        {"flow_sizes",
         [](C& c, S k, V v) {
             try
             {
                 c.flowSizes.kind = ParseFlowSizeKind(AsString(k, v));
             }
             catch (const std::invalid_argument& e)
             {
                 Bad(k, e.what());
             }
         }},
        {"pareto_alpha", [](C& c, S k, V v) { c.flowSizes.paretoAlpha = AsDouble(k, v); }},
        {"pareto_min_packets", [](C& c, S k, V v) { c.flowSizes.paretoMinPackets = AsDouble(k, v); }},
        {"lognormal_mu", [](C& c, S k, V v) { c.flowSizes.lognormalMu = AsDouble(k, v); }},
        {"lognormal_sigma", [](C& c, S k, V v) { c.flowSizes.lognormalSigma = AsDouble(k, v); }},
        {"flow_pps", [](C& c, S k, V v) { c.flowPps = NonNeg(k, v); }},
        {"trace_file",
         [](C& c, S k, V v) {
             c.traceFile = AsString(k, v);
             if (c.traceFile.empty())
             {
                 Bad(k, "must name a pcap file");
             }
         }},
        {"trace_rescale", [](C& c, S k, V v) { c.traceRescale = AsBool(k, v); }},
        {"trace_loop", [](C& c, S k, V v) { c.traceLoop = AsBool(k, v); }},
    };
    return keys;
}

// Disposes the objects (breaking the device<->tester callback cycle) and
// destroys the simulator however Run ends, so the next run starts clean.
struct RunGuard
{
    Ptr<PipelineDevice> device;
    Ptr<Rfc2544Tester> tester;

    ~RunGuard()
    {
        if (device)
        {
            device->Dispose();
        }
        if (tester)
        {
            tester->Dispose();
        }
        Simulator::Destroy();
    }
};

} // namespace

double
ForwardingScenarioConfig::EffectiveWarmupSeconds() const
{
    return warmupSeconds < 0 ? durationSeconds / 10 : warmupSeconds;
}

std::vector<std::string>
ForwardingScenarioConfig::KeyNames()
{
    return config::KeyNames(Keys());
}

ForwardingScenarioConfig
ForwardingScenarioConfig::FromKeys(const std::map<std::string, ConfigValue>& keys)
{
    ForwardingScenarioConfig c;
    config::ApplyKeys(Keys(), keys, c);
    if (keys.count("frame_mix") && keys.count("frame_bytes"))
    {
        Bad("frame_mix", "give frame_bytes or frame_mix, not both");
    }
    if (c.frameMix.Single())
    {
        // A one-size mix is that frame size.
        c.frameBytes = c.frameMix.parts[0].first;
        c.frameMix.parts.clear();
    }
    if (!c.traceFile.empty())
    {
        for (const char* other : {"frame_bytes", "frame_mix", "arrivals"})
        {
            if (keys.count(other))
            {
                Bad(other, "a trace_file brings its own sizes and instants");
            }
        }
        if (c.unroutedFlows)
        {
            Bad("unrouted_flows", "applies to synthetic flows, not to a trace_file's");
        }
        if (!c.traceRescale && keys.count("offered_pps"))
        {
            Bad("offered_pps", "applies to a trace only with trace_rescale: true");
        }
    }
    else if (keys.count("trace_rescale") || keys.count("trace_loop"))
    {
        Bad(keys.count("trace_rescale") ? "trace_rescale" : "trace_loop", "needs trace_file");
    }
    try
    {
        c.flowSizes.Validate();
    }
    catch (const std::invalid_argument& e)
    {
        Bad("flow_sizes", e.what());
    }
    for (const char* sizeKey : {"pareto_alpha", "pareto_min_packets", "lognormal_mu", "lognormal_sigma", "flow_pps"})
    {
        const bool pareto = std::string(sizeKey).rfind("pareto", 0) == 0;
        const bool lognormal = std::string(sizeKey).rfind("lognormal", 0) == 0;
        const FlowSizeKind need = pareto ? FlowSizeKind::kPareto : FlowSizeKind::kLognormal;
        if (keys.count(sizeKey) &&
            (c.flowSizes.kind == FlowSizeKind::kNone || ((pareto || lognormal) && c.flowSizes.kind != need)))
        {
            Bad(sizeKey, pareto      ? "needs flow_sizes: pareto"
                         : lognormal ? "needs flow_sizes: lognormal"
                                     : "needs flow_sizes");
        }
    }
    if (c.flowSizes.kind != FlowSizeKind::kNone)
    {
        if (keys.count("flow_popularity") && c.flowPopularity != "round_robin")
        {
            Bad("flow_popularity", "flow-level traffic (flow_sizes) picks its own flows");
        }
        if (!c.traceFile.empty())
        {
            Bad("flow_sizes", "a trace_file brings its own flows");
        }
        if (c.unroutedFlows)
        {
            Bad("unrouted_flows", "applies to the fixed flows, not to flow-level traffic");
        }
    }
    if (c.flowSectionCycles > 0 && c.scheduling != "ordered")
    {
        Bad("flow_section_cycles", "needs scheduling 'ordered' (the section is a switch from an ORDERED tag)");
    }
    if (c.flowSectionCycles > 0 && c.lockHoldCycles > 0)
    {
        Bad("flow_section_cycles", "cannot be set with lock_hold_cycles (one serialized section per packet)");
    }
    if (c.unroutedFlows > c.numFlows)
    {
        Bad("unrouted_flows", "must be <= num_flows");
    }
    if (c.EffectiveWarmupSeconds() >= c.durationSeconds)
    {
        Bad("warmup_s", "must be shorter than duration_s");
    }
    const double line = c.frameMix.parts.empty() ? ethernet::LineRatePps(c.portBitRate, c.frameBytes)
                                                 : c.frameMix.LineRatePps(c.portBitRate);
    if (c.traceFile.empty() && c.offeredPps > line * (1 + 1e-12))
    {
        Bad("offered_pps", "exceeds the port line rate " + std::to_string(line) + " pps");
    }
    return c;
}

ForwardingScenarioResult
RunForwardingScenario(const ForwardingScenarioConfig& c)
{
    Simulator::Destroy(); // a clean simulator even if a caller left one behind
    RunGuard guard;
    guard.device = CreateObject<PipelineDevice>();
    guard.tester = CreateObject<Rfc2544Tester>();
    Ptr<PipelineDevice> dev = guard.device;
    Ptr<Rfc2544Tester> tester = guard.tester;

    dev->SetAttribute("NumCores", UintegerValue(c.numCores));
    dev->SetAttribute("ClockHz", DoubleValue(c.clockHz));
    dev->SetAttribute("Scheduling", EnumValue(static_cast<int>(ParseWorkScheduling(c.scheduling))));
    dev->SetAttribute("InputPpsCeiling", DoubleValue(c.inputPpsCeiling));
    dev->SetAttribute("OutputPpsCeiling", DoubleValue(c.outputPpsCeiling));
    dev->SetAttribute("MemoryBytesPerSecond", DoubleValue(c.memoryBytesPerSecond));
    dev->SetAttribute("MemoryBytesPerFrameByte", DoubleValue(c.memoryBytesPerFrameByte));
    dev->SetAttribute("MemoryBytesPerPacket", DoubleValue(c.memoryBytesPerPacket));
    dev->SetAttribute("EgressBitRate", DoubleValue(c.portBitRate));
    dev->SetAttribute("CopyCyclesPerByte", DoubleValue(c.copyCyclesPerByte));
    dev->SetAttribute("CryptoCyclesPerByte", DoubleValue(c.cryptoCyclesPerByte));
    dev->SetAttribute("LockHoldCycles", DoubleValue(c.lockHoldCycles));
    dev->SetAttribute("FlowSectionCycles", DoubleValue(c.flowSectionCycles));
    dev->SetAttribute("FixedLatency", TimeValue(PicoSeconds(std::llround(c.fixedLatencySeconds * 1e12))));
    dev->SetAttribute("InputQueueDepth", UintegerValue(c.inputQueueDepth));
    dev->SetAttribute("CoreQueueDepth", UintegerValue(c.coreQueueDepth));
    dev->SetAttribute("FixedCyclesPerPacket", DoubleValue(c.fixedCyclesPerPacket));
    dev->SetAttribute("CyclesPerFrameByte", DoubleValue(c.cyclesPerFrameByte));
    dev->SetAttribute("ExtraRoutes", UintegerValue(c.extraRoutes));
    // Trace flows are numbered by 5-tuple beyond num_flows: all routed.
    dev->SetAttribute("FirstUnroutedFlow",
                      UintegerValue(c.unroutedFlows ? c.numFlows - c.unroutedFlows : UINT32_MAX));
    dev->SetAttribute("RunCorePerPacket", BooleanValue(c.runCorePerPacket));
    for (const auto& [name, price] : c.counterPrices)
    {
        dev->SetCounterPrice(name, price);
    }
    std::vector<uint32_t> sizes;
    for (const auto& part : c.frameMix.parts)
    {
        sizes.push_back(part.first);
    }
    // A trace may bring any size: a few template ways per flow keep the
    // sizes of a flow's request/response pattern apart.
    dev->SetFrameSizes(sizes.size() > 1 ? sizes : std::vector<uint32_t>{}, c.traceFile.empty() ? 1 : 4,
                       c.frameFixedCycles);
    dev->Build();

    tester->SetAttribute("FrameBytes", UintegerValue(c.frameBytes));
    tester->SetAttribute("OfferedPps", DoubleValue(c.offeredPps));
    tester->SetAttribute("PortBitRate", DoubleValue(c.portBitRate));
    tester->SetAttribute("NumFlows", UintegerValue(c.numFlows));
    tester->SetAttribute("Duration", TimeValue(PicoSeconds(std::llround(c.durationSeconds * 1e12))));
    tester->SetAttribute("Warmup", TimeValue(PicoSeconds(std::llround(c.EffectiveWarmupSeconds() * 1e12))));
    tester->SetAttribute("BatchInterval",
                         TimeValue(PicoSeconds(std::llround(c.batchIntervalSeconds * 1e12))));
    tester->SetAttribute("Poisson", BooleanValue(c.arrivals == "poisson"));
    tester->SetAttribute("Seed", UintegerValue(c.seed));
    TrafficConfig traffic;
    traffic.mix = c.frameMix;
    traffic.mixSequence = c.frameOrder == "sequence";
    traffic.arrivals = ParseArrivalKind(c.arrivals);
    traffic.burstMeanFrames = c.burstMeanFrames;
    traffic.burstPeakPps = c.burstPeakPps;
    traffic.mmppRateRatio = c.mmppRateRatio;
    traffic.mmppHighFraction = c.mmppHighFraction;
    traffic.mmppCycleSeconds = c.mmppCycleSeconds;
    traffic.popularity = ParseFlowPopularity(c.flowPopularity);
    traffic.zipfExponent = c.zipfExponent;
    traffic.flowSizes = c.flowSizes;
    traffic.flowPps = c.flowPps;
    traffic.tracePath = c.traceFile;
    traffic.traceRescale = c.traceRescale;
    traffic.traceLoop = c.traceLoop;
    tester->SetTraffic(traffic);

    // Drops over time by reason, as the router keeps them per port: the
    // device's Drop trace, at the packet's arrival.
    ForwardingScenarioResult r;
    r.lossTimeline = LossTimeline(1, c.lossBins, c.durationSeconds, PipelineDropReasons());
    dev->TraceConnectWithoutContext(
        "Drop", Callback<void, const PacketDesc&, const char*>([&r](const PacketDesc& d, const char*) {
            r.lossTimeline.Add(0, static_cast<double>(d.arrivalPs) * 1e-12, 1.0, PipelineDropReasonIndex(d));
        }));
    tester->SetTransmitCallback(MakeCallback(&PipelineDevice::Receive, dev));
    tester->SetDoneCallback(MakeCallback(&PipelineDevice::Flush, dev));
    dev->SetDeliverCallback(MakeCallback(&Rfc2544Tester::Receive, tester));
    tester->Start();
    Simulator::Run();

    const TesterResults t = tester->Results();
    r.offeredPps = t.offeredPps;
    r.txPackets = t.txPackets;
    r.rxPackets = t.rxPackets;
    r.lostPackets = t.lostPackets;
    r.lossPct = t.txPackets ? 100.0 * t.lostPackets / t.txPackets : 0;
    r.forwardedPps = t.forwardedPps;
    const bool oneSize = c.frameMix.parts.size() <= 1 && c.traceFile.empty();
    r.forwardedBitRate = oneSize ? ethernet::FrameBitRate(t.forwardedPps, c.frameBytes) : t.forwardedBitRate;
    r.meanFrameBytes = oneSize ? c.frameBytes : t.meanFrameBytes;
    r.lineRatePps = !c.frameMix.parts.empty()
                        ? c.frameMix.LineRatePps(c.portBitRate)
                        : c.portBitRate / (8.0 * (r.meanFrameBytes + ethernet::kOverheadBytes));
    r.traceFlows = t.traceFlows;
    r.traceLoops = t.traceLoops;
    r.flowsStarted = t.flowsStarted;
    r.flowsActiveMean = t.flowsActiveMean;
    r.flowsActiveMax = t.flowsActiveMax;
    r.latencyMinUs = t.latencyMinSeconds * 1e6;
    r.latencyAvgUs = t.latencyAvgSeconds * 1e6;
    r.latencyMaxUs = t.latencyMaxSeconds * 1e6;
    r.latency = t.latency;
    r.sequenceErrors = t.sequenceErrors;

    const ForwardingWorkload& w = *dev->Workload();
    const PipelineEngine& e = *dev->Engine();
    r.coreQueue = e.CoreQueueLengths();
    const double pkts = static_cast<double>(w.Packets());
    if (pkts > 0)
    {
        r.serviceCyclesMean = w.SumCycles() / pkts;
        r.serviceUsMean = e.ServiceSeconds(r.serviceCyclesMean, r.meanFrameBytes) * 1e6;
        const dp_ops_t ops = w.Ops();
        for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
        {
            r.opsPerPacket[dp_ops_counter_name(i)] = static_cast<double>(dp_ops_counter(&ops, i)) / pkts;
        }
    }
    r.coreRuns = w.CoreRuns();
    const PipelineReport rep = e.Report();
    for (const auto& u : rep.resources)
    {
        r.utilization[u.name] = u.utilization;
    }
    r.coreUtilization = rep.coreUtilization;
    r.bottleneck = rep.bottleneck;
    r.bottleneckUtilization = rep.bottleneckUtilization;
    const PipelineCounters& k = e.Counters();
    for (size_t i = 1; i < static_cast<size_t>(PipelineDrop::kCount); ++i)
    {
        if (i != static_cast<size_t>(PipelineDrop::kDataPlane))
        {
            r.drops[PipelineDropName(static_cast<PipelineDrop>(i))] = k.drops[i];
        }
    }
    for (int i = 1; i < DP_DROP__COUNT; ++i)
    {
        if (k.dpDrops[i])
        {
            r.drops[dp_drop_reason_name(static_cast<dp_drop_reason_t>(i))] = k.dpDrops[i];
        }
    }
    r.simEvents = Simulator::GetEventCount();
    return r;
}

} // namespace routertwin
