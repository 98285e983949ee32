#include "l4-balancer-device.h"

#include "ethernet-framing.h"

#include <ns3/boolean.h>
#include <ns3/nstime.h>
#include <ns3/double.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <stdexcept>

using namespace ns3;

namespace routertwin
{

NS_OBJECT_ENSURE_REGISTERED(L4BalancerDevice);

TypeId
L4BalancerDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::L4BalancerDevice")
            .SetParent<Object>()
            .SetGroupName("RouterTwin")
            .AddConstructor<L4BalancerDevice>()
            .AddAttribute("NumCores", "Application cores (= session-table shards).", UintegerValue(32),
                          MakeUintegerAccessor(&L4BalancerDevice::m_numCores),
                          MakeUintegerChecker<uint32_t>(1, 4096))
            .AddAttribute("ClockHz", "Core clock (Hz).", DoubleValue(1e9),
                          MakeDoubleAccessor(&L4BalancerDevice::m_clockHz), MakeDoubleChecker<double>(1.0))
            .AddAttribute("SessionsPerCore", "Session-table capacity per core (sessions).",
                          UintegerValue(65536), MakeUintegerAccessor(&L4BalancerDevice::m_sessionsPerCore),
                          MakeUintegerChecker<uint32_t>(2, DP_SESS_MAX_SESSIONS_PER_SHARD))
            .AddAttribute("Services", "Virtual services.", UintegerValue(96),
                          MakeUintegerAccessor(&L4BalancerDevice::m_services),
                          MakeUintegerChecker<uint32_t>(1, 256))
            .AddAttribute("ServersPerService", "Real servers per virtual service.", UintegerValue(4),
                          MakeUintegerAccessor(&L4BalancerDevice::m_serversPerService),
                          MakeUintegerChecker<uint32_t>(1, 254))
            .AddAttribute("Scheduler", "dp_sched algorithm name.", StringValue("rr"),
                          MakeStringAccessor(&L4BalancerDevice::m_scheduler), MakeStringChecker())
            .AddAttribute("Forwarding", "fullnat, dr or tunnel.", StringValue("fullnat"),
                          MakeStringAccessor(&L4BalancerDevice::m_forwarding), MakeStringChecker())
            .AddAttribute("SynCookies", "Answer every SYN with a SYN cookie.", BooleanValue(false),
                          MakeBooleanAccessor(&L4BalancerDevice::m_synCookies), MakeBooleanChecker())
            .AddAttribute("RateLimitCps", "New connections/s per service, 0 = none.", UintegerValue(0),
                          MakeUintegerAccessor(&L4BalancerDevice::m_rateLimitCps),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("FixedCyclesPerPacket", "CycleCost fixed part (cycles/packet).", DoubleValue(0),
                          MakeDoubleAccessor(&L4BalancerDevice::m_fixedCyclesPerPacket),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("CyclesPerFrameByte", "CycleCost per frame byte.", DoubleValue(0),
                          MakeDoubleAccessor(&L4BalancerDevice::m_cyclesPerFrameByte),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("ConnectionSetupCycles",
                          "Cycles per new connection beyond the core's counted work (fitted).", DoubleValue(0),
                          MakeDoubleAccessor(&L4BalancerDevice::m_connectionSetupCycles),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("TimeWait",
                          "TIME_WAIT linger: 0 = a full-NAT connection is removed at its last ACK; more = "
                          "it stays in TIME_WAIT that long and idle aging removes it (IPVS: 120 s).",
                          TimeValue(Seconds(0)), MakeTimeAccessor(&L4BalancerDevice::m_timeWait),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("FinWait", "FIN_WAIT timeout (IPVS: 120 s): where DR and tunnel connections end.",
                          TimeValue(Seconds(120)), MakeTimeAccessor(&L4BalancerDevice::m_finWait),
                          MakeTimeChecker(MilliSeconds(1)))
            .AddAttribute("IpMtu", "IP MTU of the links towards the servers (a tunnel's outer packet must fit).",
                          UintegerValue(1500), MakeUintegerAccessor(&L4BalancerDevice::m_ipMtu),
                          MakeUintegerChecker<uint16_t>(576))
            .AddAttribute("CoreQueueDepth", "Packets waiting per core (RSS queue), 0 = unbounded.",
                          UintegerValue(1024), MakeUintegerAccessor(&L4BalancerDevice::m_coreQueueDepth),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("InputPpsCeiling", "Packet input ceiling (packets/s), 0 = none.", DoubleValue(0),
                          MakeDoubleAccessor(&L4BalancerDevice::m_inputPpsCeiling),
                          MakeDoubleChecker<double>(0))
            .AddAttribute("EgressBitRate", "Aggregate egress (bit/s), 0 = no line stage.", DoubleValue(0),
                          MakeDoubleAccessor(&L4BalancerDevice::m_egressBitRate),
                          MakeDoubleChecker<double>(0))
            .AddTraceSource("Drop", "A packet refused by the balancer or lost in the device, with its reason.",
                            MakeTraceSourceAccessor(&L4BalancerDevice::m_dropTrace),
                            "routertwin::L4BalancerDevice::DropTracedCallback")
            .AddTraceSource("Connection", "A connection opened (+1) or removed (-1).",
                            MakeTraceSourceAccessor(&L4BalancerDevice::m_connTrace),
                            "routertwin::L4BalancerDevice::ConnectionTracedCallback");
    return tid;
}

L4BalancerDevice::L4BalancerDevice() = default;
L4BalancerDevice::~L4BalancerDevice() = default;

void
L4BalancerDevice::SetCounterPrice(const std::string& counter, double cycles)
{
    m_cost.SetCounterPrice(counter, cycles);
}

void
L4BalancerDevice::Build()
{
    m_cost.clockHz = m_clockHz;
    m_cost.fixedCyclesPerPacket = m_fixedCyclesPerPacket;
    m_cost.cyclesPerFrameByte = m_cyclesPerFrameByte;
    L4BalancerConfig c;
    c.cores = m_numCores;
    c.sessionsPerCore = m_sessionsPerCore;
    c.services = m_services;
    c.serversPerService = m_serversPerService;
    c.scheduler = m_scheduler;
    c.forwarding = ParseLbForwarding(m_forwarding);
    c.synCookies = m_synCookies;
    c.rateLimitCps = m_rateLimitCps;
    c.cost = m_cost;
    c.connectionSetupCycles = m_connectionSetupCycles;
    // the session table's tick is a millisecond
    c.timeWaitMs = static_cast<uint32_t>(std::min<int64_t>(m_timeWait.GetMilliSeconds(), INT32_MAX));
    c.finWaitMs = static_cast<uint32_t>(std::min<int64_t>(m_finWait.GetMilliSeconds(), INT32_MAX));
    c.ipMtu = m_ipMtu;
    m_lb = std::make_unique<L4Balancer>(c);
    PipelineConfig p;
    p.numCores = m_numCores;
    p.clockHz = m_clockHz;
    p.scheduling = WorkScheduling::kRss;
    p.inputPpsCeiling = m_inputPpsCeiling;
    p.egressBitRate = m_egressBitRate;
    p.coreQueueDepth = m_coreQueueDepth;
    p.inputQueueDepth = 0;
    p.memoryBytesPerFrameByte = 0;
    p.Validate();
    m_engine = std::make_unique<PipelineEngine>(p);
    // The engine spreads flow ids over cores by its RSS hash, the Murmur3
    // finaliser of pipeline-engine.cc, mirrored here: for each core, the
    // smallest flow id it sends there (a test checks each lands on its core).
    m_coreFlow.assign(m_numCores, UINT32_MAX);
    uint32_t found = 0;
    for (uint32_t f = 0; found < m_numCores && f < 64u * 1024u * 1024u; ++f)
    {
        uint32_t x = f;
        x ^= x >> 16;
        x *= 0x85EBCA6BU;
        x ^= x >> 13;
        x *= 0xC2B2AE35U;
        x ^= x >> 16;
        const uint32_t core = x % m_numCores;
        if (m_coreFlow[core] == UINT32_MAX)
        {
            m_coreFlow[core] = f;
            m_flowCore.resize(f + 1, UINT32_MAX);
            m_flowCore[f] = core;
            ++found;
        }
    }
}

LbVerdict
L4BalancerDevice::Offer(uint8_t* frame, size_t len, size_t cap, size_t headroom, uint64_t arrivalPs, uint32_t tag,
                        std::vector<PacketDesc>& batch, uint8_t** outFrame, size_t* outLen)
{
    uint8_t* out = frame;
    size_t outBytes = len;
    const LbVerdict v = m_lb->Process(frame, len, cap, headroom, arrivalPs / 1000u, &out, &outBytes);
    if (outFrame)
    {
        *outFrame = out;
    }
    if (outLen)
    {
        *outLen = outBytes;
    }
    // the frame as it leaves (the tunnel's outer header included), + FCS, padded
    const uint16_t bytes = static_cast<uint16_t>(ethernet::FrameBytesFromL2(static_cast<uint32_t>(outBytes)));
    PacketDesc d{};
    d.arrivalPs = arrivalPs;
    d.seq = tag;
    d.flow = m_coreFlow[v.core];
    d.serviceCycles = v.cycles;
    d.frameBytes = bytes;
    d.dpDrop = v.dpDrop;
    batch.push_back(d);
    dp_ops_add(&m_ops, &v.ops);
    m_sumCycles += v.cycles;
    ++m_frames;
    if (v.opened)
    {
        m_connTrace(1);
    }
    if (v.closed)
    {
        m_connTrace(-1);
    }
    return v;
}

void
L4BalancerDevice::Run(const std::vector<PacketDesc>& batch, std::vector<PacketDesc>& departed,
                      std::vector<PacketDesc>& dropped)
{
    const size_t d0 = dropped.size();
    m_engine->Process(batch.data(), batch.size(), departed, dropped);
    for (size_t i = d0; i < dropped.size(); ++i)
    {
        const PacketDesc& d = dropped[i];
        m_dropTrace(d, d.dpDrop != DP_OK ? dp_drop_reason_name(static_cast<dp_drop_reason_t>(d.dpDrop))
                                         : PipelineDropName(static_cast<PipelineDrop>(d.drop)));
    }
}

void
L4BalancerDevice::Flush(std::vector<PacketDesc>& departed)
{
    m_engine->Flush(departed);
}

uint64_t
L4BalancerDevice::Age(uint64_t nowPs, uint32_t budget, std::vector<AgingWork>& work)
{
    const uint64_t removed = m_lb->Age(nowPs / 1000u, budget);
    for (uint32_t core = 0; core < m_numCores; ++core)
    {
        const double cycles = m_cost.CounterCycles(m_lb->LastAgingOps(core));
        if (cycles > 0)
        {
            work.push_back({core, m_engine->AddCoreWork(core, nowPs, cycles), cycles});
            m_agingCycles += cycles;
        }
    }
    return removed;
}

void
L4BalancerDevice::DoDispose()
{
    m_engine.reset();
    m_lb.reset();
    Object::DoDispose();
}

} // namespace routertwin
