// A TCP segment as an IPv4 layer's Rx or Tx trace sees it (the IPv4 header
// first, fields in network order): the tests' way to count what crossed a
// host without asking the applications they test.
#ifndef ROUTERTWIN_L7_TEST_TCP_SEGMENT_VIEW_H
#define ROUTERTWIN_L7_TEST_TCP_SEGMENT_VIEW_H

#include <ns3/packet.h>

#include <cstdint>
#include <optional>

namespace routertwin::test
{

struct TcpSegmentView
{
    uint16_t srcPort = 0, dstPort = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    uint32_t payload = 0; ///< bytes after the TCP header

    bool Syn() const { return flags & 0x02; }
    bool Ack() const { return flags & 0x10; }

    /// The segment in p, or none when p holds no whole IPv4 + TCP header.
    static std::optional<TcpSegmentView> Of(ns3::Ptr<const ns3::Packet> p)
    {
        uint8_t b[60];
        const uint32_t n = p->CopyData(b, sizeof b);
        if (n < 40 || b[9] != 6)
            return std::nullopt;
        const uint32_t ihl = (b[0] & 0x0f) * 4u, total = (uint32_t(b[2]) << 8) | b[3];
        if (n < ihl + 20)
            return std::nullopt;
        const uint8_t* t = b + ihl;
        TcpSegmentView v;
        v.srcPort = static_cast<uint16_t>((t[0] << 8) | t[1]);
        v.dstPort = static_cast<uint16_t>((t[2] << 8) | t[3]);
        v.seq = (uint32_t(t[4]) << 24) | (uint32_t(t[5]) << 16) | (uint32_t(t[6]) << 8) | t[7];
        v.ack = (uint32_t(t[8]) << 24) | (uint32_t(t[9]) << 16) | (uint32_t(t[10]) << 8) | t[11];
        v.flags = t[13];
        v.payload = total - ihl - (t[12] >> 4) * 4u;
        return v;
    }
};

} // namespace routertwin::test

#endif
