/* TLS ClientHello inspection for SSL session-ID persistence: the session
 * ID (and the server name) of the first record a client sends on port 443,
 * without decrypting anything.
 *
 * Structure (RFC 5246 6.2.1 and 7.4.1.2 for TLS 1.0-1.2, RFC 8446 4.1.2
 * and 4.2.1 for TLS 1.3):
 *   record:    type 22 (handshake) | version 3.x (2) | length (2, <= 2^14)
 *   handshake: type 1 (client_hello) | length (3)
 *   hello:     client_version (2) | random (32) | session_id <0..32> |
 *              cipher_suites <2..2^16-2> (even) | compression_methods
 *              <1..2^8-1> | [extensions <0..2^16-1>: type (2) | length (2) |
 *              data]
 * TLS 1.3 keeps the field as legacy_session_id (in middlebox compatibility
 * mode a fresh random 32 bytes per hello, so session-ID persistence does
 * not hold across TLS 1.3 connections; resumption there uses PSK
 * identities, not parsed here); the negotiable version is read from the
 * supported_versions extension (43). The server_name extension (0, RFC
 * 6066 3) gives the first host_name.
 *
 * Every length field is checked against its container: the record length
 * against 2^14 and the bytes given, the handshake length against the
 * record (a ClientHello spread over several records is refused:
 * DP_TLS_EFRAGMENTED), each vector against what remains of the hello,
 * each extension against the extensions block, which must end exactly at
 * the hello's end. SSLv2-compatible hellos (first byte with the top bit
 * set) are DP_TLS_ENOTHANDSHAKE. The model counts every refusal as
 * DP_DROP_TLS_MALFORMED (or forwards without persistence, as its profile
 * says). */
#ifndef DP_TLS_H
#define DP_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_TLS_OK 0
#define DP_TLS_MORE 1                /* the record is not all there yet */
#define DP_TLS_EINVAL (-1)           /* out NULL, or data NULL with len > 0 */
#define DP_TLS_ENOTHANDSHAKE (-2)    /* record type is not 22, or version major is not 3 */
#define DP_TLS_ENOTHELLO (-3)        /* handshake message is not a ClientHello (type 1) */
#define DP_TLS_EMALFORMED (-4)       /* a length field disagrees with its container */
#define DP_TLS_EFRAGMENTED (-5)      /* the ClientHello continues in another record */
#define DP_TLS_ENOTSERVERHELLO (-6)  /* dp_tls_parse_server_hello: the first handshake message is not a ServerHello (2) */

#define DP_TLS_MAX_RECORD 16384u /* RFC 5246 6.2.1: TLSPlaintext.length <= 2^14 */
#define DP_TLS_MAX_SESSION_ID 32u

typedef struct dp_tls_hello {
    uint16_t record_version;  /* record layer version, e.g. 0x0301 */
    uint16_t client_version;  /* ClientHello.client_version (legacy_version in 1.3) */
    uint16_t max_version;     /* highest of supported_versions, else client_version */
    uint16_t cipher_suites;   /* number of cipher suites offered */
    uint16_t extensions;      /* number of extensions */
    uint16_t sni_off;         /* offset of the first host_name from the record start (0: none) */
    uint16_t sni_len;         /* its length */
    uint8_t session_id_len;   /* 0..32 */
    uint8_t pad;              /* zero */
    uint8_t session_id[DP_TLS_MAX_SESSION_ID]; /* session_id_len bytes, rest zero */
    uint32_t record_len;      /* bytes of the record, header included (5 + length) */
} dp_tls_hello_t;

/* Parses the first record of a TLS connection in data[0..len) (it may
 * hold more records; only the first is read). Returns DP_TLS_OK with *out
 * filled, DP_TLS_MORE when fewer than 5 + record length bytes are there
 * (or fewer than 5; *out then has record_len when known, else 0), or an
 * error. Adds bytes_parsed = bytes walked: on DP_TLS_OK the whole record
 * (5 + length); on an error, the bytes up to the end of the last field
 * accepted (0 when the record header is refused, 5 after it, 43 after
 * client_version and random, then after the session ID, the cipher
 * suites, the compression methods, the extensions length, and each whole
 * extension); 0 on DP_TLS_MORE. */
int dp_tls_parse_client_hello(const uint8_t *data, size_t len, dp_tls_hello_t *out, dp_ops_t *ops);

/* The server's answer, for persistence on the session ID the server
 * chose (a full handshake gives the client a new one, which its next
 * ClientHello offers; HAProxy's documented SSL-ID affinity stores it with
 * "stick store-response payload_lv(43,1) if serverhello"):
 *   handshake: type 2 (server_hello) | length (3)
 *   hello:     server_version (2) | random (32) | session_id <0..32> |
 *              cipher_suite (2) | compression_method (1) |
 *              [extensions <0..2^16-1>: type (2) | length (2) | data]
 * (RFC 5246 7.4.1.3; RFC 8446 4.1.3 names them legacy_version,
 * legacy_session_id_echo, legacy_compression_method, and the
 * supported_versions extension (43) holds the 2-byte selected_version).
 * The ServerHello may be followed by other handshake messages in the same
 * record (Certificate, ServerHelloDone): allowed, not read. */
typedef struct dp_tls_server_hello {
    uint16_t record_version;   /* record layer version */
    uint16_t server_version;   /* ServerHello.server_version (legacy_version in 1.3) */
    uint16_t selected_version; /* supported_versions' selected_version, else server_version */
    uint16_t cipher_suite;     /* the suite chosen */
    uint8_t session_id_len;    /* 0..32 */
    uint8_t pad[3];            /* zero */
    uint8_t session_id[DP_TLS_MAX_SESSION_ID]; /* session_id_len bytes, rest zero */
    uint32_t record_len;       /* bytes of the record, header included (5 + length) */
} dp_tls_server_hello_t;

/* Parses the first record a TLS server sends, as
 * dp_tls_parse_client_hello does the client's: DP_TLS_OK, DP_TLS_MORE
 * (record not all there; record_len set when known), DP_TLS_EINVAL,
 * DP_TLS_ENOTHANDSHAKE, DP_TLS_ENOTSERVERHELLO, DP_TLS_EFRAGMENTED (the
 * ServerHello is longer than the record), DP_TLS_EMALFORMED (a length
 * disagrees with its container; the extensions must end exactly at the
 * ServerHello's end; supported_versions must hold 2 bytes). On an error
 * only record_len is reported. Adds bytes_parsed = bytes walked: on
 * DP_TLS_OK to the end of the ServerHello (9 + its length), on an error
 * up to the end of the last field accepted (as the ClientHello parser),
 * 0 on DP_TLS_MORE. */
int dp_tls_parse_server_hello(const uint8_t *data, size_t len, dp_tls_server_hello_t *out, dp_ops_t *ops);

const char *dp_tls_status_name(int rc); /* "ok", "more", "malformed", ...; "unknown" */

#ifdef __cplusplus
}
#endif
#endif
