#include "fabric-crossbar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace routertwin;

namespace
{
FabricConfig
Fifo(unsigned n, uint64_t seed = 7)
{
    FabricConfig c;
    c.ports = n;
    c.queueing = FabricQueueing::Fifo;
    c.scheduler = FabricScheduler::FifoRandom;
    // Saturation: every input always has a head-of-line cell with an i.i.d.
    // uniform destination; a small buffer keeps memory bounded.
    c.inputBufferCells = 4;
    c.seed = seed;
    return c;
}

// Tolerance: four batch-means standard errors plus a floor for the
// finite-run bias of the batch estimate.
double
Tol(const UniformRunResult& r)
{
    return 4.0 * r.throughputStdErr + 0.002;
}
} // namespace

// Karol, Hluchyj, Morgan (1987), table I: saturation throughput of FIFO input
// queueing with random contention resolution, exact for N = 2: 0.75.
TEST(FifoInputQueueing, SaturationThroughputTwoPortsIsThreeQuarters)
{
    UniformRunResult r = RunUniformBernoulli(Fifo(2), 1.0, 2000, 400000);
    EXPECT_NEAR(r.throughput, 0.75, Tol(r));
}

TEST(FifoInputQueueing, SaturationThroughputEightPortsMatchesKarol)
{
    UniformRunResult r = RunUniformBernoulli(Fifo(8), 1.0, 2000, 200000);
    EXPECT_NEAR(r.throughput, 0.6184, Tol(r));
}

// Large N: 2 - sqrt(2) = 0.5858. At N = 256 the finite-size excess is below
// 0.002 (Karol's table converges as about 0.3/N).
TEST(FifoInputQueueing, SaturationThroughputLargeNApproachesTwoMinusRootTwo)
{
    UniformRunResult r = RunUniformBernoulli(Fifo(256), 1.0, 1000, 40000);
    EXPECT_NEAR(r.throughput, 2.0 - std::sqrt(2.0), Tol(r) + 0.002);
}

TEST(FifoInputQueueing, ThirtyTwoPortsSaturateNearPointFiveNine)
{
    UniformRunResult r = RunUniformBernoulli(Fifo(32), 1.0, 2000, 100000);
    EXPECT_GT(r.throughput, 2.0 - std::sqrt(2.0));
    EXPECT_NEAR(r.throughput, 0.59, 0.01);
}

TEST(FifoInputQueueing, OfferedLoadAboveSaturationIsNotCarried)
{
    FabricConfig c = Fifo(32);
    c.inputBufferCells = 0; // unbounded: the backlog must grow
    UniformRunResult r = RunUniformBernoulli(c, 0.7, 2000, 40000);
    EXPECT_LT(r.throughput, 0.62);
    EXPECT_GT(r.backlogEnd, r.backlogStart * 1.5);
}

// Every cell offered at full load either enters or is refused, and an input
// carries what its head of line lets out (3/4 a slot for 2 ports): the
// refused cells of each input are the rest, and the timeline's inputs add
// up to the fabric's own count.
TEST(FifoInputQueueing, RefusedCellsAreCountedPerInputAndOverTime)
{
    UniformRunResult r = RunUniformBernoulli(Fifo(2), 1.0, 2000, 40000);
    ASSERT_GT(r.inputDrops, 0u);
    EXPECT_EQ(r.drops.Total(), static_cast<double>(r.inputDrops));
    EXPECT_EQ(r.drops.Ports(), 2u);
    EXPECT_EQ(r.drops.Bins(), kFabricDropBins);
    for (unsigned i = 0; i < 2; ++i)
    {
        double perInput = 0;
        for (unsigned b = 0; b < r.drops.Bins(); ++b)
        {
            EXPECT_GT(r.drops.At(i, b), 0.0) << "input " << i << " bin " << b;
            perInput += r.drops.At(i, b);
        }
        EXPECT_NEAR(perInput / 40000.0, 0.25, 0.02) << "input " << i;
    }
}

// The delay histogram holds one entry per departed cell: its mean is the
// mean delay, its percentiles whole slots in order.
TEST(VoqIslip, DelayHistogramHoldsEveryDepartedCell)
{
    FabricConfig c;
    c.ports = 8;
    UniformRunResult r = RunUniformBernoulli(c, 0.8, 2000, 40000);
    EXPECT_NEAR(r.delaySlots.Seconds(), r.throughput * 8 * 40000, 1e-6);
    EXPECT_DOUBLE_EQ(r.delaySlots.Mean(), r.meanDelaySlots);
    EXPECT_LE(r.delaySlots.Quantile(0.5), r.delaySlots.Quantile(0.99));
    EXPECT_LE(r.delaySlots.Quantile(0.99), r.delaySlots.Quantile(0.999));
    EXPECT_LE(r.delaySlots.Quantile(0.999), r.delaySlots.Max());
}

TEST(FifoInputQueueing, RoundRobinContentionAlsoBlocksHeadOfLine)
{
    FabricConfig c = Fifo(32);
    c.scheduler = FabricScheduler::FifoRoundRobin;
    UniformRunResult r = RunUniformBernoulli(c, 1.0, 2000, 100000);
    EXPECT_LT(r.throughput, 0.65);
    EXPECT_GT(r.throughput, 0.55);
}

// McKeown (1999): VOQ with iSLIP, one iteration, carries 100% of uniform
// Bernoulli i.i.d. traffic. At 95% load the departures equal the arrivals and
// the input backlog stays bounded.
TEST(VoqIslip, CarriesNearFullUniformLoad)
{
    FabricConfig c;
    c.ports = 32;
    c.islipIterations = 1;
    c.seed = 11;
    UniformRunResult r = RunUniformBernoulli(c, 0.95, 20000, 100000);
    EXPECT_NEAR(r.throughput, 0.95, Tol(r));
    EXPECT_LT(r.backlogEnd, r.backlogStart * 1.5 + 1.0);
    EXPECT_EQ(r.inputDrops, 0u);
}

TEST(VoqIslip, MoreIterationsCutDelayAtHighLoad)
{
    FabricConfig c;
    c.ports = 16;
    c.seed = 3;
    c.islipIterations = 1;
    UniformRunResult one = RunUniformBernoulli(c, 0.8, 5000, 50000);
    c.islipIterations = 4;
    UniformRunResult four = RunUniformBernoulli(c, 0.8, 5000, 50000);
    EXPECT_LT(four.meanDelaySlots, one.meanDelaySlots);
}

TEST(VoqIslip, SpeedupTwoLetsFifoCarryWhatOneCannot)
{
    FabricConfig c = Fifo(16);
    c.inputBufferCells = 0;
    c.egressBufferCells = 0;
    UniformRunResult s1 = RunUniformBernoulli(c, 0.8, 2000, 40000);
    c.speedup = 2;
    UniformRunResult s2 = RunUniformBernoulli(c, 0.8, 2000, 40000);
    EXPECT_LT(s1.throughput, 0.7);
    EXPECT_NEAR(s2.throughput, 0.8, Tol(s2));
}

TEST(CrossbarFabric, SameSeedSameScheduleDifferentSeedDifferent)
{
    UniformRunResult a = RunUniformBernoulli(Fifo(8, 5), 1.0, 100, 10000);
    UniformRunResult b = RunUniformBernoulli(Fifo(8, 5), 1.0, 100, 10000);
    UniformRunResult d = RunUniformBernoulli(Fifo(8, 6), 1.0, 100, 10000);
    EXPECT_EQ(a.throughput, b.throughput);
    EXPECT_EQ(a.meanDelaySlots, b.meanDelaySlots);
    EXPECT_NE(a.throughput, d.throughput);
}

TEST(CrossbarFabric, FullEgressBufferBackpressuresInsteadOfDropping)
{
    FabricConfig c;
    c.ports = 2;
    c.speedup = 2;
    c.egressBufferCells = 1;
    CrossbarFabric f(c);
    // Two inputs both send to output 0: it can take one cell per slot.
    for (int k = 0; k < 10; ++k)
    {
        f.Enqueue(0, 0, k);
        f.Enqueue(1, 0, 100 + k);
    }
    std::vector<FabricCell> out;
    for (int s = 0; s < 20; ++s)
    {
        f.Step(out);
    }
    EXPECT_EQ(out.size(), 20u);
    for (size_t k = 0; k < out.size(); ++k)
    {
        EXPECT_EQ(out[k].output, 0u);
    }
}

TEST(CrossbarFabric, RejectsInconsistentConfig)
{
    FabricConfig c;
    c.queueing = FabricQueueing::Fifo; // with islip
    EXPECT_THROW(CrossbarFabric{c}, std::invalid_argument);
    EXPECT_THROW(ParseFabricScheduler("pim"), std::invalid_argument);
    c.scheduler = FabricScheduler::FifoRandom;
    c.speedup = 0;
    EXPECT_THROW(CrossbarFabric{c}, std::invalid_argument);
}

TEST(CrossbarFabric, FullInputBufferRefusesCells)
{
    FabricConfig c;
    c.ports = 2;
    c.inputBufferCells = 2;
    CrossbarFabric f(c);
    EXPECT_TRUE(f.Enqueue(0, 1, 1));
    EXPECT_TRUE(f.Enqueue(0, 0, 2));
    EXPECT_FALSE(f.Enqueue(0, 1, 3));
    EXPECT_EQ(f.InputDrops(), 1u);
}

// Under saturation every VOQ fills and 1-iteration iSLIP pointers
// desynchronise: throughput tends to 100% (McKeown 1999), where FIFO
// input queueing stops at 0.59 for the same N.
TEST(VoqIslip, SaturatedThroughputApproachesOne)
{
    FabricConfig c;
    c.ports = 32;
    c.seed = 11;
    UniformRunResult r = RunUniformBernoulli(c, 1.0, 50000, 50000);
    EXPECT_GT(r.throughput, 0.98);
}
