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
#include "proc-memory.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <sys/mman.h>

namespace {

constexpr size_t kKeys = 1u << 20;

// Sessions resident: 8M, one ADX application core's share; the environment
// variable SESSION_BENCH_SESSIONS may set fewer (e.g. for callgrind, whose
// instruction counts per lookup do not depend on the size).
uint32_t Sessions()
{
    static const uint32_t n = [] {
        const char *e = std::getenv("SESSION_BENCH_SESSIONS");
        unsigned long v = e ? std::strtoul(e, nullptr, 10) : 0;
        return v >= 2 && v <= (8ul << 20) ? uint32_t(v) & ~1u : 8u << 20;
    }();
    return n;
}

double RssBytes()
{
    return ProcBytes("/proc/self/status", "VmRSS:");
}

// The table's memory: anonymous pages, asked to be 2 MiB transparent huge
// pages (as DPDK deployments back their tables with hugepages); a 257 MB
// table on 4 KiB pages would pay a TLB miss on nearly every lookup.
struct Memory {
    void *p = MAP_FAILED;
    size_t n = 0;
    bool huge = false;
    explicit Memory(size_t bytes) : n(bytes)
    {
        p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            std::abort();
        huge = madvise(p, n, MADV_HUGEPAGE) == 0;
    }
    ~Memory() { munmap(p, n); }
};

struct World {
    std::unique_ptr<Memory> mem;
    dp_sess_table_t *t = nullptr;
    std::vector<dp_flow_key_t> keys;
    size_t memory_bytes = 0;
    double rss_added = 0, fill_seconds = 0, huge_bytes = 0;

    World()
    {
        dp_sess_config_t cfg;
        dp_sess_config_init(&cfg, 1, Sessions(), 1000);
        memory_bytes = dp_sess_memory_size(&cfg);
        // The keys kept for the lookups are resident before the first RSS
        // reading, so the difference is the table alone.
        std::vector<dp_flow_key_t> resident(Sessions());
        size_t held = 0;
        keys.resize(kKeys);
        double rss0 = RssBytes();
        mem = std::make_unique<Memory>(memory_bytes);
        t = dp_sess_create(mem->p, mem->n, &cfg);
        std::mt19937 rng(42);
        auto t0 = std::chrono::steady_clock::now();
        while (held < Sessions()) {
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
            resident[held++] = in;
            resident[held++] = out;
        }
        fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rss_added = RssBytes() - rss0;
        huge_bytes = ProcBytes("/proc/self/smaps_rollup", "AnonHugePages:");
        for (auto &k : keys)
            k = resident[rng() % resident.size()];
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t, 0, &st);
        std::printf("session_bench: %u sessions resident in one shard (capacity %u), %zu bytes configured "
                    "(%.2f B/session), RSS +%.0f bytes (%.2f B/session), fill %.2f s, huge pages %s (%.0f bytes on them)\n",
                    st.entries, st.capacity, memory_bytes, double(memory_bytes) / st.entries, rss_added,
                    rss_added / st.entries, fill_seconds, mem->huge ? "asked" : "refused", huge_bytes);
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
    state.counters["sessions"] = double(Sessions());
    state.counters["memory_bytes"] = double(w.memory_bytes);
    state.counters["B_per_session"] = double(w.memory_bytes) / Sessions();
    state.counters["rss_B_per_session"] = w.rss_added / Sessions();
    state.counters["huge_bytes"] = w.huge_bytes;
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

// What this machine's memory allows any hash table of this size, as a
// yardstick for the two above in the same run: per key, the same hash
// (dp_flow_hash), a uniformly random 128-byte bucket of the same memory
// (the session table's own pages), both its lines prefetched 16 keys
// ahead, and its first 8 bytes read (one header). No tag test, no key
// compare, no overflow walk: a lookup cannot do less with 8M entries in
// 256 MB, so the session lookups' rates are read against this one's.
void BM_HashAndBucketReadFloor(benchmark::State &state)
{
    const World &w = TheWorld();
    constexpr size_t kAhead = 16;
    const uint8_t *base = static_cast<const uint8_t *>(w.mem->p);
    const uint64_t buckets = w.mem->n / 128;
    auto bucket_of = [&](size_t i) {
        return base + ((uint64_t(dp_flow_hash(&w.keys[i & (kKeys - 1)])) * buckets) >> 32) * 128;
    };
    size_t i = 0;
    uint64_t n = 0, sum = 0;
    for (auto _ : state) {
        const uint8_t *ahead = bucket_of(i + kAhead);
        __builtin_prefetch(ahead);
        __builtin_prefetch(ahead + 64);
        uint64_t header;
        std::memcpy(&header, bucket_of(i), sizeof header);
        sum += header;
        i = (i + 1) & (kKeys - 1);
        n++;
    }
    benchmark::DoNotOptimize(sum);
    dp_ops_t ops{};
    SetCounters(state, w, ops, n);
}
BENCHMARK(BM_HashAndBucketReadFloor);

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
