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
Rfc2544Tester::SetTraffic(const TrafficConfig& traffic)
{
    if (!traffic.mix.parts.empty())
    {
        traffic.mix.Validate();
    }
    traffic.flowSizes.Validate();
    if (traffic.flowSizes.kind != FlowSizeKind::kNone)
    {
        if (traffic.popularity != FlowPopularity::kRoundRobin)
        {
            throw std::invalid_argument("flow sizes and a flow popularity exclude each other: "
                                        "flow-level traffic picks its own flows");
        }
        if (!traffic.tracePath.empty())
        {
            throw std::invalid_argument("flow sizes do not apply to a trace (it has its own flows)");
        }
        if (traffic.flowPps < 0 || !std::isfinite(traffic.flowPps))
        {
            throw std::invalid_argument("flow_pps must be >= 0");
        }
    }
    m_traffic = traffic;
    // A one-size mix is the plain single-size tester.
    if (m_traffic.mix.Single())
    {
        m_frameBytes = m_traffic.mix.parts[0].first;
        m_traffic.mix.parts.clear();
    }
}

double
Rfc2544Tester::LineRatePps() const
{
    return m_traffic.mix.parts.empty() ? ethernet::LineRatePps(m_portBitRate, m_frameBytes)
                                       : m_traffic.mix.LineRatePps(m_portBitRate);
}

void
Rfc2544Tester::Start()
{
    if (m_warmup >= m_duration)
    {
        throw std::invalid_argument("warmup must be shorter than the duration");
    }
    m_startPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    m_windowStartPs = m_startPs + static_cast<uint64_t>(m_warmup.GetPicoSeconds());
    m_windowEndPs = m_startPs + static_cast<uint64_t>(m_duration.GetPicoSeconds());
    m_nextSeq.assign(m_numFlows, 0);
    m_highestSeq.assign(m_numFlows, -1);
    m_lastTxEndPs = 0;
    m_constClockPs = 0;
    if (!m_traffic.tracePath.empty())
    {
        StartTrace();
    }
    else
    {
        StartSynthetic();
    }
    Simulator::ScheduleNow(&Rfc2544Tester::SendBatch, this);
}

void
Rfc2544Tester::StartSynthetic()
{
    const double line = LineRatePps();
    if (m_offeredPps == 0)
    {
        m_offeredPps = line;
    }
    if (m_offeredPps > line * (1 + 1e-12))
    {
        const std::string what = m_traffic.mix.parts.empty()
                                     ? std::to_string(m_frameBytes) + "-byte frames"
                                     : "the frame mix (mean " +
                                           std::to_string(m_traffic.mix.MeanFrameBytes()) + " bytes)";
        throw std::invalid_argument("offered rate " + std::to_string(m_offeredPps) +
                                    " pps exceeds the port line rate " + std::to_string(line) + " pps for " +
                                    what);
    }
    m_gapPs = 1e12 / m_offeredPps;
    m_total = static_cast<uint64_t>(std::llround(m_duration.GetSeconds() * m_offeredPps));
    m_loadInverse = line / m_offeredPps;
    if (!m_traffic.mix.parts.empty())
    {
        std::vector<double> weights;
        for (const auto& part : m_traffic.mix.parts)
        {
            weights.push_back(part.second);
        }
        m_sizes = DiscreteSampler(weights);
        m_sizeRng = std::make_unique<RandomStream>(m_seed, kSizeStream);
        m_mixCredit.assign(weights.size(), 0.0);
    }
    const ArrivalKind kind = m_poisson ? ArrivalKind::kPoisson : m_traffic.arrivals;
    ArrivalConfig a;
    a.kind = kind;
    a.meanPps = m_offeredPps;
    a.burstMeanFrames = m_traffic.burstMeanFrames;
    a.peakPps = m_traffic.burstPeakPps > 0 ? m_traffic.burstPeakPps : line;
    a.mmppRateRatio = m_traffic.mmppRateRatio;
    a.mmppHighFraction = m_traffic.mmppHighFraction;
    a.mmppCycleSeconds = m_traffic.mmppCycleSeconds;
    m_arrivals.reset();
    m_flowLevel.reset();
    if (m_traffic.flowSizes.kind != FlowSizeKind::kNone)
    {
        // The process drives the flow starts: rates in flows/s, so that
        // starts x mean packets per flow = the offered packet rate.
        const double perFlow = m_traffic.flowSizes.MeanPackets();
        a.meanPps /= perFlow;
        a.peakPps /= perFlow;
        const double flowPps = m_traffic.flowPps > 0 ? m_traffic.flowPps : m_offeredPps / m_numFlows;
        // About NumFlows flows are active at once (Poisson): four times as
        // many ids leave every active flow its own, recycled first ended
        // first reused, so per-flow state and frame templates stay bounded.
        const uint32_t ids = static_cast<uint32_t>(std::min<uint64_t>(kMaxTraceFlows, 4ull * m_numFlows + 64));
        m_flowLevel = std::make_unique<FlowLevelProcess>(m_traffic.flowSizes, a, flowPps, ids, m_seed,
                                                         kArrivalStream, kFlowSizeStream, 1e12);
        m_total = UINT64_MAX; // until Duration: flows are cut there, not counted
    }
    else if (kind != ArrivalKind::kConstant)
    {
        // Stream 0x2544 and picosecond units: the Poisson instants of a seed
        // are those the tester drew before arrival processes were added.
        m_arrivals = std::make_unique<ArrivalProcess>(a, m_seed, kArrivalStream, 1e12);
    }
    m_flows = std::make_unique<FlowPicker>(m_numFlows, m_traffic.popularity, m_traffic.zipfExponent, m_seed,
                                           kFlowStream);
}

void
Rfc2544Tester::StartTrace()
{
    m_trace = std::make_unique<PcapTrace>(m_traffic.tracePath, kMaxTraceFlows);
    const PcapTrace::Summary sum = m_trace->Scan();
    if (sum.packets < 2 || !(sum.lastNs > sum.firstNs))
    {
        throw std::invalid_argument(m_traffic.tracePath +
                                    ": a trace needs at least two packets with increasing timestamps");
    }
    const double spanSeconds = static_cast<double>(sum.lastNs - sum.firstNs) * 1e-9;
    const double nativePps = static_cast<double>(sum.packets - 1) / spanSeconds;
    const double line = m_portBitRate / (8.0 * (sum.meanFrameBytes + ethernet::kOverheadBytes));
    double target = nativePps;
    if (m_traffic.traceRescale)
    {
        target = m_offeredPps > 0 ? m_offeredPps : line;
        if (target > line * (1 + 1e-12))
        {
            throw std::invalid_argument("offered rate " + std::to_string(target) +
                                        " pps exceeds the port line rate " + std::to_string(line) +
                                        " pps for the trace's mean frame of " +
                                        std::to_string(sum.meanFrameBytes) + " bytes");
        }
    }
    m_traceScale = nativePps / target;
    m_offeredPps = target;
    m_traceFirstNs = sum.firstNs;
    // One loop lasts the trace's span plus one mean gap, so that the first
    // packet of the next pass does not land on the last of this one.
    m_traceSpanPs = (spanSeconds * m_traceScale + 1.0 / target) * 1e12;
    m_traceOffsetPs = 0;
    m_traceLoops = 0;
    m_total = UINT64_MAX; // until Duration or the end of the trace
}

// Tx timestamp (last bit out) of a frame whose first bit may start at
// `wishPs` (from Start). Shaped: the port sends it when it is free, so no
// two frames overlap on the wire (constant spacing never overlaps and is
// not shaped, which keeps its instants exact).
uint64_t
Rfc2544Tester::TxEnd(double wishPs, uint32_t frameBytes, bool shaped)
{
    const double firstBit = shaped ? std::max(wishPs, m_lastTxEndPs) : wishPs;
    m_lastTxEndPs = firstBit + ethernet::WireSeconds(m_portBitRate, frameBytes) * 1e12;
    return m_startPs + static_cast<uint64_t>(m_lastTxEndPs + 0.5); // round; >= 0
}

// The next frame (arrival, flow, size), or false when the tester is done.
// Constant single-size spacing: frame k starts at k * gap. Constant mix:
// each frame's wire time / load after the previous start. Random and trace
// instants are shaped by the port (TxEnd).
bool
Rfc2544Tester::NextFrame(PacketDesc& d)
{
    d = PacketDesc{};
    if (m_trace)
    {
        TracePacket p;
        if (!m_trace->Next(p))
        {
            if (!m_traffic.traceLoop)
            {
                return false;
            }
            m_trace->Rewind();
            m_traceOffsetPs += m_traceSpanPs;
            ++m_traceLoops;
            if (!m_trace->Next(p))
            {
                return false;
            }
        }
        // Timestamps before the first (a capture may be out of order) start at 0.
        const double sinceFirstNs = p.ns > m_traceFirstNs ? static_cast<double>(p.ns - m_traceFirstNs) : 0.0;
        const double wishPs = sinceFirstNs * 1e3 * m_traceScale + m_traceOffsetPs;
        if (wishPs >= static_cast<double>(m_windowEndPs - m_startPs))
        {
            return false;
        }
        d.frameBytes = static_cast<uint16_t>(p.frameBytes);
        d.flow = p.flow;
        d.arrivalPs = TxEnd(wishPs, p.frameBytes, true);
        return true;
    }
    if (m_sent >= m_total)
    {
        return false;
    }
    const uint32_t bytes = NextFrameBytes();
    double wishPs;
    if (m_flowLevel)
    {
        if (m_flowLevel->NextInstant() >= static_cast<double>(m_windowEndPs - m_startPs))
        {
            return false; // the process stays at the window's end (its active-flow count)
        }
        wishPs = m_flowLevel->Next(d.flow);
        d.arrivalPs = TxEnd(wishPs, bytes, true);
        d.frameBytes = static_cast<uint16_t>(bytes);
        return true;
    }
    if (m_arrivals)
    {
        wishPs = m_arrivals->Next();
    }
    else if (m_traffic.mix.parts.empty())
    {
        wishPs = static_cast<double>(m_sent) * m_gapPs;
    }
    else
    {
        wishPs = m_constClockPs;
        m_constClockPs += ethernet::WireSeconds(m_portBitRate, bytes) * 1e12 * m_loadInverse;
    }
    d.arrivalPs = TxEnd(wishPs, bytes, m_arrivals != nullptr);
    d.flow = m_flows->Pick(m_sent);
    d.frameBytes = static_cast<uint16_t>(bytes);
    return true;
}

uint32_t
Rfc2544Tester::NextFrameBytes()
{
    const auto& parts = m_traffic.mix.parts;
    if (parts.empty())
    {
        return m_frameBytes;
    }
    if (!m_traffic.mixSequence)
    {
        return parts[m_sizes.Sample(*m_sizeRng)].first;
    }
    // Smooth weighted round robin (as nginx balances upstreams): every size
    // earns its weight, the richest is sent and pays the total.
    size_t best = 0;
    double total = 0;
    for (size_t i = 0; i < parts.size(); ++i)
    {
        m_mixCredit[i] += parts[i].second;
        total += parts[i].second;
        if (m_mixCredit[i] > m_mixCredit[best])
        {
            best = i;
        }
    }
    m_mixCredit[best] -= total;
    return parts[best].first;
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
    bool more = true;
    for (;;)
    {
        if (!m_havePending)
        {
            more = NextFrame(m_pending);
            if (!more)
            {
                break;
            }
            m_havePending = true;
        }
        if (m_pending.arrivalPs > untilPs)
        {
            break;
        }
        PacketDesc d = m_pending;
        if (d.flow >= m_nextSeq.size())
        {
            m_nextSeq.resize(d.flow + 1, 0);
            m_highestSeq.resize(d.flow + 1, -1);
        }
        d.seq = m_nextSeq[d.flow]++;
        m_txBytes += d.frameBytes;
        m_batch.push_back(d);
        ++m_sent;
        m_havePending = false;
    }
    if (!m_batch.empty() && !m_transmit.IsNull())
    {
        m_transmit(m_batch);
    }
    if (more)
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
        m_latHist.Add(static_cast<double>(lat) * 1e-12);
        if (d.departPs >= m_windowStartPs && d.departPs <= m_windowEndPs)
        {
            ++m_rxInWindow;
            m_rxBitsInWindow += 8.0 * d.frameBytes;
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
        r.latency = m_latHist;
    }
    r.sequenceErrors = m_seqErrors;
    r.meanFrameBytes = m_sent ? m_txBytes / static_cast<double>(m_sent) : 0;
    r.forwardedBitRate = window > 0 ? m_rxBitsInWindow / window : 0;
    r.traceFlows = m_trace ? m_trace->DistinctFlows() : 0;
    r.traceLoops = m_traceLoops;
    r.flowsStarted = m_flowLevel ? m_flowLevel->FlowsStarted() : 0;
    if (m_flowLevel)
    {
        const double runPs = static_cast<double>(m_windowEndPs - m_startPs);
        r.flowsActiveMean = runPs > 0 ? m_flowLevel->ActiveFlowSeconds(runPs) / runPs : 0;
        r.flowsActiveMax = m_flowLevel->MaxActiveFlows();
    }
    return r;
}

} // namespace routertwin
