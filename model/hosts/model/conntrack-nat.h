// Destination NAT of an EIP as Linux iptables does it (a host namespace in a
// ZStack flat network, iptables on a vyos virtual router in a VPC), on the C
// core: every packet is parsed (dp_parse), looked up in the connection
// tracking table (dp_flow: one entry per direction, as a conntrack entry has
// an original and a reply tuple hash), and rewritten (dp_nat_rewrite_dst on
// the way in, dp_nat_rewrite_src on replies, RFC 1624 checksum updates).
// A TCP SYN to the EIP creates the entry (iptables -t nat PREROUTING DNAT is
// consulted only for a connection's first packet; later packets follow
// conntrack). The core counts the work (dp_ops); the caller prices it.
#ifndef ROUTERTWIN_CONNTRACK_NAT_H
#define ROUTERTWIN_CONNTRACK_NAT_H

#include "dp_flow.h"
#include "dp_ops.h"

#include "ns3/ipv4-address.h"
#include "ns3/packet.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace routertwin
{

class ConntrackNat
{
  public:
    /// Connections to `eip` are DNATed to `inside` (same port); `capacity`
    /// connections fit (two table entries each).
    ConntrackNat(ns3::Ipv4Address eip, ns3::Ipv4Address inside, uint32_t capacity);
    ~ConntrackNat();
    ConntrackNat(const ConntrackNat&) = delete;
    ConntrackNat& operator=(const ConntrackNat&) = delete;

    enum class Verdict
    {
        kPassed,     ///< not ours (no entry, not to the EIP): forwarded unchanged
        kTranslated, ///< addresses rewritten
        kDropped     ///< to the EIP without an entry and not a SYN, or the table full
    };

    /// Processes one IPv4 packet (headers at its front); the core's counts
    /// for it are added to `ops`.
    Verdict Process(ns3::Ptr<ns3::Packet> packet, dp_ops_t* ops);

    uint64_t Connections() const { return m_connections; }
    uint64_t Translated() const { return m_translated; }

  private:
    uint32_t m_eip;
    uint32_t m_inside;
    uint64_t m_now = 0;
    uint64_t m_connections = 0;
    uint64_t m_translated = 0;
    std::unique_ptr<uint64_t[]> m_memory;
    dp_flow_table_t* m_table = nullptr;
    std::vector<uint8_t> m_frame;
};

} // namespace routertwin

#endif
