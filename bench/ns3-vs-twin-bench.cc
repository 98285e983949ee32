// Packet-hops per wall-second: stock ns-3 versus the twin's pipeline model,
// measured in one run so that machine load affects both alike.
//
// (a) stock ns-3: UdpClient -> PointToPoint (100 Gbit/s, 1 hop) -> UdpServer,
//     18-byte UDP payloads (a 46-byte IP packet: the content of a 64-byte
//     Ethernet frame), one ns3::Packet through the full stack per packet.
//     Packet-hops = packets the UdpServer received.
// (b) the twin: RFC 2544 tester -> 48-core CN78xx-like PipelineDevice at
//     1.8 GHz (ORDERED tags, 4 flows, 100G ports) -> tester, 64-byte frames
//     offered at 105 Mpps; each packet is forwarded by the real data-plane
//     core's priced counters. Packet-hops = packets the device forwarded.
//
// Usage: ns3_vs_twin_bench [--packets N] [--ns3-packets M] [--mode both|ns3|twin]
//                          [--core-per-packet]
//   --packets      twin packets (default 10,500,000 = 100 ms at 105 Mpps)
//   --ns3-packets  stock ns-3 packets (default 300,000; it is ~50x slower)
//   --core-per-packet  run the C core on every twin packet instead of once
//                  per (flow, frame size) template
//   --mode         run one side only, e.g. under callgrind:
//     valgrind --tool=callgrind --toggle-collect='ns3::Simulator::Run()' \
//       ns3_vs_twin_bench --mode twin --packets 200000
//   Every packet of both sides is processed inside Simulator::Run(), so its
//   instruction count divided by the packets printed is instructions per
//   packet-hop (see docs/model.md).
#include "forwarding-scenario.h"

#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ns3;

namespace
{

struct Measured
{
    uint64_t packetHops;
    double wallSeconds;
};

double
Since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Measured
StockNs3(uint64_t packets)
{
    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("1us"));
    NetDeviceContainer devs = p2p.Install(nodes);
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);

    UdpServerHelper server(9);
    ApplicationContainer serverApp = server.Install(nodes.Get(1));
    UdpClientHelper client(ifs.GetAddress(1), 9);
    client.SetAttribute("MaxPackets", UintegerValue(static_cast<uint32_t>(packets)));
    // 10 ns spacing: 100 Mpps, below the 100G link's ~260 Mpps for 48-byte
    // PPP frames, so the device queue never drops.
    client.SetAttribute("Interval", TimeValue(NanoSeconds(10)));
    client.SetAttribute("PacketSize", UintegerValue(18));
    ApplicationContainer clientApp = client.Install(nodes.Get(0));
    serverApp.Start(Seconds(0));
    clientApp.Start(Seconds(0.001));

    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wall = Since(t0);
    const uint64_t rx = DynamicCast<UdpServer>(serverApp.Get(0))->GetReceived();
    Simulator::Destroy();
    return {rx, wall};
}

// Assumed CN78xx-like costs for the benchmark (not a calibrated profile):
// 500 cycles per packet at 1.8 GHz = 3.6 Mpps per core (seed 002 section 2.1,
// "64byte-1core 3.6M"), of which 40 are the one cache line the LPM lookup
// touches (price from scenarios/platforms/cn78xx-1800-ddr4-1866.yaml) and 460
// fixed; packet-I/O ceiling 104.9 Mpps (seed 002, "64byte-48core 104.9M");
// 1.27 us of fixed pipeline stages (sum of that profile's stages_ns).
Measured
Twin(uint64_t packets, bool corePerPacket)
{
    routertwin::ForwardingScenarioConfig c;
    c.numCores = 48;
    c.clockHz = 1.8e9;
    c.scheduling = "ordered";
    c.numFlows = 4;
    c.portBitRate = 100e9;
    c.frameBytes = 64;
    c.offeredPps = 105e6;
    c.durationSeconds = static_cast<double>(packets) / c.offeredPps;
    c.inputPpsCeiling = 104.9e6;
    c.fixedCyclesPerPacket = 460;
    c.counterPrices["cache_lines"] = 40;
    c.fixedLatencySeconds = 1.27e-6;
    c.inputQueueDepth = 4096;
    c.runCorePerPacket = corePerPacket;
    const auto t0 = std::chrono::steady_clock::now();
    routertwin::ForwardingScenarioResult r = routertwin::RunForwardingScenario(c);
    const double wall = Since(t0);
    std::printf("twin: tx %llu rx %llu forwarded %.2f Mpps, latency avg %.3f us, bottleneck %s, "
                "%llu ns-3 events, core ran %llu times\n",
                static_cast<unsigned long long>(r.txPackets),
                static_cast<unsigned long long>(r.rxPackets), r.forwardedPps / 1e6, r.latencyAvgUs,
                r.bottleneck.c_str(), static_cast<unsigned long long>(r.simEvents),
                static_cast<unsigned long long>(r.coreRuns));
    return {r.rxPackets, wall};
}

uint64_t
ParseCount(const char* flag, const char* text)
{
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (!text[0] || *end || v == 0)
    {
        std::fprintf(stderr, "ns3_vs_twin_bench: %s needs a positive integer, got '%s'\n", flag, text);
        std::exit(2);
    }
    return v;
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t twinPackets = 10500000, ns3Packets = 300000;
    std::string mode = "both";
    bool corePerPacket = false;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (i + 1 < argc && a == "--packets")
        {
            twinPackets = ParseCount("--packets", argv[++i]);
        }
        else if (i + 1 < argc && a == "--ns3-packets")
        {
            ns3Packets = ParseCount("--ns3-packets", argv[++i]);
        }
        else if (a == "--core-per-packet")
        {
            corePerPacket = true;
        }
        else if (i + 1 < argc && a == "--mode")
        {
            mode = argv[++i];
            if (mode != "both" && mode != "ns3" && mode != "twin")
            {
                std::fprintf(stderr, "ns3_vs_twin_bench: --mode must be both, ns3 or twin\n");
                return 2;
            }
        }
        else
        {
            std::fprintf(stderr, "usage: ns3_vs_twin_bench [--packets N] [--ns3-packets M] "
                                 "[--mode both|ns3|twin] [--core-per-packet]\n");
            return 2;
        }
    }
    double ns3Rate = 0, twinRate = 0;
    if (mode != "twin")
    {
        const Measured m = StockNs3(ns3Packets);
        ns3Rate = m.packetHops / m.wallSeconds;
        std::printf("stock ns-3 p2p UDP: %llu packet-hops in %.3f s wall = %.3f M packet-hops/s\n",
                    static_cast<unsigned long long>(m.packetHops), m.wallSeconds, ns3Rate / 1e6);
    }
    if (mode != "ns3")
    {
        const Measured m = Twin(twinPackets, corePerPacket);
        twinRate = m.packetHops / m.wallSeconds;
        std::printf("twin 48-core pipeline: %llu packet-hops in %.3f s wall = %.3f M packet-hops/s\n",
                    static_cast<unsigned long long>(m.packetHops), m.wallSeconds, twinRate / 1e6);
    }
    if (mode == "both")
    {
        std::printf("ratio twin / stock ns-3 per packet-hop: %.1fx\n", twinRate / ns3Rate);
    }
    return 0;
}
