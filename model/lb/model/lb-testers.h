// The Tolly report's testers (seed 000) as reusable generators of real
// frames for an L4Balancer, at descriptor level: each packet is a frame the
// balancer's C core really parses, looks up, tracks and rewrites, but it
// travels through the device as a PacketDesc, and no TCP stack runs at the
// endpoints. Why that is enough for these tests: they measure the balancer's
// CPU per transaction / connection / query and its table capacity; the
// testers in the report were driven open-loop at set rates (load steps), the
// servers were emulated by the same test sets, and nothing in the figures
// depends on end-host TCP dynamics (windows, retransmission).
//
// Workloads (one "unit" = one transaction, connection or query):
//   http11  IxLoad HTTP/1.1: users x connsPerUser persistent TCP connections
//           (96 x 20), user i on virtual service i mod services, opened
//           before the run (SYN, SYN-ACK, ACK through the balancer). A
//           transaction is 2 packets through the balancer: the request
//           (requestBytes of HTTP, 64 in the report) and the response. Their
//           ACKs ride on the next request and on the response (delayed ACK,
//           RFC 1122 4.2.3.2, with back-to-back transactions on a persistent
//           connection), so no pure ACK crosses the balancer. Transactions go
//           round robin over the connections.
//   http10  Avalanche HTTP/1.0: a new connection per unit, 8 packets through
//           the balancer: SYN, SYN-ACK, ACK, request, response, server FIN
//           (HTTP/1.0: the server closes), client FIN, server's last ACK.
//           With SYN cookies: SYN (answered with a cookie), ACK (validated,
//           opened, sent on as the SYN), server SYN-ACK, request, response,
//           server FIN, client FIN, last ACK: also 8.
//   dns     Avalanche DNS: one UDP query per unit to the service's VIP:53,
//           "s<n>.example. A", answered in place by the balancer.
//   synflood IxExplorer: 64-byte SYNs from random spoofed sources (198.18.0.0/15)
//           and ports to random VIPs; beside it an http10 stream at legitRate
//           (the report's 1,200 legitimate TPS, IxLoad).
// Units start at a constant rate (or Poisson, seeded; or on/off bursts or a
// two-state MMPP, traffic-profile.h's ArrivalProcess at the stream's rate,
// for bursty offered load); the packets of a unit follow its start at
// stepGap intervals (a LAN round trip, assumption).
//
// Request and response sizes (http11, http10; issue 16): each unit draws
// its request and its response bytes (PayloadSizes: fixed, an empirical
// table, or a Pareto or lognormal X, ceil(X) bytes; its own random stream
// of the seed, so the unit starts and addresses of a seed do not move). A
// request or response of B bytes is ceil(B / mss) segments (at least one;
// the last carries the remainder), and the client acknowledges every second
// segment of a response (RFC 1122 4.2.3.2), except the last, whose ACK
// rides on the client's next packet as before: a response of n segments is
// n + floor((n - 1) / 2) packets. So with an http10 response size
// distribution the bytes per connection are heavy-tailed, and a long flow
// costs the balancer by its bytes: a frame per segment and per ACK, and
// each frame's octets on the egress line. One segment each way (B <= mss)
// is the script above, unchanged.
//
// TCP windows (`window.enabled`; off: the script's step gaps as above).
// A response of several segments is sent as a TCP sender with no loss
// does: slow start from an initial window of `initialSegments` (10, RFC
// 6928), the window growing by the segments each ACK acknowledges (RFC
// 3465 with L = 2 SMSS, as Linux's tcp_slow_start counts acked packets:
// with an ACK every second segment the window doubles each round trip),
// never above the receiver's window (receiveWindowBytes / mss segments).
// Segments leave back to back at the sender's port rate (frame + 20
// octets of preamble and gap each); the client's ACK of segments 2j and
// 2j+1 crosses the balancer one round trip (`rttSeconds`, client and
// back) after segment 2j+1's last bit left the sender, and the sender
// takes it then. The balancer sits at the servers' end of the path, so a
// server's segment crosses it when sent, and every client packet that
// answers a server packet (the handshake's ACK, the next request of a
// keep-alive connection, the client's FIN) crosses it one RTT after that
// packet; other steps keep the step gap. The ACK clock is the path's
// round trip, not the device's queueing (the tester is open loop); the
// window persists across the responses of one connection (idle gaps are
// shorter than any RTO, RFC 5681 4.1). So a response of S segments whose
// flights fit a round trip takes ceil(log2(S / IW + 1)) rounds, and a long
// one moves at min(rwnd / RTT, the port's rate). A request of several
// segments goes the same way from the client (its own window): the
// server acknowledges every second segment but the last (whose ACK rides
// on the response), its ACK crosses the balancer when sent, and the
// segments it lets the client send cross one RTT after the last bit of
// the segment it acknowledged, so rounds and rates are those of a response.
//
// Trace-driven connections (http10): a pcap or pcapng file of TCP flows
// (ReadTraceConnections) gives each unit its start and its exchanges: the
// IPv4 connections the trace opens (a SYN without ACK) in the order of
// their SYNs, each with the payload its client and its server sent until
// both FINs or a RST, cut into request/response exchanges where the
// client speaks again after the server did (HTTP/1.1 keep-alive: several
// requests on one connection; HTTP/1.0: one). Unit n is connection n mod
// N, pass n / N, started at its SYN's instant since the first SYN,
// rescaled so connections start at `rate` a second (or as captured),
// passes one mean gap apart; each exchange's request follows the previous
// response's last packet by a step gap (windows: a round trip) and the
// client's think time captured before it, on the trace's time scale. IPv6 connections are counted
// (TraceConnections::ipv6*) and not replayed: the balancer's session table
// keys IPv4 5-tuples (dp_flow_key_t).
//
// Direct routing and IP-in-IP tunnelling (repliesBypass): the servers own
// the VIP (on a loopback, as LVS-DR and LVS-TUN require) and answer the
// client directly, so the server's packets of a script (SYN-ACK, response,
// FIN, last ACK) do not cross the balancer: they reach the client at their
// send time. Only the client's packets go through it (http10: SYN, ACK,
// request, FIN = 4; http11: the request = 1). Every client packet the
// balancer forwards is checked as its server would receive it: full NAT
// SNAT:port -> server:80; DR the server's MAC (02:00:00:01:00:<server>)
// with the client's IP packet unchanged (client -> VIP:80); tunnel an outer
// IPv4 header (protocol 4) to the server's address around the client's
// packet unchanged; and every packet of a connection must reach the same
// server (persistence). Packets failing a check are DeliveryErrors().
//
// Path MTU discovery (tunnel, windows off). A client segment the balancer
// cannot tunnel comes back as ICMP fragmentation needed (L4Balancer); the
// client then does what Linux's TCP does (RFC 1191 / RFC 8201,
// tcp_v4_mtu_reduced): its send mss becomes the next-hop MTU less 40, the
// request goes again from the dropped segment on, cut to that mss, as the
// unit's next steps (one step gap, this model's round trip, later), and the
// path MTU is cached per (client address, VIP), as Linux caches it per
// destination (10 minutes, longer than any run), for the client's later
// connections. A request segment already on its way when the first ICMP
// comes back (at packet level, an answer that waits on its core longer
// than a step gap) is dropped and answered too and changes nothing more;
// at most kMaxSegmentsInFlight of them. Units of such a run go through the
// heap, each with spare steps that are sent only if a retransmission needs
// them (Spare). With windows on, an ICMP fails its unit (not modelled).
// http10 and DNS clients take consecutive addresses (198.18.0.0 + unit mod
// 131072), so that at packet level consecutive units go round the tester's
// client ports.
#ifndef ROUTERTWIN_LB_TESTERS_H
#define ROUTERTWIN_LB_TESTERS_H

#include "l4-balancer.h"
#include "latency-histogram.h"
#include "random-stream.h"
#include "traffic-profile.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

namespace routertwin
{

/// Bytes of a frame buffer of either level: a jumbo frame (mss 8960: 9014
/// octets without FCS) with room in front for a tunnel's outer header.
constexpr size_t kLbFrameBuffer = 9216 + 128;

enum class LbWorkload : uint8_t
{
    kHttp11,
    kHttp10,
    kDns,
    kSynFlood,
};

/// "http11", "http10", "dns", "synflood"; throws std::invalid_argument.
LbWorkload ParseLbWorkload(const std::string& name);
const char* LbWorkloadName(LbWorkload w);

/// Bytes of HTTP payload one unit sends one way, drawn per unit from an
/// empirical table (bytes, weight = share of units) or as ceil(X) of a
/// Pareto or lognormal X (heavy.kind; X in bytes); neither: the config's
/// fixed requestBytes / responseBytes.
struct PayloadSizes
{
    std::vector<std::pair<uint32_t, double>> table;
    FlowSizeDistribution heavy;
    bool Fixed() const { return table.empty() && heavy.kind == FlowSizeKind::kNone; }
    /// Throws std::invalid_argument naming `what` (a table and a heavy tail
    /// together, a bad weight or parameter).
    void Validate(const std::string& what) const;
};

/// A request and its response on one connection: payload octets each way.
struct TraceExchange
{
    TraceExchange(uint64_t request = 0, uint64_t response = 0, uint64_t think = 0)
        : requestBytes(request), responseBytes(response), thinkNs(think)
    {
    }
    uint64_t requestBytes = 0;  ///< client to server
    uint64_t responseBytes = 0; ///< server to client
    /// The client's think time before this request: from the previous
    /// exchange's last server payload to this request's first payload, as
    /// captured (0 for the first exchange)
    uint64_t thinkNs = 0;
    /// With ReadTraceConnections' keepRequests: the client's payload octets
    /// of this exchange as captured, in capture order, at most
    /// kKeptRequestBytes of them (a request head the web switch accepts is
    /// no longer: its kHeadCap), and the 0-based index of the packet that
    /// carried its first octet (for an error naming it)
    std::string request;
    uint64_t requestPacket = 0;
};

/// Most request octets an exchange keeps (ReadTraceConnections keepRequests).
constexpr size_t kKeptRequestBytes = 16384;

/// One TCP connection of a trace: its SYN's instant and the payload octets
/// each side sent on it, in total and exchange by exchange (a new exchange
/// begins when the client sends payload after the server has; payload the
/// server sends first opens an exchange with an empty request).
struct TraceConnection
{
    uint64_t synNs = 0;
    uint64_t requestBytes = 0;  ///< client to server
    uint64_t responseBytes = 0; ///< server to client
    std::vector<TraceExchange> exchanges; ///< at least one (empty: 0 and 0)
};

struct TraceConnections
{
    std::vector<TraceConnection> connections; ///< in SYN order
    /// TCP segments on no open connection (not used): of connections whose
    /// SYN the capture missed, or after a connection ended (a last ACK)
    uint64_t segmentsUnmatched = 0;
    uint64_t otherPackets = 0;       ///< packets that are neither IPv4 nor IPv6 TCP (not used)
    /// IPv6 TCP, not replayed (the balancer's session table is IPv4-only):
    /// connections opened (SYN without ACK) and every IPv6 TCP packet
    uint64_t ipv6Connections = 0;
    uint64_t ipv6Packets = 0;
};

/// Streams the file once (pcap-trace.h). A client is the sender of a SYN
/// without ACK; a connection ends at its second FIN or a RST, and a new SYN
/// on its 4-tuple opens another. keepRequests: each exchange also keeps
/// its request's octets (TraceExchange::request). Throws TraceError.
TraceConnections ReadTraceConnections(const std::string& path, bool keepRequests = false);

struct LbTesterConfig
{
    LbWorkload workload = LbWorkload::kHttp11;
    double rate = 1e5;            ///< units (transactions, connections, queries, flood SYNs) per second
    double legitRate = 0;         ///< synflood: legitimate http10 connections per second beside it
    uint32_t users = 96;          ///< http11
    uint32_t connsPerUser = 20;   ///< http11
    uint32_t requestBytes = 64;   ///< HTTP request (TCP payload), unless `request` draws it
    uint32_t responseBytes = 64;  ///< HTTP response (TCP payload), assumption; unless `response` draws it
    PayloadSizes request;         ///< drawn request sizes (none: requestBytes)
    PayloadSizes response;        ///< drawn response sizes (none: responseBytes)
    uint32_t mss = 1460;          ///< TCP payload per segment, 1..8960 (a 9000-byte jumbo MTU less 40)
    /// TCP windows for the responses (see the header comment); off: the
    /// script's step gaps between segments.
    struct Window
    {
        bool enabled = false;
        uint32_t initialSegments = 10;      ///< RFC 6928
        uint32_t receiveWindowBytes = 65535; ///< largest window without RFC 7323 scaling (assumption)
        double rttSeconds = 10e-6;          ///< client-server round trip (a LAN's, as stepGap: assumption)
        double senderBitRate = 10e9;        ///< the server's port (the Tolly ports are 10GbE)
    } window;
    /// http10: connections from this pcap/pcapng file (see the header
    /// comment) instead of starts by `bursts`/`poisson` and drawn sizes.
    std::string traceFile;
    bool traceRescale = true;     ///< connections start at `rate` a second; false: as captured
    double stepGapSeconds = 10e-6;///< between the packets of one unit
    bool poisson = false;         ///< Poisson unit starts instead of constant spacing
    /// kOnOff or kMmpp2: unit starts of that process (its meanPps is set to
    /// each stream's rate; on/off peakPps = burstPeakRatio x that rate).
    /// kConstant / kPoisson: as `poisson` says.
    ArrivalConfig bursts;
    double burstPeakRatio = 4;
    uint64_t seed = 1;
    /// Which persistent connection carries each http11 transaction, and which
    /// service each http10 connection or DNS query asks for (and a flood SYN
    /// hits, unchanged: uniform): the rotation (unit n: n mod N, the
    /// report's), uniform, or Zipf (rank k has weight k^-zipfExponent) over
    /// the connections or services (traffic-profile.h FlowPicker, its own
    /// random stream of the seed).
    FlowPopularity popularity = FlowPopularity::kRoundRobin;
    double zipfExponent = 1.0;
    bool synCookies = false;      ///< the balancer answers SYNs with cookies (http10 script)
    LbForwarding forwarding = LbForwarding::kFullNat; ///< the balancer's; DR and tunnel: replies bypass it
};

/// One packet to send: when, which unit, which step of its script.
struct LbTxPacket
{
    uint64_t timePs;
    uint64_t unit;   ///< unit number within its stream
    uint32_t step;   ///< index into the unit's script (the stream's, its sizes segmented)
    uint8_t stream;  ///< 0: the workload, 1: the legitimate stream beside a flood
};

class LbTester
{
  public:
    LbTester(const LbTesterConfig& config, uint32_t services);

    /// http11: opens the persistent connections through `lb` (not timed,
    /// as IxLoad opens them before its measurement). Other workloads: nothing.
    void Setup(L4Balancer& lb);

    /// No unit starts at or after endPs (the end of the offered traffic).
    void SetEnd(uint64_t endPs) { m_endPs = endPs; }

    /// Appends to out, in time order, every packet due before untilPs (units
    /// start before the end; their later packets follow past it).
    void Emit(uint64_t untilPs, std::vector<LbTxPacket>& out);

    /// Writes the packet's frame (no FCS) into buf (cap bytes): returns its
    /// length (0 if it does not fit). An http11 frame is copied from its
    /// connection's template for that step (built once by BuildFromSpec),
    /// with the IP identification patched and the header checksum updated
    /// (RFC 1624), as a hardware tester replays a stream's template: the
    /// same bytes as building it from scratch.
    size_t Build(const LbTxPacket& pkt, uint8_t* buf, size_t cap);
    /// The packet's frame built field by field (dp_build, both checksums
    /// computed in full): what Build's templates must reproduce.
    size_t BuildFromSpec(const LbTxPacket& pkt, uint8_t* buf, size_t cap);

    /// The balancer's verdict on the packet; frame is what left the balancer.
    void OnVerdict(const LbTxPacket& pkt, const LbVerdict& v, const uint8_t* frame, size_t len);
    /// The packet does not cross the balancer (a server's reply under DR or
    /// tunnel): the caller hands it to OnDeparted at its send time instead.
    bool Bypasses(const LbTxPacket& pkt) const;
    /// Whether the tester has learnt what the packet's frame needs: a
    /// server's packet needs the connection's server and SNAT port (from its
    /// SYN as forwarded to the server), a client's packet after a SYN
    /// answered with a cookie needs the cookie. At descriptor level the
    /// balancer's verdict comes as the frame is offered, so this always
    /// holds; at packet level it comes when the frame arrives, and a packet
    /// due before that is sent when it does (never, if it was lost), as a
    /// real endpoint answers what it received.
    bool CanSend(const LbTxPacket& pkt) const;
    /// The source address of the packet's frame (as Build writes it): the
    /// server's for a server's packet, else the client's. Where a drop
    /// entered the balancer (LbPortMap), without building the frame again.
    uint32_t SourceIp(const LbTxPacket& pkt) const;
    /// The packet is one of a SYN flood's spoofed SYNs.
    bool IsFloodSyn(const LbTxPacket& pkt) const { return m_streams[pkt.stream].kind == LbWorkload::kSynFlood; }
    /// The device dropped the packet (queue full) or the balancer refused it.
    void OnLost(const LbTxPacket& pkt);
    /// The packet is a unit's spare step that its script did not need (see
    /// the path MTU discovery comment): send nothing, count nothing.
    bool Spare(const LbTxPacket& pkt) const;
    /// ICMP fragmentation-needed messages the clients acted on (lowered their mss).
    uint64_t PathMtuLearnt() const { return m_pathMtuLearnt; }
    /// The packet left the device at departPs.
    void OnDeparted(const LbTxPacket& pkt, uint64_t departPs);

    /// Units of a stream started in [fromPs, toPs), and units that completed
    /// in [fromPs, toPs): every packet delivered, the last one leaving the
    /// device in that span (a flood SYN completes when answered or forwarded).
    /// Counting completions when they happen keeps a backlog served after the
    /// window out of the rate, as a tester counting replies per second does.
    uint64_t Started(uint8_t stream, uint64_t fromPs, uint64_t toPs) const;
    uint64_t Completed(uint8_t stream, uint64_t fromPs, uint64_t toPs) const;
    /// Units of a stream started in [fromPs, toPs) that failed: a packet
    /// refused by the balancer or lost in the device.
    uint64_t Failed(uint8_t stream, uint64_t fromPs, uint64_t toPs) const;
    /// The response times of the units of a stream that completed in
    /// [fromPs, toPs) (those Completed counts): from the unit's start (its
    /// first packet sent) to its last packet delivered, seconds.
    LatencyHistogram UnitLatency(uint8_t stream, uint64_t fromPs, uint64_t toPs) const;
    /// Packets a unit of the stream sends through the balancer (the mean
    /// over the units started when sizes vary; the script's count before any).
    double PacketsPerUnit(uint8_t stream) const;
    /// Client packets the balancer forwarded towards a server, and those that
    /// would not reach the connection's server as the forwarding method
    /// requires (see the header comment).
    uint64_t FramesToServers() const { return m_framesToServers; }
    /// The persistent connection (http11) and the service of a unit started.
    uint32_t ConnectionOf(uint8_t stream, uint64_t unit) const { return m_streams[stream].units[unit].conn; }
    uint32_t ServiceOf(uint8_t stream, uint64_t unit) const { return m_streams[stream].units[unit].service; }
    /// The trace's IPv6 TCP connections and packets, not replayed (zero without a trace).
    uint64_t TraceIpv6Connections() const { return m_traceIpv6Connections; }
    uint64_t TraceIpv6Packets() const { return m_traceIpv6Packets; }
    uint64_t DeliveryErrors() const { return m_deliveryErrors; }

  private:
    enum Role : uint8_t
    {
        kFixed,    // one packet as written
        kRequest,  // the unit's request, segmented
        kResponse, // the unit's response, segmented, with the client's ACKs
    };
    struct Step
    {
        uint8_t fromServer; // 1: server -> balancer
        uint8_t flags;      // TCP flags; 0 for UDP
        uint16_t payload;   // bytes
        Role role = kFixed;
    };
    struct Unit
    {
        uint64_t startPs = 0;
        uint32_t clientIp = 0;
        uint16_t clientPort = 0;
        uint16_t service = 0;
        uint32_t serverIp = 0;   // learnt from the forwarded SYN
        uint16_t snatPort = 0;
        uint32_t cookie = 0;     // the SYN-ACK's sequence number
        uint64_t requestBytes = 0, responseBytes = 0;
        uint32_t trace = UINT32_MAX; // its trace connection (its exchanges), if any
        uint32_t steps = 0;      // packets of its script
        bool cookieKnown = false; // the SYN-ACK carrying it arrived
        uint32_t delivered = 0;  // packets delivered
        uint64_t lastDepartPs = 0;
        bool failed = false;
        uint32_t conn = 0;       // http11: connection index
        uint32_t server = UINT32_MAX; // the server its forwarded packets reached (delivery check)
        uint32_t cwnd = 0;       // windows on: the server's congestion window in segments (0: not opened)
        uint32_t cwndUp = 0;     // windows on: the client's
        uint32_t mssUp = 0;      // the client's send mss (0: the config's), lowered by path MTU discovery
        uint32_t mssBefore = 0;  // its mss before, for the segment the ICMP answered
        uint32_t retxStep = UINT32_MAX; // that segment's step; the script from it on follows it again
        uint32_t retxCount = 0;  // segments from retxStep on answered with ICMP (sent before the first came back)
    };
    struct Stream
    {
        LbWorkload kind;
        double rate;
        std::vector<Step> script;
        std::vector<Unit> units;   // indexed by unit number (kept for the window counts)
        uint64_t nextStartPs = 0;
        uint64_t nextUnit = 0;
        /// Per script step, the next unit whose packet of that step Emit has
        /// not handed out: each step's packets are in unit order and time
        /// order, so Emit merges these few sequences instead of keeping a
        /// heap of every pending packet.
        std::vector<uint64_t> stepCursor;
        /// Every unit has the stream's script as written (one segment each
        /// way, no trace): step cursors and http11 templates apply. Else its
        /// units' packets go through m_heap.
        bool uniform = true;
        std::shared_ptr<ArrivalProcess> starts; // on/off, MMPP unit starts
    };
    struct Conn // http11 persistent connection
    {
        uint32_t clientIp;
        uint16_t clientPort;
        uint16_t service;
        uint32_t serverIp;
        uint16_t snatPort;
        uint32_t server; // delivery check, as Unit::server
    };

    Unit& UnitOf(const LbTxPacket& pkt) { return m_streams[pkt.stream].units[pkt.unit]; }
    const Unit& UnitOf(const LbTxPacket& pkt) const { return m_streams[pkt.stream].units[pkt.unit]; }
    // The unit's packets: its stream's script with the request and the
    // response cut into segments (see the header comment).
    uint32_t Segments(uint64_t bytes) const;
    static uint32_t Segments(uint64_t bytes, uint32_t mss);
    uint32_t UpMss(const Unit& u) const { return u.mssUp ? u.mssUp : m_cfg.mss; }
    /// Tunnel forwarding with windows off: the clients do path MTU discovery.
    bool PathMtuDiscovery() const { return m_cfg.forwarding == LbForwarding::kTunnel && !m_cfg.window.enabled; }
    /// Request segments that may be on their way when the first ICMP comes
    /// back (sent a step gap apart: two when the answer takes longer than one
    /// gap, as a SYN's 12.5 us on an ADX core does; more fail the unit).
    static constexpr uint32_t kMaxSegmentsInFlight = 2;
    /// Steps the heap chain runs past the script, kept for retransmissions
    /// (sent only if needed: Spare).
    uint32_t SpareSteps(const Unit&) const { return PathMtuDiscovery() ? kMaxSegmentsInFlight : 0u; }
    static uint64_t PathKey(uint32_t clientIp, uint32_t vip) { return (uint64_t{clientIp} << 32) | vip; }
    void OnFragmentationNeeded(const LbTxPacket& pkt, const Step& s, const uint8_t* icmp, size_t len);
    /// Packets of a response of this many bytes: its segments and the client's ACKs.
    uint32_t ResponsePackets(uint64_t bytes) const;
    /// Packets of a request at the client's mss: its segments, and with windows the server's ACKs.
    uint32_t RequestPackets(uint64_t bytes, uint32_t mss) const;
    /// The unit's exchanges: its trace connection's, or its one request and response.
    const TraceExchange* Exchanges(const Unit& u, size_t& n, TraceExchange& one) const;
    uint32_t StepsOf(const Stream& st, const Unit& u) const;
    /// Step k of the unit; `transferFirst` (if given) is set to the step of
    /// the first packet of the request or response k belongs to, or
    /// UINT32_MAX if k is a fixed step; `transferBytes` to its bytes.
    Step StepOf(const Stream& st, const Unit& u, uint32_t k, uint32_t* transferFirst = nullptr,
                uint64_t* transferBytes = nullptr) const;
    /// StepOf with the script cut at upMss for the client's request (no retransmission).
    Step StepAt(const Stream& st, const Unit& u, uint32_t k, uint32_t upMss, uint32_t* transferFirst,
                uint64_t* transferBytes) const;
    /// The think time (ps, on the trace's time scale) before step k, if k is
    /// the first request segment of a trace connection's second or later
    /// exchange; else 0.
    uint64_t ThinkPs(const Stream& st, const Unit& u, uint32_t k) const;
    /// Windows on: queues step `step` of the unit of `of` at t, or, if it
    /// begins a request or response of several segments, all of that
    /// transfer (ScheduleTransfer).
    void QueueStep(const LbTxPacket& of, uint64_t t, uint32_t step, uint64_t gapPs);
    /// Windows on: queues every packet of the request (upload) or response
    /// of `bytes` whose first packet is step `first` of the unit, the first
    /// segment at t0 (see the header comment), then the step after it; the
    /// sender's window carries over to its next transfer.
    void ScheduleTransfer(const LbTxPacket& at, uint64_t t0, uint32_t first, uint64_t bytes, bool upload,
                          uint64_t gapPs);
    uint64_t DrawBytes(const PayloadSizes& sizes, uint32_t fixedBytes, const DiscreteSampler& table);
    /// The server a forwarded client frame reaches, UINT32_MAX if the frame
    /// is not what the forwarding method must produce for this client packet.
    uint32_t ServerOfForwarded(uint32_t clientIp, uint16_t clientPort, uint32_t service, const uint8_t* frame,
                               size_t len) const;
    void CheckDelivery(uint32_t& server, uint32_t clientIp, uint16_t clientPort, uint32_t service,
                       const uint8_t* frame, size_t len);
    bool Bypass() const { return m_cfg.forwarding != LbForwarding::kFullNat; }

    LbTesterConfig m_cfg;
    uint32_t m_services;
    std::vector<Stream> m_streams;
    std::vector<Conn> m_conns;
    /// http11 templates: the frame of (connection, step) with IP id 0, at
    /// m_templateBytes[(conn x steps + step) x m_templateStride], its length in
    /// m_templateLen (0: not built yet).
    std::vector<uint8_t> m_templateBytes;
    std::vector<LbTxPacket> m_heap; // units of their own sizes: each one's next packet, min-heap
    std::vector<uint16_t> m_templateLen;
    size_t m_templateStride = 0;
    RandomStream m_rng;
    RandomStream m_sizeRng; // request and response sizes
    std::unique_ptr<FlowPicker> m_picker; // popularity: http11 connections, or services
    // trace-driven connections: unit n is m_trace[n % N] of pass n / N
    std::vector<TraceConnection> m_trace;
    double m_tracePsPerNs = 0, m_tracePassPs = 0;
    uint64_t TraceStartPs(uint64_t unit) const;
    DiscreteSampler m_requestTable, m_responseTable;
    uint64_t m_endPs = UINT64_MAX;
    uint64_t m_framesToServers = 0, m_deliveryErrors = 0;
    uint64_t m_traceIpv6Connections = 0, m_traceIpv6Packets = 0;
    /// Path MTU discovery: the mss each client learnt towards each VIP (PathKey).
    std::unordered_map<uint64_t, uint32_t> m_pathMss;
    uint64_t m_pathMtuLearnt = 0;
};

} // namespace routertwin

#endif
