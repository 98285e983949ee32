#include "tcp-path-scenario.h"

#include "conntrack-nat.h"
#include "cycle-cost.h"
#include "ixchariot-throughput.h"
#include "ns3-run-state.h"
#include "path-link.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-static-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-linux-reno.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>

namespace routertwin
{

namespace
{

[[noreturn]] void
Bad(const std::string& key, const std::string& what)
{
    throw std::invalid_argument("key '" + key + "': " + what);
}

void
Finite(const std::string& key, double v, double lo, double hi)
{
    if (!std::isfinite(v) || v < lo || v > hi)
    {
        Bad(key, "must be a number in " + std::to_string(lo) + " .. " + std::to_string(hi));
    }
}

// Link i's subnet: 198.18.i.0/24 (RFC 2544 benchmarking range); the left
// end is .1, the right end .2. The EIP is 198.19.255.100.
ns3::Ipv4Address
LinkAddress(size_t link, int end)
{
    return ns3::Ipv4Address(0xC6120000u | (static_cast<uint32_t>(link) << 8) | static_cast<uint32_t>(end + 1));
}

const ns3::Ipv4Address kEip(0xC613FF64u);
constexpr uint16_t kPort = 10115; // IxChariot endpoints' port (seed 004, 环境准备)

} // namespace

void
TcpPathConfig::Validate() const
{
    if (nodes.size() < 2 || nodes.size() > 64)
    {
        Bad("nodes", "a path has 2 to 64 nodes");
    }
    if (links.size() != nodes.size() - 1)
    {
        Bad("links", "a path of n nodes has n - 1 links");
    }
    int dnats = 0;
    for (size_t i = 0; i < nodes.size(); ++i)
    {
        const auto& n = nodes[i];
        const std::string k = "nodes[" + std::to_string(i) + "]";
        if (n.name.empty())
        {
            Bad(k + ".name", "must not be empty");
        }
        Finite(k + ".cpu_per_packet_s", n.cpuPerPacketS, 0, 1);
        Finite(k + ".cpu_per_byte_s", n.cpuPerByteS, 0, 1e-3);
        Finite(k + ".latency_s", n.latencyS, 0, 1);
        if (n.cpuQueuePackets < 1)
        {
            Bad(k + ".cpu_queue_packets", "must be at least 1");
        }
        if (n.dnat)
        {
            ++dnats;
            if (i == 0 || i + 1 == nodes.size())
            {
                Bad(k + ".nat", "the sender and the receiver cannot be the NAT");
            }
            CycleCost probe;
            for (const auto& [counter, ns] : n.natPricesNs)
            {
                Finite(k + ".nat_prices_ns." + counter, ns, 0, 1e9);
                try
                {
                    probe.SetCounterPrice(counter, ns);
                }
                catch (const std::invalid_argument& e)
                {
                    Bad(k + ".nat_prices_ns", e.what());
                }
            }
        }
    }
    for (size_t i = 0; i < nodes.size(); ++i)
    {
        for (size_t j = i + 1; j < nodes.size(); ++j)
        {
            if (nodes[i].name == nodes[j].name && nodes[i].dnat != nodes[j].dnat)
            {
                Bad("nodes[" + std::to_string(j) + "].nat", "box '" + nodes[j].name + "' appears with and without NAT");
            }
        }
    }
    if (dnats > 0)
    {
        std::string name;
        for (const auto& n : nodes)
        {
            if (n.dnat && !name.empty() && n.name != name)
            {
                Bad("nodes", "at most one box does DNAT");
            }
            if (n.dnat)
            {
                name = n.name;
            }
        }
    }
    for (size_t i = 0; i < links.size(); ++i)
    {
        const auto& l = links[i];
        const std::string k = "links[" + std::to_string(i) + "]";
        Finite(k + ".rate_bps", l.rateBps, 0, 1.6e12);
        Finite(k + ".per_frame_s", l.perFrameS, 0, 1);
        Finite(k + ".delay_s", l.delayS, 0, 1);
        Finite(k + ".loss_rate", l.lossRate, 0, 0.999999);
        if (l.queuePackets < 1)
        {
            Bad(k + ".queue_packets", "must be at least 1");
        }
        if (l.rateBps == 0 && l.perFrameS == 0)
        {
            Bad(k + ".rate_bps", "a link needs a rate or a per-frame time (else it serves in zero time)");
        }
        for (size_t j = 0; j < i; ++j)
        {
            const bool samePair = (nodes[j].name == nodes[i].name && nodes[j + 1].name == nodes[i + 1].name) ||
                                  (nodes[j].name == nodes[i + 1].name && nodes[j + 1].name == nodes[i].name);
            if (samePair && links[j].wire == l.wire && links[j].type != l.type)
            {
                Bad(k + ".type", "the wire " + nodes[i].name + "-" + nodes[i + 1].name + " is already of type '" +
                                     links[j].type + "'");
            }
            if (!l.wire.empty() && links[j].wire == l.wire && !samePair)
            {
                Bad(k + ".wire", "wire '" + l.wire + "' already joins " + nodes[j].name + " and " + nodes[j + 1].name);
            }
        }
    }
    if (tcp.congestion != "cubic" && tcp.congestion != "newreno")
    {
        Bad("tcp.congestion", "must be 'cubic' or 'newreno'");
    }
    if (tcp.mtu < 576 || tcp.mtu > 9000)
    {
        Bad("tcp.mtu", "must be in 576 .. 9000");
    }
    if (tcp.sndBufBytes < 4096 || tcp.rcvBufBytes < 4096)
    {
        Bad("tcp.snd_buf_bytes", "socket buffers hold at least 4096 bytes");
    }
    if (tcp.initialCwndSegments < 1 || tcp.ackEverySegments < 1)
    {
        Bad("tcp.initial_cwnd_segments", "must be at least 1");
    }
    Finite("tcp.delayed_ack_s", tcp.delayedAckS, 1e-6, 1);
    Finite("tcp.min_rto_s", tcp.minRtoS, 1e-6, 60);
    if (fileBytes < 1 || fileBytes > 1000000000000ull)
    {
        Bad("file_bytes", "must be in 1 .. 10^12");
    }
    if (records < 1 || records > 100)
    {
        Bad("records", "must be in 1 .. 100");
    }
    Finite("duration_s", durationS, 0, 3600);
    if (lossBins < 1 || lossBins > 100000)
    {
        Bad("loss_bins", "must be in 1 .. 100000");
    }
}

namespace
{

/// The run's state, kept together so the callbacks reach it.
struct PathRun
{
    std::vector<ns3::Ptr<PathServer>> servers;
    std::vector<std::string> serverNames;
    std::map<std::string, ns3::Ptr<PathServer>> cpuOf;   // box name -> its CPU
    std::map<std::tuple<std::string, std::string, std::string>, ns3::Ptr<PathServer>> wireOf; // (wire, from, to)
    std::unique_ptr<ConntrackNat> nat;
    CycleCost natPrices;
    dp_ops_t natOps{};
    double natNsTotal = 0;
    uint64_t natPackets = 0;
    ns3::Time measureStart;
    double rttSum = 0;
    double rttMin = std::numeric_limits<double>::infinity();
    uint64_t rttSamples = 0;
    LatencyHistogram rttHistogram;
    uint64_t recoveries = 0;
    uint64_t timeouts = 0;
    std::vector<double> recoveryTimes; ///< seconds, for the retransmission timeline
    std::vector<double> timeoutTimes;
    uint32_t recordsDone = 0;
    uint32_t records = 1;

    void StartMeasuring()
    {
        measureStart = ns3::Simulator::Now();
        for (auto& s : servers)
        {
            s->ResetBusy();
        }
        rttSum = 0;
        rttSamples = 0;
        rttMin = std::numeric_limits<double>::infinity();
        rttHistogram = LatencyHistogram{};
    }
};

ns3::Ptr<PathServer>
MakeServer(PathRun& run, const std::string& name, double perPacketS, double perByteS, uint32_t overhead,
           uint32_t queue, double delayS, double loss, uint64_t seed)
{
    auto s = ns3::CreateObject<PathServer>();
    s->SetAttribute("PerPacket", ns3::TimeValue(ns3::Seconds(perPacketS)));
    s->SetAttribute("PerByte", ns3::DoubleValue(perByteS));
    s->SetAttribute("OverheadBytes", ns3::UintegerValue(overhead));
    s->SetAttribute("QueueLimit", ns3::UintegerValue(queue));
    s->SetAttribute("Delay", ns3::TimeValue(ns3::Seconds(delayS)));
    s->SetAttribute("LossRate", ns3::DoubleValue(loss));
    s->SetLossStream(seed, run.servers.size());
    run.servers.push_back(s);
    run.serverNames.push_back(name);
    return s;
}

void
ConfigureTcp(const HostTcpSpec& t)
{
    // Global defaults, on top of ns-3's own (BeginNs3Run). Checksums stay
    // off (ns-3's default): the path's NAT boxes rewrite addresses without
    // fixing TCP checksums, so a web switch run before this one in the same
    // process (which turns them on) made every NATed segment fail its checksum.
    ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(false));
    ns3::Config::SetDefault("ns3::TcpSocket::SegmentSize", ns3::UintegerValue(t.SegmentBytes()));
    ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize", ns3::UintegerValue(t.sndBufBytes));
    ns3::Config::SetDefault("ns3::TcpSocket::RcvBufSize", ns3::UintegerValue(t.rcvBufBytes));
    ns3::Config::SetDefault("ns3::TcpSocket::InitialCwnd", ns3::UintegerValue(t.initialCwndSegments));
    ns3::Config::SetDefault("ns3::TcpSocket::DelAckCount", ns3::UintegerValue(t.ackEverySegments));
    ns3::Config::SetDefault("ns3::TcpSocket::DelAckTimeout", ns3::TimeValue(ns3::Seconds(t.delayedAckS)));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Sack", ns3::BooleanValue(t.sack));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Timestamp", ns3::BooleanValue(t.timestamps));
    ns3::Config::SetDefault("ns3::TcpSocketBase::WindowScaling", ns3::BooleanValue(t.windowScaling));
    ns3::Config::SetDefault("ns3::TcpSocketBase::MinRto", ns3::TimeValue(ns3::Seconds(t.minRtoS)));
    // Linux 2.6.32 recovers with SACK/NewReno and rate halving; ns-3's
    // classic recovery (cwnd = ssthresh, RFC 6675) is the closest. PRR
    // (ns-3's default) arrived in Linux 3.2.
    ns3::Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                            ns3::TypeIdValue(ns3::TcpClassicRecovery::GetTypeId()));
    ns3::Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                            ns3::TypeIdValue(t.congestion == "cubic" ? ns3::TcpCubic::GetTypeId()
                                                                      : ns3::TcpLinuxReno::GetTypeId()));
}

} // namespace

TcpPathResult
RunTcpPath(const TcpPathConfig& c)
{
    c.Validate();
    // ns-3's random variables draw nothing on this path (its devices need no
    // ARP; link loss has its own RandomStream from c.seed): seed 1 for them
    BeginNs3Run(1);
    ConfigureTcp(c.tcp);
    PathRun run;
    run.records = c.durationS > 0 ? 1 : c.records;
    const size_t n = c.nodes.size();

    ns3::NodeContainer nodes;
    nodes.Create(static_cast<uint32_t>(n));
    ns3::InternetStackHelper stack;
    stack.Install(nodes);
    stack.AssignStreams(nodes, kNs3StreamBase);

    // One CPU per box name (when the box costs anything), one server per
    // direction of each wire (a pair of box names), in path order.
    for (const auto& spec : c.nodes)
    {
        const bool costs = spec.cpuPerPacketS > 0 || spec.cpuPerByteS > 0 || spec.latencyS > 0 || spec.dnat;
        if (costs && run.cpuOf.count(spec.name) == 0)
        {
            run.cpuOf[spec.name] =
                MakeServer(run, "cpu " + spec.name + " (" + spec.type + ")", spec.cpuPerPacketS, spec.cpuPerByteS, 0,
                           spec.cpuQueuePackets, spec.latencyS, 0, c.seed);
        }
    }
    std::vector<ns3::Ptr<PathNetDevice>> left(n - 1), right(n - 1);
    for (size_t i = 0; i + 1 < n; ++i)
    {
        const auto& l = c.links[i];
        const std::string& a = c.nodes[i].name;
        const std::string& b = c.nodes[i + 1].name;
        const double perByte = l.rateBps > 0 ? 8.0 / l.rateBps : 0.0;
        const std::string wire = l.wire.empty() ? std::min(a, b) + "|" + std::max(a, b) : l.wire;
        for (const auto& dir : {std::make_tuple(wire, a, b), std::make_tuple(wire, b, a)})
        {
            if (run.wireOf.count(dir) == 0)
            {
                const std::string label = l.wire.empty() ? "" : " " + l.wire;
                run.wireOf[dir] = MakeServer(run, "wire" + label + " " + std::get<1>(dir) + "->" + std::get<2>(dir) +
                                                      " (" + l.type + ")",
                                             l.perFrameS, perByte, l.frameOverheadBytes, l.queuePackets, l.delayS,
                                             l.lossRate, c.seed);
            }
        }
        auto channel = ns3::CreateObject<PathChannel>();
        left[i] = ns3::CreateObject<PathNetDevice>();
        right[i] = ns3::CreateObject<PathNetDevice>();
        channel->Attach(left[i], right[i]);
        auto cpuOf = [&run](const std::string& box) {
            auto it = run.cpuOf.find(box);
            return it == run.cpuOf.end() ? ns3::Ptr<PathServer>() : it->second;
        };
        left[i]->Configure(channel, right[i], run.wireOf[{wire, a, b}], cpuOf(a));
        right[i]->Configure(channel, left[i], run.wireOf[{wire, b, a}], cpuOf(b));
        for (auto& [dev, node] : {std::make_pair(left[i], nodes.Get(i)), std::make_pair(right[i], nodes.Get(i + 1))})
        {
            dev->SetMtu(static_cast<uint16_t>(c.tcp.mtu));
            node->AddDevice(dev);
        }
    }

    // Addresses and static routes: towards the receiver by default, back to
    // the sender by a host route.
    ns3::Ipv4StaticRoutingHelper routing;
    std::vector<uint32_t> leftIf(n - 1), rightIf(n - 1);
    for (size_t i = 0; i + 1 < n; ++i)
    {
        for (int end = 0; end < 2; ++end)
        {
            auto node = nodes.Get(static_cast<uint32_t>(i + end));
            auto ipv4 = node->GetObject<ns3::Ipv4>();
            auto dev = end == 0 ? left[i] : right[i];
            const uint32_t ifIndex = ipv4->AddInterface(dev);
            ipv4->AddAddress(ifIndex, ns3::Ipv4InterfaceAddress(LinkAddress(i, end), ns3::Ipv4Mask("/24")));
            ipv4->SetUp(ifIndex);
            (end == 0 ? leftIf : rightIf)[i] = ifIndex;
        }
    }
    const ns3::Ipv4Address sender = LinkAddress(0, 0);
    const ns3::Ipv4Address receiver = LinkAddress(n - 2, 1);
    for (size_t j = 0; j < n; ++j)
    {
        auto r = routing.GetStaticRouting(nodes.Get(static_cast<uint32_t>(j))->GetObject<ns3::Ipv4>());
        if (j + 1 < n)
        {
            r->SetDefaultRoute(LinkAddress(j, 1), leftIf[j]);
        }
        if (j > 0)
        {
            if (j + 1 == n)
            {
                r->SetDefaultRoute(LinkAddress(j - 1, 0), rightIf[j - 1]);
            }
            else
            {
                r->AddHostRouteTo(sender, LinkAddress(j - 1, 0), rightIf[j - 1]);
            }
        }
    }

    // The NAT box: conntrack and rewrite on the C core, priced per counter.
    ns3::Ipv4Address target = receiver;
    for (const auto& spec : c.nodes)
    {
        if (!spec.dnat || run.nat)
        {
            continue;
        }
        run.nat = std::make_unique<ConntrackNat>(kEip, receiver, 1024);
        run.natPrices.clockHz = 1e9; // prices are in ns: one "cycle" per ns
        for (const auto& [counter, ns] : spec.natPricesNs)
        {
            run.natPrices.SetCounterPrice(counter, ns);
        }
        target = kEip;
        PathRun* state = &run;
        run.cpuOf[spec.name]->SetServiceHook([state](ns3::Ptr<ns3::Packet> p) {
            dp_ops_t ops{};
            const auto verdict = state->nat->Process(p, &ops);
            if (verdict == ConntrackNat::Verdict::kDropped)
            {
                return ns3::Seconds(-1);
            }
            const double ns = state->natPrices.Cycles(ops, 0);
            if (verdict == ConntrackNat::Verdict::kTranslated)
            {
                dp_ops_add(&state->natOps, &ops);
                state->natNsTotal += ns;
                ++state->natPackets;
            }
            return ns3::Seconds(ns * 1e-9);
        });
    }

    // every drop with its server and time; the timeline's span (the run's
    // end) is known only when the run stops, so it is built after
    struct DropEvent
    {
        unsigned server;
        double seconds;
        unsigned reason;
    };
    std::vector<DropEvent> dropEvents;
    std::vector<std::string> dropReasons;
    for (int i = 0; i < static_cast<int>(PathDrop::kCount); ++i)
    {
        dropReasons.emplace_back(PathDropName(static_cast<PathDrop>(i)));
    }
    for (size_t i = 0; i < run.servers.size(); ++i)
    {
        run.servers[i]->TraceConnectWithoutContext(
            "Drop", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, std::string>(
                        [&dropEvents, &dropReasons, i](ns3::Ptr<const ns3::Packet>, std::string reason) {
                            const auto r = std::find(dropReasons.begin(), dropReasons.end(), reason);
                            dropEvents.push_back(DropEvent{static_cast<unsigned>(i),
                                                           ns3::Simulator::Now().GetSeconds(),
                                                           static_cast<unsigned>(r - dropReasons.begin())});
                        }));
    }

    const bool duration = c.durationS > 0;
    const uint64_t fileBytes = duration ? std::numeric_limits<uint64_t>::max() / 2 : c.fileBytes;
    auto receiverApp = ns3::CreateObject<IxChariotReceiver>();
    receiverApp->SetAttribute("Port", ns3::UintegerValue(kPort));
    receiverApp->SetAttribute("FileSize", ns3::UintegerValue(fileBytes));
    nodes.Get(static_cast<uint32_t>(n - 1))->AddApplication(receiverApp);
    auto senderApp = ns3::CreateObject<IxChariotSender>();
    senderApp->SetAttribute("Remote", ns3::AddressValue(ns3::InetSocketAddress(target, kPort)));
    senderApp->SetAttribute("FileSize", ns3::UintegerValue(fileBytes));
    senderApp->SetAttribute("Records", ns3::UintegerValue(run.records));
    nodes.Get(0)->AddApplication(senderApp);
    receiverApp->SetStartTime(ns3::Seconds(0));
    senderApp->SetStartTime(ns3::Seconds(0.001));

    TcpPathResult result;
    result.segmentBytes = c.tcp.SegmentBytes();
    PathRun* state = &run;
    uint64_t durationBytesAtStart = 0;
    senderApp->SetConnectedCallback(ns3::Callback<void>([state, senderApp, receiverApp, duration, &c, &result,
                                                              &durationBytesAtStart]() {
        auto socket = senderApp->GetSocket();
        socket->TraceConnectWithoutContext(
            "CongState", ns3::Callback<void, ns3::TcpSocketState::TcpCongState_t,
                                           ns3::TcpSocketState::TcpCongState_t>(
                             [state](ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now) {
                                 if (now == ns3::TcpSocketState::CA_RECOVERY)
                                 {
                                     ++state->recoveries;
                                     state->recoveryTimes.push_back(ns3::Simulator::Now().GetSeconds());
                                 }
                                 else if (now == ns3::TcpSocketState::CA_LOSS)
                                 {
                                     ++state->timeouts;
                                     state->timeoutTimes.push_back(ns3::Simulator::Now().GetSeconds());
                                 }
                             }));
        socket->TraceConnectWithoutContext(
            "RTT", ns3::Callback<void, ns3::Time, ns3::Time>([state](ns3::Time, ns3::Time rtt) {
                const double s = rtt.GetSeconds();
                state->rttSum += s;
                state->rttMin = std::min(state->rttMin, s);
                ++state->rttSamples;
                state->rttHistogram.Add(s);
            }));
        if (state->records == 1)
        {
            state->StartMeasuring();
        }
        if (duration)
        {
            durationBytesAtStart = receiverApp->TotalBytes();
            ns3::Simulator::Schedule(ns3::Seconds(c.durationS), [state, receiverApp, &c, &result,
                                                                  &durationBytesAtStart]() {
                result.durationGoodputBps =
                    8.0 * static_cast<double>(receiverApp->TotalBytes() - durationBytesAtStart) / c.durationS;
                result.completed = true;
                ns3::Simulator::Stop();
            });
        }
    }));
    senderApp->TraceConnectWithoutContext(
        "Record", ns3::Callback<void, double, double>([state](double, double) {
            ++state->recordsDone;
            if (state->recordsDone + 1 == state->records)
            {
                state->StartMeasuring();
            }
        }));
    senderApp->SetDoneCallback(ns3::Callback<void>([&result]() {
        result.completed = true;
        ns3::Simulator::Stop();
    }));

    // A bound in case TCP stalls: every record at 1 Mbit/s, plus a minute.
    const double bound = duration ? c.durationS + 60
                                  : 60 + static_cast<double>(c.records) * static_cast<double>(c.fileBytes) * 8e-6;
    ns3::Simulator::Stop(ns3::Seconds(bound));
    ns3::Simulator::Run();
    const ns3::Time end = ns3::Simulator::Now();

    for (const auto& r : senderApp->Records())
    {
        result.recordSeconds.push_back(r.Seconds());
    }
    for (const auto& m : receiverApp->Marks())
    {
        result.halfSeconds.push_back((m.lastTime - m.halfTime).GetSeconds());
        result.halfBytes.push_back(static_cast<double>(c.fileBytes - m.halfBytes));
    }
    const double elapsed = (end - run.measureStart).GetSeconds();
    for (size_t i = 0; i < run.servers.size(); ++i)
    {
        const auto& s = run.servers[i];
        const uint32_t fullIp = c.tcp.mtu;
        result.servers.push_back(PathServerStat{run.serverNames[i],
                                                elapsed > 0 ? s->BusyTime().GetSeconds() / elapsed : 0.0,
                                                s->Served(),
                                                s->Drops(PathDrop::kQueueFull),
                                                s->Drops(PathDrop::kRandomLoss),
                                                s->Drops(PathDrop::kNat),
                                                s->MaxQueue(),
                                                s->ServiceTime(fullIp).GetSeconds()});
    }
    result.lossTimeline = LossTimeline(static_cast<unsigned>(std::max<size_t>(run.servers.size(), 1)), c.lossBins,
                                       std::max(end.GetSeconds(), 1e-9), dropReasons);
    for (const DropEvent& e : dropEvents)
    {
        result.lossTimeline.Add(e.server, e.seconds, 1.0, e.reason); // an unknown reason throws
    }
    result.retransmissionTimeline =
        LossTimeline(1, c.lossBins, std::max(end.GetSeconds(), 1e-9), {"fast_recovery", "timeout"});
    for (const double t : run.recoveryTimes)
    {
        result.retransmissionTimeline.Add(0, t, 1.0, 0);
    }
    for (const double t : run.timeoutTimes)
    {
        result.retransmissionTimeline.Add(0, t, 1.0, 1);
    }
    result.recoveries = run.recoveries;
    result.timeouts = run.timeouts;
    result.rttMeanS = run.rttSamples ? run.rttSum / static_cast<double>(run.rttSamples) : 0.0;
    result.rttMinS = run.rttSamples ? run.rttMin : 0.0;
    result.rtt = run.rttHistogram;
    if (run.nat)
    {
        result.natConnections = run.nat->Connections();
        result.natTranslated = run.nat->Translated();
        if (run.natPackets > 0)
        {
            result.natNsPerPacket = run.natNsTotal / static_cast<double>(run.natPackets);
            for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
            {
                const uint64_t v = dp_ops_counter(&run.natOps, i);
                if (v > 0)
                {
                    result.natOpsPerPacket[dp_ops_counter_name(i)] =
                        static_cast<double>(v) / static_cast<double>(run.natPackets);
                }
            }
        }
    }
    result.simulatedSeconds = end.GetSeconds();
    run.nat.reset();
    ns3::Simulator::Destroy();
    return result;
}

} // namespace routertwin
