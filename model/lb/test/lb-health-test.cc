// Health checks, failover and redispatch in simulated time, checked against
// closed forms: the detection time from the first failing probe (fall
// failures, fastinter between them), the requests the round robin sends to
// a dead server during detection, HAProxy's retries and redispatch
// arithmetic, and RFC 5798's Master_Down_Interval for balancer failover.
#include "lb-failover.h"
#include "lb-health-checker.h"

#include <gtest/gtest.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace routertwin
{
namespace
{

struct ProbeLog
{
    std::vector<std::pair<uint32_t, double>> failures; // (server, end s) of failed probes
    std::vector<std::pair<uint32_t, double>> passes;
    std::vector<std::tuple<uint32_t, bool, double>> changes;
    void OnProbe(uint32_t s, uint32_t r, ns3::Time t)
    {
        (r == DP_HEALTH_PASSED ? passes : failures).emplace_back(s, t.GetSeconds());
    }
    void OnChange(uint32_t s, bool up, ns3::Time t) { changes.emplace_back(s, up, t.GetSeconds()); }
};

// inter 2000, fastinter 500, fall 3; server 1 refuses from 7.3 s. Its
// checks start at the phase offset 2000 * 1 / 3 = 666 ms (the initial
// interval is fastinter 500 < 1000, so the spread is 500: 166 ms) and
// every check's end + interval: the detection time is the first failing
// probe's start minus 7.3 s plus 2 x 500 ms, and inside the closed-form
// window [2 x 500, 2 x 500 + 2000).
// HAProxy never checks a server without `check` and keeps it up; its
// start_checks spreads the first checks over the checked servers only
// (nbcheck and srvpos count CHK_ST_CONFIGURED ones). Server 0 unchecked and
// refusing from 1 s: no probe, no state change; servers 1 and 2 are probed
// first at 500 x 0 / 2 = 0 and 500 x 1 / 2 = 250 ms (not 166 and 333 as
// with three checked servers).
TEST(LbHealthChecker, UncheckedServerIsNeverProbedAndLeavesTheSpread)
{
    ns3::Simulator::Destroy();
    std::vector<ns3::Ptr<LbBackend>> backends;
    for (int i = 0; i < 3; ++i)
    {
        backends.push_back(ns3::CreateObject<LbBackend>());
        backends.back()->SetAttribute("ResponseDelay", ns3::TimeValue(ns3::Time(0)));
    }
    auto checker = ns3::CreateObject<LbHealthChecker>();
    checker->SetAttribute("Inter", ns3::TimeValue(ns3::MilliSeconds(2000)));
    checker->SetAttribute("FastInter", ns3::TimeValue(ns3::MilliSeconds(500)));
    checker->SetServerChecked(0, false);
    checker->Watch(backends, nullptr);
    ProbeLog log;
    checker->TraceConnectWithoutContext("Probe", ns3::MakeCallback(&ProbeLog::OnProbe, &log));
    checker->TraceConnectWithoutContext("StateChange", ns3::MakeCallback(&ProbeLog::OnChange, &log));
    checker->Start(ns3::Seconds(0));
    ns3::Simulator::Schedule(ns3::Seconds(1), &LbBackend::Kill, backends[0], LbBackend::Failure::Refuse);
    ns3::Simulator::Stop(ns3::Seconds(15));
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
    ASSERT_GE(log.passes.size(), 2u);
    EXPECT_EQ(log.passes[0].first, 1u);
    EXPECT_DOUBLE_EQ(log.passes[0].second, 0.0);
    EXPECT_EQ(log.passes[1].first, 2u);
    EXPECT_DOUBLE_EQ(log.passes[1].second, 0.25);
    for (const auto& p : log.passes)
    {
        EXPECT_NE(p.first, 0u);
    }
    EXPECT_TRUE(log.failures.empty());
    EXPECT_TRUE(log.changes.empty());
    EXPECT_TRUE(checker->IsUp(0));
}

TEST(LbHealthChecker, DetectionFollowsFallAndFastinter)
{
    ns3::Simulator::Destroy();
    std::vector<ns3::Ptr<LbBackend>> backends;
    for (int i = 0; i < 3; ++i)
    {
        backends.push_back(ns3::CreateObject<LbBackend>());
        backends.back()->SetAttribute("ResponseDelay", ns3::TimeValue(ns3::Time(0)));
    }
    auto checker = ns3::CreateObject<LbHealthChecker>();
    checker->SetAttribute("Inter", ns3::TimeValue(ns3::MilliSeconds(2000)));
    checker->SetAttribute("FastInter", ns3::TimeValue(ns3::MilliSeconds(500)));
    checker->SetAttribute("Fall", ns3::UintegerValue(3));
    checker->Watch(backends, nullptr);
    ProbeLog log;
    checker->TraceConnectWithoutContext("Probe", ns3::MakeCallback(&ProbeLog::OnProbe, &log));
    checker->TraceConnectWithoutContext("StateChange", ns3::MakeCallback(&ProbeLog::OnChange, &log));
    checker->Start(ns3::Seconds(0));
    ns3::Simulator::Schedule(ns3::MilliSeconds(7300), &LbBackend::Kill, backends[1], LbBackend::Failure::Refuse);
    ns3::Simulator::Stop(ns3::Seconds(15));
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
    // First probes: 0, 166, 333 ms (500 * p / 3).
    ASSERT_GE(log.passes.size(), 3u);
    EXPECT_DOUBLE_EQ(log.passes[0].second, 0.0);
    EXPECT_DOUBLE_EQ(log.passes[1].second, 0.166);
    EXPECT_DOUBLE_EQ(log.passes[2].second, 0.333);
    double firstFail = -1;
    for (auto& f : log.failures)
    {
        if (f.first == 1)
        {
            firstFail = f.second;
            break;
        }
    }
    ASSERT_GT(firstFail, 7.3);
    // Server 1's probes: 0.166, then every 2 s after the first (full health
    // after one pass): 2.166, 4.166, 6.166, 8.166: the first failing one.
    EXPECT_DOUBLE_EQ(firstFail, 8.166);
    ASSERT_EQ(log.changes.size(), 1u);
    EXPECT_EQ(std::get<0>(log.changes[0]), 1u);
    EXPECT_FALSE(std::get<1>(log.changes[0]));
    const double down = std::get<2>(log.changes[0]);
    EXPECT_NEAR(down, firstFail + 2 * 0.5, 1e-9);
    const double detectionMs = (down - 7.3) * 1000;
    EXPECT_GE(detectionMs, 1000.0);
    EXPECT_LT(detectionMs, 3000.0);
    EXPECT_FALSE(checker->IsUp(1));
    EXPECT_TRUE(checker->IsUp(0));
}

LbFailoverConfig
Base()
{
    LbFailoverConfig c;
    c.servers = 3;
    c.interMs = {2000};
    c.fastInterMs = {500};
    c.fall = {3};
    c.killServer = 1;
    c.killAtS = 7.3;
    c.requestRate = 300;
    c.durationS = 14;
    c.retries = 3;
    c.connectTimeoutMs = 5000;
    return c;
}

// The round robin sends every third request to server 1 until the checks
// take it out (8.166 + 1.0 s, from the test above): requests 7.3 s .. 9.166
// s at 300/s = 560 requests, 186 or 187 of them to server 1. Without
// redispatch every retry goes back to the dead server: all of those fail;
// with it (round robin, more than one server up: HAProxy 2.6's
// stream_choose_redispatch), the first retry is redispatched at once,
// avoiding server 1, and all are served.
TEST(LbFailover, RedispatchSavesRequestsFailedDuringDetection)
{
    LbFailoverConfig c = Base();
    LbFailoverResult without = RunLbFailover(c);
    EXPECT_NEAR(without.detectionMs, 1866.0, 1e-6);
    EXPECT_EQ(without.windowMinMs, 1000.0);
    EXPECT_EQ(without.windowMaxMs, 3000.0);
    const double toDead = 1.866 * 300 / 3;
    EXPECT_NEAR(double(without.toDeadServer), toDead, 1.0);
    EXPECT_EQ(without.failed, without.toDeadServer);
    EXPECT_EQ(without.retried, without.toDeadServer);
    EXPECT_EQ(without.redispatched, 0u);
    EXPECT_EQ(without.served + without.failed, without.requests);
    EXPECT_EQ(without.requests, uint64_t(14 * 300));

    c.redispatch = true;
    LbFailoverResult with = RunLbFailover(c);
    // Each redispatch takes server 2's turn, so the round robin comes back
    // to server 1 every other request, as Debian's haproxy 2.6.12 deals
    // them with a refusing server ("0 2 0 2 0 2 0 2 0",
    // HaproxyRecorded.RedispatchAvoidsTheFailedServer): half the requests
    // of the detection time meet it first.
    EXPECT_NEAR(double(with.toDeadServer), 1.866 * 300 / 2, 1.0);
    EXPECT_EQ(with.failed, 0u);
    EXPECT_EQ(with.redispatched, with.toDeadServer);
    EXPECT_EQ(with.served, with.requests);

    // retries 0: nothing to redispatch, every request to the dead server fails.
    c.retries = 0;
    LbFailoverResult none = RunLbFailover(c);
    EXPECT_EQ(none.failed, none.toDeadServer);
    EXPECT_EQ(none.retried, 0u);
}

// A silent server (host gone): each probe fails after the timeout, so the
// detection grows by fall x timeout: probes start 8.166, then end + 500
// after each 2 s timeout: down at 8.166 + 3 x 2 + 2 x 0.5 = 15.166 s.
TEST(LbFailover, SilentServerDetectionAddsTheTimeouts)
{
    LbFailoverConfig c = Base();
    c.killMode = "silent";
    c.durationS = 20;
    LbFailoverResult r = RunLbFailover(c);
    EXPECT_NEAR(r.detectionMs, 15166.0 - 7300.0, 1e-6);
    EXPECT_EQ(r.windowMinMs, 3 * 2000.0 + 2 * 500.0);
    EXPECT_GE(r.detectionMs, r.windowMinMs);
    EXPECT_LT(r.detectionMs, r.windowMaxMs);
}

// Revival: down probes every downinter; the first passing probe after the
// revival, then rise - 1 more at fastinter, bring it back.
TEST(LbFailover, RevivedServerRejoinsAfterRisePasses)
{
    LbFailoverConfig c = Base();
    c.downInterMs = {3000};
    c.rise = {2};
    c.reviveAtS = 12.0;
    c.durationS = 20;
    LbFailoverResult r = RunLbFailover(c);
    // Down at 9.166; down probes at 12.166 (passes: revived at 12.0), then
    // fastinter: 12.666 passes again: up (rise 2).
    EXPECT_NEAR(r.downAtS, 9.166, 1e-9);
    EXPECT_NEAR(r.upAtS, 12.666, 1e-9);
}

// RFC 5798 6.1: Master_Down_Interval = 3 x 1000 + (256 - 100) x 1000 / 256
// = 3609.375 ms after the last advertisement (10.0 s; the master dies at
// 10.255 s): failover 3354.375 ms; requests at 100/s after 10.255 s and
// before 13.609375 s (1026 .. 1360) are lost: 335 in active/backup, the
// 168 even ones (hashed to the dead balancer) in active/active.
TEST(LbFailover, BackupBalancerTakesOverAfterMasterDownInterval)
{
    LbFailoverConfig c = Base();
    c.killAtS = 30; // no server failure in this run
    c.durationS = 20;
    c.requestRate = 100;
    c.redundancy = "active_backup";
    c.advertIntervalMs = 1000;
    c.backupPriority = 100;
    c.balancerFailAtS = 10.255;
    LbFailoverResult r = RunLbFailover(c);
    EXPECT_DOUBLE_EQ(r.masterDownIntervalMs, 3609.375);
    EXPECT_NEAR(r.failoverMs, 3354.375, 1e-6);
    EXPECT_EQ(r.lostInFailover, 335u);
    EXPECT_EQ(r.served + r.lostInFailover, r.requests);
    EXPECT_EQ(r.detectionMs, -1.0); // the kill at 30 s is after the traffic: no server died
    EXPECT_EQ(r.toDeadServer, 0u);
    c.redundancy = "active_active";
    LbFailoverResult aa = RunLbFailover(c);
    EXPECT_NEAR(aa.failoverMs, 3354.375, 1e-6);
    EXPECT_EQ(aa.lostInFailover, 168u);
}

// Sticky clients: 30 clients over 3 servers (round robin: 10 each). Only
// the 10 clients stored on the dead server move, once it is DOWN; before
// that their requests keep going to it. Stick table and cookie agree.
TEST(LbFailover, OnlyTheDeadServersStickyClientsMove)
{
    for (const char* how : {"stick_src", "cookie"})
    {
        LbFailoverConfig c = Base();
        c.persistence = how;
        c.clients = 30;
        c.redispatch = false;
        LbFailoverResult r = RunLbFailover(c);
        EXPECT_EQ(r.stickyClientsMoved, 10u) << how;
        EXPECT_EQ(r.stickyMoved, 10u) << how;
        // From 7.3 s to the DOWN mark at 9.166 s every request of those 10
        // clients goes to the dead server: a third of them, and all fail.
        EXPECT_NEAR(double(r.toDeadServer), 1.866 * 300 / 3, 1.0) << how;
        EXPECT_EQ(r.failed, r.toDeadServer) << how;
    }
}

TEST(LbFailover, RejectsUnknownKeysAndBadValuesByName)
{
    auto expectBad = [](std::map<std::string, ConfigValue> keys, const std::string& key) {
        try
        {
            LbFailoverConfig::FromKeys(keys);
            ADD_FAILURE() << "accepted " << key;
        }
        catch (const std::invalid_argument& e)
        {
            EXPECT_EQ(std::string(e.what()).rfind("key '" + key + "'", 0), 0u) << e.what();
        }
    };
    expectBad({{"fastinterr_ms", int64_t(5)}}, "fastinterr_ms");
    expectBad({{"fall", int64_t(0)}}, "fall");
    expectBad({{"kill_mode", std::string("explode")}}, "kill_mode");
    expectBad({{"servers", int64_t(2)}, {"kill_server", int64_t(2)}}, "kill_server");
    expectBad({{"balancer_fail_at_s", 3.0}}, "balancer_fail_at_s");
    expectBad({{"scheduler", std::string("nope")}}, "scheduler");
    expectBad({{"persistence", std::string("cookie")}}, "clients");
    expectBad({{"servers", int64_t(3)}, {"weights", std::string("3,2")}}, "weights");
    expectBad({{"inter_ms", std::string("1000,x")}}, "inter_ms");
    expectBad({{"weights", std::string("1,300")}}, "weights");
    LbFailoverConfig per = LbFailoverConfig::FromKeys(
        {{"servers", int64_t(3)}, {"weights", std::string("3,2,1")}, {"fall", std::string("2, 3,4")}});
    EXPECT_EQ(LbFailoverConfig::Of(per.weights, 0), 3u);
    EXPECT_EQ(LbFailoverConfig::Of(per.fall, 2), 4u);
    LbFailoverConfig ok = LbFailoverConfig::FromKeys({{"redispatch", true}, {"retries", int64_t(2)}});
    EXPECT_TRUE(ok.redispatch);
    EXPECT_EQ(ok.retries, 2u);
}

} // namespace
} // namespace routertwin
