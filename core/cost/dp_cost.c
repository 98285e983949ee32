/* dp_cost: the core measures itself.
 *
 * For every dp_ operation and packet path the models run, a fixed, seeded
 * input set (the same bytes on every ISA: xorshift64 from one seed, fields
 * assembled by value) is run `calls` times, `reps` passes. Per operation
 * it reports the calls, the dp_ops counters of one pass (deterministic:
 * identical on every ISA and every pass, so an importer can check that a
 * board ran this core version), and per pass the tick register and, where
 * Linux perf allows, user-space instructions and core cycles; the importer
 * uses the fastest pass. Output: one JSON document on stdout.
 *
 *   dp_cost [--calls N] [--reps R] [--lpm-routes N] [--only a,b,...]
 *           [--environment TEXT] [--cpu TEXT] [--commit SHA] [--list]
 *
 * Instruction counts under emulation (qemu-user TCG plugin, callgrind) are
 * attributed with rt_cost_mark(): it is called (and only called) right
 * before and right after the first pass of each operation, in the order of
 * the JSON's "ops" array, so the k-th pair of calls brackets op k
 * (core/cost/count_insns.py). Operation "noop" runs the same loop with an
 * empty body: its figures are the harness's own overhead, which the
 * importer subtracts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_cost_clock.h"

#ifndef RT_COST_COMMIT
#define RT_COST_COMMIT "unknown"
#endif
#ifndef RT_COST_FLAGS
#define RT_COST_FLAGS "unknown"
#endif

/* Harness format version: bump when operations or their inputs change
 * (instruction counts and counters are then no longer comparable). */
#define DP_COST_FORMAT "routertwin-cost/1"

#define NIN 256u           /* distinct inputs per operation (frames, keys) */
#define FRAME_CAP 1600u    /* bytes per frame slot (1518 frame + headroom) */
#define HEADROOM 64u

static uint64_t rng_state;
static uint64_t rng(void)
{ /* xorshift64* (Vigna 2016): the same sequence on every ISA */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Everything the operations read, built once by init(). Aligned: every
 * member at the same cache-line offset in any build (string and code sizes
 * move the data before it), since memcpy's paths, and so the counts,
 * depend on alignment. */
static struct {
    uint8_t frames[NIN][FRAME_CAP];  /* TCP/UDP frames at offset HEADROOM */
    uint8_t pristine[NIN][FRAME_CAP];
    uint8_t scratch[FRAME_CAP];      /* a frame an operation turns into another one */
    size_t len[NIN];
    dp_parsed_t parsed[NIN];
    uint8_t big[1500];               /* checksum payload */
    dp_build_spec_t spec[NIN];
    dp_flow_key_t keys[NIN];         /* resident keys (flow, session) */
    dp_flow_key_t out_keys[NIN];
    uint32_t ips_small[NIN], ips_big[NIN];
    dp_lpm_t *lpm_small, *lpm_big;
    dp_flow_table_t *flow_full, *flow_empty;
    void *flow_empty_mem; size_t flow_size;
    dp_flow_config_t flow_cfg;
    dp_sess_table_t *sess_full, *sess_empty;
    void *sess_empty_mem; size_t sess_size;
    dp_sess_config_t sess_cfg;
    dp_sess_conn_t conns[NIN];
    dp_sched_t *sched[6];
    void *sched_mem[6]; size_t sched_size[6];
    dp_sched_config_t sched_cfg[6];
    dp_sched_key_t skeys[NIN];
    dp_syncookie_t sc;
    dp_syncookie_tuple_t tuples[NIN];
    uint32_t cookies[NIN];
    dp_rl_t *rl; void *rl_mem; size_t rl_size; dp_rl_config_t rl_cfg;
    dp_dns_zone_t *zone;
    uint8_t dnsq[NIN][64];           /* DNS queries (messages) */
    size_t dnsq_len[NIN];
    uint8_t dnsf[NIN][128];          /* the same queries in Ethernet/IPv4/UDP frames */
    size_t dnsf_len[NIN];
    uint8_t dns_out[1600];
    /* L7: WebBench-like request heads and server response heads, each also
     * parsed once (the inputs of the rule, cookie and persistence ops) */
    uint8_t req[NIN][256];
    uint32_t req_len[NIN];
    uint8_t resp[NIN][192];
    uint32_t resp_len[NIN];
    dp_http_t req_parsed[NIN], resp_parsed[NIN];
    uint8_t req_head[NIN][256], resp_head[NIN][192]; /* the parsers' buffers */
    dp_http_t http;                  /* the parse ops' own parser */
    uint8_t http_buf[512];
    uint8_t head_scratch[512];       /* a response head a cookie is inserted into */
    dp_cookie_edit_t cookie_edit;    /* here, not on the stack: memcpy copies from it, and the stack's
                                        alignment moves with the environment's size */
    dp_urlrule_table_t *rules;
    dp_persist_t *persist;
    uint8_t persist_keys[NIN][4];
    dp_splice_t splice[NIN];
    uint8_t hello[NIN][320];         /* TLS ClientHello records with SNI */
    uint32_t hello_len[NIN];
    uint64_t now;
    volatile uint32_t sink;
} W __attribute__((aligned(64)));

static void *xalloc(size_t n)
{
    void *p = NULL;
    n = (n + 127) & ~(size_t)127;
    if (posix_memalign(&p, 128, n) != 0) {
        fprintf(stderr, "dp_cost: out of memory (%zu bytes)\n", n);
        exit(3);
    }
    memset(p, 0, n);
    return p;
}

static uint32_t mask_of(unsigned depth) { return depth == 0 ? 0u : 0xFFFFFFFFu << (32 - depth); }

/* n routes in lpm_bench's assumed BGP-like mix (57% /24, 40% /16../23,
 * 0.3% /8../15, 2.7% /25../32) drawn from seed, NIN lookup addresses (90%
 * inside a route, 10% anywhere) and, when build is set, the DIR-24-8 table
 * holding them. The addresses do not depend on build, so a run of a subset
 * of the operations sees the same inputs as a full run. */
static dp_lpm_t *make_lpm(uint64_t seed, unsigned n, uint32_t *ips, int build)
{
    rng_state = seed;
    uint32_t *pre = xalloc(sizeof(uint32_t) * n);
    uint8_t *dep = xalloc(n);
    for (unsigned k = 0; k < n; k++) {
        unsigned r = (unsigned)(rng() % 1000), depth;
        if (r < 570) depth = 24;
        else if (r < 970) depth = 16 + (unsigned)(rng() % 8);
        else if (r < 973) depth = 8 + (unsigned)(rng() % 8);
        else depth = 25 + (unsigned)(rng() % 8);
        pre[k] = (uint32_t)rng() & mask_of(depth);
        dep[k] = (uint8_t)depth;
    }
    for (unsigned i = 0; i < NIN; i++) {
        if (rng() % 10 < 9) {
            unsigned k = (unsigned)(rng() % n);
            ips[i] = pre[k] | ((uint32_t)rng() & ~mask_of(dep[k]));
        } else {
            ips[i] = (uint32_t)rng();
        }
    }
    dp_lpm_t *lpm = NULL;
    if (build) {
        dp_lpm_config_t cfg = {n + n / 10 + 16, n >= 65536 ? 65536u : 4096u};
        size_t size = dp_lpm_memory_size(&cfg);
        lpm = dp_lpm_create(xalloc(size), size, &cfg);
        for (unsigned k = 0; k < n; k++) {
            if (dp_lpm_add(lpm, pre[k], dep[k], (uint32_t)(k * 2654435761u) & DP_LPM_MAX_NEXT_HOP, NULL) != 0) {
                fprintf(stderr, "dp_cost: LPM table refused route %u of %u\n", k, n);
                exit(3);
            }
        }
    }
    free(pre);
    free(dep);
    return lpm;
}

static dp_flow_key_t rand_key(void)
{
    dp_flow_key_t k;
    memset(&k, 0, sizeof k);
    k.src_ip = (uint32_t)rng(); k.dst_ip = 0xC6120000u | (uint32_t)(rng() & 0xFFFF);
    k.src_port = (uint16_t)(1024 + rng() % 60000); k.dst_port = 80; k.proto = DP_IPPROTO_TCP;
    return k;
}

static void wr16be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static uint32_t rd32be(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* A TLS 1.2 ClientHello record (RFC 5246 7.4.1.2) as a browser resuming a
 * session sends it: a 32-byte session ID, 16 cipher suites, the
 * server_name extension (RFC 6066 3) for sni and supported_groups. */
static uint32_t build_client_hello(uint8_t *r, const char *sni, uint32_t id)
{
    uint32_t n = 0, sni_len = (uint32_t)strlen(sni), hs, ext;
    r[n++] = 22; r[n++] = 3; r[n++] = 1; n += 2;      /* handshake record, TLS 1.0 layer; length later */
    hs = n;
    r[n++] = 1; n += 3;                                /* ClientHello; length later */
    r[n++] = 3; r[n++] = 3;                            /* client_version TLS 1.2 */
    for (int b = 0; b < 32; b++) r[n++] = (uint8_t)rng(); /* random */
    r[n++] = 32;
    for (int b = 0; b < 32; b++) r[n++] = (uint8_t)(id >> (8 * (b & 3)) ^ (uint8_t)b); /* session ID */
    r[n++] = 0; r[n++] = 32;                           /* 16 cipher suites */
    for (int c = 0; c < 16; c++) { r[n++] = 0xC0; r[n++] = (uint8_t)(0x2B + c); }
    r[n++] = 1; r[n++] = 0;                            /* compression: null */
    ext = n; n += 2;
    r[n++] = 0; r[n++] = 0;                            /* server_name */
    wr16be(r + n, sni_len + 5); n += 2;
    wr16be(r + n, sni_len + 3); n += 2;                /* server_name_list */
    r[n++] = 0;                                        /* host_name */
    wr16be(r + n, sni_len); n += 2;
    memcpy(r + n, sni, sni_len); n += sni_len;
    r[n++] = 0; r[n++] = 10;                           /* supported_groups: x25519, secp256r1 */
    r[n++] = 0; r[n++] = 6; r[n++] = 0; r[n++] = 4;
    r[n++] = 0; r[n++] = 0x1D; r[n++] = 0; r[n++] = 0x17;
    wr16be(r + ext, n - ext - 2);
    wr16be(r + 3, n - 5);
    r[hs + 1] = 0; wr16be(r + hs + 2, n - hs - 4);
    return n;
}

static dp_http_t parsed_head(const uint8_t *msg, uint32_t len, uint8_t *buf, uint32_t cap, int response)
{
    static const dp_http_config_t cfg = {8190, 101};
    dp_http_t h;
    size_t used = 0;
    if (dp_http_init(&h, &cfg, buf, cap, response) != 0 || dp_http_feed(&h, msg, len, &used, NULL) != DP_HTTP_DONE) {
        fprintf(stderr, "dp_cost: an HTTP head of the inputs does not parse\n");
        exit(3);
    }
    return h;
}

/* The L7 inputs: WebBench-like GETs over 3 URL types (the NCTU test's .htm,
 * .gif and CGI paths) with a Cookie header of 2 cookies, one of them the
 * switch's; 200 responses of 4 headers; the NCTU-style rule table (file
 * extensions and a directory, first match); a source-address persistence
 * table of 65,536 entries three-quarters full (resident keys: the first
 * NIN); spliced connections bound with nonzero offsets both ways; and
 * ClientHellos for 64 host names. */
static void init_l7(void)
{
    static const char *const kind[3] = {"htm", "gif", "cgi"};
    rng_state = 0x5EED0008u;
    for (unsigned i = 0; i < NIN; i++) {
        unsigned dir = (unsigned)(rng() % 100), file = (unsigned)(rng() % 1000), k = i % 3;
        int n = k == 2 ? snprintf((char *)W.req[i], sizeof W.req[i],
                                  "GET /cgi-bin/query%u?id=%u HTTP/1.1\r\n", dir, file)
                       : snprintf((char *)W.req[i], sizeof W.req[i], "GET /dir%02u/file%03u.%s HTTP/1.1\r\n", dir,
                                  file, kind[k]);
        n += snprintf((char *)W.req[i] + n, sizeof W.req[i] - (size_t)n,
                      "Host: www.example.com\r\nUser-Agent: WebBench 1.5\r\nCookie: lang=en; SERVERID=s%u\r\n"
                      "Connection: keep-alive\r\n\r\n", (unsigned)(rng() % 16));
        W.req_len[i] = (uint32_t)n;
        W.req_parsed[i] = parsed_head(W.req[i], W.req_len[i], W.req_head[i], sizeof W.req_head[i], 0);
        n = snprintf((char *)W.resp[i], sizeof W.resp[i],
                     "HTTP/1.1 200 OK\r\nServer: Apache/1.3.27\r\nContent-Type: text/html\r\n"
                     "Content-Length: %u\r\nConnection: keep-alive\r\n\r\n", (unsigned)(1024 + rng() % 60000));
        W.resp_len[i] = (uint32_t)n;
        W.resp_parsed[i] = parsed_head(W.resp[i], W.resp_len[i], W.resp_head[i], sizeof W.resp_head[i], 1);
    }

    dp_urlrule_config_t rc = {16, 256, DP_URLRULE_FIRST, {0, 0, 0}};
    size_t rsize = dp_urlrule_memory_size(&rc);
    W.rules = dp_urlrule_create(xalloc(rsize), rsize, &rc);
    static const struct { dp_urlrule_kind_t kind; const char *pattern; } kRules[] = {
        {DP_URL_EXT, "jpg"}, {DP_URL_EXT, "png"}, {DP_URL_EXT, "gif"}, {DP_URL_PATH_BEG, "/cgi-bin/"},
        {DP_URL_EXT, "html"}, {DP_URL_EXT, "htm"}};
    for (uint32_t r = 0; r < sizeof kRules / sizeof kRules[0]; r++)
        if (dp_urlrule_add(W.rules, kRules[r].kind, 0, kRules[r].pattern, 0, r, NULL) < 0) {
            fprintf(stderr, "dp_cost: URL rule %s refused\n", kRules[r].pattern);
            exit(3);
        }

    dp_persist_config_t pc = {65536, 4, 0, DP_PERSIST_FULL_PURGE};
    size_t psize = dp_persist_memory_size(&pc);
    W.persist = dp_persist_create(xalloc(psize), psize, &pc);
    /* the resident keys go in last: a set that overflows purges its oldest
     * entries (HAProxy's default), which must not be theirs */
    for (unsigned i = 49152; i-- > 0;) {
        uint8_t key[4];
        dp_persist_key_ipv4(i < NIN ? W.keys[i].src_ip : (uint32_t)rng(), key);
        if (i < NIN) memcpy(W.persist_keys[i], key, 4);
        dp_persist_store(W.persist, key, (int32_t)(i % 16), 0, NULL);
    }

    for (unsigned i = 0; i < NIN; i++) {
        char sni[48];
        snprintf(sni, sizeof sni, "shop%u.example.com", (unsigned)(rng() % 64));
        W.hello_len[i] = build_client_hello(W.hello[i], sni, (uint32_t)rng());
    }
}

/* Each part draws from its own seed (change DP_COST_FORMAT with them). */
static void init(unsigned lpm_routes, int build_big)
{
    W.lpm_small = make_lpm(0x5EED0001u, 1024, W.ips_small, 1);
    W.lpm_big = make_lpm(0x5EED0002u, lpm_routes, W.ips_big, build_big);
    rng_state = 0x5EED0003u;
    for (unsigned i = 0; i < NIN; i++) {
        dp_build_spec_t *s = &W.spec[i];
        memset(s, 0, sizeof *s);
        for (int b = 0; b < 6; b++) { s->dst_mac[b] = (uint8_t)rng(); s->src_mac[b] = (uint8_t)rng(); }
        s->src_ip = 0xC6120000u | (uint32_t)(rng() & 0xFFFF);
        s->dst_ip = W.ips_big[i]; /* 90% inside a route of the big table */
        s->ttl = 64;
        s->ip_proto = (i & 1) ? DP_IPPROTO_UDP : DP_IPPROTO_TCP;
        s->ip_id = (uint16_t)rng();
        s->src_port = (uint16_t)(1024 + rng() % 60000);
        s->dst_port = (i & 1) ? 53 : 80;
        s->tcp_seq = (uint32_t)rng();
        s->tcp_flags = 0x10; /* ACK */
        s->payload_len = (uint16_t)(i & 1 ? 18 : 6); /* 64-byte frames with FCS */
        s->l4_checksum = 1;
        if (dp_build(s, W.pristine[i] + HEADROOM, FRAME_CAP - HEADROOM, &W.len[i], NULL) != DP_OK) {
            fprintf(stderr, "dp_cost: dp_build failed on input %u\n", i);
            exit(3);
        }
        if (dp_parse(W.pristine[i] + HEADROOM, W.len[i], NULL, &W.parsed[i], NULL) != DP_OK) {
            fprintf(stderr, "dp_cost: dp_parse failed on input %u\n", i);
            exit(3);
        }
    }
    memcpy(W.frames, W.pristine, sizeof W.frames);
    for (unsigned i = 0; i < sizeof W.big; i++) W.big[i] = (uint8_t)rng();

    rng_state = 0x5EED0004u;
    /* Flow table: one shard of 65,536, filled to 75% (resident keys are
     * the first NIN of them). */
    W.flow_cfg.shards = 1; W.flow_cfg.entries_per_shard = 65536;
    W.flow_size = dp_flow_memory_size(&W.flow_cfg);
    W.flow_full = dp_flow_create(xalloc(W.flow_size), W.flow_size, &W.flow_cfg);
    W.flow_empty_mem = xalloc(W.flow_size);
    for (unsigned i = 0; i < NIN; i++) W.keys[i] = rand_key();
    for (unsigned i = 0; i < 49152; i++) {
        dp_flow_key_t k = i < NIN ? W.keys[i] : rand_key();
        dp_flow_insert(W.flow_full, &k, i, 0, NULL);
    }

    rng_state = 0x5EED0005u;
    /* Session table: one shard of 65,536 sessions filled to capacity (the
     * ADX configuration's load: 83% of slots), handshakes tracked. */
    dp_sess_config_init(&W.sess_cfg, 1, 65536, 1000);
    W.sess_size = dp_sess_memory_size(&W.sess_cfg);
    W.sess_full = dp_sess_create(xalloc(W.sess_size), W.sess_size, &W.sess_cfg);
    W.sess_empty_mem = xalloc(W.sess_size);
    for (unsigned i = 0; i < 32768; i++) {
        dp_flow_key_t in = i < NIN ? W.keys[i] : rand_key(), out;
        memset(&out, 0, sizeof out);
        out.src_ip = 0x0A000000u | (uint32_t)(rng() & 0xFFFFFF); out.dst_ip = 0xC6130001u;
        out.src_port = 8080; out.dst_port = (uint16_t)(1024 + i % 60000); out.proto = DP_IPPROTO_TCP;
        dp_sess_conn_t c;
        if (dp_sess_open(W.sess_full, &in, &out, i % 16, 0, &c, NULL) != 0)
            continue;
        dp_sess_track(W.sess_full, c, DP_SESS_DIR_IN, 0x02, 0, NULL);
        dp_sess_track(W.sess_full, c, DP_SESS_DIR_OUT, 0x12, 0, NULL);
        dp_sess_track(W.sess_full, c, DP_SESS_DIR_IN, 0x10, 0, NULL);
        if (i < NIN) { W.conns[i] = c; W.out_keys[i] = out; }
    }

    /* Schedulers: 16 servers, weights 1..4. */
    static const uint32_t algos[6] = {DP_SCHED_MAGLEV, DP_SCHED_WRR, DP_SCHED_WLC,
                                      DP_SCHED_ROUNDROBIN, DP_SCHED_LEASTCONN, DP_SCHED_RR};
    for (unsigned a = 0; a < 6; a++) {
        dp_sched_config_t *c = &W.sched_cfg[a];
        memset(c, 0, sizeof *c);
        c->algo = algos[a]; c->max_servers = 16;
        W.sched_size[a] = dp_sched_memory_size(c);
        W.sched_mem[a] = xalloc(W.sched_size[a]);
    }
    for (unsigned i = 0; i < NIN; i++) {
        memset(&W.skeys[i], 0, sizeof W.skeys[i]);
        W.skeys[i].src_ip = W.keys[i].src_ip; W.skeys[i].dst_ip = W.keys[i].dst_ip;
        W.skeys[i].src_port = W.keys[i].src_port; W.skeys[i].dst_port = W.keys[i].dst_port;
        W.skeys[i].proto = W.keys[i].proto;
    }

    rng_state = 0x5EED0006u;
    dp_syncookie_config_t scc;
    memset(&scc, 0, sizeof scc);
    for (int b = 0; b < 16; b++) scc.key[b] = (uint8_t)rng();
    scc.counter_bits = 5; scc.max_age = 1;
    dp_syncookie_init(&W.sc, &scc);
    for (unsigned i = 0; i < NIN; i++) {
        W.tuples[i].client_ip = W.keys[i].src_ip; W.tuples[i].vip = W.keys[i].dst_ip;
        W.tuples[i].client_port = W.keys[i].src_port; W.tuples[i].vip_port = 80;
        W.cookies[i] = dp_syncookie_make(&W.sc, &W.tuples[i], 1460, 100, NULL);
    }

    /* DNS: a zone of 1,024 names with 1-4 A records each; queries for
     * names of the zone, A/IN, recursion desired, no EDNS. */
    rng_state = 0x5EED0007u;
    dp_dns_zone_config_t zc = {1024, 1024 * 32, 4096, 0};
    size_t zsize = dp_dns_zone_memory_size(&zc);
    W.zone = dp_dns_zone_create(xalloc(zsize), zsize, &zc);
    uint8_t wire[64];
    size_t wl;
    for (unsigned n = 0; n < 1024; n++) {
        char name[48];
        uint32_t addrs[4] = {(uint32_t)rng(), (uint32_t)rng(), (uint32_t)rng(), (uint32_t)rng()};
        snprintf(name, sizeof name, "host%u.pool%u.example.com", n, n % 7);
        if (dp_dns_name_to_wire(name, wire, sizeof wire, &wl) != 0 ||
            dp_dns_zone_add(W.zone, wire, wl, addrs, 1 + n % 4, 300, NULL) != 0) {
            fprintf(stderr, "dp_cost: DNS zone refused %s\n", name);
            exit(3);
        }
    }
    for (unsigned i = 0; i < NIN; i++) {
        char name[48];
        unsigned n = (unsigned)(rng() % 1024);
        snprintf(name, sizeof name, "host%u.pool%u.example.com", n, n % 7);
        dp_dns_name_to_wire(name, wire, sizeof wire, &wl);
        uint8_t *q = W.dnsq[i];
        memset(q, 0, 12);
        q[0] = (uint8_t)i; q[1] = (uint8_t)(i >> 8); q[2] = 0x01; /* RD */ q[5] = 1; /* QDCOUNT 1 */
        memcpy(q + 12, wire, wl);
        q[12 + wl] = 0; q[13 + wl] = 1; q[14 + wl] = 0; q[15 + wl] = 1; /* A, IN */
        W.dnsq_len[i] = 16 + wl;
        dp_build_spec_t sp = W.spec[i | 1]; /* a UDP spec: addresses and MACs */
        sp.dst_port = 53;
        sp.payload = q;
        sp.payload_len = (uint16_t)W.dnsq_len[i];
        if (dp_build(&sp, W.dnsf[i], sizeof W.dnsf[i], &W.dnsf_len[i], NULL) != DP_OK) {
            fprintf(stderr, "dp_cost: DNS frame %u not built\n", i);
            exit(3);
        }
    }

    init_l7();

    W.rl_cfg.services = 16; W.rl_cfg.ticks_per_second = 1000000;
    W.rl_size = dp_rl_memory_size(&W.rl_cfg);
    W.rl_mem = xalloc(W.rl_size);
}

/* ---- per-pass setup (outside the measured loop) ---- */

static void setup_none(void) {}
static void setup_frames(void) { memcpy(W.frames, W.pristine, sizeof W.frames); }
static void setup_flow_empty(void)
{
    W.flow_empty = dp_flow_create(W.flow_empty_mem, W.flow_size, &W.flow_cfg);
}
static void setup_sess_empty(void)
{
    W.sess_empty = dp_sess_create(W.sess_empty_mem, W.sess_size, &W.sess_cfg);
}
static void setup_sched(unsigned a)
{
    W.sched[a] = dp_sched_create(W.sched_mem[a], W.sched_size[a], &W.sched_cfg[a]);
    for (uint32_t id = 0; id < 16; id++) {
        dp_sched_server_t s;
        memset(&s, 0, sizeof s);
        s.weight = 1 + id % 4;
        dp_sched_set_server(W.sched[a], id, &s, NULL);
    }
    dp_sched_build(W.sched[a], 0, NULL);
}
static void setup_maglev(void) { setup_sched(0); }
static void setup_wrr(void) { setup_sched(1); }
static void setup_wlc(void) { setup_sched(2); }
static void setup_roundrobin(void) { setup_sched(3); }
static void setup_leastconn(void) { setup_sched(4); }
static void setup_rr(void) { setup_sched(5); }
static void setup_rl(void)
{
    W.rl = dp_rl_create(W.rl_mem, W.rl_size, &W.rl_cfg);
    for (uint32_t s = 0; s < 16; s++) dp_rl_set(W.rl, s, 500000, 64, 0, NULL);
    W.now = 0;
}

/* ---- operations: one call each; i is the call number ---- */

#define IN(i) ((i) & (NIN - 1))
#define FRAME(i) (W.frames[IN(i)] + HEADROOM)

static void op_noop(uint32_t i, dp_ops_t *o) { (void)i; (void)o; }
static void op_parse(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p;
    W.sink += (uint32_t)dp_parse(FRAME(i), W.len[IN(i)], NULL, &p, o);
}
static void op_build(uint32_t i, dp_ops_t *o)
{
    size_t n;
    W.sink += (uint32_t)dp_build(&W.spec[IN(i)], FRAME(i), FRAME_CAP - HEADROOM, &n, o);
}
static void op_csum_hdr(uint32_t i, dp_ops_t *o) { W.sink += dp_csum(FRAME(i) + 14, 20, o); }
static void op_csum_1480(uint32_t i, dp_ops_t *o) { W.sink += dp_csum(W.big + (i & 7), 1480, o); }
static void op_csum_upd16(uint32_t i, dp_ops_t *o)
{
    W.sink += dp_csum_update16((uint16_t)W.ips_small[IN(i)], (uint16_t)i, (uint16_t)W.ips_big[IN(i)], o);
}
static void op_csum_upd32(uint32_t i, dp_ops_t *o)
{
    W.sink += dp_csum_update32((uint16_t)i, W.ips_small[IN(i)], W.ips_big[IN(i)], o);
}
static void op_ttl(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_ip4_decrement_ttl(FRAME(i) + 14, W.len[IN(i)] - 14, o);
}
static void op_lpm_small(uint32_t i, dp_ops_t *o)
{
    uint32_t hop = 0;
    W.sink += (uint32_t)dp_lpm_lookup(W.lpm_small, W.ips_small[IN(i)], &hop, o) + hop;
}
static void op_lpm_big(uint32_t i, dp_ops_t *o)
{
    uint32_t hop = 0;
    W.sink += (uint32_t)dp_lpm_lookup(W.lpm_big, W.ips_big[IN(i)], &hop, o) + hop;
}
static void op_flow_lookup(uint32_t i, dp_ops_t *o)
{
    uint64_t v = 0;
    W.sink += (uint32_t)dp_flow_lookup(W.flow_full, &W.keys[IN(i)], 1, &v, o) + (uint32_t)v;
}
static void op_flow_insert(uint32_t i, dp_ops_t *o)
{
    dp_flow_key_t k = W.keys[IN(i)];
    k.src_port = (uint16_t)(k.src_port + (i / NIN)); /* a new flow on every call */
    W.sink += (uint32_t)dp_flow_insert(W.flow_empty, &k, i, 1, o);
}
static void op_sess_lookup(uint32_t i, dp_ops_t *o)
{
    dp_sess_hit_t h;
    W.sink += (uint32_t)dp_sess_lookup(W.sess_full, (i & NIN) ? &W.out_keys[IN(i)] : &W.keys[IN(i)], &h, o);
}
static void op_sess_track(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_sess_track(W.sess_full, W.conns[IN(i)], DP_SESS_DIR_IN, 0x10, 1, o);
}
static void op_sess_open(uint32_t i, dp_ops_t *o)
{
    dp_flow_key_t in = W.keys[IN(i)], out = W.out_keys[IN(i)];
    dp_sess_conn_t c;
    in.src_port = (uint16_t)(in.src_port + (i / NIN));
    out.dst_port = (uint16_t)(out.dst_port + (i / NIN));
    W.sink += (uint32_t)dp_sess_open(W.sess_empty, &in, &out, i & 15, 1, &c, o);
}
static void pick(unsigned a, uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_sched_pick(W.sched[a], &W.skeys[IN(i)], 0, o);
}
static void op_maglev(uint32_t i, dp_ops_t *o) { pick(0, i, o); }
static void op_wrr(uint32_t i, dp_ops_t *o) { pick(1, i, o); }
static void op_rr(uint32_t i, dp_ops_t *o) { pick(5, i, o); }
static void op_roundrobin(uint32_t i, dp_ops_t *o) { pick(3, i, o); }
/* Least-connection schedulers pick and account the new connection, or
 * every pick would see the same loads. */
static void pick_open(unsigned a, uint32_t i, dp_ops_t *o)
{
    int32_t s = dp_sched_pick(W.sched[a], &W.skeys[IN(i)], 0, o);
    if (s >= 0) dp_sched_conn_opened(W.sched[a], (uint32_t)s, o);
    W.sink += (uint32_t)s;
}
static void op_wlc(uint32_t i, dp_ops_t *o) { pick_open(2, i, o); }
static void op_leastconn(uint32_t i, dp_ops_t *o) { pick_open(4, i, o); }
/* A redispatch: the pick avoids server i mod 16 (the one a failed attempt
 * went to), on the same pools. */
static void op_roundrobin_avoid(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_sched_pick_avoid(W.sched[3], &W.skeys[IN(i)], (int32_t)(i & 15u), 0, o);
}
static void op_leastconn_avoid(uint32_t i, dp_ops_t *o)
{
    int32_t s = dp_sched_pick_avoid(W.sched[4], &W.skeys[IN(i)], (int32_t)(i & 15u), 0, o);
    if (s >= 0) dp_sched_conn_opened(W.sched[4], (uint32_t)s, o);
    W.sink += (uint32_t)s;
}
static void op_nat_dst(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_nat_rewrite_dst(FRAME(i), W.len[IN(i)], &W.parsed[IN(i)], 0x0A000001u + (i & 15), 8080, o);
}
static void op_nat_full(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_nat_rewrite_full(FRAME(i), W.len[IN(i)], &W.parsed[IN(i)], 0xC6130001u,
                                            (uint16_t)(1024 + (i & 1023)), 0x0A000001u + (i & 15), 8080, o);
}
static void op_nat_dr(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_nat_dr(FRAME(i), W.len[IN(i)], W.spec[IN(i + 1)].dst_mac, W.spec[IN(i)].src_mac, o);
}
/* The tunnel and the ICMP answer turn the frame into a different one, so a
 * second call on the same slot would price a refusal: each call works on
 * its own copy of the pristine 60-byte frame, and the copy (one memcpy of
 * 60 bytes) is counted with it. */
static const dp_nat_tunnel_t cost_tunnel = {
    .src_ip = 0xC6130001u, .dst_ip = 0x0A000001u, .dst_mac = {2, 0, 0, 0, 0, 1}, .src_mac = {2, 0, 0, 0, 0, 2},
    .ip_id = 7, .mtu = 1500, .ttl = 0};
static uint8_t *fresh_copy(uint32_t i)
{
    memcpy(W.scratch + HEADROOM, W.pristine[IN(i)] + HEADROOM, W.len[IN(i)]);
    return W.scratch + HEADROOM;
}
static void op_nat_ipip(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p = W.parsed[IN(i)];
    size_t n = 0;
    uint8_t *f = fresh_copy(i);
    W.sink += (uint32_t)dp_nat_ipip_encap(f, HEADROOM, W.len[IN(i)], &p, &cost_tunnel, &n, o) + (uint32_t)n;
}
static void op_nat_icmp_frag_needed(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p = W.parsed[IN(i)];
    size_t n = 0;
    uint8_t *f = fresh_copy(i);
    W.sink += (uint32_t)dp_nat_icmp_frag_needed(f, W.len[IN(i)], FRAME_CAP - HEADROOM, &p, 1480, 0xC6130001u,
                                                (uint16_t)i, 64, &n, o) + (uint32_t)n;
}
/* An L7 request head parsed from its first byte (one segment), and the
 * path HAProxy's `path` fetch takes from it. */
static void op_http_request(uint32_t i, dp_ops_t *o)
{
    static const dp_http_config_t cfg = {8190, 101};
    size_t used = 0;
    dp_http_init(&W.http, &cfg, W.http_buf, sizeof W.http_buf, 0);
    W.sink += (uint32_t)dp_http_feed(&W.http, W.req[IN(i)], W.req_len[IN(i)], &used, o) + (uint32_t)used;
    W.sink += dp_http_path(&W.http, o).len;
}
static void op_http_response(uint32_t i, dp_ops_t *o)
{
    static const dp_http_config_t cfg = {8190, 101};
    size_t used = 0;
    dp_http_init(&W.http, &cfg, W.http_buf, sizeof W.http_buf, 1);
    W.sink += (uint32_t)dp_http_feed(&W.http, W.resp[IN(i)], W.resp_len[IN(i)], &used, o) + (uint32_t)used;
}
static void op_url_rule_match(uint32_t i, dp_ops_t *o)
{
    const dp_http_t *h = &W.req_parsed[IN(i)];
    dp_http_span_t path = dp_http_path(h, NULL);
    dp_urlrule_req_t r = {h->buf + path.off, path.len, h->buf + h->host.off, h->host.len};
    uint32_t target = 0;
    W.sink += (uint32_t)dp_urlrule_match(W.rules, &r, &target, o) + target;
}
static void op_cookie_find(uint32_t i, dp_ops_t *o)
{
    const dp_http_t *h = &W.req_parsed[IN(i)];
    uint32_t off = 0, len = 0;
    W.sink += (uint32_t)dp_cookie_find(h->buf + h->cookie.off, h->cookie.len, "SERVERID", &off, &len, o) + off + len;
}
/* HAProxy `cookie SERVERID insert`: the edit, then the edited head written
 * into a copy of the response head (the copy counted, 113-114 bytes). */
static void op_cookie_insert(uint32_t i, dp_ops_t *o)
{
    const dp_http_t *h = &W.resp_parsed[IN(i)];
    uint32_t len = h->len;
    memcpy(W.head_scratch, h->buf, len);
    if (dp_cookie_insert(h, "SERVERID", "s3", &W.cookie_edit, o) != 0) { W.sink += 1; return; }
    W.sink += (uint32_t)dp_cookie_apply(W.head_scratch, &len, sizeof W.head_scratch, &W.cookie_edit, o) + len;
}
static void op_persist_lookup(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_persist_lookup(W.persist, W.persist_keys[IN(i)], 1000, o);
}
/* Spliced connections bound afresh each pass: client offset 0x1000, server
 * offset 0x2000 (the switch's and the server's ISNs differ from the
 * client's and the switch's). */
static void setup_splice(void)
{
    for (uint32_t k = 0; k < NIN; k++) {
        const uint8_t *f = W.pristine[k & ~1u] + HEADROOM;
        uint32_t isn = rd32be(f + W.parsed[k & ~1u].l4_offset + 4) - 1, skip = 0, take = 0;
        dp_splice_accept(&W.splice[k], isn, 0x5000000u + k, NULL);
        dp_splice_take(&W.splice[k], isn + 1, 1, 0x5000001u + k, 0, &skip, &take, NULL);
        dp_splice_bind(&W.splice[k], isn + 1, isn + 1 + 0x1000u, 0x7000000u + k, 0x5000001u + k, NULL);
    }
}
/* A client ACK segment translated toward the server (seq and ack, RFC 1624
 * checksum updates) on a fresh copy of the TCP frame. */
static void op_splice_xlate(uint32_t i, dp_ops_t *o)
{
    uint32_t j = i & ~1u; /* the TCP frames */
    dp_parsed_t p = W.parsed[IN(j)];
    uint8_t *f = fresh_copy(j);
    W.sink += (uint32_t)dp_splice_xlate(&W.splice[IN(i)], DP_SPLICE_C2S, f, W.len[IN(j)], &p, o);
}
static void op_tls_client_hello(uint32_t i, dp_ops_t *o)
{
    dp_tls_hello_t h;
    W.sink += (uint32_t)dp_tls_parse_client_hello(W.hello[IN(i)], W.hello_len[IN(i)], &h, o) + h.sni_len;
}
static void op_cookie_make(uint32_t i, dp_ops_t *o)
{
    W.sink += dp_syncookie_make(&W.sc, &W.tuples[IN(i)], 1460, 100, o);
}
static void op_cookie_check(uint32_t i, dp_ops_t *o)
{
    W.sink += (uint32_t)dp_syncookie_check(&W.sc, &W.tuples[IN(i)], W.cookies[IN(i)], 100, o);
}
static void op_rl_admit(uint32_t i, dp_ops_t *o)
{
    W.now += 1; /* one admission per microsecond per service: rate-limited half the time */
    W.sink += (uint32_t)dp_rl_admit(W.rl, i & 15, W.now, o);
}
static void op_dns_parse(uint32_t i, dp_ops_t *o)
{
    dp_dns_query_t q;
    W.sink += (uint32_t)dp_dns_parse(W.dnsq[IN(i)], W.dnsq_len[IN(i)], &q, o);
}
static void op_dns_answer(uint32_t i, dp_ops_t *o)
{
    size_t n = 0;
    W.sink += (uint32_t)dp_dns_answer(W.zone, W.dnsq[IN(i)], W.dnsq_len[IN(i)], W.dns_out, sizeof W.dns_out, &n,
                                      NULL, o) + (uint32_t)n;
}
/* The DNS service's per-packet path: a query frame answered into a
 * response frame (parse, DNS parse, zone lookup, response, checksums). */
static void op_path_dns(uint32_t i, dp_ops_t *o)
{
    size_t n = 0;
    W.sink += (uint32_t)dp_dns_answer_frame(W.zone, W.dnsf[IN(i)], W.dnsf_len[IN(i)], W.dns_out, sizeof W.dns_out,
                                            &n, NULL, o) + (uint32_t)n;
}
/* The forwarding path the pipeline and router models run per packet:
 * parse (checksum verified), LPM lookup of the destination, TTL. */
static void fwd(const dp_lpm_t *lpm, uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p;
    uint32_t hop = 0;
    uint8_t *f = FRAME(i);
    if (dp_parse(f, W.len[IN(i)], NULL, &p, o) != DP_OK) { W.sink += 1; return; }
    if (dp_lpm_lookup(lpm, p.dst_ip, &hop, o) != 0) { W.sink += 2; return; }
    W.sink += (uint32_t)dp_ip4_decrement_ttl(f + p.l3_offset, W.len[IN(i)] - p.l3_offset, o) + hop;
}
static void op_path_fwd(uint32_t i, dp_ops_t *o) { fwd(W.lpm_big, i, o); }
/* The L4 balancer's per-packet path for an established connection:
 * parse, session lookup, state tracking, destination NAT. */
static void op_path_l4_nat(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p;
    dp_sess_hit_t h;
    uint32_t j = i & ~1u; /* the TCP frames (ACKs): the connection stays ESTABLISHED */
    uint8_t *f = FRAME(j);
    if (dp_parse(f, W.len[IN(j)], NULL, &p, o) != DP_OK) { W.sink += 1; return; }
    if (dp_sess_lookup(W.sess_full, &W.keys[IN(i)], &h, o) != 0) { W.sink += 2; return; }
    dp_sess_track(W.sess_full, h.conn, (dp_sess_dir_t)h.dir, p.tcp_flags, 1, o);
    W.sink += (uint32_t)dp_nat_rewrite_dst(f, W.len[IN(j)], &p, 0x0A000001u + h.server, 8080, o);
}

typedef struct cost_op {
    const char *name;  /* stable: the instruction table and profiles key on it */
    const char *area;  /* core area (header) or "path" */
    const char *what;  /* the call(s) and input */
    void (*setup)(void);
    void (*run)(uint32_t i, dp_ops_t *o);
} cost_op_t;

static const cost_op_t kOps[] = {
    {"noop", "harness", "empty loop body (harness overhead, subtracted)", setup_none, op_noop},
    {"parse", "pkt", "dp_parse of 64-byte TCP and UDP frames, checksum verified", setup_frames, op_parse},
    {"build", "pkt", "dp_build of 64-byte TCP and UDP frames with L4 checksum", setup_frames, op_build},
    {"csum_full_20", "csum", "dp_csum over a 20-byte IPv4 header", setup_frames, op_csum_hdr},
    {"csum_full_1480", "csum", "dp_csum over 1480 bytes", setup_none, op_csum_1480},
    {"csum_incr16", "csum", "dp_csum_update16 (RFC 1624 eqn. 3)", setup_none, op_csum_upd16},
    {"csum_incr32", "csum", "dp_csum_update32 (an address)", setup_none, op_csum_upd32},
    {"ttl", "pkt", "dp_ip4_decrement_ttl", setup_frames, op_ttl},
    {"lpm_lookup_small", "lpm", "dp_lpm_lookup, 1,024-route table", setup_none, op_lpm_small},
    {"lpm_lookup_big", "lpm", "dp_lpm_lookup, --lpm-routes table (default 1M)", setup_none, op_lpm_big},
    {"flow_lookup", "flow", "dp_flow_lookup hit, one shard of 65,536 at 75%", setup_none, op_flow_lookup},
    {"flow_insert", "flow", "dp_flow_insert of new flows into an empty shard", setup_flow_empty, op_flow_insert},
    {"session_lookup", "session", "dp_sess_lookup hit (both directions), full shard of 65,536 sessions",
     setup_none, op_sess_lookup},
    {"session_track", "session", "dp_sess_track of an ESTABLISHED ACK", setup_none, op_sess_track},
    {"session_open", "session", "dp_sess_open (2 sessions) into an empty shard", setup_sess_empty, op_sess_open},
    {"sched_rr", "sched", "dp_sched_pick, IPVS rr, 16 servers", setup_rr, op_rr},
    {"sched_wrr", "sched", "dp_sched_pick, IPVS wrr, 16 servers weights 1..4", setup_wrr, op_wrr},
    {"sched_wlc", "sched", "dp_sched_pick + conn_opened, IPVS wlc, 16 servers", setup_wlc, op_wlc},
    {"sched_maglev", "sched", "dp_sched_pick, Maglev M=65537, 16 servers", setup_maglev, op_maglev},
    {"sched_roundrobin", "sched", "dp_sched_pick, HAProxy roundrobin, 16 servers", setup_roundrobin, op_roundrobin},
    {"sched_leastconn", "sched", "dp_sched_pick + conn_opened, HAProxy leastconn, 16 servers", setup_leastconn,
     op_leastconn},
    {"sched_roundrobin_avoid", "sched", "dp_sched_pick_avoid (server i mod 16), HAProxy roundrobin, 16 servers",
     setup_roundrobin, op_roundrobin_avoid},
    {"sched_leastconn_avoid", "sched",
     "dp_sched_pick_avoid (server i mod 16) + conn_opened, HAProxy leastconn, 16 servers", setup_leastconn,
     op_leastconn_avoid},
    {"nat_dst", "nat", "dp_nat_rewrite_dst (TCP and UDP)", setup_frames, op_nat_dst},
    {"nat_full", "nat", "dp_nat_rewrite_full (TCP and UDP)", setup_frames, op_nat_full},
    {"nat_dr", "nat", "dp_nat_dr (MACs only)", setup_frames, op_nat_dr},
    {"nat_ipip", "nat", "copy of the 60-byte frame + dp_nat_ipip_encap (IPVS tunnel, outer header, TCP and UDP)",
     setup_none, op_nat_ipip},
    {"nat_icmp_frag_needed", "nat",
     "copy of the 60-byte frame + dp_nat_icmp_frag_needed (the ICMP answer to a DF packet over the tunnel's MTU)",
     setup_none, op_nat_icmp_frag_needed},
    {"http_request", "http", "dp_http_init + dp_http_feed of a WebBench-like GET head (138-144 bytes, 4 headers) + "
     "dp_http_path", setup_none, op_http_request},
    {"http_response", "http", "dp_http_init + dp_http_feed of a 200 response head (113-114 bytes, 4 headers)",
     setup_none, op_http_response},
    {"url_rule_match", "urlrule", "dp_urlrule_match, 6 rules first-match (5 extensions, 1 directory), .htm/.gif/CGI "
     "paths", setup_none, op_url_rule_match},
    {"cookie_find", "cookie", "dp_cookie_find of SERVERID, the second of 2 cookies", setup_none, op_cookie_find},
    {"cookie_insert", "cookie", "copy of a 113-114-byte response head + dp_cookie_insert + dp_cookie_apply (HAProxy "
     "cookie insert)", setup_none, op_cookie_insert},
    {"persist_lookup", "persist", "dp_persist_lookup of a resident source address, 65,536 entries (8-way sets) 75% full",
     setup_none, op_persist_lookup},
    {"splice_xlate", "splice", "copy of the 60-byte TCP frame + dp_splice_xlate client to server (seq and ack)",
     setup_splice, op_splice_xlate},
    {"tls_client_hello", "tls", "dp_tls_parse_client_hello of a 150-byte ClientHello (session ID, 16 suites, SNI)",
     setup_none, op_tls_client_hello},
    {"syncookie_make", "syncookie", "dp_syncookie_make (SipHash-2-4 of 17 bytes)", setup_none, op_cookie_make},
    {"syncookie_check", "syncookie", "dp_syncookie_check of a valid cookie", setup_none, op_cookie_check},
    {"ratelimit_admit", "ratelimit", "dp_rl_admit, 16 services", setup_rl, op_rl_admit},
    {"dns_parse", "dns", "dp_dns_parse of an A/IN query (names of 24-27 bytes)", setup_none, op_dns_parse},
    {"dns_answer", "dns", "dp_dns_answer: parse, lookup in a 1,024-name zone, 1-4 A records", setup_none,
     op_dns_answer},
    {"path_ip4_fwd", "path", "parse + LPM (--lpm-routes; 90% of destinations routed) + TTL: the forwarding "
     "models' path", setup_frames, op_path_fwd},
    {"path_l4_nat", "path", "parse + session lookup + track + NAT dst of TCP ACKs: the L4 balancer's established path",
     setup_frames, op_path_l4_nat},
    {"path_dns", "path", "dp_dns_answer_frame: a query frame answered into a response frame", setup_none,
     op_path_dns},
};
#define NOPS (sizeof kOps / sizeof kOps[0])

/* Instruction attribution point for emulators (see the top of the file).
 * noinline and with a side effect so every call stays a call. */
__attribute__((noinline)) void rt_cost_mark(void)
{
    __asm__ __volatile__("" ::: "memory");
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
    putchar('"');
}

static void cpu_name(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    static const char *const keys[] = {"model name", "cpu model", "CPU part", "Processor"};
    while (fgets(line, sizeof line, f)) {
        for (unsigned k = 0; k < 4; k++) {
            if (strncmp(line, keys[k], strlen(keys[k])) == 0) {
                char *v = strchr(line, ':');
                if (!v) continue;
                v++;
                while (*v == ' ' || *v == '\t') v++;
                v[strcspn(v, "\n")] = 0;
                snprintf(out, cap, "%s: %s", keys[k], v);
                fclose(f);
                return;
            }
        }
    }
    fclose(f);
}

static const char *isa_name(void)
{
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__mips__) && defined(__OCTEON__)
    return "mips64-octeon";
#elif defined(__mips__)
    return "mips64";
#else
    return "unknown";
#endif
}

static int selected(const char *only, const char *name)
{
    if (!only || strcmp(name, "noop") == 0) return 1;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int need_big_lpm(const char *only)
{
    return selected(only, "lpm_lookup_big") || selected(only, "path_ip4_fwd");
}

static void usage(void)
{
    fprintf(stderr, "usage: dp_cost [--calls N] [--reps R] [--lpm-routes N] [--only op,op,...]\n"
                    "               [--environment TEXT] [--cpu TEXT] [--commit SHA] [--list]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned long calls = 4096, reps = 5, routes = 1000000;
    const char *only = NULL, *env = "native", *cpu = NULL, *commit = RT_COST_COMMIT;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(argv[a], "--list") == 0) {
            for (unsigned k = 0; k < NOPS; k++) printf("%s\t%s\t%s\n", kOps[k].name, kOps[k].area, kOps[k].what);
            return 0;
        }
        if (!v) usage();
        if (strcmp(argv[a], "--calls") == 0) calls = strtoul(v, NULL, 10);
        else if (strcmp(argv[a], "--reps") == 0) reps = strtoul(v, NULL, 10);
        else if (strcmp(argv[a], "--lpm-routes") == 0) routes = strtoul(v, NULL, 10);
        else if (strcmp(argv[a], "--only") == 0) only = v;
        else if (strcmp(argv[a], "--environment") == 0) env = v;
        else if (strcmp(argv[a], "--cpu") == 0) cpu = v;
        else if (strcmp(argv[a], "--commit") == 0) commit = v;
        else usage();
        a++;
    }
    if (calls < NIN || calls % NIN != 0 || calls > (1ul << 24) || reps < 1 || reps > 1000 || routes < 1024 ||
        routes > 2000000) {
        fprintf(stderr, "dp_cost: --calls must be a multiple of %u up to 2^24, --reps 1..1000, "
                        "--lpm-routes 1024..2000000\n", NIN);
        return 2;
    }
    init((unsigned)routes, need_big_lpm(only));

    cost_perf_t perf;
    cost_perf_open(&perf);
    char cpubuf[256];
    cpu_name(cpubuf, sizeof cpubuf);
    uint64_t tick_mask = cost_tick_bits() == 64 ? ~0ull : ((1ull << cost_tick_bits()) - 1);

    printf("{\n  \"format\": \"%s\",\n  \"isa\": \"%s\",\n  \"endian\": \"%s\",\n", DP_COST_FORMAT, isa_name(),
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
           "big"
#else
           "little"
#endif
    );
    printf("  \"cpu\": "); json_str(cpu ? cpu : cpubuf);
    printf(",\n  \"environment\": "); json_str(env);
    printf(",\n  \"compiler\": "); json_str(
#if defined(__clang__)
        "clang " __clang_version__
#elif defined(__GNUC__)
        "gcc " __VERSION__
#else
        "unknown"
#endif
    );
    printf(",\n  \"flags\": "); json_str(RT_COST_FLAGS);
    printf(",\n  \"commit\": "); json_str(commit);
    printf(",\n  \"counters\": [");
    for (unsigned c = 0; c < DP_OPS_NUM_COUNTERS; c++) printf("%s\"%s\"", c ? ", " : "", dp_ops_counter_name(c));
    printf("],\n  \"tick_register\": \"%s\",\n  \"tick_bits\": %u,\n  \"tick_hz\": %" PRIu64
           ",\n  \"cycles_per_tick\": %" PRIu64 ",\n",
           cost_have_ticks() ? cost_tick_name() : "none", cost_tick_bits(), cost_tick_hz(), cost_cycles_per_tick());
    printf("  \"perf_instructions\": %s,\n  \"perf_cycles\": %s,\n", perf.fd_insns >= 0 ? "true" : "false",
           perf.fd_cycles >= 0 ? "true" : "false");
    printf("  \"calls\": %lu,\n  \"reps\": %lu,\n  \"lpm_routes\": %lu,\n  \"inputs\": %u,\n", calls, reps, routes, NIN);
    printf("  \"ops\": [\n");

    int first = 1;
    for (unsigned k = 0; k < NOPS; k++) {
        const cost_op_t *op = &kOps[k];
        if (!selected(only, op->name)) continue;
        dp_ops_t counts;
        uint64_t best_ticks = ~0ull, best_insns = ~0ull, best_cycles = ~0ull;
        for (unsigned long r = 0; r < reps; r++) {
            dp_ops_t o;
            dp_ops_reset(&o);
            op->setup();
            if (r == 0) rt_cost_mark();
            uint64_t i0 = cost_perf_read(perf.fd_insns), c0 = cost_perf_read(perf.fd_cycles);
            uint64_t t0 = cost_ticks();
            for (uint32_t i = 0; i < (uint32_t)calls; i++) op->run(i, &o);
            uint64_t t1 = cost_ticks();
            uint64_t i1 = cost_perf_read(perf.fd_insns), c1 = cost_perf_read(perf.fd_cycles);
            if (r == 0) { rt_cost_mark(); counts = o; }
            else if (memcmp(&o, &counts, sizeof o) != 0) {
                fprintf(stderr, "dp_cost: %s: counters differ between passes (a setup does not reset)\n", op->name);
                return 3;
            }
            uint64_t dt = (t1 - t0) & tick_mask;
            if (dt < best_ticks) best_ticks = dt;
            if (i1 - i0 < best_insns) best_insns = i1 - i0;
            if (c1 - c0 < best_cycles) best_cycles = c1 - c0;
        }
        printf("%s    {\"name\": \"%s\", \"area\": \"%s\", \"what\": ", first ? "" : ",\n", op->name, op->area);
        json_str(op->what);
        printf(", \"calls\": %lu,\n     \"ops\": {", calls);
        for (unsigned c = 0; c < DP_OPS_NUM_COUNTERS; c++)
            printf("%s\"%s\": %" PRIu64, c ? ", " : "", dp_ops_counter_name(c), dp_ops_counter(&counts, c));
        printf("},\n     \"ticks\": ");
        if (cost_have_ticks()) printf("%" PRIu64, best_ticks); else printf("null");
        printf(", \"instructions\": ");
        if (perf.fd_insns >= 0) printf("%" PRIu64, best_insns); else printf("null");
        printf(", \"cycles\": ");
        if (perf.fd_cycles >= 0) printf("%" PRIu64, best_cycles); else printf("null");
        printf("}");
        first = 0;
    }
    printf("\n  ],\n  \"sink\": %u\n}\n", (unsigned)W.sink);
    return 0;
}
