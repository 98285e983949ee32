/* Cookie persistence of an L7 web switch, the three ways the NCTU paper
 * (seed 003, section 5.6) lists and the modes of HAProxy's `cookie`
 * directive (HAProxy configuration manual, 4.2 "cookie"):
 *   - pre-arranged: servers set their own cookie (Server=A) and a rule maps
 *     its value to a server: dp_cookie_find on the request;
 *   - insert (HAProxy `insert`): the switch adds
 *     "Set-Cookie: <name>=<value>; path=/" to the response head, as HAProxy
 *     writes it: dp_cookie_insert;
 *   - learn (Nortel, 3Com; HAProxy `stick store-response res.cook(<name>)`):
 *     the value a server sets is remembered with the server:
 *     dp_cookie_learn;
 *   - HAProxy's `rewrite` (the server's cookie value replaced by the
 *     server's id) and `prefix` (the id and '~' put before the server's
 *     value): dp_cookie_rewrite, dp_cookie_prefix.
 * Edits are described, not done in place: a dp_cookie_edit_t says which
 * bytes of the head are replaced by which; dp_cookie_apply does it on a
 * contiguous head, and dp_splice_edit_frame on the TCP segment holding it,
 * where the length change shifts the server-to-client sequence space.
 *
 * Cookie headers are read as RFC 6265 5.4 writes them ("n1=v1; n2=v2"),
 * tolerating white space around names and values and around ';' as
 * HAProxy does; names compare case-sensitively (RFC 6265 5.3 keeps the
 * name as sent). Not done: HAProxy's `indirect` (removing the cookie from
 * the request), `nocache` (Cache-control), removing a server cookie of the
 * same name in insert mode, stripping the prefix from requests in prefix
 * mode, quoted values, Set-Cookie2. */
#ifndef DP_COOKIE_H
#define DP_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_http.h"
#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_COOKIE_EINVAL (-1)    /* bad argument; name empty, not a token, or name/value over 64 bytes */
#define DP_COOKIE_ENOTFOUND (-2) /* no cookie of that name */
#define DP_COOKIE_ENOSPC (-3)    /* the edited head does not fit the buffer */

#define DP_COOKIE_MAX_NAME 64u  /* longest name or value handled */

/* Replace head[off .. off+del) by ins[0..ins_len). */
typedef struct dp_cookie_edit {
    uint32_t off;                 /* from the start of the head */
    uint32_t del;                 /* bytes removed */
    uint32_t ins_len;             /* bytes inserted */
    uint8_t ins[2 * DP_COOKIE_MAX_NAME + 32]; /* the inserted bytes */
} dp_cookie_edit_t;

/* Finds the first cookie called name in a Cookie header value
 * v[0..len) ("a=1; b=2"). Returns 0 and the value's offset and length in
 * v, or DP_COOKIE_ENOTFOUND. Adds bytes_parsed = bytes of v walked (to the
 * end of the found value, else len). */
int dp_cookie_find(const uint8_t *v, uint32_t len, const char *name, uint32_t *val_off, uint32_t *val_len,
                   dp_ops_t *ops);

/* The cookie of a Set-Cookie value s[0..len) ("n=v; path=/"): name and
 * value spans relative to s. 0, or DP_COOKIE_ENOTFOUND when there is no
 * '=' before the first ';' or the name is empty. Adds bytes_parsed =
 * bytes walked (to the end of the value). */
int dp_cookie_setcookie(const uint8_t *s, uint32_t len, uint32_t *name_off, uint32_t *name_len, uint32_t *val_off,
                        uint32_t *val_len, dp_ops_t *ops);

/* Learn: the value of the first Set-Cookie of a parsed response (status
 * DP_HTTP_DONE) whose cookie is called name; its span in the head. Adds
 * what dp_cookie_setcookie adds for each Set-Cookie examined. */
int dp_cookie_learn(const dp_http_t *resp, const char *name, dp_http_span_t *value, dp_ops_t *ops);

/* Insert: the edit adding "Set-Cookie: <name>=<value>; path=/\r\n" before
 * the response's final empty line. Adds bytes_written = ins_len. */
int dp_cookie_insert(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                     dp_ops_t *ops);

/* Rewrite: the edit replacing the value of the server's cookie name by
 * value. Prefix: the edit inserting value + "~" before it. Both add what
 * dp_cookie_learn adds, and bytes_written = ins_len. */
int dp_cookie_rewrite(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                      dp_ops_t *ops);
int dp_cookie_prefix(const dp_http_t *resp, const char *name, const char *value, dp_cookie_edit_t *e,
                     dp_ops_t *ops);

/* Applies e to head[0..*len) in a buffer of cap bytes; *len becomes the
 * new length. DP_COOKIE_ENOSPC (nothing changed) when it does not fit,
 * DP_COOKIE_EINVAL when off + del > *len. Adds bytes_copied = ins_len +
 * bytes moved (the *len - off - del bytes after the edit, when the length
 * changes). */
int dp_cookie_apply(uint8_t *head, uint32_t *len, uint32_t cap, const dp_cookie_edit_t *e, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
