/* libFuzzer harness for the stick table: one set of 8 ways (capacity 8),
 * so the model kept here is exact: an array of (key, server, expiry, last
 * use) with least-recently-used replacement (purge) or refusal (nopurge),
 * HAProxy's "expire since last created or matched", a budgeted sweep and
 * server removal; the table's counters are checked after every operation.
 * Built by the sanitizer sub-build (see docs/fuzzing.md).
 *
 * Input: 3 configuration bytes (key length 1..4, expire ms 0..63,
 * on_full), then operations of 3 bytes (a truncated last one is ignored):
 * op byte (kind = op % 5: store, lookup, remove, expire, forget), key byte
 * (the key is that byte repeated key-length times, % 12 distinct keys),
 * dt byte (ms the clock advances; for store also the server = dt % 5). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct slot {
    int used;
    uint8_t key;
    int32_t server;
    uint64_t expire_at; /* UINT64_MAX: never */
    uint64_t last_use;
} slot_t;

static uint64_t mem[128]; /* 1 KiB: one set of 8 needs 104 + 448 bytes */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_persist_config_t cfg;
    dp_persist_t *t;
    dp_persist_stats_t st;
    slot_t m[8];
    uint64_t now = 0, clock = 0, expired = 0, purged = 0, refused = 0, removed = 0;
    uint8_t key[4];
    size_t i;
    unsigned j;
    if (size < 3)
        return 0;
    cfg.capacity = 8;
    cfg.key_len = 1u + data[0] % 4u;
    cfg.expire_ms = data[1] % 64u;
    cfg.on_full = data[2] & 1u;
    CHECK(dp_persist_memory_size(&cfg) <= sizeof mem);
    t = dp_persist_create(mem, sizeof mem, &cfg);
    CHECK(t != NULL);
    memset(m, 0, sizeof m);
    for (i = 3; i + 3 <= size; i += 3) {
        uint8_t op = data[i] % 5u, k = (uint8_t)(data[i + 1] % 12u), dt = data[i + 2];
        int found = -1, rc;
        now += dt;
        memset(key, k, sizeof key);
        for (j = 0; j < 8; j++)
            if (m[j].used && m[j].key == k)
                found = (int)j;
        if (op == 0) { /* store */
            int32_t server = dt % 5;
            int want;
            rc = dp_persist_store(t, key, server, now, NULL);
            if (found >= 0) {
                want = (m[found].expire_at <= now) ? 0 : 1;
                if (want == 0)
                    expired++;
            } else {
                int free_way = -1;
                want = 0;
                for (j = 0; j < 8 && free_way < 0; j++)
                    if (!m[j].used || m[j].expire_at <= now)
                        free_way = (int)j;
                if (free_way >= 0) {
                    if (m[free_way].used)
                        expired++;
                } else if (cfg.on_full == DP_PERSIST_FULL_REFUSE) {
                    want = DP_PERSIST_EFULL;
                    refused++;
                } else {
                    free_way = 0;
                    for (j = 1; j < 8; j++)
                        if (m[j].last_use < m[free_way].last_use)
                            free_way = (int)j;
                    purged++;
                }
                found = free_way;
            }
            CHECK(rc == want);
            if (rc >= 0) {
                m[found].used = 1;
                m[found].key = k;
                m[found].server = server;
                m[found].expire_at = cfg.expire_ms ? now + cfg.expire_ms : UINT64_MAX;
                m[found].last_use = ++clock;
            }
        } else if (op == 1) { /* lookup */
            rc = dp_persist_lookup(t, key, now, NULL);
            if (found < 0) {
                CHECK(rc == DP_PERSIST_ENOTFOUND);
            } else if (m[found].expire_at <= now) {
                CHECK(rc == DP_PERSIST_ENOTFOUND);
                m[found].used = 0;
                expired++;
            } else {
                CHECK(rc == m[found].server);
                m[found].expire_at = cfg.expire_ms ? now + cfg.expire_ms : UINT64_MAX;
                m[found].last_use = ++clock;
            }
        } else if (op == 2) { /* remove */
            rc = dp_persist_remove(t, key, NULL);
            CHECK(rc == (found >= 0 ? 0 : DP_PERSIST_ENOTFOUND));
            if (found >= 0) {
                m[found].used = 0;
                removed++;
            }
        } else if (op == 3) { /* expire the whole (single) set */
            uint32_t want = 0;
            for (j = 0; j < 8; j++)
                if (m[j].used && m[j].expire_at <= now) {
                    m[j].used = 0;
                    want++;
                }
            CHECK(dp_persist_expire(t, now, 1, NULL) == want);
            expired += want;
        } else { /* forget server k % 5 */
            uint32_t want = 0;
            for (j = 0; j < 8; j++)
                if (m[j].used && m[j].server == k % 5) {
                    m[j].used = 0;
                    want++;
                }
            CHECK(dp_persist_forget_server(t, k % 5, NULL) == want);
            removed += want;
        }
        dp_persist_get_stats(t, &st);
        {
            uint32_t used = 0;
            for (j = 0; j < 8; j++)
                used += (uint32_t)m[j].used;
            CHECK(st.entries == used);
        }
        CHECK(st.expired == expired && st.purged == purged && st.refused_full == refused && st.removed == removed);
    }
    return 0;
}
