#include "conntrack-nat.h"

#include "dp_nat.h"
#include "dp_pkt.h"

#include "ns3/ipv4-header.h"
#include "ns3/tcp-header.h"

#include <cstring>
#include <stdexcept>

namespace routertwin
{

namespace
{

constexpr uint8_t kTcp = 6;
constexpr uint8_t kTcpSyn = 0x02;
constexpr uint8_t kTcpAck = 0x10;
constexpr uint32_t kEthHeader = 14;
// What a table value says to do to a packet: the new address and port, and
// which side to rewrite.
constexpr uint64_t kRewriteDst = 1;
constexpr uint64_t kRewriteSrc = 2;

uint64_t
Encode(uint32_t ip, uint16_t port, uint64_t side)
{
    return (static_cast<uint64_t>(ip) << 24) | (static_cast<uint64_t>(port) << 8) | side;
}

dp_flow_key_t
Key(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp)
{
    dp_flow_key_t k{};
    k.src_ip = s;
    k.dst_ip = d;
    k.src_port = sp;
    k.dst_port = dp;
    k.proto = kTcp;
    return k;
}

} // namespace

ConntrackNat::ConntrackNat(ns3::Ipv4Address eip, ns3::Ipv4Address inside, uint32_t capacity)
    : m_eip(eip.Get()),
      m_inside(inside.Get())
{
    dp_flow_config_t cfg{1, 2 * capacity};
    const size_t bytes = dp_flow_memory_size(&cfg);
    m_memory.reset(new uint64_t[bytes / sizeof(uint64_t) + 1]());
    m_table = dp_flow_create(m_memory.get(), bytes, &cfg);
    if (m_table == nullptr)
    {
        throw std::invalid_argument("conntrack table: dp_flow_create refused the configuration");
    }
}

ConntrackNat::~ConntrackNat() = default;

ConntrackNat::Verdict
ConntrackNat::Process(ns3::Ptr<ns3::Packet> packet, dp_ops_t* ops)
{
    // The core works on an Ethernet frame: a 14-byte header (MACs unused,
    // EtherType IPv4) before the packet's bytes. ns-3 leaves checksums zero
    // unless asked, so the parser does not verify them; the rewrites still
    // update them incrementally and count that work.
    const uint32_t size = packet->GetSize();
    m_frame.assign(kEthHeader + size, 0);
    m_frame[12] = 0x08;
    packet->CopyData(m_frame.data() + kEthHeader, size);
    const dp_parse_opts_t opts{0, 0};
    dp_parsed_t p{};
    if (dp_parse(m_frame.data(), m_frame.size(), &opts, &p, ops) != DP_OK || p.ip_proto != kTcp)
    {
        return p.dst_ip == m_eip ? Verdict::kDropped : Verdict::kPassed;
    }
    ++m_now;
    dp_flow_key_t key = Key(p.src_ip, p.dst_ip, p.src_port, p.dst_port);
    uint64_t value = 0;
    if (dp_flow_lookup(m_table, &key, m_now, &value, ops) != 0)
    {
        if (p.dst_ip != m_eip)
        {
            return Verdict::kPassed;
        }
        if ((p.tcp_flags & (kTcpSyn | kTcpAck)) != kTcpSyn)
        {
            return Verdict::kDropped; // conntrack INVALID: no entry for a mid-connection packet
        }
        // A new connection: the original direction DNATs to the inside
        // address, the reply direction (inside -> client) SNATs back.
        const dp_flow_key_t reply = Key(m_inside, p.src_ip, p.dst_port, p.src_port);
        if (dp_flow_insert(m_table, &key, Encode(m_inside, p.dst_port, kRewriteDst), m_now, ops) != 0 ||
            dp_flow_insert(m_table, &reply, Encode(m_eip, p.dst_port, kRewriteSrc), m_now, ops) != 0)
        {
            return Verdict::kDropped;
        }
        ++m_connections;
        value = Encode(m_inside, p.dst_port, kRewriteDst);
    }
    const uint32_t ip = static_cast<uint32_t>(value >> 24);
    const uint16_t port = static_cast<uint16_t>((value >> 8) & 0xFFFF);
    const int rc = (value & 0xFF) == kRewriteDst
                       ? dp_nat_rewrite_dst(m_frame.data(), m_frame.size(), &p, ip, port, ops)
                       : dp_nat_rewrite_src(m_frame.data(), m_frame.size(), &p, ip, port, ops);
    if (rc != 0)
    {
        return Verdict::kDropped;
    }
    // Carry the core's rewrite back into the ns-3 headers (the payload is untouched).
    ns3::Ipv4Header ipHeader;
    ns3::TcpHeader tcpHeader;
    packet->RemoveHeader(ipHeader);
    packet->RemoveHeader(tcpHeader);
    ipHeader.SetSource(ns3::Ipv4Address(p.src_ip));
    ipHeader.SetDestination(ns3::Ipv4Address(p.dst_ip));
    tcpHeader.SetSourcePort(p.src_port);
    tcpHeader.SetDestinationPort(p.dst_port);
    packet->AddHeader(tcpHeader);
    packet->AddHeader(ipHeader);
    ++m_translated;
    return Verdict::kTranslated;
}

} // namespace routertwin
