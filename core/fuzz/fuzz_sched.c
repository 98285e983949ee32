/* libFuzzer harness for the load-balancer schedulers (dp_sched.h): a random
 * configuration, then random pool changes, state changes, connection
 * events, time steps and picks, with a model of the pool kept here. Built by
 * the sanitizer sub-build; see docs/fuzzing.md.
 *
 * Input: a 5-byte header, then operations (a truncated last one is
 * ignored):
 *   header   algo (% 13), servers (1 + % 16), config flags (& 0x1f),
 *            hash input (% 5), sh bucket bits (1 + % 10)
 *   op & 7 == 0  set_server: id, weight (0..255, 255 means 256), maxconn
 *                (% 6), options (bit 0 backup, bits 1-2 slowstart seconds;
 *                both only for HAProxy algorithms)
 *   op & 7 == 1  set_state: id, state (% 4)
 *   op & 7 == 2  pick: key bytes (src, sport)
 *   op & 7 == 3  conn_opened on id
 *   op & 7 == 4  conn_closed on id (byte: active or inactive)
 *   op & 7 == 5  conn_to_inactive on id
 *   op & 7 == 6  remove_server id
 *   op & 7 == 7  time step: byte * 100 ms (slow start runs in seconds)
 * A Maglev table is the smallest prime >= 100 per server, so rebuilds stay
 * fast.
 *
 * Invariants (abort = crash for libFuzzer): a picked server exists, is up
 * (not down, draining or disabled), has an effective weight > 0, is not at
 * its maxconn (HAProxy: active < the ramped maxconn; IPVS: not OVERLOADED)
 * except where HAProxy returns a full server for the connection to queue on
 * (its hash algorithms, and the first backup); a backup is picked only when no active server is usable; a
 * pool with a usable, unlimited active server never answers
 * DP_SCHED_ENOSERVER (for the algorithms that do not hash); the
 * connection counts match the model; a keyed algorithm's lookup agrees
 * with its pick; a clone picks as the original does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define MAX_SRV 16u

typedef struct model_srv {
    int present;
    uint32_t state;
    uint32_t weight;
    uint32_t maxconn;
    uint32_t backup;
    uint32_t active;
    uint32_t inactive;
} model_srv_t;

static model_srv_t model[MAX_SRV];

static int is_ipvs(uint32_t algo)
{
    return algo <= DP_SCHED_MAGLEV;
}

/* HAProxy's hash algorithms return a full server (to queue on it): source,
 * and uri/hdr when the request has the parameter (get_server_uh/hh end in
 * map_get_server_hash or chash_get_server_hash, neither of which tests
 * maxconn); with hash-preserve-affinity maxconn the ring walk skips full
 * servers, but after going round twice it too returns one (lb_chash.c loop
 * protection). */
static int hashes_full_servers(uint32_t algo)
{
    return algo == DP_SCHED_SOURCE || algo == DP_SCHED_SOURCE_CONSISTENT || algo == DP_SCHED_URI ||
           algo == DP_SCHED_URI_CONSISTENT || algo == DP_SCHED_HDR || algo == DP_SCHED_HDR_CONSISTENT;
}

/* HAProxy hands every connection to the first backup when no active
 * server is usable (lb_fwrr.c, lb_fwlc.c, lb_fas.c, lb_chash.c: "else if
 * (p->lbprm.fbck) return p->lbprm.fbck"), full or not: it queues there.
 * static-rr walks its map and random re-checks maxconn, so not those. */
static int first_backup_queues(const dp_sched_config_t *cfg, uint32_t id)
{
    return model[id].backup && !(cfg->flags & DP_SCHED_CFG_ALLBACKUPS) && cfg->algo != DP_SCHED_STATIC_RR &&
           cfg->algo != DP_SCHED_RANDOM;
}

static uint32_t prime_at_least(uint32_t n)
{
    uint32_t d;
    for (;; n++) {
        int prime = n >= 2;
        for (d = 2; d * d <= n && prime; d++)
            prime = n % d != 0;
        if (prime)
            return n;
    }
}

/* Blocks reused across inputs: the pool and clones of it. */
static uint8_t *block(int which, size_t need)
{
    static uint8_t *mem[4];
    static size_t have[4];
    if (need > have[which]) {
        free(mem[which]);
        mem[which] = malloc(need);
        CHECK(mem[which] != NULL);
        have[which] = need;
    }
    return mem[which];
}

/* Algorithms that must find a server whenever an active one is usable and
 * unlimited (the others hash onto one server, or draw at random). */
static int must_find(uint32_t algo)
{
    return algo == DP_SCHED_RR || algo == DP_SCHED_WRR || algo == DP_SCHED_LC || algo == DP_SCHED_WLC ||
           algo == DP_SCHED_ROUNDROBIN || algo == DP_SCHED_STATIC_RR || algo == DP_SCHED_LEASTCONN ||
           algo == DP_SCHED_FIRST;
}

static void check_pick(dp_sched_t *s, const dp_sched_config_t *cfg, const dp_sched_key_t *key, uint64_t now)
{
    dp_ops_t ops;
    int32_t id;
    uint32_t i;
    int active_usable = 0, unlimited_active = 0, active_room = 0;
    size_t size = dp_sched_memory_size(cfg);
    dp_sched_t *copy = dp_sched_clone(block(1, size), size, s);
    dp_sched_t *none = dp_sched_clone(block(2, size), size, s);
    dp_sched_t *avoiding = dp_sched_clone(block(3, size), size, s);
    int32_t avoid = (int32_t)(key->src_ip % cfg->max_servers), other;

    CHECK(copy != NULL && none != NULL && avoiding != NULL);
    dp_ops_reset(&ops);
    id = dp_sched_pick(s, key, now, &ops);
    CHECK(dp_sched_pick(copy, key, now, NULL) == id);
    /* No server to avoid is the plain pick. */
    CHECK(dp_sched_pick_avoid(none, key, -1, now, NULL) == id);
    CHECK(dp_sched_pick_avoid(avoiding, key, (int32_t)cfg->max_servers, now, NULL) == DP_SCHED_EINVAL);
    /* Where a round-robin or least-connection lookup has another unlimited
     * active server, it never returns the one it avoids. */
    other = dp_sched_pick_avoid(avoiding, key, avoid, now, NULL);
    CHECK(other == DP_SCHED_ENOSERVER || ((uint32_t)other < cfg->max_servers && model[other].present &&
                                          model[other].state == DP_SCHED_UP));
    if (must_find(cfg->algo)) {
        for (i = 0; i < cfg->max_servers; i++) {
            dp_sched_server_info_t in;
            if (!model[i].present || model[i].backup || model[i].maxconn || (int32_t)i == avoid)
                continue;
            CHECK(dp_sched_get_server(s, i, &in) == 0);
            if (in.usable && !in.overloaded)
                CHECK(other >= 0 && other != avoid);
        }
    }
    for (i = 0; i < cfg->max_servers; i++) {
        dp_sched_server_info_t in;
        if (!model[i].present || model[i].backup)
            continue;
        CHECK(dp_sched_get_server(s, i, &in) == 0);
        if (in.usable && (!is_ipvs(cfg->algo) || !in.overloaded)) {
            active_usable = 1;
            if (!in.maxconn_now || in.active < in.maxconn_now)
                active_room = 1;
            if (!model[i].maxconn)
                unlimited_active = 1;
        }
    }
    if (id < 0) {
        CHECK(id == DP_SCHED_ENOSERVER);
        CHECK(!(unlimited_active && must_find(cfg->algo)));
        return;
    }
    CHECK((uint32_t)id < cfg->max_servers && model[id].present);
    CHECK(model[id].state == DP_SCHED_UP);
    CHECK(model[id].weight > 0);
    {
        dp_sched_server_info_t in;
        CHECK(dp_sched_get_server(s, (uint32_t)id, &in) == 0);
        CHECK(in.usable && in.eweight > 0);
        CHECK(in.active == model[id].active && in.inactive == model[id].inactive);
        if (is_ipvs(cfg->algo))
            CHECK(!in.overloaded);
        else if (!hashes_full_servers(cfg->algo) && !first_backup_queues(cfg, (uint32_t)id))
            CHECK(in.maxconn_now == 0 || in.active < in.maxconn_now);
        /* affinity maxconn: a full active server only when none has room */
        if (cfg->algo == DP_SCHED_SOURCE_CONSISTENT && (cfg->flags & DP_SCHED_CFG_AFFINITY_MAXCONN) &&
            !model[id].backup && in.maxconn_now && in.active >= in.maxconn_now)
            CHECK(!active_room);
    }
    if (model[id].backup)
        CHECK(!active_usable);
    if (cfg->algo == DP_SCHED_SH || cfg->algo == DP_SCHED_MAGLEV || cfg->algo == DP_SCHED_SOURCE ||
        cfg->algo == DP_SCHED_SOURCE_CONSISTENT)
        CHECK(dp_sched_lookup(s, key, NULL) == id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_sched_config_t cfg;
    dp_sched_t *s;
    size_t i = 5, need;
    uint64_t now = 0;

    if (size < 5)
        return 0;
    memset(&cfg, 0, sizeof cfg);
    memset(model, 0, sizeof model);
    cfg.algo = data[0] % (uint32_t)DP_SCHED__COUNT;
    cfg.max_servers = 1u + data[1] % MAX_SRV;
    cfg.flags = data[2] & 0x1Fu;
    cfg.hash_input = data[3] % 5u;
    cfg.seed = data[4];
    if (cfg.algo == DP_SCHED_SH)
        cfg.table_size = 1u + data[4] % 10u;
    else if (cfg.algo == DP_SCHED_MAGLEV)
        cfg.table_size = prime_at_least(100u * cfg.max_servers);
    need = dp_sched_memory_size(&cfg);
    CHECK(need > 0);
    s = dp_sched_create(block(0, need), need, &cfg);
    CHECK(s != NULL);

    while (i < size) {
        uint8_t op = data[i++];
        uint32_t id;
        if (i >= size)
            break;
        id = data[i] % cfg.max_servers;
        switch (op & 7u) {
        case 0: { /* set_server */
            dp_sched_server_t sv;
            int rc;
            if (size - i < 4)
                return 0;
            memset(&sv, 0, sizeof sv);
            sv.weight = data[i + 1] == 255 ? 256u : data[i + 1];
            sv.maxconn = data[i + 2] % 6u;
            if (!is_ipvs(cfg.algo)) {
                sv.flags = data[i + 3] & 1u;
                sv.slowstart_ms = 1000u * ((data[i + 3] >> 1) & 3u);
            }
            rc = dp_sched_set_server(s, id, &sv, NULL);
            CHECK(rc == 0);
            if (!model[id].present) {
                memset(&model[id], 0, sizeof model[id]);
                model[id].present = 1;
                model[id].state = DP_SCHED_UP;
            }
            model[id].weight = sv.weight;
            model[id].maxconn = sv.maxconn;
            model[id].backup = sv.flags;
            i += 4;
            break;
        }
        case 1: { /* set_state */
            uint32_t st;
            if (size - i < 2)
                return 0;
            st = data[i + 1] % 4u;
            if (!model[id].present) {
                CHECK(dp_sched_set_state(s, id, (dp_sched_state_t)st, now, NULL) == DP_SCHED_ENOENT);
            } else {
                CHECK(dp_sched_set_state(s, id, (dp_sched_state_t)st, now, NULL) == 0);
                model[id].state = st;
            }
            i += 2;
            break;
        }
        case 2: { /* pick */
            dp_sched_key_t k;
            if (size - i < 3)
                return 0;
            memset(&k, 0, sizeof k);
            k.src_ip = 0x0a000000u | ((uint32_t)data[i] << 8) | data[i + 1];
            k.dst_ip = 0xc0a80001u;
            k.src_port = (uint16_t)(1024u + data[i + 2]);
            k.dst_port = 80;
            k.proto = 6;
            k.hash = (uint32_t)data[i] * 2654435761u ^ data[i + 2];
            check_pick(s, &cfg, &k, now);
            i += 3;
            break;
        }
        case 3: /* conn_opened */
            if (!model[id].present) {
                CHECK(dp_sched_conn_opened(s, id, NULL) == DP_SCHED_ENOENT);
            } else {
                CHECK(dp_sched_conn_opened(s, id, NULL) == 0);
                model[id].active++;
            }
            i += 1;
            break;
        case 4: { /* conn_closed */
            int inactive;
            if (size - i < 2)
                return 0;
            inactive = data[i + 1] & 1;
            if (!model[id].present) {
                CHECK(dp_sched_conn_closed(s, id, inactive, NULL) == DP_SCHED_ENOENT);
            } else if (inactive ? model[id].inactive == 0 : model[id].active == 0) {
                CHECK(dp_sched_conn_closed(s, id, inactive, NULL) == DP_SCHED_ECOUNT);
            } else {
                CHECK(dp_sched_conn_closed(s, id, inactive, NULL) == 0);
                if (inactive)
                    model[id].inactive--;
                else
                    model[id].active--;
            }
            i += 2;
            break;
        }
        case 5: /* conn_to_inactive */
            if (model[id].present && model[id].active) {
                CHECK(dp_sched_conn_to_inactive(s, id, NULL) == 0);
                model[id].active--;
                model[id].inactive++;
            } else {
                CHECK(dp_sched_conn_to_inactive(s, id, NULL) < 0);
            }
            i += 1;
            break;
        case 6: /* remove */
            CHECK(dp_sched_remove_server(s, id, NULL) == (model[id].present ? 0 : DP_SCHED_ENOENT));
            memset(&model[id], 0, sizeof model[id]);
            i += 1;
            break;
        default: /* time step */
            now += (uint64_t)data[i] * 100u;
            i += 1;
            break;
        }
    }
    return 0;
}
