/* Stateless TCP SYN cookies (RFC 4987 section 3.6; D. J. Bernstein's
 * design, as in Linux net/ipv4/syncookies.c), and the SipHash-2-4 MAC they
 * use.
 *
 * A balancer under a SYN flood answers each SYN with a SYN-ACK whose
 * sequence number (the cookie) encodes what it would otherwise have stored,
 * and keeps nothing. The client's ACK returns cookie + 1 as its
 * acknowledgment number; the cookie is checked and the connection is
 * created only then. Cookie layout (most significant bit first):
 *
 *   | counter mod 2^C | MSS index (3 bits) | MAC (29 - C bits) |
 *
 *   C = counter_bits of the config (Bernstein uses 5, giving a 24-bit MAC).
 *   counter: a coarse clock the caller keeps (Linux: minutes; Bernstein:
 *     64 s periods); validation accepts cookies made at counter - age for
 *     age = 0..max_age and refuses every other age, including the future.
 *   MSS index: the largest entry of DP_SYNCOOKIE_MSS_TABLE not above the
 *     client's MSS (index 0, 536, when smaller or absent: RFC 1122 4.2.2.6
 *     default, and what Linux does).
 *   MAC: the low 29 - C bits of SipHash-2-4 (key = the config's 16-byte
 *     secret) over the 17-byte message
 *       client IPv4 (4) | VIP (4) | client port (2) | VIP port (2) |
 *       full 32-bit counter (4) | MSS index (1),   all big-endian.
 *     The MAC covers the counter and the MSS index, so changing any bit of
 *     a cookie or of the 4-tuple is caught up to the MAC's false-accept
 *     probability 2^-(29 - C) (Bernstein's original left the MSS bits
 *     unauthenticated), and a cookie 2^C periods old does not come back to
 *     life when its counter bits wrap.
 *
 * What is not done: the client's ISN is not in the MAC (Linux adds it and a
 * second per-tuple hash so the whole ISN is unpredictable, RFC 6528; here
 * the top C bits are the public counter, as in Bernstein's); TCP options
 * other than MSS (window scale, SACK, timestamps) are not encoded, so a
 * connection made from a cookie has none of them (Linux hides them in the
 * timestamp). No state is kept: the context is read-only after init, one
 * context can serve every core.
 *
 * SipHash: J.-P. Aumasson and D. J. Bernstein, "SipHash: a fast short-input
 * PRF", INDOCRYPT 2012 (https://131002.net/siphash/siphash.pdf); checked
 * against the paper's Appendix A and the reference implementation's 64
 * test vectors. Words are assembled byte by byte (little-endian, as the
 * paper specifies), so the result is the same on big-endian mips64. */
#ifndef DP_SYNCOOKIE_H
#define DP_SYNCOOKIE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"
#include "dp_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative). The model counts every check refusal
 * (DP_SYNCOOKIE_EAGE, DP_SYNCOOKIE_EMAC) as DP_DROP_SYN_COOKIE_INVALID. */
#define DP_SYNCOOKIE_EINVAL (-1)  /* bad config or argument; p does not describe the frame */
#define DP_SYNCOOKIE_EAGE (-2)    /* cookie's counter is older than max_age periods, or in the future */
#define DP_SYNCOOKIE_EMAC (-3)    /* counter in the window, MAC does not match: forged or corrupted */
#define DP_SYNCOOKIE_ENOTSYN (-4) /* synack: not a TCP segment with SYN set and ACK, RST, FIN clear */
#define DP_SYNCOOKIE_ENOTACK (-5) /* check_ack: not a TCP segment with ACK set and SYN, RST clear */
#define DP_SYNCOOKIE_ENOSPC (-6)  /* synack: cap < max(60, l3_offset + 44) */

/* MSS classes, ascending (3 bits). 536, 1300, 1440 and 1460 are Linux's
 * table, from S. Alcock and R. Nelson, "An Analysis of TCP Maximum Segment
 * Sizes" (2011): 1460 is the most common, 1300-1349 15-20%, 536 the
 * RFC 1122 default. Assumed additions for the extra bits: 1220 (IPv6
 * minimum MTU 1280 less 60), 1360 and 1400 (VPN/GRE/IPsec paths), 8960
 * (9000-byte jumbo frames). */
#define DP_SYNCOOKIE_MSS_TABLE {536u, 1220u, 1300u, 1360u, 1400u, 1440u, 1460u, 8960u}
#define DP_SYNCOOKIE_MSS_CLASSES 8u
#define DP_SYNCOOKIE_MSS_BITS 3u
#define DP_SYNCOOKIE_MAC_MSG_LEN 17u /* bytes MACed per cookie */

typedef struct dp_syncookie_config {
    uint8_t key[16];      /* SipHash secret: random, kept by the balancer, never sent */
    uint8_t counter_bits; /* C: counter bits in the cookie, 1..21 (MAC = 29 - C bits, 28..8) */
    uint8_t max_age;      /* oldest accepted age in counter periods, < 2^C (Linux: 1) */
} dp_syncookie_config_t;

/* A context: the key as SipHash words and the layout. Caller memory (no
 * table: a plain struct); read-only after dp_syncookie_init. */
typedef struct dp_syncookie {
    uint64_t k0;          /* key bytes 0..7, little-endian */
    uint64_t k1;          /* key bytes 8..15, little-endian */
    uint8_t counter_bits; /* C */
    uint8_t mac_bits;     /* 29 - C */
    uint8_t max_age;      /* from the config */
    uint8_t pad[5];       /* zero */
} dp_syncookie_t;

/* The connection a cookie is for, in the SYN's direction (host order). */
typedef struct dp_syncookie_tuple {
    uint32_t client_ip;   /* SYN source address */
    uint32_t vip;         /* SYN destination address (the virtual service) */
    uint16_t client_port; /* SYN source port */
    uint16_t vip_port;    /* SYN destination port */
} dp_syncookie_tuple_t;

/* 0, or DP_SYNCOOKIE_EINVAL when counter_bits is outside 1..21 or max_age
 * >= 2^counter_bits (ages would be ambiguous). */
int dp_syncookie_init(dp_syncookie_t *sc, const dp_syncookie_config_t *cfg);

/* SipHash-2-4 of msg[0..len) under the 16-byte key. Adds hashes 1,
 * crypto_bytes len. */
uint64_t dp_syncookie_siphash24(const uint8_t key[16], const void *msg, size_t len, dp_ops_t *ops);

/* Index of the MSS class for an announced MSS (0 when mss < 536; mss 0
 * means "no MSS option"), and the MSS of a class (0 when out of range). */
unsigned dp_syncookie_mss_index(uint16_t mss);
uint16_t dp_syncookie_mss_of(unsigned index);

/* The cookie (the SYN-ACK's sequence number) for a SYN of tuple t, MSS
 * mss (0: none announced), at counter. Adds hashes 1, crypto_bytes 17. */
uint32_t dp_syncookie_make(const dp_syncookie_t *sc, const dp_syncookie_tuple_t *t, uint16_t mss,
                           uint32_t counter, dp_ops_t *ops);

/* Validates cookie (the ACK's acknowledgment number - 1) for tuple t (the
 * ACK's own source/destination, same direction as the SYN) at counter.
 * Returns the MSS of the encoded class (> 0), or DP_SYNCOOKIE_EAGE (no
 * hash computed: nothing added) or DP_SYNCOOKIE_EMAC (hashes 1,
 * crypto_bytes 17). */
int dp_syncookie_check(const dp_syncookie_t *sc, const dp_syncookie_tuple_t *t, uint32_t cookie,
                       uint32_t counter, dp_ops_t *ops);

/* The check on a parsed frame: ACK set and SYN, RST clear (else
 * DP_SYNCOOKIE_ENOTACK), cookie = acknowledgment number - 1. p must be
 * dp_parse's result for frame (offsets re-checked: DP_SYNCOOKIE_EINVAL).
 * Adds what dp_syncookie_check adds. */
int dp_syncookie_check_ack(const dp_syncookie_t *sc, const uint8_t *frame, size_t len, const dp_parsed_t *p,
                           uint32_t counter, dp_ops_t *ops);

/* What the SYN-ACK announces. */
typedef struct dp_syncookie_reply {
    uint16_t mss;    /* the balancer's own MSS, sent in the MSS option */
    uint16_t window; /* TCP window (unscaled: no window-scale option is sent) */
    uint8_t ttl;     /* IPv4 TTL */
    uint8_t pad[3];  /* set to zero; ignored */
} dp_syncookie_reply_t;

/* Turns the SYN in frame[0..len) (parsed into p) into its SYN-ACK in place,
 * in a buffer of cap >= len bytes: MACs swapped; VLAN tag and EtherType
 * kept; IPv4 header rebuilt without options (IHL 5, TOS 0, total length
 * 44, ID 0, DF, r->ttl, protocol 6, addresses swapped, checksum computed);
 * TCP: ports swapped, seq = cookie, ack = SYN seq + 1, data offset 6,
 * flags SYN|ACK, window r->window, urgent 0, the option MSS r->mss (4
 * bytes), checksum computed; SYN payload dropped; zero padding to 60
 * bytes. *out_len = max(60, l3_offset + 44). p is updated to the reply.
 * The client's MSS comes from the SYN's MSS option: options are walked
 * until End of Option List or the first malformed one (length < 2 or past
 * the header); the last MSS option of length 4 and nonzero value seen
 * counts (as Linux's tcp_parse_options); none gives the class of 536.
 * Returns the MSS class encoded (> 0), or DP_SYNCOOKIE_EINVAL,
 * DP_SYNCOOKIE_ENOTSYN, DP_SYNCOOKIE_ENOSPC without writing. Adds:
 * bytes_parsed doff*4 - 20 (the SYN's options, scanned in full), hashes 1,
 * crypto_bytes 17, bytes_written 12 + 44 + padding (MACs, IPv4 and TCP
 * headers, zero padding), checksum_bytes 52 (IPv4 header 20, pseudo-header
 * addresses 8, TCP segment 24). The model may instead build the reply with
 * dp_build from the same fields; this is the zero-copy path. */
int dp_syncookie_synack(const dp_syncookie_t *sc, uint8_t *frame, size_t len, size_t cap, dp_parsed_t *p,
                        uint32_t counter, const dp_syncookie_reply_t *r, size_t *out_len, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
