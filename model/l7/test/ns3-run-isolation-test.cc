// A run gives the same result whatever ran before it in the process: ns-3's
// globals (attribute defaults, RngSeed and RngRun, the next automatic
// random stream, the next MAC address) outlive Simulator::Destroy, and the
// redundant pair's CSMA backoff and ARP jitter draw random numbers. Each
// test's first run is the process's first ns-3 run (ctest runs every test
// in its own process); the second follows globals left as another kind of
// run leaves them (a tcp_path run's TCP settings, streams and MACs taken).
#include "redundant-pair-testbed.h"
#include "web-switch-profile.h"

#include <ns3/boolean.h>
#include <ns3/config.h>
#include <ns3/global-value.h>
#include <ns3/mac48-address.h>
#include <ns3/nstime.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/tcp-cubic.h>
#include <ns3/type-id.h>
#include <ns3/uinteger.h>

#include <gtest/gtest.h>

#include <string>

using namespace routertwin;

namespace
{
/// What a run of another kind leaves behind in ns-3's globals.
void
LeaveGlobalsAsAnotherRunDoes()
{
    for (int i = 0; i < 1001; ++i)
        ns3::RngSeedManager::GetNextStreamIndex();
    for (int i = 0; i < 37; ++i)
        ns3::Mac48Address::Allocate();
    ns3::RngSeedManager::SetSeed(7);
    ns3::RngSeedManager::SetRun(3);
    ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(false));
    ns3::Config::SetDefault("ns3::TcpSocket::SegmentSize", ns3::UintegerValue(1448));
    ns3::Config::SetDefault("ns3::TcpSocket::DelAckCount", ns3::UintegerValue(1));
    ns3::Config::SetDefault("ns3::TcpSocketBase::MinRto", ns3::TimeValue(ns3::MilliSeconds(200)));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Timestamp", ns3::BooleanValue(false));
    ns3::Config::SetDefault("ns3::TcpL4Protocol::SocketType", ns3::TypeIdValue(ns3::TcpCubic::GetTypeId()));
}

void
ExpectSame(const RedundantPairRunResult& a, const RedundantPairRunResult& b)
{
    EXPECT_EQ(a.takeoverS, b.takeoverS);
    EXPECT_EQ(a.masterDownIntervalS, b.masterDownIntervalS);
    EXPECT_EQ(a.closedFormTakeoverS, b.closedFormTakeoverS);
    EXPECT_EQ(a.requestsPerSBefore, b.requestsPerSBefore);
    EXPECT_EQ(a.requestsPerSAfter, b.requestsPerSAfter);
    EXPECT_EQ(a.openAtDeath, b.openAtDeath);
    EXPECT_EQ(a.survived, b.survived);
    EXPECT_EQ(a.lost, b.lost);
    EXPECT_EQ(a.survivorResets, b.survivorResets);
    EXPECT_EQ(a.syncSent, b.syncSent);
    EXPECT_EQ(a.spliceMirrors, b.spliceMirrors);
    EXPECT_EQ(a.survivorNoSession, b.survivorNoSession);
    EXPECT_EQ(a.answersPerBin, b.answersPerBin);
    EXPECT_EQ(a.survivorResetsPerBin, b.survivorResetsPerBin);
    EXPECT_EQ(a.failedPerBin, b.failedPerBin);
    EXPECT_EQ(a.answers, b.answers);
    EXPECT_EQ(a.failedRequests, b.failedRequests);
}
} // namespace

// An L7 active/active pair on a 100 Mbit/s client segment: closed-loop
// threads and two downloads share the CSMA channel (backoff draws), and
// the client's and servers' ARP requests are jittered.
TEST(Ns3RunIsolation, ARedundantPairRunIsTheSameAfterAnotherRunsGlobals)
{
    RedundantPairRunConfig c;
    c.pair.profile = LoadWebSwitchProfile(std::string(RT_SOURCE_DIR) + "/scenarios/platforms/nctu-f5-bigip-ha.yaml");
    // at a hundredth of F5's clock: a few hundred answers a second
    c.pair.profile.clockHz /= 100;
    c.pair.activeActive = true;
    c.pair.advertisementInterval = ns3::Seconds(0.1);
    c.killAtS = 1.2;
    c.windowS = 0.3;
    c.loadStartS = 0.5;
    c.settleS = 0.2;
    c.threadsPerVip = 2;
    c.downloads = 2;
    c.downloadStartS = 1.0;
    c.downloadBytes = 500000;
    const RedundantPairRunResult first = RunRedundantPair(c);
    EXPECT_GT(first.requestsPerSBefore, 0);
    EXPECT_GT(first.takeoverS, 0);
    LeaveGlobalsAsAnotherRunDoes();
    ExpectSame(RunRedundantPair(c), first);
}
