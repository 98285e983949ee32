// Rfc2544Tester: an RFC 2544-style traffic generator and analyzer on one
// Ethernet port pair, in the manner of Spirent/Ixia testers.
//
// It offers fixed-size frames round-robin over NumFlows flows at OfferedPps
// (constant spacing, or Poisson arrivals shaped by the port), for Duration
// from Start(). Each frame is a PacketDesc carrying its flow, per-flow
// sequence number and tx timestamp (arrivalPs = the instant its last bit
// left the tester, which with a zero-length cable is when the device has it).
// Frames go out in batches, one ns-3 event per BatchInterval, through the
// TransmitCallback; after the last one the DoneCallback fires (the device's
// Flush). Received frames come back through Receive(); the receive
// timestamp is the frame's departPs (its last bit back at the tester), so
// latency = departPs - arrivalPs is last-bit-out to last-bit-in.
//
// Counts tx, rx, loss, latency min/avg/max and its histogram, sequence errors (a frame whose
// sequence number is below one already received in its flow: reordering)
// and the forwarded rate: frames received with departPs inside
// [Start + Warmup, Start + Duration], divided by that window.
//
// SetTraffic (traffic-profile.h, pcap-trace.h) replaces the one frame size,
// the arrivals and the rotation of flows: a frame-size mix (every frame
// carries its own size; "line rate" is that of the mix's mean wire frame),
// on/off or MMPP arrivals, uniform or Zipf flow popularity, or a pcap trace
// replayed with its sizes, flows and inter-arrival times (optionally
// rescaled to OfferedPps and looped until Duration). Random arrivals and
// trace instants are shaped by the port: a frame starts when the previous
// one has left the wire. Constant spacing of a mix gives each frame its own
// wire time / load, so the port carries load x its bit rate. Flow-level
// traffic (TrafficConfig::flowSizes) replaces the fixed flows: flows start
// by the arrival process, carry a Pareto or lognormal number of packets and
// end; its instants are shaped by the port too.
#ifndef ROUTERTWIN_RFC2544_TESTER_H
#define ROUTERTWIN_RFC2544_TESTER_H

#include "latency-histogram.h"
#include "packet-desc.h"
#include "pcap-trace.h"
#include "random-stream.h"
#include "traffic-profile.h"

#include <ns3/callback.h>
#include <ns3/nstime.h>
#include <ns3/object.h>

#include <memory>
#include <vector>

namespace routertwin
{

/// What the tester offers beyond the FrameBytes / Poisson / NumFlows attributes.
struct TrafficConfig
{
    FrameSizeMix mix;            ///< empty: every frame FrameBytes
    /// Sizes in a fixed interleaved sequence (smooth weighted round robin:
    /// every size's share is exact after each cycle of the weights, as in a
    /// tester's repeating IMIX pattern, cf. RFC 6985) instead of drawn at random.
    bool mixSequence = false;
    ArrivalKind arrivals = ArrivalKind::kConstant; ///< kPoisson also when the Poisson attribute is set
    double burstMeanFrames = 16; ///< on/off: mean frames per burst (geometric)
    double burstPeakPps = 0;     ///< on/off: rate inside a burst; 0 = the port's line rate
    double mmppRateRatio = 4, mmppHighFraction = 0.2, mmppCycleSeconds = 1e-3; ///< see ArrivalConfig
    FlowPopularity popularity = FlowPopularity::kRoundRobin;
    double zipfExponent = 1;
    /// Flow-level traffic (FlowLevelProcess) when its kind is not kNone:
    /// flows start by the `arrivals` process at OfferedPps / MeanPackets()
    /// flows/s, each sends its drawn number of packets spaced 1 / flowPps,
    /// then ends, from a stationary start; NumFlows is then the mean number
    /// of flows active at once (with the default flowPps), and flow ids are
    /// 4 x NumFlows + 64 ids recycled (FlowLevelProcess).
    FlowSizeDistribution flowSizes;
    double flowPps = 0;          ///< each flow's packet rate; 0 = OfferedPps / NumFlows
    std::string tracePath;       ///< pcap file: sizes, flows, instants; "" = synthetic traffic
    bool traceRescale = false;   ///< scale the trace's instants to OfferedPps
    bool traceLoop = false;      ///< replay the trace again until Duration
};

struct TesterResults
{
    double offeredPps = 0;     ///< configured offered rate
    uint64_t txPackets = 0;
    uint64_t rxPackets = 0;
    uint64_t lostPackets = 0;  ///< tx - rx (valid once the device drained)
    double forwardedPps = 0;   ///< rx in the steady window / window length
    double latencyMinSeconds = 0, latencyAvgSeconds = 0, latencyMaxSeconds = 0;
    LatencyHistogram latency;  ///< every received frame's latency (percentiles, plots)
    uint64_t sequenceErrors = 0;
    double meanFrameBytes = 0;  ///< over the frames sent
    double forwardedBitRate = 0; ///< frame bits (FCS incl.) received in the window / window
    uint32_t traceFlows = 0;    ///< distinct 5-tuples of a replayed trace
    uint64_t traceLoops = 0;    ///< times a trace was replayed from its start
    uint64_t flowsStarted = 0;  ///< flow-level traffic: flows started (0 otherwise)
    /// Flow-level traffic: time-average over the tester's run of the flows
    /// active (FlowLevelProcess: a flow of S packets for S / flow rate), and
    /// the most active at once.
    double flowsActiveMean = 0;
    uint64_t flowsActiveMax = 0;
};

class Rfc2544Tester : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    Rfc2544Tester();
    ~Rfc2544Tester() override;

    using TransmitCallback = ns3::Callback<void, std::vector<PacketDesc>&>;
    using DoneCallback = ns3::Callback<void>;
    void SetTransmitCallback(TransmitCallback cb);
    void SetDoneCallback(DoneCallback cb);
    /// Before Start(). Throws std::invalid_argument (TraceError for a bad trace).
    void SetTraffic(const TrafficConfig& traffic);
    /// Frames/s at the port's line rate for the configured frame size or mix.
    double LineRatePps() const;

    /// Starts offering at Now(). Throws std::invalid_argument when the
    /// offered rate exceeds the port's line rate for the frame size.
    void Start();

    /// Frames back from the device under test.
    void Receive(const std::vector<PacketDesc>& batch);

    TesterResults Results() const;

  protected:
    void DoDispose() override;

  private:
    void SendBatch();
    void StartSynthetic();
    void StartTrace();
    bool NextFrame(PacketDesc& d);
    uint32_t NextFrameBytes();
    uint64_t TxEnd(double wishPs, uint32_t frameBytes, bool shaped);

    // Random streams of one seed (RandomStream's stream ids).
    static constexpr uint64_t kArrivalStream = 0x2544, kSizeStream = 0x512E, kFlowStream = 0xF10,
                              kFlowSizeStream = 0xF512E;
    static constexpr uint32_t kMaxTraceFlows = 1u << 20; // the engines' per-flow state limit

    // Attributes
    uint32_t m_frameBytes;
    double m_offeredPps;
    double m_portBitRate;
    uint32_t m_numFlows;
    ns3::Time m_duration, m_warmup, m_batchInterval;
    bool m_poisson;
    uint64_t m_seed;

    TransmitCallback m_transmit;
    DoneCallback m_done;
    TrafficConfig m_traffic;
    std::unique_ptr<RandomStream> m_sizeRng;
    DiscreteSampler m_sizes;
    std::vector<double> m_mixCredit; // mixSequence: smooth weighted round robin state
    std::unique_ptr<ArrivalProcess> m_arrivals;
    std::unique_ptr<FlowPicker> m_flows;
    std::unique_ptr<FlowLevelProcess> m_flowLevel;
    std::unique_ptr<PcapTrace> m_trace;
    double m_traceScale = 1, m_traceOffsetPs = 0, m_traceSpanPs = 0;
    uint64_t m_traceFirstNs = 0;
    uint64_t m_traceLoops = 0;
    double m_constClockPs = 0, m_loadInverse = 1;
    uint64_t m_startPs = 0, m_windowStartPs = 0, m_windowEndPs = 0;
    double m_gapPs = 0, m_lastTxEndPs = 0;
    uint64_t m_total = 0, m_sent = 0;
    bool m_havePending = false;
    PacketDesc m_pending{};
    std::vector<PacketDesc> m_batch;
    std::vector<uint32_t> m_nextSeq;
    std::vector<int64_t> m_highestSeq;

    uint64_t m_rx = 0, m_rxInWindow = 0, m_seqErrors = 0;
    double m_txBytes = 0, m_rxBitsInWindow = 0;
    uint64_t m_latMin = UINT64_MAX, m_latMax = 0;
    double m_latSum = 0;
    LatencyHistogram m_latHist;
};

} // namespace routertwin

#endif
