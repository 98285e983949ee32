/* A freestanding subset of dp_cost for counting Octeon II instructions.
 *
 * qemu's Octeon68XX CPU has no FPU, so glibc cannot start on it (see
 * scripts/toolchain-probes/octeon2.c); this program has no C library: its
 * own entry point, raw n64 system calls, a bump allocator over a static
 * arena and byte-loop memcpy/memset/memcmp. It is built twice by
 * core/cost/count_insns.py --octeon, with -march=octeon2 and with
 * -march=mips64r2 and otherwise identical flags, and runs the operations
 * below with rt_cost_mark() around each, exactly as dp_cost does (same
 * seeds for the parts it shares: the 1,024-route table and its addresses,
 * 64-byte frames), so the two builds' counts compare the ISAs on the same
 * source and inputs. Not comparable with the glibc table row for row
 * (different memcpy, different frame addresses); compare the two columns of
 * this program with each other.
 */
#include "dp.h"

#define SYS_WRITE 5001      /* n64 ABI: __NR_Linux (5000) + 1 */
#define SYS_EXIT_GROUP 5205 /* n64 ABI: __NR_Linux + 205 */

static long syscall3(long number, long a, long b, long c)
{
    register long v0 __asm__("$2") = number;
    register long a0 __asm__("$4") = a;
    register long a1 __asm__("$5") = b;
    register long a2 __asm__("$6") = c;
    register long a3 __asm__("$7");
    __asm__ volatile("syscall"
                     : "+r"(v0), "=r"(a3)
                     : "r"(a0), "r"(a1), "r"(a2)
                     : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24", "$25", "hi",
                       "lo", "memory");
    return a3 ? -v0 : v0;
}

void *memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    while (n--) *dd++ = *ss++;
    return d;
}
void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd < ss) {
        while (n--) *dd++ = *ss++;
    } else {
        while (n--) dd[n] = ss[n];
    }
    return d;
}
void *memset(void *d, int c, size_t n)
{
    unsigned char *dd = d;
    while (n--) *dd++ = (unsigned char)c;
    return d;
}
int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}
size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static unsigned char arena[96u << 20] __attribute__((aligned(128)));
static size_t arena_used;
static void *alloc(size_t n)
{
    void *p = arena + arena_used;
    arena_used += (n + 127) & ~(size_t)127;
    if (arena_used > sizeof arena) syscall3(SYS_EXIT_GROUP, 3, 0, 0);
    return p;
}

static unsigned long long rng_state;
static unsigned long long rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

__attribute__((noinline)) void rt_cost_mark(void)
{
    __asm__ __volatile__("" ::: "memory");
}

#define NIN 256u
#define CALLS 4096u
static uint8_t frames[NIN][128];
static size_t flen[NIN];
static uint32_t ips[NIN];
static dp_lpm_t *lpm;
static volatile uint32_t sink;

static uint32_t mask_of(unsigned depth) { return depth == 0 ? 0u : 0xFFFFFFFFu << (32 - depth); }

static void op_noop(uint32_t i, dp_ops_t *o) { (void)i; (void)o; }
static void op_parse(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p;
    sink += (uint32_t)dp_parse(frames[i & (NIN - 1)], flen[i & (NIN - 1)], 0, &p, o);
}
static void op_csum20(uint32_t i, dp_ops_t *o) { sink += dp_csum(frames[i & (NIN - 1)] + 14, 20, o); }
static void op_ttl(uint32_t i, dp_ops_t *o)
{
    sink += (uint32_t)dp_ip4_decrement_ttl(frames[i & (NIN - 1)] + 14, flen[i & (NIN - 1)] - 14, o);
}
static void op_lpm(uint32_t i, dp_ops_t *o)
{
    uint32_t hop = 0;
    sink += (uint32_t)dp_lpm_lookup(lpm, ips[i & (NIN - 1)], &hop, o) + hop;
}
static void op_fwd(uint32_t i, dp_ops_t *o)
{
    dp_parsed_t p;
    uint32_t hop = 0;
    uint8_t *f = frames[i & (NIN - 1)];
    if (dp_parse(f, flen[i & (NIN - 1)], 0, &p, o) != DP_OK) { sink += 1; return; }
    if (dp_lpm_lookup(lpm, p.dst_ip, &hop, o) != 0) { sink += 2; return; }
    sink += (uint32_t)dp_ip4_decrement_ttl(f + p.l3_offset, flen[i & (NIN - 1)] - p.l3_offset, o) + hop;
}

/* Names in the order of the marks (printed, so the counter can pair them). */
static const char names[] = "noop parse csum_full_20 ttl lpm_lookup_small path_ip4_fwd_small\n";
static void (*const ops[])(uint32_t, dp_ops_t *) = {op_noop, op_parse, op_csum20, op_ttl, op_lpm, op_fwd};

void __start(void)
{
    /* The 1,024-route table and addresses of dp_cost (seed 0x5EED0001). */
    rng_state = 0x5EED0001u;
    static uint32_t pre[1024];
    static uint8_t dep[1024];
    for (unsigned k = 0; k < 1024; k++) {
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
            unsigned k = (unsigned)(rng() % 1024);
            ips[i] = pre[k] | ((uint32_t)rng() & ~mask_of(dep[k]));
        } else {
            ips[i] = (uint32_t)rng();
        }
    }
    dp_lpm_config_t cfg = {1024 + 102 + 16, 4096};
    size_t size = dp_lpm_memory_size(&cfg);
    lpm = dp_lpm_create(alloc(size), size, &cfg);
    for (unsigned k = 0; k < 1024; k++)
        if (dp_lpm_add(lpm, pre[k], dep[k], (uint32_t)(k * 2654435761u) & DP_LPM_MAX_NEXT_HOP, 0) != 0)
            syscall3(SYS_EXIT_GROUP, 4, 0, 0);
    /* 64-byte TCP/UDP frames to routed addresses. */
    rng_state = 0x5EED0003u;
    for (unsigned i = 0; i < NIN; i++) {
        dp_build_spec_t s;
        memset(&s, 0, sizeof s);
        for (int b = 0; b < 6; b++) { s.dst_mac[b] = (uint8_t)rng(); s.src_mac[b] = (uint8_t)rng(); }
        s.src_ip = 0xC6120000u | (uint32_t)(rng() & 0xFFFF);
        s.dst_ip = ips[i];
        s.ttl = 64;
        s.ip_proto = (i & 1) ? DP_IPPROTO_UDP : DP_IPPROTO_TCP;
        s.ip_id = (uint16_t)rng();
        s.src_port = (uint16_t)(1024 + rng() % 60000);
        s.dst_port = (i & 1) ? 53 : 80;
        s.tcp_seq = (uint32_t)rng();
        s.tcp_flags = 0x10;
        s.payload_len = (uint16_t)(i & 1 ? 18 : 6);
        s.l4_checksum = 1;
        if (dp_build(&s, frames[i], sizeof frames[i], &flen[i], 0) != DP_OK) syscall3(SYS_EXIT_GROUP, 5, 0, 0);
    }
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        dp_ops_t o;
        memset(&o, 0, sizeof o);
        rt_cost_mark();
        for (uint32_t i = 0; i < CALLS; i++) ops[k](i, &o);
        rt_cost_mark();
    }
    syscall3(SYS_WRITE, 1, (long)names, (long)(sizeof names - 1));
    syscall3(SYS_EXIT_GROUP, 0, 0, 0);
    for (;;) {
    }
}
