#include "lb-packet-level.h"

#include "dp_pkt.h"

#include <ns3/simulator.h>

#include <algorithm>
#include <stdexcept>

using namespace ns3;

namespace routertwin
{

NS_OBJECT_ENSURE_REGISTERED(L4BalancerPorts);
NS_OBJECT_ENSURE_REGISTERED(LbTesterApp);

namespace
{

constexpr size_t kHeadroom = 64; // room for the tunnel mode's outer header
constexpr size_t kFrameBuffer = kLbFrameBuffer;

} // namespace

uint32_t
LbPortMap::PortOf(uint32_t ip) const
{
    const uint32_t half = std::max(1u, ports / 2);
    // servers 10.1.s.(k+1), the SNAT address, and a VIP (10.0.0.0/16) as the
    // destination of a frame leaving the balancer: under direct routing the
    // client's packet goes to the server unchanged but for its MAC
    const bool serverSide = (ip >> 16) == 0x0A01u || (ip >> 16) == 0x0A00u || ip == L4Balancer::kSnatIp;
    if (serverSide)
    {
        // service and server spread over the server ports
        return half + (((ip >> 8) & 0xFFu) + (ip & 0xFFu)) % std::max(1u, ports - half);
    }
    // 198.18.u.x (http11 user u) and the DNS clients' 198.18.0.0/15 addresses
    return ((ip >> 8) + (ip & 0xFFu)) % half;
}

TypeId
LbFrameTag::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::LbFrameTag").SetParent<Tag>().SetGroupName("RouterTwin").AddConstructor<LbFrameTag>();
    return tid;
}

TypeId
LbFrameTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
LbFrameTag::GetSerializedSize() const
{
    return 4;
}

void
LbFrameTag::Serialize(TagBuffer i) const
{
    i.WriteU32(id);
}

void
LbFrameTag::Deserialize(TagBuffer i)
{
    id = i.ReadU32();
}

void
LbFrameTag::Print(std::ostream& os) const
{
    os << "id=" << id;
}

TypeId
L4BalancerPorts::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::L4BalancerPorts").SetParent<Object>().SetGroupName("RouterTwin").AddConstructor<L4BalancerPorts>();
    return tid;
}

void
L4BalancerPorts::Install(Ptr<Node> node, Ptr<L4BalancerDevice> device, const std::vector<Ptr<EthernetPortDevice>>& ports,
                         LbPortMap map)
{
    m_device = device;
    m_ports = ports;
    m_map = map;
    m_windowCycles.assign(device->Engine().Config().numCores, 0.0);
    for (const Ptr<EthernetPortDevice>& p : ports)
    {
        node->RegisterProtocolHandler(MakeCallback(&L4BalancerPorts::Receive, this), 0, p);
    }
}

uint32_t
LbPortMap::IngressPort(const LbTester& tester, const LbTxPacket& pkt, uint32_t floodPorts) const
{
    if (ports <= 1)
    {
        return 0; // one port carries both sides (PortOf's server half would be port 1)
    }
    return floodPorts && tester.IsFloodSyn(pkt) ? static_cast<uint32_t>(pkt.unit % floodPorts)
                                                : PortOf(tester.SourceIp(pkt));
}

void
L4BalancerPorts::SetLossTimeline(uint32_t bins, double spanSeconds)
{
    m_loss = LossTimeline(static_cast<unsigned>(m_ports.size()), bins, spanSeconds, PipelineDropReasons());
}

void
L4BalancerPorts::StartAging(uint64_t intervalPs, uint64_t endPs, std::function<uint32_t()> budget)
{
    m_agingIntervalPs = intervalPs;
    m_agingEndPs = endPs;
    m_agingBudget = budget;
    Simulator::Schedule(PicoSeconds(static_cast<int64_t>(intervalPs)), &L4BalancerPorts::Age, this);
}

void
L4BalancerPorts::SetWindow(uint64_t fromPs, uint64_t toPs)
{
    m_fromPs = fromPs;
    m_toPs = toPs;
}

void
L4BalancerPorts::Age()
{
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    m_work.clear();
    const uint32_t budget = m_agingBudget();
    if (budget > 0) // 0 would mean a whole shard
    {
        m_device->Age(now, budget, m_work);
    }
    for (const L4BalancerDevice::AgingWork& w : m_work)
    {
        if (w.endPs >= m_fromPs && w.endPs < m_toPs)
        {
            m_windowCycles[w.core] += w.cycles;
            m_windowAging += w.cycles;
        }
    }
    if (now + m_agingIntervalPs <= m_agingEndPs)
    {
        Simulator::Schedule(PicoSeconds(static_cast<int64_t>(m_agingIntervalPs)), &L4BalancerPorts::Age, this);
    }
}

void
L4BalancerPorts::Receive(Ptr<NetDevice> ingress, Ptr<const Packet> packet, uint16_t, const Address&, const Address&,
                         NetDevice::PacketType)
{
    ++m_received;
    alignas(8) uint8_t storage[kFrameBuffer];
    uint8_t* const buf = storage + kHeadroom;
    const size_t len = std::min<size_t>(packet->GetSize(), kFrameBuffer - kHeadroom);
    packet->CopyData(buf, len);
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    m_batch.clear();
    uint8_t* out = buf;
    size_t outLen = len;
    const uint32_t tag = m_nextTag++;
    const LbVerdict v = m_device->Offer(buf, len, kFrameBuffer - kHeadroom, kHeadroom, now, tag, m_batch, &out, &outLen);
    if (v.dpDrop == DP_OK)
    {
        Ptr<Packet> frame = Create<Packet>(out, static_cast<uint32_t>(outLen));
        LbFrameTag t;
        if (packet->PeekPacketTag(t))
        {
            frame->AddPacketTag(t);
        }
        m_inside.emplace(tag, std::make_pair(frame, m_map.PortOf(v.out.dst_ip)));
    }
    m_departed.clear();
    m_dropped.clear();
    m_device->Run(m_batch, m_departed, m_dropped);
    // No egress stage in the engine (the ports serialise): every frame's
    // departure is its core's finish, final as soon as it is computed.
    m_device->Flush(m_departed);
    for (const PacketDesc& d : m_departed)
    {
        if (d.departPs >= m_fromPs && d.departPs < m_toPs)
        {
            m_windowCycles[m_device->CoreOfDesc(d)] += d.serviceCycles;
        }
        auto it = m_inside.find(d.seq);
        Simulator::Schedule(PicoSeconds(static_cast<int64_t>(d.departPs - now)), &L4BalancerPorts::Transmit, this,
                            it->second.first, it->second.second);
        m_inside.erase(it);
    }
    // every drop of this call is of frames that came in on `ingress`
    const auto port = m_dropped.empty() ? 0 : std::find(m_ports.begin(), m_ports.end(), ingress) - m_ports.begin();
    for (const PacketDesc& d : m_dropped)
    {
        m_inside.erase(d.seq); // the engine's queue drop; the tester times it out
        m_loss.Add(static_cast<unsigned>(port), static_cast<double>(now) * 1e-12, 1.0, PipelineDropReasonIndex(d));
    }
}

void
L4BalancerPorts::Transmit(Ptr<Packet> frame, uint32_t port)
{
    m_ports.at(port)->Send(frame, Address(), 0x0800);
}

void
L4BalancerPorts::DoDispose()
{
    m_device = nullptr;
    m_ports.clear();
    m_inside.clear();
    Object::DoDispose();
}

TypeId
LbTesterApp::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::LbTesterApp").SetParent<Application>().SetGroupName("RouterTwin").AddConstructor<LbTesterApp>();
    return tid;
}

void
LbTesterApp::Configure(LbTester* tester, const std::vector<Ptr<EthernetPortDevice>>& ports, LbPortMap map,
                       uint64_t endPs, uint64_t slicePs, uint32_t floodPorts)
{
    m_floodPorts = floodPorts;
    m_tester = tester;
    m_ports = ports;
    m_portLatency.assign(ports.size(), LatencyHistogram{});
    m_portSum.assign(ports.size(), 0.0);
    m_map = map;
    m_endPs = endPs;
    m_slicePs = slicePs;
}

void
LbTesterApp::StartApplication()
{
    for (const Ptr<EthernetPortDevice>& p : m_ports)
    {
        GetNode()->RegisterProtocolHandler(MakeCallback(&LbTesterApp::Receive, this), 0, p);
    }
    Simulator::ScheduleNow(&LbTesterApp::Slice, this, uint64_t{0});
}

void
LbTesterApp::StopApplication()
{
}

void
LbTesterApp::Slice(uint64_t fromPs)
{
    // the packets due in this slice (after the end: every packet left, the
    // later steps of units started before it), each sent at its own time
    const bool tail = fromPs >= m_endPs;
    const uint64_t toPs = tail ? UINT64_MAX : std::min(fromPs + m_slicePs, m_endPs);
    m_emit.clear();
    m_tester->Emit(toPs, m_emit);
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    for (const LbTxPacket& p : m_emit)
    {
        Simulator::Schedule(PicoSeconds(static_cast<int64_t>(std::max(p.timePs, now) - now)), &LbTesterApp::SendOne,
                            this, p);
    }
    if (!tail)
    {
        Simulator::Schedule(PicoSeconds(static_cast<int64_t>(toPs - fromPs)), &LbTesterApp::Slice, this, toPs);
    }
}

void
LbTesterApp::SendOne(LbTxPacket pkt)
{
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    if (m_tester->Spare(pkt))
    {
        return; // a step kept for a retransmission that was not needed
    }
    if (m_tester->Bypasses(pkt))
    {
        // a server's reply under DR or tunnel: straight to the client
        m_tester->OnDeparted(pkt, now);
        return;
    }
    if (!m_tester->CanSend(pkt))
    {
        // it answers a packet that has not arrived yet: sent when that does
        m_parked[UnitKey(pkt)].push_back(pkt);
        return;
    }
    uint8_t buf[kFrameBuffer];
    const size_t len = m_tester->Build(pkt, buf, sizeof buf);
    dp_parsed_t p{};
    dp_parse(buf, len, nullptr, &p, nullptr);
    Ptr<Packet> frame = Create<Packet>(buf, static_cast<uint32_t>(len));
    LbFrameTag tag;
    tag.id = m_nextId++;
    frame->AddPacketTag(tag);
    ++m_sent;
    const uint32_t port = m_map.IngressPort(*m_tester, pkt, m_floodPorts);
    if (m_ports.at(port)->Send(frame, Address(), 0x0800))
    {
        m_outstanding.emplace(tag.id, Outstanding{pkt, now, p.src_ip, port});
    }
    else
    {
        m_tester->OnLost(pkt);
    }
}

void
LbTesterApp::Receive(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t, const Address&, const Address&,
                     NetDevice::PacketType)
{
    LbFrameTag tag;
    if (!packet->PeekPacketTag(tag))
    {
        return;
    }
    auto it = m_outstanding.find(tag.id);
    if (it == m_outstanding.end())
    {
        return;
    }
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    uint8_t buf[kFrameBuffer];
    const size_t len = std::min<size_t>(packet->GetSize(), sizeof buf);
    packet->CopyData(buf, len);
    // What the tester can tell from the frame it got: forwarded, or sent
    // back to the client that sent it (a DNS answer, a SYN-ACK with a
    // cookie); a client's SYN reaching a server (a cookie handshake's ACK is
    // sent on as the SYN) is a connection opened there, on the server and
    // SNAT port the frame shows.
    LbVerdict v;
    dp_parse(buf, len, nullptr, &v.out, nullptr);
    v.answered = v.out.dst_ip == it->second.srcIp;
    v.opened = !v.answered && v.out.ip_proto == DP_IPPROTO_TCP &&
               (v.out.tcp_flags & (DP_SESS_TCP_SYN | DP_SESS_TCP_ACK)) == DP_SESS_TCP_SYN;
    const Outstanding o = it->second;
    m_outstanding.erase(it);
    m_tester->OnVerdict(o.pkt, v, buf, len);
    m_tester->OnDeparted(o.pkt, now);
    ++m_received;
    const double latency = static_cast<double>(now - o.sentPs) * 1e-12;
    m_sumLatency += latency;
    m_latency.Add(latency);
    m_portLatency[o.port].Add(latency);
    m_portSum[o.port] += latency;
    // the unit's packets that waited for this one go now
    auto parked = m_parked.find(UnitKey(o.pkt));
    if (parked != m_parked.end())
    {
        const std::vector<LbTxPacket> waiting = std::move(parked->second);
        m_parked.erase(parked);
        for (const LbTxPacket& w : waiting)
        {
            SendOne(w); // parks it again if it still lacks something
        }
    }
}

void
LbTesterApp::Finish()
{
    for (const auto& [id, o] : m_outstanding)
    {
        m_tester->OnLost(o.pkt);
    }
    m_outstanding.clear();
    for (const auto& [unit, waiting] : m_parked)
    {
        for (const LbTxPacket& w : waiting)
        {
            m_tester->OnLost(w); // what it answers never arrived
        }
    }
    m_parked.clear();
}

uint64_t
LbTesterApp::UnitKey(const LbTxPacket& pkt)
{
    return (uint64_t{pkt.stream} << 56) | pkt.unit;
}

void
LbTesterApp::DoDispose()
{
    m_ports.clear();
    m_outstanding.clear();
    m_parked.clear();
    Application::DoDispose();
}

} // namespace routertwin
