#include "lb-testers.h"

#include "dp_csum.h"
#include "ethernet-framing.h"
#include "pcap-trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <utility>

namespace routertwin
{

namespace
{

const char* const kWorkloadNames[] = {"http11", "http10", "dns", "synflood"};

constexpr uint8_t kSyn = DP_SESS_TCP_SYN;
constexpr uint8_t kAck = DP_SESS_TCP_ACK;
constexpr uint8_t kFin = DP_SESS_TCP_FIN;
constexpr uint8_t kPsh = 0x08;
constexpr uint32_t kMaxMss = 8960; // a 9000-byte jumbo MTU less the IPv4 and TCP headers
// room in front of a setup frame for the tunnel's outer header
constexpr size_t kSetupHeadroom = 64;

struct Later
{
    bool operator()(const LbTxPacket& a, const LbTxPacket& b) const
    {
        if (a.timePs != b.timePs)
        {
            return a.timePs > b.timePs;
        }
        if (a.stream != b.stream)
        {
            return a.stream > b.stream;
        }
        if (a.unit != b.unit)
        {
            return a.unit > b.unit;
        }
        return a.step > b.step;
    }
};

uint32_t
ReadU32(const uint8_t* b)
{
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
}

} // namespace

LbWorkload
ParseLbWorkload(const std::string& name)
{
    for (int i = 0; i < 4; ++i)
    {
        if (name == kWorkloadNames[i])
        {
            return static_cast<LbWorkload>(i);
        }
    }
    throw std::invalid_argument("unknown workload '" + name + "' (expected http11, http10, dns or synflood)");
}

const char*
LbWorkloadName(LbWorkload w)
{
    return kWorkloadNames[static_cast<int>(w)];
}

void
PayloadSizes::Validate(const std::string& what) const
{
    if (!table.empty() && heavy.kind != FlowSizeKind::kNone)
    {
        throw std::invalid_argument(what + ": a table and a " +
                                    (heavy.kind == FlowSizeKind::kPareto ? "pareto" : "lognormal") +
                                    " distribution exclude each other");
    }
    for (const auto& [bytes, weight] : table)
    {
        if (!(weight > 0) || !std::isfinite(weight))
        {
            throw std::invalid_argument(what + ": weight of " + std::to_string(bytes) + " bytes must be > 0");
        }
    }
    heavy.Validate();
}

namespace
{
DiscreteSampler
TableSampler(const PayloadSizes& sizes)
{
    std::vector<double> weights;
    for (const auto& part : sizes.table)
    {
        weights.push_back(part.second);
    }
    return weights.empty() ? DiscreteSampler() : DiscreteSampler(weights);
}
} // namespace

TraceConnections
ReadTraceConnections(const std::string& path, bool keepRequests)
{
    TraceConnections out;
    struct Open
    {
        size_t index;
        uint8_t fins;     // 1: the client's FIN seen, 2: the server's
        bool serverSpoke; // the server sent payload in the current exchange
        uint64_t lastServerNs; // its last payload's instant
    };
    // (client address, server address), (client port, server port)
    using Key = std::pair<uint64_t, uint32_t>;
    std::map<Key, Open> open;
    PcapTrace trace(path, 1);
    trace.KeepPayload(keepRequests);
    // the client's payload of this packet onto exchange e's request
    const auto keep = [&](TraceExchange& e) {
        if (!keepRequests)
            return;
        if (e.request.empty())
            e.requestPacket = trace.PacketIndex() - 1;
        const auto& octets = trace.Payload();
        e.request.append(octets.begin(),
                         octets.begin() + std::min(octets.size(), kKeptRequestBytes - e.request.size()));
    };
    TracePacket p;
    while (trace.Next(p))
    {
        constexpr uint8_t kFinFlag = 0x01, kSynFlag = 0x02, kRstFlag = 0x04, kAckFlag = 0x10;
        if (!p.tcp)
        {
            ++out.otherPackets;
            continue;
        }
        if (!p.ipv4)
        {
            // IPv6 (the reader's only other IP version): counted, not replayed
            ++out.ipv6Packets;
            out.ipv6Connections += (p.tcpFlags & (kSynFlag | kAckFlag)) == kSynFlag;
            continue;
        }
        const Key fromClient{(uint64_t(p.ipv4Src) << 32) | p.ipv4Dst, (uint32_t(p.srcPort) << 16) | p.dstPort};
        const Key fromServer{(uint64_t(p.ipv4Dst) << 32) | p.ipv4Src, (uint32_t(p.dstPort) << 16) | p.srcPort};
        if ((p.tcpFlags & (kSynFlag | kAckFlag)) == kSynFlag)
        {
            open[fromClient] = Open{out.connections.size(), 0, false, 0};
            TraceConnection c{p.ns, p.tcpPayload, 0, {}};
            if (p.tcpPayload)
            {
                c.exchanges.push_back({p.tcpPayload, 0, 0}); // data on the SYN (TCP Fast Open)
                keep(c.exchanges.back());
            }
            out.connections.push_back(std::move(c));
            continue;
        }
        auto it = open.find(fromClient);
        const bool client = it != open.end();
        if (!client)
        {
            it = open.find(fromServer);
        }
        if (it == open.end())
        {
            ++out.segmentsUnmatched;
            continue;
        }
        TraceConnection& c = out.connections[it->second.index];
        (client ? c.requestBytes : c.responseBytes) += p.tcpPayload;
        if (p.tcpPayload && client)
        {
            // the client speaks again after the server answered: the next request
            if (c.exchanges.empty() || it->second.serverSpoke)
            {
                const bool next = it->second.serverSpoke;
                c.exchanges.push_back({0, 0, next && p.ns > it->second.lastServerNs ? p.ns - it->second.lastServerNs : 0});
                it->second.serverSpoke = false;
            }
            c.exchanges.back().requestBytes += p.tcpPayload;
            keep(c.exchanges.back());
        }
        else if (p.tcpPayload)
        {
            if (c.exchanges.empty())
            {
                c.exchanges.push_back({0, 0, 0}); // the server speaks first
            }
            c.exchanges.back().responseBytes += p.tcpPayload;
            it->second.serverSpoke = true;
            it->second.lastServerNs = p.ns;
        }
        if (p.tcpFlags & kFinFlag)
        {
            it->second.fins |= client ? 1 : 2;
        }
        if ((p.tcpFlags & kRstFlag) || it->second.fins == 3)
        {
            open.erase(it);
        }
    }
    for (TraceConnection& c : out.connections)
    {
        if (c.exchanges.empty())
        {
            c.exchanges.push_back({0, 0, 0}); // no payload either way: one empty exchange
        }
    }
    // a capture's timestamps may step back a little: units start in SYN time order
    std::stable_sort(out.connections.begin(), out.connections.end(),
                     [](const TraceConnection& a, const TraceConnection& b) { return a.synNs < b.synNs; });
    return out;
}

LbTester::LbTester(const LbTesterConfig& config, uint32_t services)
    : m_cfg(config),
      m_services(services),
      m_rng(config.seed, 7),
      m_sizeRng(config.seed, 0x5153u),
      m_requestTable(TableSampler(config.request)),
      m_responseTable(TableSampler(config.response))
{
    if (!(config.rate > 0) || !std::isfinite(config.rate))
    {
        throw std::invalid_argument("rate: must be > 0");
    }
    config.request.Validate("request sizes");
    config.response.Validate("response sizes");
    if (config.mss < 1 || config.mss > kMaxMss)
    {
        // the frame buffers of both levels hold a 9000-byte jumbo MTU's frame
        throw std::invalid_argument("mss: must be in 1..8960 (a jumbo MTU of 9000 less 40)");
    }
    if (config.window.enabled)
    {
        const auto& w = config.window;
        if (w.initialSegments < 1)
        {
            throw std::invalid_argument("window.initial_segments: must be >= 1");
        }
        if (w.receiveWindowBytes < 2 * config.mss)
        {
            // the client acknowledges every second segment: a window of one
            // would wait for a delayed-ACK timer the model does not have
            throw std::invalid_argument("window.receive_window_bytes: must hold two segments (>= 2 x mss = " +
                                        std::to_string(2 * config.mss) + ")");
        }
        if (!(w.rttSeconds > 0) || !std::isfinite(w.rttSeconds) || !(w.senderBitRate > 0) ||
            !std::isfinite(w.senderBitRate))
        {
            throw std::invalid_argument("window: rtt_s and sender_bit_rate must be > 0");
        }
    }
    // The request and response steps: their payloads are the unit's, segmented.
    std::vector<Step> http10 = {{0, kSyn, 0},        {1, kSyn | kAck, 0},           {0, kAck, 0},
                                {0, kAck | kPsh, 0, kRequest}, {1, kAck | kPsh, 0, kResponse}, {1, kFin | kAck, 0},
                                {0, kFin | kAck, 0}, {1, kAck, 0}};
    if (config.synCookies)
    {
        // the balancer answers the SYN itself; the server's SYN-ACK follows the ACK
        http10 = {{0, kSyn, 0},          {0, kAck, 0},          {1, kSyn | kAck, 0}, {0, kAck | kPsh, 0, kRequest},
                  {1, kAck | kPsh, 0, kResponse}, {1, kFin | kAck, 0}, {0, kFin | kAck, 0}, {1, kAck, 0}};
    }
    Stream main;
    main.kind = config.workload;
    main.rate = config.rate;
    switch (config.workload)
    {
    case LbWorkload::kHttp11:
        main.script = {{0, kAck | kPsh, 0, kRequest}, {1, kAck | kPsh, 0, kResponse}};
        break;
    case LbWorkload::kHttp10:
        main.script = http10;
        break;
    case LbWorkload::kDns:
        main.script = {{0, 0, 0}};
        break;
    case LbWorkload::kSynFlood:
        main.script = {{0, kSyn, 0}};
        break;
    }
    if (!config.traceFile.empty())
    {
        if (config.workload != LbWorkload::kHttp10)
        {
            throw std::invalid_argument("trace_file: connections from a trace are http10 units, not " +
                                        std::string(LbWorkloadName(config.workload)));
        }
        TraceConnections read = ReadTraceConnections(config.traceFile);
        m_trace = std::move(read.connections);
        m_traceIpv6Connections = read.ipv6Connections;
        m_traceIpv6Packets = read.ipv6Packets;
        const uint64_t span = m_trace.empty() ? 0 : m_trace.back().synNs - m_trace.front().synNs;
        if (m_trace.size() < 2 || span == 0)
        {
            throw std::invalid_argument(
                config.traceFile + ": a trace needs at least two IPv4 TCP connections (SYNs) at different instants" +
                (read.ipv6Connections ? " (its " + std::to_string(read.ipv6Connections) +
                                            " IPv6 connections are not replayed: the balancer's session table "
                                            "keys IPv4 5-tuples)"
                                      : std::string()));
        }
        // captured: n - 1 gaps over the span; rescaled: n - 1 gaps of 1 / rate
        const double nativeRate = double(m_trace.size() - 1) / (double(span) * 1e-9);
        m_tracePsPerNs = 1e3 * (config.traceRescale ? nativeRate / config.rate : 1.0);
        m_tracePassPs = (double(span) + 1e9 / nativeRate) * m_tracePsPerNs; // the span and one mean gap
    }
    m_streams.push_back(main);
    if (config.workload == LbWorkload::kSynFlood && config.legitRate > 0)
    {
        Stream legit;
        legit.kind = LbWorkload::kHttp10;
        legit.rate = config.legitRate;
        legit.script = http10;
        m_streams.push_back(legit);
    }
    // The report's units (a fixed request and response of one segment
    // each, no trace) have the same script: their packets are merged by step
    // cursors; units of drawn or traced sizes, or of several segments, go
    // through the heap, one pending packet a unit.
    const bool oneShape = m_trace.empty() && config.request.Fixed() && config.response.Fixed() &&
                          Segments(config.requestBytes) == 1 && Segments(config.responseBytes) == 1;
    for (Stream& st : m_streams)
    {
        // windows on: http units go through the heap, whose steps know the round trip
        // path MTU discovery (tunnel): a unit's script may grow by a
        // retransmitted segment, so its units go through the heap too
        st.uniform = (oneShape && !config.window.enabled && !PathMtuDiscovery()) ||
                     (st.kind != LbWorkload::kHttp11 && st.kind != LbWorkload::kHttp10);
        if (st.uniform)
        {
            st.stepCursor.assign(st.script.size(), 0);
        }
    }
    if (config.popularity != FlowPopularity::kRoundRobin && config.workload != LbWorkload::kHttp11 &&
        config.workload != LbWorkload::kSynFlood)
    {
        // over the services (http11: over its connections, once Setup has opened them)
        m_picker = std::make_unique<FlowPicker>(services, config.popularity, config.zipfExponent, config.seed,
                                                0xF1090000u);
    }
    if (config.bursts.kind == ArrivalKind::kOnOff || config.bursts.kind == ArrivalKind::kMmpp2)
    {
        // Each stream its own process at its own rate, on its own random
        // stream of the seed (the address draws of m_rng do not move).
        for (size_t si = 0; si < m_streams.size(); ++si)
        {
            ArrivalConfig a = config.bursts;
            a.meanPps = m_streams[si].rate;
            a.peakPps = config.burstPeakRatio * m_streams[si].rate;
            m_streams[si].starts = std::make_shared<ArrivalProcess>(a, config.seed, 0xB0u + si, 1e12);
            m_streams[si].nextStartPs = static_cast<uint64_t>(std::llround(m_streams[si].starts->Next()));
        }
    }
}

void
LbTester::Setup(L4Balancer& lb)
{
    if (m_cfg.workload != LbWorkload::kHttp11)
    {
        return;
    }
    uint8_t buf[256 + kSetupHeadroom];
    for (uint32_t u = 0; u < m_cfg.users; ++u)
    {
        for (uint32_t c = 0; c < m_cfg.connsPerUser; ++c)
        {
            Conn k{};
            k.clientIp = 0xC6120000u + (u << 8) + 1; // user u: host 198.18.u.1
            k.clientPort = static_cast<uint16_t>(10000 + c);
            k.service = static_cast<uint16_t>(u % m_services);
            const uint8_t hs[3][2] = {{0, kSyn}, {1, kSyn | kAck}, {0, kAck}};
            k.server = UINT32_MAX;
            for (const auto& s : hs)
            {
                if (s[0] == 1 && Bypass())
                {
                    continue; // the server's SYN-ACK goes to the client directly
                }
                dp_build_spec_t b{};
                b.ttl = 64;
                b.ip_proto = DP_IPPROTO_TCP;
                if (s[0] == 0)
                {
                    b.src_ip = k.clientIp;
                    b.dst_ip = L4Balancer::Vip(k.service);
                    b.src_port = k.clientPort;
                    b.dst_port = L4Balancer::kHttpPort;
                }
                else
                {
                    b.src_ip = k.serverIp;
                    b.dst_ip = L4Balancer::kSnatIp;
                    b.src_port = L4Balancer::kHttpPort;
                    b.dst_port = k.snatPort;
                }
                b.tcp_flags = s[1];
                b.l4_checksum = 1;
                size_t len = 0;
                dp_build(&b, buf + kSetupHeadroom, sizeof buf - kSetupHeadroom, &len, nullptr);
                uint8_t* out = buf + kSetupHeadroom;
                size_t outLen = len;
                const LbVerdict v = lb.Process(buf + kSetupHeadroom, len, sizeof buf - kSetupHeadroom,
                                               kSetupHeadroom, 0, &out, &outLen);
                if (v.dpDrop != DP_OK)
                {
                    throw std::invalid_argument("users: the balancer refused a persistent connection (" +
                                                std::string(dp_drop_reason_name(
                                                    static_cast<dp_drop_reason_t>(v.dpDrop))) +
                                                ")");
                }
                if (s[0] == 0 && s[1] == kSyn)
                {
                    k.serverIp = v.out.dst_ip;
                    k.snatPort = v.out.src_port;
                }
                if (s[0] == 0)
                {
                    // not counted in FramesToServers (the run's packets are), but checked
                    const uint64_t counted = m_framesToServers;
                    CheckDelivery(k.server, k.clientIp, k.clientPort, k.service, out, outLen);
                    m_framesToServers = counted;
                }
            }
            m_conns.push_back(k);
        }
    }
    if (m_cfg.popularity != FlowPopularity::kRoundRobin)
    {
        m_picker = std::make_unique<FlowPicker>(static_cast<uint32_t>(m_conns.size()), m_cfg.popularity,
                                                m_cfg.zipfExponent, m_cfg.seed, 0xF1090000u);
    }
    const Stream& st = m_streams[0];
    if (!st.uniform)
    {
        return; // frames of drawn sizes are built each (BuildFromSpec)
    }
    size_t longest = 0;
    Unit fixed;
    fixed.requestBytes = m_cfg.requestBytes;
    fixed.responseBytes = m_cfg.responseBytes;
    for (uint32_t k = 0; k < st.script.size(); ++k)
    {
        longest = std::max(longest, dp_build_len(DP_IPPROTO_TCP, StepOf(st, fixed, k).payload));
    }
    m_templateStride = std::max<size_t>(longest, 60); // dp_build pads to the Ethernet minimum
    m_templateLen.assign(m_conns.size() * st.script.size(), 0);
    m_templateBytes.assign(m_templateLen.size() * m_templateStride, 0);
}

void
LbTester::Emit(uint64_t untilPs, std::vector<LbTxPacket>& out)
{
    const uint64_t gapPs = static_cast<uint64_t>(std::llround(m_cfg.stepGapSeconds * 1e12));
    const uint64_t rttPs = static_cast<uint64_t>(std::llround(m_cfg.window.rttSeconds * 1e12));
    for (size_t si = 0; si < m_streams.size(); ++si)
    {
        Stream& st = m_streams[si];
        while (st.nextStartPs < untilPs && st.nextStartPs < m_endPs)
        {
            Unit u;
            u.startPs = st.nextStartPs;
            const uint64_t n = st.nextUnit++;
            if (st.kind == LbWorkload::kHttp11)
            {
                u.conn = si == 0 && m_picker ? m_picker->Pick(n) : static_cast<uint32_t>(n % m_conns.size());
                const Conn& c = m_conns[u.conn];
                u.clientIp = c.clientIp;
                u.clientPort = c.clientPort;
                u.service = c.service;
                u.serverIp = c.serverIp;
                u.snatPort = c.snatPort;
            }
            else if (st.kind == LbWorkload::kSynFlood)
            {
                u.clientIp = 0xC6120000u + m_rng.UniformInt(1u << 17); // spoofed, 198.18.0.0/15
                u.clientPort = static_cast<uint16_t>(1024 + m_rng.UniformInt(64512));
                u.service = static_cast<uint16_t>(m_rng.UniformInt(m_services));
            }
            else
            {
                // a fresh client address:port per unit; stream 1 in 198.19.0.0/16.
                // Consecutive units take consecutive addresses, so that at
                // packet level they go round the tester's client ports
                // (LbPortMap: ((ip >> 8) + (ip & 255)) mod ports), each port
                // with its share of the connections, as Avalanche spreads
                // its load over all its ports (seed 000: all 16 Spirent 10G
                // ports; how it assigns clients to ports the seed does not
                // say: an assumption). A client address comes back after
                // 131072 (65536) units, with the next source port.
                const uint32_t space = si == 0 ? 131072u : 65536u;
                const uint32_t base = si == 0 ? 0xC6120000u : 0xC6130000u;
                u.clientIp = base + static_cast<uint32_t>(n % space);
                u.clientPort = static_cast<uint16_t>(1024 + (n / space) % 64512u);
                u.service = static_cast<uint16_t>(si == 0 && m_picker ? m_picker->Pick(n) : n % m_services);
            }
            if (!m_trace.empty() && si == 0)
            {
                u.trace = static_cast<uint32_t>(n % m_trace.size());
                u.requestBytes = m_trace[u.trace].requestBytes;
                u.responseBytes = m_trace[u.trace].responseBytes;
            }
            else if (st.kind == LbWorkload::kHttp11 || st.kind == LbWorkload::kHttp10)
            {
                u.requestBytes = DrawBytes(m_cfg.request, m_cfg.requestBytes, m_requestTable);
                u.responseBytes = DrawBytes(m_cfg.response, m_cfg.responseBytes, m_responseTable);
            }
            if (PathMtuDiscovery() && (st.kind == LbWorkload::kHttp11 || st.kind == LbWorkload::kHttp10))
            {
                // the client's path MTU to the VIP, if an earlier connection learnt it
                const auto learnt = m_pathMss.find(PathKey(u.clientIp, L4Balancer::Vip(u.service)));
                if (learnt != m_pathMss.end())
                {
                    u.mssUp = learnt->second;
                }
            }
            u.steps = StepsOf(st, u);
            st.units.push_back(u);
            if (!st.uniform)
            {
                // Its first packet; each packet queues the next when it is
                // sent, so a long unit holds one heap entry, not all its
                // segments (windows: a transfer's packets at once; an http11
                // transaction begins with its request)
                const LbTxPacket firstPacket{u.startPs, n, 0, static_cast<uint8_t>(si)};
                if (m_cfg.window.enabled)
                {
                    QueueStep(firstPacket, u.startPs, 0, gapPs);
                }
                else
                {
                    m_heap.push_back(firstPacket);
                    std::push_heap(m_heap.begin(), m_heap.end(), Later());
                }
            }
            if (!m_trace.empty() && si == 0)
            {
                st.nextStartPs = TraceStartPs(n + 1);
                continue;
            }
            if (st.starts)
            {
                st.nextStartPs = static_cast<uint64_t>(std::llround(st.starts->Next()));
                continue;
            }
            const double mean = 1e12 / st.rate;
            const double dt = m_cfg.poisson ? -std::log(1.0 - m_rng.Uniform01()) * mean : mean;
            // exact constant spacing: unit n starts at round(n * mean)
            st.nextStartPs = m_cfg.poisson ? st.nextStartPs + static_cast<uint64_t>(std::llround(dt))
                                           : static_cast<uint64_t>(std::llround(double(n + 1) * mean));
        }
    }
    // Every pending packet due before untilPs in (time, stream, unit, step)
    // order: the earliest of the heads of the per-step sequences (streams of
    // one script) and the heap's front (units of their own sizes),
    // repeatedly. Step k's packets are its units' starts + k gaps, in unit
    // order, and every unit with a packet before untilPs has started before
    // it (above).
    const Later later;
    for (;;)
    {
        LbTxPacket best{};
        bool any = false;
        for (size_t si = 0; si < m_streams.size(); ++si)
        {
            const Stream& st = m_streams[si];
            for (size_t k = 0; k < st.stepCursor.size(); ++k)
            {
                const uint64_t n = st.stepCursor[k];
                if (n >= st.units.size())
                {
                    continue;
                }
                const LbTxPacket head{st.units[n].startPs + k * gapPs, n, static_cast<uint32_t>(k),
                                      static_cast<uint8_t>(si)};
                if (head.timePs < untilPs && (!any || later(best, head)))
                {
                    best = head;
                    any = true;
                }
            }
        }
        if (!m_heap.empty() && m_heap.front().timePs < untilPs && (!any || later(best, m_heap.front())))
        {
            std::pop_heap(m_heap.begin(), m_heap.end(), later);
            const LbTxPacket p = m_heap.back();
            m_heap.pop_back();
            out.push_back(p);
            const Stream& st = m_streams[p.stream];
            const Unit& u = UnitOf(p);
            if (p.step + 1 >= u.steps + SpareSteps(u))
            {
                continue;
            }
            if (!m_cfg.window.enabled)
            {
                // each packet a step gap after the one before (the script)
                m_heap.push_back({p.timePs + gapPs + ThinkPs(st, u, p.step + 1), p.unit, p.step + 1, p.stream});
                std::push_heap(m_heap.begin(), m_heap.end(), later);
                continue;
            }
            uint32_t first = UINT32_MAX;
            uint64_t bytes = 0;
            const Step now = StepOf(st, u, p.step, &first, &bytes);
            if (first != UINT32_MAX && Segments(bytes) > 1)
            {
                continue; // a windowed transfer's packets and its successor are queued already
            }
            const Step next = StepOf(st, u, p.step + 1);
            // a client's packet answering the server's crosses one round trip later
            QueueStep(p, p.timePs + (now.fromServer && !next.fromServer ? rttPs : gapPs) + ThinkPs(st, u, p.step + 1),
                      p.step + 1, gapPs);
            continue;
        }
        if (!any)
        {
            return;
        }
        out.push_back(best);
        ++m_streams[best.stream].stepCursor[best.step];
    }
}

uint64_t
LbTester::TraceStartPs(uint64_t unit) const
{
    const uint64_t pass = unit / m_trace.size();
    const TraceConnection& c = m_trace[unit % m_trace.size()];
    return static_cast<uint64_t>(std::llround(double(pass) * m_tracePassPs +
                                              double(c.synNs - m_trace.front().synNs) * m_tracePsPerNs));
}

uint64_t
LbTester::DrawBytes(const PayloadSizes& sizes, uint32_t fixedBytes, const DiscreteSampler& table)
{
    if (sizes.heavy.kind != FlowSizeKind::kNone)
    {
        return sizes.heavy.DrawPackets(m_sizeRng); // ceil(X) of X bytes
    }
    if (!sizes.table.empty())
    {
        return sizes.table[table.Sample(m_sizeRng)].first;
    }
    return fixedBytes;
}

uint32_t
LbTester::Segments(uint64_t bytes) const
{
    return Segments(bytes, m_cfg.mss);
}

uint32_t
LbTester::Segments(uint64_t bytes, uint32_t mss)
{
    return bytes <= mss ? 1u : static_cast<uint32_t>((bytes + mss - 1) / mss);
}

uint32_t
LbTester::ResponsePackets(uint64_t bytes) const
{
    const uint32_t segs = Segments(bytes);
    return segs + (segs - 1) / 2; // the client's ACK of every second segment but the last
}

uint32_t
LbTester::RequestPackets(uint64_t bytes, uint32_t mss) const
{
    // windows: the server's ACK of every second segment but the last, as for a response
    // (the client's mss stays the configured one: path MTU discovery is off with windows)
    return m_cfg.window.enabled ? ResponsePackets(bytes) : Segments(bytes, mss);
}

const TraceExchange*
LbTester::Exchanges(const Unit& u, size_t& n, TraceExchange& one) const
{
    if (u.trace != UINT32_MAX)
    {
        const std::vector<TraceExchange>& ex = m_trace[u.trace].exchanges;
        n = ex.size();
        return ex.data();
    }
    one = TraceExchange{u.requestBytes, u.responseBytes};
    n = 1;
    return &one;
}

uint32_t
LbTester::StepsOf(const Stream& st, const Unit& u) const
{
    size_t exchanges = 0;
    TraceExchange one;
    const TraceExchange* ex = Exchanges(u, exchanges, one);
    uint32_t n = 0;
    for (const Step& s : st.script)
    {
        if (s.role == kRequest)
        {
            // the script's request and response: the unit's exchanges in turn
            for (size_t e = 0; e < exchanges; ++e)
            {
                n += RequestPackets(ex[e].requestBytes, UpMss(u)) + ResponsePackets(ex[e].responseBytes);
            }
        }
        else if (s.role == kFixed)
        {
            ++n;
        }
    }
    return n;
}

LbTester::Step
LbTester::StepOf(const Stream& st, const Unit& u, uint32_t k, uint32_t* transferFirst, uint64_t* transferBytes) const
{
    if (u.retxStep == UINT32_MAX || k < u.retxStep)
    {
        return StepAt(st, u, k, UpMss(u), transferFirst, transferBytes);
    }
    if (k < u.retxStep + u.retxCount)
    {
        // the segments the balancer answered with ICMP, as they were sent
        return StepAt(st, u, k, u.mssBefore, transferFirst, transferBytes);
    }
    // then the script from the first of them on again, cut at the learnt mss
    const Step s = StepAt(st, u, k - u.retxCount, UpMss(u), transferFirst, transferBytes);
    if (transferFirst && *transferFirst != UINT32_MAX && *transferFirst >= u.retxStep)
    {
        *transferFirst += u.retxCount;
    }
    return s;
}

LbTester::Step
LbTester::StepAt(const Stream& st, const Unit& u, uint32_t k, uint32_t upMss, uint32_t* transferFirst,
                 uint64_t* transferBytes) const
{
    // Segment i of n of B bytes carries mss, the last the remainder.
    auto segment = [](Step s, uint64_t bytes, uint32_t i, uint32_t n, uint32_t mss) {
        s.payload = static_cast<uint16_t>(i + 1 < n ? mss : bytes - uint64_t(n - 1) * mss);
        return s;
    };
    if (transferFirst)
    {
        *transferFirst = UINT32_MAX;
    }
    auto transfer = [&](uint32_t firstStep, uint64_t bytes) {
        if (transferFirst)
        {
            *transferFirst = firstStep;
        }
        if (transferBytes)
        {
            *transferBytes = bytes;
        }
    };
    const uint32_t k0 = k;
    size_t exchanges = 0;
    TraceExchange one;
    const TraceExchange* ex = Exchanges(u, exchanges, one);
    for (size_t si = 0; si < st.script.size(); ++si)
    {
        const Step& s = st.script[si];
        if (s.role == kFixed)
        {
            if (k == 0)
            {
                return s;
            }
            --k;
            continue;
        }
        if (s.role == kResponse)
        {
            continue; // sent with its request, below
        }
        // every script's request step is followed by its response step
        const Step& rsp = st.script[si + 1];
        for (size_t e = 0; e < exchanges; ++e)
        {
            const uint64_t reqBytes = ex[e].requestBytes;
            const uint32_t reqPackets = RequestPackets(reqBytes, upMss);
            if (k < reqPackets)
            {
                transfer(k0 - k, reqBytes);
                if (!m_cfg.window.enabled)
                {
                    return segment(s, reqBytes, k, reqPackets, upMss);
                }
                // in threes: segment, segment, the server's ACK of both
                if (k % 3 == 2)
                {
                    return Step{1, kAck, 0, kRequest};
                }
                return segment(s, reqBytes, 2 * (k / 3) + k % 3, Segments(reqBytes), m_cfg.mss);
            }
            k -= reqPackets;
            const uint64_t bytes = ex[e].responseBytes;
            const uint32_t packets = ResponsePackets(bytes);
            if (k < packets)
            {
                transfer(k0 - k, bytes);
                // in threes: segment, segment, the client's ACK of both
                if (k % 3 == 2)
                {
                    return Step{0, kAck, 0, kResponse};
                }
                return segment(rsp, bytes, 2 * (k / 3) + k % 3, Segments(bytes), m_cfg.mss);
            }
            k -= packets;
        }
    }
    return st.script.back(); // not reached: k < the unit's steps
}

uint64_t
LbTester::ThinkPs(const Stream& st, const Unit& u, uint32_t k) const
{
    if (u.trace == UINT32_MAX)
    {
        return 0;
    }
    if (u.retxStep != UINT32_MAX && k >= u.retxStep + u.retxCount)
    {
        k -= u.retxCount; // after the dropped segments, the script from the first of them on
    }
    const std::vector<TraceExchange>& ex = m_trace[u.trace].exchanges;
    if (ex.size() < 2)
    {
        return 0;
    }
    // the script's steps before its request, then the exchanges in turn
    uint32_t at = 0;
    for (const Step& s : st.script)
    {
        if (s.role == kRequest)
        {
            break;
        }
        at += s.role == kFixed;
    }
    for (size_t e = 0; e < ex.size() && at <= k; ++e)
    {
        if (at == k)
        {
            return static_cast<uint64_t>(std::llround(double(ex[e].thinkNs) * m_tracePsPerNs));
        }
        at += RequestPackets(ex[e].requestBytes, UpMss(u)) + ResponsePackets(ex[e].responseBytes);
    }
    return 0;
}

void
LbTester::QueueStep(const LbTxPacket& of, uint64_t t, uint32_t step, uint64_t gapPs)
{
    uint32_t first = UINT32_MAX;
    uint64_t bytes = 0;
    const Step s = StepOf(m_streams[of.stream], UnitOf(of), step, &first, &bytes);
    if (first == step && Segments(bytes) > 1)
    {
        ScheduleTransfer(of, t, first, bytes, !s.fromServer, gapPs);
        return;
    }
    m_heap.push_back({t, of.unit, step, of.stream});
    std::push_heap(m_heap.begin(), m_heap.end(), Later());
}

void
LbTester::ScheduleTransfer(const LbTxPacket& at, uint64_t t0, uint32_t first, uint64_t bytes, bool upload,
                           uint64_t gapPs)
{
    Unit& u = UnitOf(at);
    const LbTesterConfig::Window& w = m_cfg.window;
    const uint32_t segs = Segments(bytes);
    const uint32_t rwnd = w.receiveWindowBytes / m_cfg.mss; // >= 2 (checked)
    uint32_t& cwnd = upload ? u.cwndUp : u.cwnd; // each direction its sender's window
    if (cwnd == 0)
    {
        cwnd = w.initialSegments;
    }
    // a segment's time on the sender's port: its frame, FCS, preamble and gap
    const double psPerBit = 1e12 / w.senderBitRate;
    auto wirePs = [&](uint64_t payload) {
        const double wire = double(ethernet::FrameBytesFromL2(DP_ETH_HDR_LEN + 40 + payload)) + 20;
        return static_cast<uint64_t>(std::llround(8 * wire * psPerBit));
    };
    const uint64_t rttPs = static_cast<uint64_t>(std::llround(w.rttSeconds * 1e12));
    const Later later;
    auto queue = [&](uint64_t t, uint32_t step) {
        m_heap.push_back({t, at.unit, step, at.stream});
        std::push_heap(m_heap.begin(), m_heap.end(), later);
    };
    // The sender: segment i leaves when its port is free and the window
    // (acknowledged + min(cwnd, rwnd)) admits it; each ACK it has taken by
    // then acknowledges 2 segments and opens the window by 2 (slow start).
    std::deque<uint64_t> acks; // arrival at the sender of the ACKs not yet taken, in order
    uint64_t acked = 0, portFree = t0, t = t0;
    for (uint32_t i = 0; i < segs; ++i)
    {
        t = portFree;
        while (!acks.empty() && (acks.front() <= t || i >= acked + std::min(cwnd, rwnd)))
        {
            t = std::max(t, acks.front());
            acks.pop_front();
            acked += 2;
            cwnd = std::min(cwnd + 2, std::max(rwnd, w.initialSegments)); // no loss: never past what can be used
        }
        const uint64_t payload = i + 1 < segs ? m_cfg.mss : bytes - uint64_t(segs - 1) * m_cfg.mss;
        portFree = t + wirePs(payload);
        queue(t, first + 3 * (i / 2) + i % 2);
        if (i % 2 == 1 && i + 1 < segs)
        {
            // The receiver's ACK of segments i - 1 and i; the sender takes
            // it one round trip after i's last bit. The client's (a
            // response) crosses the balancer then; the server's (a request)
            // as soon as it is sent, and the segments it lets the client
            // send cross a round trip later.
            acks.push_back(portFree + rttPs);
            queue(upload ? portFree : portFree + rttPs, first + 3 * (i / 2) + 2);
        }
    }
    // the ACKs still on their way open the window for the connection's next transfer that way
    for (size_t j = 0; j < acks.size(); ++j)
    {
        cwnd = std::min(cwnd + 2, std::max(rwnd, w.initialSegments));
    }
    const uint32_t after = first + ResponsePackets(bytes); // a request's packets count as a response's
    if (after < u.steps)
    {
        // the server's next packet (its response, a FIN) a step gap after
        // the last segment; the client's (its next request) a round trip
        // after that segment's last bit
        const Step next = StepOf(m_streams[at.stream], u, after);
        QueueStep(at, next.fromServer ? t + gapPs : portFree + rttPs + ThinkPs(m_streams[at.stream], u, after), after,
                  gapPs);
    }
}

size_t
LbTester::Build(const LbTxPacket& pkt, uint8_t* buf, size_t cap)
{
    const Stream& st = m_streams[pkt.stream];
    if (st.kind != LbWorkload::kHttp11 || !st.uniform)
    {
        return BuildFromSpec(pkt, buf, cap);
    }
    // An http11 frame differs from its connection's frame of the same step
    // only in the IP identification (the unit number): every other field
    // comes from the connection, fixed at Setup.
    const size_t idx = static_cast<size_t>(UnitOf(pkt).conn) * st.script.size() + pkt.step;
    uint8_t* const t = &m_templateBytes[idx * m_templateStride];
    size_t len = m_templateLen[idx];
    if (len == 0)
    {
        len = BuildFromSpec(pkt, t, m_templateStride);
        m_templateLen[idx] = static_cast<uint16_t>(len);
    }
    if (len == 0 || len > cap)
    {
        return 0; // as dp_build: the frame does not fit
    }
    std::memcpy(buf, t, len);
    constexpr size_t kIpId = DP_ETH_HDR_LEN + 4, kIpCsum = DP_ETH_HDR_LEN + 10;
    const uint16_t id = static_cast<uint16_t>(pkt.unit);
    const uint16_t old = static_cast<uint16_t>((t[kIpId] << 8) | t[kIpId + 1]);
    if (id != old)
    {
        // RFC 1624 eqn. 3 gives the recomputed checksum bit for bit: both
        // are the complement of the header's one's-complement sum in
        // 1..0xFFFF (a nonzero IPv4 header never sums to zero).
        const uint16_t csum = dp_csum_update16(static_cast<uint16_t>((t[kIpCsum] << 8) | t[kIpCsum + 1]), old, id,
                                               nullptr);
        buf[kIpId] = static_cast<uint8_t>(id >> 8);
        buf[kIpId + 1] = static_cast<uint8_t>(id);
        buf[kIpCsum] = static_cast<uint8_t>(csum >> 8);
        buf[kIpCsum + 1] = static_cast<uint8_t>(csum);
    }
    return len;
}

uint32_t
LbTester::SourceIp(const LbTxPacket& pkt) const
{
    const Stream& st = m_streams[pkt.stream];
    const Unit& u = UnitOf(pkt);
    if (st.kind == LbWorkload::kDns)
    {
        return u.clientIp;
    }
    return StepOf(st, u, pkt.step).fromServer ? u.serverIp : u.clientIp;
}

size_t
LbTester::BuildFromSpec(const LbTxPacket& pkt, uint8_t* buf, size_t cap)
{
    const Stream& st = m_streams[pkt.stream];
    const Unit& u = UnitOf(pkt);
    const Step s = StepOf(st, u, pkt.step);
    dp_build_spec_t b{};
    b.ttl = 64;
    b.ip_id = static_cast<uint16_t>(pkt.unit);
    size_t len = 0;
    if (st.kind == LbWorkload::kDns)
    {
        uint8_t q[300];
        q[0] = static_cast<uint8_t>(pkt.unit >> 8);
        q[1] = static_cast<uint8_t>(pkt.unit);
        q[2] = 0x01; // RD
        q[3] = 0;
        q[4] = 0;
        q[5] = 1; // QDCOUNT
        std::memset(q + 6, 0, 6);
        size_t wl = 0;
        dp_dns_name_to_wire(L4Balancer::DnsName(u.service).c_str(), q + 12, 256, &wl);
        const size_t o = 12 + wl;
        q[o] = 0;
        q[o + 1] = 1; // A
        q[o + 2] = 0;
        q[o + 3] = 1; // IN
        b.ip_proto = DP_IPPROTO_UDP;
        b.src_ip = u.clientIp;
        b.dst_ip = L4Balancer::Vip(u.service);
        b.src_port = u.clientPort;
        b.dst_port = L4Balancer::kDnsPort;
        b.payload = q;
        b.payload_len = static_cast<uint16_t>(o + 4);
        b.l4_checksum = 1;
        dp_build(&b, buf, cap, &len, nullptr);
        return len;
    }
    b.ip_proto = DP_IPPROTO_TCP;
    b.tcp_flags = s.flags;
    b.payload_len = s.payload;
    b.l4_checksum = 1;
    if (s.fromServer)
    {
        b.src_ip = u.serverIp;
        b.dst_ip = L4Balancer::kSnatIp;
        b.src_port = L4Balancer::kHttpPort;
        b.dst_port = u.snatPort;
    }
    else
    {
        b.src_ip = u.clientIp;
        b.dst_ip = L4Balancer::Vip(u.service);
        b.src_port = u.clientPort;
        b.dst_port = L4Balancer::kHttpPort;
        b.tcp_seq = 1000;
        // the ACK of a cookie handshake acknowledges cookie + 1
        b.tcp_ack = (s.flags & kAck) ? u.cookie + 1 : 0;
    }
    dp_build(&b, buf, cap, &len, nullptr);
    return len;
}

void
LbTester::OnVerdict(const LbTxPacket& pkt, const LbVerdict& v, const uint8_t* frame, size_t len)
{
    Unit& u = UnitOf(pkt);
    if (v.dpDrop != DP_OK)
    {
        u.failed = true;
        return;
    }
    const Stream& st = m_streams[pkt.stream];
    const Step s = StepOf(st, u, pkt.step);
    if (v.answered && v.out.ip_proto == DP_IPPROTO_ICMP && !s.fromServer)
    {
        OnFragmentationNeeded(pkt, s, frame + v.out.l4_offset, len - std::min<size_t>(len, v.out.l4_offset));
        return;
    }
    if (!s.fromServer && !v.answered && st.kind != LbWorkload::kDns && st.kind != LbWorkload::kSynFlood)
    {
        uint32_t& server = st.kind == LbWorkload::kHttp11 ? m_conns[u.conn].server : u.server;
        CheckDelivery(server, u.clientIp, u.clientPort, u.service, frame, len);
    }
    if (!s.fromServer && (s.flags & kSyn) && v.answered && len >= size_t(v.out.l4_offset) + 8)
    {
        u.cookie = ReadU32(frame + v.out.l4_offset + 4); // the SYN-ACK's sequence number
        u.cookieKnown = true;
    }
    if (v.opened)
    {
        // where the balancer sent the connection: the server answers there
        u.serverIp = v.out.dst_ip;
        u.snatPort = v.out.src_port;
    }
}

void
LbTester::OnFragmentationNeeded(const LbTxPacket& pkt, const Step& s, const uint8_t* icmp, size_t len)
{
    // RFC 1191 / RFC 8201 as Linux does it (tcp_v4_err -> tcp_v4_mtu_reduced):
    // the segment was dropped; the socket's mss becomes the next-hop MTU
    // less 40 (IPv4 and TCP headers: the tester's segments carry no
    // options), the segment goes again at once cut to the new mss, and the
    // route's path MTU to the VIP is cached (a next-hop exception, 10
    // minutes: longer than any run) for the client's later connections.
    // The retransmission is the unit's next step: one step gap, the LAN
    // round trip of this model, after the dropped segment.
    Unit& u = UnitOf(pkt);
    const Stream& st = m_streams[pkt.stream];
    const uint32_t nextHop = len >= 8 && icmp[0] == 3 && icmp[1] == 4 ? (uint32_t(icmp[6]) << 8) | icmp[7] : 0;
    const uint32_t mss = nextHop > 40 ? nextHop - 40 : 0;
    if (!PathMtuDiscovery() || s.role != kRequest || mss == 0)
    {
        u.failed = true;
        return;
    }
    if (u.retxStep != UINT32_MAX)
    {
        // A later segment of the request sent before the first ICMP came
        // back (the next step, when the answer takes longer than a step
        // gap): dropped too, and its ICMP tells the client nothing new
        // (RFC 1191 section 3: an estimate is never raised); the
        // retransmission already covers its bytes.
        if (pkt.step != u.retxStep + u.retxCount || mss < UpMss(u) || u.retxCount >= kMaxSegmentsInFlight)
        {
            u.failed = true;
            return;
        }
        ++u.retxCount;
        u.steps = StepsOf(st, u) + u.retxCount;
        return;
    }
    // With windows off the request's first segment is its largest: the
    // first one over the MTU. A host never raises its estimate on such a
    // message (RFC 1191 section 3).
    if (mss >= UpMss(u))
    {
        u.failed = true;
        return;
    }
    u.mssBefore = UpMss(u);
    u.mssUp = mss;
    u.retxStep = pkt.step;
    u.retxCount = 1;
    u.steps = StepsOf(st, u) + 1; // and the dropped segment, answered
    m_pathMss[PathKey(u.clientIp, L4Balancer::Vip(u.service))] = mss;
    ++m_pathMtuLearnt;
}

bool
LbTester::Spare(const LbTxPacket& pkt) const
{
    return pkt.step >= UnitOf(pkt).steps;
}

bool
LbTester::CanSend(const LbTxPacket& pkt) const
{
    const Stream& st = m_streams[pkt.stream];
    const Unit& u = st.units[pkt.unit];
    if (StepOf(st, u, pkt.step).fromServer)
    {
        return u.serverIp != 0; // servers are 10.1.s.(k+1)
    }
    // the cookie script: the SYN (step 0) is answered by the balancer
    return !(m_cfg.synCookies && st.kind == LbWorkload::kHttp10 && pkt.step > 0) || u.cookieKnown;
}

bool
LbTester::Bypasses(const LbTxPacket& pkt) const
{
    return Bypass() && StepOf(m_streams[pkt.stream], UnitOf(pkt), pkt.step).fromServer;
}

uint32_t
LbTester::ServerOfForwarded(uint32_t clientIp, uint16_t clientPort, uint32_t service, const uint8_t* frame,
                            size_t len) const
{
    dp_parsed_t o;
    if (dp_parse(frame, len, nullptr, &o, nullptr) != DP_OK)
    {
        return UINT32_MAX;
    }
    const uint32_t serverNet = L4Balancer::ServerIp(service, 0) & 0xFFFFFF00u;
    switch (m_cfg.forwarding)
    {
    case LbForwarding::kFullNat:
        // SNAT:port -> server:80 (the SNAT port is the balancer's choice)
        if (o.ip_proto != DP_IPPROTO_TCP || o.src_ip != L4Balancer::kSnatIp ||
            (o.dst_ip & 0xFFFFFF00u) != serverNet || o.dst_port != L4Balancer::kHttpPort)
        {
            return UINT32_MAX;
        }
        return (o.dst_ip & 0xFFu) - 1;
    case LbForwarding::kDr: {
        // the client's packet unchanged, to the server's MAC
        static const uint8_t kServerMacPrefix[5] = {0x02, 0, 0, 1, 0};
        if (std::memcmp(frame, kServerMacPrefix, 5) != 0 || o.ip_proto != DP_IPPROTO_TCP ||
            o.src_ip != clientIp || o.src_port != clientPort || o.dst_ip != L4Balancer::Vip(service) ||
            o.dst_port != L4Balancer::kHttpPort)
        {
            return UINT32_MAX;
        }
        return frame[5];
    }
    case LbForwarding::kTunnel: {
        // outer IPv4 (protocol 4, RFC 2003) to the server around the client's packet
        if (o.ip_proto != 4 || (o.dst_ip & 0xFFFFFF00u) != serverNet || len < size_t(o.l4_offset) + 24)
        {
            return UINT32_MAX;
        }
        const uint8_t* in = frame + o.l4_offset;
        const size_t ihl = size_t(in[0] & 0x0F) * 4;
        if ((in[0] >> 4) != 4 || ihl < 20 || len < size_t(o.l4_offset) + ihl + 4 || in[9] != DP_IPPROTO_TCP ||
            ReadU32(in + 12) != clientIp || ReadU32(in + 16) != L4Balancer::Vip(service) ||
            ((in[ihl] << 8) | in[ihl + 1]) != clientPort ||
            ((in[ihl + 2] << 8) | in[ihl + 3]) != L4Balancer::kHttpPort)
        {
            return UINT32_MAX;
        }
        return (o.dst_ip & 0xFFu) - 1;
    }
    }
    return UINT32_MAX;
}

void
LbTester::CheckDelivery(uint32_t& server, uint32_t clientIp, uint16_t clientPort, uint32_t service,
                        const uint8_t* frame, size_t len)
{
    ++m_framesToServers;
    const uint32_t got = ServerOfForwarded(clientIp, clientPort, service, frame, len);
    if (got == UINT32_MAX || (server != UINT32_MAX && got != server))
    {
        ++m_deliveryErrors;
        return;
    }
    server = got;
}

void
LbTester::OnLost(const LbTxPacket& pkt)
{
    UnitOf(pkt).failed = true;
}

void
LbTester::OnDeparted(const LbTxPacket& pkt, uint64_t departPs)
{
    Unit& u = UnitOf(pkt);
    ++u.delivered;
    u.lastDepartPs = std::max(u.lastDepartPs, departPs);
}

uint64_t
LbTester::Started(uint8_t stream, uint64_t fromPs, uint64_t toPs) const
{
    uint64_t n = 0;
    for (const Unit& u : m_streams[stream].units)
    {
        n += u.startPs >= fromPs && u.startPs < toPs;
    }
    return n;
}

uint64_t
LbTester::Completed(uint8_t stream, uint64_t fromPs, uint64_t toPs) const
{
    uint64_t n = 0;
    for (const Unit& u : m_streams[stream].units)
    {
        n += u.lastDepartPs >= fromPs && u.lastDepartPs < toPs && !u.failed && u.delivered == u.steps;
    }
    return n;
}

LatencyHistogram
LbTester::UnitLatency(uint8_t stream, uint64_t fromPs, uint64_t toPs) const
{
    LatencyHistogram h;
    for (const Unit& u : m_streams[stream].units)
    {
        if (u.lastDepartPs >= fromPs && u.lastDepartPs < toPs && !u.failed && u.delivered == u.steps)
        {
            h.Add(static_cast<double>(u.lastDepartPs - u.startPs) * 1e-12);
        }
    }
    return h;
}

uint64_t
LbTester::Failed(uint8_t stream, uint64_t fromPs, uint64_t toPs) const
{
    uint64_t n = 0;
    for (const Unit& u : m_streams[stream].units)
    {
        n += u.startPs >= fromPs && u.startPs < toPs && u.failed;
    }
    return n;
}

double
LbTester::PacketsPerUnit(uint8_t stream) const
{
    const Stream& st = m_streams[stream];
    if (st.units.empty() || (m_cfg.request.Fixed() && m_cfg.response.Fixed() && m_trace.empty()))
    {
        Unit u;
        u.requestBytes = m_cfg.requestBytes;
        u.responseBytes = m_cfg.responseBytes;
        uint32_t n = 0;
        for (uint32_t k = 0, steps = StepsOf(st, u); k < steps; ++k)
        {
            n += !(Bypass() && StepOf(st, u, k).fromServer);
        }
        return n;
    }
    uint64_t n = 0;
    for (const Unit& u : st.units)
    {
        for (uint32_t k = 0; k < u.steps; ++k)
        {
            n += !(Bypass() && StepOf(st, u, k).fromServer);
        }
    }
    return static_cast<double>(n) / static_cast<double>(st.units.size());
}

} // namespace routertwin
