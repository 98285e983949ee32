/* Golden-vector driver: replays the input vectors of core/golden/vectors/
 * through the core and prints a transcript of every result. The host,
 * mips64 (big-endian) and aarch64 builds must print identical bytes; the
 * committed expected.txt is that transcript.
 *
 * Usage: dp_golden VECTOR_DIR > transcript.txt
 *
 * Plain C99 and stdio only, so it builds wherever the core builds. It may
 * use malloc: it is a test driver, not data-plane code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"

#define LINE_MAX_CHARS 8192
#define MAX_FRAME 4096
#define MAX_LOOKUPS 8192

static FILE *open_vector(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "dp_golden: path too long\n");
        exit(2);
    }
    f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "dp_golden: cannot open %s\n", path);
        exit(2);
    }
    return f;
}

/* Next non-comment line without its newline; 0 at end of file. */
static int next_line(FILE *f, char *buf, size_t cap)
{
    while (fgets(buf, (int)cap, f)) {
        size_t n = strlen(buf);
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
            buf[--n] = 0;
        if (n == 0 || buf[0] == '#')
            continue;
        return 1;
    }
    return 0;
}

static void fail(const char *file, const char *line)
{
    fprintf(stderr, "dp_golden: %s: malformed line: %s\n", file, line);
    exit(2);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes hex (or "-" for an empty frame); returns the byte count or -1. */
static long unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    if (strcmp(s, "-") == 0)
        return 0;
    while (s[0] && s[1]) {
        int hi = hexval(s[0]), lo = hexval(s[1]);
        if (hi < 0 || lo < 0 || n >= cap)
            return -1;
        out[n++] = (uint8_t)(hi * 16 + lo);
        s += 2;
    }
    return s[0] ? -1 : (long)n;
}

static void print_hex(const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        printf("%02x", p[i]);
}

/* One line "  <label> name=value ..." of the nonzero counters. */
static void print_ops(const char *label, const dp_ops_t *ops)
{
    unsigned i;
    printf("  %s", label);
    for (i = 0; i < DP_OPS_NUM_COUNTERS; i++) {
        uint64_t v = dp_ops_counter(ops, i);
        if (v)
            printf(" %s=%llu", dp_ops_counter_name(i), (unsigned long long)v);
    }
    printf("\n");
}

static void print_parsed(const dp_parsed_t *p)
{
    printf("  eth=%04x vlan=%04x l3=%u l4=%u pay=%u paylen=%u tot=%u ihl=%u ttl=%u proto=%u "
           "flags=%02x src=%08lx dst=%08lx sport=%u dport=%u\n",
           p->ethertype, p->vlan_tci, p->l3_offset, p->l4_offset, p->payload_offset, p->payload_len,
           p->ip_total_len, p->ip_ihl, p->ip_ttl, p->ip_proto, p->tcp_flags, (unsigned long)p->src_ip,
           (unsigned long)p->dst_ip, p->src_port, p->dst_port);
}

static void run_packets(const char *dir)
{
    static const dp_parse_opts_t lax = {0, 1};
    FILE *f = open_vector(dir, "packets.txt");
    char line[LINE_MAX_CHARS], name[128], hex[LINE_MAX_CHARS];
    uint8_t frame[MAX_FRAME];

    printf("== packets\n");
    while (next_line(f, line, sizeof line)) {
        dp_parsed_t p;
        dp_ops_t ops;
        dp_drop_reason_t r;
        long n = 0;
        if (sscanf(line, "%127s %8191s", name, hex) != 2 || (n = unhex(hex, frame, sizeof frame)) < 0)
            fail("packets.txt", line);
        dp_ops_reset(&ops);
        r = dp_parse(frame, (size_t)n, NULL, &p, &ops);
        printf("pkt %s len=%ld strict=%s", name, n, dp_drop_reason_name(r));
        if (r != DP_OK) {
            dp_drop_reason_t r2 = dp_parse(frame, (size_t)n, &lax, &p, &ops);
            printf(" lax=%s", dp_drop_reason_name(r2));
            r = r2;
        }
        printf("\n");
        print_ops("ops", &ops);
        if (r != DP_OK)
            continue;
        print_parsed(&p);
        {
            /* Header checksum as computed over the header with its field,
             * and the forwarding rewrite of a copy of the header. */
            uint8_t ip[60];
            size_t ihl = (size_t)p.ip_ihl * 4u;
            dp_ops_t tops;
            dp_drop_reason_t tr;
            memcpy(ip, frame + p.l3_offset, ihl);
            dp_ops_reset(&tops);
            printf("  ipsum=%04x", dp_csum(ip, ihl, NULL));
            tr = dp_ip4_decrement_ttl(ip, ihl, &tops);
            printf(" ttl=%s ", dp_drop_reason_name(tr));
            print_hex(ip, ihl);
            printf(" after=%04x\n", dp_csum(ip, ihl, NULL));
            print_ops("ttl_ops", &tops);
        }
    }
    fclose(f);
}

static void run_builds(const char *dir)
{
    FILE *f = open_vector(dir, "builds.txt");
    char line[LINE_MAX_CHARS], name[64], proto[8], dmac[16], smac[16];
    uint8_t frame[MAX_FRAME], payload[2048];
    unsigned i;

    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7u + 3u);
    printf("== builds\n");
    while (next_line(f, line, sizeof line)) {
        dp_build_spec_t s;
        unsigned long src, dst, seq, ack;
        unsigned sport, dport, ttl, id, flags, paylen, l4csum;
        size_t len = 0;
        dp_ops_t ops;
        dp_drop_reason_t r;
        memset(&s, 0, sizeof s);
        if (sscanf(line, "%63s %7s %lx %lx %u %u %u %u %lx %lx %u %u %u %15s %15s", name, proto, &src, &dst,
                   &sport, &dport, &ttl, &id, &seq, &ack, &flags, &paylen, &l4csum, dmac, smac) != 15 ||
            unhex(dmac, s.dst_mac, 6) != 6 || unhex(smac, s.src_mac, 6) != 6 || paylen > sizeof payload)
            fail("builds.txt", line);
        s.ip_proto = (uint8_t)(strcmp(proto, "tcp") == 0 ? DP_IPPROTO_TCP : DP_IPPROTO_UDP);
        s.src_ip = (uint32_t)src;
        s.dst_ip = (uint32_t)dst;
        s.src_port = (uint16_t)sport;
        s.dst_port = (uint16_t)dport;
        s.ttl = (uint8_t)ttl;
        s.ip_id = (uint16_t)id;
        s.tcp_seq = (uint32_t)seq;
        s.tcp_ack = (uint32_t)ack;
        s.tcp_flags = (uint8_t)flags;
        s.payload = paylen % 2 ? payload : NULL; /* odd lengths copy, even ones zero-fill */
        s.payload_len = (uint16_t)paylen;
        s.l4_checksum = (int)l4csum;
        dp_ops_reset(&ops);
        r = dp_build(&s, frame, sizeof frame, &len, &ops);
        printf("build %s %s len=%lu ", name, dp_drop_reason_name(r), (unsigned long)len);
        print_hex(frame, r == DP_OK ? len : 0);
        printf("\n");
        print_ops("ops", &ops);
    }
    fclose(f);
}

static int parse_prefix(const char *s, uint32_t *ip, unsigned *depth)
{
    unsigned a, b, c, d;
    int n = 0;
    if (depth) {
        if (sscanf(s, "%u.%u.%u.%u/%u%n", &a, &b, &c, &d, depth, &n) != 5 || *depth > 32)
            return 0;
    } else if (sscanf(s, "%u.%u.%u.%u%n", &a, &b, &c, &d, &n) != 4) {
        return 0;
    }
    if (s[n] || a > 255 || b > 255 || c > 255 || d > 255)
        return 0;
    *ip = ((uint32_t)a << 24) | ((uint32_t)b << 16) | ((uint32_t)c << 8) | (uint32_t)d;
    return 1;
}

static void run_routes(const char *dir)
{
    static uint32_t ips[MAX_LOOKUPS], hops[MAX_LOOKUPS];
    FILE *f = open_vector(dir, "routes.txt");
    char line[LINE_MAX_CHARS], op[16], arg[64];
    dp_lpm_config_t cfg = {4096, 1024};
    size_t mem_size = dp_lpm_memory_size(&cfg);
    void *mem = malloc(mem_size);
    dp_lpm_t *lpm = dp_lpm_create(mem, mem_size, &cfg);
    dp_lpm_stats_t st;
    dp_ops_t ops, lops; /* adds and deletes; lookups (single and bulk) */
    unsigned nips = 0, i;

    if (!lpm) {
        fprintf(stderr, "dp_golden: cannot create LPM table\n");
        exit(2);
    }
    dp_ops_reset(&ops);
    dp_ops_reset(&lops);
    printf("== routes\n");
    while (next_line(f, line, sizeof line)) {
        uint32_t ip, hop = 0;
        unsigned depth;
        unsigned long hop_in = 0;
        if (strcmp(line, "bulk") == 0) {
            dp_lpm_lookup_bulk(lpm, ips, hops, nips, &lops);
            printf("bulk %u\n", nips);
            for (i = 0; i < nips; i++)
                printf("  %08lx %06lx\n", (unsigned long)ips[i], (unsigned long)hops[i]);
            continue;
        }
        if (sscanf(line, "%15s %63s", op, arg) != 2)
            fail("routes.txt", line);
        if (strcmp(op, "add") == 0) {
            if (!parse_prefix(arg, &ip, &depth) || sscanf(line, "%*s %*s %lu", &hop_in) != 1)
                fail("routes.txt", line);
            printf("add %s %lu -> %d\n", arg, hop_in, dp_lpm_add(lpm, ip, (uint8_t)depth, (uint32_t)hop_in, &ops));
        } else if (strcmp(op, "del") == 0) {
            if (!parse_prefix(arg, &ip, &depth))
                fail("routes.txt", line);
            printf("del %s -> %d\n", arg, dp_lpm_delete(lpm, ip, (uint8_t)depth, &ops));
        } else if (strcmp(op, "lookup") == 0) {
            int rc;
            if (!parse_prefix(arg, &ip, NULL) || nips >= MAX_LOOKUPS)
                fail("routes.txt", line);
            ips[nips++] = ip;
            rc = dp_lpm_lookup(lpm, ip, &hop, &lops);
            if (rc == 0)
                printf("lookup %s -> %lu\n", arg, (unsigned long)hop);
            else
                printf("lookup %s -> miss %d\n", arg, rc);
        } else {
            fail("routes.txt", line);
        }
    }
    dp_lpm_get_stats(lpm, &st);
    printf("lpm rules=%lu tbl8_groups_used=%lu\n", (unsigned long)st.rules, (unsigned long)st.tbl8_groups_used);
    print_ops("update_ops", &ops);
    print_ops("lookup_ops", &lops);
    free(mem);
    fclose(f);
}

static void run_flows(const char *dir)
{
    FILE *f = open_vector(dir, "flows.txt");
    char line[LINE_MAX_CHARS];
    /* 3 shards of 24: the 200 keys overfill every shard. */
    dp_flow_config_t cfg = {3, 24};
    size_t mem_size = dp_flow_memory_size(&cfg);
    void *mem = malloc(mem_size);
    dp_flow_table_t *t = dp_flow_create(mem, mem_size, &cfg);
    dp_ops_t ops;
    uint64_t now = 0;
    uint32_t s;

    if (!t) {
        fprintf(stderr, "dp_golden: cannot create flow table\n");
        exit(2);
    }
    dp_ops_reset(&ops);
    printf("== flows\n");
    while (next_line(f, line, sizeof line)) {
        dp_flow_key_t k;
        unsigned long src, dst;
        unsigned sport, dport, proto;
        uint64_t v = 0;
        int rc, lrc;
        memset(&k, 0, sizeof k);
        if (sscanf(line, "%lx %lx %u %u %u", &src, &dst, &sport, &dport, &proto) != 5)
            fail("flows.txt", line);
        k.src_ip = (uint32_t)src;
        k.dst_ip = (uint32_t)dst;
        k.src_port = (uint16_t)sport;
        k.dst_port = (uint16_t)dport;
        k.proto = (uint8_t)proto;
        now += 10;
        rc = dp_flow_insert(t, &k, now * 3u, now, &ops);
        lrc = dp_flow_lookup(t, &k, now, &v, &ops);
        printf("flow %s hash=%08lx shard=%lu insert=%d lookup=%d value=%llu\n", line,
               (unsigned long)dp_flow_hash(&k), (unsigned long)dp_flow_shard_of(t, &k), rc, lrc,
               (unsigned long long)v);
        if (now % 500 == 0) {
            for (s = 0; s < cfg.shards; s++)
                printf("  expire shard=%lu now=%llu evicted=%lu\n", (unsigned long)s, (unsigned long long)now,
                       (unsigned long)dp_flow_expire(t, s, now, 300, &ops));
        }
    }
    for (s = 0; s < cfg.shards; s++) {
        dp_flow_shard_stats_t st;
        dp_flow_get_shard_stats(t, s, &st);
        printf("shard %lu entries=%lu capacity=%lu inserts=%llu refused=%llu expired=%llu deletes=%llu\n",
               (unsigned long)s, (unsigned long)st.entries, (unsigned long)st.capacity,
               (unsigned long long)st.inserts, (unsigned long long)st.refused_full,
               (unsigned long long)st.expired, (unsigned long long)st.deletes);
    }
    print_ops("ops", &ops);
    free(mem);
    fclose(f);
}

/* The last space-separated token of line (the frame, in the LB vectors). */
static const char *last_token(const char *line)
{
    const char *sp = strrchr(line, ' ');
    return sp ? sp + 1 : line;
}

static void run_nat(const char *dir)
{
    static const dp_parse_opts_t opts = {1, 1};
    static uint8_t buf[64 + MAX_FRAME];
    FILE *f = open_vector(dir, "nat.txt");
    char line[LINE_MAX_CHARS], op[16], name[64];

    printf("== nat\n");
    while (next_line(f, line, sizeof line)) {
        unsigned long a = 0, b = 0, id = 0, mtu = 0, ttl = 0, room = 64;
        unsigned pa = 0, pb = 0;
        char m1[16], m2[16];
        uint8_t *frame;
        long n;
        dp_parsed_t p;
        dp_ops_t ops;
        dp_drop_reason_t pr;
        size_t out_len = 0;
        int rc;

        if (sscanf(line, "%15s %63s", op, name) != 2)
            fail("nat.txt", line);
        if (strcmp(op, "ipip") == 0) {
            dp_nat_tunnel_t t;
            memset(&t, 0, sizeof t);
            if (sscanf(line, "%*s %*s %lx %lx %15s %15s %lu %lu %lu %lu", &a, &b, m1, m2, &id, &mtu, &ttl, &room) != 8 ||
                room > 64 || unhex(m1, t.dst_mac, 6) != 6 || unhex(m2, t.src_mac, 6) != 6)
                fail("nat.txt", line);
            t.src_ip = (uint32_t)a;
            t.dst_ip = (uint32_t)b;
            t.ip_id = (uint16_t)id;
            t.mtu = (uint16_t)mtu;
            t.ttl = (uint8_t)ttl;
            frame = buf + room;
            if ((n = unhex(last_token(line), frame, MAX_FRAME)) < 0)
                fail("nat.txt", line);
            pr = dp_parse(frame, (size_t)n, &opts, &p, NULL);
            dp_ops_reset(&ops);
            rc = pr == DP_OK ? dp_nat_ipip_encap(frame, room, (size_t)n, &p, &t, &out_len, &ops) : 0;
            frame -= rc == 0 ? DP_NAT_IPIP_HEADROOM : 0;
        } else if (strcmp(op, "icmp") == 0) {
            unsigned long cap = 0;
            if (sscanf(line, "%*s %*s %lx %lu %lu %lu %lu", &a, &id, &ttl, &mtu, &cap) != 5 || cap > MAX_FRAME)
                fail("nat.txt", line);
            frame = buf;
            if ((n = unhex(last_token(line), frame, MAX_FRAME)) < 0)
                fail("nat.txt", line);
            pr = dp_parse(frame, (size_t)n, &opts, &p, NULL);
            dp_ops_reset(&ops);
            rc = pr == DP_OK ? dp_nat_icmp_frag_needed(frame, (size_t)n, (size_t)cap, &p, (uint16_t)mtu, (uint32_t)a,
                                                       (uint16_t)id, (uint8_t)ttl, &out_len, &ops)
                             : 0;
        } else {
            frame = buf;
            if ((n = unhex(last_token(line), frame, MAX_FRAME)) < 0)
                fail("nat.txt", line);
            pr = dp_parse(frame, (size_t)n, &opts, &p, NULL);
            dp_ops_reset(&ops);
            rc = 0;
            out_len = (size_t)n;
            if (pr != DP_OK) {
                /* reported below */
            } else if (strcmp(op, "dnat") == 0 || strcmp(op, "snat") == 0) {
                if (sscanf(line, "%*s %*s %lx %u", &a, &pa) != 2)
                    fail("nat.txt", line);
                rc = op[0] == 'd' ? dp_nat_rewrite_dst(frame, (size_t)n, &p, (uint32_t)a, (uint16_t)pa, &ops)
                                  : dp_nat_rewrite_src(frame, (size_t)n, &p, (uint32_t)a, (uint16_t)pa, &ops);
            } else if (strcmp(op, "full") == 0) {
                if (sscanf(line, "%*s %*s %lx %u %lx %u", &a, &pa, &b, &pb) != 4)
                    fail("nat.txt", line);
                rc = dp_nat_rewrite_full(frame, (size_t)n, &p, (uint32_t)a, (uint16_t)pa, (uint32_t)b, (uint16_t)pb,
                                         &ops);
            } else if (strcmp(op, "dr") == 0) {
                uint8_t dmac[6], smac[6];
                if (sscanf(line, "%*s %*s %15s %15s", m1, m2) != 2 || unhex(m1, dmac, 6) != 6 ||
                    unhex(m2, smac, 6) != 6)
                    fail("nat.txt", line);
                rc = dp_nat_dr(frame, (size_t)n, dmac, smac, &ops);
            } else {
                fail("nat.txt", line);
            }
        }
        if (pr != DP_OK) {
            printf("nat %s %s parse=%s\n", name, op, dp_drop_reason_name(pr));
            continue;
        }
        printf("nat %s %s rc=%d", name, op, rc);
        if (rc == 0) {
            printf(" len=%lu ", (unsigned long)out_len);
            print_hex(frame, out_len);
        }
        printf("\n");
        print_ops("ops", &ops);
    }
    fclose(f);
}

static void run_syncookie(const char *dir)
{
    static uint8_t frame[MAX_FRAME];
    FILE *f = open_vector(dir, "syncookie.txt");
    char line[LINE_MAX_CHARS], op[16];
    dp_syncookie_t sc;
    int have_key = 0;

    printf("== syncookie\n");
    while (next_line(f, line, sizeof line)) {
        unsigned long cl, vip, cookie, counter;
        unsigned cport, vport, mss, win, ttl;
        dp_syncookie_tuple_t t;
        dp_ops_t ops;
        dp_parsed_t p;
        dp_drop_reason_t pr;
        long n = 0;
        int rc;

        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("syncookie.txt", line);
        if (strcmp(op, "siphash") == 0) {
            uint8_t key[16], msg[64];
            unsigned len, i;
            uint64_t h;
            if (sscanf(line, "%*s %u", &len) != 1 || len > sizeof msg)
                fail("syncookie.txt", line);
            for (i = 0; i < 16; i++)
                key[i] = (uint8_t)i;
            for (i = 0; i < len; i++)
                msg[i] = (uint8_t)i;
            h = dp_syncookie_siphash24(key, msg, len, &ops);
            printf("siphash %u %08lx%08lx\n", len, (unsigned long)(h >> 32), (unsigned long)(h & 0xFFFFFFFFu));
            print_ops("ops", &ops);
            continue;
        }
        if (strcmp(op, "key") == 0) {
            dp_syncookie_config_t cfg;
            char key[40];
            unsigned bits, age;
            memset(&cfg, 0, sizeof cfg);
            if (sscanf(line, "%*s %39s %u %u", key, &bits, &age) != 3 || unhex(key, cfg.key, 16) != 16)
                fail("syncookie.txt", line);
            cfg.counter_bits = (uint8_t)bits;
            cfg.max_age = (uint8_t)age;
            rc = dp_syncookie_init(&sc, &cfg);
            have_key = rc == 0;
            printf("key counter_bits=%u max_age=%u mac_bits=%u rc=%d\n", bits, age, have_key ? sc.mac_bits : 0u, rc);
            continue;
        }
        if (!have_key)
            fail("syncookie.txt", line);
        if (strcmp(op, "make") == 0) {
            if (sscanf(line, "%*s %lx %lx %u %u %u %lu", &cl, &vip, &cport, &vport, &mss, &counter) != 6)
                fail("syncookie.txt", line);
            t.client_ip = (uint32_t)cl;
            t.vip = (uint32_t)vip;
            t.client_port = (uint16_t)cport;
            t.vip_port = (uint16_t)vport;
            printf("%s -> %08lx\n", line,
                   (unsigned long)dp_syncookie_make(&sc, &t, (uint16_t)mss, (uint32_t)counter, &ops));
        } else if (strcmp(op, "check") == 0) {
            if (sscanf(line, "%*s %lx %lx %u %u %lx %lu", &cl, &vip, &cport, &vport, &cookie, &counter) != 6)
                fail("syncookie.txt", line);
            t.client_ip = (uint32_t)cl;
            t.vip = (uint32_t)vip;
            t.client_port = (uint16_t)cport;
            t.vip_port = (uint16_t)vport;
            printf("%s -> %d\n", line, dp_syncookie_check(&sc, &t, (uint32_t)cookie, (uint32_t)counter, &ops));
        } else if (strcmp(op, "synack") == 0 || strcmp(op, "ack") == 0) {
            int syn = op[0] == 's';
            if ((syn ? sscanf(line, "%*s %lu %u %u %u", &counter, &mss, &win, &ttl) != 4
                     : sscanf(line, "%*s %lu", &counter) != 1) ||
                (n = unhex(last_token(line), frame, sizeof frame)) < 0)
                fail("syncookie.txt", line);
            pr = dp_parse(frame, (size_t)n, NULL, &p, NULL);
            if (pr != DP_OK) {
                printf("%s %lu parse=%s\n", op, counter, dp_drop_reason_name(pr));
                continue;
            }
            if (syn) {
                dp_syncookie_reply_t r;
                size_t out_len = 0;
                memset(&r, 0, sizeof r);
                r.mss = (uint16_t)mss;
                r.window = (uint16_t)win;
                r.ttl = (uint8_t)ttl;
                rc = dp_syncookie_synack(&sc, frame, (size_t)n, sizeof frame, &p, (uint32_t)counter, &r, &out_len, &ops);
                printf("synack %lu rc=%d", counter, rc);
                if (rc > 0) {
                    printf(" len=%lu ", (unsigned long)out_len);
                    print_hex(frame, out_len);
                }
                printf("\n");
            } else {
                printf("ack %lu -> %d\n", counter,
                       dp_syncookie_check_ack(&sc, frame, (size_t)n, &p, (uint32_t)counter, &ops));
            }
        } else {
            fail("syncookie.txt", line);
        }
        print_ops("ops", &ops);
    }
    fclose(f);
}

static void run_ratelimit(const char *dir)
{
    FILE *f = open_vector(dir, "ratelimit.txt");
    char line[LINE_MAX_CHARS], op[16];
    void *mem = NULL;
    dp_rl_t *rl = NULL;

    printf("== ratelimit\n");
    while (next_line(f, line, sizeof line)) {
        unsigned long svc = 0, rate = 0, burst = 0, count = 0;
        unsigned long long now = 0;
        dp_ops_t ops;
        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("ratelimit.txt", line);
        if (strcmp(op, "config") == 0) {
            dp_rl_config_t cfg;
            size_t size;
            if (sscanf(line, "%*s %lu %lu", &svc, &rate) != 2)
                fail("ratelimit.txt", line);
            cfg.services = (uint32_t)svc;
            cfg.ticks_per_second = (uint32_t)rate;
            size = dp_rl_memory_size(&cfg);
            free(mem);
            mem = malloc(size ? size : 1);
            rl = dp_rl_create(mem, size, &cfg);
            if (!rl) {
                fprintf(stderr, "dp_golden: cannot create rate limiter\n");
                exit(2);
            }
            printf("config services=%lu ticks_per_second=%lu memory=%lu\n", svc, rate, (unsigned long)size);
            continue;
        }
        if (!rl)
            fail("ratelimit.txt", line);
        if (strcmp(op, "set") == 0) {
            if (sscanf(line, "%*s %lu %lu %lu %llu", &svc, &rate, &burst, &now) != 4)
                fail("ratelimit.txt", line);
            printf("%s -> %d\n", line, dp_rl_set(rl, (uint32_t)svc, (uint32_t)rate, (uint32_t)burst, now, &ops));
        } else if (strcmp(op, "clear") == 0) {
            if (sscanf(line, "%*s %lu", &svc) != 1)
                fail("ratelimit.txt", line);
            printf("%s -> %d\n", line, dp_rl_clear(rl, (uint32_t)svc, &ops));
        } else if (strcmp(op, "admit") == 0) {
            unsigned long i;
            if (sscanf(line, "%*s %lu %llu %lu", &svc, &now, &count) != 3)
                fail("ratelimit.txt", line);
            printf("%s -> ", line);
            for (i = 0; i < count; i++) /* 1 admitted, 0 refused */
                printf("%d", dp_rl_admit(rl, (uint32_t)svc, now, &ops) == 0);
            printf("\n");
        } else if (strcmp(op, "stats") == 0) {
            dp_rl_stats_t st;
            if (sscanf(line, "%*s %lu", &svc) != 1 || dp_rl_get_stats(rl, (uint32_t)svc, &st) != 0)
                fail("ratelimit.txt", line);
            printf("stats %lu rate=%lu burst=%lu tokens=%llu admitted=%llu refused=%llu\n", svc,
                   (unsigned long)st.rate, (unsigned long)st.burst, (unsigned long long)st.tokens,
                   (unsigned long long)st.admitted, (unsigned long long)st.refused);
            continue;
        } else {
            fail("ratelimit.txt", line);
        }
        print_ops("ops", &ops);
    }
    free(mem);
    fclose(f);
}

/* Scheduler keys of the "keys" and "remapdown" commands: documented here
 * and re-derived by check_expected.py. */
static dp_sched_key_t sched_key(uint32_t src, uint32_t i)
{
    dp_sched_key_t k;
    memset(&k, 0, sizeof k);
    k.src_ip = src;
    k.dst_ip = 0xc0a80001u;
    k.src_port = (uint16_t)(1000u + i);
    k.dst_port = 80;
    k.proto = 6;
    k.hash = i * 2654435761u;
    return k;
}

static void print_table(const dp_sched_t *s, int full)
{
    uint32_t n = dp_sched_table_size(s), i, fnv = 2166136261u;
    uint32_t counts[DP_SCHED_MAX_SERVERS];
    dp_sched_config_t cfg;
    dp_sched_get_config(s, &cfg);
    memset(counts, 0, sizeof counts);
    for (i = 0; i < n; i++) {
        int32_t e = dp_sched_table_entry(s, i);
        uint32_t v = e < 0 ? 0xFFFFu : (uint32_t)e;
        fnv = (fnv ^ (v & 0xFFu)) * 16777619u;
        fnv = (fnv ^ (v >> 8)) * 16777619u;
        if (e >= 0)
            counts[e]++;
        if (full) {
            if (i % 32 == 0)
                printf("%s ", i ? "\n" : "");
            printf(" %ld", (long)e);
        }
    }
    if (full && n)
        printf("\n");
    printf("  size=%lu fnv=%08lx counts=", (unsigned long)n, (unsigned long)fnv);
    for (i = 0; i < cfg.max_servers; i++)
        printf("%s%lu", i ? "," : "", (unsigned long)counts[i]);
    printf("\n");
}

/* The scheduler script of file, printed under "== title": sched.txt (the
 * schedulers' first section) and sched_param.txt (uri/hdr hashing and the
 * avoid argument, a later section). */
static void run_sched_file(const char *dir, const char *file, const char *title)
{
    FILE *f = open_vector(dir, file);
    char line[LINE_MAX_CHARS], cmd[32], name[64], algo[32];
    void *mem = NULL, *mem2 = NULL;
    size_t mem_size = 0;
    dp_sched_t *s = NULL;

    printf("== %s\n", title);
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        unsigned long a = 0, b = 0, c = 0, d = 0, e = 0, g = 0, h1 = 0, h2 = 0, h3 = 0;
        int nf;
        char word[32];
        dp_ops_reset(&ops);
        if (sscanf(line, "%31s", cmd) != 1)
            fail(file, line);
        if (strcmp(cmd, "scenario") == 0) {
            dp_sched_config_t cfg;
            unsigned long long seed;
            memset(&cfg, 0, sizeof cfg);
            /* Optional trailing fields: hash_fn uri_len uri_depth. */
            nf = sscanf(line, "%*s %63s %31s %lu %lu %lu %lu %lu %llu %lu %lu %lu", name, algo, &a, &b, &c, &d, &e,
                        &seed, &h1, &h2, &h3);
            if ((nf != 8 && nf != 11) || dp_sched_algo_from_name(algo) < 0)
                fail(file, line);
            cfg.algo = (uint32_t)dp_sched_algo_from_name(algo);
            cfg.max_servers = (uint32_t)a;
            cfg.table_size = (uint32_t)b;
            cfg.hash_input = (uint32_t)c;
            cfg.flags = (uint32_t)d;
            cfg.draws = (uint32_t)e;
            cfg.seed = seed;
            cfg.hash_fn = (uint32_t)h1;
            cfg.uri_len = (uint32_t)h2;
            cfg.uri_depth = (uint32_t)h3;
            free(mem);
            free(mem2);
            mem_size = dp_sched_memory_size(&cfg);
            mem = malloc(mem_size);
            mem2 = malloc(mem_size);
            s = dp_sched_create(mem, mem_size, &cfg);
            if (!s || !mem2) {
                fprintf(stderr, "dp_golden: cannot create scheduler: %s\n", line);
                exit(2);
            }
            dp_sched_get_config(s, &cfg);
            printf("scenario %s %s max_servers=%lu table_size=%lu\n", name, dp_sched_algo_name((dp_sched_algo_t)cfg.algo),
                   (unsigned long)cfg.max_servers, (unsigned long)cfg.table_size);
            continue;
        }
        if (!s)
            fail(file, line);
        if (strcmp(cmd, "server") == 0) {
            dp_sched_server_t sv;
            unsigned long long key;
            memset(&sv, 0, sizeof sv);
            if (sscanf(line, "%*s %lu %lu %lu %lu %lu %llx", &a, &b, &c, &d, &e, &key) != 6)
                fail(file, line);
            sv.weight = (uint32_t)b;
            sv.maxconn = (uint32_t)c;
            sv.slowstart_ms = (uint32_t)d;
            sv.flags = (uint32_t)e;
            sv.hash_key = key;
            printf("%s -> %d\n", line, dp_sched_set_server(s, (uint32_t)a, &sv, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "state") == 0) {
            unsigned st;
            if (sscanf(line, "%*s %lu %31s %lu", &a, word, &b) != 3)
                fail(file, line);
            for (st = 0; st < (unsigned)DP_SCHED__STATES && strcmp(word, dp_sched_state_name((dp_sched_state_t)st)); st++)
                ;
            printf("%s -> %d\n", line, dp_sched_set_state(s, (uint32_t)a, (dp_sched_state_t)st, (uint64_t)b, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "remove") == 0) {
            if (sscanf(line, "%*s %lu", &a) != 1)
                fail(file, line);
            printf("%s -> %d\n", line, dp_sched_remove_server(s, (uint32_t)a, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "pick") == 0) {
            if (sscanf(line, "%*s %lu", &a) != 1)
                fail(file, line);
            printf("%s -> %ld\n", line, (long)dp_sched_pick(s, NULL, (uint64_t)a, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "picks") == 0 || strcmp(cmd, "openpick") == 0) {
            int open = strcmp(cmd, "openpick") == 0;
            if (sscanf(line, "%*s %lu %lu", &a, &b) != 2)
                fail(file, line);
            printf("%s ->", line);
            for (c = 0; c < a; c++) {
                int32_t id = dp_sched_pick(s, NULL, (uint64_t)b, &ops);
                printf(" %ld", (long)id);
                if (open && id >= 0)
                    dp_sched_conn_opened(s, (uint32_t)id, &ops);
            }
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "keys") == 0) {
            if (sscanf(line, "%*s %lu %lx %lx %lu", &a, &b, &c, &d) != 4)
                fail(file, line);
            printf("%s ->", line);
            for (e = 0; e < a; e++) {
                dp_sched_key_t k = sched_key((uint32_t)(b + e * c), (uint32_t)e);
                printf(" %ld", (long)dp_sched_pick(s, &k, (uint64_t)d, &ops));
            }
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "req") == 0) {
            /* req NOW DATA: one pick whose key carries DATA (hex; "." for
             * present but empty; "-" for no data: no URI / no such header). */
            static uint8_t data[LINE_MAX_CHARS];
            char hex[LINE_MAX_CHARS];
            dp_sched_key_t k;
            long n;
            memset(&k, 0, sizeof k);
            if (sscanf(line, "%*s %lu %8191s", &a, hex) != 2)
                fail(file, line);
            if (strcmp(hex, "-") != 0) {
                if ((n = strcmp(hex, ".") == 0 ? 0 : unhex(hex, data, sizeof data)) < 0)
                    fail(file, line);
                k.data = (const char *)data;
                k.data_len = (uint32_t)n;
            }
            printf("%s -> %ld\n", line, (long)dp_sched_pick(s, &k, (uint64_t)a, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "avoid") == 0) {
            /* avoid ID NOW DATA: a redispatch pick that avoids server ID,
             * its key carrying DATA as in req. */
            static uint8_t data[LINE_MAX_CHARS];
            char hex[LINE_MAX_CHARS];
            dp_sched_key_t k;
            long n;
            memset(&k, 0, sizeof k);
            if (sscanf(line, "%*s %lu %lu %8191s", &a, &b, hex) != 3)
                fail(file, line);
            if (strcmp(hex, "-") != 0) {
                if ((n = strcmp(hex, ".") == 0 ? 0 : unhex(hex, data, sizeof data)) < 0)
                    fail(file, line);
                k.data = (const char *)data;
                k.data_len = (uint32_t)n;
            }
            printf("%s -> %ld\n", line, (long)dp_sched_pick_avoid(s, &k, (int32_t)a, (uint64_t)b, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "avoidkeys") == 0) {
            /* avoidkeys ID N SRC STEP NOW: the keys of "keys", each picked
             * avoiding server ID. */
            if (sscanf(line, "%*s %lu %lu %lx %lx %lu", &g, &a, &b, &c, &d) != 5)
                fail(file, line);
            printf("%s ->", line);
            for (e = 0; e < a; e++) {
                dp_sched_key_t k = sched_key((uint32_t)(b + e * c), (uint32_t)e);
                printf(" %ld", (long)dp_sched_pick_avoid(s, &k, (int32_t)g, (uint64_t)d, &ops));
            }
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "open") == 0 || strcmp(cmd, "toinactive") == 0) {
            if (sscanf(line, "%*s %lu", &a) != 1)
                fail(file, line);
            printf("%s -> %d\n", line,
                   cmd[0] == 'o' ? dp_sched_conn_opened(s, (uint32_t)a, &ops) : dp_sched_conn_to_inactive(s, (uint32_t)a, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "close") == 0) {
            if (sscanf(line, "%*s %lu %lu", &a, &b) != 2)
                fail(file, line);
            printf("%s -> %d\n", line, dp_sched_conn_closed(s, (uint32_t)a, (int)b, &ops));
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "table") == 0 || strcmp(cmd, "tablesum") == 0) {
            dp_sched_build(s, 0, &ops);
            printf("%s\n", line);
            print_table(s, strcmp(cmd, "table") == 0);
            print_ops("ops", &ops);
        } else if (strcmp(cmd, "info") == 0) {
            dp_sched_server_info_t in;
            if (sscanf(line, "%*s %lu", &a) != 1 || dp_sched_get_server(s, (uint32_t)a, &in) != 0)
                fail(file, line);
            printf("%s -> state=%s weight=%lu eweight=%lu maxconn=%lu maxconn_now=%lu active=%lu inactive=%lu "
                   "usable=%lu overloaded=%lu warming=%lu table_entries=%lu\n",
                   line, dp_sched_state_name((dp_sched_state_t)in.state), (unsigned long)in.weight,
                   (unsigned long)in.eweight, (unsigned long)in.maxconn, (unsigned long)in.maxconn_now,
                   (unsigned long)in.active, (unsigned long)in.inactive, (unsigned long)in.usable,
                   (unsigned long)in.overloaded, (unsigned long)in.warming, (unsigned long)in.table_entries);
        } else if (strcmp(cmd, "remapdown") == 0) {
            /* Clone, take one server down in the clone, count the keys
             * (and table entries) that map elsewhere. */
            dp_sched_t *after;
            uint32_t moved = 0;
            int rc;
            if (sscanf(line, "%*s %lu %lu", &a, &b) != 2)
                fail(file, line);
            dp_sched_build(s, 0, NULL);
            after = dp_sched_clone(mem2, mem_size, s);
            dp_sched_set_state(after, (uint32_t)a, DP_SCHED_DOWN, 0, NULL);
            rc = 0;
            for (g = 0; g < b; g++) {
                dp_sched_key_t k = sched_key((uint32_t)(0x0a000000u + g * 2654435761u), (uint32_t)g);
                uint32_t m1 = 0;
                rc = dp_sched_count_remapped(s, after, &k, 1, &m1, &ops);
                moved += m1;
            }
            printf("%s -> rc=%d moved=%lu table_changes=%lu\n", line, rc, (unsigned long)moved,
                   (unsigned long)dp_sched_count_table_changes(s, after));
            print_ops("ops", &ops);
        } else {
            fail(file, line);
        }
    }
    free(mem);
    free(mem2);
    fclose(f);
}

/* Session table: a script of opens (steered, fixed-port and one-session),
 * packets (lookup + track), closes, budgeted expiries and bulk lookups
 * over 3 shards of 20 sessions, with every result and the op counts of each operation
 * printed, so check_expected.py can replay the table's placement and
 * counts in Python. Ticks are seconds (IPVS default timeouts) and the
 * script's clock crosses the 2^32 wrap. */
static int read_key(const char *s, dp_flow_key_t *k, int *used)
{
    unsigned long src, dst;
    unsigned sp, dp, pr;
    memset(k, 0, sizeof(*k));
    if (sscanf(s, "%lx %lx %u %u %u%n", &src, &dst, &sp, &dp, &pr, used) != 5)
        return 0;
    k->src_ip = (uint32_t)src;
    k->dst_ip = (uint32_t)dst;
    k->src_port = (uint16_t)sp;
    k->dst_port = (uint16_t)dp;
    k->proto = (uint8_t)pr;
    return 1;
}

static void print_conn(const dp_sess_conn_t *c)
{
    printf(" conn=%lu:%lu:%lu", (unsigned long)c->shard, (unsigned long)c->slot[0], (unsigned long)c->slot[1]);
}

static void run_sessions(const char *dir)
{
    FILE *f = open_vector(dir, "sessions.txt");
    char line[LINE_MAX_CHARS];
    dp_sess_config_t cfg;
    size_t mem_size;
    void *mem;
    dp_sess_table_t *t;
    uint32_t s, i;

    dp_sess_config_init(&cfg, 3, 20, 1);
    mem_size = dp_sess_memory_size(&cfg);
    mem = malloc(mem_size);
    t = dp_sess_create(mem, mem_size, &cfg);
    if (!t) {
        fprintf(stderr, "dp_golden: cannot create session table\n");
        exit(2);
    }
    printf("== sessions\n");
    printf("memory=%lu timeouts", (unsigned long)mem_size);
    for (i = 0; i < DP_SESS_STATE_COUNT; i++)
        printf(" %s=%lu", dp_sess_state_name((dp_sess_state_t)i), (unsigned long)cfg.timeout[i]);
    printf("\n");
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        dp_flow_key_t in, out;
        dp_sess_conn_t c;
        dp_sess_hit_t hit;
        int n = 0, m = 0, rc;
        unsigned long a, b, now;
        unsigned osp, oport, flags, server;
        dp_ops_reset(&ops);
        memset(&c, 0, sizeof c);
        if (strncmp(line, "open1 ", 6) == 0) {
            if (!read_key(line + 6, &in, &n) || sscanf(line + 6 + n, "%u %lu", &server, &now) != 2)
                fail("sessions.txt", line);
            rc = dp_sess_open(t, &in, NULL, server, (uint32_t)now, &c, &ops);
            printf("%s -> rc=%d", line, rc);
        } else if (strncmp(line, "open2 ", 6) == 0 || strncmp(line, "openx ", 6) == 0) {
            int steer = line[4] == '2', src = 0;
            if (!read_key(line + 6, &in, &n) ||
                sscanf(line + 6 + n, "%lx %lx %u %u %u %lu", &a, &b, &osp, &oport, &server, &now) != 6)
                fail("sessions.txt", line);
            memset(&out, 0, sizeof out);
            out.src_ip = (uint32_t)a;
            out.dst_ip = (uint32_t)b;
            out.src_port = (uint16_t)osp;
            out.dst_port = (uint16_t)oport;
            out.proto = in.proto;
            if (steer)
                src = dp_sess_steer_port(t, &out, dp_sess_shard_of(t, &in), 1024, 65535, (uint16_t)oport, &ops);
            rc = dp_sess_open(t, &in, &out, server, (uint32_t)now, &c, &ops);
            printf("%s -> steer=%d port=%u rc=%d", line, src, out.dst_port, rc);
        } else if (strncmp(line, "pkt ", 4) == 0) {
            if (!read_key(line + 4, &in, &n) || sscanf(line + 4 + n, "%x %lu", &flags, &now) != 2)
                fail("sessions.txt", line);
            rc = dp_sess_lookup(t, &in, &hit, &ops);
            printf("%s -> lookup=%d", line, rc);
            if (rc == 0) {
                int st = dp_sess_track(t, hit.conn, (dp_sess_dir_t)hit.dir, (uint8_t)flags, (uint32_t)now, &ops);
                print_conn(&hit.conn);
                printf(" dir=%u server=%u was=%s now=%s", hit.dir, hit.server,
                       dp_sess_state_name((dp_sess_state_t)hit.state),
                       st < 0 ? "error" : dp_sess_state_name((dp_sess_state_t)st));
            }
            printf("\n");
            print_ops("ops", &ops);
            continue;
        } else if (strncmp(line, "bulk ", 5) == 0) {
            /* dp_sess_lookup_bulk of up to 64 keys: each hit or miss, and the batch's ops */
            static dp_flow_key_t keys[64];
            static dp_sess_hit_t hits[64];
            unsigned long nk;
            unsigned k, found;
            const char *at;
            if (sscanf(line + 5, "%lu%n", &nk, &n) != 1 || nk > 64)
                fail("sessions.txt", line);
            at = line + 5 + n;
            for (k = 0; k < nk; k++, at += m)
                if (!read_key(at, &keys[k], &m))
                    fail("sessions.txt", line);
            found = dp_sess_lookup_bulk(t, keys, (unsigned)nk, hits, &ops);
            printf("bulk %lu -> found=%u\n", nk, found);
            for (k = 0; k < nk; k++) {
                if (hits[k].dir == DP_SESS_DIR_NONE) {
                    printf("  miss\n");
                    continue;
                }
                printf(" ");
                print_conn(&hits[k].conn);
                printf(" dir=%u server=%u state=%s\n", hits[k].dir, hits[k].server,
                       dp_sess_state_name((dp_sess_state_t)hits[k].state));
            }
            print_ops("ops", &ops);
            continue;
        } else if (strncmp(line, "close ", 6) == 0) {
            if (!read_key(line + 6, &in, &n))
                fail("sessions.txt", line);
            rc = dp_sess_lookup(t, &in, &hit, &ops);
            printf("%s -> lookup=%d", line, rc);
            if (rc == 0)
                printf(" close=%d", dp_sess_close(t, hit.conn, &ops));
            printf("\n");
            print_ops("ops", &ops);
            continue;
        } else if (strncmp(line, "expire ", 7) == 0) {
            unsigned long sh, budget;
            if (sscanf(line + 7, "%lu %lu %lu%n", &sh, &now, &budget, &m) != 3)
                fail("sessions.txt", line);
            printf("%s -> expired=%lu\n", line,
                   (unsigned long)dp_sess_expire(t, (uint32_t)sh, (uint32_t)now, (uint32_t)budget, &ops));
            print_ops("ops", &ops);
            continue;
        } else if (strncmp(line, "expirer ", 8) == 0) {
            /* dp_sess_expire_report: the connections it names, in scan order */
            static dp_sess_expired_t gone[128];
            unsigned long sh, budget, cap;
            uint32_t nr = 0, scanned = 0, e;
            if (sscanf(line + 8, "%lu %lu %lu %lu%n", &sh, &now, &budget, &cap, &m) != 4 || cap > 128)
                fail("sessions.txt", line);
            printf("%s -> expired=%lu", line,
                   (unsigned long)dp_sess_expire_report(t, (uint32_t)sh, (uint32_t)now, (uint32_t)budget, gone,
                                                        (uint32_t)cap, &nr, &scanned, &ops));
            printf(" scanned=%lu\n", (unsigned long)scanned);
            for (e = 0; e < nr; e++)
                printf("  gone %08lx %08lx %u %u %u server=%u state=%s\n", (unsigned long)gone[e].in_key.src_ip,
                       (unsigned long)gone[e].in_key.dst_ip, (unsigned)gone[e].in_key.src_port,
                       (unsigned)gone[e].in_key.dst_port, (unsigned)gone[e].in_key.proto, (unsigned)gone[e].server,
                       dp_sess_state_name((dp_sess_state_t)gone[e].state));
            print_ops("ops", &ops);
            continue;
        } else {
            fail("sessions.txt", line);
        }
        /* The opens. */
        if (rc == 0)
            print_conn(&c);
        printf("\n");
        print_ops("ops", &ops);
    }
    for (s = 0; s < cfg.shards; s++) {
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t, s, &st);
        printf("shard %lu entries=%lu capacity=%lu connections=%lu buckets=%lu inserts=%llu refused=%llu "
               "expired=%llu deletes=%llu\n",
               (unsigned long)s, (unsigned long)st.entries, (unsigned long)st.capacity,
               (unsigned long)st.connections, (unsigned long)st.buckets, (unsigned long long)st.inserts,
               (unsigned long long)st.refused_full, (unsigned long long)st.expired,
               (unsigned long long)st.deletes);
        printf("  by_state");
        for (i = 0; i < DP_SESS_STATE_COUNT; i++)
            printf(" %lu", (unsigned long)st.by_state[i]);
        printf("\n  expired_by_state");
        for (i = 0; i < DP_SESS_STATE_COUNT; i++)
            printf(" %llu", (unsigned long long)st.expired_by_state[i]);
        printf("\n");
    }
    free(mem);
    fclose(f);
}

static void print_dns_result(const dp_dns_result_t *r)
{
    printf("  res rcode=%u aa=%u tc=%u opt=%u an=%u limit=%lu cmp=%lu qtype=%u qclass=%u\n", r->rcode, r->aa,
           r->truncated, r->opt, r->answers, (unsigned long)r->udp_limit, (unsigned long)r->bytes_compared, r->qtype,
           r->qclass);
}

static void print_dns_zone(const dp_dns_zone_t *z)
{
    dp_dns_zone_stats_t st;
    dp_dns_zone_get_stats(z, &st);
    printf("zone names=%lu name_bytes=%lu records=%lu slots=%lu\n", (unsigned long)st.names,
           (unsigned long)st.name_bytes, (unsigned long)st.records, (unsigned long)st.slots);
}

/* Zones built by config/add lines; names converted; DNS messages answered
 * into a separate buffer; frames answered in place. */
static void run_dns(const char *dir)
{
    static uint8_t msg[MAX_FRAME], out[MAX_FRAME];
    static uint32_t addrs[1024];
    FILE *f = open_vector(dir, "dns.txt");
    char line[LINE_MAX_CHARS], op[16], a1[LINE_MAX_CHARS], a2[LINE_MAX_CHARS], a3[LINE_MAX_CHARS];
    void *mem = NULL;
    dp_dns_zone_t *z = NULL;

    printf("== dns\n");
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("dns.txt", line);
        if (strcmp(op, "config") == 0) {
            dp_dns_zone_config_t cfg;
            unsigned long n, b, r, e;
            size_t size;
            if (sscanf(line, "%*s %lu %lu %lu %lu", &n, &b, &r, &e) != 4)
                fail("dns.txt", line);
            if (z)
                print_dns_zone(z);
            free(mem);
            cfg.max_names = (uint32_t)n;
            cfg.max_name_bytes = (uint32_t)b;
            cfg.max_records = (uint32_t)r;
            cfg.edns_udp_size = (uint32_t)e;
            size = dp_dns_zone_memory_size(&cfg);
            mem = malloc(size ? size : 1);
            z = dp_dns_zone_create(mem, size, &cfg);
            if (!z) {
                fprintf(stderr, "dp_golden: cannot create DNS zone: %s\n", line);
                exit(2);
            }
            printf("config %lu %lu %lu %lu\n", n, b, r, e);
        } else if (strcmp(op, "name") == 0) {
            char dotted[512];
            size_t wl = 0;
            long n = 0;
            int rc;
            if (sscanf(line, "%*s %8191s", a1) != 1 || (n = unhex(a1, (uint8_t *)dotted, sizeof dotted - 1)) < 0)
                fail("dns.txt", line);
            dotted[n] = 0;
            rc = dp_dns_name_to_wire(dotted, msg, sizeof msg, &wl);
            printf("name %s -> %d", a1, rc);
            if (rc == 0) {
                printf(" ");
                print_hex(msg, wl);
            }
            printf("\n");
        } else if (strcmp(op, "add") == 0) {
            unsigned long ttl;
            long n = 0;
            unsigned na = 0;
            int rc;
            if (!z || sscanf(line, "%*s %8191s %lu %8191s", a1, &ttl, a2) != 3 || (n = unhex(a1, msg, sizeof msg)) < 0)
                fail("dns.txt", line);
            if (strcmp(a2, "-") != 0) {
                char *p = a2;
                for (;;) {
                    if (na >= sizeof addrs / sizeof addrs[0])
                        fail("dns.txt", line);
                    addrs[na++] = (uint32_t)strtoul(p, &p, 16);
                    if (*p != ',')
                        break;
                    p++;
                }
            }
            rc = dp_dns_zone_add(z, msg, (size_t)n, addrs, na, (uint32_t)ttl, &ops);
            printf("add %s -> %d\n", a1, rc);
            print_ops("ops", &ops);
        } else if (strcmp(op, "query") == 0 || strcmp(op, "frame") == 0) {
            int frame = op[0] == 'f';
            dp_dns_result_t res;
            dp_drop_reason_t r;
            size_t len = 0;
            long n = 0;
            if (!z || sscanf(line, "%*s %8191s %8191s", a3, a1) != 2 || (n = unhex(a1, msg, sizeof msg)) < 0)
                fail("dns.txt", line);
            if (frame) {
                r = dp_dns_answer_frame(z, msg, (size_t)n, msg, sizeof msg, &len, &res, &ops);
            } else {
                r = dp_dns_answer(z, msg, (size_t)n, out, sizeof out, &len, &res, &ops);
            }
            printf("%s %s %s drop=%s len=%lu ", op, a3, dp_dns_status_name(res.status), dp_drop_reason_name(r),
                   (unsigned long)(r == DP_OK ? len : 0));
            if (r == DP_OK)
                print_hex(frame ? msg : out, len);
            else
                printf("-");
            printf("\n");
            print_dns_result(&res);
            print_ops("ops", &ops);
        } else {
            fail("dns.txt", line);
        }
    }
    if (z)
        print_dns_zone(z);
    free(mem);
    fclose(f);
}

/* L7 web switch areas (dp_http, dp_urlrule, dp_tls, dp_cookie,
 * dp_splice), one line of l7.txt at a time. Byte strings are hex both ways
 * so that the transcript has no spaces inside a field. */
static void print_span(const char *label, const uint8_t *base, dp_http_span_t s)
{
    printf(" %s=", label);
    if (s.len == 0)
        printf("-");
    else
        print_hex(base + s.off, s.len);
}

static void run_l7(const char *dir)
{
    static uint8_t msg[MAX_FRAME], head[MAX_FRAME], frame[MAX_FRAME], frame2[MAX_FRAME], ins[MAX_FRAME];
    static uint64_t rule_mem[65536];
    FILE *f = open_vector(dir, "l7.txt");
    char line[LINE_MAX_CHARS], op[16], a1[LINE_MAX_CHARS], a2[LINE_MAX_CHARS], a3[LINE_MAX_CHARS];
    dp_urlrule_table_t *rules = NULL;

    printf("== l7\n");
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        long n = 0, n2 = 0;
        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("l7.txt", line);
        if (strcmp(op, "http") == 0) {
            dp_http_config_t cfg;
            dp_http_t h;
            unsigned long max_line, max_hdr, cap;
            size_t from = 0, used = 0, u;
            char *c;
            int rc = DP_HTTP_MORE;
            if (sscanf(line, "%*s %15s %lu %lu %lu %8191s %8191s", a3, &max_line, &max_hdr, &cap, a1, a2) != 6 ||
                (n = unhex(a2, msg, sizeof msg)) < 0 || cap > sizeof head)
                fail("l7.txt", line);
            cfg.max_line = (uint32_t)max_line;
            cfg.max_headers = (uint32_t)max_hdr;
            if (dp_http_init(&h, &cfg, head, (uint32_t)cap, strcmp(a3, "resp") == 0) != 0)
                fail("l7.txt", line);
            /* Feed in the pieces the cut list gives, then the rest. */
            c = strcmp(a1, "-") == 0 ? NULL : a1;
            for (;;) {
                size_t to = (size_t)n;
                if (c) {
                    to = (size_t)strtoul(c, &c, 10);
                    c = *c == ',' ? c + 1 : NULL;
                    if (to < from || to > (size_t)n)
                        fail("l7.txt", line);
                }
                rc = dp_http_feed(&h, msg + from, to - from, &u, &ops);
                used += u;
                from = to;
                if (rc != DP_HTTP_MORE || (!c && to == (size_t)n))
                    break;
            }
            printf("http %s %lu %lu %lu %s %s -> %s err=%s used=%lu\n", a3, max_line, max_hdr, cap, a1, a2,
                   dp_http_status_name(rc), dp_http_error_name((dp_http_error_t)h.error), (unsigned long)used);
            print_ops("ops", &ops);
            if (rc == DP_HTTP_DONE) {
                unsigned i;
                dp_ops_t pops;
                printf("  head flags=%04x version=1.%u code=%u cl=%lu blank=%u len=%u", h.flags, h.version_minor,
                       h.status_code, (unsigned long)h.content_length, h.blank_line, h.len);
                print_span("method", head, h.method_s);
                print_span("target", head, h.target);
                print_span("host", head, h.host);
                print_span("cookie", head, h.cookie);
                printf(" cookies=%u setcookies=%u", h.cookies, h.setcookies);
                for (i = 0; i < h.setcookies && i < DP_HTTP_MAX_SETCOOKIE; i++)
                    print_span("sc", head, h.setcookie[i]);
                printf("\n");
                if (!(h.flags & DP_HTTP_F_RESPONSE)) {
                    dp_ops_reset(&pops);
                    printf("  path");
                    print_span("", head, dp_http_path(&h, &pops));
                    printf("\n");
                    print_ops("path_ops", &pops);
                }
            }
        } else if (strcmp(op, "rules") == 0) {
            dp_urlrule_config_t cfg;
            unsigned long max;
            memset(&cfg, 0, sizeof cfg);
            if (sscanf(line, "%*s %15s %lu", a1, &max) != 2)
                fail("l7.txt", line);
            cfg.max_rules = (uint32_t)max;
            cfg.max_pattern_bytes = (uint32_t)max * 64u;
            cfg.order = strcmp(a1, "prec") == 0 ? DP_URLRULE_PRECEDENCE : DP_URLRULE_FIRST;
            rules = dp_urlrule_create(rule_mem, sizeof rule_mem, &cfg);
            if (!rules)
                fail("l7.txt", line);
            printf("rules %s %lu\n", a1, max);
        } else if (strcmp(op, "rule") == 0) {
            unsigned kind, flags, prec;
            unsigned long target;
            int rc;
            if (!rules || sscanf(line, "%*s %u %u %u %lu %8191s", &kind, &flags, &prec, &target, a1) != 5 ||
                (n = unhex(a1, msg, sizeof msg - 1)) < 0)
                fail("l7.txt", line);
            msg[n] = 0;
            rc = dp_urlrule_add(rules, (dp_urlrule_kind_t)kind, (uint8_t)flags, (const char *)msg, (uint16_t)prec,
                                (uint32_t)target, &ops);
            printf("rule %u %u %u %lu %s -> %d\n", kind, flags, prec, target, a1, rc);
            print_ops("ops", &ops);
        } else if (strcmp(op, "match") == 0) {
            dp_urlrule_req_t r;
            uint32_t target = 0, all[64];
            int rc, i;
            if (!rules || sscanf(line, "%*s %8191s %8191s", a1, a2) != 2 || (n = unhex(a1, msg, sizeof msg)) < 0 ||
                (n2 = unhex(a2, head, sizeof head)) < 0)
                fail("l7.txt", line);
            r.path = msg;
            r.path_len = (uint32_t)n;
            r.host = head;
            r.host_len = (uint32_t)n2;
            rc = dp_urlrule_match(rules, &r, &target, &ops);
            printf("match %s %s -> %d target=%lu\n", a1, a2, rc, rc >= 0 ? (unsigned long)target : 0ul);
            print_ops("ops", &ops);
            dp_ops_reset(&ops);
            rc = dp_urlrule_match_all(rules, &r, all, 64, &ops);
            printf("  all %d", rc);
            for (i = 0; i < rc && i < 64; i++)
                printf(" %lu", (unsigned long)all[i]);
            printf("\n");
            print_ops("all_ops", &ops);
        } else if (strcmp(op, "tls") == 0) {
            dp_tls_hello_t t;
            int rc;
            if (sscanf(line, "%*s %8191s", a1) != 1 || (n = unhex(a1, msg, sizeof msg)) < 0)
                fail("l7.txt", line);
            rc = dp_tls_parse_client_hello(msg, (size_t)n, &t, &ops);
            printf("tls %s -> %s rec=%lu", a1, dp_tls_status_name(rc), (unsigned long)t.record_len);
            if (rc == DP_TLS_OK) {
                printf(" rv=%04x cv=%04x max=%04x suites=%u ext=%u sid=", t.record_version, t.client_version,
                       t.max_version, t.cipher_suites, t.extensions);
                if (t.session_id_len)
                    print_hex(t.session_id, t.session_id_len);
                else
                    printf("-");
                printf(" sni=");
                if (t.sni_len)
                    print_hex(msg + t.sni_off, t.sni_len);
                else
                    printf("-");
            }
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(op, "tlssrv") == 0) {
            dp_tls_server_hello_t t;
            int rc;
            if (sscanf(line, "%*s %8191s", a1) != 1 || (n = unhex(a1, msg, sizeof msg)) < 0)
                fail("l7.txt", line);
            rc = dp_tls_parse_server_hello(msg, (size_t)n, &t, &ops);
            printf("tlssrv %s -> %s rec=%lu", a1, dp_tls_status_name(rc), (unsigned long)t.record_len);
            if (rc == DP_TLS_OK) {
                printf(" rv=%04x sv=%04x sel=%04x cs=%04x sid=", t.record_version, t.server_version,
                       t.selected_version, t.cipher_suite);
                if (t.session_id_len)
                    print_hex(t.session_id, t.session_id_len);
                else
                    printf("-");
            }
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(op, "cookie") == 0) {
            uint32_t off = 0, len = 0;
            int rc;
            if (sscanf(line, "%*s %8191s %8191s", a1, a2) != 2 || (n = unhex(a2, msg, sizeof msg)) < 0)
                fail("l7.txt", line);
            rc = dp_cookie_find(msg, (uint32_t)n, a1, &off, &len, &ops);
            printf("cookie %s %s -> %d", a1, a2, rc);
            if (rc == 0)
                printf(" off=%lu len=%lu", (unsigned long)off, (unsigned long)len);
            printf("\n");
            print_ops("ops", &ops);
        } else if (strcmp(op, "setcookie") == 0) {
            /* setcookie MODE NAME VALUE RESPONSE-HEX: parse the response,
             * then learn, or make and apply the insert/rewrite/prefix edit. */
            dp_http_config_t cfg = {8190, 101};
            dp_http_t h;
            dp_cookie_edit_t e;
            dp_ops_t aops;
            char name[256], value[256];
            int rc;
            if (sscanf(line, "%*s %15s %255s %255s %8191s", a3, name, value, a1) != 4 ||
                (n = unhex(a1, msg, sizeof msg)) < 0 || dp_http_init(&h, &cfg, head, sizeof head, 1) != 0 ||
                dp_http_feed(&h, msg, (size_t)n, NULL, NULL) != DP_HTTP_DONE)
                fail("l7.txt", line);
            printf("setcookie %s %s %s %s ->", a3, name, value, a1);
            if (strcmp(a3, "learn") == 0) {
                dp_http_span_t v;
                rc = dp_cookie_learn(&h, name, &v, &ops);
                printf(" %d", rc);
                if (rc == 0)
                    print_span("value", head, v);
                printf("\n");
                print_ops("ops", &ops);
                continue;
            }
            rc = strcmp(a3, "insert") == 0    ? dp_cookie_insert(&h, name, value, &e, &ops)
                 : strcmp(a3, "rewrite") == 0 ? dp_cookie_rewrite(&h, name, value, &e, &ops)
                                              : dp_cookie_prefix(&h, name, value, &e, &ops);
            printf(" %d", rc);
            dp_ops_reset(&aops);
            if (rc == 0) {
                uint32_t len = h.len;
                printf(" off=%lu del=%lu ins=", (unsigned long)e.off, (unsigned long)e.del);
                print_hex(e.ins, e.ins_len);
                rc = dp_cookie_apply(head, &len, sizeof head, &e, &aops);
                printf(" apply=%d head=", rc);
                print_hex(head, len);
            }
            printf("\n");
            print_ops("ops", &ops);
            print_ops("apply_ops", &aops);
        } else if (strcmp(op, "splice") == 0) {
            /* splice CISN VISN REQ LOCAL SERVER RESP DIR OFF DEL INS FRAME FRAME2:
             * accept, handshake ACK, bind; then FRAME (direction DIR) is
             * edited (INS not "x") and translated, and FRAME2 (the other
             * direction, or "-") translated after it. */
            unsigned long cisn, visn, req, local, srv, resp, off, del;
            unsigned d;
            char f1[LINE_MAX_CHARS], f2[LINE_MAX_CHARS];
            dp_splice_t sp;
            dp_parsed_t p;
            size_t len;
            uint32_t skip, take;
            long ni = 0;
            int erc = 0, xrc;
            if (sscanf(line, "%*s %lx %lx %lx %lx %lx %lx %u %lu %lu %8191s %8191s %8191s", &cisn, &visn, &req, &local,
                       &srv, &resp, &d, &off, &del, a1, f1, f2) != 12 ||
                (n = unhex(f1, frame, sizeof frame)) < 0 || (n2 = unhex(f2, frame2, sizeof frame2)) < 0 ||
                (strcmp(a1, "x") != 0 && (ni = unhex(a1, ins, sizeof ins)) < 0))
                fail("l7.txt", line);
            dp_splice_accept(&sp, (uint32_t)cisn, (uint32_t)visn, &ops);
            dp_splice_take(&sp, (uint32_t)cisn + 1u, 1, (uint32_t)visn + 1u, 0, &skip, &take, &ops);
            dp_splice_bind(&sp, (uint32_t)req, (uint32_t)local, (uint32_t)srv, (uint32_t)resp, &ops);
            printf("splice %s ->", line + 7);
            print_ops("setup_ops", &ops);
            dp_ops_reset(&ops);
            len = (size_t)n;
            if (dp_parse(frame, len, NULL, &p, NULL) != DP_OK)
                fail("l7.txt", line);
            if (strcmp(a1, "x") != 0) {
                erc = dp_splice_edit_frame(&sp, (dp_splice_dir_t)d, frame, (size_t)n, sizeof frame, &p, (uint32_t)off,
                                           (uint32_t)del, ins, (uint32_t)ni, &len, &ops);
            }
            printf("  edit=%d", erc);
            print_ops("edit_ops", &ops);
            dp_ops_reset(&ops);
            xrc = dp_splice_xlate(&sp, (dp_splice_dir_t)d, frame, len, &p, &ops);
            printf("  xlate=%d frame=", xrc);
            print_hex(frame, len);
            printf("\n");
            print_ops("xlate_ops", &ops);
            if (n2 > 0) {
                dp_ops_reset(&ops);
                if (dp_parse(frame2, (size_t)n2, NULL, &p, NULL) != DP_OK)
                    fail("l7.txt", line);
                xrc = dp_splice_xlate(&sp, (dp_splice_dir_t)(1 - d), frame2, (size_t)n2, &p, &ops);
                printf("  xlate2=%d frame=", xrc);
                print_hex(frame2, (size_t)n2);
                printf("\n");
                print_ops("xlate2_ops", &ops);
            }
            printf("  state c_next=%08lx v_next=%08lx c2s=%08lx,%08lx,%08lx,%lu s2c=%08lx,%08lx,%08lx,%lu\n",
                   (unsigned long)sp.c_next, (unsigned long)sp.v_next, (unsigned long)sp.c2s.correction_pos,
                   (unsigned long)sp.c2s.offset_before, (unsigned long)sp.c2s.offset_after,
                   (unsigned long)sp.c2s.edited, (unsigned long)sp.s2c.correction_pos,
                   (unsigned long)sp.s2c.offset_before, (unsigned long)sp.s2c.offset_after,
                   (unsigned long)sp.s2c.edited);
        } else {
            fail("l7.txt", line);
        }
    }
    fclose(f);
}

/* health.txt: one checker driven through configurations, reports,
 * classifications and the closed forms; the Python reference in
 * check_health.py re-derives every line. */
static void run_health(const char *dir)
{
    FILE *f = open_vector(dir, "health.txt");
    char line[LINE_MAX_CHARS], op[16];
    dp_health_config_t cfg;
    dp_health_t h;
    int have = 0;

    printf("== health\n");
    memset(&cfg, 0, sizeof cfg);
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("health.txt", line);
        if (strcmp(op, "config") == 0) {
            unsigned long kind, inter, fast, down, timeout, rise, fall, start;
            char expect[DP_HEALTH_MAX_EXPECT + 1];
            if (sscanf(line, "%*s %lu %lu %lu %lu %lu %lu %lu %lu %64s", &kind, &inter, &fast, &down, &timeout,
                       &rise, &fall, &start, expect) != 9)
                fail("health.txt", line);
            memset(&cfg, 0, sizeof cfg);
            cfg.kind = (uint32_t)kind;
            cfg.inter_ms = (uint32_t)inter;
            cfg.fastinter_ms = (uint32_t)fast;
            cfg.downinter_ms = (uint32_t)down;
            cfg.timeout_ms = (uint32_t)timeout;
            cfg.rise = (uint16_t)rise;
            cfg.fall = (uint16_t)fall;
            cfg.start = (uint32_t)start;
            if (strcmp(expect, "-") != 0) {
                cfg.expect_len = (uint32_t)strlen(expect);
                memcpy(cfg.expect, expect, cfg.expect_len);
            }
            have = dp_health_init(&h, &cfg, 0, 0) == 0;
            printf("%s -> %d interval=%lu\n", line, have ? 0 : DP_HEALTH_EINVAL,
                   have ? (unsigned long)dp_health_interval_ms(&h) : 0ul);
            continue;
        }
        if (strcmp(op, "phase") == 0) { /* needs no checker */
            unsigned long pos, n, mininter, own, maxspread;
            unsigned long long start;
            if (sscanf(line, "%*s %llu %lu %lu %lu %lu %lu", &start, &pos, &n, &mininter, &own, &maxspread) != 6)
                fail("health.txt", line);
            printf("%s -> %llu\n", line,
                   (unsigned long long)dp_health_first_check_ms(start, (uint32_t)pos, (uint32_t)n, (uint32_t)mininter,
                                                                (uint32_t)own, (uint32_t)maxspread));
            continue;
        }
        if (!have)
            fail("health.txt", line);
        if (strcmp(op, "report") == 0) {
            unsigned long result;
            unsigned long long end;
            int rc;
            if (sscanf(line, "%*s %lu %llu", &result, &end) != 2)
                fail("health.txt", line);
            rc = dp_health_report(&h, (dp_health_result_t)result, end, &ops);
            printf("%s -> %d health=%lu up=%lu next=%llu\n", line, rc, (unsigned long)h.health,
                   (unsigned long)h.up, (unsigned long long)h.next_check_ms);
        } else if (strcmp(op, "classify") == 0) {
            unsigned long answered, refused, status;
            char hex[LINE_MAX_CHARS];
            uint8_t body[512];
            long n;
            if (sscanf(line, "%*s %lu %lu %lu %s", &answered, &refused, &status, hex) != 4)
                fail("health.txt", line);
            n = strcmp(hex, "-") == 0 ? 0 : unhex(hex, body, sizeof body);
            if (n < 0)
                fail("health.txt", line);
            printf("%s -> %s\n", line,
                   dp_health_result_name(dp_health_classify(&cfg, (int)answered, (int)refused, (uint32_t)status,
                                                            body, (uint32_t)n, &ops)));
        } else if (strcmp(op, "window") == 0) {
            unsigned long delay;
            uint64_t lo = 0, hi = 0;
            int rc;
            if (sscanf(line, "%*s %lu", &delay) != 1)
                fail("health.txt", line);
            rc = dp_health_detection_window(&cfg, (uint32_t)delay, &lo, &hi);
            printf("%s -> %d %llu %llu\n", line, rc, (unsigned long long)lo, (unsigned long long)hi);
            continue;
        } else if (strcmp(op, "counters") == 0) {
            printf("counters checks=%llu failed=%llu down=%llu up=%llu last_change=%llu\n",
                   (unsigned long long)h.checks, (unsigned long long)h.failed_checks,
                   (unsigned long long)h.down_transitions, (unsigned long long)h.up_transitions,
                   (unsigned long long)h.last_change_ms);
            continue;
        } else {
            fail("health.txt", line);
        }
        print_ops("ops", &ops);
    }
    fclose(f);
}

/* persist.txt: a stick table and cookie decisions; check_health.py
 * re-derives the sets (its own copy of the key hash), LRU, expiry and
 * op counts. */
static void run_persist(const char *dir)
{
    FILE *f = open_vector(dir, "persist.txt");
    char line[LINE_MAX_CHARS], op[16];
    void *mem = NULL;
    dp_persist_t *t = NULL;

    printf("== persist\n");
    while (next_line(f, line, sizeof line)) {
        dp_ops_t ops;
        char hex[2 * DP_PERSIST_MAX_KEY + 2];
        uint8_t key[DP_PERSIST_MAX_KEY];
        unsigned long long now = 0;
        dp_ops_reset(&ops);
        if (sscanf(line, "%15s", op) != 1)
            fail("persist.txt", line);
        if (strcmp(op, "config") == 0) {
            unsigned long cap, klen, expire, onfull;
            dp_persist_config_t cfg;
            size_t size;
            if (sscanf(line, "%*s %lu %lu %lu %lu", &cap, &klen, &expire, &onfull) != 4)
                fail("persist.txt", line);
            cfg.capacity = (uint32_t)cap;
            cfg.key_len = (uint32_t)klen;
            cfg.expire_ms = (uint32_t)expire;
            cfg.on_full = (uint32_t)onfull;
            size = dp_persist_memory_size(&cfg);
            free(mem);
            mem = malloc(size ? size : 1);
            t = dp_persist_create(mem, size, &cfg);
            if (!t) {
                fprintf(stderr, "dp_golden: cannot create stick table\n");
                exit(2);
            }
            printf("%s -> memory=%lu\n", line, (unsigned long)size);
            continue;
        }
        if (strcmp(op, "cookie") == 0) {
            unsigned long mode, flags, usable, setc, cacheable;
            long csrv, served;
            dp_persist_cookie_config_t cc;
            dp_persist_cookie_request_t req;
            int rc, resp = 0;
            if (sscanf(line, "%*s %lu %lu %ld %lu %ld %lu %lu", &mode, &flags, &csrv, &usable, &served, &setc,
                       &cacheable) != 7)
                fail("persist.txt", line);
            cc.mode = (uint32_t)mode;
            cc.flags = (uint32_t)flags;
            rc = dp_persist_cookie_request(&cc, (int32_t)csrv, (int)usable, &req, &ops);
            if (rc == 0)
                resp = dp_persist_cookie_response(&cc, &req, req.server >= 0 ? req.server : (int32_t)served,
                                                  (int)setc, (int)cacheable, &ops);
            printf("%s -> %d req=%lu server=%ld resp=%d\n", line, rc, rc == 0 ? (unsigned long)req.actions : 0ul,
                   rc == 0 ? (long)req.server : -1l, resp);
            print_ops("ops", &ops);
            continue;
        }
        if (!t)
            fail("persist.txt", line);
        if (strcmp(op, "store") == 0 || strcmp(op, "lookup") == 0 || strcmp(op, "remove") == 0) {
            long server = 0, n;
            int rc;
            if (strcmp(op, "store") == 0 ? sscanf(line, "%*s %66s %ld %llu", hex, &server, &now) != 3
                                         : sscanf(line, "%*s %66s %llu", hex, &now) != 2)
                fail("persist.txt", line);
            n = unhex(hex, key, sizeof key);
            if (n < 0)
                fail("persist.txt", line);
            if (op[0] == 's')
                rc = dp_persist_store(t, key, (int32_t)server, now, &ops);
            else if (op[0] == 'l')
                rc = dp_persist_lookup(t, key, now, &ops);
            else
                rc = dp_persist_remove(t, key, &ops);
            printf("%s -> %d\n", line, rc);
        } else if (strcmp(op, "expire") == 0) {
            unsigned long sets;
            if (sscanf(line, "%*s %llu %lu", &now, &sets) != 2)
                fail("persist.txt", line);
            printf("%s -> %lu\n", line, (unsigned long)dp_persist_expire(t, now, (uint32_t)sets, &ops));
        } else if (strcmp(op, "forget") == 0) {
            long server;
            if (sscanf(line, "%*s %ld", &server) != 1)
                fail("persist.txt", line);
            printf("%s -> %lu\n", line, (unsigned long)dp_persist_forget_server(t, (int32_t)server, &ops));
        } else if (strcmp(op, "stats") == 0) {
            dp_persist_stats_t st;
            dp_persist_get_stats(t, &st);
            printf("stats entries=%lu capacity=%lu lookups=%llu hits=%llu stores=%llu updates=%llu expired=%llu "
                   "purged=%llu refused_full=%llu removed=%llu\n",
                   (unsigned long)st.entries, (unsigned long)st.capacity, (unsigned long long)st.lookups,
                   (unsigned long long)st.hits, (unsigned long long)st.stores, (unsigned long long)st.updates,
                   (unsigned long long)st.expired, (unsigned long long)st.purged,
                   (unsigned long long)st.refused_full, (unsigned long long)st.removed);
            continue;
        } else {
            fail("persist.txt", line);
        }
        print_ops("ops", &ops);
    }
    free(mem);
    fclose(f);
}

int main(int argc, char **argv)
{
    unsigned i;
    if (argc != 2) {
        fprintf(stderr, "usage: dp_golden VECTOR_DIR\n");
        return 2;
    }
    printf("== drop reasons\n");
    for (i = 0; i < (unsigned)DP_DROP__COUNT; i++)
        printf("%u %s\n", i, dp_drop_reason_name((dp_drop_reason_t)i));
    run_packets(argv[1]);
    run_builds(argv[1]);
    run_routes(argv[1]);
    run_flows(argv[1]);
    run_nat(argv[1]);
    run_syncookie(argv[1]);
    run_ratelimit(argv[1]);
    run_sched_file(argv[1], "sched.txt", "sched");
    run_sessions(argv[1]);
    run_dns(argv[1]);
    run_l7(argv[1]);
    run_health(argv[1]);
    run_persist(argv[1]);
    run_sched_file(argv[1], "sched_param.txt", "sched_param");
    return 0;
}
