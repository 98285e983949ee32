#include "fabric-crossbar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

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

namespace
{
// P(a cell waits w slots), w = 0..states-1, in an output-queued switch of n
// ports under uniform Bernoulli traffic of load p (Karol, Hluchyj and Morgan
// 1987, output queueing): each slot an output gets A ~ Binomial(n, p/n)
// cells, then sends one, so its backlog at a slot's start follows the chain
// B' = max(B + A - 1, 0), iterated here from an empty queue until it stops
// moving (truncated at `states`, whose tail mass is negligible at p = 0.8);
// the cells of a slot take places B, ..., B + A - 1 and wait that many
// slots, so a cell picked at random waits w with probability
// sum_b P(B = b) sum_k P(A = k) #{j < k: b + j = w} / E[A].
std::vector<double>
OutputQueueWaits(unsigned n, double p, unsigned states = 400)
{
    std::vector<double> a(n + 1);
    for (unsigned k = 0; k <= n; ++k)
    {
        a[k] = std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0)) *
               std::pow(p / n, k) * std::pow(1 - p / n, n - k);
    }
    std::vector<double> backlog(states, 0.0), next(states);
    backlog[0] = 1.0;
    for (int it = 0; it < 100000; ++it)
    {
        std::fill(next.begin(), next.end(), 0.0);
        for (unsigned b = 0; b < states; ++b)
        {
            for (unsigned k = 0; k <= n; ++k)
            {
                const unsigned to = std::min(b + k == 0 ? 0u : b + k - 1, states - 1);
                next[to] += backlog[b] * a[k];
            }
        }
        double moved = 0;
        for (unsigned b = 0; b < states; ++b)
        {
            moved += std::fabs(next[b] - backlog[b]);
        }
        backlog.swap(next);
        if (moved < 1e-15)
        {
            break;
        }
    }
    std::vector<double> waits(states + n, 0.0);
    for (unsigned b = 0; b < states; ++b)
    {
        for (unsigned k = 1; k <= n; ++k)
        {
            for (unsigned j = 0; j < k; ++j)
            {
                waits[b + j] += backlog[b] * a[k] / p;
            }
        }
    }
    waits.resize(states);
    return waits;
}
} // namespace

// VOQ + iSLIP with as many iterations and phases as ports moves every cell
// to its output in the slot it arrives: an output-queued switch. Its delay
// distribution is the exact output queue's above, whose mean is Karol,
// Hluchyj and Morgan's closed form W = (n-1)/n p / (2 (1-p)) (checked first,
// so the chain itself is right). 8 ports at p = 0.8 over 100k slots: 640k
// cells. Tolerance of a fraction F(w) of cells at or below w: its standard
// error sqrt(F (1-F) tau / cells), the cells of tau = 50 slots (longer than
// a busy period at this load) taken as one independent sample; 4 of them.
TEST(VoqIslip, OutputQueuedDelaysFollowTheExactOutputQueue)
{
    const unsigned n = 8;
    const double p = 0.8;
    const std::vector<double> waits = OutputQueueWaits(n, p);
    const double khm = (n - 1.0) / n * p / (2 * (1 - p));
    double chainMean = 0, chainMass = 0;
    for (size_t w = 0; w < waits.size(); ++w)
    {
        chainMean += static_cast<double>(w) * waits[w];
        chainMass += waits[w];
    }
    ASSERT_NEAR(chainMass, 1.0, 1e-9); // the iterations' rounding
    ASSERT_NEAR(chainMean, khm, 1e-8 * khm);

    FabricConfig c;
    c.ports = n;
    c.islipIterations = n;
    c.speedup = n;
    const UniformRunResult r = RunUniformBernoulli(c, p, 2000, 100000);
    const double cells = r.delaySlots.Seconds();
    EXPECT_NEAR(cells, p * n * 100000, 4 * std::sqrt(p * n * 100000));
    EXPECT_NEAR(r.meanDelaySlots, khm, 0.03 * khm);
    double exact = 0, measured = 0;
    for (unsigned w = 0; w <= r.delaySlots.Quantile(0.999); ++w)
    {
        exact += waits[w];
        measured += r.delaySlots.Probability(w);
        EXPECT_NEAR(measured, exact, 4 * std::sqrt(exact * (1 - exact) * 50 / cells) + 1e-4) << "w = " << w;
    }
    // each percentile the smallest w whose exact fraction reaches it, up to the same slack
    for (double q : {0.5, 0.99, 0.999})
    {
        const unsigned w = r.delaySlots.Quantile(q);
        const double slack = 4 * std::sqrt(q * (1 - q) * 50 / cells);
        double upTo = 0;
        for (unsigned v = 0; v <= w; ++v)
        {
            upTo += waits[v];
        }
        EXPECT_GE(upTo, q - slack) << "q = " << q;
        EXPECT_LT(upTo - waits[w], q + slack) << "q = " << q;
    }
}

// FIFO inputs at full load with unbounded buffers (2 ports carry 3/4 a slot
// each): the backlog and the delays grow without bound, past the 4,095 of a
// queue-length axis. The run's delays are computed directly here, by
// driving a fabric with the same arrivals (RunUniformBernoulli's traffic
// stream: seed, stream 0x5DEECE66D) and keeping every departing cell's
// delay: the histogram must hold exactly those, and its percentiles be the
// ranked delays, each below the run's 22,000 slots.
TEST(FifoInputQueueing, SaturatedDelaysAreExactBeyondAQueueAxis)
{
    FabricConfig c = Fifo(2, 1);
    c.inputBufferCells = 0;
    const uint64_t warmup = 2000, measure = 20000;
    const UniformRunResult r = RunUniformBernoulli(c, 1.0, warmup, measure);

    CrossbarFabric fabric(c);
    RandomStream traffic(c.seed, 0x5DEECE66Dull);
    std::vector<FabricCell> departed;
    std::vector<uint64_t> delays;
    for (uint64_t s = 0; s < warmup + measure; ++s)
    {
        for (unsigned i = 0; i < 2; ++i)
        {
            if (traffic.Bernoulli(1.0))
            {
                fabric.Enqueue(i, traffic.UniformInt(2), s);
            }
        }
        departed.clear();
        fabric.Step(departed);
        for (const FabricCell& cell : departed)
        {
            if (s >= warmup)
            {
                delays.push_back(s - cell.tag);
            }
        }
    }
    std::sort(delays.begin(), delays.end());
    ASSERT_GT(delays.back(), QueueLengthHistogram::kMaxLength);
    EXPECT_DOUBLE_EQ(r.delaySlots.Seconds(), static_cast<double>(delays.size()));
    EXPECT_EQ(r.delaySlots.Max(), delays.back());
    // nearest rank: the smallest delay with at least q of the cells at or below it
    for (double q : {0.5, 0.99, 0.999})
    {
        const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(delays.size()) - 1e-9));
        EXPECT_EQ(r.delaySlots.Quantile(q), delays[rank - 1]) << "q = " << q;
        EXPECT_LT(r.delaySlots.Quantile(q), warmup + measure);
    }
    // every bin a delay some cell had, with as many cells
    std::map<uint64_t, double> count;
    for (uint64_t d : delays)
    {
        count[d] += 1;
    }
    const std::vector<QueueLengthHistogram::Bin> bins = r.delaySlots.Bins();
    ASSERT_EQ(bins.size(), count.size());
    size_t b = 0;
    for (const auto& [delay, cells] : count)
    {
        EXPECT_EQ(bins[b].length, delay);
        EXPECT_EQ(bins[b].seconds, cells);
        ++b;
    }
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
