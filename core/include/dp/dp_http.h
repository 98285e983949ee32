/* HTTP/1.0 and HTTP/1.1 message heads (RFC 7230, RFC 7231), parsed
 * incrementally for an L7 web switch: a request's line, Host, Cookie,
 * Connection and Content-Length; a response's status line, Content-Length,
 * Connection and Set-Cookie headers.
 *
 * The head is copied, as it arrives, into a buffer the caller hands in (the
 * switch must keep the request anyway until delayed binding has chosen a
 * server and opened the server-side connection; HAProxy likewise keeps the
 * whole head in one buffer of tune.bufsize). Every decision depends only
 * on the bytes seen so far, as if they were taken one at a time (they are
 * taken in runs up to the next LF, the buffer's end or the line limit),
 * so a head split
 * across segments at ANY byte boundary gives the same result, the same
 * error at the same byte, and the same operation counts as the head fed in
 * one piece.
 *
 * Lines end with CRLF or a bare LF (RFC 7230 3.5 lets a recipient accept a
 * bare LF; HAProxy does). A CR not followed by LF, a NUL or other control
 * byte in a line (HTAB excepted in header values), a folded header line
 * (obs-fold, RFC 7230 3.2.4: rejected, which the RFC allows), white space
 * between a header name and its colon, an invalid method token, a
 * request-target with spaces or controls, a version other than HTTP/1.0 or
 * HTTP/1.1, two Host headers (RFC 7230 5.4), a Content-Length that is not
 * digits or that differs between two headers (RFC 7230 3.3.2) are
 * DP_HTTP_EMALFORMED, with the exact cause in dp_http_t.error.
 *
 * Limits (all named errors): a line (request/status line or one header,
 * terminator included) longer than max_line is DP_HTTP_ELINE (Apache's
 * LimitRequestLine/LimitRequestFieldSize, default 8190); more than
 * max_headers header lines is DP_HTTP_EHEADERS (HAProxy tune.http.maxhdr,
 * default 101); a head longer than the buffer is DP_HTTP_EHEAD. The model
 * counts EMALFORMED as DP_DROP_HTTP_MALFORMED and ELINE, EHEADERS, EHEAD
 * as DP_DROP_HTTP_TOO_LARGE.
 *
 * What is not done: chunked bodies are only flagged (DP_HTTP_F_CHUNKED;
 * the body is then the caller's to frame), obs-fold is not unfolded,
 * absolute-form targets are kept as given (dp_http_path skips the scheme
 * and authority as HAProxy's `path` fetch does), trailers, HTTP/2. */
#ifndef DP_HTTP_H
#define DP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Return values of dp_http_feed (>= 0) and errors (< 0). */
#define DP_HTTP_MORE 0            /* head not complete yet: feed more bytes */
#define DP_HTTP_DONE 1            /* head complete (blank line seen) */
#define DP_HTTP_EINVAL (-1)       /* bad config or argument */
#define DP_HTTP_EMALFORMED (-2)   /* syntax error; cause in dp_http_t.error */
#define DP_HTTP_ELINE (-3)        /* a line longer than max_line */
#define DP_HTTP_EHEADERS (-4)     /* more than max_headers header lines */
#define DP_HTTP_EHEAD (-5)        /* head longer than the buffer */

/* Exact cause of DP_HTTP_EMALFORMED (dp_http_t.error). */
typedef enum dp_http_error {
    DP_HTTP_ERR_NONE = 0,
    DP_HTTP_ERR_BAD_CR,          /* CR not followed by LF */
    DP_HTTP_ERR_CTL,             /* NUL or control byte in a line */
    DP_HTTP_ERR_BAD_METHOD,      /* method is not a non-empty token followed by one SP */
    DP_HTTP_ERR_BAD_TARGET,      /* request-target empty, or not followed by one SP */
    DP_HTTP_ERR_BAD_VERSION,     /* not "HTTP/1.0" or "HTTP/1.1" */
    DP_HTTP_ERR_BAD_STATUS,      /* status line: not 3 digits after one SP, or no SP after them */
    DP_HTTP_ERR_FOLDED,          /* header line starting with SP or HTAB (obs-fold) */
    DP_HTTP_ERR_BAD_HEADER,      /* header name not a token, or no colon right after it */
    DP_HTTP_ERR_DUP_HOST,        /* a second Host header */
    DP_HTTP_ERR_BAD_LENGTH,      /* Content-Length not 1*DIGIT, over 2^53, or two different values */
    DP_HTTP_ERR__COUNT
} dp_http_error_t;

/* Flags (dp_http_t.flags). */
#define DP_HTTP_F_RESPONSE 0x01u      /* parsing a response (set by dp_http_init) */
#define DP_HTTP_F_HAS_LENGTH 0x02u    /* a Content-Length header was seen */
#define DP_HTTP_F_CHUNKED 0x04u       /* Transfer-Encoding present (its body is the caller's to frame) */
#define DP_HTTP_F_CONN_CLOSE 0x08u    /* Connection: has the token "close" */
#define DP_HTTP_F_CONN_KEEPALIVE 0x10u /* Connection: has the token "keep-alive" */
#define DP_HTTP_F_KEEPALIVE 0x20u     /* persistent (RFC 7230 6.3): 1.1 without close, or 1.0 with keep-alive */
#define DP_HTTP_F_STARTED 0x40u       /* the request/status line has been read */
#define DP_HTTP_F_HAS_HOST 0x80u      /* a Host header was seen (its value may be empty) */

/* Most Set-Cookie headers of a response remembered (later ones are counted). */
#define DP_HTTP_MAX_SETCOOKIE 8u

/* Methods recognised (others are a valid token: DP_HTTP_M_OTHER). */
typedef enum dp_http_method {
    DP_HTTP_M_NONE = 0,
    DP_HTTP_M_GET,
    DP_HTTP_M_HEAD,
    DP_HTTP_M_POST,
    DP_HTTP_M_PUT,
    DP_HTTP_M_DELETE,
    DP_HTTP_M_OPTIONS,
    DP_HTTP_M_OTHER
} dp_http_method_t;

/* A byte range of the head buffer. */
typedef struct dp_http_span {
    uint32_t off; /* first byte, from the start of the head */
    uint32_t len; /* bytes */
} dp_http_span_t;

/* Limits. */
typedef struct dp_http_config {
    uint32_t max_line;    /* longest line, terminator included (8190 as Apache; >= 16) */
    uint32_t max_headers; /* most header lines (101 as HAProxy) */
} dp_http_config_t;

/* Parser state and result for one message head. Caller memory: this
 * struct plus the head buffer given to dp_http_init. */
typedef struct dp_http {
    uint8_t *buf;            /* head buffer (caller's) */
    uint32_t cap;            /* its size: the longest head accepted */
    uint32_t len;            /* head bytes taken so far */
    uint32_t line_start;     /* offset of the line being read */
    uint32_t max_line;       /* from the config */
    uint32_t max_headers;    /* from the config */
    uint32_t headers;        /* header lines seen */
    int32_t status;          /* DP_HTTP_MORE, DP_HTTP_DONE or the error: sticky */
    uint16_t flags;          /* DP_HTTP_F_* */
    uint8_t error;           /* dp_http_error_t when status is DP_HTTP_EMALFORMED */
    uint8_t method;          /* dp_http_method_t (requests) */
    uint8_t version_minor;   /* 0 or 1: HTTP/1.x */
    uint8_t pad[3];          /* zero */
    uint16_t status_code;    /* responses: 100..999 */
    uint16_t setcookies;     /* Set-Cookie headers seen (responses), may exceed DP_HTTP_MAX_SETCOOKIE */
    dp_http_span_t method_s; /* request method token */
    dp_http_span_t target;   /* request-target as sent */
    dp_http_span_t host;     /* Host value, OWS trimmed (len 0: none) */
    dp_http_span_t cookie;   /* first Cookie header's value, OWS trimmed (len 0: none) */
    dp_http_span_t setcookie[DP_HTTP_MAX_SETCOOKIE]; /* Set-Cookie values, OWS trimmed */
    uint32_t blank_line;     /* offset of the final empty line (where headers can be inserted) */
    uint32_t cookies;        /* Cookie headers seen (requests) */
    uint64_t content_length; /* Content-Length when DP_HTTP_F_HAS_LENGTH */
} dp_http_t;

/* Prepares p to parse a request (response = 0) or a response (1) into
 * buf[0..cap). Returns 0, or DP_HTTP_EINVAL (NULL pointer, cap 0,
 * max_line < 16, max_headers 0). Adds nothing to any counter. */
int dp_http_init(dp_http_t *p, const dp_http_config_t *cfg, uint8_t *buf, uint32_t cap, int response);

/* Takes bytes data[0..len) of the head. Stops after the byte that
 * completes the head (the LF of the empty line) or after the byte that
 * makes an error; *used (may be NULL) is the bytes taken, so the rest of
 * data is the body or the next pipelined message. Returns DP_HTTP_MORE,
 * DP_HTTP_DONE or an error; once DONE or an error, returns it again and
 * takes nothing. Adds bytes_parsed and bytes_copied += bytes taken (each
 * head byte is scanned once and copied once into the buffer; a byte that
 * overflows the buffer is scanned but not copied). */
int dp_http_feed(dp_http_t *p, const uint8_t *data, size_t len, size_t *used, dp_ops_t *ops);

/* HAProxy's `path` fetch: the request-target from its first '/' up to,
 * not including, the first '?' (origin form), after "scheme://authority"
 * in the absolute form; empty when there is no '/' (e.g. "*"). Valid once
 * DONE. Adds bytes_parsed += bytes of the target scanned (the scheme and
 * authority skipped and the path up to '?' or its end). */
dp_http_span_t dp_http_path(const dp_http_t *p, dp_ops_t *ops);

/* Stable names: "malformed", "line_too_long", ... and the errors'
 * "bad_method", .... "unknown" when out of range. */
const char *dp_http_status_name(int status);
const char *dp_http_error_name(dp_http_error_t e);

#ifdef __cplusplus
}
#endif
#endif
