#include "pcap-trace.h"

#include "ethernet-framing.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace routertwin
{

namespace
{
constexpr uint32_t kMagicMicros = 0xA1B2C3D4u;
constexpr uint32_t kMagicNanos = 0xA1B23C4Du;
// pcapng (draft-ietf-opsawg-pcapng): block types, the byte-order magic, options.
constexpr uint32_t kPcapngShb = 0x0A0D0D0Au, kPcapngIdb = 1, kPcapngObsoletePacket = 2, kPcapngSpb = 3,
                   kPcapngEpb = 6;
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4Du;
constexpr uint16_t kOptTsResol = 9, kOptTsOffset = 14;
constexpr uint32_t kMaxHeaderBlockBytes = 65536; // section and interface blocks read whole
constexpr uint32_t kLinkEthernet = 1, kLinkRaw = 101, kLinkIpv4 = 228, kLinkIpv6 = 229;
constexpr uint32_t kMaxRecordBytes = 262144; // libpcap's MAXIMUM_SNAPLEN
constexpr uint32_t kEthHeader = 14;
constexpr size_t kHeadBytes = 128;  // Ethernet + VLAN + IPv4 with options or IPv6 + ports
constexpr size_t kBufferBytes = 1u << 20;

uint32_t
Swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

bool
SupportedLink(uint32_t linkType)
{
    return linkType == kLinkEthernet || linkType == kLinkRaw || linkType == kLinkIpv4 || linkType == kLinkIpv6;
}

uint32_t
Be16(const uint8_t* p)
{
    return (uint32_t(p[0]) << 8) | p[1];
}

uint32_t
Be32(const uint8_t* p)
{
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

// splitmix64's finalizer: spreads a word over 64 bits.
uint64_t
Mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A 64-bit key of the tuple's words, folded in order.
struct TupleKey
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    void Add(uint64_t word) { h = Mix(h ^ word); }
    void AddBytes(const uint8_t* p, size_t n) // n <= 8
    {
        uint64_t w = 0;
        std::memcpy(&w, p, n);
        Add(w ^ (uint64_t(n) << 56));
    }
};
} // namespace

PcapTrace::PcapTrace(const std::string& path, uint32_t maxFlows)
    : m_path(path),
      m_maxFlows(maxFlows ? maxFlows : 1)
{
    m_file = std::fopen(path.c_str(), "rb");
    if (!m_file)
    {
        throw TraceError(path + ": cannot open: " + std::strerror(errno));
    }
    // A buffer no larger than the file: a request beyond the file's size
    // cannot be met anyway, so a small trace needs no full megabyte.
    long size = -1;
    if (std::fseek(m_file, 0, SEEK_END) == 0)
    {
        size = std::ftell(m_file);
    }
    m_buf.resize(size >= 0 && static_cast<unsigned long>(size) < kBufferBytes ? static_cast<size_t>(size) + 1
                                                                              : kBufferBytes);
    Rewind();
}

PcapTrace::~PcapTrace()
{
    if (m_file)
    {
        std::fclose(m_file);
    }
}

void
PcapTrace::Fail(const std::string& what) const
{
    throw TraceError(m_path + ": packet " + std::to_string(m_index) + ": " + what);
}

// Makes at least n (<= the buffer) bytes available from m_pos, reading more
// of the file; returns the bytes available, fewer than n only at its end.
size_t
PcapTrace::Refill(size_t n)
{
    const size_t avail = m_len - m_pos;
    std::memmove(m_buf.data(), m_buf.data() + m_pos, avail);
    m_pos = 0;
    m_len = avail;
    while (m_len < n)
    {
        const size_t got = std::fread(m_buf.data() + m_len, 1, m_buf.size() - m_len, m_file);
        if (got == 0)
        {
            break;
        }
        m_len += got;
    }
    return m_len;
}

// Consumes n bytes; false if the file ends first.
bool
PcapTrace::SkipRefilling(size_t n)
{
    while (n > 0)
    {
        size_t avail = m_len - m_pos;
        if (avail == 0 && (avail = Fill(1)) == 0)
        {
            return false;
        }
        const size_t step = std::min(n, avail);
        m_pos += step;
        n -= step;
    }
    return true;
}

void
PcapTrace::Rewind()
{
    std::rewind(m_file);
    m_pos = m_len = 0;
    m_index = 0;
    m_lastNs = 0;
    uint8_t magic4[4];
    const size_t got = std::fread(magic4, 1, sizeof magic4, m_file);
    uint32_t magic;
    std::memcpy(&magic, magic4, 4);
    std::rewind(m_file);
    // The Section Header Block type reads the same in both byte orders.
    m_pcapng = got == 4 && magic == kPcapngShb;
    if (m_pcapng)
    {
        RewindPcapng();
    }
    else
    {
        RewindPcap();
    }
}

void
PcapTrace::RewindPcap()
{
    uint8_t h[24];
    const size_t got = std::fread(h, 1, sizeof h, m_file);
    if (got != sizeof h)
    {
        throw TraceError(m_path + ": truncated pcap file header (" + std::to_string(got) + " of 24 bytes)");
    }
    uint32_t magic;
    std::memcpy(&magic, h, 4);
    m_swapped = false;
    if (magic == Swap32(kMagicMicros) || magic == Swap32(kMagicNanos))
    {
        m_swapped = true;
        magic = Swap32(magic);
    }
    if (magic != kMagicMicros && magic != kMagicNanos)
    {
        throw TraceError(m_path + ": not a pcap or pcapng file (magic number " + std::to_string(magic) + ")");
    }
    m_nanos = magic == kMagicNanos;
    const uint16_t major = Get16(h + 4);
    if (major != 2)
    {
        throw TraceError(m_path + ": pcap major version " + std::to_string(major) + ", expected 2");
    }
    m_linkType = Get32(h + 20) & 0x0FFFFFFFu; // the top bits carry FCS length flags
    if (!SupportedLink(m_linkType))
    {
        throw TraceError(m_path + ": link type " + std::to_string(m_linkType) +
                         " not supported (1 Ethernet, 101/228/229 raw IP)");
    }
}

void
PcapTrace::RewindPcapng()
{
    // The file must open with a section header; its errors are the file's.
    try
    {
        ReadSectionHeader();
    }
    catch (const TraceError& e)
    {
        const std::string m = e.what();
        const std::string prefix = m_path + ": packet 0: ";
        throw TraceError(m_path + ": " + (m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m));
    }
}

bool
PcapTrace::NextPcap(TracePacket& p)
{
    const size_t got = Fill(16);
    if (got == 0)
    {
        return false;
    }
    if (got < 16)
    {
        Fail("truncated record header (" + std::to_string(got) + " of 16 bytes)");
    }
    const uint8_t* h = m_buf.data() + m_pos;
    m_pos += 16;
    const uint32_t sec = Get32(h), frac = Get32(h + 4), capLen = Get32(h + 8), origLen = Get32(h + 12);
    if (frac >= (m_nanos ? 1000000000u : 1000000u))
    {
        Fail("timestamp fraction " + std::to_string(frac) + " out of range");
    }
    if (capLen > kMaxRecordBytes || capLen > origLen)
    {
        Fail("captured length " + std::to_string(capLen) + " exceeds " +
             (capLen > origLen ? "the original length " + std::to_string(origLen)
                               : std::string("262144")));
    }
    TakePacket(capLen, origLen, m_linkType, p);
    p.ns = uint64_t(sec) * 1000000000u + uint64_t(frac) * (m_nanos ? 1u : 1000u);
    ++m_index;
    return true;
}

void
PcapTrace::TakePacket(uint32_t capLen, uint32_t origLen, uint32_t linkType, TracePacket& p)
{
    // The flow key's headers are in the record's first bytes; the rest is
    // skipped, unless the payload is kept (the whole record then buffered).
    const size_t head = std::min<size_t>(capLen, kHeadBytes);
    const size_t need = m_keepPayload ? capLen : head;
    if (Fill(need) < need)
    {
        Fail("truncated record data (file ends inside its " + std::to_string(capLen) + " bytes)");
    }
    m_linkType = linkType;
    const uint8_t* pkt = m_buf.data() + m_pos;
    const uint32_t flow = FlowOf(pkt, static_cast<uint32_t>(head), p);
    const uint32_t linkHeader = LinkHeaderBytes(pkt, head, linkType);
    if (m_keepPayload)
    {
        KeepPayloadOf(pkt, capLen, p);
    }
    if (!Skip(capLen))
    {
        Fail("truncated record data (file ends inside its " + std::to_string(capLen) + " bytes)");
    }
    SetFrame(origLen, linkType, linkHeader, flow, p);
}

void
PcapTrace::FailFrame(uint64_t frameBytes) const
{
    Fail("frame of " + std::to_string(frameBytes) + " bytes exceeds 9216");
}

// Reads the Section Header Block at m_pos: its byte-order magic sets the
// order of the section, which starts with no interfaces.
void
PcapTrace::ReadSectionHeader()
{
    const size_t got = Fill(16);
    if (got < 16)
    {
        Fail("truncated section header block (" + std::to_string(got) + " of at least 16 bytes)");
    }
    const uint8_t* b = m_buf.data() + m_pos;
    uint32_t order;
    std::memcpy(&order, b + 8, 4);
    if (order == kByteOrderMagic)
    {
        m_swapped = false;
    }
    else if (order == Swap32(kByteOrderMagic))
    {
        m_swapped = true;
    }
    else
    {
        Fail("section header block: byte-order magic " + std::to_string(order) + " is neither 0x1A2B3C4D "
             "nor its byte swap");
    }
    const uint32_t length = Get32(b + 4);
    if (length < 28 || length % 4 != 0 || length > kMaxHeaderBlockBytes)
    {
        Fail("section header block length " + std::to_string(length) +
             " (must be a multiple of 4 in 28.." + std::to_string(kMaxHeaderBlockBytes) + ")");
    }
    if (Fill(length) < length)
    {
        Fail("truncated section header block (file ends inside its " + std::to_string(length) + " bytes)");
    }
    b = m_buf.data() + m_pos;
    const uint16_t major = Get16(b + 12);
    if (major != 1)
    {
        Fail("pcapng major version " + std::to_string(major) + ", expected 1");
    }
    m_pos += length - 4;
    CheckTrailer(length, "section header");
    m_interfaces.clear();
}

// Reads the Interface Description Block of `length` bytes at m_pos.
void
PcapTrace::ReadInterface(uint32_t length)
{
    if (length < 20 || length > kMaxHeaderBlockBytes)
    {
        Fail("interface description block length " + std::to_string(length) + " (must be in 20.." +
             std::to_string(kMaxHeaderBlockBytes) + ")");
    }
    if (Fill(length) < length)
    {
        Fail("truncated interface description block (file ends inside its " + std::to_string(length) +
             " bytes)");
    }
    const uint8_t* b = m_buf.data() + m_pos;
    Interface i;
    i.linkType = Get16(b + 8);
    i.snapLen = Get32(b + 12);
    // Options: (code, length, value padded to 4) up to opt_endofopt or the trailer.
    const uint8_t* o = b + 16;
    const uint8_t* end = b + length - 4;
    while (end - o >= 4)
    {
        const uint16_t code = Get16(o), len = Get16(o + 2);
        const size_t padded = (size_t(len) + 3u) & ~size_t(3);
        if (code == 0)
        {
            break;
        }
        if (padded > size_t(end - o - 4))
        {
            Fail("interface " + std::to_string(m_interfaces.size()) + ": option " + std::to_string(code) +
                 " of " + std::to_string(len) + " bytes overruns its block");
        }
        const uint8_t* v = o + 4;
        if (code == kOptTsResol)
        {
            if (len != 1)
            {
                Fail("interface " + std::to_string(m_interfaces.size()) + ": if_tsresol of " +
                     std::to_string(len) + " bytes (must be 1)");
            }
            i.binaryUnit = (v[0] & 0x80u) != 0;
            i.exponent = v[0] & 0x7Fu;
            if (i.binaryUnit ? i.exponent > 64 : i.exponent > 18)
            {
                Fail("interface " + std::to_string(m_interfaces.size()) + ": if_tsresol " +
                     (i.binaryUnit ? "2^-" : "10^-") + std::to_string(i.exponent) +
                     " s is finer than this reader keeps (10^-18, 2^-64)");
            }
        }
        else if (code == kOptTsOffset)
        {
            if (len != 8)
            {
                Fail("interface " + std::to_string(m_interfaces.size()) + ": if_tsoffset of " +
                     std::to_string(len) + " bytes (must be 8)");
            }
            // A 64-bit integer in the section's byte order.
            uint64_t raw;
            std::memcpy(&raw, v, 8);
            if (m_swapped)
            {
                raw = (uint64_t(Swap32(static_cast<uint32_t>(raw))) << 32) | Swap32(static_cast<uint32_t>(raw >> 32));
            }
            i.offsetSeconds = static_cast<int64_t>(raw);
        }
        o += 4 + padded;
    }
    i.supported = SupportedLink(i.linkType);
    i.nsPerUnit = 0;
    i.unitsPerNs = 0;
    if (!i.binaryUnit && i.exponent <= 9)
    {
        i.nsPerUnit = 1;
        for (uint32_t k = i.exponent; k < 9; ++k)
        {
            i.nsPerUnit *= 10;
        }
    }
    else if (!i.binaryUnit)
    {
        // ReadInterface refused exponents past 18, so 10^(v-9) fits 64 bits.
        i.unitsPerNs = 1;
        for (uint32_t k = 9; k < i.exponent; ++k)
        {
            i.unitsPerNs *= 10;
        }
    }
    // Only offsets beyond 64 bits of ns stay on TimestampNs.
    i.fast = !__builtin_mul_overflow(i.offsetSeconds, int64_t{1000000000}, &i.offsetNs);
    m_interfaces.push_back(i);
    m_pos += length - 4;
    CheckTrailer(length, "interface description");
}

// The block's trailing total length, at m_pos, must repeat its header's.
void
PcapTrace::CheckTrailer(uint32_t length, const char* block)
{
    if (Fill(4) < 4)
    {
        Fail(std::string("truncated ") + block + " block (file ends before its trailing length)");
    }
    const uint32_t trailer = Get32(m_buf.data() + m_pos);
    if (trailer != length)
    {
        Fail(std::string(block) + " block: trailing length " + std::to_string(trailer) +
             " differs from its header's " + std::to_string(length));
    }
    m_pos += 4;
}

uint64_t
PcapTrace::TimestampNs(const Interface& i, uint64_t ts) const
{
    // 128-bit arithmetic: a 64-bit count of 10^-v or 2^-v s in ns, exactly.
    using U128 = unsigned __int128;
    U128 ns;
    if (i.binaryUnit)
    {
        ns = (U128(ts) * 1000000000u) >> i.exponent;
    }
    else if (i.exponent <= 9)
    {
        U128 scale = 1;
        for (uint32_t k = i.exponent; k < 9; ++k)
        {
            scale *= 10;
        }
        ns = U128(ts) * scale;
    }
    else
    {
        uint64_t scale = 1;
        for (uint32_t k = 9; k < i.exponent; ++k)
        {
            scale *= 10;
        }
        ns = U128(ts / scale);
    }
    const uint64_t offsetMagnitude = i.offsetSeconds < 0 ? 0 - static_cast<uint64_t>(i.offsetSeconds)
                                                         : static_cast<uint64_t>(i.offsetSeconds);
    const U128 offsetNs = U128(offsetMagnitude) * 1000000000u;
    if (i.offsetSeconds < 0)
    {
        if (offsetNs > ns)
        {
            Fail("timestamp before 1970 (if_tsoffset " + std::to_string(i.offsetSeconds) + " s)");
        }
        ns -= offsetNs;
    }
    else
    {
        ns += offsetNs;
    }
    if (ns > U128(UINT64_MAX))
    {
        Fail("timestamp beyond 2554 (64 bits of ns)");
    }
    return static_cast<uint64_t>(ns);
}

// The common blocks, an Enhanced or a Simple Packet Block wholly in the
// buffer, of a described interface whose timestamps FastNs converts: read
// with one bounds check, their header fields and trailing length at fixed
// offsets. Makes every check NextPcapng makes; on any other block, or any
// check failing, returns false without consuming anything, and NextPcapng
// reads the block (and reports what is wrong).
bool
PcapTrace::NextEnhancedFast(TracePacket& p)
{
    const size_t avail = m_len - m_pos;
    if (avail < 16)
    {
        return false;
    }
    const uint8_t* b = m_buf.data() + m_pos;
    const uint32_t type = Get32(b), length = Get32(b + 4);
    const bool enhanced = type == kPcapngEpb;
    const uint32_t fixed = enhanced ? 32 : 16; // header, fields and trailer
    if ((!enhanced && type != kPcapngSpb) || length < fixed || length % 4 != 0 || length > avail ||
        Get32(b + length - 4) != length)
    {
        return false;
    }
    // A Simple Packet Block: interface 0, captured up to its snaplen, the
    // previous packet's instant.
    const uint32_t iface = enhanced ? Get32(b + 8) : 0;
    if (iface >= m_interfaces.size())
    {
        return false;
    }
    const Interface& i = m_interfaces[iface];
    const uint32_t origLen = Get32(b + (enhanced ? 24 : 8));
    const uint32_t capLen = enhanced ? Get32(b + 20) : i.snapLen && i.snapLen < origLen ? i.snapLen : origLen;
    if (!i.supported || capLen > length - fixed || capLen > kMaxRecordBytes || capLen > origLen)
    {
        return false;
    }
    uint64_t ns = m_lastNs;
    if (enhanced && !(i.fast && FastNs(i, (uint64_t(Get32(b + 12)) << 32) | Get32(b + 16), ns)))
    {
        return false;
    }
    const uint8_t* pkt = b + fixed - 4;
    const size_t head = std::min<size_t>(capLen, kHeadBytes);
    m_linkType = i.linkType;
    const uint32_t flow = FlowOf(pkt, static_cast<uint32_t>(head), p);
    SetFrame(origLen, i.linkType, LinkHeaderBytes(pkt, head, i.linkType), flow, p);
    if (m_keepPayload)
    {
        KeepPayloadOf(pkt, capLen, p); // the whole block is buffered on this path
    }
    m_pos += length;
    p.ns = ns;
    m_lastNs = ns;
    ++m_index;
    return true;
}

bool
PcapTrace::NextPcapng(TracePacket& p)
{
    for (;;)
    {
        const size_t got = Fill(8);
        if (got == 0)
        {
            return false;
        }
        if (got < 8)
        {
            Fail("truncated block header (" + std::to_string(got) + " of 8 bytes)");
        }
        const uint8_t* b = m_buf.data() + m_pos;
        const uint32_t type = Get32(b);
        if (type == kPcapngShb)
        {
            ReadSectionHeader();
            continue;
        }
        const uint32_t length = Get32(b + 4);
        if (length < 12 || length % 4 != 0)
        {
            Fail("block of type " + std::to_string(type) + ": total length " + std::to_string(length) +
                 " (must be a multiple of 4, at least 12)");
        }
        if (type == kPcapngIdb)
        {
            ReadInterface(length);
            continue;
        }
        if (type == kPcapngObsoletePacket)
        {
            Fail("an obsolete Packet Block (type 2); write Enhanced Packet Blocks (e.g. `editcap -F pcapng`)");
        }
        if (type != kPcapngEpb && type != kPcapngSpb)
        {
            // Name resolution, statistics, custom, ...: nothing a workload uses.
            if (!Skip(length - 4))
            {
                Fail("truncated block of type " + std::to_string(type) + " (file ends inside its " +
                     std::to_string(length) + " bytes)");
            }
            CheckTrailer(length, "a");
            continue;
        }
        const bool enhanced = type == kPcapngEpb;
        const uint32_t fixed = enhanced ? 32 : 16; // header, fields and trailer
        if (length < fixed)
        {
            Fail(std::string(enhanced ? "enhanced" : "simple") + " packet block length " +
                 std::to_string(length) + " below its " + std::to_string(fixed) + " fixed bytes");
        }
        if (Fill(fixed - 4) < fixed - 4)
        {
            Fail(std::string("truncated ") + (enhanced ? "enhanced" : "simple") + " packet block header");
        }
        b = m_buf.data() + m_pos;
        const uint32_t iface = enhanced ? Get32(b + 8) : 0;
        if (iface >= m_interfaces.size())
        {
            Fail("interface " + std::to_string(iface) + " not described (" + std::to_string(m_interfaces.size()) +
                 " interface description blocks in this section)");
        }
        const Interface& i = m_interfaces[iface];
        if (!i.supported)
        {
            Fail("interface " + std::to_string(iface) + ": link type " + std::to_string(i.linkType) +
                 " not supported (1 Ethernet, 101/228/229 raw IP)");
        }
        uint32_t capLen, origLen;
        uint64_t ts = 0;
        if (enhanced)
        {
            ts = (uint64_t(Get32(b + 12)) << 32) | Get32(b + 16);
            capLen = Get32(b + 20);
            origLen = Get32(b + 24);
        }
        else
        {
            origLen = Get32(b + 8);
            capLen = i.snapLen && i.snapLen < origLen ? i.snapLen : origLen;
        }
        if (capLen > length - fixed || capLen > kMaxRecordBytes || capLen > origLen)
        {
            Fail("captured length " + std::to_string(capLen) + " exceeds " +
                 (capLen > length - fixed ? "its block of " + std::to_string(length) + " bytes"
                  : capLen > origLen      ? "the original length " + std::to_string(origLen)
                                          : std::string("262144")));
        }
        m_pos += fixed - 4;
        uint64_t ns = m_lastNs;
        if (enhanced && !(i.fast && FastNs(i, ts, ns)))
        {
            ns = TimestampNs(i, ts); // units finer than 1 ns, or beyond 64 bits
        }
        TakePacket(capLen, origLen, i.linkType, p);
        // Padding and options, then the trailing length (checked inline
        // when it is buffered and right, the common case).
        if (!Skip(length - fixed - capLen))
        {
            Fail("truncated packet block (file ends inside its " + std::to_string(length) + " bytes)");
        }
        if (m_len - m_pos >= 4 && Get32(m_buf.data() + m_pos) == length)
        {
            m_pos += 4;
        }
        else
        {
            CheckTrailer(length, enhanced ? "enhanced packet" : "simple packet");
        }
        p.ns = ns;
        m_lastNs = ns;
        ++m_index;
        return true;
    }
}

uint32_t
PcapTrace::FlowOf(const uint8_t* pkt, uint32_t capLen, TracePacket& p) const
{
    p.ipv4 = false;
    p.ipv4Src = p.ipv4Dst = 0;
    p.srcPort = p.dstPort = 0;
    p.tcp = false;
    p.tcpFlags = 0;
    p.tcpPayload = 0;
    TupleKey key;
    uint32_t l3 = 0, etherType = 0;
    if (m_linkType == kLinkEthernet)
    {
        if (capLen < kEthHeader)
        {
            for (uint32_t i = 0; i < capLen; i += 8)
            {
                key.AddBytes(pkt + i, std::min<uint32_t>(8, capLen - i));
            }
            l3 = capLen;
        }
        else
        {
            etherType = Be16(pkt + 12);
            l3 = kEthHeader;
            if (etherType == 0x8100 && capLen >= kEthHeader + 4)
            {
                etherType = Be16(pkt + 16);
                l3 += 4;
            }
        }
    }
    else
    {
        etherType = capLen ? ((pkt[0] >> 4) == 6 ? 0x86DD : 0x0800) : 0;
    }
    const uint8_t* ip = pkt + l3;
    const uint32_t ipLen = capLen - l3; // l3 <= capLen
    uint32_t proto = 256, l4 = 0, ipPayload = 0; // ipPayload: octets past the IP header, as sent
    bool ports = false;
    if (etherType == 0x0800 && ipLen >= 20 && (ip[0] >> 4) == 4)
    {
        const uint32_t ihl = (ip[0] & 0x0Fu) * 4u;
        proto = ip[9];
        key.Add(4u << 8 | proto);
        key.AddBytes(ip + 12, 8);
        p.ipv4 = true;
        p.ipv4Src = Be32(ip + 12);
        p.ipv4Dst = Be32(ip + 16);
        const bool fragment = (Be16(ip + 6) & 0x1FFFu) != 0;
        l4 = ihl;
        ports = !fragment && ihl >= 20;
        const uint32_t total = Be16(ip + 2);
        ipPayload = total > ihl ? total - ihl : 0;
    }
    else if (etherType == 0x86DD && ipLen >= 40 && (ip[0] >> 4) == 6)
    {
        proto = ip[6];
        key.Add(6u << 8 | proto);
        for (int i = 0; i < 4; ++i)
        {
            key.AddBytes(ip + 8 + 8 * i, 8);
        }
        l4 = 40;
        ports = true;
        ipPayload = Be16(ip + 4);
    }
    else if (m_linkType == kLinkEthernet && capLen >= kEthHeader)
    {
        key.AddBytes(pkt, 8);
        key.AddBytes(pkt + 8, 4);
        key.Add(uint64_t(etherType) << 32);
    }
    if (ports && (proto == 6 || proto == 17) && ipLen >= l4 + 4)
    {
        key.AddBytes(ip + l4, 4);
        p.srcPort = static_cast<uint16_t>(Be16(ip + l4));
        p.dstPort = static_cast<uint16_t>(Be16(ip + l4 + 2));
        if (proto == 6 && ipLen >= l4 + 14)
        {
            const uint32_t tcpHeader = (ip[l4 + 12] >> 4) * 4u;
            p.tcp = true;
            p.tcpFlags = ip[l4 + 13];
            p.tcpPayload = ipPayload > tcpHeader ? ipPayload - tcpHeader : 0;
            m_payloadAt = l3 + l4 + tcpHeader;
        }
    }
    if (key.h == m_lastKey && m_lastFlow != UINT32_MAX)
    {
        return m_lastFlow;
    }
    uint32_t id;
    auto it = m_flows.find(key.h);
    if (it != m_flows.end())
    {
        id = it->second;
    }
    else if (m_flows.size() < m_maxFlows)
    {
        id = static_cast<uint32_t>(m_flows.size());
        m_flows.emplace(key.h, id);
    }
    else
    {
        id = static_cast<uint32_t>(key.h % m_maxFlows);
    }
    m_lastKey = key.h;
    m_lastFlow = id;
    return id;
}

PcapTrace::Summary
PcapTrace::Scan()
{
    Rewind();
    Summary s;
    TracePacket p;
    double bytes = 0;
    while (Next(p))
    {
        if (s.packets == 0)
        {
            s.firstNs = p.ns;
        }
        s.lastNs = p.ns;
        bytes += p.frameBytes;
        ++s.frameSizes[p.frameBytes];
        ++s.ipSizes[p.ipBytes];
        ++s.packets;
    }
    s.meanFrameBytes = s.packets ? bytes / static_cast<double>(s.packets) : 0;
    Rewind();
    return s;
}

} // namespace routertwin
