// routertwin._core.run_router and the POS / fabric helpers: the router
// scenario of model/router/helper/router-scenario.h, whose header documents every
// config key. Unknown keys and wrong types raise ValueError naming the key.
#include "bindings.h"
#include "distributions.h"
#include "dict-config.h"
#include "fabric-crossbar.h"
#include "pos-framing.h"
#include "router-scenario.h"
#include "t640-tester-traffic.h"

#include <pybind11/stl.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

uint32_t
Ipv4(const std::string& key, const std::string& s)
{
    unsigned a, b, c, d;
    char tail;
    if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 ||
        c > 255 || d > 255)
    {
        throw std::invalid_argument("key '" + key + "': '" + s + "' is not a dotted IPv4 address");
    }
    return (a << 24) | (b << 16) | (c << 8) | d;
}

struct Parsed
{
    RouterConfig cfg;
    std::string mode = "packet";
};

Parsed
ParseRouterConfig(const py::dict& d)
{
    Parsed p;
    RouterConfig& c = p.cfg;
    using Setter = std::function<void(const std::string&, const py::handle&)>;
    const std::map<std::string, Setter> keys = {
        {"mode", [&](auto& k, auto& v) {
             p.mode = Str(k, v);
             if (p.mode != "packet" && p.mode != "steady")
             {
                 throw std::invalid_argument("key 'mode': must be 'packet' or 'steady'");
             }
         }},
        {"ports", [&](auto& k, auto& v) { c.ports = Uint(k, v); }},
        {"ports_per_pfe", [&](auto& k, auto& v) { c.portsPerPfe = Uint(k, v); }},
        {"sonet", [&](auto& k, auto& v) { c.sonetN = ParseSonetRate(Str(k, v)); }},
        {"fcs_bits", [&](auto& k, auto& v) { c.ppp.fcsBits = Uint(k, v); }},
        {"shared_flag", [&](auto& k, auto& v) { c.ppp.sharedFlag = Bool(k, v); }},
        {"address_control", [&](auto& k, auto& v) { c.ppp.addressControl = Bool(k, v); }},
        {"protocol_bytes", [&](auto& k, auto& v) { c.ppp.protocolBytes = Uint(k, v); }},
        {"ip_bytes", [&](auto& k, auto& v) { c.ipBytes = Uint(k, v); }},
        {"ip_mix", [&](auto& k, auto& v) {
             const ConfigValue cv = ToConfigValue(k, v);
             const auto* m = std::get_if<std::map<std::string, double>>(&cv);
             if (!m || m->empty())
             {
                 throw std::invalid_argument("key 'ip_mix': must be a mapping of IP bytes to weight");
             }
             c.ipMix.clear();
             for (const auto& [name, weight] : *m)
             {
                 char* end = nullptr;
                 const unsigned long bytes = std::strtoul(name.c_str(), &end, 10);
                 if (name.empty() || *end != '\0' || bytes > 9000)
                 {
                     throw std::invalid_argument("key 'ip_mix': '" + name + "' is not an IP size");
                 }
                 c.ipMix.emplace_back(static_cast<unsigned>(bytes), weight);
             }
         }},
        {"ip_mix_order", [&](auto& k, auto& v) {
             const std::string o = Str(k, v);
             if (o != "random" && o != "sequence")
             {
                 throw std::invalid_argument("key 'ip_mix_order': must be 'random' or 'sequence'");
             }
             c.ipMixSequence = o == "sequence";
         }},
        {"offered_load", [&](auto& k, auto& v) { c.offeredLoad = Num(k, v); }},
        {"arrivals", [&](auto& k, auto& v) { c.arrivals.kind = ParseArrivalKind(Str(k, v)); }},
        {"destination_popularity",
         [&](auto& k, auto& v) { c.destinationPopularity = ParseFlowPopularity(Str(k, v)); }},
        {"zipf_exponent", [&](auto& k, auto& v) { c.zipfExponent = Num(k, v); }},
        {"flow_sizes", [&](auto& k, auto& v) { c.flowSizes.kind = ParseFlowSizeKind(Str(k, v)); }},
        {"pareto_alpha", [&](auto& k, auto& v) { c.flowSizes.paretoAlpha = Num(k, v); }},
        {"pareto_min_packets", [&](auto& k, auto& v) { c.flowSizes.paretoMinPackets = Num(k, v); }},
        {"lognormal_mu", [&](auto& k, auto& v) { c.flowSizes.lognormalMu = Num(k, v); }},
        {"lognormal_sigma", [&](auto& k, auto& v) { c.flowSizes.lognormalSigma = Num(k, v); }},
        {"flow_pps", [&](auto& k, auto& v) { c.flowPps = Num(k, v); }},
        {"flows", [&](auto& k, auto& v) { c.flowsPerPort = static_cast<uint32_t>(std::min<uint64_t>(Uint(k, v), UINT32_MAX)); }},
        {"burst_mean_frames", [&](auto& k, auto& v) { c.arrivals.burstMeanFrames = Num(k, v); }},
        {"burst_peak_load", [&](auto& k, auto& v) { c.burstPeakLoad = Num(k, v); }},
        {"mmpp_rate_ratio", [&](auto& k, auto& v) { c.arrivals.mmppRateRatio = Num(k, v); }},
        {"mmpp_high_fraction", [&](auto& k, auto& v) { c.arrivals.mmppHighFraction = Num(k, v); }},
        {"mmpp_cycle_s", [&](auto& k, auto& v) { c.arrivals.mmppCycleSeconds = Num(k, v); }},
        {"routes", [&](auto& k, auto& v) { c.routes = Uint(k, v); }},
        {"routes_as_destinations", [&](auto& k, auto& v) { c.routesAsDestinations = Bool(k, v); }},
        {"route_first_prefix", [&](auto& k, auto& v) { c.routeFirstPrefix = Ipv4(k, Str(k, v)); }},
        {"route_file", [&](auto& k, auto& v) { c.routeFile = Str(k, v); }},
        {"trace_file", [&](auto& k, auto& v) { c.traceFile = Str(k, v); }},
        {"trace_files", [&](auto& k, auto& v) {
             if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v))
             {
                 throw std::invalid_argument("key 'trace_files': must be a list of files, one per port (\"\" idle)");
             }
             c.portTraceFiles.clear();
             for (const py::handle& f : v)
             {
                 c.portTraceFiles.push_back(Str(k, f));
             }
         }},
        {"trace_destinations", [&](auto& k, auto& v) { c.traceDestinations = Bool(k, v); }},
        {"lookup_probes_per_second", [&](auto& k, auto& v) { c.lookupProbesPerSecond = Num(k, v); }},
        {"lookup_queue_us", [&](auto& k, auto& v) { c.lookupQueueSeconds = Num(k, v) * 1e-6; }},
        {"cell_bytes", [&](auto& k, auto& v) { c.cellBytes = Uint(k, v); }},
        {"internal_header_bytes", [&](auto& k, auto& v) { c.internalHeaderBytes = Uint(k, v); }},
        {"fabric_gbps_per_pfe", [&](auto& k, auto& v) { c.fabricBpsPerPfe = Num(k, v) * 1e9; }},
        {"queueing", [&](auto& k, auto& v) { c.queueing = ParseFabricQueueing(Str(k, v)); }},
        {"scheduler", [&](auto& k, auto& v) { c.scheduler = ParseFabricScheduler(Str(k, v)); }},
        {"islip_iterations", [&](auto& k, auto& v) { c.islipIterations = Uint(k, v); }},
        {"speedup", [&](auto& k, auto& v) { c.speedup = Uint(k, v); }},
        {"ingress_buffer_us", [&](auto& k, auto& v) { c.ingressBufferSeconds = Num(k, v) * 1e-6; }},
        {"egress_buffer_us", [&](auto& k, auto& v) { c.egressBufferSeconds = Num(k, v) * 1e-6; }},
        {"fixed_latency_us", [&](auto& k, auto& v) { c.fixedLatencySeconds = Num(k, v) * 1e-6; }},
        {"duration_s", [&](auto& k, auto& v) { c.durationSeconds = Num(k, v); }},
        {"seed", [&](auto& k, auto& v) { c.seed = Uint(k, v); }},
        {"batch_us", [&](auto& k, auto& v) { c.batchSeconds = Num(k, v) * 1e-6; }},
        {"sample_frames", [&](auto& k, auto& v) { c.sampleFrames = Uint(k, v); }},
        {"block_packets", [&](auto& k, auto& v) { c.blockPackets = Uint(k, v); }},
        {"loss_bins", [&](auto& k, auto& v) { c.lossBins = static_cast<unsigned>(Uint(k, v)); }},
    };
    ForEachKey(d, [&](const std::string& key, const py::handle& v) {
        auto it = keys.find(key);
        if (it == keys.end())
        {
            throw std::invalid_argument("key '" + key + "': unknown router config key");
        }
        it->second(key, v);
    });
    c.Validate();
    if (p.mode == "steady" && c.destinationPopularity != FlowPopularity::kRoundRobin)
    {
        throw std::invalid_argument("key 'destination_popularity': runs in mode packet only");
    }
    if (p.mode == "steady" && c.flowSizes.kind != FlowSizeKind::kNone)
    {
        throw std::invalid_argument("key 'flow_sizes': flow-level traffic runs in mode packet only");
    }
    if (p.mode == "steady" && c.arrivals.kind != ArrivalKind::kConstant)
    {
        throw std::invalid_argument("key 'arrivals': random arrivals run in mode packet only (the steady "
                                    "state's Lindley recursion takes the nominal spacing)");
    }
    return p;
}

py::dict
ToDict(const RouterResult& r)
{
    py::dict d;
    d["tx_packets"] = r.txPackets;
    d["rx_packets"] = r.rxPackets;
    d["lost_packets"] = r.txPackets - r.rxPackets;
    d["seconds"] = r.seconds;
    d["tx_pps"] = r.txPps;
    d["rx_pps"] = r.rxPps;
    d["theoretical_pps"] = r.theoreticalPps;
    d["tx_pct"] = r.txPctOfTheoretical;
    d["rx_pct"] = r.rxPctOfTheoretical;
    d["throughput_gbps"] = r.throughputGbps;
    d["latency_min_us"] = r.latencyMin * 1e6;
    d["latency_avg_us"] = r.latencyAvg * 1e6;
    d["latency_max_us"] = r.latencyMax * 1e6;
    AddPercentiles(d, r.latency);
    d["latency_histogram"] = HistogramDict(r.latency);
    d["loss_timeline"] = LossTimelineDict(r.lossTimeline);
    if (r.egressQueue.Seconds() > 0)
    {
        d["egress_queue"] = QueueLengthDict(r.egressQueue);
    }
    d["mean_ip_bytes"] = r.meanIpBytes;
    d["mean_ingress_escapes"] = r.meanIngressEscapes;
    d["mean_egress_escapes"] = r.meanEgressEscapes;
    if (r.egressCounted) // packet mode: the steady state keeps no per-frame schedule
    {
        d["tester_wait_avg_us"] = r.testerWaitAvg * 1e6;
        d["tester_wait_max_us"] = r.testerWaitMax * 1e6;
        d["tester_waited_fraction"] = r.testerWaitedFraction;
    }
    if (r.flowsStarted > 0 || r.flowsActiveMean > 0)
    {
        d["flows_started"] = r.flowsStarted;
        d["flows_active_mean"] = r.flowsActiveMean;
        d["flows_active_max_port"] = r.flowsActiveMaxPort;
    }
    d["fabric_load"] = r.fabricLoad;
    d["lookup_load"] = r.lookupLoad;
    d["bottleneck"] = r.bottleneck;
    d["lookups"] = r.lookups;
    d["table_probes"] = r.tableProbes;
    py::dict drops;
    for (const auto& [k, v] : r.drops)
    {
        drops[py::str(k)] = v;
    }
    d["drops"] = drops;
    py::list ports;
    for (const RouterPortStats& s : r.ports)
    {
        py::dict p;
        p["tx_packets"] = s.txPackets;
        p["rx_packets"] = s.rxPackets;
        p["latency_avg_us"] = s.rxPackets ? s.latencySum / s.rxPackets * 1e6 : 0.0;
        p["latency_min_us"] = s.rxPackets ? s.latencyMin * 1e6 : 0.0;
        p["latency_max_us"] = s.latencyMax * 1e6;
        AddPercentiles(p, s.latency);
        p["dropped_packets"] = s.txPackets >= s.rxPackets ? s.txPackets - s.rxPackets : 0;
        AddPercentiles(p, s.egressLatency, "egress_latency");
        if (s.egressQueue.Seconds() > 0)
        {
            p["egress_queue_mean"] = s.egressQueue.Mean();
            p["egress_queue_p99"] = s.egressQueue.Quantile(0.99);
            p["egress_queue_max"] = s.egressQueue.Max();
        }
        if (r.egressCounted)
        {
            p["egress_packets"] = s.egressPackets;
            p["egress_ip_bytes"] = s.egressIpBytes;
            // Share of the port's line rate its egress frames took over the
            // tester's time (packets still draining after it count too).
            p["egress_load"] = static_cast<double>(s.egressWireBytes) * 8.0 / (r.egressLineBps * r.seconds);
        }
        ports.append(p);
    }
    d["ports"] = ports;
    return d;
}

PppHdlcConfig
Ppp(unsigned fcsBits, bool sharedFlag)
{
    PppHdlcConfig c;
    c.fcsBits = fcsBits;
    c.sharedFlag = sharedFlag;
    c.Validate();
    return c;
}

} // namespace

void
BindRouter(py::module_& m)
{
    m.def(
        "run_router",
        [](const py::dict& config) {
            Parsed p = ParseRouterConfig(config);
            py::dict out;
            if (p.mode == "steady")
            {
                RouterResult r;
                {
                    py::gil_scoped_release release;
                    r = RunRouterSteadyState(p.cfg);
                }
                out = ToDict(r);
                out["wall_s"] = 0.0;
                out["events"] = 0;
            }
            else
            {
                RouterScenarioResult r;
                {
                    py::gil_scoped_release release;
                    r = RunRouterScenario(p.cfg);
                }
                out = ToDict(r.result);
                out["wall_s"] = r.wallSeconds;
                out["events"] = r.events;
            }
            out["mode"] = p.mode;
            return out;
        },
        py::arg("config"),
        "Router scenario (model/router/helper/router-scenario.h documents the keys); returns metrics, "
        "drops by reason and per-port counters. wall_s is the only non-deterministic value.");
    m.def(
        "pos_theoretical_pps",
        [](const std::string& sonet, unsigned ipBytes, unsigned fcsBits, bool sharedFlag) {
            return TheoreticalPps(SonetPayloadBps(ParseSonetRate(sonet)), Ppp(fcsBits, sharedFlag),
                                  ipBytes);
        },
        py::arg("sonet"), py::arg("ip_bytes"), py::arg("fcs_bits") = 32, py::arg("shared_flag") = true,
        "Frames/s of one POS port with no escapes (the 'theoretical maximum').");
    m.def(
        "sonet_payload_bps", [](const std::string& sonet) { return SonetPayloadBps(ParseSonetRate(sonet)); },
        py::arg("sonet"), "STS-Nc SPE payload capacity in bit/s.");
    m.def(
        "pos_frame",
        [](py::bytes ip, unsigned fcsBits, bool sharedFlag) {
            std::string s = ip;
            std::vector<uint8_t> wire;
            PosEncoder enc(Ppp(fcsBits, sharedFlag));
            PosFrameInfo f = enc.Frame(reinterpret_cast<const uint8_t*>(s.data()), s.size(), &wire);
            py::dict d;
            d["wire"] = py::bytes(reinterpret_cast<const char*>(wire.data()), wire.size());
            d["escapes"] = f.escapes;
            d["unstuffed_bytes"] = f.unstuffedBytes;
            return d;
        },
        py::arg("ip"), py::arg("fcs_bits") = 32, py::arg("shared_flag") = true,
        "PPP/HDLC frame of an IP packet: wire octets and escape count.");
    m.def(
        "fabric_uniform",
        [](unsigned ports, const std::string& queueing, const std::string& scheduler,
           unsigned iterations, unsigned speedup, double load, uint64_t warmup, uint64_t measure,
           unsigned inputBufferCells, uint64_t seed) {
            FabricConfig c;
            c.ports = ports;
            c.queueing = ParseFabricQueueing(queueing);
            c.scheduler = ParseFabricScheduler(scheduler);
            c.islipIterations = iterations;
            c.speedup = speedup;
            c.inputBufferCells = inputBufferCells;
            c.seed = seed;
            UniformRunResult r;
            {
                py::gil_scoped_release release;
                r = RunUniformBernoulli(c, load, warmup, measure);
            }
            py::dict d;
            d["throughput"] = r.throughput;
            d["throughput_stderr"] = r.throughputStdErr;
            d["mean_delay_slots"] = r.meanDelaySlots;
            d["backlog_start"] = r.backlogStart;
            d["backlog_end"] = r.backlogEnd;
            d["input_drops"] = r.inputDrops;
            // Cell delays in whole slots: QueueLengthDict's figures, with the
            // weight (its "seconds") being cells.
            py::dict delay = QueueLengthDict(r.delaySlots);
            delay["cells"] = delay.attr("pop")("seconds");
            d["delay_slots"] = delay;
            // Refused cells per input and over the window; the time axis is slots.
            py::dict drops = LossTimelineDict(r.drops);
            drops["bin_slots"] = drops.attr("pop")("bin_s");
            d["drop_timeline"] = drops;
            return d;
        },
        py::arg("ports"), py::arg("queueing") = "voq", py::arg("scheduler") = "islip",
        py::arg("iterations") = 1, py::arg("speedup") = 1, py::arg("load") = 1.0,
        py::arg("warmup") = 2000, py::arg("measure") = 100000, py::arg("input_buffer_cells") = 0,
        py::arg("seed") = 1,
        "Crossbar under uniform Bernoulli i.i.d. traffic: throughput, mean delay, backlog, input drops, "
        "the cell delays' distribution (delay_slots) and the refused cells per input and over the window "
        "(drop_timeline).");
}

} // namespace routertwin::bindings
