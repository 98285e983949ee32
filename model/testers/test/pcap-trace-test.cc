// The pcap and pcapng readers on files the test writes itself: sizes, flows
// by 5-tuple, timestamps in every resolution and both byte orders, and
// clear errors for a truncated or malformed file that name the file and the
// packet index. The pcapng writer below follows draft-ietf-opsawg-pcapng
// (block layout, option layout, if_tsresol / if_tsoffset) independently of
// the reader.
#include "pcap-trace.h"
#include "random-stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace routertwin;

namespace
{

// An Ethernet + IPv4 + UDP frame (no FCS) of `len` (>= 38) bytes.
std::vector<uint8_t>
UdpFrame(uint32_t len, uint8_t srcHost, uint16_t srcPort)
{
    std::vector<uint8_t> f(len, 0);
    f[12] = 0x08; // EtherType IPv4
    f[14] = 0x45;
    f[23] = 17; // UDP
    f[26] = 198, f[27] = 18, f[28] = 0, f[29] = srcHost;
    f[30] = 198, f[31] = 19, f[32] = 0, f[33] = 1;
    f[34] = static_cast<uint8_t>(srcPort >> 8), f[35] = static_cast<uint8_t>(srcPort);
    f[36] = 0, f[37] = 7;
    return f;
}

struct Writer
{
    std::vector<uint8_t> bytes;
    bool bigEndian = false;

    void U32(uint32_t v)
    {
        for (int i = 0; i < 4; ++i)
        {
            const int shift = bigEndian ? 24 - 8 * i : 8 * i;
            bytes.push_back(static_cast<uint8_t>(v >> shift));
        }
    }
    void U16(uint16_t v)
    {
        if (bigEndian)
        {
            bytes.push_back(static_cast<uint8_t>(v >> 8));
            bytes.push_back(static_cast<uint8_t>(v));
        }
        else
        {
            bytes.push_back(static_cast<uint8_t>(v));
            bytes.push_back(static_cast<uint8_t>(v >> 8));
        }
    }
    void Header(uint32_t magic, uint32_t linkType = 1)
    {
        U32(magic);
        U16(2);
        U16(4);
        U32(0);
        U32(0);
        U32(65535);
        U32(linkType);
    }
    void Udp(uint32_t sec, uint32_t frac, uint32_t len, uint8_t srcHost, uint16_t srcPort)
    {
        const std::vector<uint8_t> f = UdpFrame(len, srcHost, srcPort);
        U32(sec);
        U32(frac);
        U32(len);
        U32(len);
        bytes.insert(bytes.end(), f.begin(), f.end());
    }
    std::string Save(const std::string& name) const
    {
        const std::string path = ::testing::TempDir() + name;
        std::FILE* fp = std::fopen(path.c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), fp);
        std::fclose(fp);
        return path;
    }
};

// pcapng blocks: type, total length, body padded to 32 bits, total length.
struct NgWriter
{
    Writer w; // its byte order is the section's
    using Options = std::vector<std::pair<uint16_t, std::vector<uint8_t>>>;

    void Block(uint32_t type, const std::vector<uint8_t>& body)
    {
        const auto padded = static_cast<uint32_t>((body.size() + 3) / 4 * 4);
        w.U32(type);
        w.U32(12 + padded);
        w.bytes.insert(w.bytes.end(), body.begin(), body.end());
        w.bytes.resize(w.bytes.size() + (padded - body.size()), 0);
        w.U32(12 + padded);
    }
    // Bytes of a value in the section's byte order.
    std::vector<uint8_t> Le(uint64_t v, int n) const
    {
        std::vector<uint8_t> b;
        for (int i = 0; i < n; ++i)
        {
            const int shift = w.bigEndian ? 8 * (n - 1 - i) : 8 * i;
            b.push_back(static_cast<uint8_t>(v >> shift));
        }
        return b;
    }
    void Append(std::vector<uint8_t>& to, const std::vector<uint8_t>& b) const
    {
        to.insert(to.end(), b.begin(), b.end());
    }
    void AppendOptions(std::vector<uint8_t>& body, const Options& options) const
    {
        if (options.empty())
        {
            return;
        }
        for (const auto& [code, value] : options)
        {
            Append(body, Le(code, 2));
            Append(body, Le(value.size(), 2));
            Append(body, value);
            body.resize((body.size() + 3) / 4 * 4, 0);
        }
        Append(body, Le(0, 4)); // opt_endofopt
    }
    void Section()
    {
        std::vector<uint8_t> body = Le(0x1A2B3C4D, 4);
        Append(body, Le(1, 2)); // major
        Append(body, Le(0, 2)); // minor
        Append(body, Le(~0ull, 8)); // section length unknown
        Block(0x0A0D0D0A, body);
    }
    void Interface(uint16_t linkType, uint32_t snapLen = 0, const Options& options = {})
    {
        std::vector<uint8_t> body = Le(linkType, 2);
        Append(body, Le(0, 2));
        Append(body, Le(snapLen, 4));
        AppendOptions(body, options);
        Block(1, body);
    }
    void Enhanced(uint32_t iface, uint64_t ts, const std::vector<uint8_t>& data, uint32_t origLen,
                  const Options& options = {})
    {
        std::vector<uint8_t> body = Le(iface, 4);
        Append(body, Le(ts >> 32, 4));
        Append(body, Le(ts & 0xFFFFFFFFu, 4));
        Append(body, Le(data.size(), 4));
        Append(body, Le(origLen, 4));
        Append(body, data);
        body.resize((body.size() + 3) / 4 * 4, 0);
        AppendOptions(body, options);
        Block(6, body);
    }
    void Simple(const std::vector<uint8_t>& data, uint32_t origLen)
    {
        std::vector<uint8_t> body = Le(origLen, 4);
        Append(body, data);
        Block(3, body);
    }
};

std::vector<TracePacket>
ReadAll(const std::string& path)
{
    PcapTrace t(path, 64);
    std::vector<TracePacket> got;
    TracePacket p;
    while (t.Next(p))
    {
        got.push_back(p);
    }
    return got;
}

void
ExpectSame(const std::vector<TracePacket>& a, const std::vector<TracePacket>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
    {
        EXPECT_EQ(a[i].ns, b[i].ns) << i;
        EXPECT_EQ(a[i].frameBytes, b[i].frameBytes) << i;
        EXPECT_EQ(a[i].flow, b[i].flow) << i;
    }
}

// The packets of ReadsSizesFlowsAndTimes, as pcapng in either byte order
// (microsecond timestamps, the default if_tsresol).
std::string
SamePacketsAsPcapng(bool bigEndian, const std::string& name)
{
    NgWriter n;
    n.w.bigEndian = bigEndian;
    n.Section();
    n.Interface(1);
    n.Enhanced(0, 10000000, UdpFrame(60, 1, 1000), 60);
    n.Block(4, std::vector<uint8_t>(8, 0)); // a name resolution block: skipped
    n.Enhanced(0, 10000500, UdpFrame(1514, 2, 1000), 1514, {{1, {'h', 'i'}}}); // opt_comment
    n.Enhanced(0, 10001000, UdpFrame(100, 1, 1000), 100);
    n.Enhanced(0, 10001500, UdpFrame(42, 1, 1001), 42);
    return n.w.Save(name);
}

} // namespace

TEST(PcapTrace, ReadsSizesFlowsAndTimes)
{
    Writer w;
    w.Header(0xA1B2C3D4u);
    w.Udp(10, 0, 60, 1, 1000);      // flow 0; 60 + FCS = 64
    w.Udp(10, 500, 1514, 2, 1000);  // flow 1; 1518
    w.Udp(10, 1000, 100, 1, 1000);  // flow 0 again
    w.Udp(10, 1500, 42, 1, 1001);   // flow 2 (other port); 46 -> padded to 64
    PcapTrace t(w.Save("ok.pcap"), 16);
    TracePacket p;
    std::vector<TracePacket> got;
    while (t.Next(p))
    {
        got.push_back(p);
    }
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].frameBytes, 64u);
    EXPECT_EQ(got[1].frameBytes, 1518u);
    EXPECT_EQ(got[2].frameBytes, 104u);
    EXPECT_EQ(got[3].frameBytes, 64u);
    EXPECT_EQ(got[0].flow, 0u);
    EXPECT_EQ(got[1].flow, 1u);
    EXPECT_EQ(got[2].flow, 0u);
    EXPECT_EQ(got[3].flow, 2u);
    EXPECT_EQ(got[1].ns - got[0].ns, 500000u);
    EXPECT_EQ(got[0].ns, 10000000000u);
    EXPECT_EQ(t.DistinctFlows(), 3u);

    const PcapTrace::Summary s = t.Scan();
    EXPECT_EQ(s.packets, 4u);
    EXPECT_DOUBLE_EQ(s.meanFrameBytes, (64 + 1518 + 104 + 64) / 4.0);
    EXPECT_EQ(s.frameSizes.at(64), 2u);
}

TEST(PcapTrace, BigEndianNanosecondFileReadsTheSame)
{
    Writer w;
    w.bigEndian = true;
    w.Header(0xA1B23C4Du);
    w.Udp(1, 250, 60, 1, 1);
    w.Udp(1, 750, 60, 1, 1);
    PcapTrace t(w.Save("be.pcap"), 16);
    TracePacket a, b;
    ASSERT_TRUE(t.Next(a));
    ASSERT_TRUE(t.Next(b));
    EXPECT_EQ(b.ns - a.ns, 500u);
    EXPECT_EQ(a.flow, b.flow);
}

TEST(PcapTrace, TruncatedRecordNamesFileAndPacket)
{
    Writer w;
    w.Header(0xA1B2C3D4u);
    w.Udp(1, 0, 60, 1, 1);
    w.Udp(1, 1, 60, 1, 1);
    w.Udp(1, 2, 60, 1, 1);
    w.bytes.resize(w.bytes.size() - 10); // cut inside packet 2's data
    const std::string path = w.Save("cut.pcap");
    PcapTrace t(path, 16);
    TracePacket p;
    ASSERT_TRUE(t.Next(p));
    ASSERT_TRUE(t.Next(p));
    try
    {
        t.Next(p);
        FAIL() << "no error";
    }
    catch (const TraceError& e)
    {
        const std::string m = e.what();
        EXPECT_NE(m.find(path + ": packet 2: truncated record data"), std::string::npos) << m;
    }
}

TEST(PcapTrace, MalformedFilesAreRefusedWithTheirName)
{
    Writer bad;
    bad.U32(0x12345678u);
    bad.bytes.resize(24, 0);
    EXPECT_THROW(PcapTrace(bad.Save("magic.pcap"), 4), TraceError);

    Writer ng;
    ng.U32(0x0A0D0D0Au);
    ng.bytes.resize(28, 0);
    try
    {
        PcapTrace t(ng.Save("x.pcapng"), 4);
        FAIL() << "no error";
    }
    catch (const TraceError& e)
    {
        EXPECT_NE(std::string(e.what()).find("x.pcapng: section header block: byte-order magic 0"),
                  std::string::npos)
            << e.what();
    }

    Writer big;
    big.Header(0xA1B2C3D4u);
    big.U32(0);
    big.U32(0);
    big.U32(300000); // captured length beyond any snaplen
    big.U32(300000);
    try
    {
        PcapTrace t(big.Save("huge.pcap"), 4);
        TracePacket p;
        t.Next(p);
        FAIL() << "no error";
    }
    catch (const TraceError& e)
    {
        EXPECT_NE(std::string(e.what()).find("huge.pcap: packet 0: captured length 300000"), std::string::npos)
            << e.what();
    }

    Writer shortHeader;
    shortHeader.U32(0xA1B2C3D4u);
    EXPECT_THROW(PcapTrace(shortHeader.Save("short.pcap"), 4), TraceError);
    EXPECT_THROW(PcapTrace(::testing::TempDir() + "does-not-exist.pcap", 4), TraceError);
}

TEST(PcapTrace, FlowsBeyondTheCapShareIds)
{
    Writer w;
    w.Header(0xA1B2C3D4u);
    for (uint8_t h = 0; h < 10; ++h)
    {
        w.Udp(1, h, 60, h, 1);
    }
    PcapTrace t(w.Save("many.pcap"), 4);
    TracePacket p;
    while (t.Next(p))
    {
        EXPECT_LT(p.flow, 4u);
    }
    EXPECT_EQ(t.DistinctFlows(), 4u);
}

TEST(PcapTrace, MutatedFilesGiveATraceErrorOrPacketsNeverACrash)
{
    // Bounds checks: random bytes overwritten and random truncations of a
    // valid trace either read (sizes in 64..9216, flows below the cap) or
    // throw TraceError; nothing else.
    Writer w;
    w.Header(0xA1B2C3D4u);
    for (uint32_t i = 0; i < 40; ++i)
    {
        w.Udp(1, i, 42 + (i * 37) % 1400, static_cast<uint8_t>(i % 7), static_cast<uint16_t>(1000 + i % 3));
    }
    RandomStream rng(99);
    uint32_t errors = 0, reads = 0;
    for (int trial = 0; trial < 400; ++trial)
    {
        Writer m = w;
        const uint32_t flips = 1 + rng.UniformInt(8);
        for (uint32_t k = 0; k < flips; ++k)
        {
            m.bytes[rng.UniformInt(static_cast<uint32_t>(m.bytes.size()))] = static_cast<uint8_t>(rng.Next());
        }
        if (rng.Bernoulli(0.3))
        {
            m.bytes.resize(rng.UniformInt(static_cast<uint32_t>(m.bytes.size())));
        }
        try
        {
            PcapTrace t(m.Save("mutated.pcap"), 8);
            TracePacket p;
            while (t.Next(p))
            {
                ASSERT_GE(p.frameBytes, 64u);
                ASSERT_LE(p.frameBytes, 9216u);
                ASSERT_LT(p.flow, 8u);
                ++reads;
            }
        }
        catch (const TraceError&)
        {
            ++errors;
        }
    }
    EXPECT_GT(errors, 0u);
    EXPECT_GT(reads, 0u);
}

TEST(Pcapng, EnhancedPacketsReadLikeTheSamePcapInBothByteOrders)
{
    Writer w;
    w.Header(0xA1B2C3D4u);
    w.Udp(10, 0, 60, 1, 1000);
    w.Udp(10, 500, 1514, 2, 1000);
    w.Udp(10, 1000, 100, 1, 1000);
    w.Udp(10, 1500, 42, 1, 1001);
    const std::vector<TracePacket> pcap = ReadAll(w.Save("same.pcap"));
    const std::vector<TracePacket> le = ReadAll(SamePacketsAsPcapng(false, "le.pcapng"));
    const std::vector<TracePacket> be = ReadAll(SamePacketsAsPcapng(true, "be.pcapng"));
    ExpectSame(le, pcap);
    ExpectSame(be, pcap);
    ASSERT_EQ(le.size(), 4u);
    EXPECT_EQ(le[0].ns, 10000000000u); // 10 s in microseconds
    EXPECT_EQ(le[1].frameBytes, 1518u);
    EXPECT_EQ(le[3].flow, 2u);
}

// A file several times the reader's 1 MiB buffer: most Enhanced Packet
// Blocks are read whole from the buffer, those straddling its end block by
// block after a refill, and both must give what the same packets give as
// pcap, and what they are by construction (frame = length + FCS, 1 ms apart).
TEST(Pcapng, LongFileReadsAcrossTheBufferLikeTheSamePcap)
{
    const uint32_t sizes[5] = {60, 590, 1514, 97, 1003}; // odd lengths: padded blocks
    const uint32_t packets = 4000;                        // ~2.6 MB
    for (bool bigEndian : {false, true})
    {
        Writer pcap;
        pcap.Header(0xA1B2C3D4u);
        NgWriter n;
        n.w.bigEndian = bigEndian;
        n.Section();
        n.Interface(1);
        for (uint32_t i = 0; i < packets; ++i)
        {
            const uint32_t len = sizes[i % 5];
            const auto host = static_cast<uint8_t>(i % 7);
            const auto port = static_cast<uint16_t>(1000 + i % 3);
            pcap.Udp(i / 1000, i % 1000 * 1000, len, host, port);
            const NgWriter::Options comment = {{1, {'x'}}}; // every 11th block longer than its packet
            n.Enhanced(0, uint64_t(i) * 1000, UdpFrame(len, host, port), len,
                       i % 11 == 0 ? comment : NgWriter::Options{});
        }
        ASSERT_GT(n.w.bytes.size(), 2u << 20);
        const std::vector<TracePacket> ng = ReadAll(n.w.Save(bigEndian ? "long-be.pcapng" : "long-le.pcapng"));
        ExpectSame(ng, ReadAll(pcap.Save("long.pcap")));
        ASSERT_EQ(ng.size(), packets);
        for (uint32_t i = 0; i < packets; ++i)
        {
            EXPECT_EQ(ng[i].ns, uint64_t(i) * 1000000) << i;
            EXPECT_EQ(ng[i].frameBytes, std::max(64u, sizes[i % 5] + 4)) << i;
            EXPECT_EQ(ng[i].ipBytes, sizes[i % 5] - 14) << i;
        }
    }
}

TEST(Pcapng, TimestampResolutionAndOffsetOptions)
{
    for (bool bigEndian : {false, true})
    {
        NgWriter n;
        n.w.bigEndian = bigEndian;
        n.Section();
        n.Interface(1, 0, {{9, {9}}});                 // if_tsresol 10^-9: nanoseconds
        n.Interface(1, 0, {{9, {0x80 | 10}}});         // 2^-10 s
        n.Interface(1, 0, {{9, {3}}, {14, n.Le(100, 8)}}); // milliseconds, if_tsoffset +100 s
        n.Interface(1, 0, {{9, {12}}});                // picoseconds: ns kept, the rest dropped
        n.Interface(1, 0, {{9, {18}}});                // attoseconds, the finest this reader keeps
        n.Interface(1, 0, {{9, {12}}, {14, n.Le(uint64_t(-5), 8)}}); // picoseconds, if_tsoffset -5 s
        n.Enhanced(0, 1234567891234ull, UdpFrame(60, 1, 1), 60);
        n.Enhanced(1, 5 * 1024 + 512, UdpFrame(60, 1, 1), 60); // 5.5 s
        n.Enhanced(2, 2500, UdpFrame(60, 1, 1), 60);          // 2.5 s + 100 s
        n.Enhanced(3, 7000000000999ull, UdpFrame(60, 1, 1), 60);
        n.Enhanced(4, 12345678901999999999ull, UdpFrame(60, 1, 1), 60);
        n.Enhanced(5, 7000000000999ull, UdpFrame(60, 1, 1), 60);
        const std::vector<TracePacket> got = ReadAll(n.w.Save("tsresol.pcapng"));
        ASSERT_EQ(got.size(), 6u);
        EXPECT_EQ(got[0].ns, 1234567891234ull);
        EXPECT_EQ(got[1].ns, 5500000000ull);
        EXPECT_EQ(got[2].ns, 102500000000ull);
        EXPECT_EQ(got[3].ns, 7000000000ull);
        EXPECT_EQ(got[4].ns, 12345678901ull);
        EXPECT_EQ(got[5].ns, 2000000000ull);
    }
}

TEST(Pcapng, SimplePacketsTakeThePreviousInstantAndTheSnapLength)
{
    NgWriter n;
    n.Section();
    n.Interface(1, 100); // snaplen 100: a Simple Packet holds min(original, 100) bytes
    n.Enhanced(0, 7000000, UdpFrame(60, 1, 1), 60);
    n.Simple(UdpFrame(100, 2, 2), 1000);  // captured 100 of 1000
    n.Simple(UdpFrame(80, 1, 1), 80);
    const std::vector<TracePacket> got = ReadAll(n.w.Save("simple.pcapng"));
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[1].ns, 7000000000u);
    EXPECT_EQ(got[2].ns, 7000000000u);
    EXPECT_EQ(got[1].frameBytes, 1004u);
    EXPECT_EQ(got[2].frameBytes, 84u);
    EXPECT_EQ(got[1].flow, 1u);
    EXPECT_EQ(got[2].flow, 0u);
}

TEST(Pcapng, SectionsSwitchByteOrderAndInterfaces)
{
    NgWriter a;
    a.Section();
    a.Interface(1);
    a.Enhanced(0, 1000000, UdpFrame(60, 1, 1), 60);
    NgWriter b;
    b.w.bigEndian = true;
    b.Section();
    b.Interface(101); // raw IP: frame = IP length + 18
    const std::vector<uint8_t> frame = UdpFrame(74, 3, 3);
    const std::vector<uint8_t> ip(frame.begin() + 14, frame.end());
    b.Enhanced(0, 2000000, ip, 60);
    a.w.bytes.insert(a.w.bytes.end(), b.w.bytes.begin(), b.w.bytes.end());
    const std::vector<TracePacket> got = ReadAll(a.w.Save("sections.pcapng"));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].ns - got[0].ns, 1000000000u);
    EXPECT_EQ(got[1].frameBytes, 78u);
    EXPECT_EQ(got[1].flow, 1u);
}

namespace
{
std::string
ErrorOf(const std::string& path)
{
    try
    {
        ReadAll(path);
    }
    catch (const TraceError& e)
    {
        return e.what();
    }
    return "no error";
}
} // namespace

TEST(Pcapng, MalformedAndTruncatedFilesNameFileAndPacket)
{
    NgWriter ok;
    ok.Section();
    ok.Interface(1);
    for (uint32_t i = 0; i < 4; ++i)
    {
        ok.Enhanced(0, 1000000 + i, UdpFrame(590, 1, 1), 590);
    }
    // Cut inside packet 2's data: 28 + 20 + 20 bytes of headers, 2 blocks of 20 + 28 + 592.
    NgWriter cut = ok;
    const size_t block = 32 + 592;
    cut.w.bytes.resize(28 + 20 + 2 * block + 28 + 100);
    std::string path = cut.w.Save("cut.pcapng");
    EXPECT_NE(ErrorOf(path).find(path + ": packet 2: truncated record data"), std::string::npos) << ErrorOf(path);

    // Packet 1's trailing length changed.
    NgWriter trailer = ok;
    trailer.w.bytes[28 + 20 + 2 * block - 4] ^= 0x10;
    path = trailer.w.Save("trailer.pcapng");
    EXPECT_NE(ErrorOf(path).find(path + ": packet 1: enhanced packet block: trailing length"), std::string::npos)
        << ErrorOf(path);

    // A packet on an interface never described.
    NgWriter iface;
    iface.Section();
    iface.Interface(1);
    iface.Enhanced(0, 1, UdpFrame(60, 1, 1), 60);
    iface.Enhanced(3, 2, UdpFrame(60, 1, 1), 60);
    path = iface.w.Save("iface.pcapng");
    EXPECT_NE(ErrorOf(path).find(path + ": packet 1: interface 3 not described"), std::string::npos) << ErrorOf(path);

    // A captured length beyond its block.
    NgWriter overrun;
    overrun.Section();
    overrun.Interface(1);
    overrun.Enhanced(0, 1, UdpFrame(60, 1, 1), 60);
    overrun.w.bytes[28 + 20 + 20] = 200; // captured length 200 in a 92-byte block
    path = overrun.w.Save("overrun.pcapng");
    EXPECT_NE(ErrorOf(path).find(path + ": packet 0: captured length 200 exceeds its block"), std::string::npos)
        << ErrorOf(path);

    // An unsupported link type, and the obsolete Packet Block.
    NgWriter link;
    link.Section();
    link.Interface(105); // 802.11
    link.Enhanced(0, 1, UdpFrame(60, 1, 1), 60);
    path = link.w.Save("link.pcapng");
    EXPECT_NE(ErrorOf(path).find("interface 0: link type 105 not supported"), std::string::npos) << ErrorOf(path);
    NgWriter obsolete;
    obsolete.Section();
    obsolete.Interface(1);
    obsolete.Block(2, std::vector<uint8_t>(20, 0));
    EXPECT_NE(ErrorOf(obsolete.w.Save("old.pcapng")).find("obsolete Packet Block"), std::string::npos);

    // A section header whose byte-order magic is wrong: refused on opening.
    NgWriter magic = ok;
    magic.w.bytes[8] = 0x11;
    path = magic.w.Save("magic.pcapng");
    EXPECT_NE(ErrorOf(path).find(path + ": section header block: byte-order magic"), std::string::npos)
        << ErrorOf(path);

    // if_tsresol finer than 10^-18 s.
    NgWriter fine;
    fine.Section();
    fine.Interface(1, 0, {{9, {19}}});
    EXPECT_NE(ErrorOf(fine.w.Save("fine.pcapng")).find("if_tsresol 10^-19"), std::string::npos);
}

TEST(Pcapng, MutatedFilesGiveATraceErrorOrPacketsNeverACrash)
{
    NgWriter n;
    n.Section();
    n.Interface(1, 0, {{9, {9}}});
    n.Interface(101);
    for (uint32_t i = 0; i < 40; ++i)
    {
        if (i % 5 == 4)
        {
            n.Simple(UdpFrame(60 + i, static_cast<uint8_t>(i % 7), 1), 60 + i);
        }
        else
        {
            n.Enhanced(i % 2, 1000 * i, UdpFrame(42 + (i * 37) % 1400, static_cast<uint8_t>(i % 7), 1),
                       42 + (i * 37) % 1400);
        }
    }
    RandomStream rng(98);
    uint32_t errors = 0, reads = 0;
    for (int trial = 0; trial < 400; ++trial)
    {
        NgWriter m = n;
        const uint32_t flips = 1 + rng.UniformInt(8);
        for (uint32_t k = 0; k < flips; ++k)
        {
            m.w.bytes[rng.UniformInt(static_cast<uint32_t>(m.w.bytes.size()))] = static_cast<uint8_t>(rng.Next());
        }
        if (rng.Bernoulli(0.3))
        {
            m.w.bytes.resize(rng.UniformInt(static_cast<uint32_t>(m.w.bytes.size())));
        }
        try
        {
            PcapTrace t(m.w.Save("mutated.pcapng"), 8);
            TracePacket p;
            while (t.Next(p))
            {
                ASSERT_GE(p.frameBytes, 64u);
                ASSERT_LE(p.frameBytes, 9216u);
                ASSERT_LT(p.flow, 8u);
                ++reads;
            }
        }
        catch (const TraceError&)
        {
            ++errors;
        }
    }
    EXPECT_GT(errors, 0u);
    EXPECT_GT(reads, 0u);
}

namespace
{
// An Ethernet + IPv4 + TCP frame (no FCS; a 20-byte IP and a 20-byte TCP
// header) carrying `payload`.
std::vector<uint8_t>
TcpFrame(const std::string& payload)
{
    std::vector<uint8_t> f(54, 0);
    f[12] = 0x08; // EtherType IPv4
    f[14] = 0x45;
    const uint32_t ipLen = 40 + static_cast<uint32_t>(payload.size());
    f[16] = static_cast<uint8_t>(ipLen >> 8), f[17] = static_cast<uint8_t>(ipLen);
    f[23] = 6; // TCP
    f[26] = 198, f[27] = 18, f[28] = 0, f[29] = 2;
    f[30] = 198, f[31] = 18, f[32] = 0, f[33] = 1;
    f[34] = 0x9C, f[35] = 0x40; // port 40000
    f[36] = 0, f[37] = 80;
    f[46] = 5 << 4;      // data offset: 20 bytes
    f[47] = 0x18;        // PSH ACK
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
}
} // namespace

// KeepPayload gives each TCP segment's payload octets as written, in pcap
// and in pcapng (the Enhanced Packet Block's fast path), only the captured
// part of a segment a snaplen cut, nothing for UDP, and nothing at all
// unless asked for (the flow and size replay reads 128 octets a record).
TEST(PcapTrace, KeptPayloadIsEachTcpSegmentsCapturedOctets)
{
    const std::string get = "GET /a.gif HTTP/1.1\r\nHost: h\r\n\r\n";
    const std::string big(3000, 'b'); // past the 128 octets the flow key reads
    Writer w;
    w.Header(0xA1B2C3D4u);
    for (const std::string& payload : {get, big})
    {
        const std::vector<uint8_t> f = TcpFrame(payload);
        w.U32(1), w.U32(0), w.U32(static_cast<uint32_t>(f.size())), w.U32(static_cast<uint32_t>(f.size()));
        w.bytes.insert(w.bytes.end(), f.begin(), f.end());
    }
    const std::vector<uint8_t> cut = TcpFrame(get);
    w.U32(1), w.U32(0), w.U32(64), w.U32(static_cast<uint32_t>(cut.size())); // 10 payload octets captured
    w.bytes.insert(w.bytes.end(), cut.begin(), cut.begin() + 64);
    w.Udp(1, 0, 100, 1, 1000);
    const std::string pcap = w.Save("payload.pcap");

    NgWriter n;
    n.Section();
    n.Interface(1);
    n.Enhanced(0, 1, TcpFrame(get), static_cast<uint32_t>(TcpFrame(get).size()));
    n.Enhanced(0, 2, TcpFrame(big), static_cast<uint32_t>(TcpFrame(big).size()));
    n.Enhanced(0, 3, std::vector<uint8_t>(cut.begin(), cut.begin() + 64), static_cast<uint32_t>(cut.size()));
    n.Enhanced(0, 4, UdpFrame(100, 1, 1000), 100);
    const std::string pcapng = n.w.Save("payload.pcapng");

    for (const std::string& path : {pcap, pcapng})
    {
        PcapTrace t(path, 16);
        t.KeepPayload(true);
        TracePacket p;
        std::vector<std::string> got;
        std::vector<uint32_t> sent;
        while (t.Next(p))
        {
            got.emplace_back(t.Payload().begin(), t.Payload().end());
            sent.push_back(p.tcpPayload);
        }
        ASSERT_EQ(got.size(), 4u) << path;
        EXPECT_EQ(got[0], get) << path;
        EXPECT_EQ(got[1], big) << path;
        EXPECT_EQ(got[2], get.substr(0, 10)) << path;
        EXPECT_EQ(sent[2], get.size()) << path; // the size sent, beyond what was captured
        EXPECT_EQ(got[3], "") << path;

        PcapTrace off(path, 16);
        while (off.Next(p))
            EXPECT_TRUE(off.Payload().empty()) << path;
    }
}
