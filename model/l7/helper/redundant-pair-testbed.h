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
// each switch copies its L4 sessions and mirrors its spliced L7
// connections to the other (WebSwitch::SetSyncPeer).
//
// L7: the switches reach server k from floating self addresses, as a
// pair on a shared server segment does (assumption: the seed does not say
// how its products were wired in a pair; BIG-IP's floating self IP is the
// documented way): 198.18.(10+k).1 for the connections to VIP 1 and, in
// active/active, 198.18.(20+k).1 for those to VIP 2, from either switch;
// the server (198.18.(10+k).2 on both links) routes each floating subnet
// through its owner (metric 0) and the peer (metric 1), so when a switch
// dies (its links lose carrier, the server's interfaces toward it go
// down) the answers of its connections go to the survivor. The switches
// take separate local port ranges (20000 and 40000).
// L4 direct routing: each server also has a port on the L2 switch
// (198.18.1.(10+k)) and holds the virtual addresses on its loopback (no
// ARP for them), so it answers the clients directly; the web switches
// see only the clients' segments (active/backup and active/active).
#ifndef ROUTERTWIN_REDUNDANT_PAIR_TESTBED_H
#define ROUTERTWIN_REDUNDANT_PAIR_TESTBED_H

#include "http-apps.h"
#include "latency-histogram.h"
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
    /// The master's advertisement interval; zero: the profile's
    /// (behaviour.failover_advert_interval_s).
    ns3::Time advertisementInterval = ns3::Time(0);
    ns3::Time AdvertisementInterval() const
    {
        return advertisementInterval.IsStrictlyPositive() ? advertisementInterval
                                                           : ns3::Seconds(profile.failoverAdvertIntervalS);
    }
    ns3::Time stop = ns3::Seconds(10);
    /// L4 NAT (active/backup only) or direct routing instead of URL
    /// switching. NAT: both switches
    /// rewrite to the server's one address (198.18.(10+k).2, which it also
    /// accepts on its link to switch 1, as on a shared server segment) and
    /// the servers route the clients' subnet through switch 0 (metric 0)
    /// and switch 1 (metric 1); a dead switch's links lose carrier, so the
    /// servers' interfaces toward it go down and their routes with them.
    L4Forwarding l4 = L4Forwarding::Off;
    /// One connection-state update between the switches (SetSyncPeer):
    /// an assumption, a small frame on a 100 Mbit/s inter-switch link.
    ns3::Time syncDelay = ns3::MicroSeconds(20);
    /// The switches' links to the servers (the seed's testbed: 100 Mbit/s ports).
    std::string linkRate = "100Mbps";
    /// The client segment's links (the seed's gigabit uplink, section 3.3);
    /// empty: linkRate. At linkRate, a switch's frames to the clients share
    /// the CSMA channel with the clients' ACKs and queue past 100 frames
    /// when two servers' downloads meet there (then dropped).
    std::string segmentRate;
};

/// A failover run on the pair (RunRedundantPair; the `webswitch_pair`
/// kind): closed-loop clients on every virtual address, long downloads
/// open when switch 0 dies, and the throughput either side of the death.
struct RedundantPairRunConfig
{
    RedundantPairConfig pair;
    double killAtS = 5.5;          ///< switch 0 dies (every link cut)
    /// ns-3's seed (RngSeedManager: CSMA backoff, ARP jitter). Every random
    /// variable has its own stream (AssignStreams from kNs3StreamBase) and
    /// the run starts from ns-3's defaults (BeginNs3Run), so the same seed
    /// gives the same run whatever ran before it in the process.
    uint32_t seed = 1;
    /// Closed-loop client threads per virtual address (HTTP/1.0: a new
    /// connection per request), from loadStartS, for loadPath; as many
    /// again start at killAtS + the backup's Master_Down_Interval +
    /// settleS (the threads whose connection was reset stop, as WebBench's
    /// would report an error).
    uint32_t threadsPerVip = 8;
    double loadStartS = 3.5;
    std::string loadPath = "/a/CLASS_2000.gif";
    /// Throughput windows: [killAtS - windowS, killAtS) and
    /// [killAtS + MDI + settleS, + windowS).
    double windowS = 1.0;
    double settleS = 0.5;
    /// Long downloads (each its own connection, to VIP 1) started at
    /// downloadStartS + i x downloadSpacingS: those whose request went
    /// before the death and whose answer had not ended at it are "open at
    /// the death" (the client's own record), and survive or are lost.
    uint32_t downloads = 10;
    double downloadStartS = 4.5;
    double downloadSpacingS = 0.1;
    uint64_t downloadBytes = 2000000;
    /// The timelines' bin (RedundantPairRunResult::answersPerBin ...).
    double timelineBinS = 0.1;
};

struct RedundantPairRunResult
{
    double takeoverS = -1;         ///< the backup's master state after the death (s after it; -1: never)
    double masterDownIntervalS = 0; ///< RFC 5798 6.1 for the backup
    double closedFormTakeoverS = 0; ///< MDI - (death - the master's last advertisement before it)
    double requestsPerSBefore = 0;  ///< closed-loop answers per second, window before the death
    double requestsPerSAfter = 0;   ///< the same after the takeover
    uint32_t openAtDeath = 0;       ///< downloads open at the death
    uint32_t survived = 0;          ///< of those, answered whole with every body byte right
    /// of those, not answered: the survivor knew no connection and reset
    /// it (the server at its next retransmission, the client when it next
    /// sends; a client only waiting for the body is never told)
    uint32_t lost = 0;
    uint64_t survivorResets = 0;    ///< RSTs the survivor sent for segments of no known connection
    uint64_t syncSent = 0;          ///< updates switch 0 sent its peer
    uint64_t spliceMirrors = 0;     ///< of those, L7 connection mirrors
    uint64_t survivorNoSession = 0; ///< segments the survivor knew no connection of
    /// The run over time, in bins of timelineBinS from 0 to the end of the
    /// run (the last bin holds what happens up to it): the closed-loop
    /// answers (their arrival at the client), the survivor's RSTs for
    /// segments of no known connection (its counter at each bin's end), and
    /// the clients' requests that ended without their answer
    /// (HttpClientApp::Failures: the threads' and the downloads'), and in
    /// the last bin the downloads still waiting for theirs at the run's end.
    double timelineBinS = 0;
    std::vector<uint64_t> answersPerBin, survivorResetsPerBin, failedPerBin;
    uint64_t answers = 0;        ///< closed-loop answers over the whole run
    /// The closed-loop threads' cycle times (HttpClientApp::Response:
    /// `at` - `started`, a request's cycle from the previous answer or the
    /// thread's start to its answer's arrival; the pair's clients spend no
    /// CPU time) of the answers the rates count: those that arrived in the
    /// window before the death and in the window after the takeover (so
    /// each histogram's count is its rate x windowS).
    LatencyHistogram cycleBefore, cycleAfter;
    /// The threads' requests whose cycle spans the death (started before
    /// it, answered after it: the failover stalled them), and the longest
    /// cycle of them (seconds; 0: none).
    uint32_t acrossDeath = 0;
    double acrossDeathMaxS = 0;
    /// the clients' failures over the whole run, with the downloads never answered
    uint64_t failedRequests = 0;
};

RedundantPairRunResult RunRedundantPair(const RedundantPairRunConfig& c);

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
    int64_t m_nextStream = 0; ///< the next random stream to assign (Kill's error models)
};

} // namespace routertwin

#endif
