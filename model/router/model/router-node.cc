#include "router-node.h"

#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace routertwin
{

NS_OBJECT_ENSURE_REGISTERED(RouterNode);

ns3::TypeId
RouterNode::GetTypeId()
{
    using namespace ns3;
    static TypeId tid =
        TypeId("routertwin::RouterNode")
            .SetParent<Object>()
            .SetGroupName("RouterTwin")
            .AddConstructor<RouterNode>()
            .AddAttribute("Duration", "Tester transmit time.", TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&RouterNode::SetDuration, &RouterNode::GetDuration),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("BatchInterval", "Simulated time per ns-3 event.",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&RouterNode::SetBatch, &RouterNode::GetBatch),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("FixedLatency", "Pipeline latency with empty queues.",
                          TimeValue(NanoSeconds(18680)),
                          MakeTimeAccessor(&RouterNode::SetFixedLatency, &RouterNode::GetFixedLatency),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("IpBytes", "IP packet length offered by the tester.", UintegerValue(40),
                          MakeUintegerAccessor(&RouterNode::SetIpBytes, &RouterNode::GetIpBytes),
                          MakeUintegerChecker<uint32_t>(32, 9000))
            .AddAttribute("Routes", "BGP routes installed (routes/ports per peer).", UintegerValue(0),
                          MakeUintegerAccessor(&RouterNode::SetRoutes, &RouterNode::GetRoutes),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("OfferedLoad", "Fraction of the theoretical frame rate.", DoubleValue(1.0),
                          MakeDoubleAccessor(&RouterNode::SetLoad, &RouterNode::GetLoad),
                          MakeDoubleChecker<double>(1e-6, 1.0))
            .AddAttribute("FabricBitRate", "Cell payload bandwidth of one PFE's fabric port (bit/s).",
                          DoubleValue(48.4e9),
                          MakeDoubleAccessor(&RouterNode::SetFabricBps, &RouterNode::GetFabricBps),
                          MakeDoubleChecker<double>(1.0))
            .AddAttribute("IslipIterations", "iSLIP iterations per fabric slot.", UintegerValue(1),
                          MakeUintegerAccessor(&RouterNode::SetIslip, &RouterNode::GetIslip),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("Seed", "Seed of every random stream.", UintegerValue(1),
                          MakeUintegerAccessor(&RouterNode::SetSeed, &RouterNode::GetSeed),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("Drop", "A packet dropped: reason name and tester port.",
                            MakeTraceSourceAccessor(&RouterNode::m_dropTrace),
                            "routertwin::RouterNode::DropTracedCallback")
            .AddTraceSource("Rx", "A packet delivered: tester port and latency.",
                            MakeTraceSourceAccessor(&RouterNode::m_rxTrace),
                            "routertwin::RouterNode::RxTracedCallback");
    return tid;
}

RouterNode::RouterNode() = default;
RouterNode::~RouterNode() = default;

void
RouterNode::DoDispose()
{
    m_engine.reset();
    Object::DoDispose();
}

void
RouterNode::Start()
{
    m_engine = std::make_unique<RouterEngine>(m_cfg);
    // Hooks only when someone listens: the per-packet path stays free of
    // trace work otherwise.
    if (!m_dropTrace.IsEmpty())
    {
        m_engine->SetDropCallback(
            [this](RouterDrop d, unsigned port) { m_dropTrace(RouterDropName(d), port); });
    }
    if (!m_rxTrace.IsEmpty())
    {
        m_engine->SetDeliverCallback(
            [this](unsigned port, double lat) { m_rxTrace(port, ns3::Seconds(lat)); });
    }
    m_batches = 0;
    m_limit = ns3::Simulator::Now().GetSeconds() + m_cfg.RunLimitSeconds();
    ns3::Simulator::Schedule(ns3::Seconds(m_cfg.batchSeconds), &RouterNode::Batch, this);
}

void
RouterNode::Batch()
{
    ++m_batches;
    double t = ns3::Simulator::Now().GetSeconds();
    m_engine->Advance(t);
    if ((t >= m_cfg.durationSeconds && m_engine->Drained()) || t >= m_limit)
    {
        return;
    }
    ns3::Simulator::Schedule(ns3::Seconds(m_cfg.batchSeconds), &RouterNode::Batch, this);
}

RouterResult
RouterNode::GetResult() const
{
    return m_engine ? m_engine->Result() : RouterResult{};
}

} // namespace routertwin
