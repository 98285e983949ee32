#include "dp_http.h"

#include <string.h>

/* tchar of RFC 7230 3.2.6 (the bytes a method or header name may hold),
 * one bit per byte value: ALPHA, DIGIT and !#$%&'*+-.^_`|~. */
static const uint32_t tchar_bits[8] = {
    0x00000000u, 0x03FF6CFAu, /* 0x20-0x3F: ! # $ % & ' * + - . 0-9 */
    0xC7FFFFFEu, 0x57FFFFFFu, /* 0x40-0x7F: A-Z ^ _ ` a-z | ~ */
    0u, 0u, 0u, 0u,
};

static int is_tchar(uint8_t c)
{
    return (int)((tchar_bits[c >> 5] >> (c & 31)) & 1u);
}

static uint8_t lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

/* Case-insensitive equality of b[0..n) with the lower-case literal s of
 * length sn. */
static int eq_ci_n(const uint8_t *b, uint32_t n, const char *s, uint32_t sn)
{
    uint32_t i;
    if (n != sn)
        return 0;
    for (i = 0; i < n; i++)
        if (lower(b[i]) != (uint8_t)s[i])
            return 0;
    return 1;
}
#define eq_ci(b, n, lit) eq_ci_n((b), (n), (lit), (uint32_t)(sizeof(lit) - 1u))

int dp_http_init(dp_http_t *p, const dp_http_config_t *cfg, uint8_t *buf, uint32_t cap, int response)
{
    if (!p || !cfg || !buf || cap == 0 || cfg->max_line < 16 || cfg->max_headers == 0)
        return DP_HTTP_EINVAL;
    memset(p, 0, sizeof *p);
    p->buf = buf;
    p->cap = cap;
    p->max_line = cfg->max_line;
    p->max_headers = cfg->max_headers;
    p->status = DP_HTTP_MORE;
    if (response)
        p->flags = DP_HTTP_F_RESPONSE;
    return 0;
}

static int malformed(dp_http_t *p, dp_http_error_t e)
{
    p->error = (uint8_t)e;
    return DP_HTTP_EMALFORMED;
}

/* "HTTP/1.0" or "HTTP/1.1" at b[0..8): the minor version, or -1. */
static int version_of(const uint8_t *b)
{
    if (memcmp(b, "HTTP/1.", 7) != 0 || (b[7] != '0' && b[7] != '1'))
        return -1;
    return b[7] - '0';
}

static dp_http_method_t method_of(const uint8_t *b, uint32_t n)
{
    /* Methods are case-sensitive (RFC 7231 4.1). */
    static const char *const names[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"};
    unsigned i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && memcmp(b, names[i], n) == 0)
            return (dp_http_method_t)(DP_HTTP_M_GET + i);
    return DP_HTTP_M_OTHER;
}

static int request_line(dp_http_t *p, uint32_t s, uint32_t n)
{
    const uint8_t *b = p->buf + s;
    uint32_t i = 0, t;
    int v;
    while (i < n && is_tchar(b[i]))
        i++;
    if (i == 0 || i >= n || b[i] != ' ')
        return malformed(p, DP_HTTP_ERR_BAD_METHOD);
    p->method_s.off = s;
    p->method_s.len = i;
    p->method = (uint8_t)method_of(b, i);
    t = ++i;
    while (i < n && b[i] > 0x20 && b[i] < 0x7F)
        i++;
    if (i == t || i >= n || b[i] != ' ')
        return malformed(p, DP_HTTP_ERR_BAD_TARGET);
    p->target.off = s + t;
    p->target.len = i - t;
    i++;
    if (n - i != 8 || (v = version_of(b + i)) < 0)
        return malformed(p, DP_HTTP_ERR_BAD_VERSION);
    p->version_minor = (uint8_t)v;
    return DP_HTTP_MORE;
}

static int status_line(dp_http_t *p, uint32_t s, uint32_t n)
{
    const uint8_t *b = p->buf + s;
    int v;
    if (n < 8 || (v = version_of(b)) < 0)
        return malformed(p, DP_HTTP_ERR_BAD_VERSION);
    p->version_minor = (uint8_t)v;
    /* RFC 7230 3.1.2: SP 3DIGIT SP reason; an empty reason without its SP
     * is accepted, as most clients do. */
    if (n < 12 || b[8] != ' ' || b[9] < '0' || b[9] > '9' || b[10] < '0' || b[10] > '9' || b[11] < '0' ||
        b[11] > '9' || (n > 12 && b[12] != ' ') || b[9] == '0')
        return malformed(p, DP_HTTP_ERR_BAD_STATUS);
    p->status_code = (uint16_t)((b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0'));
    return DP_HTTP_MORE;
}

/* The comma-separated tokens of a Connection value (RFC 7230 6.1). */
static void connection_tokens(dp_http_t *p, const uint8_t *b, uint32_t n)
{
    uint32_t i = 0;
    while (i < n) {
        uint32_t s, e;
        while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == ','))
            i++;
        s = i;
        while (i < n && b[i] != ',')
            i++;
        e = i;
        while (e > s && (b[e - 1] == ' ' || b[e - 1] == '\t'))
            e--;
        if (eq_ci(b + s, e - s, "close"))
            p->flags |= DP_HTTP_F_CONN_CLOSE;
        else if (eq_ci(b + s, e - s, "keep-alive"))
            p->flags |= DP_HTTP_F_CONN_KEEPALIVE;
    }
}

static int header_line(dp_http_t *p, uint32_t s, uint32_t n)
{
    const uint8_t *b = p->buf + s;
    uint32_t i = 0, vs, ve;
    if (++p->headers > p->max_headers)
        return DP_HTTP_EHEADERS;
    if (b[0] == ' ' || b[0] == '\t')
        return malformed(p, DP_HTTP_ERR_FOLDED);
    while (i < n && is_tchar(b[i]))
        i++;
    if (i == 0 || i >= n || b[i] != ':')
        return malformed(p, DP_HTTP_ERR_BAD_HEADER);
    vs = i + 1;
    ve = n;
    while (vs < ve && (b[vs] == ' ' || b[vs] == '\t'))
        vs++;
    while (ve > vs && (b[ve - 1] == ' ' || b[ve - 1] == '\t'))
        ve--;
    if (eq_ci(b, i, "host")) {
        if (p->flags & DP_HTTP_F_HAS_HOST)
            return malformed(p, DP_HTTP_ERR_DUP_HOST);
        p->flags |= DP_HTTP_F_HAS_HOST;
        p->host.off = s + vs;
        p->host.len = ve - vs;
    } else if (eq_ci(b, i, "connection")) {
        connection_tokens(p, b + vs, ve - vs);
    } else if (eq_ci(b, i, "content-length")) {
        uint64_t v = 0;
        uint32_t k;
        if (ve == vs)
            return malformed(p, DP_HTTP_ERR_BAD_LENGTH);
        for (k = vs; k < ve; k++) {
            if (b[k] < '0' || b[k] > '9')
                return malformed(p, DP_HTTP_ERR_BAD_LENGTH);
            v = v * 10 + (uint64_t)(b[k] - '0');
            if (v > ((uint64_t)1 << 53))
                return malformed(p, DP_HTTP_ERR_BAD_LENGTH);
        }
        if ((p->flags & DP_HTTP_F_HAS_LENGTH) && p->content_length != v)
            return malformed(p, DP_HTTP_ERR_BAD_LENGTH);
        p->flags |= DP_HTTP_F_HAS_LENGTH;
        p->content_length = v;
    } else if (eq_ci(b, i, "transfer-encoding")) {
        p->flags |= DP_HTTP_F_CHUNKED;
    } else if (!(p->flags & DP_HTTP_F_RESPONSE) && eq_ci(b, i, "cookie")) {
        if (p->cookies++ == 0) {
            p->cookie.off = s + vs;
            p->cookie.len = ve - vs;
        }
    } else if ((p->flags & DP_HTTP_F_RESPONSE) && eq_ci(b, i, "set-cookie")) {
        if (p->setcookies < DP_HTTP_MAX_SETCOOKIE) {
            p->setcookie[p->setcookies].off = s + vs;
            p->setcookie[p->setcookies].len = ve - vs;
        }
        p->setcookies++;
    }
    return DP_HTTP_MORE;
}

/* One complete line buf[line_start .. len), its LF last. */
static int end_of_line(dp_http_t *p)
{
    uint32_t s = p->line_start, n = p->len - 1 - s, i;
    const uint8_t *b = p->buf + s;
    if (n && b[n - 1] == '\r')
        n--;
    for (i = 0; i < n; i++) {
        if (b[i] == '\r')
            return malformed(p, DP_HTTP_ERR_BAD_CR);
        if ((b[i] < 0x20 && b[i] != '\t') || b[i] == 0x7F)
            return malformed(p, DP_HTTP_ERR_CTL);
    }
    p->line_start = p->len;
    if (!(p->flags & DP_HTTP_F_STARTED)) {
        if (n == 0)
            return DP_HTTP_MORE; /* RFC 7230 3.5: empty lines before the start line are ignored */
        p->flags |= DP_HTTP_F_STARTED;
        return (p->flags & DP_HTTP_F_RESPONSE) ? status_line(p, s, n) : request_line(p, s, n);
    }
    if (n == 0) {
        p->blank_line = s;
        if (p->version_minor == 1 ? !(p->flags & DP_HTTP_F_CONN_CLOSE)
                                  : (p->flags & (DP_HTTP_F_CONN_KEEPALIVE | DP_HTTP_F_CONN_CLOSE)) ==
                                        DP_HTTP_F_CONN_KEEPALIVE)
            p->flags |= DP_HTTP_F_KEEPALIVE;
        return DP_HTTP_DONE;
    }
    return header_line(p, s, n);
}

int dp_http_feed(dp_http_t *p, const uint8_t *data, size_t len, size_t *used, dp_ops_t *ops)
{
    size_t i = 0;
    uint32_t copied = 0;
    int st;
    if (used)
        *used = 0;
    if (!p || (!data && len))
        return DP_HTTP_EINVAL;
    st = p->status;
    /* Byte by byte, in effect: each byte is copied if the buffer has room
     * (else it is taken and the head is too large), then the line is too
     * long if it now exceeds max_line, else an LF ends it. Done a run at a
     * time: the run stops at the end of the data, the buffer's room, or the
     * first byte that makes the line too long, whichever comes first, and
     * is cut after its first LF. */
    while (st == DP_HTTP_MORE && i < len) {
        uint32_t line = p->len - p->line_start; /* <= max_line here */
        size_t run = len - i;
        const uint8_t *lf;
        if (p->len >= p->cap) {
            i++;
            st = DP_HTTP_EHEAD;
            break;
        }
        if (run > p->cap - p->len)
            run = p->cap - p->len;
        if (run > (size_t)(p->max_line - line) + 1u)
            run = (size_t)(p->max_line - line) + 1u;
        lf = (const uint8_t *)memchr(data + i, '\n', run);
        if (lf)
            run = (size_t)(lf - (data + i)) + 1u;
        memcpy(p->buf + p->len, data + i, run);
        p->len += (uint32_t)run;
        copied += (uint32_t)run;
        i += run;
        if (p->len - p->line_start > p->max_line)
            st = DP_HTTP_ELINE;
        else if (lf)
            st = end_of_line(p);
    }
    p->status = st;
    if (used)
        *used = i;
    if (ops) {
        ops->bytes_parsed += i;
        ops->bytes_copied += copied;
    }
    return st;
}

dp_http_span_t dp_http_path(const dp_http_t *p, dp_ops_t *ops)
{
    dp_http_span_t r = {0, 0};
    const uint8_t *b;
    uint32_t i = 0, n;
    if (!p || p->status != DP_HTTP_DONE || (p->flags & DP_HTTP_F_RESPONSE))
        return r;
    b = p->buf + p->target.off;
    n = p->target.len;
    if (b[0] != '/') {
        /* absolute-form: skip "scheme://authority" (HAProxy http_get_path). */
        while (i < n && b[i] != ':' && b[i] != '/')
            i++;
        if (i + 2 < n && b[i] == ':' && b[i + 1] == '/' && b[i + 2] == '/') {
            i += 3;
            while (i < n && b[i] != '/')
                i++;
        } else {
            i = n; /* "*" or authority-form: no path */
        }
    }
    r.off = p->target.off + i;
    while (i < n && b[i] != '?')
        i++;
    r.len = p->target.off + i - r.off;
    if (ops)
        ops->bytes_parsed += i;
    return r;
}

const char *dp_http_status_name(int status)
{
    switch (status) {
    case DP_HTTP_MORE: return "more";
    case DP_HTTP_DONE: return "done";
    case DP_HTTP_EINVAL: return "invalid_argument";
    case DP_HTTP_EMALFORMED: return "malformed";
    case DP_HTTP_ELINE: return "line_too_long";
    case DP_HTTP_EHEADERS: return "too_many_headers";
    case DP_HTTP_EHEAD: return "head_too_large";
    default: return "unknown";
    }
}

const char *dp_http_error_name(dp_http_error_t e)
{
    static const char *const names[DP_HTTP_ERR__COUNT] = {
        "none", "bad_cr", "control_byte", "bad_method", "bad_target", "bad_version",
        "bad_status", "folded_header", "bad_header", "duplicate_host", "bad_content_length",
    };
    if ((unsigned)e >= (unsigned)DP_HTTP_ERR__COUNT)
        return "unknown";
    return names[e];
}
