#include "web-switch-testbed.h"

#include <ns3/boolean.h>
#include <ns3/config.h>
#include <ns3/global-value.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

namespace routertwin
{
using namespace ns3;

WebSwitchTestbed::WebSwitchTestbed(const WebSwitchTestbedConfig& c)
    : m_config(c)
{
    // the end hosts compute and verify every IPv4 and TCP checksum, so a
    // wrong incremental update by the switch loses the segment
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.segmentSize));
    m_nodes.Create(2 + c.servers);
    Ptr<Node> client = m_nodes.Get(0);
    Ptr<Node> sw = m_nodes.Get(1);
    InternetStackHelper stack;
    stack.Install(client);
    for (uint32_t k = 0; k < c.servers; ++k)
        stack.Install(m_nodes.Get(2 + k));

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(c.linkRate));
    p2p.SetChannelAttribute("Delay", TimeValue(c.linkDelay));

    m_switch = CreateObject<WebSwitch>();
    m_switch->SetProfile(c.profile);
    sw->AggregateObject(m_switch);

    NetDeviceContainer cl = p2p.Install(client, sw);
    Ipv4AddressHelper addr;
    addr.SetBase("198.18.1.0", "255.255.255.0", "0.0.0.2");
    addr.Assign(NetDeviceContainer(cl.Get(0)));
    m_switch->AttachClientSide(cl.Get(1), Ipv4Address("198.18.1.1"), 80);
    if (!c.pcapPrefix.empty())
        p2p.EnablePcap(c.pcapPrefix + "-client.pcap", cl.Get(1), false, true);

    for (uint32_t k = 0; k < c.servers; ++k)
    {
        NetDeviceContainer sl = p2p.Install(m_nodes.Get(2 + k), sw);
        const std::string net = "198.18." + std::to_string(10 + k) + ".0";
        addr.SetBase(net.c_str(), "255.255.255.0", "0.0.0.2");
        addr.Assign(NetDeviceContainer(sl.Get(0)));
        const std::string own = "198.18." + std::to_string(10 + k) + ".1";
        const std::string srv = "198.18." + std::to_string(10 + k) + ".2";
        m_switch->AddServer(sl.Get(1), Ipv4Address(own.c_str()), Ipv4Address(srv.c_str()));
        if (!c.pcapPrefix.empty())
            p2p.EnablePcap(c.pcapPrefix + "-server" + std::to_string(k) + ".pcap", sl.Get(1), false, true);
        Ptr<HttpServerApp> app = CreateObject<HttpServerApp>();
        app->SetAttribute("ServerId", UintegerValue(k));
        m_nodes.Get(2 + k)->AddApplication(app);
        app->SetStartTime(Seconds(0));
        m_servers.push_back(app);
    }
    for (const auto& requests : c.clients)
    {
        Ptr<HttpClientApp> app = CreateObject<HttpClientApp>();
        for (const auto& r : requests)
            app->AddRequest(r);
        client->AddApplication(app);
        app->SetStartTime(MilliSeconds(1 + m_clients.size()));
        m_clients.push_back(app);
    }
}

void
WebSwitchTestbed::Run()
{
    Simulator::Stop(m_config.stop);
    Simulator::Run();
}

} // namespace routertwin
