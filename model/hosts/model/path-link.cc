#include "path-link.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace routertwin
{

NS_LOG_COMPONENT_DEFINE("RouterTwinPathLink");
NS_OBJECT_ENSURE_REGISTERED(PathServer);
NS_OBJECT_ENSURE_REGISTERED(PathChannel);
NS_OBJECT_ENSURE_REGISTERED(PathNetDevice);

const char*
PathDropName(PathDrop reason)
{
    switch (reason)
    {
    case PathDrop::kQueueFull:
        return "queue_full";
    case PathDrop::kRandomLoss:
        return "random_loss";
    case PathDrop::kNat:
        return "nat";
    default:
        return "unknown";
    }
}

ns3::TypeId
PathServer::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("routertwin::PathServer")
            .SetParent<ns3::Object>()
            .AddConstructor<PathServer>()
            .AddAttribute("PerPacket", "Fixed service time per packet.", ns3::TimeValue(ns3::Seconds(0)),
                          ns3::MakeTimeAccessor(&PathServer::m_perPacket), ns3::MakeTimeChecker())
            .AddAttribute("PerByte", "Service seconds per byte (8 / bit rate for a link).", ns3::DoubleValue(0),
                          ns3::MakeDoubleAccessor(&PathServer::m_perByteSeconds),
                          ns3::MakeDoubleChecker<double>(0))
            .AddAttribute("OverheadBytes", "Bytes each packet adds on this server (framing).",
                          ns3::UintegerValue(0), ns3::MakeUintegerAccessor(&PathServer::m_overheadBytes),
                          ns3::MakeUintegerChecker<uint32_t>())
            .AddAttribute("QueueLimit", "Packets that may wait for the server.", ns3::UintegerValue(1000),
                          ns3::MakeUintegerAccessor(&PathServer::m_queueLimit),
                          ns3::MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Delay", "Pipelined delay after service (propagation, ASIC latency).",
                          ns3::TimeValue(ns3::Seconds(0)), ns3::MakeTimeAccessor(&PathServer::m_delay),
                          ns3::MakeTimeChecker())
            .AddAttribute("LossRate", "Probability a served packet is lost.", ns3::DoubleValue(0),
                          ns3::MakeDoubleAccessor(&PathServer::m_lossRate), ns3::MakeDoubleChecker<double>(0, 1))
            .AddTraceSource("Drop", "A packet dropped, with the reason's name.",
                            ns3::MakeTraceSourceAccessor(&PathServer::m_dropTrace),
                            "routertwin::PathServer::DropCallback");
    return tid;
}

PathServer::PathServer() = default;

void
PathServer::SetServiceHook(ServiceHook hook)
{
    m_hook = std::move(hook);
}

void
PathServer::SetLossStream(uint64_t seed, uint64_t stream)
{
    m_loss = std::make_unique<RandomStream>(seed, stream);
}

ns3::Time
PathServer::ServiceTime(uint32_t ipBytes) const
{
    return m_perPacket + ns3::Seconds(static_cast<double>(ipBytes + m_overheadBytes) * m_perByteSeconds);
}

bool
PathServer::Enqueue(ns3::Ptr<ns3::Packet> packet, uint16_t protocol, ns3::Ptr<PathNetDevice> to, bool asCpu)
{
    // The packet in service does not count against the queue (a NIC ring
    // slot being sent is free for the next), as in Linux's qdisc + ring.
    if (m_queue.size() >= m_queueLimit)
    {
        Drop(packet, PathDrop::kQueueFull);
        return false;
    }
    m_queue.push_back(Item{packet, protocol, to, asCpu});
    if (m_queue.size() > m_maxQueue)
    {
        m_maxQueue = static_cast<uint32_t>(m_queue.size());
    }
    if (!m_busy)
    {
        StartNext();
    }
    return true;
}

void
PathServer::StartNext()
{
    while (!m_queue.empty())
    {
        Item item = m_queue.front();
        m_queue.pop_front();
        ns3::Time extra;
        if (m_hook)
        {
            extra = m_hook(item.packet);
            if (extra.IsStrictlyNegative())
            {
                Drop(item.packet, PathDrop::kNat);
                continue;
            }
        }
        m_busy = true;
        m_busySince = ns3::Simulator::Now();
        m_inService = item;
        ns3::Simulator::Schedule(ServiceTime(item.packet->GetSize()) + extra, &PathServer::Finish, this);
        return;
    }
    m_busy = false;
}

void
PathServer::Finish()
{
    m_busyAccum += ns3::Simulator::Now() - m_busySince;
    ++m_served;
    Item item = m_inService;
    m_inService = Item{};
    if (m_lossRate > 0 && m_loss && m_loss->Bernoulli(m_lossRate))
    {
        Drop(item.packet, PathDrop::kRandomLoss);
    }
    else
    {
        const uint32_t nodeId = item.to->GetNode()->GetId();
        ns3::Simulator::ScheduleWithContext(nodeId, m_delay, &PathNetDevice::Arrive, item.to, item.packet,
                                            item.protocol, item.asCpu);
    }
    m_busy = false;
    StartNext();
}

void
PathServer::Drop(const ns3::Ptr<ns3::Packet>& p, PathDrop reason)
{
    ++m_drops[static_cast<int>(reason)];
    m_dropTrace(p, PathDropName(reason));
}

ns3::Time
PathServer::BusyTime() const
{
    return m_busyAccum + (m_busy ? ns3::Simulator::Now() - m_busySince : ns3::Time());
}

void
PathServer::ResetBusy()
{
    m_busyAccum = ns3::Time();
    if (m_busy)
    {
        m_busySince = ns3::Simulator::Now();
    }
}

void
PathServer::DoDispose()
{
    m_queue.clear();
    m_inService = Item{};
    m_hook = nullptr;
    ns3::Object::DoDispose();
}

ns3::TypeId
PathChannel::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("routertwin::PathChannel").SetParent<ns3::Channel>();
    return tid;
}

void
PathChannel::Attach(ns3::Ptr<PathNetDevice> a, ns3::Ptr<PathNetDevice> b)
{
    m_dev[0] = a;
    m_dev[1] = b;
}

std::size_t
PathChannel::GetNDevices() const
{
    return 2;
}

ns3::Ptr<ns3::NetDevice>
PathChannel::GetDevice(std::size_t i) const
{
    return i < 2 ? m_dev[i] : nullptr;
}

void
PathChannel::DoDispose()
{
    m_dev[0] = m_dev[1] = nullptr;
    ns3::Channel::DoDispose();
}

ns3::TypeId
PathNetDevice::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("routertwin::PathNetDevice").SetParent<ns3::NetDevice>();
    return tid;
}

void
PathNetDevice::Configure(ns3::Ptr<PathChannel> channel, ns3::Ptr<PathNetDevice> peer,
                         ns3::Ptr<PathServer> transmit, ns3::Ptr<PathServer> cpu)
{
    m_channel = channel;
    m_peer = peer;
    m_transmit = transmit;
    m_cpu = cpu;
    m_address = ns3::Mac48Address::Allocate();
}

void
PathNetDevice::Arrive(ns3::Ptr<ns3::Packet> packet, uint16_t protocol, bool asCpu)
{
    if (!asCpu && m_cpu)
    {
        m_cpu->Enqueue(packet, protocol, this, true);
        return;
    }
    if (!m_rx.IsNull())
    {
        m_rx(this, packet, protocol, m_peer->GetAddress());
    }
}

bool
PathNetDevice::Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address&, uint16_t protocolNumber)
{
    return m_transmit->Enqueue(packet, protocolNumber, m_peer, false);
}

bool
PathNetDevice::SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address&, const ns3::Address& dest,
                        uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

void
PathNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
PathNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

ns3::Ptr<ns3::Channel>
PathNetDevice::GetChannel() const
{
    return m_channel;
}

void
PathNetDevice::SetAddress(ns3::Address address)
{
    m_address = ns3::Mac48Address::ConvertFrom(address);
}

ns3::Address
PathNetDevice::GetAddress() const
{
    return m_address;
}

bool
PathNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
PathNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
PathNetDevice::IsLinkUp() const
{
    return true;
}

void
PathNetDevice::AddLinkChangeCallback(ns3::Callback<void>)
{
}

bool
PathNetDevice::IsBroadcast() const
{
    return false;
}

ns3::Address
PathNetDevice::GetBroadcast() const
{
    return ns3::Mac48Address::GetBroadcast();
}

bool
PathNetDevice::IsMulticast() const
{
    return false;
}

ns3::Address
PathNetDevice::GetMulticast(ns3::Ipv4Address) const
{
    return ns3::Mac48Address::GetBroadcast();
}

ns3::Address
PathNetDevice::GetMulticast(ns3::Ipv6Address) const
{
    return ns3::Mac48Address::GetBroadcast();
}

bool
PathNetDevice::IsBridge() const
{
    return false;
}

bool
PathNetDevice::IsPointToPoint() const
{
    return true;
}

ns3::Ptr<ns3::Node>
PathNetDevice::GetNode() const
{
    return m_node;
}

void
PathNetDevice::SetNode(ns3::Ptr<ns3::Node> node)
{
    m_node = node;
}

bool
PathNetDevice::NeedsArp() const
{
    return false;
}

void
PathNetDevice::SetReceiveCallback(ns3::NetDevice::ReceiveCallback cb)
{
    m_rx = cb;
}

void
PathNetDevice::SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback)
{
}

bool
PathNetDevice::SupportsSendFrom() const
{
    return false;
}

void
PathNetDevice::DoDispose()
{
    m_node = nullptr;
    m_channel = nullptr;
    m_peer = nullptr;
    m_transmit = nullptr;
    m_cpu = nullptr;
    m_rx = ns3::MakeNullCallback<bool, ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet>, uint16_t,
                                 const ns3::Address&>();
    ns3::NetDevice::DoDispose();
}

} // namespace routertwin
