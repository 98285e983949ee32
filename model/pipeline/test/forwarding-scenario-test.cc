// The ns-3 layer: Rfc2544Tester -> PipelineDevice (forwarding on the real
// data-plane core) -> tester, checked against closed-form latency and
// capacity, plus the forwarding workload's counters and verdicts.
#include "cycle-cost.h"
#include "ethernet-framing.h"
#include "forwarding-scenario.h"
#include "forwarding-workload.h"
#include "pipeline-device.h"
#include "rfc2544-tester.h"

#include <gtest/gtest.h>
#include <ns3/double.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <cstring>
#include <map>
#include <stdexcept>

using namespace routertwin;

namespace
{

// One 1 GHz core whose only price is a fixed 500 cycles per packet: service
// 0.5 us exactly, capacity 2 Mpps; 10 us of fixed pipeline latency.
ForwardingScenarioConfig
OneCore(double offeredPps)
{
    ForwardingScenarioConfig c;
    c.numCores = 1;
    c.clockHz = 1e9;
    c.fixedCyclesPerPacket = 500;
    c.fixedLatencySeconds = 10e-6;
    c.portBitRate = 10e9;
    c.frameBytes = 64;
    c.offeredPps = offeredPps;
    c.durationSeconds = 0.01;
    c.inputQueueDepth = 256;
    return c;
}

TEST(ForwardingScenario, BelowCapacityNothingIsLostAndLatencyIsFixedPlusServicePlusWire)
{
    ForwardingScenarioResult r = RunForwardingScenario(OneCore(1e6));
    EXPECT_EQ(r.txPackets, 10000u);
    EXPECT_EQ(r.rxPackets, r.txPackets);
    EXPECT_EQ(r.lostPackets, 0u);
    EXPECT_EQ(r.sequenceErrors, 0u);
    const double wireUs = ethernet::WireSeconds(10e9, 64) * 1e6; // 0.0672 us
    EXPECT_NEAR(r.latencyMinUs, 10 + 0.5 + wireUs, 1e-6);
    // Constant arrivals slower than the service: nobody ever waits.
    EXPECT_NEAR(r.latencyMaxUs, r.latencyMinUs, 1e-6);
    EXPECT_NEAR(r.forwardedPps, 1e6, 1e6 * 1e-3);
    EXPECT_EQ(r.bottleneck, "");
    EXPECT_NEAR(r.utilization.at("cores"), 0.5, 0.01);
}

TEST(ForwardingScenario, AboveCapacityForwardedRateIsTheCoreCapacity)
{
    ForwardingScenarioResult r = RunForwardingScenario(OneCore(5e6));
    EXPECT_NEAR(r.forwardedPps, 2e6, 2e6 * 2e-3);
    EXPECT_GT(r.lostPackets, 0u);
    EXPECT_EQ(r.drops.at("input_queue_full"), r.lostPackets);
    EXPECT_EQ(r.bottleneck, "cores");
    EXPECT_EQ(r.sequenceErrors, 0u);
    // A full queue of 256 ahead of each packet: ~256 * 0.5 us of waiting.
    EXPECT_GT(r.latencyMaxUs, 10 + 256 * 0.5);
}

TEST(ForwardingScenario, RunsRepeatIdenticallyInOneProcess)
{
    ForwardingScenarioConfig c = OneCore(3e6);
    c.arrivals = "poisson";
    c.numCores = 3;
    c.scheduling = "untagged";
    c.seed = 7;
    ForwardingScenarioResult a = RunForwardingScenario(c), b = RunForwardingScenario(c);
    EXPECT_EQ(a.rxPackets, b.rxPackets);
    EXPECT_EQ(a.latencyAvgUs, b.latencyAvgUs);
    EXPECT_EQ(a.sequenceErrors, b.sequenceErrors);
    EXPECT_EQ(a.simEvents, b.simEvents);
    c.seed = 8;
    EXPECT_NE(RunForwardingScenario(c).latencyAvgUs, a.latencyAvgUs);
}

TEST(ForwardingScenario, UnroutedFlowsAreDroppedAsNoRoute)
{
    ForwardingScenarioConfig c = OneCore(1e6);
    c.numFlows = 4;
    c.unroutedFlows = 1;
    ForwardingScenarioResult r = RunForwardingScenario(c);
    EXPECT_EQ(r.drops.at("no_route"), r.txPackets / 4);
    EXPECT_EQ(r.rxPackets, r.txPackets - r.txPackets / 4);
}

TEST(ForwardingScenario, EventsAreScheduledPerBatchNotPerPacket)
{
    ForwardingScenarioConfig c = OneCore(1e6);
    c.numCores = 4;
    c.offeredPps = 0; // line rate, 14.88 Mpps
    c.durationSeconds = 0.002;
    ForwardingScenarioResult r = RunForwardingScenario(c);
    ASSERT_GT(r.txPackets, 29000u);
    // 200 tester slices of 10 us, one delivery per slice, plus the flush.
    EXPECT_LT(r.simEvents, 500u);
}

TEST(ForwardingScenario, UnknownKeysAndBadValuesAreRejectedByName)
{
    auto message = [](const std::map<std::string, ConfigValue>& keys) {
        try
        {
            ForwardingScenarioConfig::FromKeys(keys);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message({{"num_core", int64_t{4}}}).find("'num_core'"), std::string::npos);
    EXPECT_NE(message({{"num_cores", 2.5}}).find("'num_cores'"), std::string::npos);
    EXPECT_NE(message({{"scheduling", std::string("fifo")}}).find("'scheduling'"), std::string::npos);
    EXPECT_NE(message({{"counter_prices", std::map<std::string, double>{{"probes", 1.0}}}})
                  .find("'counter_prices'"),
              std::string::npos);
    EXPECT_NE(message({{"offered_pps", 20e6}}).find("'offered_pps'"), std::string::npos);
    ForwardingScenarioConfig ok = ForwardingScenarioConfig::FromKeys(
        {{"num_cores", int64_t{8}}, {"clock_hz", int64_t{1800000000}}, {"scheduling", std::string("atomic")}});
    EXPECT_EQ(ok.numCores, 8u);
    EXPECT_EQ(ok.clockHz, 1.8e9);
}

TEST(ForwardingWorkload, CountersComeFromParseLookupAndTtlRewrite)
{
    ForwardingWorkloadConfig wc;
    wc.cost.fixedCyclesPerPacket = 100;
    wc.cost.SetCounterPrice("table_probes", 7);
    wc.cost.SetCounterPrice("bytes_parsed", 1);
    wc.cost.SetCounterPrice("csum_updates", 11);
    wc.cost.SetCounterPrice("checksum_bytes", 3);
    wc.runCorePerPacket = true;
    ForwardingWorkload w(wc);
    PacketDesc d{};
    d.flow = 3;
    d.frameBytes = 64;
    w.Apply(&d, 1);
    const dp_ops_t ops = w.Ops();
    EXPECT_EQ(ops.packets, 1u);
    EXPECT_EQ(ops.csum_updates, 1u);        // one RFC 1624 TTL update
    EXPECT_EQ(ops.table_probes, 1u);        // a /16 resolves in the first DIR-24-8 level
    EXPECT_EQ(ops.bytes_parsed, 14u + 20u + 8u); // Ethernet + IPv4 + UDP headers
    EXPECT_EQ(ops.checksum_bytes, 20u);     // the verified IPv4 header, no options
    EXPECT_EQ(d.dpDrop, DP_OK);
    // fixed + 7 x 1 probe + 1 x 42 header bytes + 11 x 1 update + 3 x 20 bytes
    EXPECT_EQ(d.serviceCycles, 100u + 7u + 42u + 11u + 60u);
}

TEST(ForwardingWorkload, MemoizedTemplatesGiveTheSameCyclesAsRunningEveryPacket)
{
    ForwardingWorkloadConfig wc;
    wc.cost.fixedCyclesPerPacket = 50;
    wc.cost.SetCounterPrice("checksum_bytes", 0.5);
    wc.cost.SetCounterPrice("table_probes", 20);
    ForwardingWorkloadConfig every = wc;
    every.runCorePerPacket = true;
    ForwardingWorkload memo(wc), run(every);
    std::vector<PacketDesc> a(64), b;
    for (size_t i = 0; i < a.size(); ++i)
    {
        a[i] = PacketDesc{};
        a[i].flow = static_cast<uint32_t>(i % 5);
        a[i].frameBytes = static_cast<uint16_t>(i < 32 ? 64 : 1518);
    }
    b = a;
    memo.Apply(a.data(), a.size());
    run.Apply(b.data(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
    {
        EXPECT_EQ(a[i].serviceCycles, b[i].serviceCycles) << i;
    }
    const dp_ops_t memoOps = memo.Ops(), runOps = run.Ops();
    EXPECT_EQ(std::memcmp(&memoOps, &runOps, sizeof(dp_ops_t)), 0);
    EXPECT_LT(memo.CoreRuns(), run.CoreRuns());
}

} // namespace

namespace
{

struct TraceCounts
{
    uint64_t rx = 0, tx = 0;
    std::map<std::string, uint64_t> drops;
    void Rx(const PacketDesc&) { ++rx; }
    void Tx(const PacketDesc&) { ++tx; }
    void Drop(const PacketDesc&, const char* reason) { ++drops[reason]; }
};

TEST(PipelineDeviceTraces, RxTxAndDropTracesAccountForEveryFrame)
{
    using namespace ns3;
    Simulator::Destroy(); // start from an empty simulator whatever ran before
    TraceCounts counts;
    {
        Ptr<PipelineDevice> dev = CreateObject<PipelineDevice>();
        Ptr<Rfc2544Tester> tester = CreateObject<Rfc2544Tester>();
        dev->SetAttribute("NumCores", UintegerValue(1));
        dev->SetAttribute("FixedCyclesPerPacket", DoubleValue(1000)); // 1 Mpps at 1 GHz
        dev->SetAttribute("InputQueueDepth", UintegerValue(32));
        dev->SetAttribute("FirstUnroutedFlow", UintegerValue(3)); // flow 3 of 4: no route
        tester->SetAttribute("OfferedPps", DoubleValue(2e6));
        tester->SetAttribute("Duration", TimeValue(MilliSeconds(2)));
        tester->SetAttribute("Warmup", TimeValue(MicroSeconds(200)));
        dev->TraceConnectWithoutContext("Rx", MakeCallback(&TraceCounts::Rx, &counts));
        dev->TraceConnectWithoutContext("Tx", MakeCallback(&TraceCounts::Tx, &counts));
        dev->TraceConnectWithoutContext("Drop", MakeCallback(&TraceCounts::Drop, &counts));
        tester->SetTransmitCallback(MakeCallback(&PipelineDevice::Receive, dev));
        tester->SetDoneCallback(MakeCallback(&PipelineDevice::Flush, dev));
        dev->SetDeliverCallback(MakeCallback(&Rfc2544Tester::Receive, tester));
        tester->Start();
        Simulator::Run();
        const TesterResults r = tester->Results();
        EXPECT_EQ(counts.rx, r.txPackets);
        EXPECT_EQ(counts.tx, r.rxPackets);
        EXPECT_GT(counts.drops["input_queue_full"], 0u);
        EXPECT_GT(counts.drops["no_route"], 0u);
        EXPECT_EQ(counts.tx + counts.drops["input_queue_full"] + counts.drops["no_route"], counts.rx);
        EXPECT_EQ(counts.drops["input_queue_full"],
                  dev->Engine()->Counters().drops[static_cast<size_t>(PipelineDrop::kInputQueueFull)]);
        dev->Dispose();
        tester->Dispose();
    }
    ns3::Simulator::Destroy();
}

} // namespace
