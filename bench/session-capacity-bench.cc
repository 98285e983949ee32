// The ADX 8000's whole connection table, really filled: 32 shards (one per
// application core) of 8M sessions, full-NAT connections of two sessions
// each (the inbound key and the outbound key whose SNAT port is steered to
// the same shard, dp_sess_steer_port), opened until every shard refuses.
// Prints the connections held, the table's configured bytes and the
// process's resident set (VmRSS, /proc/self/status) per connection, and the
// fill's wall time. The goal: 128M connections in at most 8 GiB.
//
//   build/<dir>/bench/session_capacity_bench [shards] [sessions_per_shard]
// (defaults 32 and 8388608; smaller values for a quick look).
#include "dp_session.h"
#include "proc-memory.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/mman.h>

namespace {

// xorshift64*: a cheap deterministic key source (the bench is about the table)
uint64_t Next(uint64_t &s)
{
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
}

} // namespace

int main(int argc, char **argv)
{
    const uint32_t shards = argc > 1 ? uint32_t(std::strtoul(argv[1], nullptr, 10)) : 32u;
    const uint32_t per_shard = argc > 2 ? uint32_t(std::strtoul(argv[2], nullptr, 10)) : 8u << 20;
    dp_sess_config_t cfg;
    dp_sess_config_init(&cfg, shards, per_shard, 1000);
    const size_t bytes = dp_sess_memory_size(&cfg);
    if (bytes == 0) {
        std::fprintf(stderr, "session_capacity_bench: bad configuration\n");
        return 2;
    }
    const double rss0 = ProcBytes("/proc/self/status", "VmRSS:");
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::perror("mmap");
        return 1;
    }
    madvise(mem, bytes, MADV_HUGEPAGE);
    dp_sess_table_t *t = dp_sess_create(mem, bytes, &cfg);
    std::vector<uint8_t> full(shards, 0);
    uint32_t shards_full = 0;
    uint64_t held = 0, attempts = 0, s = 0x9E3779B97F4A7C15ull;
    const uint64_t target = uint64_t(shards) * (per_shard / 2);
    auto t0 = std::chrono::steady_clock::now();
    auto last = t0;
    while (shards_full < shards) {
        const uint64_t r = Next(s);
        dp_flow_key_t in{};
        in.src_ip = 0xC6120000u | uint32_t(r & 0x1FFFF); // clients in 198.18.0.0/15
        in.dst_ip = 0x0A000001u | uint32_t(((r >> 17) % 96) << 8); // the 96 VIPs
        in.src_port = uint16_t(1024 + ((r >> 24) % 64512));
        in.dst_port = 80;
        in.proto = 6;
        const uint32_t shard = dp_sess_shard_of(t, &in);
        if (full[shard])
            continue;
        ++attempts;
        dp_flow_key_t out{};
        out.src_ip = 0x0A010001u + uint32_t((r >> 40) % 384); // 96 services x 4 servers
        out.dst_ip = 0x0A020001u + uint32_t((r >> 50) % 256); // SNAT addresses
        out.src_port = 80;
        out.proto = 6;
        if (dp_sess_steer_port(t, &out, shard, 1024, 65535, uint16_t(1024 + (r >> 33) % 64512), nullptr) != 0)
            continue;
        const int rc = dp_sess_open(t, &in, &out, uint32_t(r >> 58), 0, nullptr, nullptr);
        if (rc == 0) {
            ++held;
        } else if (rc == DP_SESS_EFULL) {
            full[shard] = 1;
            ++shards_full;
        } // EEXIST: a random duplicate key, draw again
        auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - last).count() > 10) {
            std::fprintf(stderr, "session_capacity_bench: %.1f%% (%llu connections)\n", 100.0 * held / target,
                         (unsigned long long)held);
            last = now;
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rss = ProcBytes("/proc/self/status", "VmRSS:");
    const double huge = ProcBytes("/proc/self/smaps_rollup", "AnonHugePages:");
    uint64_t entries = 0;
    for (uint32_t k = 0; k < shards; ++k) {
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t, k, &st);
        entries += st.entries;
    }
    std::printf("session_capacity_bench: %u shards x %u sessions: %llu connections held (%llu sessions), "
                "every shard refusing the next\n",
                shards, per_shard, (unsigned long long)held, (unsigned long long)entries);
    std::printf("  table configured: %zu bytes = %.3f GiB, %.2f B/connection\n", bytes, bytes / 1073741824.0,
                double(bytes) / double(held));
    std::printf("  resident (VmRSS): %.0f bytes = %.3f GiB (+%.3f GiB for the table), %.2f B/connection; "
                "on huge pages %.3f GiB\n",
                rss, rss / 1073741824.0, (rss - rss0) / 1073741824.0, rss / double(held), huge / 1073741824.0);
    std::printf("  fill: %.1f s wall, %.2f M connections/s (%llu attempts)\n", secs, held / secs / 1e6,
                (unsigned long long)attempts);
    munmap(mem, bytes);
    return 0;
}
