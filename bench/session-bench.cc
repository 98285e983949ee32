// Session-table lookup rate with one shard of the ADX 8000 configuration
// resident: 8M sessions (4M connections, the shard's whole capacity), and
// what that costs in memory (configured bytes and the resident set measured
// from /proc/self/status around the fill).
//
// Lookup keys: 1M keys drawn at random from the resident sessions (both
// directions), looked up in random order, so nearly every lookup misses the
// CPU caches as on a loaded balancer core.
//
//   build/<dir>/bench/session_bench --benchmark_counters_tabular=true
#include "dp_session.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr uint32_t kSessions = 8u << 20;
constexpr size_t kKeys = 1u << 20;

// Resident set of this process in bytes (Linux), 0 when unknown.
double RssBytes()
{
    FILE *f = std::fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    double kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmRSS:", 6) == 0)
            kb = std::strtod(line + 6, nullptr);
    std::fclose(f);
    return kb * 1024.0;
}

struct World {
    std::vector<uint8_t> mem;
    dp_sess_table_t *t = nullptr;
    std::vector<dp_flow_key_t> keys;
    size_t memory_bytes = 0;
    double rss_added = 0, fill_seconds = 0, probes_per_lookup_full = 0;

    World()
    {
        dp_sess_config_t cfg;
        dp_sess_config_init(&cfg, 1, kSessions, 1000);
        memory_bytes = dp_sess_memory_size(&cfg);
        double rss0 = RssBytes();
        mem.resize(memory_bytes);
        t = dp_sess_create(mem.data(), mem.size(), &cfg);
        std::mt19937 rng(42);
        std::vector<dp_flow_key_t> resident;
        resident.reserve(kSessions);
        auto t0 = std::chrono::steady_clock::now();
        while (resident.size() < kSessions) {
            dp_flow_key_t in{}, out{};
            in.src_ip = rng();
            in.dst_ip = 0xC6336401u + rng() % 16; // 16 VIPs
            in.src_port = uint16_t(rng());
            in.dst_port = 80;
            in.proto = 6;
            out.src_ip = 0x0A000000u | (rng() & 0xFFFF); // servers
            out.dst_ip = 0x0A640001u + rng() % 64;     // SNAT addresses
            out.src_port = 8080;
            out.dst_port = uint16_t(rng());
            out.proto = 6;
            dp_sess_conn_t c;
            if (dp_sess_open(t, &in, &out, rng() & 0x3FF, 0, &c, nullptr) != 0)
                continue; // a random duplicate: draw again
            // Handshake seen: the connections are ESTABLISHED.
            dp_sess_track(t, c, DP_SESS_DIR_IN, 0x02, 0, nullptr);
            dp_sess_track(t, c, DP_SESS_DIR_IN, 0x10, 0, nullptr);
            resident.push_back(in);
            resident.push_back(out);
        }
        fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rss_added = RssBytes() - rss0;
        keys.resize(kKeys);
        for (auto &k : keys)
            k = resident[rng() % resident.size()];
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t, 0, &st);
        std::printf("session_bench: %u sessions resident in one shard (capacity %u), %zu bytes configured "
                    "(%.2f B/session), RSS +%.0f bytes (%.2f B/session), fill %.2f s\n",
                    st.entries, st.capacity, memory_bytes, double(memory_bytes) / st.entries, rss_added,
                    rss_added / st.entries, fill_seconds);
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
    state.counters["sessions"] = double(kSessions);
    state.counters["memory_bytes"] = double(w.memory_bytes);
    state.counters["B_per_session"] = double(w.memory_bytes) / kSessions;
    state.counters["rss_B_per_session"] = w.rss_added / kSessions;
    double n = double(lookups ? lookups : 1);
    state.counters["probes_per_lookup"] = double(ops.table_probes) / n;
    state.counters["lines_per_lookup"] = double(ops.cache_lines) / n;
}

void BM_SessionLookupSingle(benchmark::State &state)
{
    const World &w = TheWorld();
    dp_ops_t ops{};
    size_t i = 0;
    uint64_t n = 0, sum = 0;
    for (auto _ : state) {
        dp_sess_hit_t hit;
        if (dp_sess_lookup(w.t, &w.keys[i], &hit, &ops) == 0)
            sum += hit.server;
        i = (i + 1) & (kKeys - 1);
        n++;
    }
    benchmark::DoNotOptimize(sum);
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_SessionLookupSingle);

void BM_SessionLookupBulk(benchmark::State &state)
{
    const World &w = TheWorld();
    const unsigned batch = unsigned(state.range(0));
    std::vector<dp_sess_hit_t> hits(batch);
    dp_ops_t ops{};
    size_t i = 0;
    uint64_t n = 0;
    for (auto _ : state) {
        dp_sess_lookup_bulk(w.t, &w.keys[i], batch, hits.data(), &ops);
        benchmark::DoNotOptimize(hits.data());
        i = (i + batch) & (kKeys - 1);
        n += batch;
    }
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_SessionLookupBulk)->Arg(8)->Arg(16)->Arg(32)->Arg(256);

// The per-packet path of an established connection: lookup, then track of
// an ACK (state stays ESTABLISHED, last-seen refreshed) on the record just
// found.
void BM_SessionLookupAndTrack(benchmark::State &state)
{
    World &w = const_cast<World &>(TheWorld());
    dp_ops_t ops{};
    size_t i = 0;
    uint64_t n = 0;
    uint32_t now = 1;
    for (auto _ : state) {
        dp_sess_hit_t hit;
        if (dp_sess_lookup(w.t, &w.keys[i], &hit, &ops) == 0)
            dp_sess_track(w.t, hit.conn, dp_sess_dir_t(hit.dir), 0x10, now, &ops);
        i = (i + 1) & (kKeys - 1);
        n++;
        now++;
    }
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_SessionLookupAndTrack);

} // namespace

BENCHMARK_MAIN();
