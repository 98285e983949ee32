// The pcap reader on files the test writes itself: sizes, flows by 5-tuple,
// timestamps in both resolutions and byte orders, and clear errors for a
// truncated or malformed file that name the file and the packet index.
#include "pcap-trace.h"
#include "random-stream.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace routertwin;

namespace
{

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
    // An Ethernet + IPv4 + UDP frame (no FCS) of `len` bytes.
    void Udp(uint32_t sec, uint32_t frac, uint32_t len, uint8_t srcHost, uint16_t srcPort)
    {
        std::vector<uint8_t> f(len, 0);
        f[12] = 0x08; // EtherType IPv4
        f[14] = 0x45;
        f[23] = 17; // UDP
        f[26] = 198, f[27] = 18, f[28] = 0, f[29] = srcHost;
        f[30] = 198, f[31] = 19, f[32] = 0, f[33] = 1;
        f[34] = static_cast<uint8_t>(srcPort >> 8), f[35] = static_cast<uint8_t>(srcPort);
        f[36] = 0, f[37] = 7;
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
        EXPECT_NE(std::string(e.what()).find("pcapng"), std::string::npos);
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
