// PipelineEngine against independent truth: closed-form queueing results
// (Pollaczek-Khinchine, Erlang C, the M/M/1 sojourn-time distribution), saturation throughput min(...) of the
// configured ceilings, ordering and lock limits, drops by reason, determinism.
#include "ethernet-framing.h"
#include "latency-histogram.h"
#include "pipeline-engine.h"
#include "queue-length-histogram.h"
#include "random-stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <stdexcept>

using namespace routertwin;

namespace
{

// Mean and standard error of batch means, and the pooled time-average queue
// length, from a run split into batches of equal packet count.
struct BatchStats
{
    double waitMean, waitSe; // seconds
    double lqMean, lqSe;     // packets waiting
};

double
Mean(const std::vector<double>& v)
{
    return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double
StdErr(const std::vector<double>& v)
{
    const double m = Mean(v);
    double s = 0;
    for (double x : v)
    {
        s += (x - m) * (x - m);
    }
    return std::sqrt(s / (v.size() - 1) / v.size());
}

// Poisson arrivals at rate lambda, service cycles from `draw`; the first
// batch is warm-up and discarded.
template <class Draw>
BatchStats
RunQueue(PipelineConfig cfg, double lambda, uint64_t seed, int batches, int perBatch, Draw draw)
{
    PipelineEngine eng(cfg);
    RandomStream arrivals(seed, 1), services(seed, 2);
    std::vector<PacketDesc> in(perBatch), out, drops;
    std::vector<double> waits, lqs;
    double t = 0;
    for (int b = 0; b <= batches; ++b)
    {
        for (auto& d : in)
        {
            t += arrivals.Exponential(1.0 / lambda);
            d = PacketDesc{};
            d.arrivalPs = static_cast<uint64_t>(std::llround(t * 1e12));
            d.serviceCycles = draw(services);
            d.frameBytes = 64;
        }
        const double before = eng.Counters().sumWaitSeconds;
        out.clear();
        eng.Process(in.data(), in.size(), out, drops);
        const double sumWait = eng.Counters().sumWaitSeconds - before;
        const double span = (in.back().arrivalPs - in.front().arrivalPs) * 1e-12;
        if (b > 0)
        {
            waits.push_back(sumWait / perBatch);
            lqs.push_back(sumWait / span); // area under the queue-length curve / time
        }
    }
    EXPECT_EQ(drops.size(), 0u);
    return BatchStats{Mean(waits), StdErr(waits), Mean(lqs), StdErr(lqs)};
}

void
ExpectAgrees(double sim, double se, double theory, double relTol, const char* what)
{
    // Kept in the test report (--gtest_output=xml) for review.
    auto show = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.5g", v);
        return std::string(buf);
    };
    ::testing::Test::RecordProperty(std::string(what) + "_sim", show(sim));
    ::testing::Test::RecordProperty(std::string(what) + "_theory", show(theory));
    ::testing::Test::RecordProperty(std::string(what) + "_se", show(se));
    EXPECT_LT(std::abs(sim - theory), 4 * se) << what << ": sim " << sim << " theory " << theory
                                              << " se " << se;
    EXPECT_LT(std::abs(sim - theory), relTol * theory)
        << what << ": sim " << sim << " theory " << theory;
}

constexpr double kClock = 10e9;       // 10 GHz: 1 cycle = 0.1 ns, fine service grain
constexpr double kMeanService = 1e-6; // 1 us = 10,000 cycles

uint32_t
ExpCycles(RandomStream& r)
{
    return static_cast<uint32_t>(std::llround(r.Exponential(kMeanService * kClock)));
}

uint32_t
DetCycles(RandomStream&)
{
    return static_cast<uint32_t>(kMeanService * kClock);
}

PipelineConfig
SingleServer()
{
    PipelineConfig c;
    c.numCores = 1;
    c.clockHz = kClock;
    c.scheduling = WorkScheduling::kUntagged;
    return c;
}

// Batch sizes grow with load: the queue's correlation time ~ 1/(1-sqrt(rho))^2.
int
PerBatch(double rho)
{
    return rho < 0.6 ? 20000 : rho < 0.85 ? 60000 : 150000;
}

class MM1 : public ::testing::TestWithParam<double>
{
};

TEST_P(MM1, MeanWaitAndQueueLengthMatchPollaczekKhinchine)
{
    const double rho = GetParam();
    const double lambda = rho / kMeanService;
    // P-K with E[S^2] = 2 S^2: Wq = rho S / (1 - rho); Lq = lambda Wq.
    const double wq = rho * kMeanService / (1 - rho);
    BatchStats s = RunQueue(SingleServer(), lambda, 11, 20, PerBatch(rho), ExpCycles);
    ExpectAgrees(s.waitMean, s.waitSe, wq, 0.05, "Wq");
    ExpectAgrees(s.lqMean, s.lqSe, lambda * wq, 0.05, "Lq");
}

INSTANTIATE_TEST_SUITE_P(Loads, MM1, ::testing::Values(0.5, 0.8, 0.9));

// The sojourn time of a FIFO M/M/1 queue is exponential with rate mu - lambda
// (Kleinrock, Queueing Systems vol. 1, ch. 3), so its q-quantile is
// -ln(1 - q) / (mu - lambda): p99 = ln(100) / (mu - lambda). The engine's
// latencies, read through a LatencyHistogram as the testers read them, must
// give those percentiles. Tolerance: the quantile estimate's own sampling
// error (packets are correlated through the queue; 1.5 M packets at load 0.5
// keep it near 1 %) plus the histogram's resolution (under 2.33 %).
TEST(MM1Sojourn, PercentilesMatchTheExponentialSojournTime)
{
    const double rho = 0.5, mu = 1 / kMeanService, lambda = rho * mu;
    PipelineEngine eng(SingleServer());
    RandomStream arrivals(21, 1), services(21, 2);
    LatencyHistogram h;
    std::vector<PacketDesc> in(50000), out, drops;
    double t = 0;
    for (int b = 0; b < 31; ++b)
    {
        for (auto& d : in)
        {
            t += arrivals.Exponential(1.0 / lambda);
            d = PacketDesc{};
            d.arrivalPs = static_cast<uint64_t>(std::llround(t * 1e12));
            d.serviceCycles = ExpCycles(services);
            d.frameBytes = 64;
        }
        out.clear();
        eng.Process(in.data(), in.size(), out, drops);
        if (b == 0)
        {
            continue; // warm-up
        }
        for (const PacketDesc& d : out)
        {
            h.Add(static_cast<double>(d.departPs - d.arrivalPs) * 1e-12);
        }
    }
    ASSERT_EQ(drops.size(), 0u);
    ASSERT_GT(h.Count(), 1.4e6);
    for (double q : {0.5, 0.9, 0.99, 0.999})
    {
        const double theory = -std::log(1 - q) / (mu - lambda);
        const double tol = q < 0.995 ? 0.03 : 0.06;
        EXPECT_NEAR(h.Quantile(q), theory, tol * theory) << "q = " << q;
    }
}

class MD1 : public ::testing::TestWithParam<double>
{
};

TEST_P(MD1, MeanWaitAndQueueLengthMatchPollaczekKhinchine)
{
    const double rho = GetParam();
    const double lambda = rho / kMeanService;
    // P-K with E[S^2] = S^2: Wq = rho S / (2 (1 - rho)).
    const double wq = rho * kMeanService / (2 * (1 - rho));
    BatchStats s = RunQueue(SingleServer(), lambda, 12, 20, PerBatch(rho), DetCycles);
    ExpectAgrees(s.waitMean, s.waitSe, wq, 0.05, "Wq");
    ExpectAgrees(s.lqMean, s.lqSe, lambda * wq, 0.05, "Lq");
}

INSTANTIATE_TEST_SUITE_P(Loads, MD1, ::testing::Values(0.5, 0.8, 0.9));

TEST(MMc, FourCoresAtSeventyPercentMatchErlangC)
{
    const int c = 4;
    const double rho = 0.7, mu = 1 / kMeanService, lambda = rho * c * mu, a = lambda / mu;
    double sum = 0, term = 1;
    for (int k = 0; k < c; ++k)
    {
        sum += term; // a^k / k!
        term *= a / (k + 1);
    }
    const double tail = term * c / (c - a); // a^c/c! * c/(c-a)
    const double erlangC = tail / (sum + tail);
    const double wq = erlangC / (c * mu - lambda);
    PipelineConfig cfg = SingleServer();
    cfg.numCores = c;
    BatchStats s = RunQueue(cfg, lambda, 13, 20, 60000, ExpCycles);
    ExpectAgrees(s.waitMean, s.waitSe, wq, 0.05, "Wq");
}

// The time-weighted distribution of the number of packets in the cores'
// queue (waiting or in service), CoreQueueLengths(), against stationary
// distributions in closed form. R independent replications of Poisson
// arrivals, each starting empty (the transient, a few hundred service
// times, is under 1e-3 of a replication's 60,000 packets); the tolerance on
// each probability is four standard errors of the mean over replications,
// and the standard error must be small against the probability, so a wrong
// distribution cannot pass for lack of samples.
template <class Draw>
std::vector<QueueLengthHistogram>
ReplicatedLengths(const PipelineConfig& cfg, double lambda, uint64_t seed, int replications, int packets,
                  Draw draw)
{
    std::vector<QueueLengthHistogram> out;
    for (int r = 0; r < replications; ++r)
    {
        PipelineEngine eng(cfg);
        RandomStream arrivals(seed, 10 + 2 * r), services(seed, 11 + 2 * r);
        std::vector<PacketDesc> in(packets), departed, drops;
        double t = 0;
        for (auto& d : in)
        {
            t += arrivals.Exponential(1.0 / lambda);
            d = PacketDesc{};
            d.arrivalPs = static_cast<uint64_t>(std::llround(t * 1e12));
            d.serviceCycles = draw(services);
            d.frameBytes = 64;
        }
        eng.Process(in.data(), in.size(), departed, drops);
        eng.Flush(departed);
        EXPECT_EQ(drops.size(), 0u);
        out.push_back(eng.CoreQueueLengths());
    }
    return out;
}

void
ExpectLengthDistribution(const std::vector<QueueLengthHistogram>& reps, const std::vector<double>& exact,
                         double exactMean)
{
    for (size_t n = 0; n <= exact.size(); ++n)
    {
        std::vector<double> p;
        for (const QueueLengthHistogram& h : reps)
        {
            p.push_back(n < exact.size() ? h.Probability(static_cast<unsigned>(n)) : h.Mean());
        }
        const double want = n < exact.size() ? exact[n] : exactMean;
        if (want < 0.01)
        {
            continue; // rarer lengths: too few visits for a 15 % check at this run length
        }
        const std::string what = n < exact.size() ? "P(N=" + std::to_string(n) + ")" : "mean N";
        ExpectAgrees(Mean(p), StdErr(p), want, want >= 0.05 ? 0.05 : 0.15, what.c_str());
    }
}

// M/M/1: P(N = n) = (1 - rho) rho^n, mean rho / (1 - rho).
TEST(QueueLength, MM1IsGeometric)
{
    const double rho = 0.7;
    std::vector<double> exact;
    for (int n = 0; n <= 10; ++n)
    {
        exact.push_back((1 - rho) * std::pow(rho, n));
    }
    const auto reps = ReplicatedLengths(SingleServer(), rho / kMeanService, 31, 20, 60000, ExpCycles);
    ExpectLengthDistribution(reps, exact, rho / (1 - rho));
}

// M/D/1 (the embedded Markov chain at departures solved in closed form, as in
// Gross, Shortle, Thompson & Harris, Fundamentals of Queueing Theory): p0 = 1 - rho, p1 = (1 - rho)(e^rho - 1), and for
// n >= 2 p_n = (1 - rho) sum_{k=1..n} (-1)^(n-k) e^(k rho) [(k rho)^(n-k) /
// (n-k)! + (k rho)^(n-k-1) / (n-k-1)!], the second term absent for k = n;
// mean rho + rho^2 / (2 (1 - rho)) (Pollaczek-Khinchine). The alternating
// sum is evaluated in long double and is exact enough for n <= 12 at 0.7.
TEST(QueueLength, MD1MatchesTheClosedForm)
{
    const long double rho = 0.7L;
    std::vector<double> exact{static_cast<double>(1 - rho), static_cast<double>((1 - rho) * (std::exp(rho) - 1))};
    for (int n = 2; n <= 12; ++n)
    {
        long double sum = 0;
        for (int k = 1; k <= n; ++k)
        {
            const long double x = k * rho;
            long double term = std::pow(x, n - k) / std::tgamma(static_cast<long double>(n - k + 1));
            if (k < n)
            {
                term += std::pow(x, n - k - 1) / std::tgamma(static_cast<long double>(n - k));
            }
            sum += ((n - k) % 2 ? -1 : 1) * std::exp(x) * term;
        }
        exact.push_back(static_cast<double>((1 - rho) * sum));
    }
    // the closed form is a distribution: its terms are positive and the tail past 12 is small
    double total = 0;
    for (double p : exact)
    {
        ASSERT_GT(p, 0);
        total += p;
    }
    ASSERT_NEAR(total, 1.0, 0.01);
    const double r = static_cast<double>(rho);
    const auto reps = ReplicatedLengths(SingleServer(), r / kMeanService, 32, 20, 60000, DetCycles);
    ExpectLengthDistribution(reps, exact, r + r * r / (2 * (1 - r)));
}

// M/M/4 from one shared queue (UNTAGGED): p_n = p0 a^n / n! for n < c and
// p0 a^n / (c! c^(n-c)) beyond, a = lambda / mu (Erlang).
TEST(QueueLength, MM4SharedQueueMatchesErlang)
{
    const int c = 4;
    const double rho = 0.7, a = rho * c;
    std::vector<double> unnorm;
    double term = 1;
    for (int n = 0; n <= 14; ++n)
    {
        unnorm.push_back(term);
        term *= n + 1 < c ? a / (n + 1) : a / c;
    }
    // sum to infinity: the finite part plus the geometric tail beyond 14
    double z = std::accumulate(unnorm.begin(), unnorm.end(), 0.0) + unnorm.back() * rho / (1 - rho);
    std::vector<double> exact;
    for (size_t n = 0; n < unnorm.size(); ++n)
    {
        exact.push_back(unnorm[n] / z);
    }
    // mean = a + Lq, Lq = C(c, a) rho / (1 - rho), C the Erlang C probability of waiting
    double waiting = 0;
    for (size_t n = c; n < unnorm.size(); ++n)
    {
        waiting += exact[n];
    }
    waiting += exact.back() * rho / (1 - rho);
    const double mean = a + waiting * rho / (1 - rho);
    PipelineConfig cfg = SingleServer();
    cfg.numCores = c;
    exact.resize(10);
    const auto reps = ReplicatedLengths(cfg, rho * c / kMeanService, 33, 20, 60000, ExpCycles);
    ExpectLengthDistribution(reps, exact, mean);
}

// RSS gives each core its own queue and adds their histograms; a shared
// queue (UNTAGGED) counts the pool as one. Two 1-us packets at once on two
// idle cores: RSS, each core holds one for 1 us (2 us at length 1); shared,
// the pool holds both for 1 us (1 us at length 2).
TEST(QueueLength, RssCountsEachCoresQueueSharedCountsThePool)
{
    PipelineConfig cfg = SingleServer();
    cfg.numCores = 2;
    auto pair = [](uint32_t flowB) {
        std::vector<PacketDesc> in(2);
        for (uint32_t i = 0; i < 2; ++i)
        {
            in[i] = PacketDesc{};
            in[i].flow = i ? flowB : 0;
            in[i].serviceCycles = static_cast<uint32_t>(kMeanService * kClock);
            in[i].frameBytes = 64;
        }
        return in;
    };
    auto lengths = [&](const PipelineConfig& c, uint32_t flowB, std::vector<double>* util) {
        PipelineEngine eng(c);
        std::vector<PacketDesc> in = pair(flowB), departed, drops;
        eng.Process(in.data(), in.size(), departed, drops);
        eng.Flush(departed);
        if (util)
        {
            *util = eng.Report().coreUtilization;
        }
        return eng.CoreQueueLengths();
    };
    PipelineConfig rss = cfg;
    rss.scheduling = WorkScheduling::kRss;
    rss.coreQueueDepth = 0;
    uint32_t flowB = 1;
    std::vector<double> util;
    for (; flowB < 64; ++flowB) // a flow the hash puts on the other core
    {
        lengths(rss, flowB, &util);
        if (util[0] > 0 && util[1] > 0)
        {
            break;
        }
    }
    ASSERT_LT(flowB, 64u);
    const QueueLengthHistogram each = lengths(rss, flowB, nullptr);
    EXPECT_NEAR(each.Seconds(), 2 * kMeanService, 1e-15);
    EXPECT_NEAR(each.Probability(1), 1.0, 1e-12);
    EXPECT_EQ(each.Max(), 1u);
    const QueueLengthHistogram pool = lengths(cfg, flowB, nullptr);
    EXPECT_NEAR(pool.Seconds(), kMeanService, 1e-15);
    EXPECT_NEAR(pool.Probability(2), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(pool.Mean(), 2.0);
}

// Offers n packets back to back at `pps` (above capacity, unbounded queues)
// and measures the departure rate over the middle 80% of departures.
struct Saturation
{
    double pps;
    PipelineReport report;
    std::vector<PacketDesc> departed;
};

// Packet i of flow flowOf[i] (its seq the count of that flow's earlier ones).
Saturation
SaturateFlows(const PipelineConfig& cfg, double offeredPps, uint32_t cycles,
              const std::vector<uint32_t>& flowOf)
{
    const size_t n = flowOf.size();
    PipelineEngine eng(cfg);
    std::vector<PacketDesc> in(n), out, drops;
    std::map<uint32_t, uint32_t> seen;
    for (size_t i = 0; i < n; ++i)
    {
        in[i] = PacketDesc{};
        in[i].arrivalPs = static_cast<uint64_t>(std::llround(i * 1e12 / offeredPps));
        in[i].flow = flowOf[i];
        in[i].seq = seen[flowOf[i]]++;
        in[i].serviceCycles = cycles;
        in[i].frameBytes = 64;
    }
    eng.Process(in.data(), n, out, drops);
    eng.Flush(out);
    EXPECT_EQ(out.size(), n);
    const size_t a = n / 10, b = n - n / 10;
    Saturation s;
    s.pps = (b - a) / ((out[b].departPs - out[a].departPs) * 1e-12);
    s.report = eng.Report();
    s.departed = std::move(out);
    return s;
}

// The tester's rotation: packet i of flow i mod flows.
Saturation
Saturate(const PipelineConfig& cfg, double offeredPps, uint32_t cycles, uint32_t flows = 1,
         size_t n = 200000)
{
    std::vector<uint32_t> flowOf(n);
    for (size_t i = 0; i < n; ++i)
    {
        flowOf[i] = static_cast<uint32_t>(i % flows);
    }
    return SaturateFlows(cfg, offeredPps, cycles, flowOf);
}

// Each packet's flow drawn uniformly from `flows` (a tester interleaving
// flows at random).
std::vector<uint32_t>
UniformFlows(uint32_t flows, size_t n, uint64_t seed)
{
    RandomStream rng(seed);
    std::vector<uint32_t> flowOf(n);
    for (auto& f : flowOf)
    {
        f = rng.UniformInt(flows);
    }
    return flowOf;
}

PipelineConfig
Octeonish(uint32_t cores)
{
    PipelineConfig c;
    c.numCores = cores;
    c.clockHz = 1e9;
    c.scheduling = WorkScheduling::kOrdered;
    return c;
}

void
ExpectRate(double actual, double expected)
{
    EXPECT_LT(std::abs(actual / expected - 1), 1e-3) << actual << " vs " << expected;
}

TEST(Saturation, CoresBindAtCoresOverService)
{
    PipelineConfig c = Octeonish(4);
    c.inputPpsCeiling = 10e6;
    c.egressBitRate = 10e9;
    Saturation s = Saturate(c, 20e6, 1000); // 4 cores / 1 us = 4 Mpps
    ExpectRate(s.pps, std::min({4 / 1e-6, 10e6, ethernet::LineRatePps(10e9, 64)}));
    EXPECT_EQ(s.report.bottleneck, "cores");
}

TEST(Saturation, InputCeilingBindsBeforeCores)
{
    PipelineConfig c = Octeonish(16);
    c.inputPpsCeiling = 5e6;
    c.egressBitRate = 10e9;
    Saturation s = Saturate(c, 20e6, 1000); // cores 16 Mpps, line 14.88 Mpps
    ExpectRate(s.pps, 5e6);
    EXPECT_EQ(s.report.bottleneck, "packet_input");
}

TEST(Saturation, LineRateBindsWithPlentyOfCores)
{
    PipelineConfig c = Octeonish(16);
    c.inputPpsCeiling = 30e6;
    c.egressBitRate = 10e9;
    Saturation s = Saturate(c, 20e6, 1000);
    ExpectRate(s.pps, ethernet::LineRatePps(10e9, 64));
    EXPECT_EQ(s.report.bottleneck, "line_rate");
}

TEST(Saturation, MemoryBandwidthBinds)
{
    PipelineConfig c = Octeonish(16);
    c.memoryBytesPerSecond = 1e9; // 2 x 64 bytes per packet -> 7.8125 Mpps
    Saturation s = Saturate(c, 20e6, 1000);
    ExpectRate(s.pps, 1e9 / 128);
    EXPECT_EQ(s.report.bottleneck, "memory");
}

TEST(Saturation, OutputEngineBinds)
{
    PipelineConfig c = Octeonish(16);
    c.outputPpsCeiling = 6e6;
    Saturation s = Saturate(c, 20e6, 1000);
    ExpectRate(s.pps, 6e6);
    EXPECT_EQ(s.report.bottleneck, "packet_output");
}

TEST(Ordering, AtomicTagsCapThroughputAtFlowsOverService)
{
    PipelineConfig c = Octeonish(16);
    c.scheduling = WorkScheduling::kAtomic;
    Saturation atomic = Saturate(c, 20e6, 1000, 4);
    ExpectRate(atomic.pps, 4 / 1e-6);
    EXPECT_EQ(atomic.report.bottleneck, "ordering");
    // Never more than 4 cores busy: 4 of 16 cores' worth of busy time.
    EXPECT_NEAR(atomic.report.resources[0].utilization, 4.0 / 16, 0.01);

    c.scheduling = WorkScheduling::kOrdered; // same traffic, ordered tags: all 16 cores
    ExpectRate(Saturate(c, 20e6, 1000, 4).pps, 16 / 1e-6);
}

TEST(Ordering, GlobalLockCapsThroughputAtOneOverHold)
{
    PipelineConfig c = Octeonish(16);
    c.lockHoldCycles = 250; // 0.25 us of each 1 us service under the lock
    Saturation s = Saturate(c, 20e6, 1000);
    ExpectRate(s.pps, 1 / 0.25e-6);
    EXPECT_EQ(s.report.bottleneck, "lock");
}

// A flow's ATOMIC section inside ORDERED work (an SSO tag switch the core
// spins on). One flow, n cores, service S of which the last h under the
// tag: the tag passes one packet per h, the cores n per S, so the rate is
// min(n / S, 1 / h) exactly.
TEST(FlowSection, OneFlowCapsThroughputAtOneOverSection)
{
    PipelineConfig c = Octeonish(4);
    c.flowSectionCycles = 400; // of 1000: 1 / 0.4 us = 2.5 Mpps < 4 cores' 4 Mpps
    Saturation s = Saturate(c, 20e6, 1000, 1);
    ExpectRate(s.pps, 1 / 0.4e-6);
    EXPECT_EQ(s.report.bottleneck, "ordering");

    c.numCores = 2; // 2 Mpps of cores < 2.5 Mpps of the tag
    ExpectRate(Saturate(c, 20e6, 1000, 1).pps, 2 / 1e-6);
}

// The tester's rotation over k >= 2 flows on 2 cores never puts two packets
// of a flow in service together, even with the whole service under the
// flow's tag: no loss.
TEST(FlowSection, RotationOverFlowsNeverCollides)
{
    PipelineConfig c = Octeonish(2);
    c.flowSectionCycles = 1000;
    ExpectRate(Saturate(c, 20e6, 1000, 2).pps, 2 / 1e-6);
    ExpectRate(Saturate(c, 20e6, 1000, 60).pps, 2 / 1e-6);
}

// Two cores, the whole service S under the flow's tag, each packet's flow
// uniform over k. Markov chain on the cores' phase: in step (both free at
// once) two packets start and the pair collides with p = 1/k, after which
// the cores are S apart; then one packet starts per S and collides with the
// busy one's flow with p again. The share of staggered steps is p, so the
// rate is (2 (1 - p) + p) / S = (2 - 1/k) / S.
TEST(FlowSection, UniformFlowsOnTwoCoresLoseOneOverKOfACore)
{
    PipelineConfig c = Octeonish(2);
    c.flowSectionCycles = 1000;
    for (uint32_t k : {2u, 4u, 60u})
    {
        Saturation s = SaturateFlows(c, 20e6, 1000, UniformFlows(k, 400000, 7 + k));
        const double expected = (2 - 1.0 / k) / 1e-6;
        // Steps between collisions are geometric: over ~3e5 steps the share
        // of staggered ones has sd below 0.2 % of the rate; 1 % is > 4 sd.
        EXPECT_NEAR(s.pps / expected, 1, 0.01) << k << " flows";
    }
    // The same traffic with ATOMIC tags at get-work: the SSO hands a core
    // work of a free flow instead, so nothing is lost with k >= 2.
    c.flowSectionCycles = 0;
    c.scheduling = WorkScheduling::kAtomic;
    ExpectRate(SaturateFlows(c, 20e6, 1000, UniformFlows(4, 400000, 11)).pps, 2 / 1e-6);
}

TEST(FlowSection, NeedsOrderedTagsAndNoLock)
{
    PipelineConfig c = Octeonish(2);
    c.flowSectionCycles = 100;
    c.scheduling = WorkScheduling::kAtomic;
    EXPECT_THROW(PipelineEngine{c}, std::invalid_argument);
    c.scheduling = WorkScheduling::kOrdered;
    c.lockHoldCycles = 50;
    EXPECT_THROW(PipelineEngine{c}, std::invalid_argument);
}

// Counts packets that arrive with a lower sequence number than one already
// seen in their flow.
uint64_t
Reordered(const std::vector<PacketDesc>& departed)
{
    std::map<uint32_t, int64_t> highest;
    uint64_t errors = 0;
    for (const auto& d : departed)
    {
        auto it = highest.find(d.flow);
        if (it != highest.end() && d.seq < it->second)
        {
            ++errors;
        }
        else
        {
            highest[d.flow] = d.seq;
        }
    }
    return errors;
}

std::vector<PacketDesc>
RandomServiceRun(WorkScheduling mode, uint64_t seed)
{
    PipelineConfig c = Octeonish(8);
    c.scheduling = mode;
    c.egressBitRate = 40e9;
    PipelineEngine eng(c);
    RandomStream rng(seed);
    std::vector<PacketDesc> in(50000), out, drops;
    double t = 0;
    for (size_t i = 0; i < in.size(); ++i)
    {
        t += rng.Exponential(1e-6 / 8 / 0.8);
        in[i] = PacketDesc{};
        in[i].arrivalPs = static_cast<uint64_t>(t * 1e12);
        in[i].flow = static_cast<uint32_t>(i % 4);
        in[i].seq = static_cast<uint32_t>(i / 4);
        in[i].serviceCycles = static_cast<uint32_t>(rng.Exponential(1000));
        in[i].frameBytes = 64;
    }
    eng.Process(in.data(), in.size(), out, drops);
    eng.Flush(out);
    EXPECT_EQ(out.size(), in.size());
    return out;
}

TEST(Ordering, OrderedModeReleasesEachFlowInOrder)
{
    EXPECT_EQ(Reordered(RandomServiceRun(WorkScheduling::kOrdered, 5)), 0u);
    EXPECT_EQ(Reordered(RandomServiceRun(WorkScheduling::kAtomic, 5)), 0u);
    // The same traffic without ordering is reordered: the check can fail.
    EXPECT_GT(Reordered(RandomServiceRun(WorkScheduling::kUntagged, 5)), 100u);
}

TEST(Ordering, DeparturesLeaveInTimeOrder)
{
    std::vector<PacketDesc> out = RandomServiceRun(WorkScheduling::kUntagged, 6);
    for (size_t i = 1; i < out.size(); ++i)
    {
        ASSERT_LE(out[i - 1].departPs, out[i].departPs) << i;
    }
}

TEST(Drops, FullInputQueueDropsByReason)
{
    // One core of 1 us fed at 2 Mpps with room for 16 waiting packets: once
    // the queue is full, every other arrival finds it full. The core starts
    // one packet per us (t = 0, 1, 2, ... us), so by the last arrival at
    // t = (n-1)/2 us it has started n/2 packets; 16 more are waiting and
    // every other arrival is dropped.
    PipelineConfig c = SingleServer();
    c.clockHz = 1e9;
    c.inputQueueDepth = 16;
    const size_t n = 10000;
    PipelineEngine eng(c);
    std::vector<PacketDesc> in(n), out, drops;
    for (size_t i = 0; i < n; ++i)
    {
        in[i] = PacketDesc{};
        in[i].arrivalPs = i * 500000;
        in[i].serviceCycles = 1000;
        in[i].frameBytes = 64;
    }
    eng.Process(in.data(), n, out, drops);
    eng.Flush(out);
    // Admitted = the n/2 started by the last arrival + 16 waiting.
    const uint64_t admitted = n / 2 + 16;
    EXPECT_EQ(eng.Counters().drops[static_cast<size_t>(PipelineDrop::kInputQueueFull)],
              n - admitted);
    EXPECT_EQ(out.size(), admitted);
    ASSERT_FALSE(drops.empty());
    EXPECT_STREQ(PipelineDropName(static_cast<PipelineDrop>(drops[0].drop)), "input_queue_full");
    EXPECT_EQ(eng.Report().bottleneck, "cores");
}

TEST(Drops, RssCoreQueueOverflowAndDataPlaneVerdicts)
{
    PipelineConfig c = Octeonish(4);
    c.scheduling = WorkScheduling::kRss;
    c.coreQueueDepth = 8;
    PipelineEngine eng(c);
    std::vector<PacketDesc> in(4000), out, drops;
    for (size_t i = 0; i < in.size(); ++i)
    {
        in[i] = PacketDesc{};
        in[i].arrivalPs = i * 100000; // 10 Mpps, all one flow -> one core of 1 Mpps
        in[i].serviceCycles = 1000;
        in[i].frameBytes = 64;
        in[i].dpDrop = (i % 1000 == 0) ? DP_DROP_NO_ROUTE : DP_OK;
    }
    eng.Process(in.data(), in.size(), out, drops);
    eng.Flush(out);
    const auto& k = eng.Counters();
    EXPECT_GT(k.drops[static_cast<size_t>(PipelineDrop::kCoreQueueFull)], 3000u);
    EXPECT_EQ(k.drops[static_cast<size_t>(PipelineDrop::kDataPlane)], k.dpDrops[DP_DROP_NO_ROUTE]);
    EXPECT_GE(k.dpDrops[DP_DROP_NO_ROUTE], 1u);
    EXPECT_EQ(out.size() + drops.size(), in.size());
    // One flow under RSS loads one core only: the hottest core binds.
    EXPECT_EQ(eng.Report().bottleneck, "cores");
}

TEST(Latency, UnloadedPacketSeesFixedPlusServicePlusSerialization)
{
    PipelineConfig c = Octeonish(2);
    c.egressBitRate = 10e9;
    c.fixedLatencyPs = 100000000; // 100 us pipeline depth
    c.inputPpsCeiling = 50e6;     // ceilings limit rate, add no latency
    PipelineEngine eng(c);
    PacketDesc d{};
    d.arrivalPs = 1000;
    d.serviceCycles = 300; // 0.3 us
    d.frameBytes = 64;
    std::vector<PacketDesc> out, drops;
    eng.Process(&d, 1, out, drops);
    eng.Flush(out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].departPs - out[0].arrivalPs, 100000000u + 300000u + 67200u);
}

// Background work on an RSS core (a session table's aging sweep) is
// service without a packet: a packet arriving while it runs waits for it,
// the core's busy time counts it, the packet counters do not. Closed form
// at 1 GHz: work of 500 cycles at 1 us ends at 1.5 us; a packet of 300
// cycles arriving at 1.2 us starts at 1.5 us and leaves at 1.8 us (no
// egress stage); a packet on the other core does not wait.
TEST(Latency, CoreWorkDelaysOnlyThePacketsOfItsCore)
{
    PipelineConfig c;
    c.numCores = 2;
    c.clockHz = 1e9;
    c.scheduling = WorkScheduling::kRss;
    PipelineEngine eng(c);
    std::vector<PacketDesc> out, drops;
    EXPECT_EQ(eng.AddCoreWork(0, 1000000, 500), 1500000u);
    PacketDesc d{};
    d.serviceCycles = 300;
    d.frameBytes = 64;
    d.arrivalPs = 1200000;
    // a flow the RSS hash sends to each core, found with a fresh engine each
    uint32_t onCore0 = UINT32_MAX, onCore1 = UINT32_MAX;
    for (uint32_t f = 0; f < 64 && (onCore0 == UINT32_MAX || onCore1 == UINT32_MAX); ++f)
    {
        PipelineEngine one(c);
        PacketDesc p = d;
        p.flow = f;
        p.arrivalPs = 0;
        std::vector<PacketDesc> o, x;
        one.Process(&p, 1, o, x);
        one.Flush(o);
        (one.Report().coreUtilization[0] > 0 ? onCore0 : onCore1) = f;
    }
    ASSERT_NE(onCore0, UINT32_MAX);
    ASSERT_NE(onCore1, UINT32_MAX);
    PacketDesc a = d, b = d;
    a.flow = onCore0;
    b.flow = onCore1;
    eng.Process(&a, 1, out, drops);
    eng.Process(&b, 1, out, drops);
    eng.Flush(out);
    ASSERT_EQ(out.size(), 2u);
    for (const PacketDesc& p : out)
    {
        EXPECT_EQ(p.departPs, p.flow == onCore0 ? 1800000u : 1500000u) << p.flow;
    }
    EXPECT_EQ(eng.Counters().departed, 2u);
    EXPECT_NEAR(eng.Counters().sumServiceSeconds, 600e-9, 1e-15); // the packets' own service only
    EXPECT_THROW(PipelineEngine(PipelineConfig{}).AddCoreWork(0, 0, 1), std::logic_error); // not RSS
}

std::vector<PacketDesc>
Mixed(uint64_t seed)
{
    PipelineConfig c = Octeonish(6);
    c.scheduling = WorkScheduling::kAtomic;
    c.lockHoldCycles = 50;
    c.inputQueueDepth = 64;
    c.egressBitRate = 10e9;
    PipelineEngine eng(c);
    RandomStream rng(seed);
    std::vector<PacketDesc> in(20000), out, drops;
    double t = 0;
    for (auto& d : in)
    {
        t += rng.Exponential(1e-7);
        d = PacketDesc{};
        d.arrivalPs = static_cast<uint64_t>(t * 1e12);
        d.flow = static_cast<uint32_t>(rng.UniformInt(7));
        d.serviceCycles = static_cast<uint32_t>(rng.Exponential(500));
        d.frameBytes = static_cast<uint16_t>(64 + rng.UniformInt(1455));
    }
    eng.Process(in.data(), in.size(), out, drops);
    eng.Flush(out);
    out.insert(out.end(), drops.begin(), drops.end());
    return out;
}

TEST(Determinism, SameSeedGivesIdenticalResults)
{
    std::vector<PacketDesc> a = Mixed(42), b = Mixed(42), c = Mixed(43);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(PacketDesc)), 0);
    EXPECT_TRUE(a.size() != c.size() ||
                std::memcmp(a.data(), c.data(), a.size() * sizeof(PacketDesc)) != 0);
}

TEST(Config, RejectsBadFieldsByName)
{
    PipelineConfig c;
    c.numCores = 0;
    try
    {
        PipelineEngine e(c);
        FAIL() << "accepted 0 cores";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("numCores"), std::string::npos);
    }
    EXPECT_THROW(ParseWorkScheduling("fifo"), std::invalid_argument);
    EXPECT_EQ(ParseWorkScheduling("rss"), WorkScheduling::kRss);
}

} // namespace
