// DIR-24-8 longest-prefix match checked against independent references:
// a linear scan of the rule list (small sets) and a per-depth hash map
// probed from /32 down to /0 (the 1M-route table).
#include "dp_lpm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

uint32_t Mask(unsigned depth)
{
    return depth == 0 ? 0u : 0xFFFFFFFFu << (32 - depth);
}

// An LPM table in a caller-owned buffer, as the API requires.
class Table {
public:
    explicit Table(uint32_t max_rules, uint32_t tbl8_groups)
    {
        dp_lpm_config_t cfg{max_rules, tbl8_groups};
        mem_.resize(dp_lpm_memory_size(&cfg));
        lpm_ = dp_lpm_create(mem_.data(), mem_.size(), &cfg);
    }
    dp_lpm_t *get() const { return lpm_; }

private:
    std::vector<uint8_t> mem_;
    dp_lpm_t *lpm_ = nullptr;
};

// Reference: the rule list, searched linearly for the longest match.
class LinearReference {
public:
    void Add(uint32_t prefix, unsigned depth, uint32_t hop)
    {
        rules_[{prefix & Mask(depth), depth}] = hop;
    }
    bool Delete(uint32_t prefix, unsigned depth)
    {
        return rules_.erase({prefix & Mask(depth), depth}) == 1;
    }
    bool Lookup(uint32_t ip, uint32_t *hop) const
    {
        int best = -1;
        for (const auto &[key, h] : rules_) {
            if ((ip & Mask(key.second)) == key.first && int(key.second) > best) {
                best = int(key.second);
                *hop = h;
            }
        }
        return best >= 0;
    }
    const std::map<std::pair<uint32_t, unsigned>, uint32_t> &rules() const { return rules_; }

private:
    std::map<std::pair<uint32_t, unsigned>, uint32_t> rules_;
};

// Addresses worth probing: every rule's first and last address and their
// outside neighbours (where an off-by-one shows), plus random ones.
std::vector<uint32_t> ProbeAddresses(const LinearReference &ref, std::mt19937 &rng, int random_count)
{
    std::vector<uint32_t> ips;
    for (const auto &[key, h] : ref.rules()) {
        uint32_t first = key.first, last = key.first | ~Mask(key.second);
        ips.insert(ips.end(), {first, last, first - 1u, last + 1u, first + (last - first) / 2u});
    }
    for (int i = 0; i < random_count; i++)
        ips.push_back(rng());
    return ips;
}

void ExpectAgrees(const dp_lpm_t *lpm, const LinearReference &ref, std::mt19937 &rng)
{
    std::vector<uint32_t> ips = ProbeAddresses(ref, rng, 2000);
    std::vector<uint32_t> bulk(ips.size());
    dp_lpm_lookup_bulk(lpm, ips.data(), bulk.data(), unsigned(ips.size()), nullptr);
    for (size_t i = 0; i < ips.size(); i++) {
        uint32_t want = 0, got = 0;
        bool hit = ref.Lookup(ips[i], &want);
        int rc = dp_lpm_lookup(lpm, ips[i], &got, nullptr);
        ASSERT_EQ(rc == 0, hit) << "ip " << std::hex << ips[i];
        if (hit) {
            ASSERT_EQ(got, want) << "ip " << std::hex << ips[i];
            ASSERT_EQ(bulk[i], want) << "bulk ip " << std::hex << ips[i];
        } else {
            ASSERT_EQ(rc, DP_LPM_ENOENT);
            ASSERT_EQ(bulk[i], DP_LPM_MISS);
        }
    }
}

// Prefixes drawn around a few base addresses so that rules of every depth
// nest inside each other, the hard case for delete.
uint32_t OverlappingAddress(std::mt19937 &rng, const std::vector<uint32_t> &bases)
{
    uint32_t a = bases[rng() % bases.size()];
    int flips = int(rng() % 4);
    for (int i = 0; i < flips; i++)
        a ^= 1u << (rng() % 32);
    return a;
}

} // namespace

TEST(Lpm, EmptyTableMissesEverything)
{
    Table t(16, 4);
    uint32_t hop = 0;
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0x0A000001u, &hop, nullptr), DP_LPM_ENOENT);
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0xFFFFFFFFu, &hop, nullptr), DP_LPM_ENOENT);
}

TEST(Lpm, LongestPrefixWins)
{
    Table t(16, 4);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 8, 1, nullptr), 0);  // 10/8
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A010000u, 16, 2, nullptr), 0); // 10.1/16
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A010100u, 24, 3, nullptr), 0); // 10.1.1/24
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A010180u, 25, 4, nullptr), 0); // 10.1.1.128/25
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A0101FFu, 32, 5, nullptr), 0); // 10.1.1.255/32
    const std::pair<uint32_t, uint32_t> cases[] = {
        {0x0A020304u, 1}, {0x0A010203u, 2}, {0x0A010101u, 3},
        {0x0A010180u, 4}, {0x0A0101FEu, 4}, {0x0A0101FFu, 5},
    };
    for (auto [ip, want] : cases) {
        uint32_t hop = 0;
        ASSERT_EQ(dp_lpm_lookup(t.get(), ip, &hop, nullptr), 0);
        EXPECT_EQ(hop, want) << std::hex << ip;
    }
}

TEST(Lpm, DefaultRouteCoversEveryAddressAndDeletesCleanly)
{
    Table t(16, 4);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x12345678u, 0, 7, nullptr), 0); // host bits ignored
    ASSERT_EQ(dp_lpm_add(t.get(), 0xC0A80001u, 32, 9, nullptr), 0);
    for (uint32_t ip : {0u, 0xFFFFFFFFu, 0xC0A80000u, 0xC0A80002u}) {
        uint32_t hop = 0;
        ASSERT_EQ(dp_lpm_lookup(t.get(), ip, &hop, nullptr), 0);
        EXPECT_EQ(hop, 7u);
    }
    uint32_t hop = 0;
    ASSERT_EQ(dp_lpm_lookup(t.get(), 0xC0A80001u, &hop, nullptr), 0);
    EXPECT_EQ(hop, 9u);
    ASSERT_EQ(dp_lpm_delete(t.get(), 0, 0, nullptr), 0);
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0xC0A80002u, &hop, nullptr), DP_LPM_ENOENT);
    ASSERT_EQ(dp_lpm_lookup(t.get(), 0xC0A80001u, &hop, nullptr), 0);
    EXPECT_EQ(hop, 9u);
}

TEST(Lpm, HostRouteAtTopOfAddressSpace)
{
    Table t(16, 4);
    ASSERT_EQ(dp_lpm_add(t.get(), 0xFFFFFFFFu, 32, 3, nullptr), 0);
    uint32_t hop = 0;
    ASSERT_EQ(dp_lpm_lookup(t.get(), 0xFFFFFFFFu, &hop, nullptr), 0);
    EXPECT_EQ(hop, 3u);
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0xFFFFFFFEu, &hop, nullptr), DP_LPM_ENOENT);
    dp_lpm_stats_t st;
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.tbl8_groups_used, 1u);
    ASSERT_EQ(dp_lpm_delete(t.get(), 0xFFFFFFFFu, 32, nullptr), 0);
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.tbl8_groups_used, 0u) << "a /24 with no longer rule left gives its group back";
    EXPECT_EQ(st.rules, 0u);
}

TEST(Lpm, ReplaceChangesNextHopOnly)
{
    Table t(16, 4);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 8, 1, nullptr), 0);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A010000u, 16, 2, nullptr), 0);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 8, 11, nullptr), 0);
    dp_lpm_stats_t st;
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.rules, 2u);
    uint32_t hop = 0;
    ASSERT_EQ(dp_lpm_lookup(t.get(), 0x0A020000u, &hop, nullptr), 0);
    EXPECT_EQ(hop, 11u);
    ASSERT_EQ(dp_lpm_lookup(t.get(), 0x0A010000u, &hop, nullptr), 0);
    EXPECT_EQ(hop, 2u) << "the more specific rule keeps its hop";
}

TEST(Lpm, RejectsBadArgumentsAndUnknownDeletes)
{
    Table t(2, 1);
    EXPECT_EQ(dp_lpm_add(t.get(), 0, 33, 1, nullptr), DP_LPM_EINVAL);
    EXPECT_EQ(dp_lpm_add(t.get(), 0, 8, DP_LPM_MAX_NEXT_HOP + 1u, nullptr), DP_LPM_EINVAL);
    EXPECT_EQ(dp_lpm_add(nullptr, 0, 8, 1, nullptr), DP_LPM_EINVAL);
    EXPECT_EQ(dp_lpm_delete(t.get(), 0x0A000000u, 8, nullptr), DP_LPM_ENOENT);
    EXPECT_EQ(dp_lpm_delete(t.get(), 0, 33, nullptr), DP_LPM_EINVAL);
}

TEST(Lpm, RefusesWhenRuleStoreOrGroupsRunOutAndStaysUnchanged)
{
    Table t(2, 1);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000080u, 25, 1, nullptr), 0); // takes the only group
    EXPECT_EQ(dp_lpm_add(t.get(), 0x0B000080u, 25, 2, nullptr), DP_LPM_ENOSPC);
    uint32_t hop = 0;
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0x0B000080u, &hop, nullptr), DP_LPM_ENOENT);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 28, 3, nullptr), 0); // same /24: same group
    EXPECT_EQ(dp_lpm_add(t.get(), 0x0C000000u, 8, 4, nullptr), DP_LPM_ENOSPC);
    EXPECT_EQ(dp_lpm_lookup(t.get(), 0x0C000000u, &hop, nullptr), DP_LPM_ENOENT);
    EXPECT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 28, 5, nullptr), 0) << "replace needs no new space";
    dp_lpm_stats_t st;
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.rules, 2u);
    EXPECT_EQ(st.tbl8_groups_used, 1u);
}

TEST(Lpm, CreateRefusesTooLittleMemoryAndBadConfig)
{
    dp_lpm_config_t cfg{16, 4};
    size_t need = dp_lpm_memory_size(&cfg);
    ASSERT_GT(need, size_t(64) << 20) << "tbl24 alone is 2^24 4-byte entries";
    std::vector<uint8_t> mem(need);
    EXPECT_EQ(dp_lpm_create(mem.data(), need - 1, &cfg), nullptr);
    EXPECT_NE(dp_lpm_create(mem.data(), need, &cfg), nullptr);
    dp_lpm_config_t zero{0, 4};
    EXPECT_EQ(dp_lpm_memory_size(&zero), 0u);
    EXPECT_EQ(dp_lpm_create(mem.data(), need, &zero), nullptr);
}

TEST(Lpm, LookupCountsProbesAndCacheLines)
{
    Table t(16, 4);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000000u, 8, 1, nullptr), 0);
    ASSERT_EQ(dp_lpm_add(t.get(), 0x0A000080u, 25, 2, nullptr), 0);
    dp_ops_t ops{};
    uint32_t hop;
    dp_lpm_lookup(t.get(), 0x0A010000u, &hop, &ops); // tbl24 only
    EXPECT_EQ(ops.table_probes, 1u);
    dp_lpm_lookup(t.get(), 0x0A000081u, &hop, &ops); // tbl24 + tbl8
    EXPECT_EQ(ops.table_probes, 3u);
    EXPECT_EQ(ops.cache_lines, 3u);
    const uint32_t ips[] = {0x0A010000u, 0x0A000081u, 0x01000000u};
    uint32_t hops[3];
    dp_lpm_lookup_bulk(t.get(), ips, hops, 3, &ops);
    EXPECT_EQ(ops.table_probes, 7u);
}

// Random route sets of every depth 0..32 around a few shared bases, with
// adds, deletes, re-adds and next-hop replaces, checked after every step
// against a linear scan of the rule list.
TEST(Lpm, AgreesWithLinearScanUnderRandomAddDeleteReplace)
{
    std::mt19937 rng(20240601);
    for (int round = 0; round < 4; round++) {
        Table t(4096, 512);
        LinearReference ref;
        std::vector<uint32_t> bases;
        for (int i = 0; i < 3; i++)
            bases.push_back(rng());
        std::vector<std::pair<uint32_t, unsigned>> added;
        for (int step = 0; step < 10; step++) {
            for (int k = 0; k < 40; k++) {
                // Every depth 0..32, but /0../7 (each rewrites 2^17..2^24
                // tbl24 entries) at a sixth of the rate, to keep the run short.
                unsigned depth = rng() % 33;
                while (depth < 8 && rng() % 6 != 0)
                    depth = rng() % 33;
                uint32_t prefix = OverlappingAddress(rng, bases);
                uint32_t hop = rng() % (DP_LPM_MAX_NEXT_HOP + 1u);
                ASSERT_EQ(dp_lpm_add(t.get(), prefix, uint8_t(depth), hop, nullptr), 0);
                ref.Add(prefix, depth, hop);
                added.push_back({prefix, depth});
            }
            // Delete about a third of what was ever added (some twice:
            // the second delete must report ENOENT), then re-add a few.
            for (int k = 0; k < 15 && !added.empty(); k++) {
                auto [prefix, depth] = added[rng() % added.size()];
                bool present = ref.Delete(prefix, depth);
                int rc = dp_lpm_delete(t.get(), prefix, uint8_t(depth), nullptr);
                ASSERT_EQ(rc, present ? 0 : DP_LPM_ENOENT);
            }
            for (int k = 0; k < 5; k++) {
                auto [prefix, depth] = added[rng() % added.size()];
                uint32_t hop = rng() % 1000;
                ASSERT_EQ(dp_lpm_add(t.get(), prefix, uint8_t(depth), hop, nullptr), 0);
                ref.Add(prefix, depth, hop);
            }
            dp_lpm_stats_t st;
            dp_lpm_get_stats(t.get(), &st);
            ASSERT_EQ(st.rules, ref.rules().size());
            ExpectAgrees(t.get(), ref, rng);
            if (HasFatalFailure())
                return;
        }
        // Deleting everything leaves an empty table with every group freed.
        std::vector<std::pair<uint32_t, unsigned>> all;
        for (const auto &[key, h] : ref.rules())
            all.push_back(key);
        std::shuffle(all.begin(), all.end(), rng);
        for (auto [prefix, depth] : all) {
            ASSERT_EQ(dp_lpm_delete(t.get(), prefix, uint8_t(depth), nullptr), 0);
            ref.Delete(prefix, depth);
        }
        dp_lpm_stats_t st;
        dp_lpm_get_stats(t.get(), &st);
        EXPECT_EQ(st.rules, 0u);
        EXPECT_EQ(st.tbl8_groups_used, 0u);
        ExpectAgrees(t.get(), ref, rng);
    }
}

// A million routes with a BGP-like length mix fit, and agree with a
// per-depth hash map reference before and after deleting half of them.
TEST(Lpm, HoldsAMillionRoutes)
{
    const uint32_t kRoutes = 1000000;
    Table t(kRoutes + 100000, 1u << 16);
    std::mt19937 rng(7);
    std::unordered_map<uint32_t, uint32_t> by_depth[33];
    std::vector<std::pair<uint32_t, unsigned>> routes;
    routes.reserve(kRoutes);
    size_t stored = 0;
    while (stored < kRoutes) {
        unsigned r = rng() % 1000, depth;
        if (r < 550)
            depth = 24;
        else if (r < 960)
            depth = 16 + rng() % 8;
        else if (r < 963)
            depth = 8 + rng() % 8;
        else
            depth = 25 + rng() % 8;
        uint32_t prefix = rng() & Mask(depth);
        uint32_t hop = rng() & DP_LPM_MAX_NEXT_HOP;
        int rc = dp_lpm_add(t.get(), prefix, uint8_t(depth), hop, nullptr);
        ASSERT_EQ(rc, 0) << "route " << stored;
        if (by_depth[depth].emplace(prefix, hop).second) {
            routes.push_back({prefix, depth});
            stored++;
        } else {
            by_depth[depth][prefix] = hop;
        }
    }
    dp_lpm_stats_t st;
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.rules, kRoutes);

    auto check = [&](int n) {
        for (int i = 0; i < n; i++) {
            // Half the probes inside known prefixes, half anywhere.
            uint32_t ip = rng();
            if (i & 1) {
                auto [p, d] = routes[rng() % routes.size()];
                ip = p | (ip & ~Mask(d));
            }
            bool hit = false;
            uint32_t want = 0;
            for (int d = 32; d >= 0 && !hit; d--) {
                auto it = by_depth[d].find(ip & Mask(unsigned(d)));
                if (it != by_depth[d].end()) {
                    hit = true;
                    want = it->second;
                }
            }
            uint32_t got = 0;
            ASSERT_EQ(dp_lpm_lookup(t.get(), ip, &got, nullptr) == 0, hit) << std::hex << ip;
            if (hit)
                ASSERT_EQ(got, want) << std::hex << ip;
        }
    };
    check(200000);
    std::shuffle(routes.begin(), routes.end(), rng);
    for (size_t i = 0; i < routes.size() / 2; i++) {
        auto [p, d] = routes[i];
        ASSERT_EQ(dp_lpm_delete(t.get(), p, uint8_t(d), nullptr), 0);
        by_depth[d].erase(p);
    }
    routes.erase(routes.begin(), routes.begin() + routes.size() / 2);
    dp_lpm_get_stats(t.get(), &st);
    EXPECT_EQ(st.rules, kRoutes / 2);
    check(200000);
}
