// Load-balancer schedulers (dp_sched.h) checked against independent truth:
// sequences recorded from a real HAProxy, brute-force references written
// here from the IPVS sources' and the Maglev paper's descriptions, closed
// forms for remapping, and the paper's balance bound.
#include "dp_sched.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

class Sched {
public:
    explicit Sched(dp_sched_config_t cfg)
    {
        size_t n = dp_sched_memory_size(&cfg);
        mem_.resize(n);
        s_ = dp_sched_create(mem_.data(), mem_.size(), &cfg);
    }
    Sched(dp_sched_algo_t algo, uint32_t max_servers, uint32_t table_size = 0, uint32_t flags = 0)
        : Sched(Config(algo, max_servers, table_size, flags))
    {
    }
    Sched(const Sched &o) : mem_(o.mem_.size())
    {
        s_ = dp_sched_clone(mem_.data(), mem_.size(), o.s_);
    }
    static dp_sched_config_t Config(dp_sched_algo_t algo, uint32_t max_servers, uint32_t table_size = 0,
                                    uint32_t flags = 0)
    {
        dp_sched_config_t c{};
        c.algo = algo;
        c.max_servers = max_servers;
        c.table_size = table_size;
        c.flags = flags;
        return c;
    }
    dp_sched_t *get() const { return s_; }
    void Add(uint32_t id, uint32_t weight, uint32_t maxconn = 0, uint32_t flags = 0, uint32_t slowstart_ms = 0)
    {
        dp_sched_server_t sv{};
        sv.weight = weight;
        sv.maxconn = maxconn;
        sv.flags = flags;
        sv.slowstart_ms = slowstart_ms;
        ASSERT_EQ(dp_sched_set_server(s_, id, &sv, nullptr), 0);
    }
    int32_t Pick(uint64_t now_ms = 0, const dp_sched_key_t *k = nullptr, dp_ops_t *ops = nullptr)
    {
        return dp_sched_pick(s_, k, now_ms, ops);
    }
    // Picks and counts the connection as opened (as a held connection).
    int32_t Open(uint64_t now_ms = 0, const dp_sched_key_t *k = nullptr)
    {
        int32_t id = Pick(now_ms, k);
        if (id >= 0)
            EXPECT_EQ(dp_sched_conn_opened(s_, uint32_t(id), nullptr), 0);
        return id;
    }
    void Close(uint32_t id) { EXPECT_EQ(dp_sched_conn_closed(s_, id, 0, nullptr), 0); }
    void State(uint32_t id, dp_sched_state_t st, uint64_t now_ms = 0)
    {
        ASSERT_EQ(dp_sched_set_state(s_, id, st, now_ms, nullptr), 0);
    }

private:
    std::vector<uint8_t> mem_;
    dp_sched_t *s_ = nullptr;
};

std::string Join(const std::vector<int32_t> &v)
{
    std::ostringstream o;
    for (size_t i = 0; i < v.size(); i++)
        o << (i ? " " : "") << v[i];
    return o.str();
}

dp_sched_key_t SrcKey(uint32_t src_ip)
{
    dp_sched_key_t k{};
    k.src_ip = src_ip;
    return k;
}

// ---- Sequences recorded from a real HAProxy --------------------------------
//
// Recorded with core/tests/haproxy_record.py from Debian bookworm's haproxy
// 2.6.12 (mode tcp, nbthread 1, servers in the recorder's own network namespace
// on 198.18.0.1 that answer their index, clients from 198.18.1.k;
// connections opened one after another; "held" ones stay open). The twin
// follows HAProxy's code (lb_fwrr.c, lb_map.c, lb_fwlc.c, lb_fas.c,
// lb_chash.c), so it must print the same numbers.

std::vector<int32_t> RoundTrips(dp_sched_algo_t algo, const std::vector<uint32_t> &w, int n)
{
    Sched s(algo, uint32_t(w.size()));
    for (size_t i = 0; i < w.size(); i++)
        s.Add(uint32_t(i), w[i]);
    std::vector<int32_t> out;
    for (int i = 0; i < n; i++)
        out.push_back(s.Pick());
    return out;
}

TEST(HaproxyRecorded, RoundrobinSequencesMatchHaproxy)
{
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {5, 1, 1}, 14)), "0 0 0 1 0 0 2 0 0 0 1 0 0 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {3, 2, 1}, 12)), "0 1 0 2 0 1 0 1 0 2 0 1");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {4, 3, 2, 1}, 20)),
              "0 1 0 2 1 0 3 0 1 2 0 1 0 2 1 0 3 0 1 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {2, 1}, 6)), "0 0 1 0 0 1");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {1, 1, 1}, 6)), "0 1 2 0 1 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {7, 3, 2}, 24)),
              "0 0 1 0 2 0 1 0 0 0 1 2 0 0 1 0 2 0 1 0 0 0 1 2");
}

// Roundrobin is not exact over every window of sum(weights) picks: for
// these weights real HAProxy itself drifts by a pick inside a window (its
// positions advance in eweight units with remainders, lb_fwrr.c
// fwrr_update_position). Recorded like the others; 3 * sum(weights) picks.
TEST(HaproxyRecorded, RoundrobinDriftWithinWindowsMatchesHaproxy)
{
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {2, 3, 13, 2}, 60)),
              "2 2 1 2 2 0 2 2 1 2 2 3 2 2 2 0 1 2 2 2 2 3 1 2 2 0 2 2 1 2 2 3 2 2 2 0 1 2 2 2 "
              "2 3 1 2 2 0 2 2 1 2 2 3 2 2 2 0 1 2 2 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {12, 16, 15}, 129)),
              "1 2 1 2 0 1 2 0 1 2 1 0 2 1 0 2 1 2 0 1 2 1 0 2 1 0 2 1 0 1 2 1 2 0 1 2 0 1 2 0 "
              "1 2 1 0 2 1 2 0 1 2 0 1 2 1 0 2 1 0 2 1 2 0 1 2 1 0 2 1 0 2 1 0 1 2 1 2 0 1 2 0 "
              "1 2 0 1 2 1 0 2 1 2 0 1 2 0 1 2 1 0 2 1 0 2 1 2 0 1 2 1 0 2 1 0 2 1 0 1 2 1 2 0 "
              "1 2 0 1 2 0 1 2 1");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_ROUNDROBIN, {9, 12, 13, 10}, 132)),
              "2 1 3 2 1 0 3 2 1 0 2 3 1 2 0 3 1 2 1 3 0 2 1 2 3 0 1 2 3 0 1 2 3 2 1 0 2 3 1 0 "
              "2 1 3 2 0 1 3 2 1 0 3 2 1 0 2 3 1 2 0 3 1 2 1 3 0 2 1 2 3 0 1 2 3 0 1 2 3 2 1 0 "
              "2 3 1 0 2 1 3 2 0 1 3 2 1 0 3 2 1 0 2 3 1 2 0 3 1 2 1 3 0 2 1 2 3 0 1 2 3 0 1 2 "
              "3 2 1 0 2 3 1 0 2 1 3 2");
}

TEST(HaproxyRecorded, StaticRrSequencesMatchHaproxy)
{
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {5, 1, 1}, 14)), "0 0 0 1 0 0 2 0 0 0 1 0 0 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {3, 2, 1}, 12)), "0 0 1 0 1 2 0 0 1 0 1 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {4, 3, 2, 1}, 20)),
              "0 1 0 1 2 0 1 0 2 3 0 1 0 1 2 0 1 0 2 3");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {2, 1}, 6)), "0 0 1 0 0 1");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {1, 1, 1}, 6)), "0 1 2 0 1 2");
    EXPECT_EQ(Join(RoundTrips(DP_SCHED_STATIC_RR, {7, 3, 2}, 24)),
              "0 0 1 0 1 2 0 0 0 1 0 2 0 0 1 0 1 2 0 0 0 1 0 2");
}

TEST(HaproxyRecorded, RoundrobinFollowsMaintenanceAndReady)
{
    Sched s(DP_SCHED_ROUNDROBIN, 3);
    s.Add(0, 3);
    s.Add(1, 2);
    s.Add(2, 1);
    std::vector<int32_t> out;
    for (int i = 0; i < 4; i++)
        out.push_back(s.Pick());
    s.State(0, DP_SCHED_DISABLED);
    for (int i = 0; i < 5; i++)
        out.push_back(s.Pick());
    s.State(0, DP_SCHED_UP);
    for (int i = 0; i < 12; i++)
        out.push_back(s.Pick());
    EXPECT_EQ(Join(out), "0 1 0 2 1 1 1 1 2 0 1 0 2 1 0 0 1 0 2 1 0");
}

TEST(HaproxyRecorded, RoundrobinFollowsSetWeight)
{
    Sched s(DP_SCHED_ROUNDROBIN, 3);
    s.Add(0, 3);
    s.Add(1, 2);
    s.Add(2, 1);
    std::vector<int32_t> out;
    for (int i = 0; i < 4; i++)
        out.push_back(s.Pick());
    s.Add(2, 4); // "set weight b/s2 4"
    for (int i = 0; i < 20; i++)
        out.push_back(s.Pick());
    EXPECT_EQ(Join(out), "0 1 0 2 0 1 2 0 2 1 0 2 2 0 1 2 0 2 1 0 2 2 0 1");
}

TEST(HaproxyRecorded, FirstBackupOnlyUnlessAllbackups)
{
    {
        Sched s(DP_SCHED_ROUNDROBIN, 3);
        s.Add(0, 1);
        s.Add(1, 1, 0, DP_SCHED_SRV_BACKUP);
        s.Add(2, 1, 0, DP_SCHED_SRV_BACKUP);
        std::vector<int32_t> out{s.Pick(), s.Pick()};
        s.State(0, DP_SCHED_DISABLED);
        for (int i = 0; i < 4; i++)
            out.push_back(s.Pick());
        EXPECT_EQ(Join(out), "0 0 1 1 1 1");
    }
    {
        Sched s(DP_SCHED_ROUNDROBIN, 3, 0, DP_SCHED_CFG_ALLBACKUPS);
        s.Add(0, 1);
        s.Add(1, 2, 0, DP_SCHED_SRV_BACKUP);
        s.Add(2, 1, 0, DP_SCHED_SRV_BACKUP);
        std::vector<int32_t> out{s.Pick(), s.Pick()};
        s.State(0, DP_SCHED_DISABLED);
        for (int i = 0; i < 6; i++)
            out.push_back(s.Pick());
        EXPECT_EQ(Join(out), "0 0 1 1 2 1 1 2");
    }
}

TEST(HaproxyRecorded, MaxconnSkipsSaturatedServers)
{
    {
        Sched s(DP_SCHED_ROUNDROBIN, 3);
        s.Add(0, 1, 2);
        s.Add(1, 1, 1);
        s.Add(2, 1);
        std::vector<int32_t> out;
        for (int i = 0; i < 6; i++)
            out.push_back(s.Open());
        EXPECT_EQ(Join(out), "0 1 2 0 2 2");
    }
    {
        Sched s(DP_SCHED_STATIC_RR, 3);
        s.Add(0, 2, 1);
        s.Add(1, 1);
        s.Add(2, 1);
        std::vector<int32_t> out;
        for (int i = 0; i < 6; i++)
            out.push_back(s.Open());
        EXPECT_EQ(Join(out), "0 1 2 1 2 1");
    }
    {
        Sched s(DP_SCHED_FIRST, 3);
        s.Add(0, 1, 2);
        s.Add(1, 1, 1);
        s.Add(2, 1, 3);
        std::vector<int32_t> held, out;
        for (int i = 0; i < 5; i++)
            out.push_back(s.Open());
        s.Close(uint32_t(out[0]));
        for (int i = 0; i < 2; i++)
            out.push_back(s.Open());
        EXPECT_EQ(Join(out), "0 0 1 2 2 0 2");
    }
}

TEST(HaproxyRecorded, LeastconnOrderMatchesHaproxy)
{
    {
        Sched s(DP_SCHED_LEASTCONN, 3);
        for (uint32_t i = 0; i < 3; i++)
            s.Add(i, 1);
        std::vector<int32_t> out;
        for (int i = 0; i < 5; i++)
            out.push_back(s.Open());
        s.Close(uint32_t(out[1]));
        for (int i = 0; i < 3; i++)
            out.push_back(s.Open());
        s.Close(uint32_t(out[0]));
        s.Close(uint32_t(out[4]));
        for (int i = 0; i < 4; i++)
            out.push_back(s.Open());
        EXPECT_EQ(Join(out), "0 1 2 0 1 2 1 0 1 2 0 1");
    }
    {
        Sched s(DP_SCHED_LEASTCONN, 3);
        s.Add(0, 3);
        s.Add(1, 2);
        s.Add(2, 1);
        std::vector<int32_t> out;
        for (int i = 0; i < 12; i++)
            out.push_back(s.Open());
        EXPECT_EQ(Join(out), "0 1 2 0 1 0 0 1 0 2 1 0");
    }
}

std::string SourceRun(uint32_t flags, const std::vector<uint32_t> &w, int maint = -1)
{
    Sched s(flags ? DP_SCHED_SOURCE_CONSISTENT : DP_SCHED_SOURCE, uint32_t(w.size()));
    for (size_t i = 0; i < w.size(); i++)
        s.Add(uint32_t(i), w[i]);
    if (maint >= 0)
        s.State(uint32_t(maint), DP_SCHED_DISABLED);
    std::vector<int32_t> out;
    for (uint32_t k = 1; k <= 40; k++) {
        dp_sched_key_t key = SrcKey(0xC6120100u + k); // 198.18.1.k
        out.push_back(s.Pick(0, &key));
    }
    return Join(out);
}

TEST(HaproxyRecorded, SourceMapBasedMatchesHaproxy)
{
    EXPECT_EQ(SourceRun(0, {1, 1, 1}), "2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2 0 1 2");
    EXPECT_EQ(SourceRun(0, {3, 2, 1}), "2 0 0 1 0 1 2 0 0 1 0 1 2 0 0 1 0 1 2 0 0 1 0 1 2 0 0 1 0 1 2 0 0 1 0 1 2 0 0 1");
    EXPECT_EQ(SourceRun(0, {1, 1, 1, 1}, 1),
              "3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0 2 3");
}

TEST(HaproxyRecorded, SourceConsistentMatchesHaproxy)
{
    EXPECT_EQ(SourceRun(1, {1, 1, 1}), "0 2 1 2 2 1 1 1 2 0 0 2 2 0 0 0 1 0 0 0 2 0 0 0 1 1 0 1 0 0 2 0 0 0 0 2 1 0 2 0");
    EXPECT_EQ(SourceRun(1, {3, 2, 1}), "0 0 0 1 0 1 1 1 0 0 0 1 1 0 0 0 1 0 0 0 0 0 0 0 1 0 0 1 0 0 1 0 0 0 0 2 0 0 0 0");
    EXPECT_EQ(SourceRun(1, {1, 1, 1, 1}, 1),
              "0 3 3 2 3 2 2 0 2 0 0 2 2 0 0 0 3 0 0 0 2 0 0 0 2 0 0 2 0 0 2 0 0 3 0 2 2 3 3 0");
}

// A server refuses connections while HAProxy keeps it UP (no checks);
// "retries 1" + "option redispatch": a request first goes where the pool
// says; when that is the dead server, the attempt counts as a connection on
// it until it fails (leastconn repositions it), and the retry is a
// redispatch, assign_server passing the dead server as the one to avoid. A
// retry that lands on the dead server again fails (-1). `held` keeps every
// served connection open (leastconn, first).
std::string RedispatchRun(Sched &s, uint32_t dead, int n, bool held, uint32_t src0 = 0)
{
    std::vector<int32_t> out;
    for (int i = 0; i < n; i++) {
        dp_sched_key_t key = SrcKey(src0 ? src0 + uint32_t(i) : 0);
        int32_t id = s.Pick(0, src0 ? &key : nullptr);
        if (id == int32_t(dead)) {
            EXPECT_EQ(dp_sched_conn_opened(s.get(), dead, nullptr), 0);
            s.Close(dead);
            id = dp_sched_pick_avoid(s.get(), src0 ? &key : nullptr, int32_t(dead), 0, nullptr);
            if (id == int32_t(dead))
                id = -1;
        }
        if (held && id >= 0)
            EXPECT_EQ(dp_sched_conn_opened(s.get(), uint32_t(id), nullptr), 0);
        out.push_back(id);
    }
    return Join(out);
}

Sched Weighted(dp_sched_algo_t algo, const std::vector<uint32_t> &w, const std::vector<uint32_t> &maxconn = {})
{
    Sched s(algo, uint32_t(w.size()));
    for (size_t i = 0; i < w.size(); i++)
        s.Add(uint32_t(i), w[i], maxconn.empty() ? 0 : maxconn[i]);
    return s;
}

TEST(HaproxyRecorded, RedispatchAvoidsTheFailedServer)
{
    Sched rr321 = Weighted(DP_SCHED_ROUNDROBIN, {3, 2, 1});
    EXPECT_EQ(RedispatchRun(rr321, 0, 12, false), "1 2 1 1 2 1 1 2 1 1 2 1");
    Sched rr111 = Weighted(DP_SCHED_ROUNDROBIN, {1, 1, 1});
    EXPECT_EQ(RedispatchRun(rr111, 1, 9, false), "0 2 0 2 0 2 0 2 0");
    Sched rr4321 = Weighted(DP_SCHED_ROUNDROBIN, {4, 3, 2, 1});
    EXPECT_EQ(RedispatchRun(rr4321, 2, 20, false), "0 1 0 1 0 3 0 1 0 1 0 1 0 3 0 1 0 1 0 1");
    Sched srr = Weighted(DP_SCHED_STATIC_RR, {3, 2, 1});
    EXPECT_EQ(RedispatchRun(srr, 0, 12, false), "1 1 2 1 1 2 1 1 2 1 1 2");
    Sched lc = Weighted(DP_SCHED_LEASTCONN, {1, 1, 1});
    EXPECT_EQ(RedispatchRun(lc, 0, 8, true), "1 2 1 2 1 2 1 2");
    // first: s1 and s2 fill up; then only the dead s0 has room, and the
    // redispatch returns it (the one it avoids): the request fails.
    Sched first = Weighted(DP_SCHED_FIRST, {1, 1, 1}, {2, 1, 3});
    EXPECT_EQ(RedispatchRun(first, 0, 5, true), "1 2 2 2 -1");
}

TEST(HaproxyRecorded, RedispatchOnSourceHashMapBasedReturnsToTheFailedServer)
{
    // map_get_server_hash ignores the server to avoid: every client of s1 fails.
    Sched map = Weighted(DP_SCHED_SOURCE, {1, 1, 1});
    EXPECT_EQ(RedispatchRun(map, 1, 40, false, 0xC6120101u),
              "2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2 0 -1 2");
    // chash_get_server_hash walks the ring on past it.
    Sched ring = Weighted(DP_SCHED_SOURCE_CONSISTENT, {1, 1, 1});
    EXPECT_EQ(RedispatchRun(ring, 1, 40, false, 0xC6120101u),
              "0 2 0 2 2 0 0 2 2 0 0 2 2 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0 0 0 2 0 0 0 0 2 0 0 2 0");
}

// ---- Weighted shares -------------------------------------------------------

std::vector<uint32_t> RandomWeights(std::mt19937 &rng, size_t n, uint32_t maxw)
{
    std::vector<uint32_t> w(n);
    for (auto &x : w)
        x = 1 + rng() % maxw;
    return w;
}

// IPVS wrr and HAProxy static-rr give every server exactly its weight in
// each cycle of sum(weights) picks (wrr: mw/di passes of the list; static-rr:
// one walk of the map, which holds weight/gcd slots per server).
TEST(WeightedShares, WrrAndStaticRrExactOverEachCycle)
{
    std::mt19937 rng(7);
    for (dp_sched_algo_t algo : {DP_SCHED_WRR, DP_SCHED_STATIC_RR}) {
        for (int trial = 0; trial < 200; trial++) {
            auto w = RandomWeights(rng, 2 + rng() % 7, 1 + rng() % 40);
            uint32_t W = 0;
            for (auto x : w)
                W += x;
            Sched s(algo, uint32_t(w.size()));
            for (size_t i = 0; i < w.size(); i++)
                s.Add(uint32_t(i), w[i]);
            std::vector<uint32_t> cnt(w.size());
            for (uint32_t p = 1; p <= 3 * W; p++) {
                int32_t id = s.Pick();
                ASSERT_GE(id, 0);
                cnt[size_t(id)]++;
                if (p % W == 0)
                    for (size_t i = 0; i < w.size(); i++)
                        ASSERT_EQ(cnt[i], p / W * w[i]) << dp_sched_algo_name(algo) << " trial " << trial;
            }
        }
    }
}

// HAProxy roundrobin: exact shares per cycle whenever HAProxy has them (the
// recorded cases above, and every equal-weight pool), and in general a
// bounded drift: no server is ever more than 2 picks away from its ideal
// share p * w / W, so long-run shares equal the weights. (Real HAProxy
// drifts too: RoundrobinDriftWithinWindowsMatchesHaproxy.)
TEST(WeightedShares, RoundrobinDriftIsBoundedAndCyclesOfEqualWeightsAreExact)
{
    std::mt19937 rng(11);
    double worst = 0;
    for (int trial = 0; trial < 300; trial++) {
        auto w = RandomWeights(rng, 2 + rng() % 7, 1 + rng() % 60);
        if (trial % 5 == 0)
            std::fill(w.begin(), w.end(), w[0]);
        uint32_t W = 0;
        for (auto x : w)
            W += x;
        Sched s(DP_SCHED_ROUNDROBIN, uint32_t(w.size()));
        for (size_t i = 0; i < w.size(); i++)
            s.Add(uint32_t(i), w[i]);
        std::vector<uint32_t> cnt(w.size());
        for (uint32_t p = 1; p <= 4 * W; p++) {
            cnt[size_t(s.Pick())]++;
            for (size_t i = 0; i < w.size(); i++) {
                double d = std::abs(double(cnt[i]) - double(p) * w[i] / W);
                worst = std::max(worst, d);
                ASSERT_LT(d, 2.0) << "trial " << trial;
            }
            if (trial % 5 == 0 && p % W == 0)
                for (size_t i = 0; i < w.size(); i++)
                    ASSERT_EQ(cnt[i], p / W * w[i]);
        }
    }
    RecordProperty("worst_drift", std::to_string(worst));
}

// Nginx-style smooth weighted round robin, brute force: every pick adds each
// weight to its server's score, takes the highest score, subtracts the
// total from it. HAProxy's roundrobin is not this algorithm: both are
// smooth, they agree on some pools and differ on others (5,1,1 below, where
// HAProxy itself was recorded).
std::vector<int32_t> SmoothWrr(const std::vector<uint32_t> &w, int picks)
{
    std::vector<int64_t> cur(w.size());
    int64_t tot = 0;
    for (auto x : w)
        tot += x;
    std::vector<int32_t> out;
    for (int p = 0; p < picks; p++) {
        size_t best = 0;
        for (size_t i = 0; i < w.size(); i++) {
            cur[i] += w[i];
            if (cur[i] > cur[best])
                best = i;
        }
        cur[best] -= tot;
        out.push_back(int32_t(best));
    }
    return out;
}

TEST(WeightedShares, RoundrobinAgreesWithSmoothWrrOnlyWhereHaproxyDoes)
{
    for (auto w : std::vector<std::vector<uint32_t>>{{1, 1, 1}, {4, 4}, {1, 1, 1, 1, 1}})
        EXPECT_EQ(RoundTrips(DP_SCHED_ROUNDROBIN, w, 30), SmoothWrr(w, 30));
    // Recorded HAProxy 2.6: 2,1 -> 0 0 1 and 5,1,1 -> 0 0 0 1 0 0 2, where
    // smooth WRR gives 0 1 0 and 0 0 1 0 2 0 0.
    EXPECT_EQ(Join(SmoothWrr({2, 1}, 3)), "0 1 0");
    EXPECT_EQ(Join(SmoothWrr({5, 1, 1}, 7)), "0 0 1 0 2 0 0");
    EXPECT_NE(RoundTrips(DP_SCHED_ROUNDROBIN, {2, 1}, 3), SmoothWrr({2, 1}, 3));
    EXPECT_NE(RoundTrips(DP_SCHED_ROUNDROBIN, {5, 1, 1}, 7), SmoothWrr({5, 1, 1}, 7));
    // Smooth WRR's drift is below 1 pick; HAProxy's below 2 (test above).
    std::mt19937 rng(3);
    for (int trial = 0; trial < 100; trial++) {
        auto w = RandomWeights(rng, 2 + rng() % 6, 30);
        uint32_t W = 0;
        for (auto x : w)
            W += x;
        auto seq = SmoothWrr(w, int(2 * W));
        std::vector<uint32_t> cnt(w.size());
        for (size_t p = 0; p < seq.size(); p++) {
            cnt[size_t(seq[p])]++;
            for (size_t i = 0; i < w.size(); i++)
                ASSERT_LT(std::abs(double(cnt[i]) - double(p + 1) * w[i] / W), 1.0);
        }
    }
}

// ---- IPVS against brute-force references -----------------------------------

// The IPVS destination list as ip_vs_ctl.c keeps it: a destination added (or
// brought back) goes to the head.
struct IpvsModel {
    std::vector<uint32_t> list;
    std::map<uint32_t, uint32_t> weight, active, inactive, maxconn;
    std::set<uint32_t> overload;
    void Add(uint32_t id) { list.insert(list.begin(), id); }
    void Remove(uint32_t id) { list.erase(std::find(list.begin(), list.end(), id)); }
    bool Available(uint32_t id) const { return weight.at(id) > 0 && !overload.count(id); }
};

TEST(IpvsReference, LcAndWlcAreTheArgminOfTheOverhead)
{
    std::mt19937 rng(5);
    for (dp_sched_algo_t algo : {DP_SCHED_LC, DP_SCHED_WLC}) {
        for (int trial = 0; trial < 300; trial++) {
            uint32_t n = 1 + rng() % 12;
            Sched s(algo, n);
            IpvsModel m;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t w = rng() % 4 == 0 ? 0 : 1 + rng() % 50;
                s.Add(i, w);
                m.Add(i);
                m.weight[i] = w;
                uint32_t a = rng() % 20, in = rng() % 300;
                for (uint32_t k = 0; k < a + in; k++)
                    ASSERT_EQ(dp_sched_conn_opened(s.get(), i, nullptr), 0);
                for (uint32_t k = 0; k < in; k++)
                    ASSERT_EQ(dp_sched_conn_to_inactive(s.get(), i, nullptr), 0);
                m.active[i] = a;
                m.inactive[i] = in;
            }
            // Reference: the smallest overhead (active * 256 + inactive),
            // divided by the weight for wlc, compared exactly as fractions;
            // the first in list order among equals.
            int64_t best = -1;
            for (uint32_t id : m.list) {
                if (m.weight[id] == 0)
                    continue;
                if (best < 0) {
                    best = id;
                    continue;
                }
                uint64_t oh = uint64_t(m.active[id]) * 256 + m.inactive[id];
                uint64_t ob = uint64_t(m.active[uint32_t(best)]) * 256 + m.inactive[uint32_t(best)];
                bool less = algo == DP_SCHED_LC ? oh < ob : oh * m.weight[uint32_t(best)] < ob * m.weight[id];
                if (less)
                    best = id;
            }
            dp_ops_t ops{};
            int32_t got = s.Pick(0, nullptr, &ops);
            EXPECT_EQ(got, best < 0 ? DP_SCHED_ENOSERVER : int32_t(best)) << "trial " << trial;
            EXPECT_EQ(ops.servers_examined, n);
        }
    }
}

TEST(IpvsReference, RrWalksTheListFromItsCursorSkippingQuiesced)
{
    std::mt19937 rng(9);
    for (int trial = 0; trial < 100; trial++) {
        uint32_t n = 1 + rng() % 10;
        Sched s(DP_SCHED_RR, n);
        IpvsModel m;
        for (uint32_t i = 0; i < n; i++) {
            s.Add(i, 1);
            m.Add(i);
            m.weight[i] = 1;
        }
        int cursor = -1; // index in m.list of the last pick, -1 = head
        for (int step = 0; step < 60; step++) {
            if (rng() % 6 == 0) {
                uint32_t id = rng() % n;
                bool in = std::find(m.list.begin(), m.list.end(), id) != m.list.end();
                if (in) {
                    // Down: leaves the list; a cursor at or after it moves up.
                    int k = int(std::find(m.list.begin(), m.list.end(), id) - m.list.begin());
                    s.State(id, DP_SCHED_DOWN);
                    m.Remove(id);
                    if (k <= cursor)
                        cursor--;
                } else {
                    s.State(id, DP_SCHED_UP);
                    m.Add(id);
                    if (cursor >= 0)
                        cursor++;
                }
                continue;
            }
            if (rng() % 7 == 0) {
                uint32_t id = rng() % n;
                uint32_t w = m.weight[id] ? 0 : 1;
                s.Add(id, w);
                m.weight[id] = w;
                continue;
            }
            int32_t want = DP_SCHED_ENOSERVER;
            int L = int(m.list.size());
            for (int k = 1; k <= L; k++) {
                int idx = cursor < 0 ? k - 1 : (cursor + k) % L;
                if (cursor < 0 && k > L)
                    break;
                if (m.Available(m.list[size_t(idx)])) {
                    want = int32_t(m.list[size_t(idx)]);
                    cursor = idx;
                    break;
                }
            }
            ASSERT_EQ(s.Pick(), want) << "trial " << trial << " step " << step;
        }
    }
}

TEST(IpvsReference, OverloadSetsAtMaxconnAndClearsBelowThreeQuarters)
{
    Sched s(DP_SCHED_WLC, 2);
    s.Add(0, 1, 4);
    s.Add(1, 1);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(dp_sched_conn_opened(s.get(), 0, nullptr), 0);
    dp_sched_server_info_t info{};
    ASSERT_EQ(dp_sched_get_server(s.get(), 0, &info), 0);
    EXPECT_EQ(info.overloaded, 1u);
    EXPECT_EQ(s.Pick(), 1);
    s.Close(0); // 3 left: 3 * 4 < 4 * 3 is false, still overloaded
    ASSERT_EQ(dp_sched_get_server(s.get(), 0, &info), 0);
    EXPECT_EQ(info.overloaded, 1u);
    s.Close(0); // 2 left: 8 < 12
    ASSERT_EQ(dp_sched_get_server(s.get(), 0, &info), 0);
    EXPECT_EQ(info.overloaded, 0u);
}

// ---- Maglev ------------------------------------------------------------------

// Pseudocode 1 fills the table round by round, one entry per backend per
// round, so with equal weights every backend owns floor(M/N) or ceil(M/N)
// entries: the paper's "each backend gets almost the same number of entries".
TEST(Maglev, EqualWeightsGiveFloorOrCeilOfMOverN)
{
    for (uint32_t n : {1u, 7u, 96u, 300u}) {
        uint32_t M = n <= 655 ? 65537u : 0u;
        Sched s(DP_SCHED_MAGLEV, n, M);
        for (uint32_t i = 0; i < n; i++)
            s.Add(i, 1);
        dp_ops_t ops{};
        dp_sched_build(s.get(), 0, &ops);
        ASSERT_EQ(dp_sched_table_size(s.get()), 65537u);
        EXPECT_EQ(ops.table_writes, 65537u);
        std::vector<uint32_t> cnt(n);
        for (uint32_t i = 0; i < 65537; i++) {
            int32_t e = dp_sched_table_entry(s.get(), i);
            ASSERT_GE(e, 0);
            cnt[size_t(e)]++;
        }
        for (uint32_t i = 0; i < n; i++) {
            EXPECT_GE(cnt[i], 65537 / n);
            EXPECT_LE(cnt[i], (65537 + n - 1) / n);
            dp_sched_server_info_t info{};
            ASSERT_EQ(dp_sched_get_server(s.get(), i, &info), 0);
            EXPECT_EQ(info.table_entries, cnt[i]);
        }
    }
}

// Weights as proportional turns: weight w takes w/gcd consecutive entries
// per round, so shares follow the weights within one round's worth.
TEST(Maglev, WeightsGiveProportionalShares)
{
    Sched s(DP_SCHED_MAGLEV, 4);
    uint32_t w[4] = {1, 2, 3, 4};
    for (uint32_t i = 0; i < 4; i++)
        s.Add(i, w[i]);
    dp_sched_build(s.get(), 0, nullptr);
    std::vector<uint32_t> cnt(4);
    for (uint32_t i = 0; i < 65537; i++)
        cnt[size_t(dp_sched_table_entry(s.get(), i))]++;
    for (uint32_t i = 0; i < 4; i++)
        EXPECT_NEAR(double(cnt[i]), 65537.0 * w[i] / 10.0, 4.0);
}

// Disruption: removing one of 96 backends moves its own entries and only a
// small number of others' (Maglev is "minimal disruption" only roughly,
// section 3.4; measured here: about 0.5% of the table besides the removed
// backend's 1/96 = 1.04%). A draining backend keeps its entries (IPVS mh's
// last_weight), so draining moves nothing.
TEST(Maglev, RemovingOneOf96MovesLittleBeyondItsOwnEntries)
{
    Sched s(DP_SCHED_MAGLEV, 96);
    for (uint32_t i = 0; i < 96; i++)
        s.Add(i, 1);
    dp_sched_build(s.get(), 0, nullptr);
    for (uint32_t victim : {0u, 17u, 95u}) {
        Sched down(s), drain(s), removed(s);
        dp_sched_server_info_t info{};
        ASSERT_EQ(dp_sched_get_server(s.get(), victim, &info), 0);
        down.State(victim, DP_SCHED_DOWN);
        removed.get();
        ASSERT_EQ(dp_sched_remove_server(removed.get(), victim, nullptr), 0);
        drain.State(victim, DP_SCHED_DRAINING);
        uint32_t changed = dp_sched_count_table_changes(s.get(), down.get());
        EXPECT_EQ(changed, dp_sched_count_table_changes(s.get(), removed.get()));
        EXPECT_GE(changed, info.table_entries);
        EXPECT_LT(changed - info.table_entries, 65537u / 100u) << "victim " << victim;
        EXPECT_EQ(dp_sched_count_table_changes(s.get(), drain.get()), 0u);
        // Every entry not of the victim before and changed after is a
        // genuine disruption; none of the victim's entries survive.
        for (uint32_t i = 0; i < 65537; i++)
            if (dp_sched_table_entry(s.get(), i) == int32_t(victim))
                ASSERT_NE(dp_sched_table_entry(down.get(), i), int32_t(victim));
    }
}

TEST(Maglev, TableSizeMustBeAPrimeOfAtLeast100PerServer)
{
    dp_sched_config_t c = Sched::Config(DP_SCHED_MAGLEV, 96, 65536);
    EXPECT_EQ(dp_sched_memory_size(&c), 0u);
    c.table_size = 9587; // prime, but < 9600
    EXPECT_EQ(dp_sched_memory_size(&c), 0u);
    c.table_size = 9601; // prime >= 9600
    EXPECT_GT(dp_sched_memory_size(&c), 0u);
    c.table_size = 0;
    c.max_servers = 1000; // default becomes the smallest prime >= 100000
    Sched s(c);
    dp_sched_config_t got{};
    dp_sched_get_config(s.get(), &got);
    EXPECT_EQ(got.table_size, 100003u);
}

TEST(Maglev, LookupCountsItsHashesAndProbes)
{
    Sched s(DP_SCHED_MAGLEV, 8, 0, DP_SCHED_CFG_FALLBACK);
    for (uint32_t i = 0; i < 8; i++)
        s.Add(i, 1);
    dp_sched_key_t k{};
    k.src_ip = 0x0a000001;
    k.dst_ip = 0x0a000002;
    k.src_port = 1234;
    k.dst_port = 80;
    k.proto = 6;
    dp_ops_t ops{};
    int32_t id = s.Pick(0, &k, &ops);
    ASSERT_GE(id, 0);
    EXPECT_EQ(ops.hashes, 2u); // dp_flow_hash of the 5-tuple + the slot hash
    EXPECT_EQ(ops.table_probes, 1u);
    EXPECT_EQ(ops.servers_examined, 1u);
    // Draining the chosen backend keeps its slots; with fallback the key
    // walks on to another backend.
    s.State(uint32_t(id), DP_SCHED_DRAINING);
    dp_ops_t ops2{};
    int32_t id2 = s.Pick(0, &k, &ops2);
    EXPECT_GE(id2, 0);
    EXPECT_NE(id2, id);
    EXPECT_GE(ops2.table_probes, 2u);
    EXPECT_EQ(ops2.hashes, ops2.table_probes + 1);
}

// ---- Remapping when the server set changes ---------------------------------

std::vector<dp_sched_key_t> SrcKeys(uint32_t first, uint32_t n)
{
    std::vector<dp_sched_key_t> keys;
    for (uint32_t i = 0; i < n; i++)
        keys.push_back(SrcKey(first + i));
    return keys;
}

// Map-based hashing (HAProxy source, map-based): the map of N equal weights
// is [s0 .. s(N-1)] and the key is the address mod N. Removing the last
// server changes the modulus, so over one full period N(N-1) of consecutive
// addresses exactly N-1 keep their server: (N-1)/N of the keys move.
TEST(Remap, SourceMapBasedMovesNMinus1OverN)
{
    for (uint32_t n : {3u, 8u, 96u}) {
        Sched s(DP_SCHED_SOURCE, n);
        for (uint32_t i = 0; i < n; i++)
            s.Add(i, 1);
        dp_sched_build(s.get(), 0, nullptr);
        Sched after(s);
        after.State(n - 1, DP_SCHED_DOWN);
        auto keys = SrcKeys(0x0a000000u, n * (n - 1)); // 10.0.0.0 is a multiple of N(N-1)? not needed:
        uint32_t moved = 0;                             // any N(N-1) consecutive values form a period
        ASSERT_EQ(dp_sched_count_remapped(s.get(), after.get(), keys.data(), uint32_t(keys.size()), &moved,
                                          nullptr),
                  0);
        EXPECT_EQ(moved, (n - 1) * (n - 1)) << "n " << n;
    }
}

// Consistent hashing (HAProxy lb_chash.c): a key goes to the ring node
// closest to its hash, so removing a server moves exactly the keys that
// were on it.
TEST(Remap, SourceConsistentMovesOnlyTheRemovedServersKeys)
{
    Sched s(DP_SCHED_SOURCE_CONSISTENT, 96);
    for (uint32_t i = 0; i < 96; i++)
        s.Add(i, 1);
    dp_sched_build(s.get(), 0, nullptr);
    auto keys = SrcKeys(0x0a000000u, 20000);
    uint32_t on_victim = 0;
    for (auto &k : keys)
        on_victim += dp_sched_lookup(s.get(), &k, nullptr) == 40;
    Sched after(s);
    after.State(40, DP_SCHED_DOWN);
    uint32_t moved = 0;
    ASSERT_EQ(dp_sched_count_remapped(s.get(), after.get(), keys.data(), 20000, &moved, nullptr), 0);
    EXPECT_EQ(moved, on_victim);
    EXPECT_NEAR(double(moved) / 20000.0, 1.0 / 96.0, 0.01);
}

// IPVS sh: the list fills the buckets in order, weight buckets each. A
// closed form of the fill (bucket i holds list[i mod N] for weight 1) tells
// exactly which buckets change when one destination leaves the list.
TEST(Remap, ShBucketsChangeAsTheListFillPredicts)
{
    for (uint32_t n : {5u, 96u}) {
        Sched s(DP_SCHED_SH, n);
        for (uint32_t i = 0; i < n; i++)
            s.Add(i, 1);
        dp_sched_build(s.get(), 0, nullptr);
        std::vector<uint32_t> list;
        for (uint32_t i = n; i-- > 0;)
            list.push_back(i); // added 0..n-1, each at the head
        for (uint32_t b = 0; b < 256; b++)
            ASSERT_EQ(dp_sched_table_entry(s.get(), b), int32_t(list[b % n]));
        uint32_t victim = n / 2;
        Sched after(s);
        after.State(victim, DP_SCHED_DOWN);
        std::vector<uint32_t> list2 = list;
        list2.erase(std::find(list2.begin(), list2.end(), victim));
        uint32_t want = 0;
        for (uint32_t b = 0; b < 256; b++)
            want += list[b % n] != list2[b % (n - 1)];
        EXPECT_EQ(dp_sched_count_table_changes(s.get(), after.get()), want);
    }
}

// The comparison: 1 of 96 servers fails. Maglev and consistent
// hashing move about 1/96 of the keys (the failed server's, plus Maglev's
// small disruption), IPVS sh and map-based source hashing move most keys,
// and round robin, which maps no key, keeps every connection the session
// table holds except the failed server's own (1/96).
TEST(Remap, OneOf96FailsMaglevVersusSourceHashVersusRoundRobin)
{
    const uint32_t n = 96, nkeys = 96 * 95 * 4;
    std::vector<dp_sched_key_t> keys;
    std::mt19937 rng(96);
    for (uint32_t i = 0; i < nkeys; i++) {
        dp_sched_key_t k{};
        k.src_ip = rng();
        k.dst_ip = 0xc0a80001u;
        k.src_port = uint16_t(rng());
        k.dst_port = 80;
        k.proto = 6;
        keys.push_back(k);
    }
    std::map<std::string, double> frac;
    for (dp_sched_algo_t algo : {DP_SCHED_MAGLEV, DP_SCHED_SH, DP_SCHED_SOURCE, DP_SCHED_SOURCE_CONSISTENT}) {
        Sched s(algo, n);
        for (uint32_t i = 0; i < n; i++)
            s.Add(i, 1);
        dp_sched_build(s.get(), 0, nullptr);
        Sched after(s);
        after.State(13, DP_SCHED_DOWN);
        uint32_t moved = 0;
        ASSERT_EQ(dp_sched_count_remapped(s.get(), after.get(), keys.data(), nkeys, &moved, nullptr), 0);
        frac[dp_sched_algo_name(algo)] = double(moved) / nkeys;
        RecordProperty(std::string("moved_") + dp_sched_algo_name(algo), std::to_string(moved));
    }
    EXPECT_LT(frac["maglev"], 0.02);
    EXPECT_GT(frac["maglev"], 1.0 / 96 - 0.003);
    EXPECT_NEAR(frac["source-consistent"], 1.0 / 96, 0.004);
    // sh: bucket b held list[b mod 96] (weight 1, list newest first), and
    // holds list'[b mod 95] after id 13 leaves; keys spread evenly over the
    // buckets (hash_32), so the moved fraction is the changed buckets'.
    std::vector<uint32_t> list, list2;
    for (uint32_t i = n; i-- > 0;)
        list.push_back(i);
    list2 = list;
    list2.erase(std::find(list2.begin(), list2.end(), 13u));
    uint32_t changed = 0;
    for (uint32_t b = 0; b < 256; b++)
        changed += list[b % n] != list2[b % (n - 1)];
    EXPECT_NEAR(frac["sh"], changed / 256.0, 0.02);
    EXPECT_GT(frac["sh"], 0.5);
    EXPECT_NEAR(frac["source"], 95.0 / 96.0, 0.01);
    Sched rr(DP_SCHED_RR, n);
    for (uint32_t i = 0; i < n; i++)
        rr.Add(i, 1);
    Sched rr2(rr);
    uint32_t moved = 0;
    EXPECT_EQ(dp_sched_count_remapped(rr.get(), rr2.get(), keys.data(), nkeys, &moved, nullptr),
              DP_SCHED_ENOTKEYED);
}

// ---- Pool state --------------------------------------------------------------

const dp_sched_algo_t kAll[] = {DP_SCHED_RR,        DP_SCHED_WRR,      DP_SCHED_LC,        DP_SCHED_WLC,
                                DP_SCHED_SH,        DP_SCHED_MAGLEV,   DP_SCHED_ROUNDROBIN, DP_SCHED_STATIC_RR,
                                DP_SCHED_LEASTCONN, DP_SCHED_FIRST,    DP_SCHED_SOURCE,    DP_SCHED_SOURCE_CONSISTENT,
                                DP_SCHED_RANDOM};

TEST(PoolState, DrainingServerGetsNoNewPicksButKeepsItsCount)
{
    for (dp_sched_algo_t algo : kAll) {
        Sched s(algo, 4);
        for (uint32_t i = 0; i < 4; i++)
            s.Add(i, 1);
        for (uint32_t i = 0; i < 4; i++)
            for (int c = 0; c < 3; c++)
                ASSERT_EQ(dp_sched_conn_opened(s.get(), i, nullptr), 0);
        s.State(2, DP_SCHED_DRAINING);
        for (uint32_t k = 0; k < 400; k++) {
            dp_sched_key_t key = SrcKey(0x0a000000u + k * 7919u);
            key.src_port = uint16_t(k);
            int32_t id = s.Pick(0, &key);
            EXPECT_NE(id, 2) << dp_sched_algo_name(algo);
        }
        dp_sched_server_info_t info{};
        ASSERT_EQ(dp_sched_get_server(s.get(), 2, &info), 0);
        EXPECT_EQ(info.active, 3u);
        EXPECT_EQ(info.usable, 0u);
        EXPECT_EQ(dp_sched_conn_closed(s.get(), 2, 0, nullptr), 0);
    }
}

TEST(PoolState, NoUsableServerReturnsTheError)
{
    for (dp_sched_algo_t algo : kAll) {
        Sched empty(algo, 3);
        EXPECT_EQ(empty.Pick(), DP_SCHED_ENOSERVER) << dp_sched_algo_name(algo);
        Sched s(algo, 3);
        for (uint32_t i = 0; i < 3; i++)
            s.Add(i, 1);
        s.State(0, DP_SCHED_DOWN);
        s.State(1, DP_SCHED_DISABLED);
        s.State(2, DP_SCHED_DRAINING);
        for (uint32_t k = 0; k < 50; k++) {
            dp_sched_key_t key = SrcKey(k * 2654435761u);
            EXPECT_EQ(s.Pick(0, &key), DP_SCHED_ENOSERVER) << dp_sched_algo_name(algo);
        }
        Sched z(algo, 2);
        z.Add(0, 0);
        z.Add(1, 0);
        EXPECT_EQ(z.Pick(), DP_SCHED_ENOSERVER) << dp_sched_algo_name(algo);
    }
}

// Servers at maxconn get nothing new (HAProxy and IPVS alike; HAProxy's
// hash algorithms return the server anyway, to queue on it, unless
// hash-preserve-affinity maxconn).
TEST(PoolState, MaxconnIsNeverExceeded)
{
    for (dp_sched_algo_t algo : kAll) {
        if (algo == DP_SCHED_SOURCE || algo == DP_SCHED_SOURCE_CONSISTENT)
            continue;
        Sched s(algo, 3);
        for (uint32_t i = 0; i < 3; i++)
            s.Add(i, 1 + i, 2);
        std::mt19937 rng(1);
        int opened = 0;
        for (int k = 0; k < 40; k++) {
            dp_sched_key_t key = SrcKey(rng());
            key.src_port = uint16_t(rng());
            int32_t id = s.Pick(0, &key);
            if (id < 0)
                continue;
            ASSERT_EQ(dp_sched_conn_opened(s.get(), uint32_t(id), nullptr), 0);
            opened++;
            dp_sched_server_info_t info{};
            ASSERT_EQ(dp_sched_get_server(s.get(), uint32_t(id), &info), 0);
            ASSERT_LE(info.active, 2u) << dp_sched_algo_name(algo);
        }
        if (algo != DP_SCHED_SH && algo != DP_SCHED_MAGLEV && algo != DP_SCHED_RANDOM)
            EXPECT_EQ(opened, 6) << dp_sched_algo_name(algo);
    }
    // hash-preserve-affinity maxconn walks the ring on past a full server.
    Sched s(DP_SCHED_SOURCE_CONSISTENT, 2, 0, DP_SCHED_CFG_AFFINITY_MAXCONN);
    s.Add(0, 1, 1);
    s.Add(1, 1);
    for (uint32_t k = 0; k < 30; k++) {
        dp_sched_key_t key = SrcKey(k);
        int32_t id = s.Open(0, &key);
        if (k > 0)
            EXPECT_EQ(id, 1);
        else if (id == 1)
            s.Open(0, &key);
    }
}

TEST(PoolState, BackupsOnlyWhenNoActiveServerIsUsable)
{
    for (dp_sched_algo_t algo : {DP_SCHED_ROUNDROBIN, DP_SCHED_STATIC_RR, DP_SCHED_LEASTCONN, DP_SCHED_FIRST,
                                 DP_SCHED_SOURCE, DP_SCHED_SOURCE_CONSISTENT, DP_SCHED_RANDOM}) {
        Sched s(algo, 4);
        s.Add(0, 1);
        s.Add(1, 1);
        s.Add(2, 1, 0, DP_SCHED_SRV_BACKUP);
        s.Add(3, 1, 0, DP_SCHED_SRV_BACKUP);
        for (uint32_t k = 0; k < 50; k++) {
            dp_sched_key_t key = SrcKey(k * 40503u);
            EXPECT_LT(s.Pick(0, &key), 2) << dp_sched_algo_name(algo);
        }
        s.State(0, DP_SCHED_DOWN);
        s.State(1, DP_SCHED_DRAINING);
        for (uint32_t k = 0; k < 50; k++) {
            dp_sched_key_t key = SrcKey(k * 40503u);
            EXPECT_EQ(s.Pick(0, &key), 2) << dp_sched_algo_name(algo); // the first backup only
        }
        s.State(1, DP_SCHED_UP);
        dp_sched_key_t key = SrcKey(5);
        EXPECT_EQ(s.Pick(0, &key), 1) << dp_sched_algo_name(algo);
    }
    // IPVS has no backup servers.
    Sched ipvs(DP_SCHED_WLC, 2);
    dp_sched_server_t b{};
    b.weight = 1;
    b.flags = DP_SCHED_SRV_BACKUP;
    EXPECT_EQ(dp_sched_set_server(ipvs.get(), 0, &b, nullptr), DP_SCHED_EINVAL);
}

// HAProxy slowstart (server.c server_recalc_eweight, queue.c
// srv_dynamic_maxconn; configuration.txt: "the weight grows linearly from 1
// to 100%", maxconn "from 1 to 100%"): in whole seconds since the server
// came back, eweight = weight * floor((16 * t + S) / S) in 1/16 steps, and
// maxconn = max(1, maxconn * floor(100 t / S) / 100).
TEST(SlowStart, WeightAndMaxconnRampAsHaproxyDocuments)
{
    for (dp_sched_algo_t algo : {DP_SCHED_ROUNDROBIN, DP_SCHED_LEASTCONN, DP_SCHED_SOURCE_CONSISTENT}) {
        Sched s(algo, 2);
        s.Add(0, 10, 0);
        s.Add(1, 10, 200, 0, 20000); // slowstart 20 s
        s.Pick(0);
        s.State(1, DP_SCHED_DOWN, 50000);
        s.State(1, DP_SCHED_UP, 100000);
        for (uint32_t t = 0; t <= 22; t++) {
            uint64_t now = 100000 + uint64_t(t) * 1000 + 500;
            s.Pick(now);
            dp_sched_server_info_t info{};
            ASSERT_EQ(dp_sched_get_server(s.get(), 1, &info), 0);
            uint32_t want_w = t >= 20 ? 160 : 10 * ((16 * t + 20) / 20);
            uint32_t want_m = t >= 20 ? 200 : std::max(1u, 200 * (100 * t / 20) / 100);
            EXPECT_EQ(info.eweight, want_w) << dp_sched_algo_name(algo) << " t=" << t;
            EXPECT_EQ(info.maxconn_now, want_m) << "t=" << t;
            EXPECT_EQ(info.warming, t < 20 ? 1u : 0u);
        }
    }
    // No slow start at start-up, and none for static algorithms' weights.
    Sched st(DP_SCHED_STATIC_RR, 1);
    st.Add(0, 10, 0, 0, 20000);
    st.State(0, DP_SCHED_DOWN, 0);
    st.State(0, DP_SCHED_UP, 1000);
    st.Pick(1000);
    dp_sched_server_info_t info{};
    ASSERT_EQ(dp_sched_get_server(st.get(), 0, &info), 0);
    EXPECT_EQ(info.eweight, 1u); // weight / gcd, no ramp
    EXPECT_EQ(info.warming, 1u); // but maxconn would ramp
}

// During the ramp the returning server's share of roundrobin picks follows
// its effective weight: at t = 5 s of 20 s it has 10 * 5 / 16 of the
// other's 160 (w = floor((80 + 20) / 20) = 5).
TEST(SlowStart, RoundrobinShareFollowsTheRamp)
{
    Sched s(DP_SCHED_ROUNDROBIN, 2);
    s.Add(0, 10);
    s.Add(1, 10, 0, 0, 20000);
    s.Pick(0);
    s.State(1, DP_SCHED_DOWN, 1000);
    s.State(1, DP_SCHED_UP, 10000);
    uint32_t c1 = 0, total = 0;
    for (int i = 0; i < 2100; i++) {
        total++;
        c1 += s.Pick(15000) == 1;
    }
    EXPECT_NEAR(double(c1) / total, 50.0 / 210.0, 0.01);
}

TEST(Random, SeedReplaysAndWeightsShapeTheDraws)
{
    dp_sched_config_t c = Sched::Config(DP_SCHED_RANDOM, 3);
    c.seed = 42;
    c.draws = 1;
    Sched a(c), b(c);
    for (uint32_t i = 0; i < 3; i++) {
        a.Add(i, 1 + 3 * i);
        b.Add(i, 1 + 3 * i);
    }
    std::vector<uint32_t> cnt(3);
    for (int i = 0; i < 30000; i++) {
        int32_t x = a.Pick(), y = b.Pick();
        ASSERT_EQ(x, y);
        cnt[size_t(x)]++;
    }
    // Consistent-hash ring of 16, 64 and 112 nodes: shares near 1:4:7
    // (a ring is never perfectly smooth: lb_chash.c, configuration.txt).
    EXPECT_NEAR(cnt[0] / 30000.0, 1.0 / 12, 0.04);
    EXPECT_NEAR(cnt[2] / 30000.0, 7.0 / 12, 0.08);
    // Two draws keep the less loaded of two: with one server holding many
    // connections, it is picked far less often than its share.
    dp_sched_config_t c2 = Sched::Config(DP_SCHED_RANDOM, 2);
    c2.seed = 7;
    Sched r(c2);
    r.Add(0, 1);
    r.Add(1, 1);
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(dp_sched_conn_opened(r.get(), 0, nullptr), 0);
    uint32_t zero = 0;
    for (int i = 0; i < 1000; i++)
        zero += r.Pick() == 0;
    EXPECT_LT(zero, 400u);
}

TEST(Api, NamesAreStableAndRoundTrip)
{
    const char *names[] = {"rr",         "wrr",       "lc",        "wlc",    "sh",
                           "maglev",     "roundrobin", "static-rr", "leastconn", "first",
                           "source",     "source-consistent", "random", "uri", "uri-consistent",
                           "hdr",        "hdr-consistent"};
    ASSERT_EQ(sizeof names / sizeof names[0], size_t(DP_SCHED__COUNT));
    for (int i = 0; i < DP_SCHED__COUNT; i++) {
        EXPECT_STREQ(dp_sched_algo_name(dp_sched_algo_t(i)), names[i]);
        EXPECT_EQ(dp_sched_algo_from_name(names[i]), i);
    }
    EXPECT_STREQ(dp_sched_algo_name(DP_SCHED__COUNT), "unknown");
    EXPECT_EQ(dp_sched_algo_from_name("nope"), DP_SCHED_EINVAL);
    EXPECT_STREQ(dp_sched_state_name(DP_SCHED_DRAINING), "draining");
}

TEST(Api, RefusesBadArgumentsAndSmallMemory)
{
    dp_sched_config_t c = Sched::Config(DP_SCHED_WRR, 4);
    size_t n = dp_sched_memory_size(&c);
    std::vector<uint8_t> mem(n);
    EXPECT_EQ(dp_sched_create(mem.data(), n - 1, &c), nullptr);
    dp_sched_t *s = dp_sched_create(mem.data(), n, &c);
    ASSERT_NE(s, nullptr);
    dp_sched_server_t sv{};
    sv.weight = 257;
    EXPECT_EQ(dp_sched_set_server(s, 0, &sv, nullptr), DP_SCHED_EINVAL);
    sv.weight = 1;
    EXPECT_EQ(dp_sched_set_server(s, 4, &sv, nullptr), DP_SCHED_EINVAL);
    sv.slowstart_ms = 1000;
    EXPECT_EQ(dp_sched_set_server(s, 0, &sv, nullptr), DP_SCHED_EINVAL); // IPVS: no slow start
    EXPECT_EQ(dp_sched_set_state(s, 1, DP_SCHED_DOWN, 0, nullptr), DP_SCHED_ENOENT);
    EXPECT_EQ(dp_sched_conn_closed(s, 1, 0, nullptr), DP_SCHED_ENOENT);
    sv.slowstart_ms = 0;
    ASSERT_EQ(dp_sched_set_server(s, 1, &sv, nullptr), 0);
    EXPECT_EQ(dp_sched_conn_closed(s, 1, 0, nullptr), DP_SCHED_ECOUNT);
    EXPECT_EQ(dp_sched_remove_server(s, 1, nullptr), 0);
    EXPECT_EQ(dp_sched_remove_server(s, 1, nullptr), DP_SCHED_ENOENT);
    c.algo = DP_SCHED__COUNT;
    EXPECT_EQ(dp_sched_memory_size(&c), 0u);
    c = Sched::Config(DP_SCHED_SH, 4, 21);
    EXPECT_EQ(dp_sched_memory_size(&c), 0u);
}

TEST(Api, CloneEvolvesIndependently)
{
    Sched a(DP_SCHED_ROUNDROBIN, 3);
    a.Add(0, 2);
    a.Add(1, 1);
    a.Pick();
    Sched b(a);
    std::vector<int32_t> x, y;
    for (int i = 0; i < 9; i++) {
        x.push_back(a.Pick());
        y.push_back(b.Pick());
    }
    EXPECT_EQ(x, y);
    b.State(0, DP_SCHED_DOWN);
    EXPECT_EQ(b.Pick(), 1);
    std::set<int32_t> seen{a.Pick(), a.Pick(), a.Pick()};
    EXPECT_TRUE(seen.count(0)); // a still has server 0
}

} // namespace

// ---- HAProxy balance uri / hdr (2.6 get_server_uh, get_server_hh) ---------

namespace {

// hash_sdbm of HAProxy's src/hash.c, as its comment defines it:
// hash(i) = hash(i-1) * 65599 + c.
uint32_t Sdbm(const std::string &s)
{
    uint32_t h = 0;
    for (unsigned char c : s)
        h = h * 65599u + c;
    return h;
}

dp_sched_key_t DataKey(const std::string &s)
{
    dp_sched_key_t k{};
    k.data = s.data();
    k.data_len = uint32_t(s.size());
    return k;
}

} // namespace

// Map-based uri hashing is map[sdbm(the hashed prefix) % total weight]: the
// prefix cut by hand here per the manual ("whole", "len", "depth").
TEST(SchedUri, MapBasedPicksTheSlotOfTheSdbmOfThePrefix)
{
    struct Case {
        uint32_t flags, len, depth;
        std::string uri, prefix;
    } cases[] = {
        {0, 0, 0, "/a/b/c?x=1", "/a/b/c"},
        {DP_SCHED_CFG_URI_WHOLE, 0, 0, "/a/b/c?x=1", "/a/b/c?x=1"},
        {DP_SCHED_CFG_URI_WHOLE, 5, 0, "/a/b/c?x=1", "/a/b/"},
        {0, 0, 2, "/a/b/c?x=1", "/a/b"},
        {0, 0, 1, "/img/x.png", "/img"},
        {DP_SCHED_CFG_URI_PATH_ONLY, 0, 0, "http://h.example/p/q?z", "/p/q"},
        {DP_SCHED_CFG_URI_PATH_ONLY, 0, 0, "http://h.example", ""},
        {0, 0, 0, "http://h.example/p?z", "http://h.example/p"},
    };
    for (const Case &c : cases) {
        dp_sched_config_t cfg = Sched::Config(DP_SCHED_URI, 3, 0, c.flags);
        cfg.uri_len = c.len;
        cfg.uri_depth = c.depth;
        Sched s(cfg);
        s.Add(0, 3);
        s.Add(1, 2);
        s.Add(2, 1);
        dp_sched_build(s.get(), 0, nullptr);
        ASSERT_EQ(dp_sched_table_size(s.get()), 6u);
        dp_sched_key_t k = DataKey(c.uri);
        dp_ops_t ops{};
        EXPECT_EQ(s.Pick(0, &k, &ops), dp_sched_table_entry(s.get(), Sdbm(c.prefix) % 6u)) << c.uri;
        EXPECT_EQ(ops.bytes_parsed, c.prefix.size()) << c.uri;
        EXPECT_EQ(ops.hashes, 1u) << c.uri;
    }
}

// A request without the header is balanced round robin over the same map
// (assign_server's fallback), so n such requests visit every map slot once.
TEST(SchedHdr, MissingHeaderFallsBackToRoundRobinOnTheMap)
{
    Sched s(DP_SCHED_HDR, 3);
    s.Add(0, 1);
    s.Add(1, 2);
    s.Add(2, 1);
    dp_sched_key_t none{};
    std::map<int32_t, int> seen;
    for (int i = 0; i < 8; i++)
        seen[s.Pick(0, &none)]++;
    EXPECT_EQ(seen[0], 2);
    EXPECT_EQ(seen[1], 4);
    EXPECT_EQ(seen[2], 2);
    // use_domain_only hashes "example" for every host of example.com.
    Sched d(Sched::Config(DP_SCHED_HDR, 3, 0, DP_SCHED_CFG_HDR_DOMAIN_ONLY));
    for (uint32_t i = 0; i < 3; i++)
        d.Add(i, 1);
    dp_sched_build(d.get(), 0, nullptr);
    const int32_t want = dp_sched_table_entry(d.get(), Sdbm("example") % 3u);
    for (const std::string host : {"www.example.com", "example.com", "a.b.example.com", " img.example.com , x.org"}) {
        dp_sched_key_t k = DataKey(host);
        EXPECT_EQ(d.Pick(0, &k), want) << host;
    }
}

// Consistent hashing: a server going down moves only its own URIs (the
// ring's defining property), about 1/n of them.
TEST(SchedUri, ConsistentDownMovesOnlyTheDownServersUris)
{
    Sched s(DP_SCHED_URI_CONSISTENT, 4);
    for (uint32_t i = 0; i < 4; i++)
        s.Add(i, 1);
    std::vector<std::string> uris;
    std::vector<int32_t> before;
    for (int i = 0; i < 4000; i++) {
        uris.push_back("/obj/" + std::to_string(i * 7919) + "?v=" + std::to_string(i));
        dp_sched_key_t k = DataKey(uris.back());
        before.push_back(s.Pick(0, &k));
    }
    s.State(2, DP_SCHED_DOWN);
    int moved = 0;
    for (size_t i = 0; i < uris.size(); i++) {
        dp_sched_key_t k = DataKey(uris[i]);
        const int32_t now = s.Pick(0, &k);
        if (before[i] != 2)
            EXPECT_EQ(now, before[i]) << uris[i];
        else
            EXPECT_NE(now, 2);
        moved += now != before[i];
    }
    EXPECT_NEAR(moved / 4000.0, 0.25, 0.08);
}
