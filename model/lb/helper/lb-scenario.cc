#include "lb-scenario.h"

#include "ethernet-framing.h"
#include "l4-balancer-device.h"
#include "lb-packet-level.h"
#include "lb-testers.h"
#include "traffic-profile.h"

#include <ns3/boolean.h>
#include <ns3/data-rate.h>
#include <ns3/node.h>
#include <ns3/double.h>
#include <ns3/nstime.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>
#include <stdexcept>

namespace routertwin
{

using namespace ns3;
using namespace config;

namespace
{

using C = LbScenarioConfig;
using S = const std::string&;
using V = const ConfigValue&;
using Key = config::Key<LbScenarioConfig>;

std::string
SizesKind(S k, V v)
{
    const std::string kind = AsString(k, v);
    if (kind != "fixed" && kind != "table" && kind != "pareto" && kind != "lognormal")
    {
        Bad(k, "must be fixed, table, pareto or lognormal");
    }
    return kind;
}

// {"<bytes>": weight}: a table of sizes; sets the side's sizes to table.
void
SizesTable(S k, V v, LbScenarioConfig::PayloadKeys& side)
{
    const auto* m = std::get_if<std::map<std::string, double>>(&v);
    if (!m || m->empty())
    {
        Bad(k, "must map sizes in bytes to weights (shares of units)");
    }
    side.table.clear();
    for (const auto& [name, weight] : *m)
    {
        char* end = nullptr;
        const unsigned long long bytes = std::strtoull(name.c_str(), &end, 10);
        if (name.empty() || *end != '\0' || bytes > (1u << 30))
        {
            Bad(k, "'" + name + "' is not a size in bytes (0..2^30)");
        }
        if (!(weight > 0) || !std::isfinite(weight))
        {
            Bad(k, "weight of " + name + " bytes must be > 0");
        }
        side.table[static_cast<uint32_t>(bytes)] = weight;
    }
    side.sizes = "table";
}

const std::vector<Key>&
Keys()
{
    static const std::vector<Key> keys = {
        {"seed", [](C& c, S k, V v) { c.seed = static_cast<uint64_t>(AsInt(k, v, 0, INT64_MAX)); }},
        {"num_cores", [](C& c, S k, V v) { c.numCores = static_cast<uint32_t>(AsInt(k, v, 1, 4096)); }},
        {"clock_hz", [](C& c, S k, V v) { c.clockHz = Positive(k, v); }},
        {"sessions_per_core",
         [](C& c, S k, V v) { c.sessionsPerCore = static_cast<uint32_t>(AsInt(k, v, 2, 1 << 28)); }},
        {"services", [](C& c, S k, V v) { c.services = static_cast<uint32_t>(AsInt(k, v, 1, 256)); }},
        {"servers_per_service",
         [](C& c, S k, V v) { c.serversPerService = static_cast<uint32_t>(AsInt(k, v, 1, 254)); }},
        {"scheduler",
         [](C& c, S k, V v) {
             c.scheduler = AsString(k, v);
             if (dp_sched_algo_from_name(c.scheduler.c_str()) < 0)
             {
                 Bad(k, "unknown algorithm '" + c.scheduler + "'");
             }
         }},
        {"forwarding",
         [](C& c, S k, V v) {
             c.forwarding = AsString(k, v);
             ParseLbForwarding(c.forwarding);
         }},
        {"syn_cookies", [](C& c, S k, V v) { c.synCookies = AsBool(k, v); }},
        {"rate_limit_cps",
         [](C& c, S k, V v) { c.rateLimitCps = static_cast<uint32_t>(AsInt(k, v, 0, 0xFFFFFFFFll)); }},
        {"fixed_cycles_per_packet", [](C& c, S k, V v) { c.fixedCyclesPerPacket = NonNeg(k, v); }},
        {"cycles_per_frame_byte", [](C& c, S k, V v) { c.cyclesPerFrameByte = NonNeg(k, v); }},
        {"counter_prices",
         [](C& c, S k, V v) {
             const auto* m = std::get_if<std::map<std::string, double>>(&v);
             if (!m)
             {
                 Bad(k, "must map counter names to numbers");
             }
             CycleCost probe;
             for (const auto& [name, price] : *m)
             {
                 if (!(price >= 0) || !std::isfinite(price))
                 {
                     Bad(k, "price of '" + name + "' must be a finite number >= 0");
                 }
                 probe.SetCounterPrice(name, price); // names the unknown counter
             }
             c.counterPrices = *m;
         }},
        {"connection_setup_cycles", [](C& c, S k, V v) { c.connectionSetupCycles = NonNeg(k, v); }},
        {"ports", [](C& c, S k, V v) { c.ports = static_cast<uint32_t>(AsInt(k, v, 1, 1024)); }},
        {"port_bit_rate", [](C& c, S k, V v) { c.portBitRate = Positive(k, v); }},
        {"core_queue_depth",
         [](C& c, S k, V v) { c.coreQueueDepth = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 24)); }},
        {"input_pps_ceiling", [](C& c, S k, V v) { c.inputPpsCeiling = NonNeg(k, v); }},
        {"workload",
         [](C& c, S k, V v) {
             c.workload = AsString(k, v);
             if (c.workload != "fill")
             {
                 ParseLbWorkload(c.workload);
             }
         }},
        {"rate", [](C& c, S k, V v) { c.rate = Positive(k, v); }},
        {"legit_rate", [](C& c, S k, V v) { c.legitRate = NonNeg(k, v); }},
        {"flood_ports", [](C& c, S k, V v) { c.floodPorts = static_cast<uint32_t>(AsInt(k, v, 1, 1024)); }},
        {"users", [](C& c, S k, V v) { c.users = static_cast<uint32_t>(AsInt(k, v, 1, 65536)); }},
        {"conns_per_user",
         [](C& c, S k, V v) { c.connsPerUser = static_cast<uint32_t>(AsInt(k, v, 1, 50000)); }},
        {"request_bytes", [](C& c, S k, V v) { c.requestBytes = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 30)); }},
        {"response_bytes",
         [](C& c, S k, V v) { c.responseBytes = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 30)); }},
        {"request_sizes", [](C& c, S k, V v) { c.requestSizes.sizes = SizesKind(k, v); }},
        {"response_sizes", [](C& c, S k, V v) { c.responseSizes.sizes = SizesKind(k, v); }},
        {"request_table", [](C& c, S k, V v) { SizesTable(k, v, c.requestSizes); }},
        {"response_table", [](C& c, S k, V v) { SizesTable(k, v, c.responseSizes); }},
        {"request_pareto_alpha", [](C& c, S k, V v) { c.requestSizes.paretoAlpha = Positive(k, v); }},
        {"response_pareto_alpha", [](C& c, S k, V v) { c.responseSizes.paretoAlpha = Positive(k, v); }},
        {"request_pareto_min_bytes", [](C& c, S k, V v) { c.requestSizes.paretoMinBytes = Positive(k, v); }},
        {"response_pareto_min_bytes", [](C& c, S k, V v) { c.responseSizes.paretoMinBytes = Positive(k, v); }},
        {"request_lognormal_mu", [](C& c, S k, V v) { c.requestSizes.lognormalMu = AsDouble(k, v); }},
        {"response_lognormal_mu", [](C& c, S k, V v) { c.responseSizes.lognormalMu = AsDouble(k, v); }},
        {"request_lognormal_sigma", [](C& c, S k, V v) { c.requestSizes.lognormalSigma = Positive(k, v); }},
        {"response_lognormal_sigma", [](C& c, S k, V v) { c.responseSizes.lognormalSigma = Positive(k, v); }},
        {"mss", [](C& c, S k, V v) { c.mss = static_cast<uint32_t>(AsInt(k, v, 1, 8960)); }},
        {"tcp_windows", [](C& c, S k, V v) { c.tcpWindows = AsBool(k, v); }},
        {"flow_popularity",
         [](C& c, S k, V v) {
             try
             {
                 c.flowPopularity = ParseFlowPopularity(AsString(k, v));
             }
             catch (const std::invalid_argument&)
             {
                 Bad(k, "must be round_robin, uniform or zipf");
             }
         }},
        {"zipf_exponent",
         [](C& c, S k, V v) {
             c.zipfExponent = AsDouble(k, v);
             if (!(c.zipfExponent >= 0) || !std::isfinite(c.zipfExponent))
             {
                 Bad(k, "must be >= 0");
             }
         }},
        {"tcp_initial_window", [](C& c, S k, V v) { c.tcpInitialWindow = static_cast<uint32_t>(AsInt(k, v, 1, 1000)); }},
        {"tcp_receive_window_bytes",
         [](C& c, S k, V v) { c.tcpReceiveWindowBytes = static_cast<uint32_t>(AsInt(k, v, 2, 1 << 30)); }},
        {"tcp_rtt_s", [](C& c, S k, V v) { c.tcpRttSeconds = Positive(k, v); }},
        {"trace_file", [](C& c, S k, V v) { c.traceFile = AsString(k, v); }},
        {"trace_rescale", [](C& c, S k, V v) { c.traceRescale = AsBool(k, v); }},
        {"step_gap_s", [](C& c, S k, V v) { c.stepGapSeconds = Positive(k, v); }},
        {"arrivals",
         [](C& c, S k, V v) {
             c.arrivals = AsString(k, v);
             if (c.arrivals != "constant" && c.arrivals != "poisson" && c.arrivals != "onoff" &&
                 c.arrivals != "mmpp")
             {
                 Bad(k, "must be constant, poisson, onoff or mmpp");
             }
         }},
        {"burst_mean_units",
         [](C& c, S k, V v) {
             c.burstMeanUnits = AsDouble(k, v);
             if (!(c.burstMeanUnits >= 1))
             {
                 Bad(k, "must be >= 1");
             }
         }},
        {"burst_peak_ratio",
         [](C& c, S k, V v) {
             c.burstPeakRatio = AsDouble(k, v);
             if (!(c.burstPeakRatio > 1))
             {
                 Bad(k, "must be > 1 (the rate inside a burst over the mean rate)");
             }
         }},
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
        {"duration_s", [](C& c, S k, V v) { c.durationSeconds = Positive(k, v); }},
        {"warmup_s", [](C& c, S k, V v) { c.warmupSeconds = AsDouble(k, v); }},
        {"batch_interval_s", [](C& c, S k, V v) { c.batchIntervalSeconds = Positive(k, v); }},
        {"loss_bins", [](C& c, S k, V v) { c.lossBins = static_cast<uint32_t>(AsInt(k, v, 1, 100000)); }},
        {"fill_limit",
         [](C& c, S k, V v) { c.fillLimit = static_cast<uint64_t>(AsInt(k, v, 0, INT64_MAX)); }},
        {"fill_validate", [](C& c, S k, V v) { c.fillValidate = AsBool(k, v); }},
        {"time_wait_s",
         [](C& c, S k, V v) {
             c.timeWaitSeconds = NonNeg(k, v);
             if (c.timeWaitSeconds > 0 && c.timeWaitSeconds < 1e-3)
             {
                 Bad(k, "must be 0 or at least 0.001 (the session table counts milliseconds)");
             }
             if (c.timeWaitSeconds > 2e6)
             {
                 Bad(k, "must be at most 2e6 s");
             }
         }},
        {"fin_wait_s",
         [](C& c, S k, V v) {
             c.finWaitSeconds = Positive(k, v);
             if (c.finWaitSeconds < 1e-3 || c.finWaitSeconds > 2e6)
             {
                 Bad(k, "must be 0.001..2e6 s");
             }
         }},
        {"aging_sweep_s", [](C& c, S k, V v) { c.agingSweepSeconds = NonNeg(k, v); }},
        {"occupancy_sample_s", [](C& c, S k, V v) { c.occupancySampleSeconds = NonNeg(k, v); }},
        {"level",
         [](C& c, S k, V v) {
             c.level = AsString(k, v);
             if (c.level != "descriptor" && c.level != "packet")
             {
                 Bad(k, "must be descriptor or packet");
             }
         }},
        {"link_delay_s", [](C& c, S k, V v) { c.linkDelaySeconds = NonNeg(k, v); }},
    };
    return keys;
}

struct RunGuard
{
    Ptr<L4BalancerDevice> device;
    ~RunGuard()
    {
        if (device)
        {
            device->Dispose();
        }
        Simulator::Destroy();
    }
};

Ptr<L4BalancerDevice>
MakeDevice(const LbScenarioConfig& c, uint32_t sessionsPerCore, uint32_t cores)
{
    Ptr<L4BalancerDevice> dev = CreateObject<L4BalancerDevice>();
    dev->SetAttribute("NumCores", UintegerValue(cores));
    dev->SetAttribute("ClockHz", DoubleValue(c.clockHz));
    dev->SetAttribute("SessionsPerCore", UintegerValue(sessionsPerCore));
    dev->SetAttribute("Services", UintegerValue(c.services));
    dev->SetAttribute("ServersPerService", UintegerValue(c.serversPerService));
    dev->SetAttribute("Scheduler", StringValue(c.scheduler));
    dev->SetAttribute("Forwarding", StringValue(c.forwarding));
    dev->SetAttribute("SynCookies", BooleanValue(c.synCookies));
    dev->SetAttribute("RateLimitCps", UintegerValue(c.rateLimitCps));
    dev->SetAttribute("FixedCyclesPerPacket", DoubleValue(c.fixedCyclesPerPacket));
    dev->SetAttribute("CyclesPerFrameByte", DoubleValue(c.cyclesPerFrameByte));
    dev->SetAttribute("ConnectionSetupCycles", DoubleValue(c.connectionSetupCycles));
    dev->SetAttribute("CoreQueueDepth", UintegerValue(c.coreQueueDepth));
    dev->SetAttribute("TimeWait", TimeValue(MilliSeconds(std::llround(c.timeWaitSeconds * 1e3))));
    dev->SetAttribute("FinWait", TimeValue(MilliSeconds(std::llround(c.finWaitSeconds * 1e3))));
    dev->SetAttribute("InputPpsCeiling", DoubleValue(c.inputPpsCeiling));
    // segments above a 1500-byte MTU's are jumbo frames: the links carry 9000
    dev->SetAttribute("IpMtu", UintegerValue(c.mss > 1460 ? 9000 : 1500));
    dev->SetAttribute("EgressBitRate", DoubleValue(c.ports * c.portBitRate));
    for (const auto& [name, price] : c.counterPrices)
    {
        dev->SetCounterPrice(name, price);
    }
    dev->Build();
    return dev;
}

// The concurrency test: one core's shard, really filled. Connections are
// opened by their SYN through the balancer (full path: lookup, pick, SNAT
// port, open) and established by SYN-ACK and ACK; client keys that hash to
// another shard are skipped (they would belong to another core). The shards
// are identical and share nothing, so the box holds num_cores times one
// shard's count.
LbScenarioResult
RunFill(const LbScenarioConfig& c)
{
    RunGuard guard;
    LbScenarioConfig one = c;
    one.synCookies = false;
    guard.device = MakeDevice(one, c.sessionsPerCore, 1);
    L4Balancer& lb = guard.device->Balancer();
    const bool fullNat = ParseLbForwarding(c.forwarding) == LbForwarding::kFullNat;
    // connection n's SYN: client 198.18.x.y:port -> VIP of service n mod services
    auto fillSyn = [&c](uint64_t n) {
        dp_build_spec_t b{};
        b.ttl = 64;
        b.ip_proto = DP_IPPROTO_TCP;
        b.src_ip = 0xC6120000u + static_cast<uint32_t>((n >> 14) % 131072u);
        b.dst_ip = L4Balancer::Vip(static_cast<uint32_t>(n % c.services));
        b.src_port = static_cast<uint16_t>(1024 + (n & 0x3FFF));
        b.dst_port = L4Balancer::kHttpPort;
        b.tcp_flags = DP_SESS_TCP_SYN;
        return b;
    };
    alignas(8) uint8_t storage[256 + 64];
    uint8_t* const buf = storage + 64; // headroom for the tunnel mode
    const size_t cap = sizeof storage - 64;
    uint64_t held = 0;
    double cyclesHeld = 0; // priced work of the held connections' handshakes
    LbScenarioResult r;
    for (uint64_t n = 0;; ++n)
    {
        dp_build_spec_t b = fillSyn(n);
        size_t len = 0;
        dp_build(&b, buf, cap, &len, nullptr);
        const LbVerdict v = lb.Process(buf, len, cap, 64, 0);
        if (v.dpDrop == DP_DROP_SESSION_TABLE_FULL)
        {
            r.drops["session_table_full"] = 1;
            break;
        }
        if (v.dpDrop != DP_OK)
        {
            throw std::runtime_error("fill: unexpected refusal " +
                                     std::string(dp_drop_reason_name(static_cast<dp_drop_reason_t>(v.dpDrop))));
        }
        double cycles = v.cycles;
        if (fullNat)
        {
            // the server's SYN-ACK comes back through the balancer (DR, tunnel: directly to the client)
            dp_build_spec_t s = b;
            s.src_ip = v.out.dst_ip;
            s.dst_ip = L4Balancer::kSnatIp;
            s.src_port = L4Balancer::kHttpPort;
            s.dst_port = v.out.src_port;
            s.tcp_flags = DP_SESS_TCP_SYN | DP_SESS_TCP_ACK;
            dp_build(&s, buf, cap, &len, nullptr);
            cycles += lb.Process(buf, len, cap, 64, 0).cycles;
        }
        b.tcp_flags = DP_SESS_TCP_ACK; // the client's ACK: ESTABLISHED
        dp_build(&b, buf, cap, &len, nullptr);
        cycles += lb.Process(buf, len, cap, 64, 0).cycles;
        cyclesHeld += cycles;
        ++held;
        if (c.fillLimit && held >= c.fillLimit)
        {
            break;
        }
    }
    if (c.fillValidate)
    {
        // RFC 3511 5.2: every connection is then used: a data segment from
        // its client must be forwarded (found in the table, not opened anew)
        for (uint64_t n = 0; n < held; ++n)
        {
            dp_build_spec_t b = fillSyn(n);
            b.tcp_flags = DP_SESS_TCP_ACK | 0x08; // ACK, PSH
            b.payload_len = static_cast<uint16_t>(std::min(c.requestBytes, c.mss)); // one segment
            size_t len = 0;
            dp_build(&b, buf, cap, &len, nullptr);
            const LbVerdict v = lb.Process(buf, len, cap, 64, 0);
            r.fillValidated += v.dpDrop == DP_OK && !v.opened;
        }
    }
    r.fillConnectionsPerCore = lb.Connections();
    r.maxConcurrent = r.fillConnectionsPerCore * c.numCores;
    r.connectionsEnd = lb.Connections();
    r.refusedFull = lb.RefusedFull();
    r.bytesPerConnection = held ? static_cast<double>(lb.SessionTableBytes()) / static_cast<double>(held) : 0;
    r.fillCyclesPerConnection = held ? cyclesHeld / static_cast<double>(held) : 0;
    return r;
}

} // namespace

double
LbScenarioConfig::EffectiveWarmupSeconds() const
{
    return warmupSeconds < 0 ? durationSeconds / 10 : warmupSeconds;
}

std::vector<std::string>
LbScenarioConfig::KeyNames()
{
    return config::KeyNames(Keys());
}

LbScenarioConfig
LbScenarioConfig::FromKeys(const std::map<std::string, ConfigValue>& keys)
{
    LbScenarioConfig c;
    config::ApplyKeys(Keys(), keys, c);
    if (c.EffectiveWarmupSeconds() >= c.durationSeconds)
    {
        Bad("warmup_s", "must be shorter than duration_s");
    }
    if (c.level == "packet" && c.workload == "synflood" && c.floodPorts > c.ports / 2)
    {
        Bad("flood_ports", "at packet level the flood uses the clients' side, the first half of the ports (" +
                               std::to_string(c.ports / 2) + ")");
    }
    if (c.level == "packet" && c.ports < 2)
    {
        Bad("ports", "packet level needs at least 2 ports (clients' and servers' sides)");
    }
    if (c.workload == "synflood")
    {
        // 64-byte SYNs on flood_ports ports: 14,880,952 frames/s per 10GbE
        const double line = c.floodPorts * ethernet::LineRatePps(c.portBitRate, 64);
        if (c.rate > line * (1 + 1e-12))
        {
            Bad("rate", "exceeds the line rate of flood_ports: " + std::to_string(line) + " pps");
        }
        if (c.floodPorts > c.ports)
        {
            Bad("flood_ports", "must be <= ports");
        }
    }
    return c;
}

namespace
{

PayloadSizes
Payload(const LbScenarioConfig::PayloadKeys& k, const std::string& side)
{
    PayloadSizes p;
    if (k.sizes == "table")
    {
        if (k.table.empty())
        {
            Bad(side + "_sizes", "table needs " + side + "_table");
        }
        p.table.assign(k.table.begin(), k.table.end());
    }
    else if (k.sizes == "pareto" || k.sizes == "lognormal")
    {
        p.heavy.kind = ParseFlowSizeKind(k.sizes);
        p.heavy.paretoAlpha = k.paretoAlpha;
        p.heavy.paretoMinPackets = k.paretoMinBytes; // X in bytes
        p.heavy.lognormalMu = k.lognormalMu;
        p.heavy.lognormalSigma = k.lognormalSigma;
    }
    try
    {
        p.Validate(side + " sizes");
    }
    catch (const std::invalid_argument& e)
    {
        Bad(side + "_sizes", e.what());
    }
    return p;
}

LbTesterConfig
TesterConfig(const LbScenarioConfig& c)
{
    LbTesterConfig tc;
    tc.workload = ParseLbWorkload(c.workload);
    tc.rate = c.rate;
    tc.legitRate = c.legitRate;
    tc.users = c.users;
    tc.connsPerUser = c.connsPerUser;
    tc.requestBytes = c.requestBytes;
    tc.responseBytes = c.responseBytes;
    tc.request = Payload(c.requestSizes, "request");
    tc.response = Payload(c.responseSizes, "response");
    tc.mss = c.mss;
    tc.popularity = c.flowPopularity;
    tc.zipfExponent = c.zipfExponent;
    tc.window.enabled = c.tcpWindows;
    tc.window.initialSegments = c.tcpInitialWindow;
    tc.window.receiveWindowBytes = c.tcpReceiveWindowBytes;
    tc.window.rttSeconds = c.tcpRttSeconds;
    tc.window.senderBitRate = c.portBitRate; // the server's port: one of the tester's
    tc.traceFile = c.traceFile;
    tc.traceRescale = c.traceRescale;
    tc.stepGapSeconds = c.stepGapSeconds;
    tc.poisson = c.arrivals == "poisson";
    tc.bursts.kind = ParseArrivalKind(c.arrivals);
    tc.bursts.burstMeanFrames = c.burstMeanUnits;
    tc.bursts.mmppRateRatio = c.mmppRateRatio;
    tc.bursts.mmppHighFraction = c.mmppHighFraction;
    tc.bursts.mmppCycleSeconds = c.mmppCycleSeconds;
    tc.burstPeakRatio = c.burstPeakRatio;
    tc.seed = c.seed;
    tc.synCookies = c.synCookies;
    tc.forwarding = ParseLbForwarding(c.forwarding);
    return tc;
}

} // namespace

// Idle aging after every slice sweeps each shard once per aging_sweep_s.
// Auto (0): a tenth of the shortest timeout in force: TIME_WAIT when kept,
// FIN_WAIT, and IPVS's 2 s for a connection that never saw a segment
// (NONE); a connection then outlives its timeout by at most a tenth of it.
// The buckets per slice are a fraction in general: the pacer carries the
// remainder, so the sweep rate (and the cycles it costs the cores) does
// not depend on the slice length.
AgingPacer::AgingPacer(const LbScenarioConfig& c, uint32_t bucketsPerShard)
{
    double shortest = std::min(c.finWaitSeconds, 2.0);
    if (c.timeWaitSeconds > 0)
    {
        shortest = std::min(shortest, c.timeWaitSeconds);
    }
    const double sweepSeconds = c.agingSweepSeconds > 0 ? c.agingSweepSeconds : shortest / 10;
    bucketsPerSlice = std::min<double>(bucketsPerShard, bucketsPerShard * c.batchIntervalSeconds / sweepSeconds);
}

uint32_t
AgingPacer::Next()
{
    carry += bucketsPerSlice;
    const double whole = std::floor(carry);
    carry -= whole;
    return static_cast<uint32_t>(whole);
}

namespace
{

// What both levels report from the tester, the device and the per-core
// cycles counted in the window [warmup, duration).
void
Summarise(const LbScenarioConfig& c, const LbTester& tester, L4BalancerDevice& dev, uint64_t setupFrames,
          double setupCycles, const dp_ops_t& setupOps, const std::vector<double>& windowCycles,
          double windowAgingCycles, LbScenarioResult& r)
{
    const uint64_t durPs = static_cast<uint64_t>(std::llround(c.durationSeconds * 1e12));
    const uint64_t warmPs = static_cast<uint64_t>(std::llround(c.EffectiveWarmupSeconds() * 1e12));
    L4Balancer& lb = dev.Balancer();
    const double window = (durPs - warmPs) * 1e-12;
    r.unitsStarted = tester.Started(0, warmPs, durPs);
    r.unitsCompleted = tester.Completed(0, warmPs, durPs);
    r.unitsFailed = tester.Failed(0, warmPs, durPs);
    r.framesToServers = tester.FramesToServers();
    r.deliveryErrors = tester.DeliveryErrors();
    r.traceIpv6Connections = tester.TraceIpv6Connections();
    r.traceIpv6Packets = tester.TraceIpv6Packets();
    r.expired = lb.Expired();
    r.timeWaitEnd = lb.ConnectionsIn(DP_SESS_TIME_WAIT);
    r.offeredRate = r.unitsStarted / window;
    r.completedRate = r.unitsCompleted / window;
    const uint64_t allUnits = tester.Started(0, 0, UINT64_MAX);
    r.packetsPerUnit = tester.PacketsPerUnit(0);
    dp_ops_t ops = dev.Ops();
    const uint64_t frames = dev.Frames() - setupFrames;
    const double cycles = dev.SumCycles() - setupCycles;
    // per unit of the main stream over the whole run (a flood's legitimate
    // stream, 1e-5 of its frames, is included in the cycles)
    if (allUnits > 0)
    {
        r.cyclesPerUnit = cycles / static_cast<double>(allUnits);
        for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
        {
            r.opsPerUnit[dp_ops_counter_name(i)] =
                static_cast<double>(dp_ops_counter(&ops, i) - dp_ops_counter(&setupOps, i)) /
                static_cast<double>(allUnits);
        }
    }
    r.cyclesPerPacket = frames ? cycles / static_cast<double>(frames) : 0;
    const PipelineReport rep = dev.Engine().Report();
    double sum = 0, spanSum = 0;
    for (uint32_t k = 0; k < c.numCores; ++k)
    {
        const double u = 100 * windowCycles[k] / (c.clockHz * window);
        r.coreUtilizationPct.push_back(u);
        sum += u;
        r.cpuMaxPct = std::max(r.cpuMaxPct, u);
        spanSum += 100 * rep.coreUtilization[k];
    }
    r.cpuMeanPct = sum / c.numCores;
    r.agingCpuMeanPct = 100 * windowAgingCycles / (c.clockHz * window * c.numCores);
    r.agingCycles = dev.AgingCycles();
    r.cpuSpanMeanPct = spanSum / c.numCores;
    r.cpuClosedFormPct = 100 * c.rate * r.cyclesPerUnit / (c.numCores * c.clockHz);
    r.bottleneck = rep.bottleneck;
    r.deliveredPps = rep.durationSeconds > 0 ? dev.Engine().Counters().departed / rep.durationSeconds : 0;
    const PipelineCounters& k = dev.Engine().Counters();
    if (k.started > 0)
    {
        r.meanCoreWaitSeconds = k.sumWaitSeconds / static_cast<double>(k.started);
        r.meanCoreServiceSeconds = k.sumServiceSeconds / static_cast<double>(k.started);
    }
    for (size_t i = 1; i < static_cast<size_t>(PipelineDrop::kCount); ++i)
    {
        if (i != static_cast<size_t>(PipelineDrop::kDataPlane) && k.drops[i])
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
    if (c.workload == "synflood" && c.legitRate > 0)
    {
        r.legitOfferedRate = tester.Started(1, warmPs, durPs) / window;
        r.legitCompletedRate = tester.Completed(1, warmPs, durPs) / window;
    }
    // A tunnelled packet answered with ICMP is no drop to the engine (its
    // frame left, as the answer); the balancer counted it.
    if (const uint64_t mtu = lb.Drops()[DP_DROP_TUNNEL_MTU_EXCEEDED])
    {
        r.drops[dp_drop_reason_name(DP_DROP_TUNNEL_MTU_EXCEEDED)] = mtu;
    }
    r.icmpFragNeeded = lb.IcmpFragNeeded();
    r.icmpFragNeededUsed = tester.PathMtuLearnt();
    r.cookiesSent = lb.CookiesSent();
    r.cookiesValid = lb.CookiesValid();
    r.connectionsEnd = lb.Connections();
    r.refusedFull = lb.RefusedFull();
    r.simEvents = Simulator::GetEventCount();
    r.unitLatency = tester.UnitLatency(0, warmPs, durPs);
    r.coreQueue = dev.Engine().CoreQueueLengths();
}

// Packet level (lb-packet-level.h): a tester node and a balancer node, each
// with `ports` EthernetPortDevices cabled pairwise; the same tester and
// balancer as RunDescriptorLevel, real ns3::Packets between them.
LbScenarioResult
RunPacketLevel(const LbScenarioConfig& c)
{
    RunGuard guard;
    LbScenarioConfig pc = c;
    pc.portBitRate = 0; // MakeDevice: no aggregate egress line, the ports serialise
    guard.device = MakeDevice(pc, c.sessionsPerCore, c.numCores);
    Ptr<L4BalancerDevice> dev = guard.device;
    LbTester tester(TesterConfig(c), c.services);
    tester.Setup(dev->Balancer());
    const uint64_t setupFrames = dev->Frames();
    const double setupCycles = dev->SumCycles();
    const dp_ops_t setupOps = dev->Ops();

    const uint64_t durPs = static_cast<uint64_t>(std::llround(c.durationSeconds * 1e12));
    const uint64_t warmPs = static_cast<uint64_t>(std::llround(c.EffectiveWarmupSeconds() * 1e12));
    const uint64_t slicePs = static_cast<uint64_t>(std::llround(c.batchIntervalSeconds * 1e12));
    tester.SetEnd(durPs);

    Ptr<Node> testerNode = CreateObject<Node>();
    Ptr<Node> balancerNode = CreateObject<Node>();
    std::vector<Ptr<EthernetPortDevice>> testerPorts, balancerPorts;
    std::vector<Ptr<EthernetLink>> links;
    for (uint32_t i = 0; i < c.ports; ++i)
    {
        Ptr<EthernetLink> link = CreateObject<EthernetLink>();
        link->SetAttribute("Delay", TimeValue(PicoSeconds(std::llround(c.linkDelaySeconds * 1e12))));
        for (Ptr<Node> node : {testerNode, balancerNode})
        {
            Ptr<EthernetPortDevice> port = CreateObject<EthernetPortDevice>();
            port->SetAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(c.portBitRate))));
            node->AddDevice(port);
            port->Attach(link);
            (node == testerNode ? testerPorts : balancerPorts).push_back(port);
        }
        links.push_back(link);
    }
    const LbPortMap map{c.ports};
    Ptr<L4BalancerPorts> box = CreateObject<L4BalancerPorts>();
    box->Install(balancerNode, dev, balancerPorts, map);
    box->SetWindow(warmPs, durPs);
    box->SetLossTimeline(c.lossBins, c.durationSeconds);
    box->StartAging(slicePs, durPs, [pacer = AgingPacer(c, dev->Balancer().BucketsPerShard())]() mutable {
        return pacer.Next();
    });
    Ptr<LbTesterApp> app = CreateObject<LbTesterApp>();
    app->Configure(&tester, testerPorts, map, durPs, slicePs, c.workload == "synflood" ? c.floodPorts : 0);
    testerNode->AddApplication(app);
    app->SetStartTime(Seconds(0));
    Simulator::Run();
    app->Finish();

    LbScenarioResult r;
    r.level = "packet";
    Summarise(c, tester, *dev, setupFrames, setupCycles, setupOps, box->WindowCycles(), box->WindowAgingCycles(), r);
    r.framesMeasured = app->Received();
    r.meanLatencySeconds = app->Received() ? app->SumLatencySeconds() / static_cast<double>(app->Received()) : 0;
    r.latency = app->Latency();
    r.portLatency = app->PortLatency();
    r.portLatencySumSeconds = app->PortLatencySumSeconds();
    r.lossTimeline = box->Loss();
    Time portWait;
    uint64_t portFrames = 0, portDrops = 0;
    for (const auto& ports : {testerPorts, balancerPorts})
    {
        for (const Ptr<EthernetPortDevice>& p : ports)
        {
            portWait += p->TxQueueWait();
            portFrames += p->TxFrames();
            portDrops += p->TxDrops();
        }
    }
    // a frame crosses two ports: the tester's and the balancer's
    r.meanPortWaitSeconds = portFrames ? 2 * portWait.GetSeconds() / static_cast<double>(portFrames) : 0;
    if (portDrops)
    {
        r.drops["tx_queue_full"] = portDrops;
    }
    // the bit rate the balancer's ports sent in the window is not sampled per
    // frame here; the frames' count and sizes are the descriptor level's
    for (const Ptr<Node>& n : {testerNode, balancerNode})
    {
        n->Dispose();
    }
    box->Dispose();
    return r;
}

LbScenarioResult
RunDescriptorLevel(const LbScenarioConfig& c)
{
    RunGuard guard;
    guard.device = MakeDevice(c, c.sessionsPerCore, c.numCores);
    Ptr<L4BalancerDevice> dev = guard.device;
    LbTester tester(TesterConfig(c), c.services);
    tester.Setup(dev->Balancer());
    // the setup's frames (persistent connections opened before the test) are not priced in the run
    const uint64_t setupFrames = dev->Frames();
    const double setupCycles = dev->SumCycles();
    const dp_ops_t setupOps = dev->Ops();

    const uint64_t durPs = static_cast<uint64_t>(std::llround(c.durationSeconds * 1e12));
    const uint64_t warmPs = static_cast<uint64_t>(std::llround(c.EffectiveWarmupSeconds() * 1e12));
    const uint64_t slicePs = static_cast<uint64_t>(std::llround(c.batchIntervalSeconds * 1e12));

    tester.SetEnd(durPs);
    // Packets inside the device by tag: tags are handed out in order and
    // every packet leaves or is dropped within a few slices, so a window of
    // tags from the oldest still inside does (no hashing, no allocation per
    // packet), each with the port it entered on, found when it is offered.
    struct InFlight
    {
        LbTxPacket packet;
        uint32_t ingressPort;
    };
    std::deque<InFlight> inFlight;
    std::deque<bool> inside;
    uint32_t oldestTag = 0;
    auto leave = [&](uint32_t t) -> const InFlight& {
        const size_t i = t - oldestTag;
        inside[i] = false;
        return inFlight[i];
    };
    auto forget = [&]() {
        while (!inside.empty() && !inside.front())
        {
            inside.pop_front();
            inFlight.pop_front();
            ++oldestTag;
        }
    };
    uint32_t tag = 0;
    std::vector<LbTxPacket> pkts;
    std::vector<PacketDesc> batch, departed, dropped;
    // a jumbo frame (mss 8960: 9014 octets) and the tunnel mode's outer header
    alignas(8) uint8_t storage[kLbFrameBuffer];
    constexpr size_t kHeadroom = 64; // for the tunnel mode's outer header
    uint8_t* const buf = storage + kHeadroom;
    const size_t cap = sizeof storage - kHeadroom;

    const uint64_t windowFromPs = static_cast<uint64_t>(std::llround(c.EffectiveWarmupSeconds() * 1e12));
    L4Balancer& lb = dev->Balancer();
    AgingPacer pacer(c, lb.BucketsPerShard());
    const uint64_t samplePs =
        c.occupancySampleSeconds > 0 ? static_cast<uint64_t>(std::llround(c.occupancySampleSeconds * 1e12)) : 0;
    uint64_t nextSamplePs = 0;
    LbScenarioResult r;
    const LbPortMap map{c.ports};
    const uint32_t floodPorts = c.workload == "synflood" ? c.floodPorts : 0;
    r.lossTimeline = LossTimeline(c.ports, c.lossBins, c.durationSeconds, PipelineDropReasons());
    r.portLatency.assign(c.ports, LatencyHistogram{});
    r.portLatencySumSeconds.assign(c.ports, 0.0);
    auto sample = [&](uint64_t nowPs) {
        while (samplePs && nextSamplePs <= nowPs)
        {
            r.occupancyTimes.push_back(nextSamplePs * 1e-12);
            r.occupancyConnections.push_back(lb.Connections());
            r.occupancyTimeWait.push_back(lb.ConnectionsIn(DP_SESS_TIME_WAIT));
            nextSamplePs += samplePs;
        }
    };
    double windowBits = 0;
    std::vector<double> windowCycles(c.numCores, 0.0);
    double windowAgingCycles = 0; // of windowCycles, the aging sweeps'
    double sumLatencySeconds = 0; // tester send (= arrival) to departure, over the frames that left
    uint64_t latencyFrames = 0;
    std::vector<L4BalancerDevice::AgingWork> agingWork;
    auto settle = [&]() {
        for (const PacketDesc& d : departed)
        {
            if (d.departPs >= windowFromPs && d.departPs < durPs)
            {
                windowBits += 8.0 * d.frameBytes;
                windowCycles[dev->CoreOfDesc(d)] += d.serviceCycles;
            }
            const double latency = static_cast<double>(d.departPs - d.arrivalPs) * 1e-12;
            sumLatencySeconds += latency;
            r.latency.Add(latency);
            ++latencyFrames;
            const InFlight& f = leave(d.seq);
            r.portLatency.at(f.ingressPort).Add(latency);
            r.portLatencySumSeconds[f.ingressPort] += latency;
            tester.OnDeparted(f.packet, d.departPs);
        }
        for (const PacketDesc& d : dropped)
        {
            const InFlight& f = leave(d.seq);
            r.lossTimeline.Add(f.ingressPort, static_cast<double>(d.arrivalPs) * 1e-12, 1.0,
                               PipelineDropReasonIndex(d));
            tester.OnLost(f.packet);
        }
        forget();
        departed.clear();
        dropped.clear();
    };

    // each packet through the balancer, or (a server's reply under DR or
    // tunnel) straight to the client at its send time
    auto offer = [&](const std::vector<LbTxPacket>& packets) {
        for (const LbTxPacket& p : packets)
        {
            if (tester.Spare(p))
            {
                continue;
            }
            if (tester.Bypasses(p))
            {
                tester.OnDeparted(p, p.timePs);
                continue;
            }
            const size_t len = tester.Build(p, buf, cap);
            uint8_t* out = buf;
            size_t outLen = len;
            const LbVerdict v = dev->Offer(buf, len, cap, kHeadroom, p.timePs, tag, batch, &out, &outLen);
            tester.OnVerdict(p, v, out, outLen);
            inFlight.push_back({p, map.IngressPort(tester, p, floodPorts)});
            inside.push_back(true);
            ++tag;
        }
    };

    std::function<void(uint64_t)> slice = [&](uint64_t fromPs) {
        const uint64_t toPs = std::min(fromPs + slicePs, durPs);
        pkts.clear();
        batch.clear();
        tester.Emit(toPs, pkts);
        offer(pkts);
        dev->Run(batch, departed, dropped);
        settle();
        agingWork.clear();
        const uint32_t budget = pacer.Next();
        if (budget > 0) // 0 would mean a whole shard
        {
            dev->Age(toPs, budget, agingWork);
        }
        for (const L4BalancerDevice::AgingWork& w : agingWork)
        {
            // counted like a frame's cycles: when the work leaves the core
            if (w.endPs >= windowFromPs && w.endPs < durPs)
            {
                windowCycles[w.core] += w.cycles;
                windowAgingCycles += w.cycles;
            }
        }
        sample(toPs);
        if (toPs < durPs)
        {
            Simulator::Schedule(PicoSeconds(toPs - fromPs), [&slice, toPs]() { slice(toPs); });
        }
    };
    Simulator::ScheduleNow([&slice]() { slice(0); });
    Simulator::Run();
    // the tail: packets of units started before the end
    pkts.clear();
    batch.clear();
    tester.Emit(UINT64_MAX, pkts);
    offer(pkts);
    dev->Run(batch, departed, dropped);
    dev->Flush(departed);
    settle();

    r.level = "descriptor";
    Summarise(c, tester, *dev, setupFrames, setupCycles, setupOps, windowCycles, windowAgingCycles, r);
    r.deliveredBitRate = windowBits / ((durPs - warmPs) * 1e-12);
    r.framesMeasured = latencyFrames;
    r.meanLatencySeconds = latencyFrames ? sumLatencySeconds / static_cast<double>(latencyFrames) : 0;
    return r;
}

} // namespace

LbScenarioResult
RunLbScenario(const LbScenarioConfig& c)
{
    Simulator::Destroy();
    if (c.workload == "fill")
    {
        return RunFill(c);
    }
    return c.level == "packet" ? RunPacketLevel(c) : RunDescriptorLevel(c);
}

} // namespace routertwin
