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
constexpr uint32_t kPcapngMagic = 0x0A0D0D0Au; // section header block type
constexpr uint32_t kLinkEthernet = 1, kLinkRaw = 101, kLinkIpv4 = 228, kLinkIpv6 = 229;
constexpr uint32_t kMaxRecordBytes = 262144; // libpcap's MAXIMUM_SNAPLEN
constexpr uint32_t kEthHeader = 14;
constexpr size_t kHeadBytes = 128;  // Ethernet + VLAN + IPv4 with options or IPv6 + ports
constexpr size_t kBufferBytes = 1u << 20;
constexpr uint32_t kEthAndFcs = 18;

uint32_t
Swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

uint32_t
Be16(const uint8_t* p)
{
    return (uint32_t(p[0]) << 8) | p[1];
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
      m_maxFlows(maxFlows ? maxFlows : 1),
      m_buf(kBufferBytes)
{
    m_file = std::fopen(path.c_str(), "rb");
    if (!m_file)
    {
        throw TraceError(path + ": cannot open: " + std::strerror(errno));
    }
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

uint32_t
PcapTrace::Get32(const uint8_t* p) const
{
    uint32_t v;
    std::memcpy(&v, p, 4);
    return m_swapped ? Swap32(v) : v;
}

// Makes at least n (<= the buffer) bytes available from m_pos, reading more
// of the file; returns the bytes available, fewer than n only at its end.
size_t
PcapTrace::Fill(size_t n)
{
    size_t avail = m_len - m_pos;
    if (avail >= n)
    {
        return avail;
    }
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
PcapTrace::Skip(size_t n)
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
    uint8_t h[24];
    const size_t got = std::fread(h, 1, sizeof h, m_file);
    uint32_t magic;
    std::memcpy(&magic, h, 4);
    if (got >= 4 && (magic == kPcapngMagic))
    {
        throw TraceError(m_path + ": a pcapng file; only classic pcap is read (convert with "
                                  "`editcap -F pcap`)");
    }
    if (got != sizeof h)
    {
        throw TraceError(m_path + ": truncated pcap file header (" + std::to_string(got) + " of 24 bytes)");
    }
    m_swapped = false;
    if (magic == Swap32(kMagicMicros) || magic == Swap32(kMagicNanos))
    {
        m_swapped = true;
        magic = Swap32(magic);
    }
    if (magic != kMagicMicros && magic != kMagicNanos)
    {
        throw TraceError(m_path + ": not a pcap file (magic number " + std::to_string(magic) + ")");
    }
    m_nanos = magic == kMagicNanos;
    uint16_t major;
    std::memcpy(&major, h + 4, 2);
    if (m_swapped)
    {
        major = static_cast<uint16_t>((major >> 8) | (major << 8));
    }
    if (major != 2)
    {
        throw TraceError(m_path + ": pcap major version " + std::to_string(major) + ", expected 2");
    }
    m_linkType = Get32(h + 20) & 0x0FFFFFFFu; // the top bits carry FCS length flags
    if (m_linkType != kLinkEthernet && m_linkType != kLinkRaw && m_linkType != kLinkIpv4 &&
        m_linkType != kLinkIpv6)
    {
        throw TraceError(m_path + ": link type " + std::to_string(m_linkType) +
                         " not supported (1 Ethernet, 101/228/229 raw IP)");
    }
}

bool
PcapTrace::Next(TracePacket& p)
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
    // The flow key's headers are in the record's first bytes; the rest is skipped.
    const size_t head = std::min<size_t>(capLen, kHeadBytes);
    if (Fill(head) < head)
    {
        Fail("truncated record data (file ends inside its " + std::to_string(capLen) + " bytes)");
    }
    const uint32_t flow = FlowOf(m_buf.data() + m_pos, static_cast<uint32_t>(head));
    if (!Skip(capLen))
    {
        Fail("truncated record data (file ends inside its " + std::to_string(capLen) + " bytes)");
    }
    uint64_t frame;
    if (m_linkType == kLinkEthernet)
    {
        frame = uint64_t(origLen) + ethernet::kFcsBytes;
    }
    else
    {
        frame = uint64_t(origLen) + kEthAndFcs;
    }
    if (frame < ethernet::kMinFrameBytes)
    {
        frame = ethernet::kMinFrameBytes;
    }
    if (frame > ethernet::kMaxFrameBytes)
    {
        Fail("frame of " + std::to_string(frame) + " bytes exceeds 9216");
    }
    p.ns = uint64_t(sec) * 1000000000u + uint64_t(frac) * (m_nanos ? 1u : 1000u);
    p.frameBytes = static_cast<uint32_t>(frame);
    p.flow = flow;
    ++m_index;
    return true;
}

uint32_t
PcapTrace::FlowOf(const uint8_t* pkt, uint32_t capLen) const
{
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
    uint32_t proto = 256, l4 = 0;
    bool ports = false;
    if (etherType == 0x0800 && ipLen >= 20 && (ip[0] >> 4) == 4)
    {
        const uint32_t ihl = (ip[0] & 0x0Fu) * 4u;
        proto = ip[9];
        key.Add(4u << 8 | proto);
        key.AddBytes(ip + 12, 8);
        const bool fragment = (Be16(ip + 6) & 0x1FFFu) != 0;
        l4 = ihl;
        ports = !fragment && ihl >= 20;
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
        ++s.packets;
    }
    s.meanFrameBytes = s.packets ? bytes / static_cast<double>(s.packets) : 0;
    Rewind();
    return s;
}

} // namespace routertwin
