/* libFuzzer harness for the DIR-24-8 LPM table: random sequences of add,
 * delete, lookup and bulk lookup, each result compared with a brute-force
 * reference (a list of rules and a linear longest-match scan) kept here.
 * Built by the sanitizer sub-build (clang, -fsanitize=fuzzer,address,
 * undefined); see docs/fuzzing.md.
 *
 * Input: a sequence of operations, each an opcode byte followed by its
 * arguments (a truncated last operation is ignored):
 *   op & 3 == 0  add:    depth byte, 3 address bytes, 3 next-hop bytes
 *   op & 3 == 1  delete: depth byte, 3 address bytes
 *   op & 3 == 2  lookup: 3 address bytes
 *   op & 3 == 3  bulk:   count byte n (n % 17 addresses), 3 bytes each
 * Addresses lie in 10.0.0.0/14 (so prefixes overlap often): 10.a.b.c with
 * a = byte0 & 3. A depth byte d means /(12 + d % 21): /12 and /13 cover the
 * whole region, /14 is the region, /15 to /32 split it. Shorter prefixes
 * (a /0 rewrites all 2^24 first-level entries, ~1 s under ASan) would make
 * each run too slow to fuzz; lpm-test.cc covers the default route.
 *
 * The table is small in rules and second-level groups, so refusals
 * (DP_LPM_ENOSPC) are reached too. It is built once and emptied after
 * every input by deleting every rule the reference holds, so each input
 * starts from an empty table; the emptying is itself checked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define MAX_RULES 24u
#define TBL8_GROUPS 4u
#define MAX_BULK 16u

typedef struct ref_rule {
    uint32_t prefix; /* masked to depth */
    unsigned depth;
    uint32_t hop;
} ref_rule_t;

static ref_rule_t ref[MAX_RULES];
static unsigned nref;

static uint32_t mask_of(unsigned depth)
{
    return depth == 0 ? 0 : 0xFFFFFFFFu << (32 - depth);
}

static int ref_find(uint32_t prefix, unsigned depth)
{
    unsigned i;
    for (i = 0; i < nref; i++)
        if (ref[i].prefix == prefix && ref[i].depth == depth)
            return (int)i;
    return -1;
}

/* Longest match by scanning every rule; -1 when nothing covers ip. */
static int64_t ref_lookup(uint32_t ip)
{
    int64_t hop = -1;
    int best = -1;
    unsigned i;
    for (i = 0; i < nref; i++)
        if ((ip & mask_of(ref[i].depth)) == ref[i].prefix && (int)ref[i].depth > best) {
            best = (int)ref[i].depth;
            hop = ref[i].hop;
        }
    return hop;
}

/* Does the /24 of ip hold a rule longer than /24 (dp_lpm.h: then a lookup
 * takes a second read and the /24 uses a second-level group)? */
static int ref_split(uint32_t ip)
{
    unsigned i;
    for (i = 0; i < nref; i++)
        if (ref[i].depth > 24 && ref[i].prefix >> 8 == ip >> 8)
            return 1;
    return 0;
}

static unsigned ref_split_count(void)
{
    unsigned i, j, n = 0;
    for (i = 0; i < nref; i++) {
        int first = ref[i].depth > 24;
        for (j = 0; j < i && first; j++)
            if (ref[j].depth > 24 && ref[j].prefix >> 8 == ref[i].prefix >> 8)
                first = 0;
        n += (unsigned)first;
    }
    return n;
}

static dp_lpm_t *lpm_table(void)
{
    static dp_lpm_t *t;
    if (!t) {
        dp_lpm_config_t cfg = {MAX_RULES, TBL8_GROUPS};
        size_t size = dp_lpm_memory_size(&cfg);
        void *mem = malloc(size);
        CHECK(size > 0 && mem != NULL);
        t = dp_lpm_create(mem, size, &cfg);
        CHECK(t != NULL);
    }
    return t;
}

static uint32_t addr_of(const uint8_t *b)
{
    return 0x0A000000u | ((uint32_t)(b[0] & 3u) << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static unsigned depth_of(uint8_t b)
{
    return 12u + b % 21u;
}

static void check_lookup(const dp_lpm_t *t, uint32_t ip)
{
    dp_ops_t ops;
    uint32_t hop = 0xDEADBEEFu;
    int64_t want = ref_lookup(ip);
    int rc;
    unsigned probes = ref_split(ip) ? 2u : 1u;
    dp_ops_reset(&ops);
    rc = dp_lpm_lookup(t, ip, &hop, &ops);
    if (want < 0)
        CHECK(rc == DP_LPM_ENOENT);
    else
        CHECK(rc == 0 && hop == (uint32_t)want);
    CHECK(ops.table_probes == probes && ops.cache_lines == probes);
}

static void check_stats(const dp_lpm_t *t)
{
    dp_lpm_stats_t st;
    dp_lpm_get_stats(t, &st);
    CHECK(st.rules == nref);
    CHECK(st.tbl8_groups_used == ref_split_count());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_lpm_t *t = lpm_table();
    size_t i = 0;

    while (i < size) {
        uint8_t op = data[i++];
        if ((op & 3u) == 0) { /* add */
            unsigned depth;
            uint32_t raw, prefix, hop;
            int rc, at, refuse;
            if (size - i < 7)
                break;
            depth = depth_of(data[i]);
            raw = addr_of(data + i + 1);
            prefix = raw & mask_of(depth);
            hop = ((uint32_t)data[i + 4] << 16) | ((uint32_t)data[i + 5] << 8) | data[i + 6];
            i += 7;
            at = ref_find(prefix, depth);
            /* A new rule is refused when the rule store is full, or when it
             * needs a second-level group and every group is in use. */
            refuse = at < 0 && (nref >= MAX_RULES ||
                                (depth > 24 && !ref_split(prefix) && ref_split_count() >= TBL8_GROUPS));
            /* Unmasked: bits beyond the depth must be ignored. */
            rc = dp_lpm_add(t, raw, (uint8_t)depth, hop, NULL);
            if (refuse) {
                CHECK(rc == DP_LPM_ENOSPC);
            } else {
                CHECK(rc == 0);
                if (at < 0)
                    at = (int)nref++;
                ref[at].prefix = prefix;
                ref[at].depth = depth;
                ref[at].hop = hop;
            }
            check_stats(t);
            /* The range just added (or refused) resolves as the reference
             * says at its first and last address. */
            check_lookup(t, prefix);
            check_lookup(t, prefix | ~mask_of(depth));
        } else if ((op & 3u) == 1) { /* delete */
            unsigned depth;
            uint32_t prefix;
            int at;
            if (size - i < 4)
                break;
            depth = depth_of(data[i]);
            prefix = addr_of(data + i + 1) & mask_of(depth);
            i += 4;
            at = ref_find(prefix, depth);
            if (at < 0) {
                CHECK(dp_lpm_delete(t, prefix, (uint8_t)depth, NULL) == DP_LPM_ENOENT);
            } else {
                CHECK(dp_lpm_delete(t, prefix, (uint8_t)depth, NULL) == 0);
                ref[at] = ref[--nref];
            }
            check_stats(t);
            check_lookup(t, prefix);
            check_lookup(t, prefix | ~mask_of(depth));
        } else if ((op & 3u) == 2) { /* lookup */
            if (size - i < 3)
                break;
            check_lookup(t, addr_of(data + i));
            i += 3;
        } else { /* bulk */
            uint32_t ips[MAX_BULK], hops[MAX_BULK];
            unsigned n, k, probes = 0;
            dp_ops_t ops;
            if (size - i < 1)
                break;
            n = data[i++] % (MAX_BULK + 1);
            if (size - i < 3 * (size_t)n)
                break;
            for (k = 0; k < n; k++, i += 3)
                ips[k] = addr_of(data + i);
            dp_ops_reset(&ops);
            dp_lpm_lookup_bulk(t, ips, hops, n, &ops);
            for (k = 0; k < n; k++) {
                int64_t want = ref_lookup(ips[k]);
                CHECK(hops[k] == (want < 0 ? DP_LPM_MISS : (uint32_t)want));
                probes += ref_split(ips[k]) ? 2u : 1u;
            }
            CHECK(ops.table_probes == probes && ops.cache_lines == probes);
        }
    }

    /* Empty the table for the next input: every rule deletes, and then
     * nothing is left and nothing matches. */
    while (nref > 0) {
        ref_rule_t r = ref[--nref];
        CHECK(dp_lpm_delete(t, r.prefix, (uint8_t)r.depth, NULL) == 0);
        check_lookup(t, r.prefix);
    }
    check_stats(t);
    return 0;
}
