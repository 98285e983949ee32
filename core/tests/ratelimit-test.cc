// New-connection token buckets (dp_ratelimit), checked against closed
// forms (burst, long-run count) and against a 128-bit reference model that
// keeps credit without the overflow guards of the C code.
#include "dp_ratelimit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

class Limiter {
public:
    Limiter(uint32_t services, uint32_t tps)
    {
        dp_rl_config_t cfg{services, tps};
        mem_.resize(dp_rl_memory_size(&cfg));
        rl_ = dp_rl_create(mem_.data(), mem_.size(), &cfg);
    }
    dp_rl_t *get() const { return rl_; }

private:
    std::vector<uint8_t> mem_;
    dp_rl_t *rl_ = nullptr;
};

dp_rl_stats_t Stats(const dp_rl_t *rl, uint32_t s)
{
    dp_rl_stats_t st{};
    EXPECT_EQ(dp_rl_get_stats(rl, s, &st), 0);
    return st;
}

// Reference: credit in units of 1/tps token as an unsigned 128-bit number,
// refilled as min(capacity, credit + elapsed * rate) with no care for
// overflow (128 bits cannot overflow here).
struct RefBucket {
    unsigned __int128 credit = 0, cap = 0;
    uint64_t last = 0;
    uint32_t rate = 0, tps = 1;
    bool Admit(uint64_t now)
    {
        if (now > last) {
            unsigned __int128 c = credit + (unsigned __int128)(now - last) * rate;
            credit = c < cap ? c : cap;
            last = now;
        }
        if (credit >= tps) {
            credit -= tps;
            return true;
        }
        return false;
    }
};

} // namespace

TEST(RateLimit, BurstIsExactlyHonoured)
{
    for (uint32_t burst : {1u, 2u, 7u, 1000u}) {
        Limiter l(4, 1000000000u);
        ASSERT_EQ(dp_rl_set(l.get(), 2, 100, burst, 5000, nullptr), 0);
        for (uint32_t i = 0; i < burst; i++)
            ASSERT_EQ(dp_rl_admit(l.get(), 2, 5000, nullptr), 0) << i;
        EXPECT_EQ(dp_rl_admit(l.get(), 2, 5000, nullptr), DP_RL_ELIMITED);
        // One token takes 10 ms at 100/s: 1 ns short is still refused.
        EXPECT_EQ(dp_rl_admit(l.get(), 2, 5000 + 10000000 - 1, nullptr), DP_RL_ELIMITED);
        EXPECT_EQ(dp_rl_admit(l.get(), 2, 5000 + 10000000, nullptr), 0);
        EXPECT_EQ(dp_rl_admit(l.get(), 2, 5000 + 10000000, nullptr), DP_RL_ELIMITED);
        // Idle far longer than a full refill: the bucket holds burst, no more.
        uint64_t later = 5000 + 3600ull * 1000000000u;
        for (uint32_t i = 0; i < burst; i++)
            ASSERT_EQ(dp_rl_admit(l.get(), 2, later, nullptr), 0);
        EXPECT_EQ(dp_rl_admit(l.get(), 2, later, nullptr), DP_RL_ELIMITED);
        dp_rl_stats_t st = Stats(l.get(), 2);
        EXPECT_EQ(st.admitted, 2u * burst + 1);
        EXPECT_EQ(st.refused, 4u);
        EXPECT_EQ(Stats(l.get(), 1).admitted, 0u) << "other services untouched";
    }
}

// Asked at every tick until it refuses, a bucket that starts full admits
// exactly burst + floor(T * rate / tps) over T ticks, as long as it can
// hold what one tick brings on top of a token (burst >= 1 + rate / tps):
// the long-run rate is the configured one, within one token, no drift.
TEST(RateLimit, LongRunCountIsBurstPlusRateTimesTime)
{
    struct Case {
        uint32_t tps, rate, burst;
        uint64_t ticks;
    };
    for (Case c : {Case{1000, 7, 3, 1000000}, Case{1000, 999, 2, 200000}, Case{1000, 1000, 5, 100000}, Case{1000, 3000, 4, 100000},
                   Case{48000, 4093, 17, 3000000}, Case{1, 1, 1, 100000}}) {
        Limiter l(1, c.tps);
        ASSERT_EQ(dp_rl_set(l.get(), 0, c.rate, c.burst, 0, nullptr), 0);
        uint64_t admitted = 0;
        for (uint64_t now = 0; now <= c.ticks; now++)
            while (dp_rl_admit(l.get(), 0, now, nullptr) == 0) // until the bucket says no
                admitted++;
        uint64_t want = c.burst + c.ticks * c.rate / c.tps;
        EXPECT_EQ(admitted, want) << c.tps << " " << c.rate;
    }
}

// A bucket smaller than a token plus one tick's credit loses the excess to
// its cap, as any token bucket sampled at ticks does: burst 1 at 999/s in
// millisecond ticks is full again after 2 ticks and admits one every 2.
TEST(RateLimit, BucketTooSmallForATicksCreditLosesTheExcess)
{
    Limiter l(1, 1000);
    ASSERT_EQ(dp_rl_set(l.get(), 0, 999, 1, 0, nullptr), 0);
    uint64_t admitted = 0;
    for (uint64_t now = 0; now <= 200000; now++)
        while (dp_rl_admit(l.get(), 0, now, nullptr) == 0)
            admitted++;
    EXPECT_EQ(admitted, 1u + 200000u / 2);
}

// Sparse arrivals over a long simulated time (1e14 ns, about 28 hours) from
// a clock near 2^63: arrivals every 0.1 s against 3 tokens/s still get
// exactly burst + floor(T * rate / tps).
TEST(RateLimit, LongRunsFarOutOnTheClockStayExact)
{
    const uint32_t tps = 1000000000u;
    Limiter l(1, tps);
    const uint64_t start = (1ull << 63) + 12345;
    ASSERT_EQ(dp_rl_set(l.get(), 0, 3, 5, start, nullptr), 0);
    uint64_t admitted = 0, now = start;
    for (int i = 0; i < 1000000; i++, now += 100000000u)
        admitted += dp_rl_admit(l.get(), 0, now, nullptr) == 0;
    uint64_t t = now - 100000000u - start;
    EXPECT_EQ(admitted, 5 + t * 3 / tps);
}

// Random services, rates, bursts (up to 2^32-1), clocks (up to 2^31-1
// ticks per second) and gaps (up to 2^64), against the 128-bit reference.
TEST(RateLimit, AgreesWithA128BitModelAtExtremeValues)
{
    std::mt19937_64 rng(2544);
    for (int round = 0; round < 200; round++) {
        uint32_t tps = round % 3 == 0 ? DP_RL_MAX_TICKS_PER_SECOND : uint32_t(1 + rng() % 2000000000u);
        Limiter l(8, tps);
        RefBucket ref[8];
        uint64_t now = rng() >> (rng() % 64);
        for (uint32_t s = 0; s < 8; s++) {
            uint32_t rate = s == 0 ? 0xFFFFFFFFu : uint32_t(1 + rng() % (s < 4 ? 100 : 0xFFFFFFFFu));
            uint32_t burst = s == 1 ? 0xFFFFFFFFu : uint32_t(1 + rng() % (s < 4 ? 10 : 0xFFFFFFFFu));
            ASSERT_EQ(dp_rl_set(l.get(), s, rate, burst, now, nullptr), 0);
            ref[s].cap = (unsigned __int128)burst * tps;
            ref[s].credit = ref[s].cap;
            ref[s].last = now;
            ref[s].rate = rate;
            ref[s].tps = tps;
        }
        for (int i = 0; i < 2000; i++) {
            uint32_t s = uint32_t(rng() % 8);
            uint64_t step = rng() % 4 == 0 ? rng() >> (rng() % 64) : rng() % 1000;
            if (now + step < now)
                break; // the clock is monotonic: stop at the top
            now += step;
            bool want = ref[s].Admit(now);
            ASSERT_EQ(dp_rl_admit(l.get(), s, now, nullptr) == 0, want) << "round " << round << " op " << i;
        }
        for (uint32_t s = 0; s < 8; s++)
            EXPECT_EQ(Stats(l.get(), s).tokens, uint64_t(ref[s].credit / tps));
    }
}

TEST(RateLimit, ClockGoingBackAddsNoCredit)
{
    Limiter l(1, 1000);
    ASSERT_EQ(dp_rl_set(l.get(), 0, 1, 1, 10000, nullptr), 0);
    EXPECT_EQ(dp_rl_admit(l.get(), 0, 10000, nullptr), 0);
    EXPECT_EQ(dp_rl_admit(l.get(), 0, 5000, nullptr), DP_RL_ELIMITED);
    EXPECT_EQ(dp_rl_admit(l.get(), 0, 10999, nullptr), DP_RL_ELIMITED);
    EXPECT_EQ(dp_rl_admit(l.get(), 0, 11000, nullptr), 0) << "the refill runs from 10000, not from 5000";
}

TEST(RateLimit, UnlimitedUntilSetAndAfterClearStillCounting)
{
    Limiter l(2, 1000);
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(dp_rl_admit(l.get(), 1, 0, nullptr), 0);
    ASSERT_EQ(dp_rl_set(l.get(), 1, 1, 1, 0, nullptr), 0);
    EXPECT_EQ(dp_rl_admit(l.get(), 1, 0, nullptr), 0);
    EXPECT_EQ(dp_rl_admit(l.get(), 1, 0, nullptr), DP_RL_ELIMITED);
    ASSERT_EQ(dp_rl_clear(l.get(), 1, nullptr), 0);
    EXPECT_EQ(dp_rl_admit(l.get(), 1, 0, nullptr), 0);
    dp_rl_stats_t st = Stats(l.get(), 1);
    EXPECT_EQ(st.admitted, 102u);
    EXPECT_EQ(st.refused, 1u);
    EXPECT_EQ(st.rate, 0u);
    EXPECT_EQ(st.burst, 0u);
}

TEST(RateLimit, CountsOneProbeLineAndWritePerAdmit)
{
    Limiter l(3, 1000);
    dp_ops_t ops{};
    ASSERT_EQ(dp_rl_set(l.get(), 0, 10, 2, 0, &ops), 0);
    EXPECT_EQ(ops.table_writes, 1u);
    ops = dp_ops_t{};
    for (int i = 0; i < 5; i++)
        dp_rl_admit(l.get(), 0, 0, &ops); // 2 admitted, 3 refused
    dp_rl_admit(l.get(), 2, 0, &ops);      // unlimited
    EXPECT_EQ(ops.table_probes, 6u);
    EXPECT_EQ(ops.cache_lines, 6u);
    EXPECT_EQ(ops.table_writes, 6u);
    EXPECT_EQ(ops.packets + ops.hashes + ops.bytes_written, 0u);
    ops = dp_ops_t{};
    EXPECT_EQ(dp_rl_admit(l.get(), 3, 0, &ops), DP_RL_EINVAL);
    EXPECT_EQ(ops.table_probes, 0u);
}

TEST(RateLimit, RefusesBadConfigsAndArguments)
{
    dp_rl_config_t bad[] = {{0, 1000}, {1, 0}, {1, DP_RL_MAX_TICKS_PER_SECOND + 1u}};
    for (auto &c : bad)
        EXPECT_EQ(dp_rl_memory_size(&c), 0u);
    dp_rl_config_t cfg{4, 1000};
    size_t need = dp_rl_memory_size(&cfg);
    EXPECT_EQ(need, 64u + 4 * 64u);
    std::vector<uint8_t> mem(need);
    EXPECT_EQ(dp_rl_create(mem.data(), need - 1, &cfg), nullptr);
    dp_rl_t *rl = dp_rl_create(mem.data(), need, &cfg);
    ASSERT_NE(rl, nullptr);
    EXPECT_EQ(dp_rl_set(rl, 4, 1, 1, 0, nullptr), DP_RL_EINVAL);
    EXPECT_EQ(dp_rl_set(rl, 0, 0, 1, 0, nullptr), DP_RL_EINVAL);
    EXPECT_EQ(dp_rl_set(rl, 0, 1, 0, 0, nullptr), DP_RL_EINVAL);
    EXPECT_EQ(dp_rl_clear(rl, 4, nullptr), DP_RL_EINVAL);
    dp_rl_stats_t st;
    EXPECT_EQ(dp_rl_get_stats(rl, 4, &st), DP_RL_EINVAL);
}
