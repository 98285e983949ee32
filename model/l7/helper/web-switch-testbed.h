// WebSwitchTestbed: one client host, a WebSwitch node and servers, each
// host on its own point-to-point link to the switch, with ns-3's TCP on the
// hosts (checksums on: the end hosts verify every checksum the switch
// updates) and optional pcap on the switch's ports, client side and server
// side (DLT_PPP; Wireshark follows delayed binding in them: docs/nctu.md).
//
// Addresses (RFC 2544's 198.18.0.0/15): the client 198.18.1.2, the virtual
// service 198.18.1.1:80 on the client link; server k 198.18.(10+k).2, the
// switch 198.18.(10+k).1 on that link.
#ifndef ROUTERTWIN_WEB_SWITCH_TESTBED_H
#define ROUTERTWIN_WEB_SWITCH_TESTBED_H

#include "http-apps.h"
#include "web-switch.h"

#include <ns3/node-container.h>
#include <ns3/nstime.h>

#include <string>
#include <vector>

namespace routertwin
{

struct WebSwitchTestbedConfig
{
    WebSwitchProfile profile;
    uint32_t servers = 2;
    /// Client applications on the client host, each with its requests.
    std::vector<std::vector<HttpClientApp::Request>> clients;
    std::string linkRate = "100Mbps"; ///< every link (seed 003: 100 Mbit/s server links)
    ns3::Time linkDelay = ns3::MicroSeconds(10);
    uint32_t segmentSize = 1448;      ///< the hosts' TCP MSS
    std::string pcapPrefix;           ///< "" = no pcap; else <prefix>-client.pcap, <prefix>-server<k>.pcap
    ns3::Time stop = ns3::Seconds(5);
};

class WebSwitchTestbed
{
  public:
    /// Builds the nodes, links, stacks and applications (Simulator not run).
    explicit WebSwitchTestbed(const WebSwitchTestbedConfig& c);
    /// Runs until the configured stop time (or until nothing is left to do).
    void Run();

    ns3::Ptr<WebSwitch> Switch() const { return m_switch; }
    ns3::Ptr<HttpClientApp> Client(uint32_t i) const { return m_clients[i]; }
    ns3::Ptr<HttpServerApp> Server(uint32_t k) const { return m_servers[k]; }
    /// The hosts, for more applications (e.g. TLS on port 443).
    ns3::Ptr<ns3::Node> ClientNode() const { return m_nodes.Get(0); }
    ns3::Ptr<ns3::Node> ServerNode(uint32_t k) const { return m_nodes.Get(2 + k); }

  private:
    WebSwitchTestbedConfig m_config;
    ns3::NodeContainer m_nodes; ///< client, switch, servers
    ns3::Ptr<WebSwitch> m_switch;
    std::vector<ns3::Ptr<HttpClientApp>> m_clients;
    std::vector<ns3::Ptr<HttpServerApp>> m_servers;
};

} // namespace routertwin

#endif
