/* libFuzzer harness for the TLS ClientHello parser (dp_tls). Built by the
 * sanitizer sub-build; see docs/fuzzing.md. The whole input is the start
 * of a TLS connection.
 *
 * Invariants: the parser reads only the bytes given (ASan); the result is
 * one of the documented codes; on OK the record is all there, the session
 * ID is the bytes at offset 44 (RFC 5246 7.4.1.2: 5 + 4 header bytes, 2
 * version bytes, 32 random bytes, then its length byte at 43) and its
 * length the byte at 43, the server name lies inside the record, the
 * record header and handshake type are 22/3.x and 1, the bytes walked are
 * the whole record, and every strictly shorter prefix is MORE; on an
 * error nothing but record_len is reported and at most the record was
 * walked; the bytes after the record never change the result. The same
 * input read as the server's first record (dp_tls_parse_server_hello): on
 * OK the handshake type is 2, the session ID is the bytes at 44 with its
 * length at 43, the bytes walked end within the record, and shorter
 * prefixes are MORE; on an error nothing but record_len is reported. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_tls_hello_t t, u;
    dp_ops_t ops;
    int rc;
    dp_ops_reset(&ops);
    rc = dp_tls_parse_client_hello(data, size, &t, &ops);
    CHECK(rc == DP_TLS_OK || rc == DP_TLS_MORE || rc == DP_TLS_ENOTHANDSHAKE || rc == DP_TLS_ENOTHELLO ||
          rc == DP_TLS_EMALFORMED || rc == DP_TLS_EFRAGMENTED);
    if (rc == DP_TLS_OK) {
        size_t n;
        CHECK(t.record_len <= size && t.record_len == 5u + be(data + 3, 2));
        CHECK(data[0] == 22 && data[1] == 3 && data[5] == 1);
        CHECK(t.session_id_len == data[43] && t.session_id_len <= 32);
        CHECK(memcmp(t.session_id, data + 44, t.session_id_len) == 0);
        CHECK(t.sni_len == 0 || (t.sni_off >= 44 && t.sni_off + t.sni_len <= t.record_len));
        CHECK(t.cipher_suites >= 1 && t.max_version >= t.client_version);
        CHECK(ops.bytes_parsed == t.record_len);
        for (n = 0; n < t.record_len; n += 1 + n / 7)
            CHECK(dp_tls_parse_client_hello(data, n, &u, NULL) == DP_TLS_MORE);
    } else if (rc == DP_TLS_MORE) {
        CHECK(ops.bytes_parsed == 0 && (size < 5 || t.record_len > size));
    } else {
        uint8_t zero[DP_TLS_MAX_SESSION_ID];
        memset(zero, 0, sizeof zero);
        CHECK(t.session_id_len == 0 && memcmp(t.session_id, zero, sizeof zero) == 0 && t.sni_len == 0);
        CHECK(ops.bytes_parsed <= (t.record_len ? t.record_len : 5u));
    }
    if (rc != DP_TLS_MORE && size >= 5) {
        /* Only the first record counts: cutting what follows it changes nothing. */
        size_t rec = 5u + be(data + 3, 2);
        if (rec <= size) {
            CHECK(dp_tls_parse_client_hello(data, rec, &u, NULL) == rc);
            CHECK(memcmp(&t, &u, sizeof t) == 0);
        }
    }
    {
        dp_tls_server_hello_t sh, sh2;
        dp_ops_reset(&ops);
        rc = dp_tls_parse_server_hello(data, size, &sh, &ops);
        CHECK(rc == DP_TLS_OK || rc == DP_TLS_MORE || rc == DP_TLS_ENOTHANDSHAKE || rc == DP_TLS_ENOTSERVERHELLO ||
              rc == DP_TLS_EMALFORMED || rc == DP_TLS_EFRAGMENTED);
        if (rc == DP_TLS_OK) {
            size_t n;
            CHECK(sh.record_len <= size && sh.record_len == 5u + be(data + 3, 2) && data[5] == 2);
            CHECK(sh.session_id_len == data[43] && sh.session_id_len <= 32);
            CHECK(memcmp(sh.session_id, data + 44, sh.session_id_len) == 0);
            CHECK(ops.bytes_parsed >= 47u + sh.session_id_len && ops.bytes_parsed <= sh.record_len);
            for (n = 0; n < sh.record_len; n += 1 + n / 7)
                CHECK(dp_tls_parse_server_hello(data, n, &sh2, NULL) == DP_TLS_MORE);
        } else if (rc == DP_TLS_MORE) {
            CHECK(ops.bytes_parsed == 0 && (size < 5 || sh.record_len > size));
        } else {
            CHECK(sh.session_id_len == 0 && ops.bytes_parsed <= (sh.record_len ? sh.record_len : 5u));
        }
    }
    return 0;
}
