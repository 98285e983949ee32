// The T640 tester's line: tester packets as documented, POS byte stuffing
// counted from the octets actually sent (checked against a CRC-32 and an
// escape count computed here, independently of pos-framing.cc), and the
// router's throughput counting IP octets as the BT report does.
#include "pos-framing.h"
#include "router-model.h"
#include "t640-tester-traffic.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <stdexcept>

using namespace routertwin;

namespace
{
// Rounds to the three decimals the BT report prints.
double
Round3(double x)
{
    return std::round(x * 1000.0) / 1000.0;
}

// The reflected CRC-32 (polynomial 0xEDB88320, preset and final complement
// all ones) that RFC 1662 C.3 specifies as FCS-32, from a table built bit by
// bit here: independent of Fcs32() in pos-framing.cc.
uint32_t
TestCrc32(const uint8_t* p, size_t n)
{
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i)
        {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
            {
                c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }();
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i)
    {
        c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    }
    return ~c;
}

// Escapes of one FCS-32 PPP/HDLC frame around `ip`: every 0x7E or 0x7D among
// address FF, control 03, protocol 00 21, the packet and the FCS (sent least
// significant octet first) is sent as two octets (RFC 1662 4.2, RFC 2615).
unsigned
TestEscapes(const uint8_t* ip, size_t n)
{
    uint8_t body[4 + 64 + 4] = {0xFF, 0x03, 0x00, 0x21};
    EXPECT_LE(n, 64u);
    std::copy(ip, ip + n, body + 4);
    const uint32_t fcs = TestCrc32(body, 4 + n);
    for (size_t i = 0; i < 4; ++i)
    {
        body[4 + n + i] = static_cast<uint8_t>(fcs >> (8 * i));
    }
    unsigned e = 0;
    for (size_t i = 0; i < 4 + n + 4; ++i)
    {
        e += (body[i] == 0x7E || body[i] == 0x7D);
    }
    return e;
}

void
TestPut32(uint8_t* p, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
    {
        p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
    }
}

// A tester packet written from the layout documented in
// t640-tester-traffic.h (IPv4 header with ID = seq, TTL 64, protocol 253,
// then sequence number, timestamp ticks and stream id, zero fill), with the
// header checksum of RFC 791 computed here.
void
TestTesterPacket(unsigned ipBytes, uint32_t src, uint32_t dst, uint32_t streamId, uint64_t seq,
                 uint32_t ticks, std::vector<uint8_t>& p)
{
    p.assign(ipBytes, 0);
    p[0] = 0x45;
    p[2] = static_cast<uint8_t>(ipBytes >> 8);
    p[3] = static_cast<uint8_t>(ipBytes);
    p[4] = static_cast<uint8_t>(seq >> 8);
    p[5] = static_cast<uint8_t>(seq);
    p[8] = 64;
    p[9] = 253;
    TestPut32(&p[12], src);
    TestPut32(&p[16], dst);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
    {
        sum += (p[i] << 8) | p[i + 1];
    }
    while (sum >> 16)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    p[10] = static_cast<uint8_t>(~sum >> 8);
    p[11] = static_cast<uint8_t>(~sum);
    TestPut32(&p[20], static_cast<uint32_t>(seq));
    TestPut32(&p[24], ticks);
    TestPut32(&p[28], streamId);
}

// Mean escapes per frame over the first `frames` frames that the T640
// tester sends back to back on every one of the 32 OC-192c ports. The
// addressing is router-model.cc's (both ASSUMPTIONS there): port p sends
// from 192.168.p.2 with stream id p + 1 to its peer q = (p + 16) mod 32,
// either to q's interface address 192.168.q.2 or, cycling, to the .1 hosts
// of q's share of consecutive /24 routes from 16.0.0.0 (routes / 32 each).
// Timestamps count 10 ns ticks of the exact transmit time: octets sent so
// far x 8 / 9,584.64e6 s = octets x 80000 / 958464 ticks.
double
T640MeanEscapes(unsigned ipBytes, uint32_t routes, uint64_t frames)
{
    uint64_t escapes = 0;
    std::vector<uint8_t> pkt;
    for (uint32_t p = 0; p < 32; ++p)
    {
        const uint32_t q = (p + 16) % 32;
        const uint32_t perPeer = routes / 32;
        uint64_t octets = 0;
        for (uint64_t k = 0; k < frames; ++k)
        {
            uint32_t dst = 0xC0A80002u | (q << 8);
            if (routes > 0)
            {
                dst = 0x10000001u + ((q * perPeer + static_cast<uint32_t>(k % perPeer)) << 8);
            }
            const auto ticks = static_cast<uint32_t>(octets * 80000 / 958464);
            TestTesterPacket(ipBytes, 0xC0A80002u | (p << 8), dst, p + 1, k, ticks, pkt);
            const unsigned e = TestEscapes(pkt.data(), pkt.size());
            escapes += e;
            octets += 9 + ipBytes + e;
        }
    }
    return static_cast<double>(escapes) / (32.0 * frames);
}
} // namespace

// The report's throughput column counts IP octets only (780,069,874 pps x
// 40 x 8 bit = 249.622 Gbit/s), not the 49 octets of the frame on the wire:
// the router's reported throughput must do the same with its own counts.
TEST(T640Theoretical, ReportedThroughputCountsIpOctetsOnly)
{
    RouterConfig c;
    c.ports = 4;
    c.ipBytes = 40;
    c.durationSeconds = 20e-6;
    RouterResult r = RunRouterPacketLevel(c);
    ASSERT_GT(r.rxPackets, 0u);
    EXPECT_NEAR(r.throughputGbps, r.rxPackets * 40.0 * 8.0 / c.durationSeconds / 1e9,
                1e-9 * r.throughputGbps);
}

TEST(TestCrc, MatchesTheCrc32CheckValue)
{
    const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(TestCrc32(check, sizeof check), 0xCBF43926u);
}

TEST(TesterTraffic, PacketsFollowTheDocumentedLayout)
{
    TesterStreamConfig s;
    s.ipBytes = 42;
    s.srcIp = 0x0A000001;
    s.streamId = 7;
    s.dstIps = {0x10000001, 0x10000101};
    std::vector<uint8_t> p;
    // 70000 > 2^16: the IPv4 ID wraps, the signature's sequence does not.
    BuildTesterPacket(s, 70001, 123.456e-6, p);
    std::vector<uint8_t> want;
    TestTesterPacket(42, 0x0A000001, 0x10000101, 7, 70001, 12345, want);
    EXPECT_EQ(p, want);
}

// Every frame's escapes counted from its octets here, and the line rate of
// back-to-back frames from the octets they take: MeasureTesterLine must
// agree on both.
TEST(TesterTraffic, EscapesAndLineRateFollowFromTheOctetsSent)
{
    TesterStreamConfig s;
    s.ipBytes = 40;
    s.dstIps = RouteDestinations(0x10000000, 15625);
    const double payload = SonetPayloadBps(192);
    const uint64_t n = 100000;
    PosEncoder enc(PppHdlcConfig{});
    std::vector<uint8_t> pkt;
    uint64_t escapes = 0, octets = 0;
    double t = 0;
    for (uint64_t k = 0; k < n; ++k)
    {
        // Timestamps as MeasureTesterLine promises: the frame's own start.
        BuildTesterPacket(s, k, t, pkt);
        const unsigned e = TestEscapes(pkt.data(), pkt.size());
        ASSERT_EQ(enc.Frame(pkt.data(), pkt.size()).escapes, e) << "frame " << k;
        escapes += e;
        octets += 49 + e;
        t += (49 + e) * (8.0 / payload);
    }
    TesterLineStats st = MeasureTesterLine(s, PppHdlcConfig{}, payload, n);
    EXPECT_EQ(st.frames, n);
    EXPECT_DOUBLE_EQ(st.meanEscapes, double(escapes) / n);
    // n frames back to back take octets x 8 / payload seconds.
    EXPECT_NEAR(st.pps, n / (octets * 8.0 / payload), 1e-9 * st.pps);
    EXPECT_NEAR(st.pctOfTheoretical, 100.0 * 49.0 * n / octets, 1e-9);
    EXPECT_GT(escapes, 0u);
    EXPECT_LT(st.pctOfTheoretical, 100.0);
}

// docs/t640.md section 1: the twin's tester sends 0.114 escapes per frame at
// 40 bytes to the 500k route destinations and 0.103 at 42 bytes to one
// interface address per port. Both counted here from independently built
// frames (100,000 per port, the steady-state sample), and the router's
// reported ingress escapes must agree.
TEST(TesterTraffic, T640EscapesPerFrameAreTheDocumentedValues)
{
    struct Case
    {
        unsigned ipBytes;
        uint32_t routes;
        double documented;
    };
    for (const Case& k : {Case{40, 500000, 0.114}, Case{42, 0, 0.103}})
    {
        const double mine = T640MeanEscapes(k.ipBytes, k.routes, 100000);
        EXPECT_EQ(Round3(mine), k.documented) << k.ipBytes << " bytes: " << mine;
        RouterConfig c;
        c.ipBytes = k.ipBytes;
        c.routes = k.routes;
        c.routesAsDestinations = k.routes > 0;
        c.durationSeconds = 0.01; // > 100,000 frames per port
        c.sampleFrames = 100000;
        RouterResult r = RunRouterSteadyState(c);
        // Its timestamps come from floating-point times, which can floor to
        // the tick below where the exact time is a whole tick: a few frames
        // in 10^5 may differ, hence 1e-5 and not equality.
        EXPECT_NEAR(r.meanIngressEscapes, mine, 1e-5) << k.ipBytes << " bytes";
    }
}

TEST(TesterTraffic, PacketsCarryValidIpv4Checksum)
{
    TesterStreamConfig s;
    s.dstIps = {0xC0A80101};
    std::vector<uint8_t> p;
    BuildTesterPacket(s, 12345, 1e-3, p);
    ASSERT_EQ(p.size(), 40u);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
    {
        sum += (p[i] << 8) | p[i + 1];
    }
    while (sum >> 16)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    EXPECT_EQ(sum, 0xFFFFu);
    s.ipBytes = 31;
    EXPECT_THROW(BuildTesterPacket(s, 0, 0, p), std::invalid_argument);
}
