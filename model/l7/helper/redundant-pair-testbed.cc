#include "redundant-pair-testbed.h"

#include <ns3/boolean.h>
#include <ns3/bridge-helper.h>
#include <ns3/config.h>
#include <ns3/csma-helper.h>
#include <ns3/error-model.h>
#include <ns3/global-value.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-static-routing-helper.h>
#include <ns3/ipv4.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/pointer.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <stdexcept>
#include <string>

namespace routertwin
{
using namespace ns3;

RedundantPairTestbed::RedundantPairTestbed(const RedundantPairConfig& c)
    : m_config(c)
{
    if (c.l4 == L4Forwarding::DirectRouting || (c.l4 != L4Forwarding::Off && c.activeActive))
        throw std::invalid_argument("a redundant pair in L4 is built for NAT, active/backup: the servers "
                                    "return through one gateway at a time");
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    m_nodes.Create(4 + c.servers);
    Ptr<Node> client = m_nodes.Get(0);
    Ptr<Node> l2 = m_nodes.Get(1);
    InternetStackHelper stack;
    stack.Install(client);
    for (uint32_t k = 0; k < c.servers; ++k)
        stack.Install(m_nodes.Get(4 + k));

    CsmaHelper csma;
    csma.SetChannelAttribute("DataRate", StringValue("100Mbps"));
    csma.SetChannelAttribute("Delay", TimeValue(MicroSeconds(10)));
    NetDeviceContainer ports;
    NetDeviceContainer cl = csma.Install(NodeContainer(client, l2));
    ports.Add(cl.Get(1));
    Ipv4AddressHelper addr;
    addr.SetBase("198.18.1.0", "255.255.255.0", "0.0.0.2");
    addr.Assign(NetDeviceContainer(cl.Get(0)));

    Ipv4StaticRoutingHelper routing;
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(10)));
    const Ipv4Address vip[2] = {Ipv4Address("198.18.1.1"), Ipv4Address("198.18.1.3")};
    m_links.resize(2);
    for (uint32_t i = 0; i < 2; ++i)
    {
        Ptr<Node> sw = m_nodes.Get(2 + i);
        NetDeviceContainer seg = csma.Install(NodeContainer(sw, l2));
        ports.Add(seg.Get(1));
        m_links[i] = {seg.Get(0), seg.Get(1)};
        Ptr<WebSwitch> w = CreateObject<WebSwitch>();
        w->SetProfile(c.profile);
        w->SetL4Forwarding(c.l4);
        sw->AggregateObject(w);
        m_switches.push_back(w);
        // active/active: each switch's own VIP first; active/backup: both VIP 1
        const uint32_t own = c.activeActive ? i : 0;
        std::vector<Ptr<VrrpRouter>> routers;
        for (uint32_t v = 0; v < (c.activeActive ? 2u : 1u); ++v)
        {
            Ptr<VrrpRouter> r = CreateObject<VrrpRouter>();
            r->SetAttribute("AdvertisementInterval", TimeValue(c.advertisementInterval));
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
            // L4: both switches rewrite to the server's one address
            const std::string serverAddr =
                c.l4 == L4Forwarding::Off ? net + "2" : "198.18." + std::to_string(10 + k) + ".2";
            w->AddServer(sl.Get(1), Ipv4Address((net + "1").c_str()), Ipv4Address(serverAddr.c_str()));
            if (c.l4 != L4Forwarding::Off)
                routing.GetStaticRouting(srv->GetObject<Ipv4>())
                    ->AddNetworkRouteTo(Ipv4Address("198.18.1.0"), Ipv4Mask("/24"), Ipv4Address((net + "1").c_str()),
                                        ifc.Get(0).second, i);
        }
        if (c.l4 == L4Forwarding::Off)
        {
            w->AddUrlRule(DP_URL_EXT, "gif", 0);
            w->AddUrlRule(DP_URL_EXT, "htm", 1 % c.servers);
        }
    }
    m_switches[0]->SetSyncPeer(m_switches[1], c.syncDelay);
    m_switches[1]->SetSyncPeer(m_switches[0], c.syncDelay);
    BridgeHelper bridge;
    bridge.Install(l2, ports);
    for (uint32_t k = 0; k < c.servers; ++k)
    {
        Ptr<HttpServerApp> app = CreateObject<HttpServerApp>();
        app->SetAttribute("ServerId", UintegerValue(k));
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
    Simulator::Schedule(t, [links, routers, serverIfs]() {
        // the dead box's ports lose carrier: each server's interface toward
        // it goes down, and its routes through it with it
        for (const auto& [node, ifIndex] : serverIfs)
            node->GetObject<Ipv4>()->SetDown(ifIndex);
        for (auto& d : links)
        {
            auto em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(1.0);
            d->SetAttribute("ReceiveErrorModel", PointerValue(em));
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
