#include "router-model.h"
#include "router-node.h"
#include "router-scenario.h"

#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

using namespace routertwin;

namespace
{
RouterConfig
Small(unsigned ipBytes, double load, double seconds)
{
    RouterConfig c;
    c.ipBytes = ipBytes;
    c.offeredLoad = load;
    c.durationSeconds = seconds;
    return c;
}
} // namespace

TEST(RouterCells, PacketsBeyondOneCellTakeTwo)
{
    // 64-octet cells with a 24-octet internal header: 40 octets fit one
    // cell, 41 need two (the arithmetic behind the 41-byte boundary).
    RouterConfig c;
    c.ipBytes = 40;
    EXPECT_EQ(c.CellsPerPacket(), 1u);
    c.ipBytes = 41;
    EXPECT_EQ(c.CellsPerPacket(), 2u);
    c.ipBytes = 104;
    EXPECT_EQ(c.CellsPerPacket(), 2u);
    c.ipBytes = 105;
    EXPECT_EQ(c.CellsPerPacket(), 3u);
}

TEST(RouterPorts, PairsPortOneWithSeventeen)
{
    RouterConfig c;
    EXPECT_EQ(c.PeerOf(0), 16u);
    EXPECT_EQ(c.PeerOf(16), 0u);
    EXPECT_EQ(c.PeerOf(15), 31u);
}

TEST(RouterPacketLevel, BelowEveryCeilingNothingIsLostAndRatesFollowLoad)
{
    RouterConfig c = Small(40, 0.5, 50e-6);
    c.ports = 4;
    RouterResult r = RunRouterPacketLevel(c);
    EXPECT_GT(r.txPackets, 0u);
    EXPECT_EQ(r.rxPackets, r.txPackets);
    // At half load the tester sends at exactly half the theoretical rate
    // (escapes fit in the idle time), up to one frame per port.
    EXPECT_NEAR(r.txPctOfTheoretical, 50.0, 100.0 * 4 / r.txPackets);
    EXPECT_NEAR(r.latencyMin, c.fixedLatencySeconds, 1e-9);
    for (const auto& [name, n] : r.drops)
    {
        EXPECT_EQ(n, 0u) << name;
    }
}

TEST(RouterPacketLevel, EveryPacketIsLookedUpInTheCoreFib)
{
    RouterConfig c = Small(40, 1.0, 20e-6);
    c.routes = 3200;
    c.routesAsDestinations = true;
    RouterResult r = RunRouterPacketLevel(c);
    EXPECT_EQ(r.lookups, r.txPackets);
    EXPECT_EQ(r.drops.at("no_route"), 0u);
    EXPECT_EQ(r.rxPackets, r.txPackets);
    // Generated routes are /24s: DIR-24-8 answers with one table read.
    EXPECT_EQ(r.tableProbes, r.lookups);
}

TEST(RouterPacketLevel, RouteFileMissingDestinationsDropsThemAsNoRoute)
{
    const char* path = "router-model-test-routes.txt";
    {
        std::ofstream f(path);
        // 16.0.0.0/13 covers the first 2048 of the 3200 generated /24s.
        f << "# partial table\n16.0.0.0/13 0\n";
    }
    RouterConfig c = Small(40, 1.0, 10e-6);
    c.routes = 3200;
    c.routesAsDestinations = true;
    c.routeFile = path;
    RouterResult r = RunRouterPacketLevel(c);
    std::remove(path);
    EXPECT_GT(r.drops.at("no_route"), 0u);
    EXPECT_LT(r.drops.at("no_route"), r.txPackets);
    EXPECT_EQ(r.rxPackets + r.drops.at("no_route"), r.txPackets);
}

TEST(RouterPacketLevel, BadRouteFileNamesFileAndLine)
{
    const char* path = "router-model-test-bad.txt";
    {
        std::ofstream f(path);
        f << "10.0.0.0/8 1\n10.1.0.0/33 2\n";
    }
    RouterConfig c = Small(40, 1.0, 1e-6);
    c.routeFile = path;
    try
    {
        RunRouterPacketLevel(c);
        FAIL() << "no exception";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("router-model-test-bad.txt:2"), std::string::npos);
    }
    std::remove(path);
}

TEST(RouterPacketLevel, FibFileDiscardsDropByName)
{
    // 32 routes, one per tester port's peer (route i -> the stream whose
    // peer is i): 4 discards of each kind, 4 ECMP routes over ports 20-23,
    // the rest to port 24. Every packet of a discard route's stream is
    // dropped under that route's name, and nothing else is dropped.
    const char* path = "router-model-test-fib.txt";
    {
        std::ofstream f(path);
        f << "# fib\n";
        for (unsigned i = 0; i < 32; ++i)
        {
            const char* target = i < 4 ? "blackhole" : i < 8 ? "unreachable" : i < 12 ? "prohibit"
                                 : i < 16 ? "20,21,22,23" : "24";
            f << "16." << i << ".0.0/16 " << target << "\n";
        }
    }
    RouterConfig c = Small(40, 1.0, 10e-6);
    c.routeFile = path;
    c.routesAsDestinations = true;
    RouterResult r = RunRouterPacketLevel(c);
    std::remove(path);
    // Stream of tester port p sends to route PeerOf(p) = (p + 16) % 32.
    uint64_t tx[4] = {0, 0, 0, 0};
    for (unsigned p = 0; p < 32; ++p)
    {
        unsigned route = c.PeerOf(p);
        if (route < 12)
        {
            tx[route / 4] += r.ports[p].txPackets;
        }
    }
    EXPECT_GT(tx[0], 0u);
    EXPECT_EQ(r.drops.at("blackhole"), tx[0]);
    EXPECT_EQ(r.drops.at("unreachable"), tx[1]);
    EXPECT_EQ(r.drops.at("prohibited"), tx[2]);
    EXPECT_EQ(r.drops.at("no_route"), 0u);
    EXPECT_EQ(r.rxPackets + tx[0] + tx[1] + tx[2], r.txPackets);
}

TEST(RouterPacketLevel, BadEcmpTargetsNameFileAndLine)
{
    const char* path = "router-model-test-bad-ecmp.txt";
    for (const char* bad : {"10.0.0.0/8 1,1", "10.0.0.0/8 1,", "10.0.0.0/8 32", "10.0.0.0/8 drop",
                            "10.0.0.0/8 1 2"})
    {
        {
            std::ofstream f(path);
            f << "10.1.0.0/16 0,1\n" << bad << "\n";
        }
        RouterConfig c = Small(40, 1.0, 1e-6);
        c.routeFile = path;
        try
        {
            RunRouterPacketLevel(c);
            ADD_FAILURE() << "accepted: " << bad;
        }
        catch (const std::invalid_argument& e)
        {
            EXPECT_NE(std::string(e.what()).find("router-model-test-bad-ecmp.txt:2:"), std::string::npos) << bad;
        }
    }
    std::remove(path);
}

TEST(RouterPacketLevel, FabricOverloadAt41BytesDropsAt42DoesNot)
{
    // With a short fabric input buffer the overload shows within 300 us.
    RouterConfig c = Small(41, 1.0, 300e-6);
    c.ports = 4;
    c.ingressBufferSeconds = 1e-6;
    RouterResult r41 = RunRouterPacketLevel(c);
    EXPECT_GT(r41.fabricLoad, 1.0);
    EXPECT_GT(r41.drops.at("ingress_buffer_full"), 0u);
    c.ipBytes = 42;
    RouterResult r42 = RunRouterPacketLevel(c);
    EXPECT_LT(r42.fabricLoad, 1.0);
    EXPECT_EQ(r42.rxPackets, r42.txPackets);
}

TEST(RouterScenario, Ns3DrivenRunEqualsPlainLoop)
{
    RouterConfig c = Small(42, 1.0, 30e-6);
    c.ports = 8;
    RouterResult a = RunRouterPacketLevel(c);
    RouterScenarioResult b = RunRouterScenario(c);
    EXPECT_EQ(a.txPackets, b.result.txPackets);
    EXPECT_EQ(a.rxPackets, b.result.rxPackets);
    EXPECT_DOUBLE_EQ(a.latencyAvg, b.result.latencyAvg);
    EXPECT_DOUBLE_EQ(a.latencyMax, b.result.latencyMax);
    EXPECT_GT(b.events, 0u);
}

TEST(RouterScenario, SameSeedBitIdentical)
{
    RouterConfig c = Small(40, 1.0, 20e-6);
    c.routes = 3200;
    c.routesAsDestinations = true;
    RouterResult a = RunRouterPacketLevel(c);
    RouterResult b = RunRouterPacketLevel(c);
    EXPECT_EQ(a.rxPackets, b.rxPackets);
    EXPECT_EQ(a.latencyAvg, b.latencyAvg);
    EXPECT_EQ(a.meanEgressEscapes, b.meanEgressEscapes);
}

// Where both modes apply (a window short enough for packet level) they must
// agree: rates to 0.01 %, drops and mean latency within the stated bounds.
TEST(RouterModes, SteadyStateAgreesWithPacketLevel)
{
    struct Case
    {
        unsigned ip;
        double load;
        double buffer;
    };
    for (Case k : {Case{40, 0.97, 0.1}, Case{40, 1.0, 0.1}, Case{42, 1.0, 0.1}, Case{41, 1.0, 20e-6}})
    {
        RouterConfig c = Small(k.ip, k.load, 400e-6);
        c.ports = 8;
        c.ingressBufferSeconds = k.buffer;
        RouterResult p = RunRouterPacketLevel(c);
        RouterResult s = RunRouterSteadyState(c);
        SCOPED_TRACE(std::to_string(k.ip) + " B load " + std::to_string(k.load));
        EXPECT_NEAR(s.txPps / p.txPps, 1.0, 1e-4);
        EXPECT_NEAR(double(s.rxPackets) / p.rxPackets, 1.0, 5e-3);
        // Mean latency: the diffusion approximation against the exact
        // queues, within 0.5 us on top of an 18.68 us floor.
        EXPECT_NEAR(s.latencyAvg, p.latencyAvg, 0.5e-6);
        EXPECT_NEAR(s.fabricLoad, p.fabricLoad, 1e-3);
    }
}

TEST(RouterConfigCheck, RejectsBadValues)
{
    RouterConfig c;
    c.ports = 31;
    EXPECT_THROW(c.Validate(), std::invalid_argument);
    c = RouterConfig{};
    c.offeredLoad = 1.5;
    EXPECT_THROW(c.Validate(), std::invalid_argument);
    c = RouterConfig{};
    c.sonetN = 100;
    EXPECT_THROW(c.Validate(), std::invalid_argument);
}

namespace
{
struct TraceCounts
{
    std::map<std::string, uint64_t> drops;
    uint64_t rx = 0;
    double maxLatency = 0;
};

void
OnDrop(TraceCounts* c, std::string reason, uint32_t)
{
    ++c->drops[reason];
}

void
OnRx(TraceCounts* c, uint32_t, ns3::Time lat)
{
    ++c->rx;
    c->maxLatency = std::max(c->maxLatency, lat.GetSeconds());
}
} // namespace

TEST(RouterNodeTraces, DropAndRxTracesMatchTheCounters)
{
    ns3::Ptr<RouterNode> node = ns3::CreateObject<RouterNode>();
    RouterConfig c = Small(41, 1.0, 300e-6);
    c.ports = 4;
    c.ingressBufferSeconds = 1e-6;
    node->SetConfig(c);
    node->SetAttribute("IpBytes", ns3::UintegerValue(41));
    TraceCounts t;
    node->TraceConnectWithoutContext("Drop", ns3::MakeBoundCallback(&OnDrop, &t));
    node->TraceConnectWithoutContext("Rx", ns3::MakeBoundCallback(&OnRx, &t));
    node->Start();
    ns3::Simulator::Run();
    RouterResult r = node->GetResult();
    node->Dispose();
    ns3::Simulator::Destroy();
    EXPECT_GT(r.drops.at("ingress_buffer_full"), 0u);
    for (const auto& [name, n] : r.drops)
    {
        EXPECT_EQ(t.drops[name], n) << name;
    }
    EXPECT_EQ(t.rx, r.rxPackets);
    EXPECT_NEAR(t.maxLatency, r.latencyMax, 1e-9); // ns3::Time resolution
}

TEST(RouterNodeTraces, AttributesWriteTheConfiguration)
{
    ns3::Ptr<RouterNode> node = ns3::CreateObject<RouterNode>();
    node->SetAttribute("Duration", ns3::TimeValue(ns3::MicroSeconds(250)));
    node->SetAttribute("OfferedLoad", ns3::DoubleValue(0.5));
    EXPECT_DOUBLE_EQ(node->GetConfig().durationSeconds, 250e-6);
    EXPECT_DOUBLE_EQ(node->GetConfig().offeredLoad, 0.5);
    EXPECT_FALSE(node->SetAttributeFailSafe("OfferedLoad", ns3::DoubleValue(1.5)));
}

namespace
{
// A classic pcap (little-endian, microseconds, raw IPv4) of n IP packets,
// sizes and gaps (us) taken in turn from the lists, written from the format
// description.
std::string
WriteIpTrace(const std::string& name, size_t n, const std::vector<unsigned>& sizeList,
             const std::vector<unsigned>& gapsUs)
{
    std::vector<unsigned> sizes;
    for (size_t i = 0; i < n; ++i)
    {
        sizes.push_back(sizeList[i % sizeList.size()]);
    }
    std::vector<uint8_t> b;
    auto u32 = [&b](uint32_t v) {
        for (int i = 0; i < 4; ++i)
        {
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    };
    u32(0xA1B2C3D4u);
    b.push_back(2), b.push_back(0), b.push_back(4), b.push_back(0);
    u32(0);
    u32(0);
    u32(65535);
    u32(101); // raw IP
    uint64_t us = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
    {
        const unsigned cap = std::min(sizes[i], 64u);
        u32(static_cast<uint32_t>(us / 1000000));
        u32(static_cast<uint32_t>(us % 1000000));
        u32(cap);
        u32(sizes[i]);
        std::vector<uint8_t> ip(cap, 0);
        ip[0] = 0x45;
        ip[2] = static_cast<uint8_t>(sizes[i] >> 8);
        ip[3] = static_cast<uint8_t>(sizes[i]);
        ip[9] = 17;
        b.insert(b.end(), ip.begin(), ip.end());
        us += gapsUs[i % gapsUs.size()];
    }
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                 static_cast<std::streamsize>(b.size()));
    return path;
}
} // namespace

TEST(RouterPacketLevel, TraceReplaysItsSizesRescaledToTheOfferedLoad)
{
    // 40- and 1500-byte IP packets in turn at uneven gaps: every port offers
    // half its theoretical rate for that 1:1 mix, and carries its sizes.
    RouterConfig c = Small(40, 0.5, 400e-6);
    c.ports = 4;
    c.traceFile = WriteIpTrace("router.pcap", 60, {40, 1500}, {1, 3, 2});
    c.traceDestinations = false; // its addresses are all zero: the tester's destinations
    const RouterResult r = RunRouterPacketLevel(c);
    const double payload = SonetPayloadBps(c.sonetN);
    const double meanFrame = (NominalFrameBytes(c.ppp, 40) + NominalFrameBytes(c.ppp, 1500)) / 2.0;
    const double theoreticalPort = payload / (8 * meanFrame);
    EXPECT_NEAR(r.theoreticalPps, 4 * theoreticalPort, 1e-6 * r.theoreticalPps);
    // Each pass of the looped trace offers the target rate exactly; the run
    // ends inside one, whose uneven gaps leave a few packets a port of
    // difference (of ~300 a port).
    EXPECT_NEAR(static_cast<double>(r.txPackets), 0.5 * 4 * theoreticalPort * c.durationSeconds, 4 * 3);
    EXPECT_EQ(r.rxPackets, r.txPackets);
    EXPECT_NEAR(r.meanIpBytes, 770.0, 1500.0 / r.rxPackets * 4);
    for (const auto& [name, n] : r.drops)
    {
        EXPECT_EQ(n, 0u) << name;
    }
    // The trace's sizes only in packet mode; not together with a mix.
    EXPECT_THROW(RunRouterSteadyState(c), std::invalid_argument);
    c.ipMix = {{40, 1}};
    EXPECT_THROW(RunRouterPacketLevel(c), std::invalid_argument);
}

TEST(RouterPacketLevel, TruncatedTraceNamesFileAndPacket)
{
    RouterConfig c = Small(40, 0.5, 50e-6);
    c.ports = 2;
    c.traceFile = WriteIpTrace("router-cut.pcap", 4, {40, 1500}, {1});
    {
        std::ifstream in(c.traceFile, std::ios::binary);
        std::vector<char> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        all.resize(all.size() - 20); // inside packet 3's 64 captured bytes
        std::ofstream(c.traceFile, std::ios::binary).write(all.data(), static_cast<std::streamsize>(all.size()));
    }
    try
    {
        RunRouterPacketLevel(c);
        FAIL() << "no error";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find(c.traceFile + ": packet 3: truncated record data"), std::string::npos)
            << e.what();
    }
}

namespace
{
// A classic pcap (raw IP, microseconds) of IPv4 packets to the given
// destinations in turn (0: an IPv6 packet instead), sizes from sizeList in
// turn, gapUs apart; source 198.18.0.<k mod 250>.
std::string
WriteAddressedTrace(const std::string& name, const std::vector<uint32_t>& dsts,
                    const std::vector<unsigned>& sizeList, unsigned gapUs)
{
    std::vector<uint8_t> b;
    auto u32 = [&b](uint32_t v) {
        for (int i = 0; i < 4; ++i)
        {
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    };
    u32(0xA1B2C3D4u);
    b.push_back(2), b.push_back(0), b.push_back(4), b.push_back(0);
    u32(0);
    u32(0);
    u32(65535);
    u32(101); // raw IP
    for (size_t k = 0; k < dsts.size(); ++k)
    {
        const unsigned size = sizeList[k % sizeList.size()];
        const unsigned cap = std::min(size, 64u);
        const uint64_t us = uint64_t(k) * gapUs;
        u32(static_cast<uint32_t>(us / 1000000));
        u32(static_cast<uint32_t>(us % 1000000));
        u32(cap);
        u32(size);
        std::vector<uint8_t> ip(cap, 0);
        if (dsts[k] == 0)
        {
            ip[0] = 0x60; // IPv6: payload length, next header UDP
            ip[4] = static_cast<uint8_t>((size - 40) >> 8);
            ip[5] = static_cast<uint8_t>(size - 40);
            ip[6] = 17;
        }
        else
        {
            ip[0] = 0x45;
            ip[2] = static_cast<uint8_t>(size >> 8);
            ip[3] = static_cast<uint8_t>(size);
            ip[8] = 64;
            ip[9] = 17;
            const uint32_t src = 0xC6120000u | static_cast<uint32_t>(k % 250);
            for (int i = 0; i < 4; ++i)
            {
                ip[12 + i] = static_cast<uint8_t>(src >> (24 - 8 * i));
                ip[16 + i] = static_cast<uint8_t>(dsts[k] >> (24 - 8 * i));
            }
        }
        b.insert(b.end(), ip.begin(), ip.end());
    }
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                 static_cast<std::streamsize>(b.size()));
    return path;
}

// The test's own reading of its FIB below: 10.0.q.0/24 -> port q (q < 4),
// 10.0.9.0/24 blackhole; -1 no route, -2 blackhole, -3 not IPv4.
int
PortOfDestination(uint32_t dst)
{
    if (dst == 0)
    {
        return -3;
    }
    if ((dst >> 8) == 0x0A0009u)
    {
        return -2;
    }
    if ((dst >> 10) == (0x0A000000u >> 10)) // 10.0.0.0/22
    {
        return static_cast<int>((dst >> 8) & 3u);
    }
    return -1;
}

struct ExpectedCounts
{
    std::vector<uint64_t> egress = std::vector<uint64_t>(4, 0);
    uint64_t noRoute = 0, blackhole = 0, notIpv4 = 0;

    // Port p replayed `sent` packets of its trace from packet `first`, looped.
    void Add(const std::vector<uint32_t>& dsts, uint64_t first, uint64_t sent)
    {
        for (uint64_t k = 0; k < sent; ++k)
        {
            const int q = PortOfDestination(dsts[(first + k) % dsts.size()]);
            q >= 0 ? ++egress[q] : q == -1 ? ++noRoute : q == -2 ? ++blackhole : ++notIpv4;
        }
    }
};

std::vector<uint32_t>
PatternDestinations(unsigned n, unsigned stride)
{
    // Destinations in 10.0.0..3.x, one to 10.0.9.x (blackholed), one off the
    // FIB and one IPv6 packet in every 13.
    std::vector<uint32_t> d;
    for (unsigned k = 0; k < n; ++k)
    {
        const unsigned r = (k * stride) % 13;
        d.push_back(r == 10 ? 0x0A000905u : r == 11 ? 0x0B000001u : r == 12 ? 0u
                                                                             : 0x0A000000u | ((r % 4) << 8) | (k % 200 + 1));
    }
    return d;
}
} // namespace

TEST(RouterPacketLevel, TraceDestinationsGoWhereTheFibSendsThem)
{
    // Four ports; a FIB file sends 10.0.q.0/24 to port q and blackholes
    // 10.0.9.0/24. Each port replays its own trace (different destination
    // patterns); what leaves port q must be, packet for packet, the trace
    // packets whose destination the test maps to q, counted from the
    // packets each port sent.
    const std::string fib = ::testing::TempDir() + "trace-fib.txt";
    std::ofstream(fib) << "10.0.0.0/24 0\n10.0.1.0/24 1\n10.0.2.0/24 2\n10.0.3.0/24 3\n10.0.9.0/24 blackhole\n";
    std::vector<std::vector<uint32_t>> dsts;
    RouterConfig c = Small(40, 0.5, 300e-6);
    c.ports = 4;
    c.routeFile = fib;
    for (unsigned p = 0; p < 4; ++p)
    {
        dsts.push_back(PatternDestinations(97 + 10 * p, 1 + 2 * p));
        c.portTraceFiles.push_back(WriteAddressedTrace("trace-port" + std::to_string(p) + ".pcap", dsts[p],
                                                       {40, 576, 1500}, 1 + p));
    }
    const RouterResult r = RunRouterPacketLevel(c);
    ASSERT_TRUE(r.egressCounted);
    ExpectedCounts want;
    for (unsigned p = 0; p < 4; ++p)
    {
        EXPECT_GT(r.ports[p].txPackets, dsts[p].size()) << "port " << p << " replays more than one pass";
        want.Add(dsts[p], 0, r.ports[p].txPackets);
    }
    for (unsigned q = 0; q < 4; ++q)
    {
        EXPECT_EQ(r.ports[q].egressPackets, want.egress[q]) << "egress port " << q;
        EXPECT_GT(want.egress[q], 0u);
    }
    EXPECT_EQ(r.drops.at("no_route"), want.noRoute);
    EXPECT_EQ(r.drops.at("blackhole"), want.blackhole);
    EXPECT_EQ(r.drops.at("not_ipv4"), want.notIpv4);
    EXPECT_GT(want.noRoute * want.blackhole * want.notIpv4, 0u);
    // Nothing else is lost at half load: every routed packet is delivered.
    EXPECT_EQ(r.rxPackets, want.egress[0] + want.egress[1] + want.egress[2] + want.egress[3]);
    // Each port offers half of its own trace's theoretical rate.
    const double payload = SonetPayloadBps(c.sonetN);
    const double meanFrame = (NominalFrameBytes(c.ppp, 40) + NominalFrameBytes(c.ppp, 576) +
                              NominalFrameBytes(c.ppp, 1500)) / 3.0;
    EXPECT_NEAR(r.theoreticalPps, 4 * payload / (8 * meanFrame), 0.02 * r.theoreticalPps);

    // Bit-identical rerun.
    const RouterResult again = RunRouterPacketLevel(c);
    for (unsigned q = 0; q < 4; ++q)
    {
        EXPECT_EQ(again.ports[q].egressPackets, r.ports[q].egressPackets);
        EXPECT_EQ(again.ports[q].egressWireBytes, r.ports[q].egressWireBytes);
        EXPECT_EQ(again.ports[q].latencySum, r.ports[q].latencySum);
    }
    EXPECT_EQ(again.drops, r.drops);
}

TEST(RouterPacketLevel, OneTraceOnEveryPortStartsEachPortAtItsShare)
{
    // One trace for all ports: port p starts at packet floor(n p / ports).
    const std::string fib = ::testing::TempDir() + "trace-fib-shared.txt";
    std::ofstream(fib) << "10.0.0.0/24 0\n10.0.1.0/24 1\n10.0.2.0/24 2\n10.0.3.0/24 3\n10.0.9.0/24 blackhole\n";
    const std::vector<uint32_t> dsts = PatternDestinations(130, 3);
    RouterConfig c = Small(40, 0.5, 200e-6);
    c.ports = 4;
    c.routeFile = fib;
    c.traceFile = WriteAddressedTrace("trace-shared.pcap", dsts, {40, 1500}, 2);
    const RouterResult r = RunRouterPacketLevel(c);
    ExpectedCounts want;
    for (unsigned p = 0; p < 4; ++p)
    {
        want.Add(dsts, dsts.size() * p / 4, r.ports[p].txPackets);
    }
    for (unsigned q = 0; q < 4; ++q)
    {
        EXPECT_EQ(r.ports[q].egressPackets, want.egress[q]) << "egress port " << q;
    }
    EXPECT_EQ(r.drops.at("no_route"), want.noRoute);
    EXPECT_EQ(r.drops.at("blackhole"), want.blackhole);
    EXPECT_EQ(r.drops.at("not_ipv4"), want.notIpv4);

    // Keeping the tester's destinations: port p's packets all leave its peer.
    c.traceDestinations = false;
    c.routeFile.clear();
    const RouterResult kept = RunRouterPacketLevel(c);
    for (unsigned p = 0; p < 4; ++p)
    {
        EXPECT_EQ(kept.ports[c.PeerOf(p)].egressPackets, kept.ports[p].txPackets) << "port " << p;
    }
    EXPECT_EQ(kept.rxPackets, kept.txPackets);
}

TEST(RouterPacketLevel, PerPortTracesIdlePortsAndErrors)
{
    const std::vector<uint32_t> dsts = PatternDestinations(40, 1);
    RouterConfig c = Small(40, 0.5, 100e-6);
    c.ports = 4;
    c.traceDestinations = false;
    c.portTraceFiles = {WriteAddressedTrace("trace-one.pcap", dsts, {1500}, 1), "", "", ""};
    const RouterResult r = RunRouterPacketLevel(c);
    // Only port 0 sends; the theoretical rate is its own: 1500-byte packets.
    EXPECT_GT(r.ports[0].txPackets, 0u);
    for (unsigned p = 1; p < 4; ++p)
    {
        EXPECT_EQ(r.ports[p].txPackets, 0u);
    }
    const double onePort = SonetPayloadBps(c.sonetN) / (8.0 * NominalFrameBytes(c.ppp, 1500));
    EXPECT_NEAR(r.theoreticalPps, onePort, 1e-9 * onePort);
    EXPECT_EQ(r.ports[c.PeerOf(0)].egressPackets, r.ports[0].txPackets);
    c.portTraceFiles.pop_back();
    EXPECT_THROW(RunRouterPacketLevel(c), std::invalid_argument); // 3 entries for 4 ports
    c.portTraceFiles = {"", "", "", ""};
    EXPECT_THROW(RunRouterPacketLevel(c), std::invalid_argument); // all idle
    c.portTraceFiles = {"x.pcap", "", "", ""};
    c.traceFile = "y.pcap";
    EXPECT_THROW(RunRouterPacketLevel(c), std::invalid_argument); // both forms
}

// The egress queue's time-weighted lengths (packet mode) against line-rate
// arithmetic. A port pair at constant spacing is a D/D/1 queue: each packet
// is alone on the egress line for its wire time w and the line idles
// between, so the queue holds exactly one packet a fraction n w / span of
// the time (span = first arrival to last bit out) and never two.
TEST(RouterEgressQueue, ConstantSpacingIsOnePacketForItsWireTime)
{
    RouterConfig c = Small(1500, 0.5, 200e-6);
    c.ports = 2;
    const RouterResult r = RunRouterPacketLevel(c);
    const RouterPortStats& out = r.ports[c.PeerOf(0)];
    ASSERT_GT(out.egressPackets, 50u); // 200 us at 2.4 us spacing
    const QueueLengthHistogram& h = out.egressQueue;
    EXPECT_EQ(h.Max(), 1u);
    const double byteTime = 8.0 / SonetPayloadBps(c.sonetN);
    const double busy = static_cast<double>(out.egressWireBytes) * byteTime;
    EXPECT_NEAR(h.Probability(1) * h.Seconds(), busy, 1e-9 * busy);
    // the span: packets nominalInterval apart, the last one's wire time after the last arrival
    const double nominal = NominalFrameBytes(c.ppp, 1500) * byteTime / c.offeredLoad;
    const double span = (out.egressPackets - 1) * nominal + busy / out.egressPackets;
    EXPECT_NEAR(h.Seconds(), span, 0.01 * nominal);
    EXPECT_NEAR(h.Probability(1), 0.5 * busy / out.egressPackets / (NominalFrameBytes(c.ppp, 1500) * byteTime),
                0.02);
    // both directions' queues added: twice the time
    EXPECT_NEAR(r.egressQueue.Seconds(), 2 * h.Seconds(), 0.01 * h.Seconds());
    // steady state keeps no lengths
    EXPECT_EQ(RunRouterSteadyState(c).egressQueue.Seconds(), 0.0);
}

// Four ports into one (a FIB file sends every stream's destinations to port
// 0) at 0.2 of line rate each: the egress port is 80 % busy. For any single
// work-conserving line, the time it is not empty is the work it did (the
// utilization law), so P(N = 0) = 1 - busy / span with busy from the port's
// own wire-byte counter; and the streams' packets come in phase, four per
// period with 0.8 of a period's work, so the queue empties every period and
// never holds more than four.
TEST(RouterEgressQueue, FourPortsIntoOneFollowTheUtilizationLaw)
{
    const std::string fib = ::testing::TempDir() + "egress-queue-fib.txt";
    std::ofstream(fib) << "10.0.0.0/24 0\n10.0.1.0/24 0\n10.0.2.0/24 0\n10.0.3.0/24 0\n";
    RouterConfig c = Small(1500, 0.2, 400e-6);
    c.ports = 4;
    c.routeFile = fib;
    c.routesAsDestinations = true;
    const RouterResult r = RunRouterPacketLevel(c);
    const RouterPortStats& out = r.ports[0];
    ASSERT_EQ(out.egressPackets, r.txPackets);
    const QueueLengthHistogram& h = out.egressQueue;
    const double busy = static_cast<double>(out.egressWireBytes) * 8.0 / SonetPayloadBps(c.sonetN);
    EXPECT_NEAR(1 - h.Probability(0), busy / h.Seconds(), 1e-9);
    EXPECT_NEAR(1 - h.Probability(0), 0.8, 0.02);
    EXPECT_GE(h.Max(), 2u); // packets that arrive together wait
    EXPECT_LE(h.Max(), 4u);
    // the other ports sent nothing out
    for (unsigned q = 1; q < 4; ++q)
    {
        EXPECT_EQ(r.ports[q].egressQueue.Seconds(), 0.0);
    }
}
