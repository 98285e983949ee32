// A cell-switched router with POS line cards, replaying an RFC 2544 tester:
// the Juniper T640 of seed 001 (docs/t640.md) is its reference instance.
//
// Path of a packet (every stage works on the packet's real octets or on a
// compact descriptor, never on an ns3::Packet):
//   tester port p  --POS line, stuffing from the packet's octets-->
//   ingress PFE: route lookup (core dp_lpm, DIR-24-8) on a lookup engine of
//     finite probe rate; segmentation into ceil((ip + internal header) /
//     cell payload) cells queued in the PFE's fabric input buffer (VOQs)
//   crossbar fabric (fabric-crossbar.h), one port per PFE, slot = one cell
//     time at the PFE's fabric bandwidth
//   egress PFE: reassembly, TTL - 1 and RFC 1624 checksum update, re-framing
//     (new FCS, new escapes) and the egress queue of the output port
//   --POS line--> tester port q.
// Latency reported = fixed pipeline latency (calibrated) + the waits the
// model produces (lookup, fabric, egress queue) + the egress frame's
// serialization beyond the ingress frame's.
//
// Two modes over the same configuration:
// - RunRouterPacketLevel: every packet, fabric slot by slot; ns-3 events at
//   batch boundaries (helper/router-scenario.h). For windows of ms.
// - RunRouterSteadyState: rates from a measured sample of real packets, and
//   the queues of the fabric and egress ports as Lindley recursions over
//   blocks of packets with Gaussian block increments (a diffusion
//   approximation), for the 30 s and 5 min tests.
#ifndef ROUTERTWIN_ROUTER_MODEL_H
#define ROUTERTWIN_ROUTER_MODEL_H

#include "fabric-crossbar.h"
#include "latency-histogram.h"
#include "pos-framing.h"
#include "queue-length-histogram.h"
#include "traffic-profile.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

/// Drop reasons of the router model (named counters).
enum class RouterDrop
{
    NoRoute,           ///< LPM miss
    LookupQueueFull,   ///< lookup engine backlog beyond its queue
    IngressBufferFull, ///< fabric input buffer of the PFE cannot take the cells
    EgressBufferFull,  ///< egress port queue beyond its buffer
    Blackhole,         ///< the matching route is a blackhole (discarded silently)
    Unreachable,       ///< the matching route is unreachable (a router answers ICMP; the twin drops)
    Prohibited,        ///< the matching route is prohibit (ICMP administratively prohibited; dropped)
    NotIpv4,           ///< a replayed trace packet routed by its own destination is not IPv4
    Count
};
const char* RouterDropName(RouterDrop d);
/// Every RouterDropName in RouterDrop order: the reason axis of the loss timeline.
std::vector<std::string> RouterDropNames();

struct RouterConfig
{
    // Line cards.
    unsigned ports = 32;          ///< POS ports, paired p <-> p + ports/2
    unsigned portsPerPfe = 2;     ///< ports sharing a packet forwarding engine
    unsigned sonetN = 192;        ///< STS-Nc of every port
    PppHdlcConfig ppp;            ///< framing on the tester links

    // Tester traffic.
    unsigned ipBytes = 40;        ///< every packet's size, or the reference size of a mix
    /// IP packet sizes and weights (share of packets) of a mix; empty: ipBytes.
    /// Every packet carries its own size: its stuffing, cells, serialization
    /// and line-rate share follow it. Packet mode only.
    std::vector<std::pair<unsigned, double>> ipMix;
    bool ipMixSequence = false;   ///< sizes in a fixed interleaving (smooth WRR) instead of drawn
    /// A pcap or pcapng file (pcap-trace.h) every tester port replays: each
    /// packet's IP size (clamped to 32..9000) and the trace's inter-arrival
    /// times, rescaled so that a port offers offeredLoad of its theoretical
    /// rate for the trace's sizes, and looped until durationSeconds; port p
    /// starts p / ports of the way into the trace. Packet mode only; not
    /// with ipMix.
    std::string traceFile;
    /// One trace per tester port instead (ports entries, or empty): port p
    /// replays portTraceFiles[p] from its first packet, rescaled to
    /// offeredLoad of its own theoretical rate and looped; "" leaves port p
    /// idle (the theoretical rate counts the replaying ports only). Not with
    /// traceFile.
    std::vector<std::string> portTraceFiles;
    /// A trace's packets carry the trace's IPv4 source and destination and
    /// go where the FIB sends the destination (ECMP hashes the trace's
    /// source); a packet that is not IPv4 is dropped as not_ipv4. false: the
    /// tester's addresses (port p to its peer, as without a trace).
    bool traceDestinations = true;
    bool Traced() const { return !traceFile.empty() || !portTraceFiles.empty(); }
    double offeredLoad = 1.0;     ///< fraction of the theoretical frame rate; 1 = back to back
    /// The tester's frame instants on each port (traffic-profile.h, each
    /// port its own random stream of the seed): kConstant, the nominal
    /// spacing; kPoisson, kOnOff (bursts at burstPeakLoad of the port's
    /// theoretical rate) or kMmpp2 at offeredLoad of the port's theoretical
    /// rate (its mix's, if any). A frame starts at its instant or when the
    /// one before has left the wire: that wait is the tester's
    /// (RouterResult::testerWait*), outside the latency, which starts at
    /// the frame's first bit. Packet mode only; not with a trace
    /// (it brings its own times). arrivals.meanPps and peakPps are set per port.
    ArrivalConfig arrivals;
    double burstPeakLoad = 1.0;   ///< on/off: rate inside a burst, share of the port's theoretical rate
    /// Which of its destinations each tester packet goes to: the rotation
    /// (packet k: k mod n), uniform, or Zipf (the port's destination of rank
    /// k, in route order, has weight k^-zipfExponent); each port its own
    /// random stream of the seed. Packet mode; not with a trace.
    FlowPopularity destinationPopularity = FlowPopularity::kRoundRobin;
    double zipfExponent = 1.0;
    /// Flow-level traffic when its kind is not kNone (FlowLevelProcess,
    /// traffic-profile.h): each port's flows start at the instants of
    /// `arrivals` (any kind) at offeredLoad x the theoretical rate / E[S]
    /// flows/s, carry S = ceil(X) packets (X Pareto or lognormal) spaced
    /// 1 / flowPps, then end. A flow's packets go to one destination (its
    /// id mod the port's destinations, ids recycled first ended first
    /// reused from 4 x flowsPerPort + 64), so what its heavy tail changes
    /// is when packets come and, through a route file, where they go in
    /// bursts. Packet mode; not with a trace nor a destination popularity.
    FlowSizeDistribution flowSizes;
    double flowPps = 0;           ///< each flow's packet rate; 0: the port's offered rate / flowsPerPort
    uint32_t flowsPerPort = 1000; ///< mean flows active at once a port when flowPps is 0 (Little)
    uint32_t routes = 0;          ///< BGP routes installed, spread evenly over the peers
    bool routesAsDestinations = false; ///< else the peer's interface address is the destination
    uint32_t routeFirstPrefix = 0x10000000; ///< first /24 of the generated routes (16.0.0.0)
    /// Optional FIB file instead of the generated routes: lines "a.b.c.d/len TARGET",
    /// TARGET a port, ports "p,q,..." (ECMP, hash-threshold over source and
    /// destination), or blackhole | unreachable | prohibit (docs/import.md).
    /// With routesAsDestinations and routes 0 the destinations are the file's
    /// routes (route i's first host address goes to the stream whose peer is
    /// i % ports); with routes > 0 they are generated as without a file.
    std::string routeFile;

    // Forwarding engine.
    double lookupProbesPerSecond = 1e8; ///< per PFE: DIR-24-8 table reads per second
    double lookupQueueSeconds = 10e-6;  ///< lookup backlog allowed before dropping

    // Fabric.
    unsigned cellBytes = 64;          ///< cell payload octets
    unsigned internalHeaderBytes = 24;///< per-packet octets carried in the cells with the IP packet
    double fabricBpsPerPfe = 48.4e9;  ///< cell payload bandwidth of one PFE's fabric port
    FabricQueueing queueing = FabricQueueing::Voq;
    FabricScheduler scheduler = FabricScheduler::Islip;
    unsigned islipIterations = 1;
    unsigned speedup = 1;
    double ingressBufferSeconds = 0.1; ///< fabric input buffer of a PFE, at its fabric rate
    double egressBufferSeconds = 0.1;  ///< per egress port, at its line rate

    // Latency.
    double fixedLatencySeconds = 18.68e-6; ///< pipeline latency with empty queues

    // Run.
    double durationSeconds = 1e-3; ///< tester transmit time
    uint64_t seed = 1;
    double batchSeconds = 1e-6;    ///< ns-3 event spacing (packet level)
    uint64_t sampleFrames = 100000;///< frames per port measured by the steady-state mode
    uint64_t blockPackets = 10000; ///< packets per Lindley block (steady state)
    unsigned lossBins = 100;       ///< time bins of the per-port drop timeline over durationSeconds

    /// Throws std::invalid_argument naming the field when inconsistent.
    void Validate() const;
    unsigned Pfes() const { return ports / portsPerPfe; }
    /// Port that port p's traffic goes to (1<->17, 2<->18, ... for 32 ports).
    unsigned PeerOf(unsigned p) const { return (p + ports / 2) % ports; }
    /// Cells one packet of ipBytes occupies.
    unsigned CellsPerPacket() const;
    unsigned CellsPerPacket(unsigned ip) const;
    /// Theoretical frames/s of one port (no escapes) for ipBytes or the mix.
    double TheoreticalPortPps(double payloadBps) const;
    /// Simulated seconds after which a packet-level run stops even if not
    /// drained: the tester's time, the longest a packet can wait in the
    /// lookup queue and both buffers, and 1 ms.
    double RunLimitSeconds() const;
};

struct RouterPortStats
{
    uint64_t txPackets = 0;
    uint64_t rxPackets = 0;
    uint64_t rxIpBytes = 0;
    double latencySum = 0;
    double latencyMin = 0;
    double latencyMax = 0;
    /// Every delivered packet's latency (packet mode); one entry per block
    /// of packets, weighted by its packets, in steady state (the block's
    /// mean wait: a block's spread inside is not resolved).
    LatencyHistogram latency;
    /// What left the router on this port (packet mode: counted at the
    /// egress queue's admission, whatever tester port sent it).
    uint64_t egressPackets = 0;
    uint64_t egressIpBytes = 0;
    uint64_t egressWireBytes = 0; ///< POS frames with their escapes
    /// Latency of the packets that left on this port, whatever port sent
    /// them (packet mode). Recorded per packet where the FIB can send a
    /// port's packets elsewhere than its peer (a route file, or a trace
    /// routed by its own destinations); otherwise every packet leaving here
    /// came from the peer, and this is the peer's `latency`.
    LatencyHistogram egressLatency;
    /// Packet mode: time-weighted lengths of this port's egress queue
    /// (packets admitted to it whose last bit has not left the line, the one
    /// on the line included), from its first packet to its last; empty in
    /// steady state, whose Lindley walks keep no lengths.
    QueueLengthHistogram egressQueue;
};

struct RouterResult
{
    std::vector<RouterPortStats> ports;
    bool egressCounted = false;     ///< ports' egress counters filled (packet mode)
    double egressLineBps = 0;       ///< a port's line rate (SONET payload), for egress loads
    uint64_t txPackets = 0;
    uint64_t rxPackets = 0;
    double seconds = 0;             ///< tester transmit time
    double txPps = 0;               ///< aggregate
    double rxPps = 0;
    double theoreticalPps = 0;      ///< aggregate, no escapes
    double txPctOfTheoretical = 0;
    double rxPctOfTheoretical = 0;
    double throughputGbps = 0;      ///< IP octets received per second
    double latencyMin = 0;          ///< seconds, over all packets
    double latencyAvg = 0;          ///< mean of the per-port (per-flow) means
    double meanIpBytes = 0;         ///< over the packets received
    double latencyMax = 0;
    double meanIngressEscapes = 0;  ///< per frame, tester side
    double meanEgressEscapes = 0;   ///< per frame, router side
    /// Packet mode: how long frames waited at the tester for its line, from
    /// the instant the arrival process (or the constant schedule, or the
    /// trace) gave them to their first bit (a Poisson tester's collisions;
    /// at line rate, the lag that stuffing adds to the nominal schedule):
    /// mean and maximum (s) and the share of frames that waited at all.
    double testerWaitAvg = 0;
    double testerWaitMax = 0;
    double testerWaitedFraction = 0;
    /// Flow-level traffic (packet mode): flows started after instant 0 on
    /// all ports, the time-average of flows active on all ports together
    /// (each port's FlowLevelProcess accounting over its run), and the
    /// largest number one port had active at once.
    uint64_t flowsStarted = 0;
    double flowsActiveMean = 0;
    uint64_t flowsActiveMaxPort = 0;
    double fabricLoad = 0;          ///< offered cells / fabric capacity, busiest PFE
    double lookupLoad = 0;          ///< offered probes / probe rate, busiest PFE
    std::map<std::string, uint64_t> drops;
    /// Drops by tester port of the packet and time bin (all reasons).
    LossTimeline lossTimeline;
    /// All ports' latency histograms merged.
    LatencyHistogram latency;
    /// All ports' egress queue lengths added (time a port's queue spent at
    /// each length, summed over the ports that sent packets; packet mode).
    QueueLengthHistogram egressQueue;
    std::string bottleneck;         ///< stage with the highest load
    uint64_t lookups = 0;           ///< dp_lpm lookups (packet level)
    uint64_t tableProbes = 0;
};

/// Packet-level run driven by a plain loop over batches (the ns-3 driven
/// run is RunRouterScenario in helper/router-scenario.h; both give the same
/// result for the same config).
RouterResult RunRouterPacketLevel(const RouterConfig& cfg);

/// Steady-state run for long tests.
RouterResult RunRouterSteadyState(const RouterConfig& cfg);

/// Incremental packet-level engine: Advance() simulates up to a time; the
/// helper calls it from ns-3 events.
class RouterEngine
{
  public:
    explicit RouterEngine(const RouterConfig& cfg);
    ~RouterEngine();
    RouterEngine(const RouterEngine&) = delete;
    RouterEngine& operator=(const RouterEngine&) = delete;

    /// Called for every dropped packet: reason and tester port it came from.
    using DropCallback = std::function<void(RouterDrop, unsigned inPort)>;
    /// Called for every delivered packet: tester port and latency (s).
    using DeliverCallback = std::function<void(unsigned inPort, double latencySeconds)>;
    void SetDropCallback(DropCallback cb);
    void SetDeliverCallback(DeliverCallback cb);

    /// Simulates fabric slots up to time t (seconds).
    void Advance(double t);
    /// True when the tester has stopped and nothing is in flight.
    bool Drained() const;
    RouterResult Result() const;

  private:
    struct Impl;
    Impl* m_impl;
};

} // namespace routertwin

#endif
