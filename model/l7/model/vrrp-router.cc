#include "vrrp-router.h"

#include "dp_csum.h"

#include <ns3/arp-header.h>
#include <ns3/boolean.h>
#include <ns3/log.h>
#include <ns3/node.h>
#include <ns3/packet.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <stdexcept>

namespace routertwin
{
using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(VrrpRouter);

namespace
{
constexpr uint16_t kIpv4 = 0x0800, kArp = 0x0806;
constexpr uint8_t kVrrpProto = 112;        ///< RFC 5798 section 5.2.4
constexpr uint8_t kVrrpTtl = 255;          ///< section 5.2.3: sent and required
const Ipv4Address kVrrpGroup("224.0.0.18"); ///< section 5.2.2
constexpr uint32_t kHdr = 20, kAdvLen = 8 + 4; ///< IPv4 header; VRRPv3 with one IPv4 address

void
Put16(uint8_t* b, uint16_t v)
{
    b[0] = static_cast<uint8_t>(v >> 8);
    b[1] = static_cast<uint8_t>(v);
}

void
Put32(uint8_t* b, uint32_t v)
{
    Put16(b, static_cast<uint16_t>(v >> 16));
    Put16(b + 2, static_cast<uint16_t>(v));
}

uint16_t
Get16(const uint8_t* b)
{
    return static_cast<uint16_t>(b[0] << 8 | b[1]);
}

uint32_t
Get32(const uint8_t* b)
{
    return static_cast<uint32_t>(Get16(b)) << 16 | Get16(b + 2);
}

/// The VRRPv3 checksum: the message and the IPv4 pseudo-header (section
/// 5.2.8, RFC 2460 section 8.1's form for IPv4), RFC 1071 sum.
uint16_t
VrrpChecksum(uint32_t src, uint32_t dst, const uint8_t* msg, uint32_t len)
{
    uint8_t pseudo[12];
    Put32(pseudo, src);
    Put32(pseudo + 4, dst);
    pseudo[8] = 0;
    pseudo[9] = kVrrpProto;
    Put16(pseudo + 10, static_cast<uint16_t>(len));
    const uint16_t partial = dp_csum_partial(pseudo, sizeof pseudo, 0, nullptr);
    return static_cast<uint16_t>(~dp_csum_partial(msg, len, partial, nullptr));
}
} // namespace

TypeId
VrrpRouter::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::VrrpRouter")
            .SetParent<Object>()
            .AddConstructor<VrrpRouter>()
            .AddAttribute("Priority",
                          "Priority (1-254 for a router that does not own the address; RFC 5798 default 100).",
                          UintegerValue(100), MakeUintegerAccessor(&VrrpRouter::m_priority),
                          MakeUintegerChecker<uint8_t>(1, 254))
            .AddAttribute("AdvertisementInterval",
                          "Advertisement_Interval (RFC 5798: 1 s by default, centisecond ticks).",
                          TimeValue(Seconds(1)), MakeTimeAccessor(&VrrpRouter::m_adverInterval),
                          MakeTimeChecker(MilliSeconds(10), MilliSeconds(40950)))
            .AddAttribute("Preempt", "Preempt_Mode (RFC 5798 default true).", BooleanValue(true),
                          MakeBooleanAccessor(&VrrpRouter::m_preempt), MakeBooleanChecker())
            .AddTraceSource("State", "The router became backup or master.",
                            MakeTraceSourceAccessor(&VrrpRouter::m_stateTrace),
                            "routertwin::VrrpRouter::StateTracedCallback");
    return tid;
}

VrrpRouter::VrrpRouter() = default;

void
VrrpRouter::Attach(Ptr<WebSwitch> sw, Ptr<NetDevice> dev, Ipv4Address ownIp, Ipv4Address vip, uint8_t vrid,
                   bool activeActive)
{
    const WebSwitchProfile& pr = sw->GetProfile();
    if (!(activeActive ? pr.activeActive : pr.activeBackup))
        throw std::invalid_argument(pr.platform + ": no " + (activeActive ? "active/active" : "active/backup") +
                                    " redundancy (features.fault_tolerance)");
    if (vrid == 0 || !dev->SupportsSendFrom())
        throw std::invalid_argument("VRRP needs a VRID 1-255 and a device that sends from another MAC");
    m_switch = sw;
    m_dev = dev;
    m_ownIp = ownIp;
    m_vip = vip;
    m_vrid = vrid;
    // section 7.3: 00-00-5E-00-01-{VRID}
    uint8_t mac[6] = {0x00, 0x00, 0x5e, 0x00, 0x01, vrid};
    m_vmac.CopyFrom(mac);
    m_masterAdverInterval = m_adverInterval;
    dev->GetNode()->RegisterProtocolHandler(MakeCallback(&VrrpRouter::Receive, this), 0, dev, true);
}

Time
VrrpRouter::SkewTime(Time masterAdverInterval, uint8_t priority)
{
    // 1 cs = 10^7 ns: ((256 - priority) x cs x 10^7) / 256 ns, whole but
    // for a half nanosecond when (256 - priority) x cs is odd
    const int64_t cs = masterAdverInterval.GetMilliSeconds() / 10;
    return NanoSeconds((256 - int64_t{priority}) * cs * 10000000 / 256);
}

Time
VrrpRouter::MasterDownInterval(Time masterAdverInterval, uint8_t priority)
{
    return 3 * MilliSeconds(masterAdverInterval.GetMilliSeconds() / 10 * 10) +
           SkewTime(masterAdverInterval, priority);
}

Time
VrrpRouter::SkewTime() const
{
    return SkewTime(m_masterAdverInterval, m_priority);
}

Time
VrrpRouter::MasterDownInterval() const
{
    return MasterDownInterval(m_masterAdverInterval, m_priority);
}

uint64_t
VrrpRouter::Count(const std::string& what) const
{
    auto it = m_counts.find(what);
    return it == m_counts.end() ? 0 : it->second;
}

void
VrrpRouter::Set(State s)
{
    m_state = s;
    m_switch->SetVipActive(m_vip.Get(), s == Master);
    m_stateTrace(m_vrid, s, Simulator::Now());
}

void
VrrpRouter::Start(Time at)
{
    Simulator::Schedule(at - Simulator::Now(), [this]() {
        // section 6.4.1: no router here owns the address (priority < 255)
        m_masterAdverInterval = m_adverInterval;
        BecomeBackup();
    });
}

void
VrrpRouter::Stop()
{
    m_stopped = true;
    Simulator::Cancel(m_adverTimer);
    Simulator::Cancel(m_masterDownTimer);
}

void
VrrpRouter::BecomeBackup()
{
    Simulator::Cancel(m_adverTimer);
    Simulator::Cancel(m_masterDownTimer);
    m_masterDownTimer = Simulator::Schedule(MasterDownInterval(), &VrrpRouter::MasterDown, this);
    Set(Backup);
}

void
VrrpRouter::MasterDown()
{
    if (!m_stopped)
        BecomeMaster();
}

void
VrrpRouter::BecomeMaster()
{
    // section 6.4.2: an advertisement, a gratuitous ARP, the timer
    Simulator::Cancel(m_masterDownTimer);
    Set(Master);
    SendAdvertisement(m_priority);
    SendGratuitousArp();
    m_adverTimer = Simulator::Schedule(m_adverInterval, &VrrpRouter::AdvertTimer, this);
}

void
VrrpRouter::AdvertTimer()
{
    if (m_stopped || m_state != Master)
        return;
    SendAdvertisement(m_priority);
    m_adverTimer = Simulator::Schedule(m_adverInterval, &VrrpRouter::AdvertTimer, this);
}

void
VrrpRouter::SendAdvertisement(uint8_t priority)
{
    uint8_t b[kHdr + kAdvLen] = {};
    b[0] = 0x45;
    Put16(b + 2, sizeof b);
    Put16(b + 4, m_ipId++);
    b[8] = kVrrpTtl;
    b[9] = kVrrpProto;
    Put32(b + 12, m_ownIp.Get());
    Put32(b + 16, kVrrpGroup.Get());
    Put16(b + 10, dp_csum(b, kHdr, nullptr));
    uint8_t* v = b + kHdr;
    v[0] = 0x31; // version 3, type 1 (ADVERTISEMENT)
    v[1] = m_vrid;
    v[2] = priority;
    v[3] = 1; // one IPv4 address
    Put16(v + 4, static_cast<uint16_t>(m_adverInterval.GetMilliSeconds() / 10) & 0x0fff);
    Put32(v + 8, m_vip.Get());
    Put16(v + 6, VrrpChecksum(m_ownIp.Get(), kVrrpGroup.Get(), v, kAdvLen));
    // section 7.3: from the virtual MAC; 224.0.0.18's multicast MAC (RFC 1112)
    m_dev->SendFrom(Create<Packet>(b, sizeof b), m_vmac, Mac48Address("01:00:5e:00:00:12"), kIpv4);
    ++m_counts["advertisements_sent"];
}

void
VrrpRouter::SendGratuitousArp()
{
    ArpHeader arp;
    arp.SetRequest(m_vmac, m_vip, Mac48Address::GetBroadcast(), m_vip);
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(arp);
    m_dev->SendFrom(p, m_vmac, Mac48Address::GetBroadcast(), kArp);
    ++m_counts["gratuitous_arps"];
}

bool
VrrpRouter::Receive(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t proto, const Address& from, const Address& to,
                    NetDevice::PacketType)
{
    if (m_stopped || m_state == Initialize)
        return true;
    const Mac48Address dst = Mac48Address::ConvertFrom(to);
    if (proto == kArp)
        Arp(p);
    else if (proto == kIpv4 && dst == Mac48Address("01:00:5e:00:00:12"))
        Advertisement(p);
    else if (proto == kIpv4 && dst == m_vmac && m_state == Master)
    {
        ++m_counts["frames_to_switch"];
        m_switch->ClientFrame(p, Mac48Address::ConvertFrom(from));
    }
    return true;
}

void
VrrpRouter::Arp(Ptr<const Packet> p)
{
    // section 6.4.3: the master answers ARP for the VIP with the virtual
    // MAC; a backup does not
    ArpHeader arp;
    Ptr<Packet> q = p->Copy();
    if (q->RemoveHeader(arp) == 0 || !arp.IsRequest() || arp.GetDestinationIpv4Address() != m_vip ||
        arp.GetSourceIpv4Address() == m_vip || m_state != Master)
        return;
    ArpHeader reply;
    reply.SetReply(m_vmac, m_vip, arp.GetSourceHardwareAddress(), arp.GetSourceIpv4Address());
    Ptr<Packet> r = Create<Packet>();
    r->AddHeader(reply);
    m_dev->SendFrom(r, m_vmac, arp.GetSourceHardwareAddress(), kArp);
    ++m_counts["arp_replies"];
}

void
VrrpRouter::Advertisement(Ptr<const Packet> p)
{
    uint8_t b[kHdr + kAdvLen];
    if (p->GetSize() < sizeof b)
        return;
    p->CopyData(b, sizeof b);
    const uint8_t* v = b + kHdr;
    // section 7.1: TTL 255, version 3, a correct checksum, our VRID
    if (b[0] != 0x45 || b[9] != kVrrpProto || b[8] != kVrrpTtl || dp_csum(b, kHdr, nullptr) != 0 ||
        Get16(b + 2) != sizeof b || v[0] != 0x31 || VrrpChecksum(Get32(b + 12), Get32(b + 16), v, kAdvLen) != 0)
    {
        ++m_counts["advertisements_invalid"];
        return;
    }
    if (v[1] != m_vrid)
        return;
    ++m_counts["advertisements_received"];
    const uint8_t prio = v[2];
    const Time interval = MilliSeconds(10 * (Get16(v + 4) & 0x0fff));
    if (m_state == Backup)
    {
        if (prio == 0)
        {
            Simulator::Cancel(m_masterDownTimer);
            m_masterDownTimer = Simulator::Schedule(SkewTime(), &VrrpRouter::MasterDown, this);
        }
        else if (!m_preempt || prio >= m_priority)
        {
            m_masterAdverInterval = interval;
            Simulator::Cancel(m_masterDownTimer);
            m_masterDownTimer = Simulator::Schedule(MasterDownInterval(), &VrrpRouter::MasterDown, this);
        }
    }
    else if (m_state == Master)
    {
        if (prio == 0)
        {
            SendAdvertisement(m_priority);
            Simulator::Cancel(m_adverTimer);
            m_adverTimer = Simulator::Schedule(m_adverInterval, &VrrpRouter::AdvertTimer, this);
        }
        else if (prio > m_priority || (prio == m_priority && Get32(b + 12) > m_ownIp.Get()))
        {
            m_masterAdverInterval = interval;
            BecomeBackup();
        }
    }
}

} // namespace routertwin
