// TCP over path servers against closed forms, and the EIP's conntrack + DNAT
// against the C core's documented rewrite counts.
#include "conntrack-nat.h"
#include "ethernet-framing.h"
#include "tcp-path-scenario.h"

#include "ns3/ipv4-header.h"
#include "ns3/tcp-header.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace routertwin;

namespace
{

constexpr double kMss = 1448;       // 1500 - 20 IPv4 - 20 TCP - 12 timestamps
// 14 header + 4 FCS + 8 preamble/SFD + 12 IFG (IEEE 802.3): 38
constexpr double kEthernet = 14 + ethernet::kFcsBytes + ethernet::kOverheadBytes;
constexpr double kAckIp = 52;       // 20 IPv4 + 20 TCP + 12 timestamps

PathNodeSpec
Node(const std::string& name)
{
    PathNodeSpec n;
    n.name = name;
    n.type = "host";
    return n;
}

PathLinkSpec
Gbe(double delayS = 0)
{
    PathLinkSpec l;
    l.type = "gbe";
    l.rateBps = 1e9;
    l.frameOverheadBytes = static_cast<uint32_t>(kEthernet);
    l.delayS = delayS;
    l.queuePackets = 1000;
    return l;
}

/// Steady goodput of the last record's second half, bit/s.
double
SteadyBps(const TcpPathResult& r)
{
    return 8.0 * r.halfBytes.back() / r.halfSeconds.back();
}

} // namespace

// 1 Gbit/s, MSS 1448: each segment is 1448 + 52 + 38 = 1538 bytes on the
// wire, so goodput = 1e9 x 1448 / 1538 = 941.482 Mbit/s.
TEST(TcpPath, GoodputAtLineRateIsMssOverWireBytes)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b")};
    c.links = {Gbe()};
    // A 1 MB send buffer keeps at most 724 segments in flight: more than the
    // path holds unqueued, fewer than the 1000-frame queue, so the wire never
    // idles and nothing is lost (CUBIC's loss cycles are another test's).
    c.tcp.sndBufBytes = 1 << 20;
    c.fileBytes = 16000000;
    c.records = 2;
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);
    ASSERT_EQ(r.recordSeconds.size(), 2u);
    const double expected = 1e9 * kMss / (kMss + kAckIp + kEthernet);
    EXPECT_NEAR(expected / 1e6, 941.482, 0.001);
    EXPECT_EQ(r.recoveries + r.timeouts, 0u);
    EXPECT_NEAR(SteadyBps(r) / expected, 1.0, 0.002); // 0.2 %
    // The record includes the confirm's round trip and (first record) slow
    // start; at 16 MB they cost well under 1 %.
    EXPECT_NEAR(8.0 * 16000000 / r.recordSeconds.back() / expected, 1.0, 0.01);
}

// A hairpin: the wire b-c is crossed twice (b->c->b), so each of its
// directions carries the data of one crossing and the ACKs of the other.
// With an ACK per 2 segments, per 2 segments it sends 2 x 1538 + 90 bytes:
// goodput = 1e9 x 2 x 1448 / (2 x 1538 + 52 + 38) = 914.719 Mbit/s.
TEST(TcpPath, SharedWireCarriesDataAndAcksOfBothCrossings)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b"), Node("c"), Node("b"), Node("d")};
    c.links = {Gbe(), Gbe(), Gbe(), Gbe()};
    c.links[0].rateBps = c.links[3].rateBps = 10e9; // host links faster: the shared wire binds
    c.links[0].type = c.links[3].type = "tengbe";
    c.tcp.sndBufBytes = 1 << 20; // loss-free, as above
    c.fileBytes = 16000000;
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);
    const double wire = kMss + kAckIp + kEthernet;
    const double expected = 1e9 * 2 * kMss / (2 * wire + kAckIp + kEthernet);
    EXPECT_NEAR(expected / 1e6, 914.719, 0.001);
    EXPECT_EQ(r.recoveries + r.timeouts, 0u);
    EXPECT_NEAR(SteadyBps(r) / expected, 1.0, 0.003);
}

// Window-limited: a 65535-byte window (no scaling) holds 45 full segments;
// over a 10 ms round trip (+ one segment's and one ACK's serialization)
// goodput = 45 x 1448 x 8 / RTT.
TEST(TcpPath, WindowLimitedGoodputIsWindowOverRtt)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b")};
    c.links = {Gbe(5e-3)};
    c.tcp.windowScaling = false;
    c.tcp.rcvBufBytes = 65535;
    c.tcp.ackEverySegments = 1;
    c.fileBytes = 20000000;
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);
    const double window = std::floor(65535 / kMss) * kMss;
    const double rtt = 2 * 5e-3 + 8 * (kMss + kAckIp + kEthernet) / 1e9 + 8 * (kAckIp + kEthernet) / 1e9;
    EXPECT_NEAR(SteadyBps(r) / (8 * window / rtt), 1.0, 0.02);
    // ns-3 samples RTT from TCP timestamps, whose clock ticks in ms
    // (TcpSocketBase ClockGranularity / TSval): the sample is RTT to 1 ms.
    EXPECT_NEAR(r.rttMinS, rtt, 1e-3);
}

// Mathis, Semke, Mahdavi, Ott (1997), "The macroscopic behavior of the TCP
// congestion avoidance algorithm": BW = MSS / RTT x C / sqrt(p), C =
// sqrt(3/2) with an ACK per segment. Reno, random loss p = 0.25 % on the
// data's first link, RTT 20 ms: 1448 x 8 / 0.02 x 1.2247 / 0.05 = 14.19
// Mbit/s. The model is an approximation (it ignores timeouts and the
// slow start after them); 25 % is its accuracy in the paper's own
// simulations at this loss rate.
TEST(TcpPath, RandomLossFollowsMathis)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b"), Node("c")};
    c.links = {Gbe(5e-3), Gbe(5e-3)};
    c.links[0].lossRate = 0.0025;
    c.links[0].type = "lossy";
    c.tcp.congestion = "newreno";
    c.tcp.ackEverySegments = 1;
    c.durationS = 40;
    c.seed = 7;
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);
    const double expected = kMss * 8 / 0.02 * std::sqrt(1.5) / std::sqrt(0.0025);
    EXPECT_NEAR(expected / 1e6, 14.19, 0.01);
    EXPECT_NEAR(r.durationGoodputBps / expected, 1.0, 0.25);
    EXPECT_GT(r.recoveries, 100u); // many loss events: a macroscopic average
}

// Same scenario and seed: the same records, bit for bit.
TEST(TcpPath, SameSeedSameRecords)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b"), Node("c")};
    c.links = {Gbe(1e-4), Gbe(1e-4)};
    c.links[0].lossRate = 0.001;
    c.links[0].type = "lossy";
    c.fileBytes = 5000000;
    c.records = 2;
    const TcpPathResult a = RunTcpPath(c);
    const TcpPathResult b = RunTcpPath(c);
    ASSERT_TRUE(a.completed);
    EXPECT_EQ(a.recordSeconds, b.recordSeconds);
    EXPECT_EQ(a.recoveries, b.recoveries);
}

// The EIP box: the connection's SYN creates the conntrack entries, every
// packet to the EIP is DNATed to the inside address and every reply SNATed
// back; the receiver sees its own address, the sender only the EIP.
TEST(TcpPath, EipBoxTranslatesEveryPacketOfTheConnection)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("nat"), Node("b")};
    c.nodes[1].dnat = true;
    c.nodes[1].cpuPerPacketS = 1e-6;
    c.nodes[1].natPricesNs = {{"table_probes", 10.0}, {"csum_updates", 4.0}};
    c.links = {Gbe(), Gbe()};
    c.fileBytes = 2000000;
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);
    EXPECT_EQ(r.natConnections, 1u);
    // RFC 1624 rewrite of an address and a port: 5 incremental updates and
    // 10 bytes written per packet (dp_nat.h); one flow-table lookup each.
    EXPECT_DOUBLE_EQ(r.natOpsPerPacket.at("csum_updates"), 5.0);
    EXPECT_DOUBLE_EQ(r.natOpsPerPacket.at("bytes_written"), 10.0);
    EXPECT_GT(r.natTranslated, 2000000 / 1448u);
}

TEST(ConntrackNat, MidConnectionPacketToTheEipWithoutEntryIsDropped)
{
    ConntrackNat nat(ns3::Ipv4Address("198.19.255.100"), ns3::Ipv4Address("198.18.1.2"), 16);
    auto packet = ns3::Create<ns3::Packet>(100);
    ns3::TcpHeader tcp;
    tcp.SetSourcePort(40000);
    tcp.SetDestinationPort(10115);
    tcp.SetFlags(ns3::TcpHeader::ACK);
    packet->AddHeader(tcp);
    ns3::Ipv4Header ip;
    ip.SetSource(ns3::Ipv4Address("198.18.0.1"));
    ip.SetDestination(ns3::Ipv4Address("198.19.255.100"));
    ip.SetProtocol(6);
    ip.SetPayloadSize(packet->GetSize());
    packet->AddHeader(ip);
    dp_ops_t ops{};
    EXPECT_EQ(nat.Process(packet, &ops), ConntrackNat::Verdict::kDropped);
    EXPECT_EQ(nat.Connections(), 0u);
}

TEST(TcpPathConfig, BadKeysAreNamed)
{
    TcpPathConfig c;
    c.nodes = {Node("a"), Node("b")};
    c.links = {Gbe()};
    c.links[0].rateBps = -1;
    try
    {
        c.Validate();
        FAIL() << "accepted a negative rate";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("key 'links[0].rate_bps'"), std::string::npos) << e.what();
    }
    c.links[0] = Gbe();
    c.nodes[0].dnat = true;
    EXPECT_THROW(c.Validate(), std::invalid_argument);
}
