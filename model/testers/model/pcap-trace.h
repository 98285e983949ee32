// PcapTrace: a pcap capture file read one record at a time, as a workload
// (issue 16): each packet's timestamp, its frame size and its flow.
//
// Format: the classic libpcap file (draft-ietf-opsawg-pcap, "PCAP Capture
// File Format"): a 24-byte file header (magic 0xA1B2C3D4 for microsecond or
// 0xA1B23C4D for nanosecond timestamps, in either byte order; version 2.4;
// snaplen; link type) and records of a 16-byte header (seconds, fraction,
// captured length, original length) and the captured octets. Link types:
// 1 (Ethernet, frames without FCS as capture tools record them) and 101 /
// 228 (raw IPv4/IPv6).
//
// pcapng (draft-ietf-opsawg-pcapng, "PCAP Next Generation Dump File
// Format"): blocks of (type, total length, body, total length again), in the
// byte order of their section, which a Section Header Block's byte-order
// magic 0x1A2B3C4D sets (a file may hold several sections, each with its own
// order and interfaces). Read: Section Header (major version 1), Interface
// Description (link type, snaplen; options if_tsresol, the timestamp unit
// 10^-v or 2^-v s, default microseconds, and if_tsoffset, seconds added),
// Enhanced Packet (interface, 64-bit timestamp, captured and original
// length) and Simple Packet blocks (interface 0, no timestamp: a Simple
// Packet takes the previous packet's instant, as capture tools that write
// them do not record one); every other block is skipped by its length, its
// trailing length checked. The obsolete Packet Block (type 2) is refused.
//
// Streaming: the file is read through one 1 MiB buffer, and of each record
// only its first 128 octets (the headers of the flow key) are looked at, so
// a trace of any length replays in constant memory. Records may be up to
// 262,144 octets (libpcap's largest snaplen). Every length is checked against the file and the record
// before it is used; a malformed or truncated file throws TraceError whose
// message names the file and the 0-based packet index.
//
// Frame size: Ethernet: original length + 4 (FCS); raw IP: IP length + 18
// (Ethernet header + FCS); below 64 bytes the frame is padded to 64, as on
// the wire; above 9216 (the jumbo limit here) is an error.
// Addresses: an IPv4 packet's source and destination (TracePacket::ipv4Src,
// ipv4Dst), for a replay that routes each packet by its own destination;
// TCP and UDP ports, and a TCP segment's flags and payload length (the IP
// length less the IP and TCP headers), for connections read from a trace.
// Flow: the 5-tuple (addresses, protocol, TCP/UDP ports; fragments and other
// protocols by addresses and protocol; non-IP by MACs and EtherType; one
// 802.1Q tag skipped) numbered 0, 1, ... in order of first appearance. Past
// maxFlows distinct tuples, further tuples share ids (hash mod maxFlows).
#ifndef ROUTERTWIN_PCAP_TRACE_H
#define ROUTERTWIN_PCAP_TRACE_H

#include "ethernet-framing.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace routertwin
{

class TraceError : public std::invalid_argument
{
  public:
    using std::invalid_argument::invalid_argument;
};

struct TracePacket
{
    uint64_t ns = 0;          ///< capture timestamp, ns since the epoch (exact: a
                              ///< double of epoch seconds keeps only ~0.4 us)
    uint32_t frameBytes = 0;  ///< Ethernet frame incl. FCS (see above)
    uint32_t flow = 0;        ///< dense flow id of its 5-tuple
    uint32_t ipBytes = 0;     ///< the packet's original length past its link header
                              ///< (Ethernet: 14 octets, 18 with one 802.1Q tag;
                              ///< raw IP: all of it): the IP packet of an IP frame
    bool ipv4 = false;        ///< an IPv4 packet whose addresses were captured
    uint32_t ipv4Src = 0;     ///< its source address (host order); 0 unless ipv4
    uint32_t ipv4Dst = 0;     ///< its destination address (host order); 0 unless ipv4
    uint16_t srcPort = 0, dstPort = 0; ///< TCP or UDP ports (unfragmented); else 0
    bool tcp = false;         ///< a TCP segment whose header was captured
    uint8_t tcpFlags = 0;     ///< its flags (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10)
    uint32_t tcpPayload = 0;  ///< its payload octets, from the IP length (original, not captured)
};

class PcapTrace
{
  public:
    /// Opens and checks the file header. Throws TraceError.
    PcapTrace(const std::string& path, uint32_t maxFlows);
    ~PcapTrace();
    PcapTrace(const PcapTrace&) = delete;
    PcapTrace& operator=(const PcapTrace&) = delete;

    /// The next packet; false at the end of the file. Throws TraceError.
    /// (Inline: a pcapng file's common block is read without a further call.)
    bool Next(TracePacket& p) { return m_pcapng ? NextEnhancedFast(p) || NextPcapng(p) : NextPcap(p); }
    /// Back to the first packet (flow ids are kept: a loop replays the same
    /// flows).
    void Rewind();

    /// Reads the whole file once without keeping it (count, first and last
    /// timestamp), then rewinds. Throws TraceError.
    struct Summary
    {
        uint64_t packets = 0;
        uint64_t firstNs = 0, lastNs = 0;
        double meanFrameBytes = 0;
        std::map<uint32_t, uint64_t> frameSizes; ///< frame bytes -> packets
        std::map<uint32_t, uint64_t> ipSizes;    ///< TracePacket::ipBytes -> packets
    };
    Summary Scan();

    /// Keeps each TCP segment's payload octets as captured, for a replay
    /// that reads what the segments say (the web switch's HTTP requests);
    /// off by default: a replay of sizes and flows reads only a record's
    /// first 128 octets.
    void KeepPayload(bool on) { m_keepPayload = on; }
    /// With KeepPayload: the last packet's TCP payload as captured (fewer
    /// octets than TracePacket::tcpPayload where the capture cut it, its
    /// snaplen); empty for anything else. Valid until the next call to Next.
    const std::vector<uint8_t>& Payload() const { return m_payload; }

    uint64_t PacketIndex() const { return m_index; } ///< packets returned since the last rewind
    uint32_t DistinctFlows() const { return static_cast<uint32_t>(m_flows.size()); }
    const std::string& Path() const { return m_path; }

  private:
    [[noreturn]] void Fail(const std::string& what) const;
    // Fields in the file's byte order (inline: every record reads several).
    uint32_t Get32(const uint8_t* p) const
    {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return m_swapped ? __builtin_bswap32(v) : v;
    }
    uint16_t Get16(const uint8_t* p) const
    {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return m_swapped ? __builtin_bswap16(v) : v;
    }
    // The packet's octets at m_pos (capLen of them, originally origLen) on
    // link type linkType: its flow and frame size. Consumes capLen.
    void TakePacket(uint32_t capLen, uint32_t origLen, uint32_t linkType, TracePacket& p);
    // The link header's length (Ethernet: 14, 18 with one 802.1Q tag) of
    // the packet whose first `head` octets are at pkt.
    static uint32_t LinkHeaderBytes(const uint8_t* pkt, size_t head, uint32_t linkType)
    {
        if (linkType != kLinkEthernetType)
        {
            return 0;
        }
        return head >= kEthernetHeaderBytes + 4 && pkt[12] == 0x81 && pkt[13] == 0x00 ? kEthernetHeaderBytes + 4
                                                                                 : kEthernetHeaderBytes;
    }
    // p's frame size (see above: checked), flow and IP length.
    void SetFrame(uint32_t origLen, uint32_t linkType, uint32_t linkHeader, uint32_t flow, TracePacket& p) const
    {
        uint64_t frame = uint64_t(origLen) + (linkType == kLinkEthernetType ? ethernet::kFcsBytes : kEthernetHeaderBytes + ethernet::kFcsBytes);
        frame = frame < ethernet::kMinFrameBytes ? ethernet::kMinFrameBytes : frame;
        if (frame > ethernet::kMaxFrameBytes)
        {
            FailFrame(frame);
        }
        p.frameBytes = static_cast<uint32_t>(frame);
        p.flow = flow;
        p.ipBytes = origLen > linkHeader ? origLen - linkHeader : 0;
    }
    [[noreturn]] void FailFrame(uint64_t frameBytes) const;
    // With KeepPayload: copies the TCP payload of the packet at pkt (capLen
    // octets buffered; FlowOf has set m_payloadAt) into m_payload.
    void KeepPayloadOf(const uint8_t* pkt, uint32_t capLen, const TracePacket& p)
    {
        m_payload.clear();
        if (p.tcp && m_payloadAt < capLen)
        {
            const uint32_t n = std::min<uint32_t>(capLen - m_payloadAt, p.tcpPayload);
            m_payload.assign(pkt + m_payloadAt, pkt + m_payloadAt + n);
        }
    }
    static constexpr uint32_t kLinkEthernetType = 1; // LINKTYPE_ETHERNET (the .cc's kLinkEthernet)
    static constexpr uint32_t kEthernetHeaderBytes = 14;
    void RewindPcap();
    void RewindPcapng();

    // pcapng
    struct Interface
    {
        uint32_t linkType = 0;
        uint32_t snapLen = 0;       // 0 = unlimited
        bool binaryUnit = false;    // timestamp unit 2^-exponent s, else 10^-exponent s
        uint32_t exponent = 6;      // if_tsresol; microseconds by default
        int64_t offsetSeconds = 0;  // if_tsoffset
        uint64_t nsPerUnit = 1000;  // units of 10^-v s, v <= 9: ns = ts x this; else 0
        uint64_t unitsPerNs = 0;    // units of 10^-v s, 9 < v <= 18: ns = ts / this; else 0
        int64_t offsetNs = 0;       // if_tsoffset in ns
        bool fast = true;           // FastNs converts its timestamps (any unit this reader
                                    // takes; an offset within 64 bits of ns)
        bool supported = true;      // a link type this reader takes
    };
    // ns of timestamp ts of interface i when i.fast and nothing overflows;
    // false otherwise (TimestampNs then converts it, or reports why not).
    // Equal to TimestampNs wherever it returns true.
    static bool FastNs(const Interface& i, uint64_t ts, uint64_t& ns)
    {
        if (i.nsPerUnit)
        {
            if (__builtin_mul_overflow(ts, i.nsPerUnit, &ns))
            {
                return false;
            }
        }
        else if (i.unitsPerNs)
        {
            ns = ts / i.unitsPerNs; // truncated, as TimestampNs does
        }
        else
        {
            const unsigned __int128 scaled = (static_cast<unsigned __int128>(ts) * 1000000000u) >> i.exponent;
            if (scaled > UINT64_MAX)
            {
                return false;
            }
            ns = static_cast<uint64_t>(scaled);
        }
        if (i.offsetNs >= 0)
        {
            return !__builtin_add_overflow(ns, static_cast<uint64_t>(i.offsetNs), &ns);
        }
        const uint64_t back = 0 - static_cast<uint64_t>(i.offsetNs);
        if (ns < back)
        {
            return false;
        }
        ns -= back;
        return true;
    }
    bool NextPcap(TracePacket& p);
    bool NextPcapng(TracePacket& p);
    bool NextEnhancedFast(TracePacket& p);
    void ReadSectionHeader();
    void ReadInterface(uint32_t length);
    void CheckTrailer(uint32_t length, const char* block);
    uint64_t TimestampNs(const Interface& i, uint64_t ts) const;
    bool m_pcapng = false;
    std::vector<Interface> m_interfaces; // of the current section
    uint64_t m_lastNs = 0;               // a Simple Packet's instant
    // The flow id of the packet at pkt (its first capLen octets); sets p's
    // IPv4 addresses, ports and TCP fields.
    uint32_t FlowOf(const uint8_t* pkt, uint32_t capLen, TracePacket& p) const;
    // Fill: at least n bytes from m_pos, or all the file has left; Skip:
    // consume n bytes, false if the file ends first. Inline fast paths for
    // what is already buffered, the rest out of line.
    size_t Fill(size_t n)
    {
        const size_t avail = m_len - m_pos;
        return avail >= n ? avail : Refill(n);
    }
    bool Skip(size_t n)
    {
        if (n <= m_len - m_pos)
        {
            m_pos += n;
            return true;
        }
        return SkipRefilling(n);
    }
    size_t Refill(size_t n);
    bool SkipRefilling(size_t n);

    std::string m_path;
    std::FILE* m_file = nullptr;
    bool m_swapped = false, m_nanos = false;
    uint32_t m_linkType = 0, m_maxFlows = 1;
    uint64_t m_index = 0;
    std::vector<uint8_t> m_buf;     // read buffer; m_buf[m_pos, m_len) not yet consumed
    size_t m_pos = 0, m_len = 0;
    mutable std::unordered_map<uint64_t, uint32_t> m_flows;
    mutable uint64_t m_lastKey = 0;  // consecutive packets are often of one flow
    mutable uint32_t m_lastFlow = UINT32_MAX;
    bool m_keepPayload = false;
    std::vector<uint8_t> m_payload;  // KeepPayload: the last TCP payload
    mutable uint32_t m_payloadAt = 0; // a TCP segment's payload offset in its record (FlowOf)
};

} // namespace routertwin

#endif
