/* libFuzzer harness for the session table: random sequences of opens,
 * packets (lookup + track), closes, lookups, bulk lookups and budgeted
 * expiries, each checked against a brute-force model kept here (an array of
 * connections searched linearly), and the shard counters checked after
 * every operation. Built by the sanitizer sub-build (clang,
 * -fsanitize=fuzzer,address,undefined); see docs/fuzzing.md.
 *
 * The table is tiny (2 shards of 9 sessions: 3 buckets, 15 slots each) so
 * full shards, overflow walks, duplicates and unsteered reply keys (refused
 * with DP_SESS_ESHARD) are all reached; timeouts are a few ticks and the
 * clock starts just before the 32-bit wrap, so expiry happens often and
 * across the wrap. The TCP transitions themselves are checked against an
 * independent table in session-test.cc; here the model takes them from
 * dp_sess_tcp_next and checks the table's bookkeeping of them.
 *
 * Input: a sequence of operations, each an opcode byte followed by its
 * arguments (a truncated last operation is ignored):
 *   op % 6 == 0  open:   in-key byte, out-key byte (0: no out key), server byte, dt byte
 *   op % 6 == 1  packet: key byte, tcp flags byte, dt byte
 *   op % 6 == 2  close:  key byte
 *   op % 6 == 3  expire: shard byte, budget byte (% 5; 0 = whole shard), dt byte
 *   op % 6 == 4  lookup: key byte
 *   op % 6 == 5  bulk:   count byte n (n % 41 keys: more than the bulk pipeline's 16 keys ahead, so its ring
 *                        wraps), a key byte each
 * A key byte below 128 names a client -> VIP key, 128 and above a server ->
 * SNAT key (see key_of); either kind may be given as in or out key. dt
 * advances the clock by that many ticks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define SHARDS 2u
#define CAPACITY 9u
#define MAX_CONNS (SHARDS * CAPACITY)

typedef struct model_conn {
    dp_flow_key_t in, out;
    int has_out;
    uint16_t server;
    int state;
    uint32_t last[2];
    uint32_t shard;
    dp_sess_conn_t handle;
} model_conn_t;

static model_conn_t conns[MAX_CONNS];
static dp_sess_expired_t report[MAX_CONNS + 5];
static unsigned nconns;
static uint64_t refused[SHARDS], opened[SHARDS], expired[SHARDS], deleted[SHARDS];
static dp_sess_config_t cfg;

/* Key byte -> key. Inbound keys: 64 clients x 2 source ports to one VIP,
 * TCP for even clients, UDP for odd. Outbound keys: 8 servers x 16 SNAT
 * ports, same protocol rule. */
static dp_flow_key_t key_of(uint8_t k)
{
    dp_flow_key_t key;
    memset(&key, 0, sizeof key);
    if (k < 128) {
        key.src_ip = 0x0A000000u | (k & 63u);
        key.dst_ip = 0xC6336401u;
        key.src_port = (uint16_t)(1000u + (k >> 6));
        key.dst_port = 80;
        key.proto = (k & 1u) ? 17 : 6;
    } else {
        key.src_ip = 0x0B000000u | ((k >> 4) & 7u);
        key.dst_ip = 0x0A640001u;
        key.src_port = 8080;
        key.dst_port = (uint16_t)(20000u + (k & 15u));
        key.proto = (k & 1u) ? 17 : 6;
    }
    return key;
}

static int key_eq(const dp_flow_key_t *a, const dp_flow_key_t *b)
{
    return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
           a->dst_port == b->dst_port && a->proto == b->proto;
}

static uint32_t shard_of(const dp_flow_key_t *k)
{
    return (uint32_t)(((uint64_t)dp_flow_hash(k) * SHARDS) >> 32);
}

/* Model lookup: connection index and direction, or -1. */
static int model_find(const dp_flow_key_t *k, int *dir)
{
    unsigned i;
    for (i = 0; i < nconns; i++) {
        if (key_eq(&conns[i].in, k)) {
            *dir = 0;
            return (int)i;
        }
        if (conns[i].has_out && key_eq(&conns[i].out, k)) {
            *dir = 1;
            return (int)i;
        }
    }
    return -1;
}

static void model_remove(unsigned i)
{
    conns[i] = conns[--nconns];
}

static int idle(const model_conn_t *c, uint32_t now)
{
    uint32_t last = c->last[0], age;
    if (c->has_out && (uint32_t)(c->last[1] - c->last[0]) < 0x80000000u)
        last = c->last[1];
    age = now - last;
    return age < 0x80000000u && age >= cfg.timeout[c->state];
}

static void check_lookup(const dp_sess_table_t *t, const dp_flow_key_t *k)
{
    dp_sess_hit_t hit;
    dp_ops_t ops;
    int dir, i = model_find(k, &dir);
    int rc;
    dp_ops_reset(&ops);
    rc = dp_sess_lookup(t, k, &hit, &ops);
    CHECK(ops.hashes == 1 && ops.table_probes >= 1 && ops.cache_lines >= 1 && ops.table_writes == 0);
    if (i < 0) {
        CHECK(rc == DP_SESS_ENOENT);
        return;
    }
    CHECK(rc == 0);
    CHECK(hit.dir == dir && hit.state == conns[i].state && hit.server == conns[i].server);
    CHECK(hit.conn.shard == conns[i].handle.shard && hit.conn.slot[0] == conns[i].handle.slot[0] &&
          hit.conn.slot[1] == conns[i].handle.slot[1]);
}

static void check_stats(const dp_sess_table_t *t)
{
    uint32_t s, entries[SHARDS] = {0}, nc[SHARDS] = {0}, by[SHARDS][DP_SESS_STATE_COUNT];
    unsigned i, k;
    memset(by, 0, sizeof by);
    for (i = 0; i < nconns; i++) {
        entries[conns[i].shard] += conns[i].has_out ? 2u : 1u;
        nc[conns[i].shard]++;
        by[conns[i].shard][conns[i].state]++;
    }
    for (s = 0; s < SHARDS; s++) {
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t, s, &st);
        CHECK(st.entries == entries[s] && st.connections == nc[s] && st.capacity == CAPACITY);
        CHECK(st.inserts == opened[s] && st.refused_full == refused[s] && st.expired == expired[s] &&
              st.deletes == deleted[s]);
        for (k = 0; k < DP_SESS_STATE_COUNT; k++)
            CHECK(st.by_state[k] == by[s][k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t mem[4096];
    dp_sess_table_t *t;
    uint32_t now = 0xFFFFFF00u;
    size_t i = 0;
    unsigned k;

    dp_sess_config_init(&cfg, SHARDS, CAPACITY, 1);
    /* Short timeouts (ticks): NONE, SYN_SENT, SYN_RECV, ESTABLISHED,
     * FIN_WAIT, CLOSE_WAIT, TIME_WAIT, CLOSED, UDP. */
    {
        static const uint32_t to[DP_SESS_STATE_COUNT] = {3, 20, 10, 200, 20, 10, 20, 2, 30};
        memcpy(cfg.timeout, to, sizeof to);
    }
    CHECK(dp_sess_memory_size(&cfg) <= sizeof mem);
    t = dp_sess_create(mem, sizeof mem, &cfg);
    CHECK(t != NULL);
    nconns = 0;
    memset(refused, 0, sizeof refused);
    memset(opened, 0, sizeof opened);
    memset(expired, 0, sizeof expired);
    memset(deleted, 0, sizeof deleted);

    while (i < size) {
        uint8_t op = data[i++] % 6u;
        if (op == 0) { /* open */
            dp_flow_key_t in, out;
            dp_sess_conn_t h;
            int has_out, rc, dir, want;
            uint32_t sh;
            uint16_t server;
            if (size - i < 4)
                break;
            in = key_of(data[i]);
            has_out = data[i + 1] != 0;
            out = key_of(data[i + 1]);
            server = data[i + 2];
            now += data[i + 3];
            i += 4;
            sh = shard_of(&in);
            rc = dp_sess_open(t, &in, has_out ? &out : NULL, server, now, &h, NULL);
            if (has_out && key_eq(&in, &out))
                want = DP_SESS_EINVAL;
            else if (has_out && shard_of(&out) != sh)
                want = DP_SESS_ESHARD;
            else if (model_find(&in, &dir) >= 0 || (has_out && model_find(&out, &dir) >= 0))
                want = DP_SESS_EEXIST;
            else {
                uint32_t used = 0;
                for (k = 0; k < nconns; k++)
                    if (conns[k].shard == sh)
                        used += conns[k].has_out ? 2u : 1u;
                want = used + (has_out ? 2u : 1u) > CAPACITY ? DP_SESS_EFULL : 0;
            }
            CHECK(rc == want);
            if (rc == DP_SESS_EFULL)
                refused[sh]++;
            if (rc == 0) {
                model_conn_t *c = &conns[nconns++];
                CHECK(nconns <= MAX_CONNS);
                memset(c, 0, sizeof *c);
                c->in = in;
                c->out = out;
                c->has_out = has_out;
                c->server = server;
                c->state = in.proto == 6 ? DP_SESS_NONE : DP_SESS_UDP;
                c->last[0] = c->last[1] = now;
                c->shard = sh;
                c->handle = h;
                CHECK(h.shard == sh && (h.slot[0] == h.slot[1]) == !has_out);
                opened[sh]++;
            }
            check_lookup(t, &in);
            if (has_out)
                check_lookup(t, &out);
        } else if (op == 1) { /* packet */
            dp_flow_key_t key;
            dp_sess_hit_t hit;
            int dir, at, rc;
            uint8_t flags;
            if (size - i < 3)
                break;
            key = key_of(data[i]);
            flags = data[i + 1];
            now += data[i + 2];
            i += 3;
            at = model_find(&key, &dir);
            rc = dp_sess_lookup(t, &key, &hit, NULL);
            CHECK((rc == 0) == (at >= 0));
            if (at >= 0) {
                model_conn_t *c = &conns[at];
                int st = dp_sess_track(t, hit.conn, (dp_sess_dir_t)hit.dir, flags, now, NULL);
                if (c->state != DP_SESS_UDP)
                    c->state = (int)dp_sess_tcp_next((dp_sess_state_t)c->state, (dp_sess_dir_t)dir,
                                                     !c->has_out, flags);
                c->last[dir] = now;
                CHECK(st == c->state);
            }
        } else if (op == 2) { /* close */
            dp_flow_key_t key;
            int dir, at;
            if (size - i < 1)
                break;
            key = key_of(data[i++]);
            at = model_find(&key, &dir);
            if (at >= 0) {
                CHECK(dp_sess_close(t, conns[at].handle, NULL) == 0);
                /* The handle is stale now. */
                CHECK(dp_sess_close(t, conns[at].handle, NULL) == DP_SESS_EINVAL);
                deleted[conns[at].shard]++;
                model_remove((unsigned)at);
            }
            check_lookup(t, &key);
        } else if (op == 3) { /* expire */
            uint32_t sh, budget, got, gone = 0, nreport = 0;
            int reporting;
            if (size - i < 3)
                break;
            sh = data[i] % SHARDS;
            budget = data[i + 1] % 5u;
            now += data[i + 2];
            i += 3;
            /* bit 6 of the budget byte: the reporting variant, with room for
             * every connection (so it never stops early) */
            reporting = (data[i - 2] & 0x40) != 0;
            if (reporting) {
                uint32_t scanned = 0;
                got = dp_sess_expire_report(t, sh, now, budget, report, MAX_CONNS + 5, &nreport, &scanned,
                                            NULL);
                CHECK(got == nreport && scanned >= 1);
            } else {
                got = dp_sess_expire(t, sh, now, budget, NULL);
            }
            /* Whatever went was idle and of this shard; a whole-shard scan
             * (budget 0) takes every idle connection of the shard; the
             * report names exactly those, with their server and state. */
            for (k = 0; k < nconns;) {
                model_conn_t *c = &conns[k];
                int present = dp_sess_lookup(t, &c->in, NULL, NULL) == 0;
                if (c->has_out)
                    CHECK((dp_sess_lookup(t, &c->out, NULL, NULL) == 0) == present);
                if (!present) {
                    CHECK(c->shard == sh && idle(c, now));
                    if (reporting) {
                        uint32_t r, named = 0;
                        for (r = 0; r < nreport; r++)
                            if (report[r].in_key.src_ip == c->in.src_ip && report[r].in_key.dst_ip == c->in.dst_ip &&
                                report[r].in_key.src_port == c->in.src_port &&
                                report[r].in_key.dst_port == c->in.dst_port && report[r].in_key.proto == c->in.proto) {
                                CHECK(report[r].server == c->server && report[r].state == (uint8_t)c->state);
                                named++;
                            }
                        CHECK(named == 1);
                    }
                    expired[sh]++;
                    gone++;
                    model_remove(k);
                    continue;
                }
                if (budget == 0)
                    CHECK(!(c->shard == sh && idle(c, now)));
                k++;
            }
            CHECK(got == gone);
        } else if (op == 4) { /* lookup */
            dp_flow_key_t key;
            if (size - i < 1)
                break;
            key = key_of(data[i++]);
            check_lookup(t, &key);
        } else { /* bulk */
            dp_flow_key_t keys[40];
            dp_sess_hit_t hits[41]; /* hits[n]: a sentinel the lookup must not write */
            dp_ops_t bulk_ops, single_ops;
            unsigned n, found = 0;
            if (size - i < 1)
                break;
            n = data[i++] % 41u;
            if (size - i < n)
                break;
            for (k = 0; k < n; k++)
                keys[k] = key_of(data[i + k]);
            i += n;
            for (k = 0; k < n; k++) {
                int dir, at = model_find(&keys[k], &dir);
                found += at >= 0;
            }
            memset(&hits[n], 0xA5, sizeof hits[n]);
            CHECK(dp_sess_lookup_bulk(t, keys, n, hits, NULL) == found);
            CHECK(hits[n].server == 0xA5A5 && hits[n].conn.slot[0] == 0xA5A5A5A5u);
            /* the same ops as n single lookups */
            dp_ops_reset(&bulk_ops);
            dp_ops_reset(&single_ops);
            CHECK(dp_sess_lookup_bulk(t, keys, n, hits, &bulk_ops) == found);
            for (k = 0; k < n; k++)
                dp_sess_lookup(t, &keys[k], NULL, &single_ops);
            CHECK(memcmp(&bulk_ops, &single_ops, sizeof bulk_ops) == 0);
            for (k = 0; k < n; k++) {
                int dir, at = model_find(&keys[k], &dir);
                if (at < 0)
                    CHECK(hits[k].dir == DP_SESS_DIR_NONE);
                else
                    CHECK(hits[k].dir == dir && hits[k].server == conns[at].server &&
                          hits[k].conn.slot[0] == conns[at].handle.slot[0]);
            }
        }
        check_stats(t);
    }
    /* Everything the model holds is found, in both directions. */
    for (k = 0; k < nconns; k++) {
        check_lookup(t, &conns[k].in);
        if (conns[k].has_out)
            check_lookup(t, &conns[k].out);
    }
    return 0;
}
