// The timed pool (lb-timed.h) on traces worked by hand from HAProxy 2.6's
// queue rules, and a drain against the exponential closed form.
#include "lb-timed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace routertwin
{
namespace
{

using Keys = std::map<std::string, ConfigValue>;

ConfigValue
Int(int64_t v)
{
    return ConfigValue(v);
}

ConfigValue
Num(double v)
{
    return ConfigValue(v);
}

ConfigValue
Str(const char* v)
{
    return ConfigValue(std::string(v));
}

/// 10 requests 10 ms apart, each held 500 ms, on 2 servers of maxconn 2.
LbTimedResult
Burst(Keys keys)
{
    std::map<std::string, double> at, hold;
    for (int k = 0; k < 10; ++k)
    {
        at[std::to_string(k)] = 0.010 * k;
        hold[std::to_string(k)] = 500;
    }
    keys.insert({{"servers", Int(2)},
                 {"maxconn", ConfigValue(std::map<std::string, double>{{"0", 2}, {"1", 2}})},
                 {"action", Str("none")},
                 {"warmup_s", Num(0)},
                 {"at_s", Num(0)},
                 {"settle_s", Num(0)},
                 {"end_s", Num(5)},
                 {"clients", Int(1)},
                 {"arrivals_s", ConfigValue(at)},
                 {"lifetimes_ms", ConfigValue(hold)}});
    return RunLbTimed(LbTimedConfig::FromKeys(keys));
}

// Requests 0-3 take the 4 slots; 4-7 wait in the backend queue and get the
// slots freed at 500, 510, 520, 530 ms (460 ms each); 8 and 9 would wait
// until 1000 ms: timeout queue 700 ms gives them a 503 at 780 and 790 ms.
TEST(LbTimed, BackendQueueTimesOutTheLastTwo)
{
    const LbTimedResult r = Burst({{"scheduler", Str("roundrobin")}, {"timeout_queue_ms", Int(700)}});
    EXPECT_EQ(r.requests, 10u);
    EXPECT_EQ(r.served, 8u);
    EXPECT_EQ(r.queued, 6u);
    EXPECT_EQ(r.queueTimeouts, 2u);
    EXPECT_EQ(r.backendQueueMax, 6u);
    EXPECT_EQ(r.serverQueueMax, 0u);
    EXPECT_NEAR(r.queueWaitMeanMs, 460.0, 1e-6);
    // the four waits, 460 ms each, in the histogram (its percentiles: WaitsOfASingleServerQueue)
    EXPECT_EQ(r.queueWait.Count(), 4.0);
    // the two 503s at 780 and 790 ms: bin 9 of 60 bins of 83.3 ms, reason queue_timeout
    EXPECT_EQ(r.refusals.Reasons()[0], "queue_timeout");
    EXPECT_EQ(r.refusals.At(0, 9, 0), 2.0);
    EXPECT_EQ(r.refusals.Total(), 2.0);
}

/// A trace on `servers` servers of maxconn 1 each, no action, to end_s 5:
/// request k arrives at at[k] s and holds its connection hold[k] ms.
LbTimedResult
Trace(const std::vector<double>& at, const std::vector<double>& hold, uint32_t servers, Keys keys)
{
    std::map<std::string, double> arrivals, lifetimes, maxconn;
    for (size_t k = 0; k < at.size(); ++k)
    {
        arrivals[std::to_string(k)] = at[k];
        lifetimes[std::to_string(k)] = hold[k];
    }
    for (uint32_t i = 0; i < servers; ++i)
    {
        maxconn[std::to_string(i)] = 1;
    }
    keys.insert({{"servers", Int(servers)},
                 {"maxconn", ConfigValue(maxconn)},
                 {"action", Str("none")},
                 {"warmup_s", Num(0)},
                 {"at_s", Num(0)},
                 {"settle_s", Num(0)},
                 {"end_s", Num(5)},
                 {"arrivals_s", ConfigValue(arrivals)},
                 {"lifetimes_ms", ConfigValue(lifetimes)}});
    return RunLbTimed(LbTimedConfig::FromKeys(keys));
}

// One server of maxconn 1, requests 100 ms apart holding 500 ms each: request
// k > 0 gets the slot at 500 k ms, after waiting 400 k ms: 400, 800, 1200,
// 1600 ms. Type-1 quantiles of those four: q 0.25 -> 400, 0.5 -> 800,
// 0.75 -> 1200, 0.99 -> 1600 ms, each read within one histogram bin.
TEST(LbTimed, WaitsOfASingleServerQueue)
{
    const LbTimedResult r = Trace({0, 0.1, 0.2, 0.3, 0.4}, {500, 500, 500, 500, 500}, 1, {});
    EXPECT_EQ(r.served, 5u);
    EXPECT_EQ(r.queued, 4u);
    EXPECT_EQ(r.queueWait.Count(), 4.0);
    EXPECT_NEAR(r.queueWaitMeanMs, 1000.0, 1e-6);
    EXPECT_NEAR(r.queueWait.Min(), 0.4, 1e-9);
    EXPECT_NEAR(r.queueWait.Max(), 1.6, 1e-9);
    for (const auto& [q, exact] : std::vector<std::pair<double, double>>{{0.25, 0.4}, {0.5, 0.8}, {0.75, 1.2}, {0.99, 1.6}})
    {
        EXPECT_NEAR(r.queueWait.Quantile(q), exact, LatencyHistogram::BinWidthAt(exact)) << "q " << q;
    }
}

// A connection end and a queue timeout (600 ms) on the same instant: the end
// comes first and its slot serves the request, however the engine's close
// event was last scheduled. Two servers of maxconn 1.
// A: requests at 0, 100, 150, 200 ms holding 250, 700, 1000, 100 ms: 0 and
//    1 take the servers, 2 and 3 queue; 0 ends at 250 ms and its server takes
//    2 (waited 100 ms); 1 ends at 800 ms, when 3's timeout expires: 3 gets the
//    slot after 600 ms.
// B: requests at 0, 100, 200 ms holding 1000, 700, 100 ms: 2 queues, and 1's
//    end at 800 ms meets its timeout: served after 600 ms.
TEST(LbTimed, ConnectionEndBeatsQueueTimeoutAtTheSameInstant)
{
    const Keys keys{{"scheduler", Str("roundrobin")}, {"timeout_queue_ms", Int(600)}};
    const LbTimedResult a = Trace({0, 0.1, 0.15, 0.2}, {250, 700, 1000, 100}, 2, keys);
    EXPECT_EQ(a.served, 4u);
    EXPECT_EQ(a.queued, 2u);
    EXPECT_EQ(a.queueTimeouts, 0u);
    EXPECT_NEAR(a.queueWaitMeanMs, (100.0 + 600.0) / 2, 1e-6);
    const LbTimedResult b = Trace({0, 0.1, 0.2}, {1000, 700, 100}, 2, keys);
    EXPECT_EQ(b.served, 3u);
    EXPECT_EQ(b.queued, 1u);
    EXPECT_EQ(b.queueTimeouts, 0u);
    EXPECT_NEAR(b.queueWaitMeanMs, 600.0, 1e-6);
}

// Drain with redispatch, frontend limit 3 and an accept queue of 1, one server
// of maxconn 1: request 0 (0 s, 2000 ms) holds it, 1 and 2 (cookie 0) queue on
// it, 3 (cookie 0, 0.3 s, 500 ms) waits in the accept queue. At the drain
// (1 s) 1 and 2 go back to the balancer and get a 503 (no usable server),
// which frees two frontend places; 3 is accepted only after them, so the
// server holds N0 = 1 (its connection) when the drain starts. 3 follows its
// cookie to the draining server, queues, gets the slot at 2 s and ends at
// 2.5 s: the drain takes 1.5 s.
TEST(LbTimed, DrainRedistributesBeforeTheAcceptQueueResumes)
{
    const LbTimedResult r = Trace(
        {0, 0.1, 0.2, 0.3}, {2000, 100, 100, 500}, 1,
        {{"action", Str("drain")},
         {"server", Int(0)},
         {"at_s", Num(1)},
         {"redispatch", ConfigValue(true)},
         {"frontend_maxconn", Int(3)},
         {"accept_queue", Int(1)},
         {"cookies", ConfigValue(std::map<std::string, double>{{"0", -1}, {"1", 0}, {"2", 0}, {"3", 0}})}});
    EXPECT_EQ(r.refusedNoServer, 2u);
    EXPECT_EQ(r.refusedFrontend, 0u);
    EXPECT_EQ(r.served, 2u);
    EXPECT_EQ(r.queued, 3u);
    EXPECT_EQ(r.n0, 1u);
    EXPECT_EQ(r.drainingNew, 1u);
    EXPECT_NEAR(r.drainS, 1.5, 1e-9);
}

// balance source with one client: every request hashes to one server, which
// queues up to maxqueue 3 on itself; the other 5 get a 503 at once.
TEST(LbTimed, MaxqueueRefusesAHashedRequest)
{
    const LbTimedResult r = Burst({{"scheduler", Str("source")},
                                   {"maxqueue", ConfigValue(std::map<std::string, double>{{"0", 3}, {"1", 3}})},
                                   {"timeout_queue_ms", Int(2000)}});
    EXPECT_EQ(r.served, 5u);
    EXPECT_EQ(r.queued, 3u);
    EXPECT_EQ(r.refusedMaxqueue, 5u);
    EXPECT_EQ(r.serverQueueMax, 3u);
    EXPECT_EQ(r.backendQueueMax, 0u);
    // requests 5-9 refused at 50-90 ms: four in the first 83.3 ms bin, one in the second
    EXPECT_EQ(r.refusals.Reasons()[1], "maxqueue_full");
    EXPECT_EQ(r.refusals.At(0, 0, 1), 4.0);
    EXPECT_EQ(r.refusals.At(0, 1, 1), 1.0);
}

// Exponential lifetimes: the drained server's N0 connections end at rate mu
// each, the last H_N0 / mu later on average (variance sum 1 / (k mu)^2).
TEST(LbTimed, DrainTakesTheHarmonicNumberOfMeanLifetimes)
{
    double diff = 0, var = 0;
    const int runs = 60;
    for (int seed = 1; seed <= runs; ++seed)
    {
        const LbTimedResult r = RunLbTimed(LbTimedConfig::FromKeys(
            {{"scheduler", Str("leastconn")}, {"servers", Int(4)}, {"rate", Num(100)},
             {"lifetime_mean_ms", Num(1000)}, {"warmup_s", Num(10)}, {"at_s", Num(20)}, {"settle_s", Num(5)},
             {"end_s", Num(40)}, {"action", Str("drain")}, {"server", Int(1)}, {"seed", Int(seed)}}));
        ASSERT_GE(r.drainS, 0);
        ASSERT_EQ(r.drainingNew, 0u);
        double h = 0;
        for (uint32_t k = 1; k <= r.n0; ++k)
        {
            h += 1.0 / k;
            var += 1.0 / (double(k) * k);
        }
        diff += r.drainS - h;
    }
    EXPECT_LT(std::fabs(diff / runs), 4 * std::sqrt(var) / runs);
}

/// The message FromKeys throws for keys ("" when it accepts them).
std::string
Refusal(const Keys& keys)
{
    try
    {
        LbTimedConfig::FromKeys(keys);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    return "";
}

TEST(LbTimed, BadKeysNameTheKey)
{
    EXPECT_EQ(Refusal({{"action", Str("explode")}}).rfind("key 'action': ", 0), 0u);
    EXPECT_EQ(Refusal({{"servers", Int(2)}, {"server", Int(2)}}).rfind("key 'server': ", 0), 0u);
    // cookie persistence without a client count: blamed on the count
    EXPECT_EQ(Refusal({{"persistence", Str("cookie")}}).rfind("key 'clients': ", 0), 0u);
    // a trace gives every request: no initial connections beside it
    EXPECT_EQ(Refusal({{"initial_connections", Int(3)},
                       {"arrivals_s", ConfigValue(std::map<std::string, double>{{"0", 0.5}})},
                       {"lifetimes_ms", ConfigValue(std::map<std::string, double>{{"0", 100}})}})
                  .rfind("key 'initial_connections': ", 0),
              0u);
}

} // namespace
} // namespace routertwin
