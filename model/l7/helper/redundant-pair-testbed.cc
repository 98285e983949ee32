#include "redundant-pair-testbed.h"

#include "ns3-run-state.h"

#include <ns3/boolean.h>
#include <ns3/bridge-helper.h>
#include <ns3/config.h>
#include <ns3/csma-helper.h>
#include <ns3/error-model.h>
#include <ns3/global-value.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-static-routing-helper.h>
#include <ns3/arp-cache.h>
#include <ns3/ipv4.h>
#include <ns3/ipv4-interface.h>
#include <ns3/ipv4-l3-protocol.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/pointer.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace routertwin
{
using namespace ns3;

RedundantPairTestbed::RedundantPairTestbed(const RedundantPairConfig& c)
    : m_config(c)
{
    if (c.l4 == L4Forwarding::Nat && c.activeActive)
        throw std::invalid_argument("an L4 NAT pair is built active/backup: the servers route the clients' "
                                    "answers through one gateway at a time, not by the virtual address they "
                                    "came to (active/active NAT needs source NAT; direct routing does it)");
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    m_nodes.Create(4 + c.servers);
    Ptr<Node> client = m_nodes.Get(0);
    Ptr<Node> l2 = m_nodes.Get(1);
    NodeContainer hosts(client);
    for (uint32_t k = 0; k < c.servers; ++k)
        hosts.Add(m_nodes.Get(4 + k));
    InternetStackHelper stack;
    stack.Install(hosts);

    CsmaHelper csma;
    csma.SetChannelAttribute("DataRate", StringValue(c.segmentRate.empty() ? c.linkRate : c.segmentRate));
    csma.SetChannelAttribute("Delay", TimeValue(MicroSeconds(10)));
    NetDeviceContainer ports;
    NetDeviceContainer cl = csma.Install(NodeContainer(client, l2));
    NetDeviceContainer csmaDevices(cl);
    ports.Add(cl.Get(1));
    Ipv4AddressHelper addr;
    addr.SetBase("198.18.1.0", "255.255.255.0", "0.0.0.2");
    addr.Assign(NetDeviceContainer(cl.Get(0)));
    // the closed-loop threads start together and their SYNs wait for one
    // ARP answer: ns-3's pending queue (3 packets) dropped the fourth
    // thread's, idle until its SYN went again 3 s later (ConnTimeout), so
    // 4 threads a VIP cycled as 3 (cycles N/X measured with N = 3). A host's
    // queue holds them: Linux's unres_qlen was 3 until commit 8b5c171bb3dc
    // (3.3, 2011: "responsible for strange drops, ... if multiple sessions
    // start in parallel"), now 64 KB of frames, 101 by ip-sysctl's count;
    // WebBench's clients' figure is not known (assumption)
    Ptr<Ipv4L3Protocol> clientIp = client->GetObject<Ipv4L3Protocol>();
    clientIp->GetInterface(clientIp->GetInterfaceForDevice(cl.Get(0)))
        ->GetArpCache()
        ->SetAttribute("PendingQueueSize", UintegerValue(101));

    Ipv4StaticRoutingHelper routing;
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(c.linkRate));
    p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(10)));
    const Ipv4Address vip[2] = {Ipv4Address("198.18.1.1"), Ipv4Address("198.18.1.3")};
    m_links.resize(2);
    for (uint32_t i = 0; i < 2; ++i)
    {
        Ptr<Node> sw = m_nodes.Get(2 + i);
        NetDeviceContainer seg = csma.Install(NodeContainer(sw, l2));
        csmaDevices.Add(seg);
        ports.Add(seg.Get(1));
        m_links[i] = {seg.Get(0), seg.Get(1)};
        Ptr<WebSwitch> w = CreateObject<WebSwitch>();
        w->SetProfile(c.profile);
        w->SetL4Forwarding(c.l4);
        w->SetAttribute("FirstLocalPort", UintegerValue(20000 + 20000 * i));
        // a takeover without synchronisation: the clients and servers hear of it
        w->SetAttribute("ResetWithoutSession", BooleanValue(true));
        sw->AggregateObject(w);
        m_switches.push_back(w);
        // active/active: each switch's own VIP first; active/backup: both VIP 1
        const uint32_t own = c.activeActive ? i : 0;
        std::vector<Ptr<VrrpRouter>> routers;
        for (uint32_t v = 0; v < (c.activeActive ? 2u : 1u); ++v)
        {
            Ptr<VrrpRouter> r = CreateObject<VrrpRouter>();
            r->SetAttribute("AdvertisementInterval", TimeValue(c.AdvertisementInterval()));
            r->SetAttribute("Priority", UintegerValue(v == own && (c.activeActive || i == 0) ? 200 : 100));
            r->Attach(w, seg.Get(0), Ipv4Address(i == 0 ? "198.18.1.251" : "198.18.1.252"), vip[v],
                      static_cast<uint8_t>(v + 1), c.activeActive);
            routers.push_back(r);
        }
        w->AttachClientSegment(seg.Get(0), vip[own], routers[own]->VirtualMac(), 80);
        if (c.activeActive)
            w->AddVirtualAddress(vip[1 - own], routers[1 - own]->VirtualMac());
        for (auto& r : routers)
            r->Start(Seconds(0));
        m_routers.push_back(routers);
        m_serverIfs.emplace_back();
        for (uint32_t k = 0; k < c.servers; ++k)
        {
            Ptr<Node> srv = m_nodes.Get(4 + k);
            NetDeviceContainer sl = p2p.Install(srv, sw);
            m_links[i].push_back(sl.Get(0));
            m_links[i].push_back(sl.Get(1));
            const std::string net = "198.18." + std::to_string(10 * (i + 1) + k) + ".";
            addr.SetBase((net + "0").c_str(), "255.255.255.0", "0.0.0.2");
            Ipv4InterfaceContainer ifc = addr.Assign(NetDeviceContainer(sl.Get(0)));
            m_serverIfs[i].emplace_back(srv, ifc.Get(0).second);
            // both switches rewrite to (L4 NAT) or reach (L7) the server's
            // one address, the one on its link to switch 0
            const std::string serverAddr = "198.18." + std::to_string(10 + k) + ".2";
            // L7: the floating self address of the switch's own virtual
            // address (active/backup: VIP 1's on both); L4: its own
            const auto floating = [k](uint32_t v) { return "198.18." + std::to_string(10 * (v + 1) + k) + ".1"; };
            const std::string self = c.l4 == L4Forwarding::Off ? floating(own) : net + "1";
            w->AddServer(sl.Get(1), Ipv4Address(self.c_str()), Ipv4Address(serverAddr.c_str()));
            if (c.l4 == L4Forwarding::Off && c.activeActive)
                w->SetVipServerAddress(vip[1 - own], k, Ipv4Address(floating(1 - own).c_str()));
            Ptr<Ipv4StaticRouting> sr = routing.GetStaticRouting(srv->GetObject<Ipv4>());
            if (c.l4 == L4Forwarding::Nat)
                sr->AddNetworkRouteTo(Ipv4Address("198.18.1.0"), Ipv4Mask("/24"), Ipv4Address((net + "1").c_str()),
                                      ifc.Get(0).second, i);
            else if (c.l4 == L4Forwarding::Off)
            {
                // the other switch's floating subnet through this link, after
                // the connected route through its owner (metric 1)
                const std::string other = "198.18." + std::to_string(10 * (2 - i) + k) + ".0";
                sr->AddNetworkRouteTo(Ipv4Address(other.c_str()), Ipv4Mask("/24"), Ipv4Address((net + "1").c_str()),
                                      ifc.Get(0).second, 1);
            }
        }
        if (c.l4 == L4Forwarding::Off)
        {
            w->AddUrlRule(DP_URL_EXT, "gif", 0);
            w->AddUrlRule(DP_URL_EXT, "htm", 1 % c.servers);
        }
    }
    if (c.l4 == L4Forwarding::DirectRouting)
        for (uint32_t k = 0; k < c.servers; ++k)
        {
            // figure 4: the server on the clients' segment, holding the
            // virtual addresses on its loopback (answering no ARP for them)
            Ptr<Node> srv = m_nodes.Get(4 + k);
            NetDeviceContainer seg = csma.Install(NodeContainer(srv, l2));
            csmaDevices.Add(seg);
            ports.Add(seg.Get(1));
            addr.SetBase("198.18.1.0", "255.255.255.0", ("0.0.0." + std::to_string(10 + k)).c_str());
            addr.Assign(NetDeviceContainer(seg.Get(0)));
            Ptr<Ipv4> ip = srv->GetObject<Ipv4>();
            for (uint32_t v = 0; v < (c.activeActive ? 2u : 1u); ++v)
                ip->AddAddress(0, Ipv4InterfaceAddress(vip[v], Ipv4Mask("/32")));
        }
    m_switches[0]->SetSyncPeer(m_switches[1], c.syncDelay);
    m_switches[1]->SetSyncPeer(m_switches[0], c.syncDelay);
    BridgeHelper bridge;
    bridge.Install(l2, ports);
    // every random variable (CSMA backoff, ARP request jitter) on its own
    // stream, not on the next the process hands out: the run does not
    // depend on what ran before it
    m_nextStream = kNs3StreamBase;
    m_nextStream += csma.AssignStreams(csmaDevices, m_nextStream);
    m_nextStream += stack.AssignStreams(hosts, m_nextStream);
    for (uint32_t k = 0; k < c.servers; ++k)
    {
        Ptr<HttpServerApp> app = CreateObject<HttpServerApp>();
        app->SetAttribute("ServerId", UintegerValue(k));
        // ns-3 3.37's TCP crashes in loss recovery when its send buffer
        // holds more than the peer's window (TcpRateLinux::SkbSent on a null
        // item; two bare ns-3 hosts do it too). Spliced, a server's peer
        // window is the client's: ns-3's client advertises 32768 bytes
        // unscaled (its 131072-byte buffer >> its wscale shift, the switch
        // announcing no scaling). Two downloads meeting on the client
        // segment lose a segment now and then (docs/nctu.md).
        app->SetAttribute("SendBufferBytes", UintegerValue(32768));
        m_nodes.Get(4 + k)->AddApplication(app);
        app->SetStartTime(Seconds(0));
        m_servers.push_back(app);
    }
}

void
RedundantPairTestbed::Kill(uint32_t i, Time t)
{
    std::vector<Ptr<NetDevice>> links = m_links[i];
    std::vector<Ptr<VrrpRouter>> routers = m_routers[i];
    const auto serverIfs = m_serverIfs[i];
    const int64_t stream = m_nextStream;
    m_nextStream += static_cast<int64_t>(links.size());
    Simulator::Schedule(t, [links, routers, serverIfs, stream]() {
        // the dead box's ports lose carrier: each server's interface toward
        // it goes down, and its routes through it with it
        for (const auto& [node, ifIndex] : serverIfs)
            node->GetObject<Ipv4>()->SetDown(ifIndex);
        for (size_t j = 0; j < links.size(); ++j)
        {
            auto em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(1.0);
            em->AssignStreams(stream + static_cast<int64_t>(j));
            links[j]->SetAttribute("ReceiveErrorModel", PointerValue(em));
        }
        for (auto& r : routers)
            r->Stop();
    });
}

void
RedundantPairTestbed::Run()
{
    Simulator::Stop(m_config.stop);
    Simulator::Run();
}

} // namespace routertwin

namespace routertwin
{
using namespace ns3;

namespace
{
/// The cycle times (a request's start to its answer) of the closed-loop
/// answers completed in [from, to): their count over the window is the
/// throughput the windows compare.
LatencyHistogram
Cycles(const std::vector<Ptr<HttpClientApp>>& apps, double from, double to)
{
    LatencyHistogram h;
    for (const auto& a : apps)
        for (const auto& r : a->Responses())
            if (r.at.GetSeconds() >= from && r.at.GetSeconds() < to)
                h.Add((r.at - r.started).GetSeconds());
    return h;
}
} // namespace

RedundantPairRunResult
RunRedundantPair(const RedundantPairRunConfig& c)
{
    if (c.killAtS <= c.windowS || c.windowS <= 0 || c.loadStartS > c.killAtS - c.windowS)
        throw std::invalid_argument("the window before the death must fit between load_start_s and kill_at_s");
    if (!(c.timelineBinS > 0))
        throw std::invalid_argument("the timeline's bin must be positive");
    const Time advert = c.pair.AdvertisementInterval();
    const double interval = advert.GetSeconds();
    // switch 0 (priority 200) is master of VIP 1 from its own
    // Master_Down_Interval after the start and advertises every interval;
    // the backup (priority 100) takes over its interval after the last one
    const double masterAt = VrrpRouter::MasterDownInterval(advert, 200).GetSeconds();
    const double backupMdi = VrrpRouter::MasterDownInterval(advert, 100).GetSeconds();
    if (c.killAtS <= masterAt)
        throw std::invalid_argument("kill_at_s must come after switch 0 is master (" + std::to_string(masterAt) +
                                    " s)");
    RedundantPairRunResult out;
    out.masterDownIntervalS = backupMdi;
    const double lastAdvert = masterAt + std::floor((c.killAtS - masterAt) / interval) * interval;
    out.closedFormTakeoverS = backupMdi - (c.killAtS - lastAdvert);
    const double afterFrom = c.killAtS + backupMdi + c.settleS, afterTo = afterFrom + c.windowS;

    BeginNs3Run(c.seed);
    RedundantPairConfig pc = c.pair;
    pc.stop = Seconds(std::max(c.pair.stop.GetSeconds(), afterTo + 15.0));
    RedundantPairTestbed bed(pc);
    bed.Router(1, 1)->TraceConnectWithoutContext(
        "State", Callback<void, uint8_t, uint8_t, Time>([&out, &c](uint8_t, uint8_t state, Time at) {
            if (state == VrrpRouter::Master && at.GetSeconds() > c.killAtS && out.takeoverS < 0)
                out.takeoverS = at.GetSeconds() - c.killAtS;
        }));
    const char* vips[2] = {"198.18.1.1", "198.18.1.3"};
    const std::string path = c.loadPath;
    std::vector<Ptr<HttpClientApp>> threads, downloads;
    for (const double start : {c.loadStartS, c.killAtS + backupMdi})
        for (uint32_t v = 0; v < (pc.activeActive ? 2u : 1u); ++v)
            for (uint32_t t = 0; t < c.threadsPerVip; ++t)
            {
                auto app = CreateObject<HttpClientApp>();
                app->SetAttribute("Remote", Ipv4AddressValue(Ipv4Address(vips[v])));
                app->SetRequestSource([path](uint64_t) { return HttpClientApp::Get(path, true); });
                bed.ClientNode()->AddApplication(app);
                app->SetStartTime(Seconds(start));
                app->SetStopTime(Seconds(afterTo));
                threads.push_back(app);
            }
    for (uint32_t i = 0; i < c.downloads; ++i)
    {
        auto app = CreateObject<HttpClientApp>();
        app->SetAttribute("Remote", Ipv4AddressValue(Ipv4Address(vips[0])));
        // L7: .gif to server 0, .htm to server 1 (the URL rules), in turn
        app->AddRequest(HttpClientApp::Get("/a/CLASS_" + std::to_string(c.downloadBytes) + (i % 2 ? ".htm" : ".gif"),
                                           true));
        bed.ClientNode()->AddApplication(app);
        app->SetStartTime(Seconds(c.downloadStartS + i * c.downloadSpacingS));
        downloads.push_back(app);
    }
    bed.Kill(0, Seconds(c.killAtS));
    // the survivor's reset counter at the end of every bin but the last
    // (read after the run)
    const size_t bins = static_cast<size_t>(std::ceil(pc.stop.GetSeconds() / c.timelineBinS));
    std::vector<uint64_t> resetsAt(bins, 0);
    Ptr<WebSwitch> survivor = bed.Switch(1);
    for (size_t b = 0; b + 1 < bins; ++b)
        Simulator::Schedule(Seconds((b + 1) * c.timelineBinS), [&resetsAt, survivor, b]() {
            resetsAt[b] = survivor->GetCounters().resetsWithoutSession;
        });
    bed.Run();
    resetsAt[bins - 1] = survivor->GetCounters().resetsWithoutSession;

    const double beforeFrom = c.killAtS - c.windowS;
    out.cycleBefore = Cycles(threads, beforeFrom, c.killAtS);
    out.cycleAfter = Cycles(threads, afterFrom, afterTo);
    out.requestsPerSBefore = out.cycleBefore.Count() / (c.killAtS - beforeFrom);
    out.requestsPerSAfter = out.cycleAfter.Count() / (afterTo - afterFrom);
    const Time death = Seconds(c.killAtS);
    for (const auto& t : threads)
        for (const auto& r : t->Responses())
            if (r.started < death && r.at >= death)
            {
                ++out.acrossDeath;
                out.acrossDeathMaxS = std::max(out.acrossDeathMaxS, (r.at - r.started).GetSeconds());
            }
    for (uint32_t i = 0; i < c.downloads; ++i)
    {
        const auto& d = downloads[i];
        const bool endedBefore = !d->Responses().empty() && d->Responses()[0].at.GetSeconds() < c.killAtS;
        if (c.downloadStartS + i * c.downloadSpacingS >= c.killAtS || endedBefore)
            continue;
        ++out.openAtDeath;
        const bool whole = d->Responses().size() == 1 && d->Responses()[0].bodyBytes == c.downloadBytes &&
                           d->Responses()[0].bodyMatches;
        out.survived += whole;
        out.lost += d->Responses().empty();
    }
    out.survivorResets = bed.Switch(1)->GetCounters().resetsWithoutSession;
    out.syncSent = bed.Switch(0)->GetCounters().syncSent;
    out.spliceMirrors = bed.Switch(0)->GetCounters().spliceMirrorsSent;
    out.survivorNoSession = bed.Switch(1)->DropCount("no_session");
    out.timelineBinS = c.timelineBinS;
    const auto binOf = [&](Time at) {
        return std::min(bins - 1, static_cast<size_t>(at.GetSeconds() / c.timelineBinS));
    };
    out.answersPerBin.assign(bins, 0);
    out.failedPerBin.assign(bins, 0);
    out.survivorResetsPerBin.assign(bins, 0);
    for (const auto& t : threads)
    {
        out.answers += t->Responses().size();
        for (const auto& r : t->Responses())
            ++out.answersPerBin[binOf(r.at)];
    }
    for (const auto* apps : {&threads, &downloads})
        for (const auto& a : *apps)
        {
            out.failedRequests += a->Failures().size();
            for (const Time& at : a->Failures())
                ++out.failedPerBin[binOf(at)];
        }
    // a download still waiting at the run's end never got its answer (no
    // stop time ended it): one the failover cut whose client was never told
    // (the survivor resets the server's side; a client only waiting for the
    // body sends nothing to be reset), or one too slow for the run; failed,
    // in the last bin. One reset or closed before its answer is already in
    // its Failures (and waits no more).
    for (const auto& d : downloads)
        if (d->Awaiting())
        {
            ++out.failedRequests;
            ++out.failedPerBin[bins - 1];
        }
    for (size_t b = 0; b < bins; ++b)
        out.survivorResetsPerBin[b] = resetsAt[b] - (b ? resetsAt[b - 1] : 0);
    Simulator::Destroy();
    return out;
}

} // namespace routertwin
