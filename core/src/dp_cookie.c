#include "dp_cookie.h"

#include <string.h>

static int is_ws(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* A cookie name must be a non-empty token (RFC 6265 4.1.1) of at most
 * DP_COOKIE_MAX_NAME bytes; a value may not hold ';', ',', white space,
 * controls or '"' (cookie-octet). Returns the length, or -1. */
static int check_text(const char *s, int is_name)
{
    size_t n, i;
    if (!s)
        return -1;
    n = strlen(s);
    if ((is_name && n == 0) || n > DP_COOKIE_MAX_NAME)
        return -1;
    for (i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c <= 0x20 || c >= 0x7F || c == ';' || c == ',' || c == '"' || c == '\\' || (is_name && strchr("()<>@:/[]?={}", c)))
            return -1;
    }
    return (int)n;
}

int dp_cookie_find(const uint8_t *v, uint32_t len, const char *name, uint32_t *val_off, uint32_t *val_len,
                   dp_ops_t *ops)
{
    uint32_t i = 0;
    int nl = check_text(name, 1);
    if ((!v && len) || nl < 0 || !val_off || !val_len)
        return DP_COOKIE_EINVAL;
    while (i < len) {
        uint32_t ns, ne, vs, ve;
        while (i < len && (is_ws(v[i]) || v[i] == ';'))
            i++;
        ns = i;
        while (i < len && v[i] != '=' && v[i] != ';')
            i++;
        ne = i;
        while (ne > ns && is_ws(v[ne - 1]))
            ne--;
        if (i < len && v[i] == '=')
            i++;
        else
            continue; /* a pair without '=': no value, skipped */
        while (i < len && is_ws(v[i]))
            i++;
        vs = i;
        while (i < len && v[i] != ';')
            i++;
        ve = i;
        while (ve > vs && is_ws(v[ve - 1]))
            ve--;
        if (ne - ns == (uint32_t)nl && memcmp(v + ns, name, (size_t)nl) == 0) {
            *val_off = vs;
            *val_len = ve - vs;
            if (ops)
                ops->bytes_parsed += i;
            return 0;
        }
    }
    if (ops)
        ops->bytes_parsed += len;
    return DP_COOKIE_ENOTFOUND;
}

int dp_cookie_setcookie(const uint8_t *s, uint32_t len, uint32_t *name_off, uint32_t *name_len, uint32_t *val_off,
                        uint32_t *val_len, dp_ops_t *ops)
{
    uint32_t i = 0, ns, ne, vs, ve;
    if ((!s && len) || !name_off || !name_len || !val_off || !val_len)
        return DP_COOKIE_EINVAL;
    while (i < len && is_ws(s[i]))
        i++;
    ns = i;
    while (i < len && s[i] != '=' && s[i] != ';')
        i++;
    ne = i;
    while (ne > ns && is_ws(s[ne - 1]))
        ne--;
    if (i >= len || s[i] != '=' || ne == ns) {
        if (ops)
            ops->bytes_parsed += i;
        return DP_COOKIE_ENOTFOUND;
    }
    i++;
    while (i < len && is_ws(s[i]))
        i++;
    vs = i;
    while (i < len && s[i] != ';')
        i++;
    ve = i;
    while (ve > vs && is_ws(s[ve - 1]))
        ve--;
    *name_off = ns;
    *name_len = ne - ns;
    *val_off = vs;
    *val_len = ve - vs;
    if (ops)
        ops->bytes_parsed += i;
    return 0;
}

int dp_cookie_learn(const dp_http_t *resp, const char *name, dp_http_span_t *value, dp_ops_t *ops)
{
    uint32_t k, n;
    int nl = check_text(name, 1);
    if (!resp || !value || nl < 0 || resp->status != DP_HTTP_DONE || !(resp->flags & DP_HTTP_F_RESPONSE))
        return DP_COOKIE_EINVAL;
    n = resp->setcookies < DP_HTTP_MAX_SETCOOKIE ? resp->setcookies : DP_HTTP_MAX_SETCOOKIE;
    for (k = 0; k < n; k++) {
        const uint8_t *s = resp->buf + resp->setcookie[k].off;
        uint32_t no, nlen, vo, vl;
        if (dp_cookie_setcookie(s, resp->setcookie[k].len, &no, &nlen, &vo, &vl, ops) == 0 &&
            nlen == (uint32_t)nl && memcmp(s + no, name, (size_t)nl) == 0) {
            value->off = resp->setcookie[k].off + vo;
            value->len = vl;
            return 0;
        }
    }
    return DP_COOKIE_ENOTFOUND;
}

static void append(dp_cookie_edit_t *e, const char *s)
{
    size_t n = strlen(s);
    memcpy(e->ins + e->ins_len, s, n);
    e->ins_len += (uint32_t)n;
}

int dp_cookie_insert(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                     dp_ops_t *ops)
{
    if (!resp || !e || check_text(name, 1) < 0 || check_text(value, 0) < 0 || resp->status != DP_HTTP_DONE ||
        !(resp->flags & DP_HTTP_F_RESPONSE))
        return DP_COOKIE_EINVAL;
    memset(e, 0, sizeof *e);
    e->off = resp->blank_line;
    append(e, "Set-Cookie: ");
    append(e, name);
    append(e, "=");
    append(e, value);
    append(e, "; path=/\r\n");
    if (ops)
        ops->bytes_written += e->ins_len;
    return 0;
}

static int edit_value(const dp_http_t *resp, const char *name, const char *value, int prefix, dp_cookie_edit_t *e,
                      dp_ops_t *ops)
{
    dp_http_span_t v;
    int rc;
    if (!e || check_text(value, 0) < 0)
        return DP_COOKIE_EINVAL;
    rc = dp_cookie_learn(resp, name, &v, ops);
    if (rc != 0)
        return rc;
    memset(e, 0, sizeof *e);
    e->off = v.off;
    e->del = prefix ? 0 : v.len;
    append(e, value);
    if (prefix)
        append(e, "~"); /* HAProxy's prefix delimiter */
    if (ops)
        ops->bytes_written += e->ins_len;
    return 0;
}

int dp_cookie_rewrite(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                      dp_ops_t *ops)
{
    return edit_value(resp, name, value, 0, e, ops);
}

int dp_cookie_prefix(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                     dp_ops_t *ops)
{
    return edit_value(resp, name, value, 1, e, ops);
}

int dp_cookie_apply(uint8_t *head, uint32_t *len, uint32_t cap, const dp_cookie_edit_t *e, dp_ops_t *ops)
{
    uint32_t tail, new_len;
    if (!head || !len || !e || e->off > *len || e->del > *len - e->off || e->ins_len > sizeof e->ins)
        return DP_COOKIE_EINVAL;
    new_len = *len - e->del + e->ins_len;
    if (new_len > cap)
        return DP_COOKIE_ENOSPC;
    tail = *len - e->off - e->del;
    if (e->ins_len != e->del)
        memmove(head + e->off + e->ins_len, head + e->off + e->del, tail);
    memcpy(head + e->off, e->ins, e->ins_len);
    *len = new_len;
    if (ops)
        ops->bytes_copied += e->ins_len + (e->ins_len != e->del ? tail : 0u);
    return 0;
}
