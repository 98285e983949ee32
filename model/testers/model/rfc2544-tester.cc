#include "rfc2544-tester.h"

#include "ethernet-framing.h"

#include <ns3/boolean.h>
#include <ns3/double.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace routertwin
{

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(Rfc2544Tester);

TypeId
Rfc2544Tester::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::Rfc2544Tester")
            .SetParent<Object>()
            .SetGroupName("RouterTwin")
            .AddConstructor<Rfc2544Tester>()
            .AddAttribute("FrameBytes", "Frame size incl. FCS (64..9216).", UintegerValue(64),
                          MakeUintegerAccessor(&Rfc2544Tester::m_frameBytes),
                          MakeUintegerChecker<uint32_t>(ethernet::kMinFrameBytes,
                                                        ethernet::kMaxFrameBytes))
            .AddAttribute("OfferedPps", "Offered frames/s; 0 = the port's line rate.",
                          DoubleValue(0), MakeDoubleAccessor(&Rfc2544Tester::m_offeredPps),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("PortBitRate", "Tester port speed (bit/s).", DoubleValue(10e9),
                          MakeDoubleAccessor(&Rfc2544Tester::m_portBitRate),
                          MakeDoubleChecker<double>(1.0))
            .AddAttribute("NumFlows", "Flows, offered round-robin.", UintegerValue(4),
                          MakeUintegerAccessor(&Rfc2544Tester::m_numFlows),
                          MakeUintegerChecker<uint32_t>(1, 1u << 20))
            .AddAttribute("Duration", "How long frames are offered.", TimeValue(MilliSeconds(10)),
                          MakeTimeAccessor(&Rfc2544Tester::m_duration), MakeTimeChecker())
            .AddAttribute("Warmup", "Start of the forwarded-rate window after Start().",
                          TimeValue(MilliSeconds(1)), MakeTimeAccessor(&Rfc2544Tester::m_warmup),
                          MakeTimeChecker())
            .AddAttribute("BatchInterval", "Time covered by one transmit event.",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&Rfc2544Tester::m_batchInterval),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("Poisson", "Poisson arrivals (shaped by the port) instead of constant spacing.",
                          BooleanValue(false), MakeBooleanAccessor(&Rfc2544Tester::m_poisson),
                          MakeBooleanChecker())
            .AddAttribute("Seed", "Seed of the Poisson arrival stream.", UintegerValue(1),
                          MakeUintegerAccessor(&Rfc2544Tester::m_seed),
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

Rfc2544Tester::Rfc2544Tester() = default;
Rfc2544Tester::~Rfc2544Tester() = default;

void
Rfc2544Tester::DoDispose()
{
    m_transmit = TransmitCallback();
    m_done = DoneCallback();
    Object::DoDispose();
}

void
Rfc2544Tester::SetTransmitCallback(TransmitCallback cb)
{
    m_transmit = cb;
}

void
Rfc2544Tester::SetDoneCallback(DoneCallback cb)
{
    m_done = cb;
}

void
Rfc2544Tester::Start()
{
    const double line = ethernet::LineRatePps(m_portBitRate, m_frameBytes);
    if (m_offeredPps == 0)
    {
        m_offeredPps = line;
    }
    if (m_offeredPps > line * (1 + 1e-12))
    {
        throw std::invalid_argument("offered rate " + std::to_string(m_offeredPps) +
                                    " pps exceeds the port line rate " + std::to_string(line) +
                                    " pps for " + std::to_string(m_frameBytes) + "-byte frames");
    }
    if (m_warmup >= m_duration)
    {
        throw std::invalid_argument("warmup must be shorter than the duration");
    }
    m_startPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    m_windowStartPs = m_startPs + static_cast<uint64_t>(m_warmup.GetPicoSeconds());
    m_windowEndPs = m_startPs + static_cast<uint64_t>(m_duration.GetPicoSeconds());
    m_gapPs = 1e12 / m_offeredPps;
    m_wirePs = ethernet::WireSeconds(m_portBitRate, m_frameBytes) * 1e12;
    m_total = static_cast<uint64_t>(std::llround(m_duration.GetSeconds() * m_offeredPps));
    m_rng = std::make_unique<RandomStream>(m_seed, 0x2544);
    m_poissonClockPs = 0;
    m_lastTxEndPs = 0;
    m_nextSeq.assign(m_numFlows, 0);
    m_highestSeq.assign(m_numFlows, -1);
    Simulator::ScheduleNow(&Rfc2544Tester::SendBatch, this);
}

// Tx timestamp (last bit out) of the next frame. Constant mode: frame k
// starts at k * gap. Poisson mode: frames are generated at Poisson instants
// and the port sends each when it is free, so no two overlap on the wire.
uint64_t
Rfc2544Tester::NextArrivalPs()
{
    double firstBit;
    if (m_poisson)
    {
        m_poissonClockPs += m_rng->Exponential(m_gapPs);
        firstBit = std::max(m_poissonClockPs, m_lastTxEndPs);
    }
    else
    {
        firstBit = static_cast<double>(m_sent) * m_gapPs;
    }
    m_lastTxEndPs = firstBit + m_wirePs;
    return m_startPs + static_cast<uint64_t>(m_lastTxEndPs + 0.5); // round; >= 0
}

void
Rfc2544Tester::SendBatch()
{
    const uint64_t nowPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    const uint64_t untilPs = nowPs + static_cast<uint64_t>(m_batchInterval.GetPicoSeconds());
    // Frames whose last bit leaves in (previous event, this event + interval]
    // are handed over now; the device only learns their timestamps, it does
    // not act before them (its departures are computed from arrivalPs).
    m_batch.clear();
    while (m_sent < m_total)
    {
        if (!m_havePending)
        {
            m_pendingArrival = NextArrivalPs();
            m_havePending = true;
        }
        if (m_pendingArrival > untilPs)
        {
            break;
        }
        PacketDesc d{};
        d.arrivalPs = m_pendingArrival;
        d.flow = static_cast<uint32_t>(m_sent % m_numFlows);
        d.seq = m_nextSeq[d.flow]++;
        d.frameBytes = static_cast<uint16_t>(m_frameBytes);
        m_batch.push_back(d);
        ++m_sent;
        m_havePending = false;
    }
    if (!m_batch.empty() && !m_transmit.IsNull())
    {
        m_transmit(m_batch);
    }
    if (m_sent < m_total)
    {
        Simulator::Schedule(m_batchInterval, &Rfc2544Tester::SendBatch, this);
    }
    else if (!m_done.IsNull())
    {
        m_done();
    }
}

void
Rfc2544Tester::Receive(const std::vector<PacketDesc>& batch)
{
    for (const auto& d : batch)
    {
        ++m_rx;
        const uint64_t lat = d.departPs - d.arrivalPs;
        m_latMin = std::min(m_latMin, lat);
        m_latMax = std::max(m_latMax, lat);
        m_latSum += static_cast<double>(lat);
        if (d.departPs >= m_windowStartPs && d.departPs <= m_windowEndPs)
        {
            ++m_rxInWindow;
        }
        int64_t& hi = m_highestSeq[d.flow];
        if (static_cast<int64_t>(d.seq) < hi)
        {
            ++m_seqErrors;
        }
        else
        {
            hi = d.seq;
        }
    }
}

TesterResults
Rfc2544Tester::Results() const
{
    TesterResults r;
    r.offeredPps = m_offeredPps;
    r.txPackets = m_sent;
    r.rxPackets = m_rx;
    r.lostPackets = m_sent >= m_rx ? m_sent - m_rx : 0;
    const double window = static_cast<double>(m_windowEndPs - m_windowStartPs) * 1e-12;
    r.forwardedPps = window > 0 ? static_cast<double>(m_rxInWindow) / window : 0;
    if (m_rx)
    {
        r.latencyMinSeconds = static_cast<double>(m_latMin) * 1e-12;
        r.latencyMaxSeconds = static_cast<double>(m_latMax) * 1e-12;
        r.latencyAvgSeconds = m_latSum / static_cast<double>(m_rx) * 1e-12;
    }
    r.sequenceErrors = m_seqErrors;
    return r;
}

} // namespace routertwin
