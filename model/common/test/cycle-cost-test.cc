#include "cycle-cost.h"

#include <gtest/gtest.h>

#include <stdexcept>

using routertwin::CycleCost;

TEST(CycleCost, SumsFixedPerByteAndPricedCounters)
{
    CycleCost cost;
    cost.clockHz = 1.5e9;
    cost.fixedCyclesPerPacket = 100;
    cost.cyclesPerFrameByte = 0.5;
    cost.SetCounterPrice("table_probes", 20);
    cost.SetCounterPrice("bytes_parsed", 1);
    dp_ops_t ops{};
    ops.table_probes = 2;
    ops.bytes_parsed = 34;
    // 100 + 0.5*64 + 20*2 + 1*34 = 206 cycles; at 1.5 GHz = 137.33 ns.
    EXPECT_DOUBLE_EQ(cost.Cycles(ops, 64), 206.0);
    EXPECT_DOUBLE_EQ(cost.Seconds(ops, 64), 206.0 / 1.5e9);
    // work that is not a packet: 20*2 + 1*34 = 74, no fixed or per-byte part
    EXPECT_DOUBLE_EQ(cost.CounterCycles(ops), 74.0);
}

TEST(CycleCost, RejectsUnknownCounterName)
{
    CycleCost cost;
    EXPECT_THROW(cost.SetCounterPrice("table_probe", 1), std::invalid_argument);
}

// Each price applies to the counter of its name: for every counter alone,
// the priced cycles are price x the value dp_ops_counter (the C core's own
// accessor) reads for that name.
TEST(CycleCost, EachPriceReadsTheCounterOfItsName)
{
    dp_ops_t ops{};
    uint64_t* field = &ops.packets;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        field[i] = 1000u + 37u * i; // distinct values
    }
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        CycleCost cost;
        cost.SetCounterPrice(dp_ops_counter_name(i), 3);
        EXPECT_EQ(cost.CounterCycles(ops), 3.0 * static_cast<double>(dp_ops_counter(&ops, i)))
            << dp_ops_counter_name(i);
    }
}

// Counters without a price are skipped; the result is bit for bit the
// plain sum of every term in counter order (prices with many significant
// bits, so that the order of the additions shows in the last bits).
TEST(CycleCost, SkippingUnpricedCountersKeepsTheSumBitIdentical)
{
    dp_ops_t ops{};
    uint64_t* field = &ops.packets;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        field[i] = 7u + 1234567u * i;
    }
    CycleCost cost;
    cost.fixedCyclesPerPacket = 124.3123456789;
    cost.cyclesPerFrameByte = 0.1;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; i += 2)
    {
        cost.SetCounterPrice(dp_ops_counter_name(i), 1.0 / (3.0 + i));
    }
    double plain = cost.fixedCyclesPerPacket + cost.cyclesPerFrameByte * 118;
    double plainCounters = 0;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        plain += cost.perCounter[i] * static_cast<double>(dp_ops_counter(&ops, i));
        plainCounters += cost.perCounter[i] * static_cast<double>(dp_ops_counter(&ops, i));
    }
    EXPECT_EQ(cost.Cycles(ops, 118), plain);
    EXPECT_EQ(cost.CounterCycles(ops), plainCounters);
}
