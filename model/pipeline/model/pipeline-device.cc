#include "pipeline-device.h"

#include <ns3/boolean.h>
#include <ns3/double.h>
#include <ns3/enum.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <algorithm>

namespace routertwin
{

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(PipelineDevice);

TypeId
PipelineDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::PipelineDevice")
            .SetParent<Object>()
            .SetGroupName("RouterTwin")
            .AddConstructor<PipelineDevice>()
            .AddAttribute("NumCores", "Cores processing packets.", UintegerValue(1),
                          MakeUintegerAccessor(&PipelineDevice::m_numCores),
                          MakeUintegerChecker<uint32_t>(1, 4096))
            .AddAttribute("ClockHz", "Core clock (Hz).", DoubleValue(1e9),
                          MakeDoubleAccessor(&PipelineDevice::m_clockHz),
                          MakeDoubleChecker<double>(1.0))
            .AddAttribute("Scheduling", "How work reaches the cores.",
                          EnumValue(static_cast<int>(WorkScheduling::kOrdered)),
                          MakeEnumAccessor(&PipelineDevice::m_scheduling),
                          MakeEnumChecker(static_cast<int>(WorkScheduling::kOrdered), "ordered",
                                          static_cast<int>(WorkScheduling::kAtomic), "atomic",
                                          static_cast<int>(WorkScheduling::kUntagged), "untagged",
                                          static_cast<int>(WorkScheduling::kRss), "rss"))
            .AddAttribute("InputPpsCeiling", "Packet input engine ceiling (packets/s), 0 = none.",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_inputPps),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("OutputPpsCeiling", "Packet output engine ceiling (packets/s), 0 = none.",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_outputPps),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("MemoryBytesPerSecond", "Memory/IO bandwidth (bytes/s), 0 = none.",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_memBytesPerSec),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("MemoryBytesPerFrameByte", "Memory traffic per frame byte (DMA in+out).",
                          DoubleValue(2), MakeDoubleAccessor(&PipelineDevice::m_memBytesPerFrameByte),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("MemoryBytesPerPacket", "Fixed memory traffic per packet (bytes).",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_memBytesPerPacket),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("EgressBitRate", "Egress Ethernet port (bit/s), 0 = no line stage.",
                          DoubleValue(10e9), MakeDoubleAccessor(&PipelineDevice::m_egressBitRate),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("CopyCyclesPerByte", "Extra core cycles per frame byte (copies).",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_copyCyclesPerByte),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("CryptoCyclesPerByte", "Extra core cycles per frame byte (cipher+MAC).",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_cryptoCyclesPerByte),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("LockHoldCycles", "Cycles of each packet's service under a global lock.",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_lockHoldCycles),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("FlowSectionCycles",
                          "ORDERED: cycles at the end of each packet's service under its flow's "
                          "ATOMIC tag (a tag switch the core waits for).",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_flowSectionCycles),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("FixedLatency", "Pipeline depth: input/output engines, DMA.",
                          TimeValue(Seconds(0)), MakeTimeAccessor(&PipelineDevice::m_fixedLatency),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("InputQueueDepth", "Packets admitted but not yet on a core, 0 = unbounded.",
                          UintegerValue(1024), MakeUintegerAccessor(&PipelineDevice::m_inputQueueDepth),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("CoreQueueDepth", "RSS: packets waiting per core, 0 = unbounded.",
                          UintegerValue(1024), MakeUintegerAccessor(&PipelineDevice::m_coreQueueDepth),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FixedCyclesPerPacket", "Cycle cost: dispatch and descriptor handling.",
                          DoubleValue(0), MakeDoubleAccessor(&PipelineDevice::m_fixedCycles),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("CyclesPerFrameByte", "Cycle cost: per frame byte.", DoubleValue(0),
                          MakeDoubleAccessor(&PipelineDevice::m_cyclesPerFrameByte),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("ExtraRoutes", "Filler /24 routes in the forwarding table.",
                          UintegerValue(0), MakeUintegerAccessor(&PipelineDevice::m_extraRoutes),
                          MakeUintegerChecker<uint32_t>(0, 65536))
            .AddAttribute("FirstUnroutedFlow", "Flows from this id on have no route.",
                          UintegerValue(UINT32_MAX),
                          MakeUintegerAccessor(&PipelineDevice::m_firstUnroutedFlow),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RunCorePerPacket", "Run the data-plane core on every packet "
                                              "(else once per flow and frame size).",
                          BooleanValue(false), MakeBooleanAccessor(&PipelineDevice::m_runCorePerPacket),
                          MakeBooleanChecker())
            .AddTraceSource("Rx", "A packet arrived at the device.",
                            MakeTraceSourceAccessor(&PipelineDevice::m_rxTrace),
                            "routertwin::PipelineDevice::PacketTracedCallback")
            .AddTraceSource("Tx", "A packet left the device (delivered at its batch's event).",
                            MakeTraceSourceAccessor(&PipelineDevice::m_txTrace),
                            "routertwin::PipelineDevice::PacketTracedCallback")
            .AddTraceSource("Drop", "A packet was dropped; reason is a PipelineDrop or dp_drop name.",
                            MakeTraceSourceAccessor(&PipelineDevice::m_dropTrace),
                            "routertwin::PipelineDevice::DropTracedCallback");
    return tid;
}

PipelineDevice::PipelineDevice() = default;
PipelineDevice::~PipelineDevice() = default;

void
PipelineDevice::DoDispose()
{
    m_deliver = DeliverCallback();
    m_pending.clear();
    m_engine.reset();
    m_workload.reset();
    Object::DoDispose();
}

void
PipelineDevice::SetDeliverCallback(DeliverCallback cb)
{
    m_deliver = cb;
}

void
PipelineDevice::SetCounterPrice(const std::string& counter, double cycles)
{
    m_cost.SetCounterPrice(counter, cycles);
}

void
PipelineDevice::SetFrameSizes(const std::vector<uint32_t>& sizes, uint32_t ways,
                              const std::map<uint32_t, double>& fixedCyclesBySize)
{
    m_frameSizes = sizes;
    m_templateWays = ways;
    m_fixedCyclesBySize = fixedCyclesBySize;
}

void
PipelineDevice::Build()
{
    PipelineConfig c;
    c.numCores = m_numCores;
    c.clockHz = m_clockHz;
    c.scheduling = static_cast<WorkScheduling>(m_scheduling);
    c.inputPpsCeiling = m_inputPps;
    c.outputPpsCeiling = m_outputPps;
    c.memoryBytesPerSecond = m_memBytesPerSec;
    c.memoryBytesPerFrameByte = m_memBytesPerFrameByte;
    c.memoryBytesPerPacket = m_memBytesPerPacket;
    c.egressBitRate = m_egressBitRate;
    c.copyCyclesPerByte = m_copyCyclesPerByte;
    c.cryptoCyclesPerByte = m_cryptoCyclesPerByte;
    c.lockHoldCycles = m_lockHoldCycles;
    c.flowSectionCycles = m_flowSectionCycles;
    c.fixedLatencyPs = static_cast<uint64_t>(m_fixedLatency.GetPicoSeconds());
    c.inputQueueDepth = m_inputQueueDepth;
    c.coreQueueDepth = m_coreQueueDepth;
    m_engine = std::make_unique<PipelineEngine>(c);

    ForwardingWorkloadConfig w;
    w.cost = m_cost;
    w.cost.clockHz = m_clockHz;
    w.cost.fixedCyclesPerPacket = m_fixedCycles;
    w.cost.cyclesPerFrameByte = m_cyclesPerFrameByte;
    w.extraRoutes = m_extraRoutes;
    w.firstUnroutedFlow = m_firstUnroutedFlow;
    w.runCorePerPacket = m_runCorePerPacket;
    w.frameSizes = m_frameSizes;
    w.ways = m_templateWays;
    w.fixedCyclesBySize = m_fixedCyclesBySize;
    m_workload = std::make_unique<ForwardingWorkload>(w);
}

void
PipelineDevice::Receive(std::vector<PacketDesc>& batch)
{
    if (!m_engine)
    {
        Build();
    }
    if (!m_rxTrace.IsEmpty())
    {
        for (const auto& d : batch)
        {
            m_rxTrace(d);
        }
    }
    m_workload->Apply(batch.data(), batch.size());
    m_engine->Process(batch.data(), batch.size(), m_departed, m_dropped);
    if (!m_dropped.empty())
    {
        if (!m_dropTrace.IsEmpty())
        {
            for (const auto& d : m_dropped)
            {
                const auto why = static_cast<PipelineDrop>(d.drop);
                m_dropTrace(d, why == PipelineDrop::kDataPlane
                                   ? dp_drop_reason_name(static_cast<dp_drop_reason_t>(d.dpDrop))
                                   : PipelineDropName(why));
            }
        }
        m_dropped.clear();
    }
    ScheduleDepartures();
}

void
PipelineDevice::Flush()
{
    if (m_engine)
    {
        m_engine->Flush(m_departed);
        ScheduleDepartures();
    }
}

void
PipelineDevice::ScheduleDepartures()
{
    if (m_departed.empty())
    {
        return;
    }
    // Departures are in time order, so the batch is complete at its last
    // one; ns-3 time is rounded up so the event never precedes a departure.
    const int64_t nowPs = Simulator::Now().GetPicoSeconds();
    const int64_t lastPs = static_cast<int64_t>(m_departed.back().departPs);
    const int64_t delayNs = std::max<int64_t>(0, (lastPs - nowPs + 999) / 1000);
    const size_t n = m_departed.size();
    m_pending.push_back(std::move(m_departed));
    m_departed = std::vector<PacketDesc>();
    m_departed.reserve(n); // the next batch is likely the same size
    Simulator::Schedule(NanoSeconds(delayNs), &PipelineDevice::DeliverNext, this);
}

void
PipelineDevice::DeliverNext()
{
    // Delivery events fire in scheduling order: their times never decrease.
    std::vector<PacketDesc> batch = std::move(m_pending.front());
    m_pending.pop_front();
    if (!m_txTrace.IsEmpty())
    {
        for (const auto& d : batch)
        {
            m_txTrace(d);
        }
    }
    if (!m_deliver.IsNull())
    {
        m_deliver(batch);
    }
}

} // namespace routertwin
