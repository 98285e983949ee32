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
// Counts tx, rx, loss, latency min/avg/max, sequence errors (a frame whose
// sequence number is below one already received in its flow: reordering)
// and the forwarded rate: frames received with departPs inside
// [Start + Warmup, Start + Duration], divided by that window.
#ifndef ROUTERTWIN_RFC2544_TESTER_H
#define ROUTERTWIN_RFC2544_TESTER_H

#include "packet-desc.h"
#include "random-stream.h"

#include <ns3/callback.h>
#include <ns3/nstime.h>
#include <ns3/object.h>

#include <memory>
#include <vector>

namespace routertwin
{

struct TesterResults
{
    double offeredPps = 0;     ///< configured offered rate
    uint64_t txPackets = 0;
    uint64_t rxPackets = 0;
    uint64_t lostPackets = 0;  ///< tx - rx (valid once the device drained)
    double forwardedPps = 0;   ///< rx in the steady window / window length
    double latencyMinSeconds = 0, latencyAvgSeconds = 0, latencyMaxSeconds = 0;
    uint64_t sequenceErrors = 0;
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
    uint64_t NextArrivalPs();

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
    std::unique_ptr<RandomStream> m_rng;
    uint64_t m_startPs = 0, m_windowStartPs = 0, m_windowEndPs = 0;
    double m_gapPs = 0, m_wirePs = 0, m_poissonClockPs = 0, m_lastTxEndPs = 0;
    uint64_t m_total = 0, m_sent = 0;
    bool m_havePending = false;
    uint64_t m_pendingArrival = 0;
    std::vector<PacketDesc> m_batch;
    std::vector<uint32_t> m_nextSeq;
    std::vector<int64_t> m_highestSeq;

    uint64_t m_rx = 0, m_rxInWindow = 0, m_seqErrors = 0;
    uint64_t m_latMin = UINT64_MAX, m_latMax = 0;
    double m_latSum = 0;
};

} // namespace routertwin

#endif
