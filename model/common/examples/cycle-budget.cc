// The cycle budget of one packet: run the C core's IPv4 parse and route
// lookup on a real frame, read what it counted, and price the counts with a
// CycleCost as a platform profile would. This is how every device model
// turns "what the box did to the packet" into time.
//
//   ./common-cycle-budget
#include "cycle-cost.h"
#include "dp.h"

#include <cstdio>
#include <vector>

using namespace routertwin;

int
main()
{
    // A 64-byte UDP frame from 198.18.0.1 to 198.19.0.1 (RFC 2544 addresses).
    dp_build_spec_t spec{};
    spec.src_ip = 0xC6120001u;
    spec.dst_ip = 0xC6130001u;
    spec.ttl = 64;
    spec.ip_proto = DP_IPPROTO_UDP;
    spec.src_port = 1024;
    spec.dst_port = 7;
    spec.payload_len = 18;
    uint8_t frame[128];
    size_t len = 0;
    dp_build(&spec, frame, sizeof frame, &len, nullptr);

    // A FIB with one route, in memory the caller owns (the core never mallocs).
    dp_lpm_config_t cfg{};
    cfg.max_rules = 16;
    cfg.tbl8_groups = 4;
    std::vector<uint8_t> mem(dp_lpm_memory_size(&cfg));
    dp_lpm_t* fib = dp_lpm_create(mem.data(), mem.size(), &cfg);
    dp_lpm_add(fib, 0xC6130000u, 16, 3, nullptr); // 198.19.0.0/16 -> hop 3

    // What forwarding this packet costs, in countable units.
    dp_ops_t ops{};
    dp_parsed_t p;
    uint32_t hop = 0;
    dp_parse(frame, len, nullptr, &p, &ops);
    dp_lpm_lookup(fib, p.dst_ip, &hop, &ops);
    dp_ip4_decrement_ttl(frame + p.l3_offset, len - p.l3_offset, &ops);

    // Prices, as a platform profile gives them (illustrative numbers: the
    // real ones live in scenarios/platforms/*.yaml with their sources).
    CycleCost cost;
    cost.clockHz = 1.5e9;
    cost.fixedCyclesPerPacket = 300;
    cost.SetCounterPrice("bytes_parsed", 0.5);
    cost.SetCounterPrice("cache_lines", 40);
    cost.SetCounterPrice("csum_updates", 4);
    std::printf("next hop %u\n", hop);
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        if (dp_ops_counter(&ops, i) != 0)
        {
            std::printf("  %-16s %llu\n", dp_ops_counter_name(i),
                        static_cast<unsigned long long>(dp_ops_counter(&ops, i)));
        }
    }
    const double cycles = cost.Cycles(ops, 64);
    std::printf("cycles per packet %.1f, one core forwards %.3f Mpps\n", cycles,
                cost.clockHz / cycles / 1e6);
    return 0;
}
