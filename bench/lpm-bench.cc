// LPM lookup rate of the core's DIR-24-8 table with 1M routes, single and
// bulk, plus the table's memory footprint.
//
// Route mix (an assumption shaped like a default-free BGP table, where about
// 60% of prefixes are /24 and nearly all others /16../23): 57% /24, 40%
// /16../23, 0.3% /8../15, 2.7% /25../32 (these force second-level groups).
// Lookup addresses: 90% inside a random route, 10% anywhere, 1M of them in
// random order, so most lookups miss the CPU caches as on a real router.
//
//   build/<dir>/bench/lpm_bench --benchmark_counters_tabular=true
#include "dp_lpm.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

namespace {

constexpr uint32_t kRoutes = 1000000;
constexpr size_t kAddresses = 1u << 20;

uint32_t Mask(unsigned depth)
{
    return depth == 0 ? 0u : 0xFFFFFFFFu << (32 - depth);
}

struct World {
    std::vector<uint8_t> mem;
    dp_lpm_t *lpm = nullptr;
    std::vector<uint32_t> ips;
    dp_lpm_stats_t stats{};
    double build_seconds = 0;

    World()
    {
        dp_lpm_config_t cfg{kRoutes + kRoutes / 10, 1u << 16};
        mem.resize(dp_lpm_memory_size(&cfg));
        lpm = dp_lpm_create(mem.data(), mem.size(), &cfg);
        std::mt19937 rng(42);
        std::vector<std::pair<uint32_t, unsigned>> routes;
        routes.reserve(kRoutes);
        auto t0 = std::chrono::steady_clock::now();
        dp_lpm_stats_t st{};
        while (st.rules < kRoutes) {
            unsigned r = rng() % 1000, depth;
            if (r < 570)
                depth = 24;
            else if (r < 970)
                depth = 16 + rng() % 8;
            else if (r < 973)
                depth = 8 + rng() % 8;
            else
                depth = 25 + rng() % 8;
            uint32_t prefix = rng() & Mask(depth);
            if (dp_lpm_add(lpm, prefix, uint8_t(depth), rng() & DP_LPM_MAX_NEXT_HOP, nullptr) != 0)
                std::abort();
            routes.push_back({prefix, depth});
            dp_lpm_get_stats(lpm, &st);
        }
        build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        stats = st;
        ips.resize(kAddresses);
        for (auto &ip : ips) {
            ip = rng();
            if (rng() % 10 != 0) {
                auto [p, d] = routes[rng() % routes.size()];
                ip = p | (ip & ~Mask(d));
            }
        }
    }
};

const World &TheWorld()
{
    static World w;
    return w;
}

void SetCounters(benchmark::State &state, const World &w, const dp_ops_t &ops, uint64_t lookups)
{
    state.SetItemsProcessed(int64_t(lookups));
    state.counters["routes"] = double(w.stats.rules);
    state.counters["tbl8_groups_used"] = double(w.stats.tbl8_groups_used);
    state.counters["memory_bytes"] = double(w.stats.memory_bytes);
    // What is actually touched: tbl24 plus the second-level groups in use.
    state.counters["hot_bytes"] = double((size_t(1) << 24) * 4 + size_t(w.stats.tbl8_groups_used) * 1024);
    state.counters["build_s"] = w.build_seconds;
    state.counters["probes_per_lookup"] = double(ops.table_probes) / double(lookups ? lookups : 1);
}

void BM_LpmLookupSingle(benchmark::State &state)
{
    const World &w = TheWorld();
    dp_ops_t ops{};
    size_t i = 0;
    uint64_t n = 0, sum = 0;
    for (auto _ : state) {
        uint32_t hop = 0;
        dp_lpm_lookup(w.lpm, w.ips[i], &hop, &ops);
        sum += hop;
        i = (i + 1) & (kAddresses - 1);
        n++;
    }
    benchmark::DoNotOptimize(sum);
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_LpmLookupSingle);

void BM_LpmLookupBulk(benchmark::State &state)
{
    const World &w = TheWorld();
    const unsigned batch = unsigned(state.range(0));
    std::vector<uint32_t> hops(batch);
    dp_ops_t ops{};
    size_t i = 0;
    uint64_t n = 0;
    for (auto _ : state) {
        dp_lpm_lookup_bulk(w.lpm, &w.ips[i], hops.data(), batch, &ops);
        benchmark::DoNotOptimize(hops.data());
        i = (i + batch) & (kAddresses - 1);
        n += batch;
    }
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_LpmLookupBulk)->Arg(8)->Arg(32)->Arg(256);

} // namespace

BENCHMARK_MAIN();
