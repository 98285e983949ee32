// RedundantPairTestbed: two WebSwitch nodes in front of the same servers
// (each switch on its own point-to-point link to every server) and one
// client host, the client and both switches on a learning L2 switch
// (ns-3 BridgeNetDevice over CSMA links, 100 Mbit/s): the shared segment
// VRRP runs on. Active/backup: both switches back VIP 198.18.1.1 (VRID 1,
// switch 0 priority 200, switch 1 priority 100). Active/active: switch 0 is
// master of VRID 1 (198.18.1.1) and backup of VRID 2 (198.18.1.3), switch 1
// the other way round. Addresses from RFC 2544's 198.18.0.0/15: the client
// 198.18.1.2, the switches' own 198.18.1.251 and .252; server k
// 198.18.(10+k).2 toward switch 0 and 198.18.(20+k).2 toward switch 1.
// With the profile's session_sync (behaviour.session_sync: connections),
// each switch copies its L4 sessions to the other (WebSwitch::SetSyncPeer).
#ifndef ROUTERTWIN_REDUNDANT_PAIR_TESTBED_H
#define ROUTERTWIN_REDUNDANT_PAIR_TESTBED_H

#include "http-apps.h"
#include "vrrp-router.h"
#include "web-switch.h"

#include <ns3/node-container.h>
#include <ns3/nstime.h>

#include <vector>

namespace routertwin
{

struct RedundantPairConfig
{
    WebSwitchProfile profile;
    bool activeActive = false;
    uint32_t servers = 2;
    ns3::Time advertisementInterval = ns3::Seconds(1); ///< RFC 5798's default
    ns3::Time stop = ns3::Seconds(10);
    /// L4 NAT instead of URL switching (active/backup only): both switches
    /// rewrite to the server's one address (198.18.(10+k).2, which it also
    /// accepts on its link to switch 1, as on a shared server segment) and
    /// the servers route the clients' subnet through switch 0 (metric 0)
    /// and switch 1 (metric 1); a dead switch's links lose carrier, so the
    /// servers' interfaces toward it go down and their routes with them.
    L4Forwarding l4 = L4Forwarding::Off;
    /// One connection-state update between the switches (SetSyncPeer):
    /// an assumption, a small frame on a 100 Mbit/s inter-switch link.
    ns3::Time syncDelay = ns3::MicroSeconds(20);
};

class RedundantPairTestbed
{
  public:
    explicit RedundantPairTestbed(const RedundantPairConfig& c);
    ns3::Ptr<WebSwitch> Switch(uint32_t i) const { return m_switches[i]; }
    /// Switch i's virtual router for VRID vrid (1 or 2).
    ns3::Ptr<VrrpRouter> Router(uint32_t i, uint8_t vrid) const { return m_routers[i][vrid - 1]; }
    ns3::Ptr<HttpServerApp> Server(uint32_t k) const { return m_servers[k]; }
    ns3::Ptr<ns3::Node> ClientNode() const { return m_nodes.Get(0); }
    /// Switch i dies at t: every link of its node cut both ways, its
    /// virtual routers stopped.
    void Kill(uint32_t i, ns3::Time t);
    void Run();

  private:
    /// Per switch: each server's node and its interface toward that switch.
    std::vector<std::vector<std::pair<ns3::Ptr<ns3::Node>, uint32_t>>> m_serverIfs;
    RedundantPairConfig m_config;
    ns3::NodeContainer m_nodes; ///< client, L2 switch, switch 0, switch 1, servers
    std::vector<ns3::Ptr<WebSwitch>> m_switches;
    std::vector<std::vector<ns3::Ptr<VrrpRouter>>> m_routers;
    std::vector<std::vector<ns3::Ptr<ns3::NetDevice>>> m_links; ///< per switch: both ends of each link
    std::vector<ns3::Ptr<HttpServerApp>> m_servers;
};

} // namespace routertwin

#endif
