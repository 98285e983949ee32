#include "router-model.h"

#include "dp_lpm.h"
#include "dp_pkt.h"
#include "pcap-trace.h"
#include "random-stream.h"
#include "t640-tester-traffic.h"
#include "traffic-profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace routertwin
{

const char*
RouterDropName(RouterDrop d)
{
    switch (d)
    {
    case RouterDrop::NoRoute:
        return "no_route";
    case RouterDrop::LookupQueueFull:
        return "lookup_queue_full";
    case RouterDrop::IngressBufferFull:
        return "ingress_buffer_full";
    case RouterDrop::EgressBufferFull:
        return "egress_buffer_full";
    case RouterDrop::Blackhole:
        return "blackhole";
    case RouterDrop::Unreachable:
        return "unreachable";
    case RouterDrop::Prohibited:
        return "prohibited";
    case RouterDrop::NotIpv4:
        return "not_ipv4";
    case RouterDrop::Count:
        break;
    }
    return "?";
}

std::vector<std::string>
RouterDropNames()
{
    std::vector<std::string> names;
    for (size_t i = 0; i < static_cast<size_t>(RouterDrop::Count); ++i)
    {
        names.emplace_back(RouterDropName(static_cast<RouterDrop>(i)));
    }
    return names;
}

void
RouterConfig::Validate() const
{
    auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
    if (ports < 2 || ports % 2 != 0 || ports > 256)
    {
        bad("ports must be an even number in 2..256 (ports are paired p <-> p + ports/2)");
    }
    if (portsPerPfe < 1 || ports % portsPerPfe != 0)
    {
        bad("ports_per_pfe must divide ports");
    }
    SonetPayloadBps(sonetN);
    ppp.Validate();
    if (ipBytes < 32 || ipBytes > 9000)
    {
        bad("ip_bytes must be between 32 and 9000");
    }
    if (!(offeredLoad > 0 && offeredLoad <= 1.0))
    {
        bad("offered_load must be in (0, 1]");
    }
    if (cellBytes < 16)
    {
        bad("cell_bytes must be at least 16");
    }
    if (!(fabricBpsPerPfe > 0) || !(lookupProbesPerSecond > 0))
    {
        bad("fabric and lookup rates must be positive");
    }
    if (!(durationSeconds > 0) || !(batchSeconds > 0))
    {
        bad("duration and batch must be positive");
    }
    if (ingressBufferSeconds < 0 || egressBufferSeconds < 0 || lookupQueueSeconds < 0)
    {
        bad("buffers must not be negative");
    }
    if (lossBins < 1 || lossBins > 100000)
    {
        bad("loss_bins must be in 1..100000");
    }
    if (Traced() && !ipMix.empty())
    {
        bad("a trace and ip_mix exclude each other (a trace brings its own sizes)");
    }
    if (Traced() && destinationPopularity != FlowPopularity::kRoundRobin)
    {
        bad("destination_popularity: a trace brings its own destinations");
    }
    if (!(zipfExponent >= 0) || !std::isfinite(zipfExponent))
    {
        bad("zipf_exponent must be >= 0");
    }
    if (flowSizes.kind != FlowSizeKind::kNone)
    {
        try
        {
            flowSizes.Validate();
        }
        catch (const std::invalid_argument& e)
        {
            bad(e.what());
        }
        if (Traced())
        {
            bad("flow_sizes: a trace brings its own flows");
        }
        if (destinationPopularity != FlowPopularity::kRoundRobin)
        {
            bad("flow_sizes: flow-level traffic picks its own destinations (one per flow)");
        }
        if (!(flowPps >= 0) || !std::isfinite(flowPps))
        {
            bad("flow_pps must be >= 0 (0: the port's offered rate / flows)");
        }
        if (flowsPerPort < 1 || flowsPerPort > (1u << 24))
        {
            bad("flows must be in 1..2^24");
        }
    }
    if (Traced() && arrivals.kind != ArrivalKind::kConstant)
    {
        bad("arrivals: a trace brings its own instants (arrivals apply to ip_bytes and ip_mix)");
    }
    if (arrivals.kind == ArrivalKind::kOnOff && !(burstPeakLoad > offeredLoad && burstPeakLoad <= 1.0))
    {
        bad("burst_peak_load must be above offered_load and at most 1 (a burst is sent faster than the mean, "
            "at most at line rate)");
    }
    if (!traceFile.empty() && !portTraceFiles.empty())
    {
        bad("trace_file and trace_files exclude each other (one trace for every port, or one per port)");
    }
    if (!portTraceFiles.empty())
    {
        if (portTraceFiles.size() != ports)
        {
            bad("trace_files: " + std::to_string(portTraceFiles.size()) + " entries for " + std::to_string(ports) +
                " ports (one per port, \"\" for an idle port)");
        }
        if (std::all_of(portTraceFiles.begin(), portTraceFiles.end(), [](const std::string& f) { return f.empty(); }))
        {
            bad("trace_files: every port is idle");
        }
    }
    if (ipMix.size() > 255)
    {
        bad("ip_mix: at most 255 sizes");
    }
    for (const auto& [bytes, weight] : ipMix)
    {
        if (bytes < 32 || bytes > 9000)
        {
            bad("ip_mix: size " + std::to_string(bytes) + " must be between 32 and 9000");
        }
        if (!std::isfinite(weight) || !(weight > 0))
        {
            bad("ip_mix: weight of " + std::to_string(bytes) + " must be > 0");
        }
    }
}

unsigned
RouterConfig::CellsPerPacket(unsigned ip) const
{
    return (ip + internalHeaderBytes + cellBytes - 1) / cellBytes;
}

double
RouterConfig::TheoreticalPortPps(double payloadBps) const
{
    if (ipMix.empty())
    {
        return TheoreticalPps(payloadBps, ppp, ipBytes);
    }
    double frames = 0, weights = 0;
    for (const auto& [bytes, weight] : ipMix)
    {
        frames += weight * NominalFrameBytes(ppp, bytes);
        weights += weight;
    }
    return payloadBps / (8.0 * frames / weights);
}

unsigned
RouterConfig::CellsPerPacket() const
{
    return CellsPerPacket(ipBytes);
}

double
RouterConfig::RunLimitSeconds() const
{
    return durationSeconds + ingressBufferSeconds + egressBufferSeconds + lookupQueueSeconds + 1e-3;
}

namespace
{

struct Route
{
    uint32_t prefix;
    uint8_t depth;
    uint32_t target; ///< index into the FIB's next-hop targets
};

/// What a route does with a packet: forward to one of `ports` (several: ECMP)
/// or drop it with `drop`.
struct NextHopTarget
{
    std::vector<unsigned> ports;
    RouterDrop drop = RouterDrop::Count; ///< Count: forwards
};

/// Routes and the distinct targets they point to (the dp_lpm next hop of a
/// route is its target index; targets 0..ports-1 are the single ports).
struct Fib
{
    std::vector<Route> routes;
    std::vector<NextHopTarget> targets;
    std::map<std::pair<std::vector<unsigned>, RouterDrop>, uint32_t> index;

    explicit Fib(unsigned ports)
    {
        for (unsigned p = 0; p < ports; ++p)
        {
            TargetIndex(NextHopTarget{{p}, RouterDrop::Count});
        }
    }

    uint32_t TargetIndex(const NextHopTarget& t)
    {
        auto [it, added] = index.emplace(std::make_pair(t.ports, t.drop), static_cast<uint32_t>(targets.size()));
        if (added)
        {
            targets.push_back(t);
        }
        return it->second;
    }
};

uint32_t
InterfaceSubnet(unsigned port)
{
    // 192.168.port.0/30: router .1, tester .2. ASSUMPTION: the seed does not
    // give the addressing plan.
    return 0xC0A80000u | (port << 8);
}

// Most next hops of one ECMP route the model takes. ASSUMPTION: enough for
// the ECMP groups routers install (the kernel and the daemons allow more;
// the importers refuse a larger group by name).
constexpr size_t kMaxEcmpPorts = 64;

// One FIB line's target: "3", "1,5,7", "blackhole", "unreachable",
// "prohibit"; false when it is none of these.
bool
ParseTarget(const std::string& word, unsigned ports, NextHopTarget& t)
{
    if (word == "blackhole" || word == "unreachable" || word == "prohibit")
    {
        t.drop = word == "blackhole"     ? RouterDrop::Blackhole
                 : word == "unreachable" ? RouterDrop::Unreachable
                                         : RouterDrop::Prohibited;
        return true;
    }
    if (word.empty() || word.back() == ',')
    {
        return false; // getline would not report the empty last part
    }
    std::istringstream ws(word);
    std::string part;
    while (std::getline(ws, part, ','))
    {
        if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos)
        {
            return false;
        }
        unsigned port = static_cast<unsigned>(std::stoul(part));
        if (port >= ports || std::find(t.ports.begin(), t.ports.end(), port) != t.ports.end())
        {
            return false;
        }
        t.ports.push_back(port);
    }
    return !t.ports.empty() && t.ports.size() <= kMaxEcmpPorts;
}

Fib
LoadRouteFile(const std::string& path, unsigned ports)
{
    std::ifstream in(path);
    if (!in)
    {
        throw std::invalid_argument(path + ": cannot open route file");
    }
    Fib fib(ports);
    std::string line;
    unsigned lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        unsigned a, b, c, d, len;
        char s1, s2, s3, slash;
        std::string word, extra;
        std::istringstream ls(line);
        NextHopTarget t;
        if (!(ls >> a >> s1 >> b >> s2 >> c >> s3 >> d >> slash >> len >> word) || (ls >> extra) ||
            s1 != '.' || s2 != '.' || s3 != '.' || slash != '/' || a > 255 || b > 255 || c > 255 ||
            d > 255 || len > 32 || !ParseTarget(word, ports, t))
        {
            throw std::invalid_argument(path + ":" + std::to_string(lineNo) +
                                        ": expected 'a.b.c.d/len TARGET', TARGET a port < " +
                                        std::to_string(ports) +
                                        ", distinct ports 'p,q,...' (ECMP, at most " +
                                        std::to_string(kMaxEcmpPorts) +
                                        "), blackhole, unreachable or prohibit");
        }
        fib.routes.push_back(
            Route{(a << 24) | (b << 16) | (c << 8) | d, static_cast<uint8_t>(len), fib.TargetIndex(t)});
    }
    return fib;
}

// The ECMP member of a packet: hash-threshold (RFC 2992 section 2.2): the
// hash space is cut into equal regions, one per next hop, so adding a next
// hop moves only the flows of the regions that shift. The hash is a 64-bit
// multiplicative mix of source and destination (the L3 tuple Linux hashes
// by default, fib_multipath_hash_policy 0); its exact bits are the twin's.
unsigned
EcmpMember(uint32_t src, uint32_t dst, size_t members)
{
    uint64_t key = (static_cast<uint64_t>(src) << 32) | dst;
    uint32_t h = static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32);
    return static_cast<unsigned>((static_cast<uint64_t>(h) * members) >> 32);
}

// Destinations of tester port p with a FIB file: route i's first host
// address (the prefix + 1 below /31) goes to the stream whose peer is
// i % ports, so every route is offered traffic and each port's share is even.
std::vector<uint32_t>
FileDestinations(const Fib& fib, unsigned ports, unsigned peer)
{
    std::vector<uint32_t> d;
    for (size_t i = peer; i < fib.routes.size(); i += ports)
    {
        const Route& r = fib.routes[i];
        d.push_back(r.depth < 31 ? r.prefix + 1 : r.prefix);
    }
    return d;
}

// Generated routes of peer q: the first routes % ports peers take one extra.
uint32_t
RoutesOf(const RouterConfig& cfg, unsigned q)
{
    return cfg.routes / cfg.ports + (q < cfg.routes % cfg.ports ? 1 : 0);
}

// Routes "as the test did": `total` routes, total/ports per eBGP peer (the
// peer behind each port), consecutive /24s.
std::vector<Route>
GenerateRoutes(const RouterConfig& cfg)
{
    std::vector<Route> r;
    r.reserve(cfg.routes);
    uint32_t next = cfg.routeFirstPrefix & 0xFFFFFF00u;
    for (unsigned q = 0; q < cfg.ports; ++q)
    {
        for (uint32_t i = 0, n = RoutesOf(cfg, q); i < n; ++i)
        {
            r.push_back(Route{next, 24, q});
            next += 256;
        }
    }
    return r;
}

// First route index of peer q in the generated list.
uint32_t
FirstRouteOf(const RouterConfig& cfg, unsigned q)
{
    uint32_t base = cfg.routes / cfg.ports;
    uint32_t extra = cfg.routes % cfg.ports;
    return q * base + std::min<uint32_t>(q, extra);
}

// Standard normal from two uniforms (Box-Muller), so results do not depend
// on a library's distribution algorithm.
double
Normal(RandomStream& rng)
{
    double u1 = rng.Uniform01();
    double u2 = rng.Uniform01();
    if (u1 < 1e-300)
    {
        u1 = 1e-300;
    }
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// The router's forwarding rewrite of a tester packet (TTL and checksum), so
// that the egress frame's stuffing is counted on the octets it really sends.
// The tester sends TTL 64, so the rewrite cannot be refused.
void
ForwardHeader(std::vector<uint8_t>& p)
{
    if (dp_ip4_decrement_ttl(p.data(), p.size(), nullptr) != DP_OK)
    {
        throw std::logic_error("router: tester packet refused by the TTL rewrite");
    }
}

// The routes of the model: the FIB file's, or the generated ones.
Fib
LoadFib(const RouterConfig& cfg)
{
    if (!cfg.routeFile.empty())
    {
        return LoadRouteFile(cfg.routeFile, cfg.ports);
    }
    Fib fib(cfg.ports);
    fib.routes = GenerateRoutes(cfg);
    return fib;
}

TesterStreamConfig
StreamOf(const RouterConfig& cfg, const Fib& fib, unsigned p)
{
    TesterStreamConfig s;
    s.ipBytes = cfg.ipBytes;
    s.srcIp = InterfaceSubnet(p) | 2;
    s.streamId = p + 1;
    unsigned q = cfg.PeerOf(p);
    uint32_t n = RoutesOf(cfg, q);
    if (cfg.routesAsDestinations && !cfg.routeFile.empty() && cfg.routes == 0 && q < fib.routes.size())
    {
        s.dstIps = FileDestinations(fib, cfg.ports, q);
    }
    else if (cfg.routesAsDestinations && n > 0)
    {
        uint32_t first = (cfg.routeFirstPrefix & 0xFFFFFF00u) + (FirstRouteOf(cfg, q) << 8);
        s.dstIps = RouteDestinations(first, n);
    }
    else
    {
        s.dstIps = {InterfaceSubnet(q) | 2};
    }
    return s;
}

} // namespace

// ---------------------------------------------------------------------------
// Packet-level engine

struct RouterEngine::Impl
{
    struct Pending
    {
        bool valid = false;
        double start = 0;
        double end = 0;
        uint32_t src = 0; // the ECMP hash's source
        uint32_t dst = 0;
        bool notIpv4 = false; // a trace packet routed by destination that has none
        uint16_t egressWire = 0;
        uint16_t cells = 0;
        uint16_t ipBytes = 0;
    };

    struct Stream
    {
        TesterStreamConfig tc;
        uint64_t seq = 0;
        double nextStart = 0;
        double scheduled = 0; // the instant nextStart's frame was due (its tester wait is the difference)
        Pending pending;
        std::unique_ptr<RandomStream> sizeRng; // ip mix: this port's draws
        std::unique_ptr<ArrivalProcess> arrivals; // random instants: this port's
        std::unique_ptr<FlowPicker> destinations; // popularity of this port's destinations
        std::unique_ptr<FlowLevelProcess> flowLevel; // flow-level traffic: this port's flows
        uint32_t flow = 0;                        // flow-level traffic: the next frame's flow
        std::vector<double> mixCredit;         // ip mix in sequence order
        std::unique_ptr<PcapTrace> trace;      // trace: this port's reader
        std::string traceFile;                 // trace: its file
        double traceScale = 1;                 // trace: replayed seconds per captured second
        double traceGapSeconds = 0;            // trace: from a pass's last packet to the next's first
        uint64_t traceFirstNs = 0, traceLastNs = 0; // trace: its span
        double traceOffset = 0;                // trace: start of the current pass
        uint64_t traceBaseNs = 0;              // trace: capture time replayed at traceOffset
        unsigned traceIp = 0;                  // trace: IP size of the next packet
        bool traceIpv4 = false;                // trace: the next packet's addresses
        uint32_t traceSrc = 0, traceDst = 0;
    };

    // One pass over a trace file: its IP sizes (the mix that sets the
    // theoretical rate, cells and latency reference) and its time span.
    struct TraceScan
    {
        std::vector<std::pair<unsigned, double>> ipMix;
        double nativePps = 0, spanSeconds = 0;
        uint64_t firstNs = 0, lastNs = 0, packets = 0;
    };

    static unsigned TraceIpBytes(uint32_t ip) { return std::clamp<uint32_t>(ip, 32, 9000); }

    static TraceScan ScanTrace(const std::string& file)
    {
        TraceScan scan;
        PcapTrace t(file, 1);
        std::map<unsigned, uint64_t> sizes;
        TracePacket p;
        uint64_t n = 0, lastNs = 0;
        while (t.Next(p))
        {
            scan.firstNs = n ? scan.firstNs : p.ns;
            lastNs = p.ns;
            ++sizes[TraceIpBytes(p.ipBytes)];
            ++n;
        }
        if (n < 2 || !(lastNs > scan.firstNs))
        {
            throw std::invalid_argument(file + ": a trace needs at least two packets with increasing timestamps");
        }
        for (const auto& [bytes, count] : sizes)
        {
            scan.ipMix.emplace_back(bytes, static_cast<double>(count));
        }
        scan.lastNs = lastNs;
        scan.packets = n;
        scan.spanSeconds = static_cast<double>(lastNs - scan.firstNs) * 1e-9;
        scan.nativePps = static_cast<double>(n - 1) / scan.spanSeconds;
        return scan;
    }

    // Each port's trace file, "" for none (idle, or no trace).
    static std::vector<std::string> PortTraceFiles(const RouterConfig& c)
    {
        return c.portTraceFiles.empty() ? std::vector<std::string>(c.ports, c.traceFile) : c.portTraceFiles;
    }

    // Each port's scan (empty for a port without a trace), every file read once.
    static std::vector<TraceScan> ScanTraces(const RouterConfig& c)
    {
        c.Validate();
        std::vector<TraceScan> scans(c.ports);
        std::map<std::string, TraceScan> byFile;
        const std::vector<std::string> files = PortTraceFiles(c);
        for (unsigned p = 0; p < c.ports; ++p)
        {
            if (files[p].empty())
            {
                continue;
            }
            auto it = byFile.find(files[p]);
            if (it == byFile.end())
            {
                it = byFile.emplace(files[p], ScanTrace(files[p])).first;
            }
            scans[p] = it->second;
        }
        return scans;
    }

    // The traces' sizes as the mix of the run (each port's packets counted
    // once per port that replays them): every packet then carries its own
    // size, and the theoretical rate of one trace is its mix's.
    static RouterConfig WithTraceMix(const RouterConfig& c, const std::vector<TraceScan>& scans)
    {
        RouterConfig out = c;
        if (c.Traced())
        {
            std::map<unsigned, double> sizes;
            for (const TraceScan& scan : scans)
            {
                for (const auto& [bytes, count] : scan.ipMix)
                {
                    sizes[bytes] += count;
                }
            }
            out.ipMix.assign(sizes.begin(), sizes.end());
        }
        return out;
    }

    struct Desc
    {
        double arrival;     // last octet received from the tester
        double wait;        // lookup wait so far
        uint64_t enqSlot;   // fabric slot its cells were queued in
        uint16_t egressWire;
        uint16_t cellsLeft;
        uint8_t inPort;
        uint8_t outPort;
        uint16_t cells;
        uint16_t ipBytes;
    };

    RouterConfig cfg;
    PosEncoder enc;
    double payloadBps;
    double byteTime;
    double theoreticalPortPps;
    double nominalInterval;
    unsigned cells;
    DiscreteSampler mixSampler;
    double theoreticalPps; // all replaying ports
    double slot;
    uint32_t ingressCapCells;
    std::vector<uint8_t> lpmMem;
    dp_lpm_t* lpm = nullptr;
    std::vector<NextHopTarget> targets; // a route's dp_lpm next hop indexes these
    dp_ops_t ops{};
    CrossbarFabric fabric;
    std::vector<Stream> streams;
    std::vector<double> lookupFreeAt;
    std::vector<double> egressBusyUntil;
    std::vector<QueueOccupancy> egressOccupancy; // per port: its egress queue over time
    bool egressLatencyPerPacket = false;         // RouterPortStats::egressLatency recorded per packet
    std::vector<Desc> desc;
    std::vector<FabricCell> departed;
    std::vector<uint8_t> pkt;
    std::vector<RouterPortStats> stats;
    std::vector<uint64_t> txCells; // per tester port: cells of the packets it offered
    std::vector<uint64_t> drops;
    LossTimeline lossTimeline;
    uint64_t inFlight = 0;
    uint64_t slotIndex = 0;
    uint64_t ingressEscapes = 0;
    uint64_t egressEscapes = 0;
    uint64_t frames = 0;
    double testerWaitSum = 0, testerWaitMax = 0;
    uint64_t testerWaited = 0;
    uint64_t lookups = 0;
    RouterEngine::DropCallback onDrop;
    RouterEngine::DeliverCallback onDeliver;

    static FabricConfig MakeFabric(const RouterConfig& c, uint32_t capCells)
    {
        FabricConfig f;
        f.ports = c.Pfes();
        f.queueing = c.queueing;
        f.scheduler = c.scheduler;
        f.islipIterations = c.islipIterations;
        f.speedup = c.speedup;
        f.inputBufferCells = capCells;
        f.seed = c.seed;
        return f;
    }

    static uint32_t CapCells(const RouterConfig& c, double slotS)
    {
        double cap = std::ceil(c.ingressBufferSeconds / slotS);
        return cap < 1 ? 1u : static_cast<uint32_t>(std::min(cap, 4.0e9));
    }

    explicit Impl(const RouterConfig& c)
        : Impl(c, ScanTraces(c))
    {
    }

    Impl(const RouterConfig& c, const std::vector<TraceScan>& scans)
        : cfg(WithTraceMix(c, scans)),
          enc(c.ppp),
          payloadBps(SonetPayloadBps(c.sonetN)),
          byteTime(8.0 / payloadBps),
          theoreticalPortPps(cfg.TheoreticalPortPps(payloadBps)),
          nominalInterval(1.0 / (c.offeredLoad * theoreticalPortPps)),
          cells(c.CellsPerPacket()),
          theoreticalPps(theoreticalPortPps * c.ports),
          slot(8.0 * c.cellBytes / c.fabricBpsPerPfe),
          ingressCapCells(CapCells(c, slot)),
          fabric(MakeFabric(c, ingressCapCells)),
          lossTimeline(c.ports, c.lossBins, c.durationSeconds, RouterDropNames())
    {
        Fib fib = LoadFib(cfg);
        streams.resize(cfg.ports);
        for (unsigned p = 0; p < cfg.ports; ++p)
        {
            streams[p].tc = StreamOf(cfg, fib, p);
            if (cfg.Traced() && cfg.traceDestinations)
            {
                streams[p].tc.dstIps = {0}; // each packet's own, set as it is built
            }
        }
        BuildLpm(fib); // adds the interface routes: after the destinations are drawn
        targets = std::move(fib.targets);
        if (!cfg.ipMix.empty())
        {
            std::vector<double> weights;
            for (const auto& part : cfg.ipMix)
            {
                weights.push_back(part.second);
            }
            mixSampler = DiscreteSampler(weights);
            for (unsigned p = 0; p < cfg.ports; ++p)
            {
                streams[p].sizeRng = std::make_unique<RandomStream>(cfg.seed, 0x51E0000ull + p);
                streams[p].mixCredit.assign(weights.size(), 0.0);
            }
        }
        if (cfg.Traced())
        {
            StartTraces(scans);
        }
        if (!cfg.Traced() && cfg.destinationPopularity != FlowPopularity::kRoundRobin)
        {
            for (unsigned p = 0; p < cfg.ports; ++p)
            {
                streams[p].destinations = std::make_unique<FlowPicker>(
                    static_cast<uint32_t>(streams[p].tc.dstIps.size()), cfg.destinationPopularity,
                    cfg.zipfExponent, cfg.seed, 0xD5710000ull | (uint64_t{p} << 32));
            }
        }
        if (!cfg.Traced() && cfg.flowSizes.kind != FlowSizeKind::kNone)
        {
            // Flow starts at a rate that makes starts x E[S] the offered rate.
            const double perFlow = cfg.flowSizes.MeanPackets();
            ArrivalConfig a = cfg.arrivals;
            a.meanPps = cfg.offeredLoad * theoreticalPortPps / perFlow;
            a.peakPps = cfg.burstPeakLoad * theoreticalPortPps / perFlow;
            const double flowPps =
                cfg.flowPps > 0 ? cfg.flowPps : cfg.offeredLoad * theoreticalPortPps / cfg.flowsPerPort;
            const uint32_t ids = static_cast<uint32_t>(std::min<uint64_t>(1u << 24, 4ull * cfg.flowsPerPort + 64));
            for (unsigned p = 0; p < cfg.ports; ++p)
            {
                // The arrival stream of the port (as for packet instants)
                // drives its flow starts; sizes their own stream.
                streams[p].flowLevel = std::make_unique<FlowLevelProcess>(
                    cfg.flowSizes, a, flowPps, ids, cfg.seed, 0xA7710000ull | (uint64_t{p} << 32),
                    0xF5170000ull | (uint64_t{p} << 32), 1.0);
                streams[p].nextStart = streams[p].scheduled = streams[p].flowLevel->Next(streams[p].flow);
            }
        }
        else if (!cfg.Traced() && cfg.arrivals.kind != ArrivalKind::kConstant)
        {
            ArrivalConfig a = cfg.arrivals;
            a.meanPps = cfg.offeredLoad * theoreticalPortPps;
            a.peakPps = cfg.burstPeakLoad * theoreticalPortPps;
            a.Validate();
            for (unsigned p = 0; p < cfg.ports; ++p)
            {
                // instants in seconds, each port its own stream of the seed;
                // the port in the high word: RandomStream mixes seed ^ stream,
                // so ports in the low bits would only swap streams between seeds
                streams[p].arrivals =
                    std::make_unique<ArrivalProcess>(a, cfg.seed, 0xA7710000ull | (uint64_t{p} << 32), 1.0);
                streams[p].nextStart = streams[p].scheduled = streams[p].arrivals->Next();
            }
        }
        lookupFreeAt.assign(cfg.Pfes(), 0.0);
        egressBusyUntil.assign(cfg.ports, 0.0);
        egressOccupancy.assign(cfg.ports, QueueOccupancy{});
        egressLatencyPerPacket = !cfg.routeFile.empty() || (cfg.Traced() && cfg.traceDestinations);
        stats.assign(cfg.ports, RouterPortStats{});
        txCells.assign(cfg.ports, 0);
        for (auto& s : stats)
        {
            s.latencyMin = std::numeric_limits<double>::infinity();
        }
        drops.assign(static_cast<size_t>(RouterDrop::Count), 0);
        desc.reserve(static_cast<size_t>(cfg.durationSeconds * theoreticalPps * 1.01) + 16);
    }

    // Every replaying port's reader and time scale. Each port's instants
    // are scaled to the offered rate of its trace's sizes; one pass lasts
    // the scaled span plus one mean gap, so passes do not overlap. With one
    // trace for all, port p starts p / ports of the way into it (its first
    // packet at 0): the ports replay different stretches at once, as
    // uncorrelated ports would, and a window shorter than a pass still
    // samples the whole trace. A trace of its own starts at its beginning.
    void StartTraces(const std::vector<TraceScan>& scans)
    {
        const std::vector<std::string> files = PortTraceFiles(cfg);
        theoreticalPps = 0;
        for (unsigned p = 0; p < cfg.ports; ++p)
        {
            Stream& st = streams[p];
            if (files[p].empty())
            {
                st.nextStart = std::numeric_limits<double>::infinity(); // idle
                continue;
            }
            const TraceScan& scan = scans[p];
            RouterConfig own = cfg;
            own.ipMix = scan.ipMix;
            const double portPps = own.TheoreticalPortPps(payloadBps);
            theoreticalPps += portPps;
            const double target = cfg.offeredLoad * portPps;
            st.traceFile = files[p];
            st.traceScale = scan.nativePps / target;
            st.traceGapSeconds = 1.0 / target;
            st.traceFirstNs = scan.firstNs;
            st.traceLastNs = scan.lastNs;
            st.trace = std::make_unique<PcapTrace>(files[p], 1);
            TracePacket skipped;
            for (uint64_t k = cfg.portTraceFiles.empty() ? scan.packets * p / cfg.ports : 0; k > 0; --k)
            {
                st.trace->Next(skipped);
            }
            st.traceBaseNs = 0; // set by the first packet read
            ReadTrace(st, 0.0);
        }
    }

    void BuildLpm(Fib& fib)
    {
        std::vector<Route>& routes = fib.routes;
        for (unsigned q = 0; q < cfg.ports; ++q)
        {
            routes.push_back(Route{InterfaceSubnet(q), 30, q});
        }
        dp_lpm_config_t lc{};
        lc.max_rules = static_cast<uint32_t>(routes.size()) + 16;
        uint32_t longer = 0;
        for (const Route& r : routes)
        {
            longer += r.depth > 24;
        }
        lc.tbl8_groups = std::max<uint32_t>(64, longer + 16);
        size_t bytes = dp_lpm_memory_size(&lc);
        if (bytes == 0)
        {
            throw std::invalid_argument("route table configuration rejected by dp_lpm");
        }
        lpmMem.assign(bytes + 64, 0);
        void* base = lpmMem.data();
        size_t space = lpmMem.size();
        std::align(64, bytes, base, space);
        lpm = dp_lpm_create(base, bytes, &lc);
        if (!lpm)
        {
            throw std::runtime_error("dp_lpm_create failed");
        }
        for (const Route& r : routes)
        {
            if (dp_lpm_add(lpm, r.prefix, r.depth, r.target, nullptr) != 0)
            {
                throw std::invalid_argument("route table full or invalid route");
            }
        }
    }

    // Builds the next tester frame of port p (its octets, its stuffing on
    // both links) without delivering it.
    // The next packet's IP size: ipBytes, or the mix's (drawn, or the smooth
    // weighted round robin of the tester's repeating pattern).
    // The trace's next packet: its IP size and its start, not before
    // notBefore (the port is busy until then); a pass ends, the next begins.
    void ReadTrace(Stream& s, double notBefore)
    {
        TracePacket tp;
        if (!s.trace->Next(tp))
        {
            // The next pass starts one mean gap after this one's last packet.
            s.trace->Rewind();
            s.traceOffset +=
                static_cast<double>(s.traceLastNs - s.traceBaseNs) * 1e-9 * s.traceScale + s.traceGapSeconds;
            s.traceBaseNs = s.traceFirstNs;
            if (!s.trace->Next(tp))
            {
                throw std::invalid_argument(s.traceFile + ": the trace became empty while replayed");
            }
        }
        if (s.seq == 0 && s.traceOffset == 0 && s.traceBaseNs == 0)
        {
            s.traceBaseNs = tp.ns; // the port's first packet is replayed at 0
        }
        const double since = tp.ns > s.traceBaseNs ? static_cast<double>(tp.ns - s.traceBaseNs) * 1e-9 : 0.0;
        s.scheduled = since * s.traceScale + s.traceOffset;
        s.nextStart = std::max(notBefore, s.scheduled);
        s.traceIp = TraceIpBytes(tp.ipBytes);
        s.traceIpv4 = tp.ipv4;
        s.traceSrc = tp.ipv4Src;
        s.traceDst = tp.ipv4Dst;
    }

    unsigned NextIpBytes(Stream& s)
    {
        if (s.trace)
        {
            return s.traceIp;
        }
        if (cfg.ipMix.empty())
        {
            return cfg.ipBytes;
        }
        if (!cfg.ipMixSequence)
        {
            return cfg.ipMix[mixSampler.Sample(*s.sizeRng)].first;
        }
        size_t best = 0;
        double total = 0;
        for (size_t i = 0; i < cfg.ipMix.size(); ++i)
        {
            s.mixCredit[i] += cfg.ipMix[i].second;
            total += cfg.ipMix[i].second;
            if (s.mixCredit[i] > s.mixCredit[best])
            {
                best = i;
            }
        }
        s.mixCredit[best] -= total;
        return cfg.ipMix[best].first;
    }

    void Prepare(unsigned p)
    {
        Stream& s = streams[p];
        s.tc.ipBytes = NextIpBytes(s);
        const bool byTraceAddress = s.trace && cfg.traceDestinations;
        if (byTraceAddress)
        {
            // The tester's signature packet with the trace's addresses: the
            // stuffing follows them, the lookup takes the destination.
            s.tc.srcIp = s.traceSrc;
            s.tc.dstIps[0] = s.traceDst;
        }
        BuildTesterPacket(s.tc, s.seq, s.nextStart, pkt,
                          s.flowLevel      ? s.flow
                          : s.destinations ? s.destinations->Pick(s.seq)
                                           : kCycleDestinations);
        PosFrameInfo in = enc.Frame(pkt.data(), pkt.size());
        Pending& pd = s.pending;
        pd.valid = true;
        pd.start = s.nextStart;
        pd.end = s.nextStart + in.WireBytes() * byteTime;
        pd.dst = (uint32_t(pkt[16]) << 24) | (uint32_t(pkt[17]) << 16) | (uint32_t(pkt[18]) << 8) |
                 pkt[19];
        pd.src = s.tc.srcIp;
        pd.notIpv4 = byTraceAddress && !s.traceIpv4;
        ForwardHeader(pkt);
        PosFrameInfo out = enc.Frame(pkt.data(), pkt.size());
        pd.egressWire = static_cast<uint16_t>(out.WireBytes());
        pd.ipBytes = static_cast<uint16_t>(s.tc.ipBytes);
        pd.cells = static_cast<uint16_t>(cfg.CellsPerPacket(s.tc.ipBytes));
        ingressEscapes += in.escapes;
        egressEscapes += out.escapes;
        ++frames;
        const double testerWait = pd.start - s.scheduled;
        testerWaitSum += testerWait;
        testerWaitMax = std::max(testerWaitMax, testerWait);
        testerWaited += testerWait > 0;
        // The tester starts the next frame at its instant, or when this one
        // ends if it is still on the line (stuffing at line rate, or a random
        // instant that came early). Constant arrivals: the nominal spacing;
        // a mix spaces each frame by its own nominal length / load.
        ++s.seq;
        if (s.trace)
        {
            ReadTrace(s, pd.end);
            return;
        }
        if (s.flowLevel)
        {
            s.scheduled = s.flowLevel->Next(s.flow);
        }
        else if (s.arrivals)
        {
            s.scheduled = s.arrivals->Next();
        }
        else if (cfg.ipMix.empty())
        {
            s.scheduled = s.seq * nominalInterval;
        }
        else
        {
            s.scheduled = pd.start + NominalFrameBytes(cfg.ppp, s.tc.ipBytes) * byteTime / cfg.offeredLoad;
        }
        s.nextStart = std::max(pd.end, s.scheduled);
    }

    void Drop(RouterDrop d, unsigned inPort, double t)
    {
        ++drops[static_cast<size_t>(d)];
        lossTimeline.Add(inPort, t, 1.0, static_cast<unsigned>(d));
        if (onDrop)
        {
            onDrop(d, inPort);
        }
    }

    void Arrive(unsigned p)
    {
        Pending pd = streams[p].pending;
        streams[p].pending.valid = false;
        ++stats[p].txPackets;
        txCells[p] += pd.cells;
        if (pd.notIpv4)
        {
            Drop(RouterDrop::NotIpv4, p, pd.end); // the FIB holds IPv4 routes only
            return;
        }
        uint32_t nh = 0;
        const uint64_t probesBefore = ops.table_probes;
        ++lookups;
        if (dp_lpm_lookup(lpm, pd.dst, &nh, &ops) != 0)
        {
            Drop(RouterDrop::NoRoute, p, pd.end);
            return;
        }
        const NextHopTarget& target = targets[nh];
        if (target.drop != RouterDrop::Count)
        {
            Drop(target.drop, p, pd.end);
            return;
        }
        nh = target.ports.size() == 1 ? target.ports[0]
                                       : target.ports[EcmpMember(pd.src, pd.dst, target.ports.size())];
        unsigned pfe = p / cfg.portsPerPfe;
        double probes = static_cast<double>(ops.table_probes - probesBefore);
        double start = std::max(pd.end, lookupFreeAt[pfe]);
        double wait = start - pd.end;
        if (wait > cfg.lookupQueueSeconds)
        {
            Drop(RouterDrop::LookupQueueFull, p, pd.end);
            return;
        }
        lookupFreeAt[pfe] = start + probes / cfg.lookupProbesPerSecond;
        unsigned outPfe = nh / cfg.portsPerPfe;
        if (fabric.InputOccupancy(pfe) + pd.cells > ingressCapCells)
        {
            Drop(RouterDrop::IngressBufferFull, p, pd.end);
            return;
        }
        uint64_t tag = desc.size();
        desc.push_back(Desc{pd.end, wait, slotIndex, pd.egressWire, pd.cells, static_cast<uint8_t>(p),
                            static_cast<uint8_t>(nh), pd.cells, pd.ipBytes});
        for (unsigned k = 0; k < pd.cells; ++k)
        {
            fabric.Enqueue(pfe, outPfe, tag);
        }
        ++inFlight;
    }

    void Complete(Desc& d, double t)
    {
        --inFlight;
        unsigned q = d.outPort;
        double start = std::max(t, egressBusyUntil[q]);
        double egressWait = start - t;
        if (egressWait > cfg.egressBufferSeconds)
        {
            Drop(RouterDrop::EgressBufferFull, d.inPort, t);
            return;
        }
        egressBusyUntil[q] = start + d.egressWire * byteTime;
        egressOccupancy[q].Enter(t, egressBusyUntil[q]);
        RouterPortStats& out = stats[q];
        ++out.egressPackets;
        out.egressIpBytes += d.ipBytes;
        out.egressWireBytes += d.egressWire;
        // A packet's own cells take `cells` slots; anything beyond is waiting.
        double fabricWait =
            static_cast<double>(slotIndex + 1 - d.enqSlot - d.cells) * slot;
        if (fabricWait < 0)
        {
            fabricWait = 0;
        }
        double lat = cfg.fixedLatencySeconds + d.wait + fabricWait + egressWait;
        if (!cfg.ipMix.empty())
        {
            // The fixed latency holds the zero-load serialization and cells
            // of ipBytes; this packet's own differ by its size.
            lat += (static_cast<double>(NominalFrameBytes(cfg.ppp, d.ipBytes)) -
                    NominalFrameBytes(cfg.ppp, cfg.ipBytes)) * byteTime +
                   (static_cast<double>(d.cells) - cells) * slot;
        }
        RouterPortStats& s = stats[d.inPort];
        ++s.rxPackets;
        s.rxIpBytes += d.ipBytes;
        s.latencySum += lat;
        s.latencyMin = std::min(s.latencyMin, lat);
        s.latencyMax = std::max(s.latencyMax, lat);
        s.latency.Add(lat);
        if (egressLatencyPerPacket)
        {
            out.egressLatency.Add(lat);
        }
        if (onDeliver)
        {
            onDeliver(d.inPort, lat);
        }
    }

    void Step()
    {
        const double slotEnd = (slotIndex + 1) * slot;
        for (unsigned p = 0; p < cfg.ports; ++p)
        {
            Stream& s = streams[p];
            for (;;)
            {
                if (!s.pending.valid)
                {
                    if (s.nextStart >= cfg.durationSeconds)
                    {
                        break;
                    }
                    Prepare(p);
                }
                if (s.pending.end > slotEnd)
                {
                    break;
                }
                Arrive(p);
            }
        }
        departed.clear();
        fabric.Step(departed);
        for (const FabricCell& c : departed)
        {
            Desc& d = desc[c.tag];
            if (--d.cellsLeft == 0)
            {
                Complete(d, slotEnd);
            }
        }
        ++slotIndex;
    }

    bool TesterDone() const
    {
        for (const Stream& s : streams)
        {
            if (s.pending.valid || s.nextStart < cfg.durationSeconds)
            {
                return false;
            }
        }
        return true;
    }
};

RouterEngine::RouterEngine(const RouterConfig& cfg)
    : m_impl(new Impl(cfg))
{
}

RouterEngine::~RouterEngine()
{
    delete m_impl;
}

void
RouterEngine::Advance(double t)
{
    while ((m_impl->slotIndex + 1) * m_impl->slot <= t)
    {
        m_impl->Step();
    }
}

void
RouterEngine::SetDropCallback(DropCallback cb)
{
    m_impl->onDrop = std::move(cb);
}

void
RouterEngine::SetDeliverCallback(DeliverCallback cb)
{
    m_impl->onDeliver = std::move(cb);
}

bool
RouterEngine::Drained() const
{
    return m_impl->TesterDone() && m_impl->inFlight == 0;
}

namespace
{
void
Summarise(RouterResult& r, const RouterConfig& cfg, double theoreticalPps)
{
    r.seconds = cfg.durationSeconds;
    r.txPackets = 0;
    r.rxPackets = 0;
    double sumOfMeans = 0;
    unsigned flows = 0;
    r.latencyMin = std::numeric_limits<double>::infinity();
    r.latencyMax = 0;
    for (const RouterPortStats& s : r.ports)
    {
        r.txPackets += s.txPackets;
        r.rxPackets += s.rxPackets;
        if (s.rxPackets > 0)
        {
            sumOfMeans += s.latencySum / s.rxPackets;
            ++flows;
            r.latencyMin = std::min(r.latencyMin, s.latencyMin);
            r.latencyMax = std::max(r.latencyMax, s.latencyMax);
        }
        r.latency += s.latency;
    }
    if (flows == 0)
    {
        r.latencyMin = 0;
    }
    // "Average latency is the mean of the individual flows' latencies"
    // (seed 001, results section).
    r.latencyAvg = flows ? sumOfMeans / flows : 0;
    r.theoreticalPps = theoreticalPps;
    r.txPps = r.txPackets / cfg.durationSeconds;
    r.rxPps = r.rxPackets / cfg.durationSeconds;
    r.txPctOfTheoretical = 100.0 * r.txPps / r.theoreticalPps;
    r.rxPctOfTheoretical = 100.0 * r.rxPps / r.theoreticalPps;
    uint64_t rxIpBytes = 0;
    for (const RouterPortStats& s : r.ports)
    {
        rxIpBytes += s.rxIpBytes;
    }
    r.meanIpBytes = rxIpBytes ? static_cast<double>(rxIpBytes) / r.rxPackets : cfg.ipBytes;
    r.throughputGbps = cfg.ipMix.empty() ? r.rxPps * cfg.ipBytes * 8.0 / 1e9 : rxIpBytes * 8.0 / cfg.durationSeconds / 1e9;
    r.bottleneck = r.fabricLoad >= r.lookupLoad ? "fabric" : "lookup";
    if (r.drops["egress_buffer_full"] > 0)
    {
        r.bottleneck = "egress_port";
    }
}
} // namespace

RouterResult
RouterEngine::Result() const
{
    const Impl& m = *m_impl;
    RouterResult r;
    r.ports = m.stats;
    r.lossTimeline = m.lossTimeline;
    for (size_t q = 0; q < r.ports.size(); ++q)
    {
        QueueOccupancy o = m.egressOccupancy[q]; // a copy: Finish counts the packets still on the line
        o.Finish();
        r.ports[q].egressQueue = o.Histogram();
        r.egressQueue += o.Histogram();
        if (!m.egressLatencyPerPacket)
        {
            r.ports[q].egressLatency = m.stats[m.cfg.PeerOf(static_cast<unsigned>(q))].latency;
        }
    }
    for (size_t i = 0; i < m.drops.size(); ++i)
    {
        r.drops[RouterDropName(static_cast<RouterDrop>(i))] = m.drops[i];
    }
    r.meanIngressEscapes = m.frames ? double(m.ingressEscapes) / m.frames : 0;
    r.meanEgressEscapes = m.frames ? double(m.egressEscapes) / m.frames : 0;
    r.testerWaitAvg = m.frames ? m.testerWaitSum / m.frames : 0;
    r.testerWaitMax = m.testerWaitMax;
    r.testerWaitedFraction = m.frames ? double(m.testerWaited) / m.frames : 0;
    for (const auto& s : m.streams)
    {
        if (s.flowLevel)
        {
            // Over [0, the port's last instant drawn] (one frame past the
            // tester's time at most): the accounting holds up to it.
            const double until = std::max(m.cfg.durationSeconds, s.flowLevel->LastInstant());
            r.flowsStarted += s.flowLevel->FlowsStarted();
            r.flowsActiveMean += s.flowLevel->ActiveFlowSeconds(until) / until;
            r.flowsActiveMaxPort = std::max(r.flowsActiveMaxPort, s.flowLevel->MaxActiveFlows());
        }
    }
    r.lookups = m.lookups;
    r.tableProbes = m.ops.table_probes;
    // Offered loads of the busiest PFE from what the tester sent.
    double pfeMaxPps = 0, pfeMaxCellRate = 0;
    for (unsigned f = 0; f < m.cfg.Pfes(); ++f)
    {
        double pps = 0, cellRate = 0;
        for (unsigned k = 0; k < m.cfg.portsPerPfe; ++k)
        {
            pps += m.stats[f * m.cfg.portsPerPfe + k].txPackets / m.cfg.durationSeconds;
            cellRate += m.txCells[f * m.cfg.portsPerPfe + k] / m.cfg.durationSeconds;
        }
        pfeMaxPps = std::max(pfeMaxPps, pps);
        pfeMaxCellRate = std::max(pfeMaxCellRate, cellRate);
    }
    // A mix offers each packet's own cells.
    r.fabricLoad = m.cfg.ipMix.empty() ? pfeMaxPps * m.cells * m.slot : pfeMaxCellRate * m.slot;
    double probesPerLookup = m.lookups ? double(m.ops.table_probes) / m.lookups : 1.0;
    r.lookupLoad = pfeMaxPps * probesPerLookup / m.cfg.lookupProbesPerSecond;
    r.egressCounted = true;
    r.egressLineBps = m.payloadBps;
    Summarise(r, m.cfg, m.theoreticalPps);
    return r;
}

RouterResult
RunRouterPacketLevel(const RouterConfig& cfg)
{
    RouterEngine e(cfg);
    double t = 0;
    // Run the tester's time, then drain what is in flight (bounded by the
    // buffers, so bounded in time).
    const double limit = cfg.RunLimitSeconds();
    while (!(t >= cfg.durationSeconds && e.Drained()) && t < limit)
    {
        t += cfg.batchSeconds;
        e.Advance(t);
    }
    return e.Result();
}

// ---------------------------------------------------------------------------
// Steady-state mode

namespace
{

struct Walk
{
    double meanWait = 0; // time-average over the run
    double maxWait = 0;
    double minWait = 0;
    double dropped = 0;  // packets
    double block = 0;    // steps per block (the last block may be shorter)
    // Per block, in order: its mean wait (trapezoid of its end points) and
    // the packets it dropped. The distributions of the run come from these.
    // Single precision: a 5-minute run holds 1.4 M blocks per PFE, and a
    // histogram bin is 2.3 % wide.
    std::vector<float> blockWait;
    std::vector<float> blockDropped;
};

// Lindley recursion W' = min(B, max(0, W + X)) over n steps whose increments
// have mean m and variance v, taken `block` steps at a time with Gaussian
// block sums. Work above the buffer B is dropped; `serviceMean` turns it
// into packets.
Walk
LindleyBlocks(double m, double v, double n, double block, double buffer, double serviceMean,
              RandomStream& rng)
{
    Walk w;
    if (n <= 0)
    {
        return w;
    }
    block = std::max(1.0, std::min(block, n));
    const uint64_t blocks = static_cast<uint64_t>(std::ceil(n / block));
    w.block = block;
    w.blockWait.reserve(blocks);
    w.blockDropped.reserve(blocks);
    double W = 0;
    double area = 0;
    w.minWait = std::numeric_limits<double>::infinity();
    for (uint64_t b = 0; b < blocks; ++b)
    {
        double steps = std::min(block, n - b * block);
        double inc = steps * m + std::sqrt(steps * v) * Normal(rng);
        double next = W + inc;
        if (next < 0)
        {
            next = 0;
        }
        double droppedHere = 0;
        if (next > buffer)
        {
            droppedHere = (next - buffer) / serviceMean;
            next = buffer;
        }
        w.dropped += droppedHere;
        w.blockWait.push_back(static_cast<float>(0.5 * (W + next)));
        w.blockDropped.push_back(static_cast<float>(droppedHere));
        area += 0.5 * (W + next) * steps;
        W = next;
        w.maxWait = std::max(w.maxWait, W);
        w.minWait = std::min(w.minWait, W);
    }
    w.meanWait = area / n;
    if (w.minWait > 0 && blocks > 0)
    {
        // A queue that starts empty has waited zero at the start.
        w.minWait = 0;
    }
    return w;
}

struct Moments
{
    double meanA = 0;  // tester interval (s)
    double varA = 0;
    double meanX = 0;  // egress service - next interval (s)
    double varX = 0;
    double escIn = 0;
    double escOut = 0;
};

Moments
SampleStream(const RouterConfig& cfg, const Fib& fib, unsigned p, double byteTime, double nominalInterval,
             uint64_t frames)
{
    PosEncoder enc(cfg.ppp);
    TesterStreamConfig tc = StreamOf(cfg, fib, p);
    std::vector<uint8_t> pkt;
    const uint64_t n = std::max<uint64_t>(frames, 3);
    std::vector<double> a(n), s(n);
    double t = 0;
    double escIn = 0, escOut = 0;
    for (uint64_t k = 0; k < n; ++k)
    {
        BuildTesterPacket(tc, k, t, pkt);
        PosFrameInfo in = enc.Frame(pkt.data(), pkt.size());
        ForwardHeader(pkt);
        PosFrameInfo out = enc.Frame(pkt.data(), pkt.size());
        double end = t + in.WireBytes() * byteTime;
        double next = std::max(end, (k + 1) * nominalInterval);
        a[k] = next - t;
        s[k] = out.WireBytes() * byteTime;
        escIn += in.escapes;
        escOut += out.escapes;
        t = next;
    }
    Moments mo;
    for (uint64_t k = 0; k < n; ++k)
    {
        mo.meanA += a[k];
    }
    mo.meanA /= n;
    for (uint64_t k = 0; k < n; ++k)
    {
        mo.varA += (a[k] - mo.meanA) * (a[k] - mo.meanA);
    }
    mo.varA /= (n - 1);
    // Drift of the egress queue: mean of S(k) - A(k), the same packet on the
    // two links (paired, so the octets both frames share cancel).
    double meanD = 0;
    for (uint64_t k = 0; k < n; ++k)
    {
        meanD += s[k] - a[k];
    }
    meanD /= n;
    double varD = 0;
    for (uint64_t k = 0; k < n; ++k)
    {
        varD += (s[k] - a[k] - meanD) * (s[k] - a[k] - meanD);
    }
    varD /= (n - 1);
    // Spread of the walk's steps: S(k) - A(k+1).
    double meanX = 0;
    for (uint64_t k = 0; k + 1 < n; ++k)
    {
        meanX += s[k] - a[k + 1];
    }
    meanX /= (n - 1);
    for (uint64_t k = 0; k + 1 < n; ++k)
    {
        double x = s[k] - a[k + 1];
        mo.varX += (x - meanX) * (x - meanX);
    }
    mo.varX /= (n - 2);
    // At full load the egress link carries the same packets as the tester
    // link, re-stuffed: the true drift is a difference of escape rates that
    // a sample cannot resolve below its standard error, and over 10^9
    // packets a sampling error of 10^-3 octets would become a millisecond of
    // queue. Drift not distinguishable from zero (3 standard errors) is
    // taken as zero: the walk is then null-recurrent.
    mo.meanX = std::fabs(meanD) < 3.0 * std::sqrt(varD / n) ? 0.0 : meanD;
    mo.escIn = escIn / n;
    mo.escOut = escOut / n;
    return mo;
}

// Latency histogram and drop timeline of port p from its PFE's fabric walk
// and its egress walk. The fabric walk steps once per period of the PFE (one
// packet of each of its ports), the egress walk once per packet of p, so
// fabric block b covers p's packets [b B_f, (b+1) B_f) with B_f its block in
// periods; each fabric block is paired with the egress block holding its
// first packet. A block's packets all get the block's mean wait: the walk's
// spread inside a block is not resolved, so the upper percentiles read from
// it are those of block means (lower than per-packet ones), and latencyMax
// (the sum of both walks' maxima) stays the bound on the maximum. Fabric
// drops of a block are shared evenly by the PFE's ports.
void
FillBlockDistributions(const RouterConfig& cfg, unsigned p, double meanA, const Walk& fabric,
                       const Walk& egress, LatencyHistogram& hist, LossTimeline& loss)
{
    const double n = cfg.durationSeconds / meanA; // p's packets
    for (size_t b = 0; b < fabric.blockWait.size(); ++b)
    {
        const double first = b * fabric.block;
        const double packets = std::min(fabric.block, n - first);
        size_t e = egress.block > 0 ? static_cast<size_t>(first / egress.block) : 0;
        double egressWait = 0;
        if (!egress.blockWait.empty())
        {
            e = std::min(e, egress.blockWait.size() - 1);
            egressWait = egress.blockWait[e];
        }
        hist.Add(cfg.fixedLatencySeconds + fabric.blockWait[b] + egressWait, packets);
        loss.Add(p, first * meanA, fabric.blockDropped[b] / cfg.portsPerPfe,
                 static_cast<unsigned>(RouterDrop::IngressBufferFull));
    }
    for (size_t e = 0; e < egress.blockDropped.size(); ++e)
    {
        loss.Add(p, e * egress.block * meanA, egress.blockDropped[e], static_cast<unsigned>(RouterDrop::EgressBufferFull));
    }
}

} // namespace

RouterResult
RunRouterSteadyState(const RouterConfig& cfg)
{
    cfg.Validate();
    if (!cfg.ipMix.empty() || cfg.Traced())
    {
        throw std::invalid_argument(cfg.ipMix.empty() ? "trace_file runs in packet mode only"
                                                      : "ip_mix runs in packet mode only");
    }
    if (cfg.flowSizes.kind != FlowSizeKind::kNone)
    {
        throw std::invalid_argument("flow_sizes (flow-level traffic) runs in packet mode only");
    }
    if (cfg.arrivals.kind != ArrivalKind::kConstant)
    {
        // The Lindley walks take the constant schedule's interval moments.
        throw std::invalid_argument("arrivals other than constant run in packet mode only");
    }
    const double payloadBps = SonetPayloadBps(cfg.sonetN);
    const double byteTime = 8.0 / payloadBps;
    const double thPort = TheoreticalPps(payloadBps, cfg.ppp, cfg.ipBytes);
    const double nominal = 1.0 / (cfg.offeredLoad * thPort);
    const unsigned cells = cfg.CellsPerPacket();
    const double slot = 8.0 * cfg.cellBytes / cfg.fabricBpsPerPfe;
    RandomStream rng(cfg.seed, 0xA5A5A5A5ull);

    // Probes per lookup from the real FIB and the real destinations.
    double probesPerLookup = 1.0;
    {
        // A 2 us packet-level run looks up real destinations in the real FIB
        // and prices the lookup engine in table probes per lookup.
        RouterConfig c = cfg;
        c.durationSeconds = std::min(cfg.durationSeconds, 2e-6);
        RouterResult pr = RunRouterPacketLevel(c);
        if (pr.lookups > 0)
        {
            probesPerLookup = double(pr.tableProbes) / pr.lookups;
        }
    }

    RouterResult r;
    r.ports.assign(cfg.ports, RouterPortStats{});
    r.lossTimeline = LossTimeline(cfg.ports, cfg.lossBins, cfg.durationSeconds, RouterDropNames());
    std::vector<Moments> mom(cfg.ports);
    const Fib fib = LoadFib(cfg); // the sampled packets' destinations
    double escIn = 0, escOut = 0;
    // Never sample more frames than the run sends: for short runs the
    // sample is then exactly the run's packets.
    const uint64_t runFrames = static_cast<uint64_t>(std::ceil(cfg.durationSeconds / nominal));
    const uint64_t frames = std::min<uint64_t>(cfg.sampleFrames, runFrames);
    for (unsigned p = 0; p < cfg.ports; ++p)
    {
        mom[p] = SampleStream(cfg, fib, p, byteTime, nominal, frames);
        escIn += mom[p].escIn;
        escOut += mom[p].escOut;
    }
    r.meanIngressEscapes = escIn / cfg.ports;
    r.meanEgressEscapes = escOut / cfg.ports;

    double dropsFabric = 0, dropsLookup = 0, dropsEgress = 0;
    std::vector<Walk> fabricWalk(cfg.Pfes());
    double maxFabricLoad = 0, maxLookupLoad = 0;
    for (unsigned f = 0; f < cfg.Pfes(); ++f)
    {
        // One "period" of the PFE: each of its ports delivers one packet.
        double meanA = 0, varA = 0;
        for (unsigned k = 0; k < cfg.portsPerPfe; ++k)
        {
            meanA += mom[f * cfg.portsPerPfe + k].meanA / cfg.portsPerPfe;
            varA += mom[f * cfg.portsPerPfe + k].varA / (double(cfg.portsPerPfe) * cfg.portsPerPfe);
        }
        double work = cfg.portsPerPfe * cells * slot;
        double lookupWork = cfg.portsPerPfe * probesPerLookup / cfg.lookupProbesPerSecond;
        maxFabricLoad = std::max(maxFabricLoad, work / meanA);
        maxLookupLoad = std::max(maxLookupLoad, lookupWork / meanA);
        double periods = cfg.durationSeconds / meanA;
        if (lookupWork > meanA)
        {
            // The lookup engine is the tighter ceiling: it sheds the excess.
            dropsLookup += periods * cfg.portsPerPfe * (1.0 - meanA / lookupWork);
        }
        double buffer = cfg.ingressBufferSeconds;
        fabricWalk[f] = LindleyBlocks(work - meanA, varA, periods,
                                      double(cfg.blockPackets) / cfg.portsPerPfe, buffer,
                                      work / cfg.portsPerPfe, rng);
        dropsFabric += fabricWalk[f].dropped;
    }
    r.fabricLoad = maxFabricLoad;
    r.lookupLoad = maxLookupLoad;

    for (unsigned p = 0; p < cfg.ports; ++p)
    {
        const Moments& mo = mom[p];
        double n = cfg.durationSeconds / mo.meanA;
        unsigned f = p / cfg.portsPerPfe;
        // Share of this port's packets lost upstream of its egress port.
        double upstream = (fabricWalk[f].dropped) / cfg.portsPerPfe;
        Walk eg = LindleyBlocks(mo.meanX, mo.varX, n, double(cfg.blockPackets),
                                cfg.egressBufferSeconds, mo.meanA, rng);
        dropsEgress += eg.dropped;
        RouterPortStats& s = r.ports[p];
        s.txPackets = static_cast<uint64_t>(std::llround(n));
        double lost = upstream + eg.dropped;
        if (maxLookupLoad > 1.0)
        {
            // The lookup engine sheds its excess evenly over the run.
            const double shed = n * (1.0 - 1.0 / maxLookupLoad);
            lost += shed;
            for (unsigned b = 0; b < cfg.lossBins; ++b)
            {
                r.lossTimeline.Add(p, (b + 0.5) * r.lossTimeline.BinSeconds(), shed / cfg.lossBins,
                                   static_cast<unsigned>(RouterDrop::LookupQueueFull));
            }
        }
        s.rxPackets = static_cast<uint64_t>(std::llround(std::max(0.0, n - lost)));
        double mean = cfg.fixedLatencySeconds + fabricWalk[f].meanWait + eg.meanWait;
        s.latencySum = mean * s.rxPackets;
        s.latencyMin = cfg.fixedLatencySeconds + fabricWalk[f].minWait + eg.minWait;
        s.latencyMax = cfg.fixedLatencySeconds + fabricWalk[f].maxWait + eg.maxWait;
        FillBlockDistributions(cfg, p, mo.meanA, fabricWalk[f], eg, s.latency, r.lossTimeline);
    }
    for (unsigned q = 0; q < cfg.ports; ++q)
    {
        r.ports[q].egressLatency = r.ports[cfg.PeerOf(q)].latency; // the pairs: q sends what its peer received
    }
    r.drops["no_route"] = 0;
    r.drops["lookup_queue_full"] = static_cast<uint64_t>(std::llround(dropsLookup));
    r.drops["ingress_buffer_full"] = static_cast<uint64_t>(std::llround(dropsFabric));
    r.drops["egress_buffer_full"] = static_cast<uint64_t>(std::llround(dropsEgress));
    // Steady state forwards every sampled packet on the model's rates alone:
    // it does not look packets up (docs/t640.md), so no route drops them.
    r.drops["blackhole"] = 0;
    r.drops["unreachable"] = 0;
    r.drops["prohibited"] = 0;
    Summarise(r, cfg, thPort * cfg.ports);
    return r;
}

} // namespace routertwin
