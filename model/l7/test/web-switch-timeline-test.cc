// The web switch's loss timeline (WebBenchTestbedResult::lossTimeline) under
// an open-loop overload of known rate against the switch's processor, whose
// capacity follows from the profile's price of an L4 packet: the SYNs it
// refuses, bin by bin, are the offered rate less what the processor can
// take; none before the backlog can have filled; every bin adds up to the
// run's counters.
#include "web-switch-testbed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace routertwin;

namespace
{

constexpr double kClockHz = 1e6;   // Nortel's 200 MHz slowed 200 times: the switch is the bottleneck
constexpr double kBacklogS = 0.01; // SynBacklogLimit
constexpr double kDurationS = 1.2;

WebBenchTestbedConfig
OpenLoopL4(double offeredRps, uint32_t bins)
{
    WebBenchTestbedConfig c;
    c.profile = LoadWebSwitchProfile(std::string(RT_SOURCE_DIR) + "/scenarios/platforms/nctu-nortel-ace180e.yaml");
    c.profile.clockHz = kClockHz;
    c.mode = "l4";
    c.forwarding = "nat";
    c.http11 = false;
    c.clientHosts = 14;
    c.servers = 2;
    // one small file, hosts with no CPU time: only the switch's processor is slow
    c.files = {{"CLASS_223.gif", 223, 1.0, "gif"}};
    c.arrivals = "constant";
    c.offeredRps = offeredRps;
    c.synBacklogLimitS = kBacklogS;
    c.warmupS = 0;
    c.durationS = kDurationS;
    c.drainS = 0.3;
    c.lossBins = bins;
    return c;
}

unsigned
Reason(const LossTimeline& t, const std::string& name)
{
    const auto& r = t.Reasons();
    const auto it = std::find(r.begin(), r.end(), name);
    EXPECT_NE(it, r.end()) << "no reason " << name;
    return static_cast<unsigned>(it - r.begin());
}

/// Bins of a timeline add up to the run's counters: each drop name's to the
/// switch's counter of it, the request rows to the window's refused and
/// unanswered requests.
void
ExpectBinsAddUpToCounters(const WebBenchTestbedResult& r)
{
    const LossTimeline& tl = r.lossTimeline;
    const std::vector<double> totals = tl.ReasonTotals();
    double drops = 0;
    for (const auto& [name, count] : r.drops)
    {
        EXPECT_EQ(totals[Reason(tl, name)], static_cast<double>(count)) << name;
        drops += static_cast<double>(count);
    }
    EXPECT_EQ(totals[Reason(tl, "request_refused")], static_cast<double>(r.refused));
    EXPECT_EQ(totals[Reason(tl, "request_unanswered")], static_cast<double>(r.unanswered));
    EXPECT_EQ(tl.Total(), drops + static_cast<double>(r.refused + r.unanswered));
}

} // namespace

// Line-rate arithmetic on the switch's one processor (C = 1e6 cycles/s): an
// accepted request costs c_acc cycles (its packets at the profile's 200
// cycles each, the only price of an L4 packet; measured at a light load
// where nothing waits or is refused), a refused one c_ref = 200 (its SYN
// read and dropped). Saturated, the processor is busy all the time, a
// c_acc + r c_ref = C with a + r = offered, so the refused rate is
// r = (offered c_acc - C) / (c_acc - c_ref) per second (the excess offered
// - C / c_acc, plus what the refusals' own reading takes from the
// accepted). A dropped SYN is not retried within the run (ns-3's SYN
// timeout, ConnTimeout, is 3 s), so each is one request, left unanswered,
// at its arrival.
//
// The run is binned twice: 240 bins of 5 ms (the start, and a bound each
// bin must keep) and 6 of 200 ms (the closed form, bin by bin). The
// saturated switch refuses in waves: while the backlog is over the limit
// every SYN is refused (the full arrival rate), then none while the
// accepted connections' later segments are served: at a 10 ms limit a
// wave is about 65 ms, some 37 ms refusing every SYN and 28 ms none (the
// refused share r / offered = 0.5625), so a 5 ms bin refuses none or all of
// its arrivals (but at a wave's edges), a 100 ms bin is within 7 % of the
// mean and a 200 ms bin, three waves, within 1 % (seen: 124 or 125 of
// 125).
TEST(WebSwitchTimeline, OverloadIsRefusedAtOfferedMinusCapacityInEveryBin)
{
    const WebBenchTestbedResult light = RunWebBenchTestbed(OpenLoopL4(50, 6));
    ASSERT_EQ(light.answered, light.offered);
    ASSERT_NEAR(static_cast<double>(light.offered), 50 * kDurationS, 1.0);
    ASSERT_EQ(light.drops.count("overload_syn_dropped"), 0u);
    EXPECT_EQ(light.lossTimeline.Total(), 0.0);
    const double cPacket = light.switchCyclesPerRequest / light.switchPacketsPerRequest;
    EXPECT_DOUBLE_EQ(cPacket, 200.0); // costs.l4_packet_cycles
    const double cAcc = light.switchCyclesPerRequest;
    const double cRef = cPacket;
    const double capacity = kClockHz / cAcc;
    ASSERT_GT(capacity, 300.0); // the host links (100 Mbit/s) and CPUs (none) far above it
    ASSERT_LT(capacity, 600.0);
    const double offered = 2 * capacity;
    const double refusedPerS = (offered * cAcc - kClockHz) / (cAcc - cRef);

    const WebBenchTestbedResult fine = RunWebBenchTestbed(OpenLoopL4(offered, 240));
    const WebBenchTestbedResult coarse = RunWebBenchTestbed(OpenLoopL4(offered, 6));
    for (const WebBenchTestbedResult* r : {&fine, &coarse})
    {
        // one port (the switch), loss_bins bins over warm-up + duration
        ASSERT_EQ(r->lossTimeline.Ports(), 1u);
        ASSERT_EQ(r->lossTimeline.Bins(), r == &fine ? 240u : 6u);
        EXPECT_DOUBLE_EQ(r->lossTimeline.BinSeconds(), kDurationS / r->lossTimeline.Bins());
        ExpectBinsAddUpToCounters(*r);
        EXPECT_EQ(r->refused, 0u); // nothing is reset: a refused SYN goes unanswered
        EXPECT_EQ(r->answered + r->unanswered, r->offered);
    }
    // the bin count changes the bins, not the run
    ASSERT_EQ(fine.drops, coarse.drops);
    ASSERT_GT(fine.drops.at("overload_syn_dropped"), 0u);

    const LossTimeline& f = fine.lossTimeline;
    const unsigned fSyn = Reason(f, "overload_syn_dropped");
    // Before the backlog can exceed the limit, nothing is refused: work
    // comes in at most at offered x c_acc / C seconds per second (each
    // request's whole price at its SYN) and leaves at 1, so the backlog
    // cannot pass kBacklogS before t_fill = kBacklogS / (offered c_acc / C - 1).
    const double fill = kBacklogS / (offered * cAcc / kClockHz - 1);
    unsigned quiet = 0;
    for (; (quiet + 1) * f.BinSeconds() <= fill; ++quiet)
    {
        EXPECT_EQ(f.At(0, quiet), 0.0) << "bin " << quiet << " ends before the backlog can fill (" << fill << " s)";
    }
    ASSERT_GE(quiet, 1u);
    // No bin refuses more SYNs than arrive in it: constant arrivals put
    // offered x 5 ms of them, to one, in each.
    for (unsigned b = 0; b < f.Bins(); ++b)
    {
        EXPECT_LE(f.At(0, b, fSyn), std::ceil(offered * f.BinSeconds())) << "bin " << b;
    }

    // Each 200 ms bin after the first (which holds the backlog's filling)
    // refuses r x 0.2 s SYNs to within 5 %; every 40 fine bins add up to
    // their coarse bin.
    const LossTimeline& g = coarse.lossTimeline;
    const unsigned gSyn = Reason(g, "overload_syn_dropped");
    const unsigned gUnanswered = Reason(g, "request_unanswered");
    const double perBin = refusedPerS * g.BinSeconds();
    for (unsigned b = 0; b < g.Bins(); ++b)
    {
        double fineSum = 0;
        for (unsigned k = 40 * b; k < 40 * (b + 1); ++k)
        {
            fineSum += f.At(0, k, fSyn);
        }
        EXPECT_EQ(g.At(0, b, gSyn), fineSum) << "bin " << b;
        if (b == 0)
        {
            EXPECT_GT(g.At(0, b, gSyn), 0.0);
            EXPECT_LT(g.At(0, b, gSyn), perBin);
            continue;
        }
        EXPECT_NEAR(g.At(0, b, gSyn), perBin, 0.05 * perBin) << "bin " << b;
        // the requests of those SYNs, at their arrival (the SYN reaches
        // the switch tens of microseconds later: at most one across an edge)
        EXPECT_NEAR(g.At(0, b, gUnanswered), g.At(0, b, gSyn), 1.0) << "bin " << b;
    }
    EXPECT_GT(coarse.switchUtilization, 0.98);
    EXPECT_NEAR(static_cast<double>(coarse.answered) / kDurationS, offered - refusedPerS,
                0.05 * (offered - refusedPerS));
}
