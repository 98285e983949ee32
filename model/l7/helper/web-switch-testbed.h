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
#include "latency-histogram.h"
#include "web-switch.h"

#include <ns3/node-container.h>
#include <ns3/nstime.h>

#include <map>
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

/// One class of WebBench's file set (seed 003 appendix 4).
struct WebBenchFileClass
{
    std::string name;  ///< e.g. "CLASS_223.gif": the path is urlPrefix + name
    uint64_t bytes;    ///< body bytes
    double share;      ///< of requests (normalised over the classes)
    std::string group; ///< "gif", "htm" or "other" (section 3.4's URL rules)
};

/// The NCTU testbed at scale (seed 003 sections 3.3 and 3.4, figures 4 and
/// 5; docs/nctu.md "The ns-3 engine"): clientHosts WebBench PCs, each with
/// threadsPerHost closed-loop HttpClientApps (think time 0, files drawn by
/// share), on host links to an L2 switch (an ns-3 store-and-forward node)
/// with one uplink to the WebSwitch; the servers on host links to the L2
/// switch too, so every frame between a server and the WebSwitch crosses
/// the uplink with the clients' frames (a NAT or L7 response twice).
/// Links carry Ethernet framing (PathNetDevice: IP bytes + frame overhead
/// at the line rate). Host CPUs are FIFO servers of the per-request and
/// per-connection times (HostCpu). mode "l4": the switch balances
/// connections round robin (forwarding "nat", or "dr": the servers hold the
/// virtual address and answer from their L2 port to the clients without
/// crossing the uplink); mode
/// "l7": URL switching with delayed binding, .gif to the first half of the
/// servers, .htm to the second, other names to any, `rules` rules (.gif,
/// .htm, padding extensions, the default), as the `webswitch` kind's MVA.
struct WebBenchTestbedConfig
{
    WebSwitchProfile profile;
    std::string mode = "l7";       ///< l4 | l7
    std::string forwarding = "nat"; ///< nat | dr (l4 only)
    bool http11 = true;
    uint32_t rules = 3;
    /// "" = URL switching with the rules above (section 3.4); else section
    /// 3.5's cookie test (figure 12) by this method, "prearranged", "insert"
    /// or "learn": no URL rules and no content partition (a connection
    /// without a cookie goes to server (client address + port) mod servers),
    /// every server's page sets a cookie on every answer (Server=A, B, ...
    /// for prearranged, an ASP session cookie otherwise), every client
    /// keeps and returns its cookies, and the insert goes into every
    /// response (section 5.6's words, WebSwitch CookieInsertEveryResponse)
    std::string cookieMethod;
    uint32_t clientHosts = 14;
    uint32_t threadsPerHost = 2;
    uint32_t servers = 6;
    std::vector<WebBenchFileClass> files;
    std::string urlPrefix = "/wbtree/";
    uint32_t requestBytes = 200;        ///< a request head, padded to this
    uint32_t responseHeaderBytes = 250; ///< a response head, padded to this
    double clientCpuPerRequestS = 0, clientCpuPerConnectionS = 0;
    double serverCpuPerRequestS = 0, serverCpuPerConnectionS = 0;
    double hostLinkBps = 1e8, uplinkBps = 1e9;
    uint32_t frameOverheadBytes = 38;
    uint32_t mssBytes = 1460;
    uint32_t ackEverySegments = 2;
    double l2LatencyS = 10e-6;      ///< per crossing of the L2 switch
    double hostRoundTripS = 60e-6;  ///< the two hosts' stacks per round trip
    uint32_t initialCwndSegments = 2;
    uint32_t receiveWindowBytes = 17520;
    double warmupS = 0.2, durationS = 1.0;
    uint32_t seed = 1;

    /// "" = WebBench's closed loop above. Otherwise open loop (issue 16):
    /// requests arrive by traffic-profile.h's ArrivalProcess of this kind
    /// ("constant", "poisson", "onoff", "mmpp") at offeredRps from time 0
    /// to the window's end, each a new HTTP/1.0 connection of one request
    /// from client host (arrival index mod clientHosts), whatever the load
    /// (threadsPerHost unused). A request's response time runs from its
    /// arrival (the client CPU's per-connection and per-request time
    /// included) to its response's last byte; the run goes on drainS past
    /// the window so that requests arrived in the window can finish.
    std::string arrivals;
    double offeredRps = 0;
    double burstMeanRequests = 16; ///< onoff: mean requests a burst
    double burstPeakRatio = 4;     ///< onoff: the rate in a burst over offeredRps
    double mmppRateRatio = 4;      ///< mmpp: high rate over low
    double mmppHighFraction = 0.2; ///< mmpp: share of time in the high state
    double mmppCycleS = 0.1;       ///< mmpp: mean high + low sojourn
    /// Which file class a request asks for: "shares" (the classes' shares,
    /// WebBench's mix), "uniform", or "zipf" (class k as listed, rank k + 1,
    /// with weight (k + 1)^-zipfExponent): traffic-profile.h's FlowPicker.
    std::string popularity = "shares";
    double zipfExponent = 1.0;
    double drainS = 0.5;
    /// Open loop from a capture instead of the arrival process and the file
    /// classes (ReadHttpTrace below): each IPv4 TCP connection of the pcap
    /// or pcapng file opens at its SYN's instant and sends its HTTP
    /// requests one after another on it (keep-alive as captured: a new
    /// connection where a request or its answer said close), each after
    /// its captured think time and with the captured request's target,
    /// Host and version, asking for the body
    /// the capture's server sent (its payload of the exchange less the
    /// response head); rescaled so requests arrive at offeredRps on
    /// average (else as captured), looped to the window's end.
    std::string traceFile;
    bool traceRescale = true;

    /// The switch's SynBacklogLimit (web-switch.h): 0 = none, the NCTU
    /// replay's setting; else new connections that find more work queued
    /// in the switch's processor are refused (an assumption where set)
    double synBacklogLimitS = 0;
    /// Time bins of the loss timeline over warmup_s + duration_s
    uint32_t lossBins = 100;
};

struct WebBenchTestbedResult
{
    uint64_t requests = 0;     ///< completed in the measured window
    double requestsPerS = 0;
    double latencyMs = 0;      ///< mean cycle time of a request (client CPU to the response's last byte)
    double responseMbps = 0;   ///< HTTP response bytes (head and body) per second
    double switchUtilization = 0;
    double switchCyclesPerRequest = 0;
    double switchPacketsPerRequest = 0;
    double connectionSidesPerRequest = 0;
    double redirectsPerRequest = 0;
    double rulesPerRequest = 0;
    double cookieHitsPerRequest = 0;     ///< requests sent where their cookie said
    double cookiesInsertedPerRequest = 0;
    double cookiesLearnedPerRequest = 0;
    /// Busy share of each link direction, host CPU and the switch, by name
    /// (e.g. "server3.link_out", "uplink.to_switch", "client1.cpu").
    std::map<std::string, double> utilization;
    std::map<std::string, uint64_t> drops;
    uint64_t events = 0; ///< ns-3 events run

    // open loop only: of the requests arrived in the measured window, those
    // answered (at any time up to drainS after it), refused (the connection
    // reset or never opened, no answer) and still unanswered at the end
    uint64_t offered = 0, answered = 0, refused = 0, unanswered = 0;
    /// The distribution behind latencyMs (issue 15): closed loop, every
    /// request completed in the window, its cycle time; open loop, the
    /// answered requests' response times
    LatencyHistogram responseTimes;
    /// Loss over time (issue 15), one port (the clients share the uplink)
    /// over warmup_s + duration_s in lossBins bins, by reason: every
    /// segment the switch refused or absorbed, at its time, under its drop
    /// name (the bins of a name add up to drops[name], the whole run: what
    /// comes in the drain counts in the last bin); open loop, also
    /// "request_refused" and "request_unanswered", the requests of those
    /// counters at their arrival time
    LossTimeline lossTimeline;
};

/// One HTTP request of a trace (an exchange of ReadTraceConnections with
/// its head parsed by the C core's dp_http, as the switch parses it).
struct HttpTraceRequest
{
    std::string method;       ///< as captured (the replay sends GET: the server answers heads only)
    std::string target;       ///< request-target as captured
    std::string host;         ///< the Host header's value ("" = none)
    uint8_t versionMinor = 1; ///< HTTP/1.x
    bool keepAlive = true;    ///< persistent (RFC 7230 6.3: 1.1 without close, 1.0 with keep-alive)
    uint64_t headBytes = 0;   ///< the head's octets (request line to the blank line)
    uint64_t requestBytes = 0;  ///< the client's payload of the exchange (head and any body)
    uint64_t responseBytes = 0; ///< the server's payload of the exchange
    uint64_t packet = 0;      ///< 0-based index of the packet with its first octet
    uint64_t thinkNs = 0;     ///< the client's think time before it, as captured (0 for a connection's first)
};

struct HttpTraceConnection
{
    uint64_t synNs = 0;
    std::vector<HttpTraceRequest> requests; ///< in order; at least one
};

/// The HTTP requests of a capture, connection by connection (IPv4 TCP;
/// lb-testers.h ReadTraceConnections with each exchange's request octets):
/// every exchange the client sent payload in is a request whose head must
/// parse (dp_http_feed) from the captured octets. Exchanges without
/// client payload and connections without one are left out. Throws
/// TraceError naming the file and the packet: the pcap's own faults, a
/// head the parser refuses (its error's name), a head not whole in the
/// capture (a snaplen cut it), or no request in the file.
std::vector<HttpTraceConnection> ReadHttpTrace(const std::string& path);

/// Builds and runs the testbed (Simulator run and destroyed); throws
/// std::invalid_argument on an inconsistent configuration.
WebBenchTestbedResult RunWebBenchTestbed(const WebBenchTestbedConfig& c);

} // namespace routertwin

#endif
