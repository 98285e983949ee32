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
// 2.6.12 (mode tcp, nbthread 1, servers on loopback that answer their index;
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
        dp_sched_key_t key = SrcKey(0x7F000000u + k); // 127.0.0.k
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
    EXPECT_EQ(SourceRun(1, {1, 1, 1}), "1 0 2 0 1 0 2 0 0 2 1 2 2 2 0 0 0 2 0 0 0 1 1 0 0 0 0 2 0 0 1 0 0 2 1 1 0 2 0 2");
    EXPECT_EQ(SourceRun(1, {3, 2, 1}), "1 0 1 0 0 0 2 0 0 1 1 2 0 2 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 2 1 0 0 1 1 0");
    EXPECT_EQ(SourceRun(1, {1, 1, 1, 1}, 1),
              "3 3 2 0 3 0 2 0 0 3 0 3 3 2 0 0 0 3 0 0 0 3 0 0 0 0 0 3 0 0 3 3 0 2 3 3 0 3 0 3");
}

} // namespace
