#include "ethernet-port.h"

#include "ethernet-framing.h"

#include <ns3/data-rate.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <stdexcept>

using namespace ns3;

namespace routertwin
{

NS_OBJECT_ENSURE_REGISTERED(EthernetPortDevice);
NS_OBJECT_ENSURE_REGISTERED(EthernetLink);

TypeId
EthernetPortDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::EthernetPortDevice")
            .SetParent<NetDevice>()
            .SetGroupName("RouterTwin")
            .AddConstructor<EthernetPortDevice>()
            .AddAttribute("DataRate", "Line rate of the port.", DataRateValue(DataRate("10Gbps")),
                          MakeDataRateAccessor(&EthernetPortDevice::m_rate), MakeDataRateChecker())
            .AddAttribute("TxQueueFrames", "Frames the transmit queue holds beside the one on the wire; 0 = "
                                           "unbounded.",
                          UintegerValue(0), MakeUintegerAccessor(&EthernetPortDevice::m_queueLimit),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Drop", "A frame the port could not queue (\"tx_queue_full\").",
                            MakeTraceSourceAccessor(&EthernetPortDevice::m_dropTrace),
                            "routertwin::EthernetPortDevice::DropTracedCallback");
    return tid;
}

EthernetPortDevice::EthernetPortDevice()
    : m_address(Mac48Address::Allocate())
{
}

double
EthernetPortDevice::OccupancySeconds(uint32_t l2Bytes) const
{
    return ethernet::WireSeconds(static_cast<double>(m_rate.GetBitRate()), ethernet::FrameBytesFromL2(l2Bytes));
}

double
EthernetPortDevice::LastBitSeconds(uint32_t l2Bytes) const
{
    // preamble/SFD then the padded frame; the gap follows the last bit
    return 8.0 * (ethernet::kPreambleSfdBytes + ethernet::FrameBytesFromL2(l2Bytes)) /
           static_cast<double>(m_rate.GetBitRate());
}

void
EthernetPortDevice::Attach(Ptr<EthernetLink> link)
{
    m_link = link;
    link->Connect(this);
}

bool
EthernetPortDevice::Send(Ptr<Packet> packet, const Address&, uint16_t)
{
    if (!m_link)
    {
        throw std::logic_error("EthernetPortDevice::Send: the port is not attached to a link");
    }
    // the frame on the wire has left the queue: the limit counts those waiting
    if (m_queueLimit && m_queue.size() >= m_queueLimit)
    {
        ++m_txDrops;
        m_dropTrace(packet, "tx_queue_full");
        return false;
    }
    m_queue.push_back({packet, Simulator::Now()});
    if (!m_busy)
    {
        StartNext();
    }
    return true;
}

void
EthernetPortDevice::StartNext()
{
    if (m_queue.empty())
    {
        m_busy = false;
        return;
    }
    m_busy = true;
    Queued q = m_queue.front();
    m_queue.pop_front();
    m_txWait += Simulator::Now() - q.enqueued;
    ++m_txFrames;
    const uint32_t bytes = q.frame->GetSize();
    m_link->Carry(this, q.frame, PicoSeconds(static_cast<int64_t>(LastBitSeconds(bytes) * 1e12 + 0.5)));
    Simulator::Schedule(PicoSeconds(static_cast<int64_t>(OccupancySeconds(bytes) * 1e12 + 0.5)),
                        &EthernetPortDevice::StartNext, this);
}

void
EthernetPortDevice::Deliver(Ptr<Packet> frame)
{
    ++m_rxFrames;
    uint8_t head[14] = {};
    frame->CopyData(head, sizeof head); // the EtherType is bytes 12-13 of the L2 header
    const uint16_t protocol = static_cast<uint16_t>(head[12] << 8 | head[13]);
    if (!m_rx.IsNull())
    {
        m_rx(this, frame, protocol, m_link->GetDevice(m_link->GetDevice(0) == this ? 1 : 0)->GetAddress());
    }
}

void
EthernetPortDevice::DoDispose()
{
    m_queue.clear();
    m_link = nullptr;
    m_node = nullptr;
    m_rx = MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>();
    NetDevice::DoDispose();
}

void
EthernetPortDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
EthernetPortDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
EthernetPortDevice::GetChannel() const
{
    return m_link;
}

void
EthernetPortDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
EthernetPortDevice::GetAddress() const
{
    return m_address;
}

bool
EthernetPortDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
EthernetPortDevice::GetMtu() const
{
    return m_mtu;
}

bool
EthernetPortDevice::IsLinkUp() const
{
    return m_link != nullptr;
}

void
EthernetPortDevice::AddLinkChangeCallback(Callback<void>)
{
    // the cable never goes down in these runs
}

bool
EthernetPortDevice::IsBroadcast() const
{
    return true;
}

Address
EthernetPortDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
EthernetPortDevice::IsMulticast() const
{
    return false;
}

Address
EthernetPortDevice::GetMulticast(Ipv4Address) const
{
    return Mac48Address::GetMulticast(Ipv4Address());
}

Address
EthernetPortDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
EthernetPortDevice::IsBridge() const
{
    return false;
}

bool
EthernetPortDevice::IsPointToPoint() const
{
    return true;
}

bool
EthernetPortDevice::SendFrom(Ptr<Packet> packet, const Address&, const Address& dest, uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

Ptr<Node>
EthernetPortDevice::GetNode() const
{
    return m_node;
}

void
EthernetPortDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
EthernetPortDevice::NeedsArp() const
{
    return false;
}

void
EthernetPortDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rx = cb;
}

void
EthernetPortDevice::SetPromiscReceiveCallback(NetDevice::PromiscReceiveCallback cb)
{
    m_promiscRx = cb;
}

bool
EthernetPortDevice::SupportsSendFrom() const
{
    return false;
}

TypeId
EthernetLink::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::EthernetLink")
                            .SetParent<Channel>()
                            .SetGroupName("RouterTwin")
                            .AddConstructor<EthernetLink>()
                            .AddAttribute("Delay", "Propagation delay of the cable.", TimeValue(Seconds(0)),
                                          MakeTimeAccessor(&EthernetLink::m_delay), MakeTimeChecker(Seconds(0)));
    return tid;
}

EthernetLink::EthernetLink() = default;

void
EthernetLink::Connect(Ptr<EthernetPortDevice> end)
{
    if (!m_end[0])
    {
        m_end[0] = end;
    }
    else if (!m_end[1])
    {
        m_end[1] = end;
    }
    else
    {
        throw std::logic_error("EthernetLink: a cable has two ends");
    }
}

void
EthernetLink::Carry(Ptr<EthernetPortDevice> from, Ptr<Packet> frame, Time lastBit)
{
    Ptr<EthernetPortDevice> to = m_end[0] == from ? m_end[1] : m_end[0];
    if (!to)
    {
        throw std::logic_error("EthernetLink: the other end is not connected");
    }
    Simulator::Schedule(lastBit + m_delay, &EthernetPortDevice::Deliver, to, frame);
}

std::size_t
EthernetLink::GetNDevices() const
{
    return (m_end[0] ? 1 : 0) + (m_end[1] ? 1 : 0);
}

Ptr<NetDevice>
EthernetLink::GetDevice(std::size_t i) const
{
    return i < 2 ? Ptr<NetDevice>(m_end[i]) : nullptr;
}

void
EthernetLink::DoDispose()
{
    m_end[0] = nullptr;
    m_end[1] = nullptr;
    Channel::DoDispose();
}

} // namespace routertwin
