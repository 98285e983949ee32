/* libFuzzer harness for the HTTP head parser (dp_http) and the cookie
 * functions that read its result (dp_cookie). Built by the sanitizer
 * sub-build; see docs/fuzzing.md.
 *
 * Input layout (missing bytes read as zero):
 *   0     bit 0: parse a response; bits 1-2: buffer cap 64 << (0..3) bytes
 *   1     max_line = 16 + byte * 4;   2  max_headers = 1 + byte % 16
 *   3-4   first cut point, 5-6 second (mod the message length + 1)
 *   7..   the message
 *
 * Invariants: fed whole, fed in three pieces at the cut points, and fed
 * byte by byte, the parser ends in the same state with the same status,
 * byte count and op counts (split invariance); it never takes more than
 * it was given; its buffer holds exactly the bytes taken (up to its cap);
 * on DONE every span lies inside the head, the head ends with the blank
 * line, the path lies inside the target; dp_cookie_find on the Cookie
 * value returns a span inside it; on a response, an inserted Set-Cookie
 * (when it fits) gives a head that re-parses DONE with one Set-Cookie more
 * and every other field the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define HDR 7u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed(dp_http_t *p, const dp_http_config_t *cfg, uint8_t *buf, uint32_t cap, int resp, const uint8_t *m,
                size_t n, const size_t *cuts, unsigned ncuts, size_t *used, dp_ops_t *ops)
{
    size_t from = 0, u;
    unsigned i;
    int rc = DP_HTTP_MORE;
    CHECK(dp_http_init(p, cfg, buf, cap, resp) == 0);
    dp_ops_reset(ops);
    *used = 0;
    for (i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        rc = dp_http_feed(p, m + from, to - from, &u, ops);
        CHECK(u <= to - from);
        *used += u;
        if (rc != DP_HTTP_MORE)
            break;
        CHECK(u == to - from);
        from = to;
    }
    return rc;
}

static void same(const dp_http_t *a, const dp_http_t *b)
{
    dp_http_t x = *a, y = *b;
    x.buf = y.buf = NULL;
    CHECK(memcmp(&x, &y, sizeof x) == 0);
    CHECK(memcmp(a->buf, b->buf, a->len) == 0);
}

static int inside(dp_http_span_t s, uint32_t len)
{
    return s.off <= len && s.len <= len - s.off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[HDR];
    size_t n = size > HDR ? size - HDR : 0, cuts[2], used_a, used_b, used_c, *every, i;
    const uint8_t *m = data + (size > HDR ? HDR : size);
    dp_http_config_t cfg;
    dp_http_t a, b, c;
    dp_ops_t oa, ob, oc;
    uint32_t cap;
    uint8_t *ba, *bb, *bc;
    int resp, ra, rb, rc;

    memset(h, 0, sizeof h);
    memcpy(h, data, size < HDR ? size : HDR);
    resp = h[0] & 1;
    cap = 64u << ((h[0] >> 1) & 3);
    cfg.max_line = 16u + h[1] * 4u;
    cfg.max_headers = 1u + h[2] % 16u;
    cuts[0] = be(h + 3, 2) % (n + 1);
    cuts[1] = be(h + 5, 2) % (n + 1);
    if (cuts[1] < cuts[0]) {
        size_t t = cuts[0];
        cuts[0] = cuts[1];
        cuts[1] = t;
    }
    ba = malloc(cap + 200);
    bb = malloc(cap);
    bc = malloc(cap);
    every = malloc((n + 1) * sizeof *every);
    CHECK(ba && bb && bc && every);
    for (i = 0; i < n; i++)
        every[i] = i + 1;
    ra = feed(&a, &cfg, ba, cap, resp, m, n, NULL, 0, &used_a, &oa);
    rb = feed(&b, &cfg, bb, cap, resp, m, n, cuts, 2, &used_b, &ob);
    rc = feed(&c, &cfg, bc, cap, resp, m, n, every, n ? (unsigned)(n - 1) : 0, &used_c, &oc);
    CHECK(ra == rb && ra == rc && used_a == used_b && used_a == used_c);
    CHECK(memcmp(&oa, &ob, sizeof oa) == 0 && memcmp(&oa, &oc, sizeof oa) == 0);
    same(&a, &b);
    same(&a, &c);
    CHECK(used_a <= n && a.len <= cap && a.len == (used_a > cap ? cap : used_a));
    CHECK(memcmp(ba, m, a.len) == 0);
    CHECK(oa.bytes_parsed == used_a && oa.bytes_copied == a.len);
    CHECK(ra == DP_HTTP_MORE || ra == DP_HTTP_DONE || ra == DP_HTTP_EMALFORMED || ra == DP_HTTP_ELINE ||
          ra == DP_HTTP_EHEADERS || ra == DP_HTTP_EHEAD);
    CHECK((ra == DP_HTTP_EMALFORMED) == (a.error != DP_HTTP_ERR_NONE));
    if (ra == DP_HTTP_MORE)
        CHECK(used_a == n);
    if (ra == DP_HTTP_DONE) {
        unsigned k;
        CHECK(ba[a.len - 1] == '\n' && (a.blank_line == a.len - 1 || a.blank_line == a.len - 2));
        CHECK(inside(a.host, a.len) && inside(a.cookie, a.len) && inside(a.target, a.len));
        for (k = 0; k < a.setcookies && k < DP_HTTP_MAX_SETCOOKIE; k++)
            CHECK(inside(a.setcookie[k], a.len));
        if (!resp) {
            dp_http_span_t path = dp_http_path(&a, NULL);
            uint32_t off = 0, len = 0;
            CHECK(path.off >= a.target.off && path.off + path.len <= a.target.off + a.target.len);
            CHECK(memchr(ba + path.off, '?', path.len) == NULL);
            if (dp_cookie_find(ba + a.cookie.off, a.cookie.len, "SRV", &off, &len, NULL) == 0)
                CHECK(off <= a.cookie.len && len <= a.cookie.len - off);
        } else {
            dp_cookie_edit_t e;
            uint32_t len = a.len;
            if (dp_cookie_insert(&a, "SRVID", "s1", &e, NULL) == 0 &&
                dp_cookie_apply(ba, &len, cap + 200, &e, NULL) == 0) {
                dp_http_config_t big = {cfg.max_line + 40, cfg.max_headers + 1};
                dp_http_t r;
                size_t used;
                CHECK(len == a.len + e.ins_len);
                if (len <= cap) {
                    CHECK(dp_http_init(&r, &big, bc, cap, 1) == 0);
                    CHECK(dp_http_feed(&r, ba, len, &used, NULL) == DP_HTTP_DONE && used == len);
                    CHECK(r.setcookies == a.setcookies + 1 && r.flags == a.flags && r.status_code == a.status_code);
                    CHECK(r.content_length == a.content_length);
                }
            }
        }
    }
    free(every);
    free(bc);
    free(bb);
    free(ba);
    return 0;
}
