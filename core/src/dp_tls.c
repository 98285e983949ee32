#include "dp_tls.h"

#include <string.h>

#include "dp_bytes.h"

/* The extensions block b[0..n) (after its 2-byte length), at offset base
 * from the record start; *pos advances over each extension read whole. */
static int extensions(const uint8_t *b, uint32_t n, uint32_t base, dp_tls_hello_t *h, uint32_t *pos)
{
    uint32_t i = 0;
    while (i < n) {
        uint32_t type, elen;
        const uint8_t *e;
        if (n - i < 4)
            return DP_TLS_EMALFORMED;
        type = rd16(b + i);
        elen = rd16(b + i + 2);
        if (n - i - 4 < elen)
            return DP_TLS_EMALFORMED;
        e = b + i + 4;
        if (type == 43) {
            /* supported_versions (RFC 8446 4.2.1): versions<2..254>. */
            uint32_t k, vl;
            if (elen < 1 || (vl = e[0]) + 1 != elen || vl < 2 || (vl & 1))
                return DP_TLS_EMALFORMED;
            for (k = 1; k < elen; k += 2)
                if (rd16(e + k) > h->max_version && !(e[k] == e[k + 1] && (e[k] & 0x0F) == 0x0A)) /* GREASE, RFC 8701 */
                    h->max_version = rd16(e + k);
        } else if (type == 0 && h->sni_len == 0) {
            /* server_name (RFC 6066 3): list<1..2^16-1> of (type, name<1..2^16-1>). */
            uint32_t ll, k = 2;
            if (elen < 2 || (ll = rd16(e)) + 2 != elen || ll == 0)
                return DP_TLS_EMALFORMED;
            while (k < elen) {
                uint32_t nl;
                if (elen - k < 3 || (nl = rd16(e + k + 1)) > elen - k - 3 || nl == 0)
                    return DP_TLS_EMALFORMED;
                if (e[k] == 0 && h->sni_len == 0) {
                    h->sni_off = (uint16_t)(base + i + 4 + k + 3);
                    h->sni_len = (uint16_t)nl;
                }
                k += 3 + nl;
            }
        }
        h->extensions++;
        i += 4 + elen;
        *pos = base + i;
    }
    return DP_TLS_OK;
}

/* session_id<0..32> at *p (both hellos carry one): copied out, *p past it. */
static int session_id(const uint8_t *d, uint32_t end, uint32_t *p, uint8_t *id, uint8_t *len)
{
    uint32_t n;
    if (end - *p < 1 || (n = d[*p]) > DP_TLS_MAX_SESSION_ID || end - *p - 1 < n)
        return DP_TLS_EMALFORMED;
    *len = (uint8_t)n;
    memcpy(id, d + *p + 1, n);
    *p += 1 + n;
    return DP_TLS_OK;
}

static int hello(const uint8_t *d, uint32_t end, dp_tls_hello_t *h, uint32_t *pos)
{
    uint32_t p = 9, n;
    /* client_version and random */
    if (end - p < 34)
        return DP_TLS_EMALFORMED;
    h->client_version = h->max_version = rd16(d + p);
    p += 34;
    *pos = p;
    if (session_id(d, end, &p, h->session_id, &h->session_id_len) != DP_TLS_OK)
        return DP_TLS_EMALFORMED;
    *pos = p;
    /* cipher_suites<2..2^16-2>, two bytes each */
    if (end - p < 2 || (n = rd16(d + p)) < 2 || (n & 1) || end - p - 2 < n)
        return DP_TLS_EMALFORMED;
    h->cipher_suites = (uint16_t)(n / 2);
    p += 2 + n;
    *pos = p;
    /* compression_methods<1..2^8-1> */
    if (end - p < 1 || (n = d[p]) < 1 || end - p - 1 < n)
        return DP_TLS_EMALFORMED;
    p += 1 + n;
    *pos = p;
    if (p == end)
        return DP_TLS_OK; /* no extensions (allowed before TLS 1.3) */
    if (end - p < 2 || (n = rd16(d + p)) != end - p - 2)
        return DP_TLS_EMALFORMED;
    p += 2;
    *pos = p;
    return extensions(d + p, n, p, h, pos);
}

/* The record and handshake-message framing both hellos share (RFC 8446
 * 5.1 and 4): a handshake record holding a message of `type` whose body
 * ends inside it. DP_TLS_OK with *hlen the body's length and *pos 9 (the
 * body's start); DP_TLS_MORE while the record is incomplete (*record_len
 * set once its header is in); else the status to report, *pos where the
 * reading stopped. `alone`: nothing may follow the message in the record. */
static int handshake_framing(const uint8_t *data, size_t len, uint8_t type, int wrong_type, int alone,
                             uint32_t *record_len, uint16_t *record_version, uint32_t *hlen, uint32_t *pos)
{
    uint32_t rlen;
    if (len < 5)
        return DP_TLS_MORE;
    rlen = rd16(data + 3);
    if (data[0] != 22 || data[1] != 3)
        return DP_TLS_ENOTHANDSHAKE;
    if (rlen > DP_TLS_MAX_RECORD)
        return DP_TLS_EMALFORMED;
    *record_len = 5 + rlen;
    if (len < 5 + (size_t)rlen)
        return DP_TLS_MORE;
    *record_version = rd16(data + 1);
    *pos = 5;
    if (rlen < 4)
        return DP_TLS_EMALFORMED;
    if (data[5] != type)
        return wrong_type;
    *hlen = ((uint32_t)data[6] << 16) | rd16(data + 7);
    if (*hlen > rlen - 4)
        return DP_TLS_EFRAGMENTED;
    if (alone && *hlen < rlen - 4)
        return DP_TLS_EMALFORMED;
    *pos = 9;
    return DP_TLS_OK;
}

int dp_tls_parse_client_hello(const uint8_t *data, size_t len, dp_tls_hello_t *out, dp_ops_t *ops)
{
    uint32_t hlen = 0, pos = 0;
    int rc;
    if ((!data && len) || !out)
        return DP_TLS_EINVAL;
    memset(out, 0, sizeof *out);
    /* Another handshake message after the hello in the same record: nothing
     * else may precede the server's reply (RFC 8446 4.1.2). */
    rc = handshake_framing(data, len, 1, DP_TLS_ENOTHELLO, 1, &out->record_len, &out->record_version, &hlen, &pos);
    if (rc == DP_TLS_MORE)
        return rc;
    if (rc == DP_TLS_OK)
        rc = hello(data, 9 + hlen, out, &pos);
    if (rc != DP_TLS_OK) {
        uint32_t keep = out->record_len;
        memset(out, 0, sizeof *out);
        out->record_len = keep;
    }
    if (ops)
        ops->bytes_parsed += pos;
    return rc;
}

static int server_hello(const uint8_t *d, uint32_t end, dp_tls_server_hello_t *h, uint32_t *pos)
{
    uint32_t p = 9, n;
    if (end - p < 34)
        return DP_TLS_EMALFORMED;
    h->server_version = h->selected_version = rd16(d + p);
    p += 34;
    *pos = p;
    if (session_id(d, end, &p, h->session_id, &h->session_id_len) != DP_TLS_OK)
        return DP_TLS_EMALFORMED;
    *pos = p;
    /* cipher_suite and compression_method */
    if (end - p < 3)
        return DP_TLS_EMALFORMED;
    h->cipher_suite = rd16(d + p);
    p += 3;
    *pos = p;
    if (p == end)
        return DP_TLS_OK;
    if (end - p < 2 || (n = rd16(d + p)) != end - p - 2)
        return DP_TLS_EMALFORMED;
    p += 2;
    *pos = p;
    while (p < end) {
        uint32_t type, elen;
        if (end - p < 4 || (elen = rd16(d + p + 2)) > end - p - 4)
            return DP_TLS_EMALFORMED;
        type = rd16(d + p);
        if (type == 43) {
            if (elen != 2)
                return DP_TLS_EMALFORMED;
            h->selected_version = rd16(d + p + 4);
        }
        p += 4 + elen;
        *pos = p;
    }
    return DP_TLS_OK;
}

int dp_tls_parse_server_hello(const uint8_t *data, size_t len, dp_tls_server_hello_t *out, dp_ops_t *ops)
{
    uint32_t hlen = 0, pos = 0;
    int rc;
    if ((!data && len) || !out)
        return DP_TLS_EINVAL;
    memset(out, 0, sizeof *out);
    /* messages after the ServerHello in the same record are the server's
     * next ones (Certificate, ...): not read */
    rc = handshake_framing(data, len, 2, DP_TLS_ENOTSERVERHELLO, 0, &out->record_len, &out->record_version, &hlen,
                           &pos);
    if (rc == DP_TLS_MORE)
        return rc;
    if (rc == DP_TLS_OK)
        rc = server_hello(data, 9 + hlen, out, &pos);
    if (rc != DP_TLS_OK) {
        uint32_t keep = out->record_len;
        memset(out, 0, sizeof *out);
        out->record_len = keep;
    }
    if (ops)
        ops->bytes_parsed += pos;
    return rc;
}

const char *dp_tls_status_name(int rc)
{
    switch (rc) {
    case DP_TLS_OK: return "ok";
    case DP_TLS_MORE: return "more";
    case DP_TLS_EINVAL: return "invalid_argument";
    case DP_TLS_ENOTHANDSHAKE: return "not_handshake";
    case DP_TLS_ENOTHELLO: return "not_client_hello";
    case DP_TLS_EMALFORMED: return "malformed";
    case DP_TLS_EFRAGMENTED: return "fragmented";
    case DP_TLS_ENOTSERVERHELLO: return "not_server_hello";
    default: return "unknown";
    }
}
