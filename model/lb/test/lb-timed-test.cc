// The timed pool (lb-timed.h) on traces worked by hand from HAProxy 2.6's
// queue rules, and a drain against the exponential closed form.
#include "lb-timed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

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

TEST(LbTimed, BadKeysNameTheKey)
{
    EXPECT_THROW(LbTimedConfig::FromKeys({{"action", Str("explode")}}), std::invalid_argument);
    EXPECT_THROW(LbTimedConfig::FromKeys({{"servers", Int(2)}, {"server", Int(2)}}), std::invalid_argument);
    EXPECT_THROW(LbTimedConfig::FromKeys({{"persistence", Str("cookie")}}), std::invalid_argument);
}

} // namespace
} // namespace routertwin
