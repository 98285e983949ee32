// Sharded 5-tuple flow table, checked against a std::map model of the same
// contract: per-shard capacity, refusal when full, idle expiry.
#include "dp_flow.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace {

class FlowTable {
public:
    FlowTable(uint32_t shards, uint32_t per_shard)
    {
        dp_flow_config_t cfg{shards, per_shard};
        mem_.resize(dp_flow_memory_size(&cfg));
        t_ = dp_flow_create(mem_.data(), mem_.size(), &cfg);
    }
    dp_flow_table_t *get() const { return t_; }

private:
    std::vector<uint8_t> mem_;
    dp_flow_table_t *t_ = nullptr;
};

dp_flow_key_t Key(uint32_t n)
{
    dp_flow_key_t k{};
    k.src_ip = 0x0a000000u + n;
    k.dst_ip = 0xc0a80001u;
    k.src_port = uint16_t(1024 + n % 50000);
    k.dst_port = 80;
    k.proto = 6;
    return k;
}

dp_flow_key_t RandomKey(std::mt19937 &rng)
{
    dp_flow_key_t k{};
    k.src_ip = rng();
    k.dst_ip = rng();
    k.src_port = uint16_t(rng());
    k.dst_port = uint16_t(rng());
    k.proto = (rng() & 1) ? 6 : 17;
    return k;
}

using Tuple = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint8_t>;
Tuple AsTuple(const dp_flow_key_t &k)
{
    return {k.src_ip, k.dst_ip, k.src_port, k.dst_port, k.proto};
}

// Keys that land in the given shard.
std::vector<dp_flow_key_t> KeysOfShard(const dp_flow_table_t *t, uint32_t shard, size_t n)
{
    std::vector<dp_flow_key_t> keys;
    for (uint32_t i = 0; keys.size() < n; i++) {
        dp_flow_key_t k = Key(i);
        if (dp_flow_shard_of(t, &k) == shard)
            keys.push_back(k);
    }
    return keys;
}

} // namespace

TEST(FlowTable, InsertThenLookupReturnsTheValue)
{
    FlowTable t(1, 16);
    dp_flow_key_t k = Key(1);
    uint64_t v = 0;
    EXPECT_EQ(dp_flow_lookup(t.get(), &k, 0, &v, nullptr), DP_FLOW_ENOENT);
    ASSERT_EQ(dp_flow_insert(t.get(), &k, 42, 0, nullptr), 0);
    ASSERT_EQ(dp_flow_lookup(t.get(), &k, 1, &v, nullptr), 0);
    EXPECT_EQ(v, 42u);
    ASSERT_EQ(dp_flow_insert(t.get(), &k, 43, 2, nullptr), 0) << "insert of a present key updates";
    ASSERT_EQ(dp_flow_lookup(t.get(), &k, 3, &v, nullptr), 0);
    EXPECT_EQ(v, 43u);
    dp_flow_shard_stats_t st;
    dp_flow_get_shard_stats(t.get(), 0, &st);
    EXPECT_EQ(st.entries, 1u);
    EXPECT_EQ(st.inserts, 1u);
    ASSERT_EQ(dp_flow_delete(t.get(), &k, nullptr), 0);
    EXPECT_EQ(dp_flow_delete(t.get(), &k, nullptr), DP_FLOW_ENOENT);
    EXPECT_EQ(dp_flow_lookup(t.get(), &k, 4, &v, nullptr), DP_FLOW_ENOENT);
}

TEST(FlowTable, PadBytesDoNotChangeIdentity)
{
    FlowTable t(4, 16);
    dp_flow_key_t a = Key(7), b = Key(7);
    b.pad[0] = 0xff;
    b.pad[2] = 0x11;
    EXPECT_EQ(dp_flow_hash(&a), dp_flow_hash(&b));
    ASSERT_EQ(dp_flow_insert(t.get(), &a, 5, 0, nullptr), 0);
    uint64_t v = 0;
    EXPECT_EQ(dp_flow_lookup(t.get(), &b, 0, &v, nullptr), 0);
}

TEST(FlowTable, FullShardRefusesAndCountsWithoutEvicting)
{
    const uint32_t cap = 100;
    FlowTable t(1, cap);
    for (uint32_t i = 0; i < cap; i++) {
        dp_flow_key_t k = Key(i);
        ASSERT_EQ(dp_flow_insert(t.get(), &k, i, 0, nullptr), 0);
    }
    dp_flow_key_t extra = Key(cap);
    EXPECT_EQ(dp_flow_insert(t.get(), &extra, 0, 0, nullptr), DP_FLOW_EFULL);
    EXPECT_EQ(dp_flow_insert(t.get(), &extra, 0, 0, nullptr), DP_FLOW_EFULL);
    dp_flow_shard_stats_t st;
    dp_flow_get_shard_stats(t.get(), 0, &st);
    EXPECT_EQ(st.entries, cap);
    EXPECT_EQ(st.capacity, cap);
    EXPECT_EQ(st.refused_full, 2u);
    EXPECT_EQ(st.inserts, cap);
    for (uint32_t i = 0; i < cap; i++) {
        uint64_t v = 0;
        dp_flow_key_t k = Key(i);
        ASSERT_EQ(dp_flow_lookup(t.get(), &k, 0, &v, nullptr), 0) << "flow " << i << " evicted";
        EXPECT_EQ(v, i);
    }
    dp_flow_key_t present = Key(3);
    EXPECT_EQ(dp_flow_insert(t.get(), &present, 9, 1, nullptr), 0) << "updates need no room";
    ASSERT_EQ(dp_flow_delete(t.get(), &present, nullptr), 0);
    EXPECT_EQ(dp_flow_insert(t.get(), &extra, 0, 0, nullptr), 0) << "a delete makes room";
}

TEST(FlowTable, ShardsAreIsolated)
{
    const uint32_t shards = 4, cap = 20;
    FlowTable t(shards, cap);
    auto k0 = KeysOfShard(t.get(), 0, cap + 1);
    auto k1 = KeysOfShard(t.get(), 1, cap);
    for (uint32_t i = 0; i < cap; i++)
        ASSERT_EQ(dp_flow_insert(t.get(), &k0[i], i, 0, nullptr), 0);
    EXPECT_EQ(dp_flow_insert(t.get(), &k0[cap], 0, 0, nullptr), DP_FLOW_EFULL);
    // Shard 0 full does not stop shard 1.
    for (uint32_t i = 0; i < cap; i++)
        ASSERT_EQ(dp_flow_insert(t.get(), &k1[i], i, 50, nullptr), 0);
    // Expiring shard 0 leaves shard 1 alone, even though its flows are idle too.
    EXPECT_EQ(dp_flow_expire(t.get(), 0, 1000, 10, nullptr), cap);
    dp_flow_shard_stats_t s0, s1, s2;
    dp_flow_get_shard_stats(t.get(), 0, &s0);
    dp_flow_get_shard_stats(t.get(), 1, &s1);
    dp_flow_get_shard_stats(t.get(), 2, &s2);
    EXPECT_EQ(s0.entries, 0u);
    EXPECT_EQ(s0.expired, cap);
    EXPECT_EQ(s0.refused_full, 1u);
    EXPECT_EQ(s1.entries, cap);
    EXPECT_EQ(s1.expired, 0u);
    EXPECT_EQ(s1.refused_full, 0u);
    EXPECT_EQ(s2.entries, 0u);
    EXPECT_EQ(s2.inserts, 0u);
    EXPECT_EQ(dp_flow_expire(t.get(), shards, 1000, 10, nullptr), 0u) << "no such shard";
}

TEST(FlowTable, ExpiryEvictsExactlyTheIdleFlows)
{
    FlowTable t(1, 64);
    for (uint32_t i = 0; i < 64; i++) {
        dp_flow_key_t k = Key(i);
        ASSERT_EQ(dp_flow_insert(t.get(), &k, i, i, nullptr), 0); // last seen at t = i
    }
    // A lookup refreshes: flow 0 is seen again at t = 100.
    dp_flow_key_t k0 = Key(0);
    uint64_t v;
    ASSERT_EQ(dp_flow_lookup(t.get(), &k0, 100, &v, nullptr), 0);
    // At now = 110 with timeout 60, flows last seen at <= 50 are idle:
    // 1..50, i.e. 50 flows.
    EXPECT_EQ(dp_flow_expire(t.get(), 0, 110, 60, nullptr), 50u);
    for (uint32_t i = 0; i < 64; i++) {
        dp_flow_key_t k = Key(i);
        bool alive = i == 0 || i > 50;
        EXPECT_EQ(dp_flow_lookup(t.get(), &k, 110, &v, nullptr) == 0, alive) << i;
    }
}

TEST(FlowTable, SpreadsFlowsEvenlyOverShards)
{
    const uint32_t shards = 8, n = 80000;
    FlowTable t(shards, 16);
    std::mt19937 rng(3);
    std::vector<uint32_t> count(shards);
    for (uint32_t i = 0; i < n; i++) {
        dp_flow_key_t k = RandomKey(rng);
        count[dp_flow_shard_of(t.get(), &k)]++;
    }
    // Binomial(80000, 1/8): sd ~ 94, so +-5% (500) is > 5 sd.
    for (uint32_t c : count)
        EXPECT_NEAR(double(c), n / double(shards), n / double(shards) * 0.05);
}

// Random inserts, lookups, deletes and expiries at high load (many
// overflow walks) agree with a std::map model of the contract.
TEST(FlowTable, AgreesWithMapModelUnderRandomOperations)
{
    const uint32_t shards = 3, cap = 200;
    FlowTable t(shards, cap);
    std::mt19937 rng(11);
    std::vector<dp_flow_key_t> pool;
    for (int i = 0; i < 1200; i++)
        pool.push_back(RandomKey(rng));
    struct Entry {
        uint64_t value, seen;
        uint32_t shard;
    };
    std::map<Tuple, Entry> model;
    std::vector<uint32_t> in_shard(shards);
    std::vector<uint64_t> refused(shards);
    uint64_t now = 0;
    for (int step = 0; step < 60000; step++) {
        now += rng() % 3;
        const dp_flow_key_t &k = pool[rng() % pool.size()];
        uint32_t shard = dp_flow_shard_of(t.get(), &k);
        auto it = model.find(AsTuple(k));
        unsigned op = rng() % 10;
        if (op < 5) {
            uint64_t value = rng();
            int rc = dp_flow_insert(t.get(), &k, value, now, nullptr);
            if (it != model.end()) {
                ASSERT_EQ(rc, 0);
                it->second.value = value;
                it->second.seen = now;
            } else if (in_shard[shard] >= cap) {
                ASSERT_EQ(rc, DP_FLOW_EFULL);
                refused[shard]++;
            } else {
                ASSERT_EQ(rc, 0);
                model[AsTuple(k)] = {value, now, shard};
                in_shard[shard]++;
            }
        } else if (op < 8) {
            uint64_t v = 0;
            int rc = dp_flow_lookup(t.get(), &k, now, &v, nullptr);
            ASSERT_EQ(rc == 0, it != model.end());
            if (it != model.end()) {
                ASSERT_EQ(v, it->second.value);
                it->second.seen = now;
            }
        } else if (op < 9) {
            int rc = dp_flow_delete(t.get(), &k, nullptr);
            ASSERT_EQ(rc == 0, it != model.end());
            if (it != model.end()) {
                in_shard[it->second.shard]--;
                model.erase(it);
            }
        } else if (rng() % 50 == 0) {
            uint32_t s = rng() % shards;
            uint64_t timeout = 50 + rng() % 200;
            uint32_t want = 0;
            for (auto m = model.begin(); m != model.end();) {
                if (m->second.shard == s && now - m->second.seen >= timeout) {
                    m = model.erase(m);
                    in_shard[s]--;
                    want++;
                } else {
                    ++m;
                }
            }
            ASSERT_EQ(dp_flow_expire(t.get(), s, now, timeout, nullptr), want);
        }
    }
    for (uint32_t s = 0; s < shards; s++) {
        dp_flow_shard_stats_t st;
        dp_flow_get_shard_stats(t.get(), s, &st);
        EXPECT_EQ(st.entries, in_shard[s]);
        EXPECT_EQ(st.refused_full, refused[s]);
    }
    EXPECT_GT(refused[0] + refused[1] + refused[2], 0u) << "the run must reach full shards";
}

TEST(FlowTable, CountsProbesAndWrites)
{
    FlowTable t(1, 16);
    dp_flow_key_t k = Key(1);
    dp_ops_t ops{};
    // Empty table (dp_flow.c: 64-byte bucket headers, 32-byte entries): the
    // miss reads the home bucket header, which matches nothing and has no
    // overflow; the insert reads that header again, finds a free slot, and
    // writes the header and the entry (a third cache line).
    ASSERT_EQ(dp_flow_insert(t.get(), &k, 1, 0, &ops), 0);
    EXPECT_EQ(ops.table_probes, 2u);
    EXPECT_EQ(ops.table_writes, 2u);
    EXPECT_EQ(ops.cache_lines, 3u);
    dp_ops_t look{};
    uint64_t v;
    ASSERT_EQ(dp_flow_lookup(t.get(), &k, 0, &v, &look), 0);
    EXPECT_EQ(look.table_probes, 2u); // bucket header + matching entry
    EXPECT_EQ(look.cache_lines, 2u);
    // Inserting a key that is present finds it (header + entry) and
    // rewrites only the entry.
    dp_ops_t again{};
    ASSERT_EQ(dp_flow_insert(t.get(), &k, 2, 1, &again), 0);
    EXPECT_EQ(again.table_probes, 2u);
    EXPECT_EQ(again.table_writes, 1u);
    // Deleting it finds it the same way and clears its slot in the header.
    dp_ops_t del{};
    ASSERT_EQ(dp_flow_delete(t.get(), &k, &del), 0);
    EXPECT_EQ(del.table_probes, 2u);
    EXPECT_EQ(del.table_writes, 1u);
}

TEST(FlowTable, OverflowIntoTheNextBucketIsCountedOnThePathWalked)
{
    // Nine keys whose hashes have 8 low zero bits share home bucket 0 of
    // any table of up to 256 buckets; a bucket holds 8 (dp_flow.c).
    std::vector<dp_flow_key_t> keys;
    for (uint32_t n = 0; keys.size() < 9; n++) {
        dp_flow_key_t k = Key(n);
        if ((dp_flow_hash(&k) & 0xFFu) == 0)
            keys.push_back(k);
    }
    FlowTable t(1, 16);
    for (size_t i = 0; i < 8; i++)
        ASSERT_EQ(dp_flow_insert(t.get(), &keys[i], i, 0, nullptr), 0);
    // Miss: home header only (full, no overflow yet). Insert: home header
    // (full: its overflow count is written), next header (free slot), then
    // that header and the entry are written.
    dp_ops_t ins{};
    ASSERT_EQ(dp_flow_insert(t.get(), &keys[8], 8, 0, &ins), 0);
    EXPECT_EQ(ins.table_probes, 3u);
    EXPECT_EQ(ins.table_writes, 3u);
    EXPECT_EQ(ins.cache_lines, 4u);
    // Lookup: home header, whose overflow count sends it on to the next
    // header, then the matching entry.
    dp_ops_t look{};
    uint64_t v = 0;
    ASSERT_EQ(dp_flow_lookup(t.get(), &keys[8], 0, &v, &look), 0);
    EXPECT_EQ(v, 8u);
    EXPECT_EQ(look.table_probes, 3u);
    // Delete: the same three reads, then the home bucket's overflow count
    // and the slot's header are written.
    dp_ops_t del{};
    ASSERT_EQ(dp_flow_delete(t.get(), &keys[8], &del), 0);
    EXPECT_EQ(del.table_probes, 3u);
    EXPECT_EQ(del.table_writes, 2u);
    // With the overflow count back to zero a miss stops at the home header.
    dp_ops_t miss{};
    EXPECT_EQ(dp_flow_lookup(t.get(), &keys[8], 0, &v, &miss), DP_FLOW_ENOENT);
    EXPECT_EQ(miss.table_probes, 1u);
}

TEST(FlowTable, CreateRefusesBadConfigAndShortMemory)
{
    dp_flow_config_t bad{0, 10};
    EXPECT_EQ(dp_flow_memory_size(&bad), 0u);
    dp_flow_config_t cfg{2, 10};
    size_t need = dp_flow_memory_size(&cfg);
    std::vector<uint8_t> mem(need);
    EXPECT_EQ(dp_flow_create(mem.data(), need - 1, &cfg), nullptr);
    EXPECT_NE(dp_flow_create(mem.data(), need, &cfg), nullptr);
}
