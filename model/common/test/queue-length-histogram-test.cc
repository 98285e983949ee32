// QueueOccupancy / QueueLengthHistogram against a worked example counted by
// hand and against M/M/1's stationary distribution, P(N = n) = (1 - rho)
// rho^n, with a FIFO single server driven in the test (the closed form is
// the independent truth; the tolerance is four standard errors measured
// over independent replications).
#include "queue-length-histogram.h"
#include "random-stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using routertwin::QueueLengthHistogram;
using routertwin::QueueOccupancy;
using routertwin::RandomStream;

TEST(QueueOccupancy, TimeAtEachLengthOfAWorkedExample)
{
    // Packets (enter, leave): A (0, 4), B (1, 2), C (3, 6), D (8, 9).
    // Lengths: [0,1) 1, [1,2) 2, [2,3) 1, [3,4) 2, [4,6) 1, [6,8) 0, [8,9) 1.
    QueueOccupancy q;
    q.Enter(0, 4);
    q.Enter(1, 2);
    q.Enter(3, 6);
    q.Enter(8, 9);
    q.Finish();
    const QueueLengthHistogram& h = q.Histogram();
    EXPECT_DOUBLE_EQ(h.Seconds(), 9);
    EXPECT_DOUBLE_EQ(h.Probability(0), 2.0 / 9);
    EXPECT_DOUBLE_EQ(h.Probability(1), 5.0 / 9);
    EXPECT_DOUBLE_EQ(h.Probability(2), 2.0 / 9);
    EXPECT_DOUBLE_EQ(h.Probability(3), 0);
    // the mean is the packets' time inside over the span (Little): (4+1+3+1)/9
    EXPECT_DOUBLE_EQ(h.Mean(), 9.0 / 9);
    EXPECT_EQ(h.Max(), 2u);
    EXPECT_EQ(h.Quantile(0.2), 0u);
    EXPECT_EQ(h.Quantile(0.5), 1u);
    EXPECT_EQ(h.Quantile(0.77), 1u); // P(N <= 1) = 7/9 = 0.778
    EXPECT_EQ(h.Quantile(0.78), 2u);
    EXPECT_EQ(h.Quantile(1.0), 2u);
    EXPECT_THROW(h.Quantile(-0.1), std::invalid_argument);
}

TEST(QueueLengthHistogram, LengthsBeyondTheAxisKeepExactMeanAndMax)
{
    QueueLengthHistogram h;
    h.Add(0, 1.0);
    h.Add(QueueLengthHistogram::kMaxLength + 100, 1.0);
    EXPECT_DOUBLE_EQ(h.Mean(), (QueueLengthHistogram::kMaxLength + 100) / 2.0);
    EXPECT_EQ(h.Max(), QueueLengthHistogram::kMaxLength + 100);
    EXPECT_EQ(h.Quantile(1.0), QueueLengthHistogram::kMaxLength + 100);
    ASSERT_EQ(h.Bins().size(), 2u);
    EXPECT_EQ(h.Bins()[1].length, QueueLengthHistogram::kMaxLength + 1);
    EXPECT_DOUBLE_EQ(QueueLengthHistogram().Mean(), 0);
    EXPECT_EQ(QueueLengthHistogram().Quantile(0.5), 0u);
}

// A histogram given a larger largest length keeps lengths up to it in bins
// of their own (a run-bounded user: no overflow bin in use), and one of
// another largest length merges only when one side is empty.
TEST(QueueLengthHistogram, AConfiguredLargestLengthHasBinsUpToIt)
{
    QueueLengthHistogram h(20000);
    EXPECT_EQ(h.MaxLength(), 20000u);
    h.Add(3, 1.0);
    h.Add(9000, 2.0);
    h.Add(20000, 1.0);
    h.Add(20001, 1.0);
    EXPECT_DOUBLE_EQ(h.Probability(9000), 2.0 / 5);
    EXPECT_DOUBLE_EQ(h.Probability(20000), 1.0 / 5);
    EXPECT_DOUBLE_EQ(h.Probability(12000), 0);
    EXPECT_EQ(h.Quantile(0.2), 3u);
    EXPECT_EQ(h.Quantile(0.6), 9000u);
    EXPECT_EQ(h.Quantile(0.8), 20000u);
    EXPECT_EQ(h.Quantile(1.0), 20001u);
    const std::vector<QueueLengthHistogram::Bin> bins = h.Bins();
    ASSERT_EQ(bins.size(), 4u);
    EXPECT_EQ(bins[1].length, 9000u);
    EXPECT_EQ(bins[3].length, 20001u); // the overflow bin
    QueueLengthHistogram empty;
    empty += h;
    EXPECT_EQ(empty.MaxLength(), 20000u);
    EXPECT_DOUBLE_EQ(empty.Probability(9000), 2.0 / 5);
    QueueLengthHistogram small;
    small.Add(1, 1.0);
    EXPECT_THROW(small += h, std::invalid_argument);
    h += QueueLengthHistogram();
    EXPECT_DOUBLE_EQ(h.Seconds(), 5.0);
    EXPECT_THROW(QueueLengthHistogram(1u << 31), std::invalid_argument);
}

TEST(QueueOccupancy, MM1LengthsAreGeometric)
{
    // M/M/1 at rho = 0.6: R independent replications of n arrivals each,
    // each starting empty (the transient, a few dozen service times, is
    // ~1e-4 of a replication). Each gives P(N = k); their spread gives the
    // standard error of the mean over replications.
    const double rho = 0.6, service = 1.0;
    const int replications = 20, arrivals = 50000;
    const int maxN = 8;
    std::vector<std::vector<double>> p(maxN + 1);
    std::vector<double> means, spans;
    QueueLengthHistogram merged;
    for (int r = 0; r < replications; ++r)
    {
        RandomStream rng(11, 100 + r);
        QueueOccupancy q;
        double t = 0, free = 0;
        for (int i = 0; i < arrivals; ++i)
        {
            t += rng.Exponential(service / rho);
            const double start = std::max(t, free);
            free = start + rng.Exponential(service);
            q.Enter(t, free);
        }
        q.Finish();
        for (int k = 0; k <= maxN; ++k)
        {
            p[k].push_back(q.Histogram().Probability(k));
        }
        means.push_back(q.Histogram().Mean());
        spans.push_back(q.Histogram().Seconds());
        merged += q.Histogram();
    }
    auto check = [&](const std::vector<double>& xs, double exact, const char* what, int k) {
        double m = 0, v = 0;
        for (double x : xs)
        {
            m += x / xs.size();
        }
        for (double x : xs)
        {
            v += (x - m) * (x - m) / (xs.size() - 1);
        }
        const double se = std::sqrt(v / xs.size());
        EXPECT_NEAR(m, exact, 4 * se) << what << " " << k << " (se " << se << ")";
        // the check means something: the standard error is small against the value
        EXPECT_LT(se, 0.05 * exact) << what << " " << k;
    };
    for (int k = 0; k <= maxN; ++k)
    {
        check(p[k], (1 - rho) * std::pow(rho, k), "P(N = k), k =", k);
    }
    check(means, rho / (1 - rho), "mean length", 0);
    // the merged histogram pools the replications weighted by their time
    double pooled0 = 0, seconds = 0;
    for (int r = 0; r < replications; ++r)
    {
        pooled0 += p[0][r] * spans[r];
        seconds += spans[r];
    }
    EXPECT_NEAR(merged.Seconds(), seconds, 1e-9 * seconds);
    EXPECT_NEAR(merged.Probability(0), pooled0 / seconds, 1e-12);
}
