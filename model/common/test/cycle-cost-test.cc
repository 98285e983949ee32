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
