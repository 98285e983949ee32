// LatencyHistogram against exact order statistics of the same samples (the
// sorted sample is the independent truth: a quantile read from the
// histogram must lie within one bin width of it), merging, weights; and
// LossTimeline's bins against counts made by hand.
#include "latency-histogram.h"
#include "random-stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using routertwin::LatencyHistogram;
using routertwin::LossTimeline;
using routertwin::RandomStream;

namespace
{
// Type-1 quantile of a sorted sample: the smallest x with F(x) >= q.
double
ExactQuantile(const std::vector<double>& sorted, double q)
{
    size_t k = static_cast<size_t>(std::ceil(q * sorted.size()));
    return sorted[k == 0 ? 0 : k - 1];
}
} // namespace

TEST(LatencyHistogram, QuantilesLieWithinOneBinWidthOfTheSortedSamples)
{
    RandomStream rng(7, 1);
    std::vector<double> xs;
    LatencyHistogram h;
    // A fixed 18.6 us part plus an exponential queueing part (mean 5 us),
    // and 0.1 % of stalls near 200 us: a body and a far tail.
    for (int i = 0; i < 200000; ++i)
    {
        double x = 18.6e-6 + 5e-6 * -std::log(1.0 - rng.Uniform01());
        if (rng.Uniform01() < 1e-3)
        {
            x += 200e-6 * rng.Uniform01();
        }
        xs.push_back(x);
        h.Add(x);
    }
    std::sort(xs.begin(), xs.end());
    for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0})
    {
        double exact = ExactQuantile(xs, q);
        EXPECT_NEAR(h.Quantile(q), exact, LatencyHistogram::BinWidthAt(exact)) << "q = " << q;
    }
    EXPECT_DOUBLE_EQ(h.Min(), xs.front());
    EXPECT_DOUBLE_EQ(h.Max(), xs.back());
    EXPECT_DOUBLE_EQ(h.Count(), 200000.0);
    // The bin width is 2.33 % of the bin's lower edge (100 bins per decade).
    EXPECT_NEAR(LatencyHistogram::BinWidthAt(20e-6) / 20e-6, 0.0233, 0.0005);
}

TEST(LatencyHistogram, MergedHalvesEqualOneHistogramOfAll)
{
    RandomStream rng(3, 2);
    LatencyHistogram all, a, b;
    for (int i = 0; i < 10000; ++i)
    {
        double x = 1e-6 * (1 + 100 * rng.Uniform01());
        all.Add(x);
        (i % 2 ? a : b).Add(x);
    }
    a += b;
    EXPECT_DOUBLE_EQ(a.Count(), all.Count());
    EXPECT_DOUBLE_EQ(a.Min(), all.Min());
    EXPECT_DOUBLE_EQ(a.Max(), all.Max());
    for (double q : {0.5, 0.99, 0.999})
    {
        EXPECT_DOUBLE_EQ(a.Quantile(q), all.Quantile(q));
    }
}

TEST(LatencyHistogram, AWeightCountsAsThatManySamples)
{
    LatencyHistogram w, n;
    w.Add(10e-6, 3);
    w.Add(50e-6, 1);
    for (int i = 0; i < 3; ++i)
    {
        n.Add(10e-6);
    }
    n.Add(50e-6);
    EXPECT_DOUBLE_EQ(w.Count(), 4);
    for (double q : {0.25, 0.75, 0.76, 1.0})
    {
        EXPECT_DOUBLE_EQ(w.Quantile(q), n.Quantile(q));
    }
    // 3 of 4 samples are 10 us: the 75th percentile is in 10 us's bin, the
    // 76th is 50 us's.
    EXPECT_NEAR(w.Quantile(0.75), 10e-6, LatencyHistogram::BinWidthAt(10e-6));
    EXPECT_NEAR(w.Quantile(0.76), 50e-6, LatencyHistogram::BinWidthAt(50e-6));
    EXPECT_THROW(w.Quantile(1.5), std::invalid_argument);
}

TEST(LatencyHistogram, ValuesOutsideTheAxisKeepTheirExactExtremes)
{
    LatencyHistogram h;
    h.Add(0.0);
    h.Add(20.0);
    EXPECT_DOUBLE_EQ(h.Quantile(0.0), 0.0);
    EXPECT_DOUBLE_EQ(h.Quantile(1.0), 20.0);
    EXPECT_EQ(h.Bins().size(), 2u);
    EXPECT_DOUBLE_EQ(LatencyHistogram().Quantile(0.5), 0.0);
}

TEST(LossTimeline, CountsEachDropInItsPortAndTimeBin)
{
    LossTimeline t(4, 10, 1e-3); // 100 us bins
    t.Add(2, 0.0);
    t.Add(2, 99e-6);
    t.Add(2, 150e-6, 2.5);
    t.Add(3, 0.95e-3);
    t.Add(3, 5e-3); // after the tester stopped: the last bin
    EXPECT_DOUBLE_EQ(t.At(2, 0), 2);
    EXPECT_DOUBLE_EQ(t.At(2, 1), 2.5);
    EXPECT_DOUBLE_EQ(t.At(3, 9), 2);
    EXPECT_DOUBLE_EQ(t.At(0, 0), 0);
    EXPECT_DOUBLE_EQ(t.Total(), 6.5);
    EXPECT_DOUBLE_EQ(t.BinSeconds(), 1e-4);
    LossTimeline u(4, 10, 1e-3);
    u.Add(0, 0.5e-3);
    t += u;
    EXPECT_DOUBLE_EQ(t.At(0, 5), 1);
    EXPECT_THROW(t += LossTimeline(4, 5, 1e-3), std::invalid_argument);
    EXPECT_THROW(LossTimeline(0, 1, 1.0), std::invalid_argument);
}

TEST(LossTimeline, KeepsEachDropReasonApartAndAddsThemPerBin)
{
    LossTimeline t(2, 4, 4e-3, {"input_queue_full", "no_route"}); // 1 ms bins
    t.Add(1, 0.5e-3, 3, 0);
    t.Add(1, 0.7e-3, 2, 1);
    t.Add(0, 3.5e-3, 1, 1);
    EXPECT_DOUBLE_EQ(t.At(1, 0, 0), 3);
    EXPECT_DOUBLE_EQ(t.At(1, 0, 1), 2);
    EXPECT_DOUBLE_EQ(t.At(1, 0), 5); // both reasons
    EXPECT_DOUBLE_EQ(t.At(0, 3), 1);
    EXPECT_EQ(t.ReasonTotals(), (std::vector<double>{3, 3}));
    EXPECT_DOUBLE_EQ(t.Total(), 6);
    ASSERT_EQ(t.Reasons().size(), 2u);
    EXPECT_EQ(t.Reasons()[1], "no_route");
    // a drop on a port or for a reason the timeline does not have is an error, not a silent loss
    EXPECT_THROW(t.Add(2, 0.0), std::out_of_range);
    EXPECT_THROW(t.Add(0, 0.0, 1, 2), std::out_of_range);
    EXPECT_THROW(t += LossTimeline(2, 4, 4e-3), std::invalid_argument); // other reasons
    EXPECT_THROW(LossTimeline(1, 1, 1.0, {}), std::invalid_argument);
}
