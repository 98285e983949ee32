// dp_sess_lookup and dp_sess_lookup_bulk of another revision (linked in
// with every dp_sess_* symbol renamed old_dp_sess_*, by
// bench/session-ab-inproc.sh) against this tree's, in ONE process on ONE
// table: the bucket layout is the same in both, so the old code reads the
// table the new code filled. The two alternate in slices of 131,072
// lookups (a few ms each, in alternating order), each timed by the
// thread's CPU clock, so load from other processes on a shared machine
// lands on both alike; printed per batch size: the median rate of each
// and the median of the per-slice-pair ratios new/old. An A/A pair of
// identical code measures about 1.00 +- 0.04 here, against +-25% for
// whole-process alternation (bench/session-ab.sh).
//
//   session_interleave [SESSIONS (default 8388608)] [ROUNDS (default 20)] [BATCH...]
//   (BATCH 1 = dp_sess_lookup one key at a time; default 1 16 32 256)
#include "dp_session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <time.h>

extern "C" {
unsigned old_dp_sess_lookup_bulk(const dp_sess_table_t *t, const dp_flow_key_t *keys, unsigned n,
                                 dp_sess_hit_t *hits, dp_ops_t *ops);
int old_dp_sess_lookup(const dp_sess_table_t *t, const dp_flow_key_t *key, dp_sess_hit_t *hit, dp_ops_t *ops);
}

namespace {

double ThreadSeconds()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    const uint32_t sessions = argc > 1 ? uint32_t(std::strtoul(argv[1], nullptr, 10)) & ~1u : 8u << 20;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    std::vector<unsigned> batches = {1, 16, 32, 256};
    if (argc > 3) {
        batches.clear();
        for (int a = 3; a < argc; a++)
            batches.push_back(unsigned(std::atoi(argv[a])));
    }
    if (sessions < 2 || rounds < 1)
        return 2;
    dp_sess_config_t cfg;
    dp_sess_config_init(&cfg, 1, sessions, 1000);
    const size_t bytes = dp_sess_memory_size(&cfg);
    // As session_bench: anonymous memory asked to be 2 MiB huge pages.
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 1;
    madvise(mem, bytes, MADV_HUGEPAGE);
    dp_sess_table_t *t = dp_sess_create(mem, bytes, &cfg);
    // The same fill and key draw as session_bench: the shard full, keys of
    // both directions in random order.
    std::mt19937 rng(42);
    std::vector<dp_flow_key_t> resident;
    resident.reserve(sessions);
    while (resident.size() < sessions) {
        dp_flow_key_t in{}, out{};
        in.src_ip = rng();
        in.dst_ip = 0xC6336401u + rng() % 16;
        in.src_port = uint16_t(rng());
        in.dst_port = 80;
        in.proto = 6;
        out.src_ip = 0x0A000000u | (rng() & 0xFFFF);
        out.dst_ip = 0x0A640001u + rng() % 64;
        out.src_port = 8080;
        out.dst_port = uint16_t(rng());
        out.proto = 6;
        if (dp_sess_open(t, &in, &out, rng() & 0x3FF, 0, nullptr, nullptr) != 0)
            continue;
        resident.push_back(in);
        resident.push_back(out);
    }
    constexpr size_t kKeys = 1u << 20, kSlice = 1u << 17;
    std::vector<dp_flow_key_t> keys(kKeys);
    for (auto &k : keys)
        k = resident[rng() % resident.size()];
    std::vector<dp_sess_hit_t> hits(1024);
    std::printf("session_interleave: %u sessions in one shard, %d rounds of %zu lookups per side\n", sessions,
                rounds, kSlice);
    for (unsigned batch : batches) {
        if (batch < 1 || batch > hits.size())
            return 2;
        std::vector<double> rate_old, rate_new, ratio;
        size_t pos = 0;
        unsigned long found = 0;
        for (int r = 0; r < rounds; r++) {
            double seconds[2];
            for (int turn = 0; turn < 2; turn++) {
                const int use_new = (r & 1) ? 1 - turn : turn; // alternate who goes first
                const double t0 = ThreadSeconds();
                for (size_t i = 0; i < kSlice; i += batch) {
                    if (batch == 1)
                        found += (use_new ? dp_sess_lookup(t, &keys[pos], &hits[0], nullptr)
                                          : old_dp_sess_lookup(t, &keys[pos], &hits[0], nullptr)) == 0;
                    else
                        found += use_new ? dp_sess_lookup_bulk(t, &keys[pos], batch, hits.data(), nullptr)
                                         : old_dp_sess_lookup_bulk(t, &keys[pos], batch, hits.data(), nullptr);
                    pos = (pos + batch) & (kKeys - 1);
                }
                seconds[use_new] = ThreadSeconds() - t0;
            }
            rate_old.push_back(kSlice / seconds[0] / 1e6);
            rate_new.push_back(kSlice / seconds[1] / 1e6);
            ratio.push_back(seconds[0] / seconds[1]);
        }
        std::printf("batch %3u  old %6.2f M/s  new %6.2f M/s  new/old %.3f (medians; %.0f%% found)\n", batch,
                    Median(rate_old), Median(rate_new), Median(ratio),
                    100.0 * double(found) / (2.0 * rounds * double(kSlice)));
    }
    return 0;
}
