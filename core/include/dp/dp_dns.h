/* DNS service of an L4 application switch: a zone of names with IPv4 A
 * records, and the stateless answer to each UDP query (RFC 1035 section 4
 * wire format, EDNS0 per RFC 6891), as the ServerIron ADX answers DNS from
 * its virtual DNS servers.
 *
 * Zone: an open-addressing hash table in caller memory (DPDK lib/lpm API
 * shape: dp_dns_zone_memory_size + dp_dns_zone_create). Names are held in
 * wire form (length-prefixed labels ending with the root label), folded to
 * lowercase (ASCII A-Z only, RFC 4343 section 3), so lookups are
 * case-insensitive and a response repeats the question's own spelling.
 * Each name owns one RRset: zero or more IPv4 addresses with one TTL
 * (RFC 2181 section 5.2: every RR of an RRset has the same TTL).
 *
 * Answering never allocates and never reads outside the message or writes
 * outside the response buffer. What each query gets (checked in this order,
 * the first that applies wins):
 *
 *   check                                     status             sent
 *   fewer than 12 bytes (no header)           short_header       nothing: dns_malformed
 *   QR = 1 (a response)                       qr_set             nothing: dns_unsupported
 *   OPCODE != 0 (QUERY)                       notimp_opcode      NOTIMP, header only
 *   QDCOUNT != 1                              formerr_qdcount    FORMERR, header only
 *   question or a counted RR runs past the    truncated, label_too_long, name_too_long,
 *     end, bad label, pointer in the QNAME,     qname_pointer, bad_pointer, trailing_bytes:
 *     bad pointer elsewhere, bytes after        nothing: dns_malformed
 *     the last counted RR
 *   EDNS on and: two OPT RRs, an OPT owned    formerr_opt        FORMERR with the question
 *     by a name other than the root, or an
 *     OPT outside the additional section
 *   EDNS on and OPT version > 0               badvers            BADVERS (extended RCODE 16)
 *                                                                with the question and an OPT
 *   QCLASS != IN (1)                          refused_class      REFUSED with the question
 *   QTYPE AXFR (252) or IXFR (251)            notimp_qtype       NOTIMP with the question
 *   name not in the zone                      nxdomain           NXDOMAIN, AA
 *   name present, QTYPE not A (1) or ANY      nodata             NOERROR, AA, no answers
 *     (255), or an RRset of zero addresses
 *   name present, QTYPE A or ANY              noerror            NOERROR, AA, the A records,
 *                                                                or none and TC when they do
 *                                                                not fit the size limit
 *
 * Why these: a response (QR = 1) is never answered, or two servers could
 * answer each other forever. RFC 1035 section 4.1.1 defines NOTIMP for a
 * kind of query the server does not support (an unknown opcode, whose
 * message format it cannot know, hence header only) and FORMERR for a query
 * it cannot interpret; RFC 9619 section 4 requires FORMERR for QDCOUNT > 1
 * with OPCODE 0, and a server without DNS cookies (RFC 7873) answers
 * QDCOUNT 0 the same way. A message whose question cannot even be located
 * (truncated, inconsistent with its counts, a compression pointer where no
 * earlier name exists) is damage or an attack, not a query: it is dropped
 * and counted, never answered. RFC 6891 section 6.1.1 requires FORMERR for
 * more than one OPT and section 6.1.3 BADVERS for an unknown EDNS version.
 * REFUSED (RFC 1035: "refuses ... for policy reasons") for classes the box
 * does not serve (CH, HS, ANY); NOTIMP for zone transfers, which a UDP
 * answerer does not do.
 *
 * Header of every response: ID copied, QR 1, OPCODE copied (0 but for
 * notimp_opcode), AA 1 for noerror, nodata and nxdomain (else 0), TC as
 * above, RD copied, RA 0, Z/AD/CD 0, RCODE as in the table (BADVERS: 0 in
 * the header, 1 in the OPT's extended RCODE). QDCOUNT 1 when the question
 * is repeated (byte for byte, case preserved), 0 for header-only answers;
 * NSCOUNT 0; ARCOUNT 1 when an OPT is sent. Each answer RR is 16 bytes:
 * name C0 0C (a compression pointer to the question's name at offset 12),
 * TYPE A, CLASS IN, the RRset's TTL, RDLENGTH 4, the address. No SOA is
 * sent with NXDOMAIN/NODATA (RFC 2308 negative caching is not modelled).
 *
 * Size limit (RFC 1035 section 4.2.1, RFC 6891 section 6.2.5): 512 bytes;
 * with EDNS on and an OPT in the query, max(512, min(the OPT's UDP payload
 * size, the zone's edns_udp_size)). When header + question + all answers +
 * OPT exceed it, no answer is sent and TC is set (the RRset is left out
 * whole, RFC 2181 section 9; the client retries over TCP). The response
 * then also carries the OPT: it is never dropped for size. An OPT is sent
 * when EDNS is on and the query had exactly one well-formed OPT: owner root,
 * TYPE 41, CLASS the zone's edns_udp_size, TTL extended RCODE (1 for
 * BADVERS, else 0) << 24 | version 0 | the query's DO bit, RDLENGTH 0.
 * With EDNS off (edns_udp_size 0) an OPT RR is walked like any other RR and
 * otherwise ignored, as by a pre-EDNS server.
 *
 * Operation counts (dp_ops_t) per call, exactly:
 *   dp_dns_parse: bytes_parsed = 12 once the header is present (0 for
 *     short_header); + the question (QNAME + 4) once it is accepted whole;
 *     + for each further RR accepted whole, its owner name's wire bytes (up
 *     to and including a pointer) + 10 (RDATA is skipped, not read).
 *     qr_set, notimp_opcode and formerr_qdcount stop after the header (12).
 *     Nothing else; packets is not counted (the frame was, by dp_parse).
 *   zone lookup (in dp_dns_zone_lookup, dp_dns_zone_add and answers that
 *     look a name up: noerror, nodata, nxdomain): hashes 1; table_probes =
 *     slots read: the walk starts at slot hash & (slots - 1) and reads
 *     slots one by one (linear probing, wrapping) until the name or an
 *     empty slot; cache_lines = 1 for the first slot + 1 each time the walk
 *     enters a different 64-byte line than the previous slot's (slots are
 *     16 bytes, 4 a line, from a line-aligned base) + for each stored name
 *     compared (a used slot with the same 32-bit hash and the same length),
 *     the 64-byte lines of the name pool (line-aligned base; names stored
 *     back to back in insertion order) spanned by the bytes compared.
 *     Bytes compared (not a dp_ops_t counter) are reported in
 *     dp_dns_rrset_t.bytes_compared / dp_dns_result_t.bytes_compared: up to
 *     and including the first differing byte, all of them on a match.
 *   dp_dns_answer: the parse counts above; the lookup counts when a name is
 *     looked up; for noerror with the answers sent, + the 64-byte lines of
 *     the record pool (line-aligned base of 32-bit words) spanned by the
 *     RRset (its TTL word and its addresses; RRsets stored back to back in
 *     insertion order); bytes_written = 12 (header) + 16 per answer + 11
 *     when an OPT is sent; bytes_copied = the question (QNAME + 4) when it
 *     is repeated and resp != query (in place it is already there), else 0.
 *     A drop (nothing sent, including buffer_too_small) adds the parse and
 *     lookup counts only.
 *   dp_dns_answer_frame: dp_parse's counts (packets 1, Ethernet/IPv4/UDP
 *     headers, IPv4 header checksum verify); then, for a UDP datagram, the
 *     dp_dns_answer counts; for a response also bytes_written += the
 *     Ethernet (14, 18 tagged), IPv4 (20) and UDP (8) headers and the
 *     padding to 60 bytes; checksum_bytes += 20 (IPv4 header) + 8 (pseudo-
 *     header addresses) + the UDP length. In place, the question counts as
 *     copied only when the query's IPv4 header had options (the response's
 *     has none, so its DNS message starts earlier).
 *   dp_dns_zone_add: the lookup counts of the walk (EEXIST and ENOSPC
 *     included; EINVAL is refused before, counting nothing); on success
 *     also table_writes = 1 (the slot) + the number of addresses,
 *     bytes_copied = the name's wire length.
 *   dp_dns_name_to_wire, dp_dns_name_hash, dp_dns_zone_get_stats: nothing.
 */
#ifndef DP_DNS_H
#define DP_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "dp_drop.h"
#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_DNS_EINVAL (-1) /* bad argument (NULL, bad config, bad name, TTL > 2^31-1) */
#define DP_DNS_ENOSPC (-2) /* zone full: names, name bytes or records exhausted; nothing changed */
#define DP_DNS_EEXIST (-3) /* name already in the zone; nothing changed */
#define DP_DNS_ENOENT (-4) /* name not in the zone */

#define DP_DNS_HDR_LEN 12u          /* fixed message header (RFC 1035 section 4.1.1) */
#define DP_DNS_MAX_NAME 255u        /* wire bytes of a name, root label included (section 3.1) */
#define DP_DNS_MAX_LABEL 63u        /* bytes of one label (section 2.3.4) */
#define DP_DNS_UDP_LIMIT 512u       /* classic UDP message limit (section 4.2.1) */
#define DP_DNS_ANSWER_RR_LEN 16u    /* pointer(2) TYPE(2) CLASS(2) TTL(4) RDLENGTH(2) A(4) */
#define DP_DNS_OPT_RR_LEN 11u       /* root(1) TYPE(2) CLASS(2) TTL(4) RDLENGTH(2) */
#define DP_DNS_MAX_TTL 0x7FFFFFFFu  /* RFC 2181 section 8 */

#define DP_DNS_TYPE_A 1u
#define DP_DNS_TYPE_AAAA 28u
#define DP_DNS_TYPE_OPT 41u
#define DP_DNS_TYPE_IXFR 251u
#define DP_DNS_TYPE_AXFR 252u
#define DP_DNS_TYPE_ANY 255u
#define DP_DNS_CLASS_IN 1u

#define DP_DNS_RCODE_NOERROR 0u
#define DP_DNS_RCODE_FORMERR 1u
#define DP_DNS_RCODE_NXDOMAIN 3u
#define DP_DNS_RCODE_NOTIMP 4u
#define DP_DNS_RCODE_REFUSED 5u
#define DP_DNS_RCODE_BADVERS 16u /* extended: header 0, OPT extended RCODE 1 */

/* What happened to a query; dp_dns_status_name gives each a stable
 * snake_case name (part of the output format: never rename one). The
 * statuses before DP_DNS_SHORT_HEADER send a response; the others drop. */
typedef enum dp_dns_status {
    DP_DNS_NOERROR = 0,      /* A records sent (or TC: they did not fit) */
    DP_DNS_NODATA,           /* name present, no record of the QTYPE: NOERROR, no answers */
    DP_DNS_NXDOMAIN,         /* name not in the zone */
    DP_DNS_REFUSED_CLASS,    /* QCLASS other than IN */
    DP_DNS_NOTIMP_OPCODE,    /* OPCODE other than QUERY (header-only NOTIMP) */
    DP_DNS_NOTIMP_QTYPE,     /* AXFR/IXFR over UDP */
    DP_DNS_FORMERR_QDCOUNT,  /* QDCOUNT != 1 (header-only FORMERR) */
    DP_DNS_FORMERR_OPT,      /* EDNS: two OPT RRs, OPT not owned by the root, OPT outside additional */
    DP_DNS_BADVERS,          /* EDNS: OPT version > 0 */
    DP_DNS_SHORT_HEADER,     /* drop (dns_malformed): fewer than 12 bytes */
    DP_DNS_QR_SET,           /* drop (dns_unsupported): the message is a response */
    DP_DNS_TRUNCATED,        /* drop (dns_malformed): question or a counted RR past the end */
    DP_DNS_LABEL_TOO_LONG,   /* drop (dns_malformed): label length byte 0x40-0xBF (> 63, the
                                reserved label types 01 and 10) */
    DP_DNS_NAME_TOO_LONG,    /* drop (dns_malformed): name over 255 wire bytes */
    DP_DNS_QNAME_POINTER,    /* drop (dns_malformed): compression pointer in the question */
    DP_DNS_BAD_POINTER,      /* drop (dns_malformed): pointer into the header or not backwards */
    DP_DNS_TRAILING_BYTES,   /* drop (dns_malformed): bytes after the last counted RR */
    DP_DNS_NO_ROOM,          /* drop (buffer_too_small): response larger than the buffer */
    DP_DNS_STATUS__COUNT
} dp_dns_status_t;

/* Stable name, e.g. "nxdomain"; "unknown" when out of range. */
const char *dp_dns_status_name(dp_dns_status_t status);

/* The drop reason of a status: DP_OK for the answered ones,
 * DP_DROP_DNS_MALFORMED, DP_DROP_DNS_UNSUPPORTED (qr_set) or
 * DP_DROP_BUFFER_TOO_SMALL (no_room). */
dp_drop_reason_t dp_dns_status_drop(dp_dns_status_t status);

/* ---- names ---- */

/* Converts a dotted name ("www.Example.com", a trailing dot optional; "."
 * is the root) to lowercase wire form in wire[0..cap). No escapes: every
 * byte but '.' is label content. Returns 0 and *wire_len, or DP_DNS_EINVAL
 * for NULL, "", an empty label ("a..b", ".a"), a label over 63 bytes, a
 * name over 255 wire bytes, or cap too small (nothing promised in wire). */
int dp_dns_name_to_wire(const char *dotted, uint8_t *wire, size_t cap, size_t *wire_len);

/* The zone's hash of a wire-form name, over its bytes folded to lowercase
 * (A-Z only): FNV-1a 32-bit (offset basis 0x811C9DC5, prime 0x01000193)
 * finished with MurmurHash3's fmix32. Same value on every architecture.
 * Equal for names that differ only in ASCII case. */
uint32_t dp_dns_name_hash(const uint8_t *wire, size_t len);

/* ---- zone ---- */

typedef struct dp_dns_zone_config {
    uint32_t max_names;      /* names the zone can hold, 1..2^24 */
    uint32_t max_name_bytes; /* total wire bytes of all names, 1..2^28 */
    uint32_t max_records;    /* total A records of all names, 0..2^28 */
    uint32_t edns_udp_size;  /* EDNS0 (RFC 6891): 0 = off, else 512..65535, the UDP payload size
                                advertised and the largest response sent (1232 avoids IPv6
                                fragmentation; <= 1472 keeps a response in one Ethernet frame) */
} dp_dns_zone_config_t;

typedef struct dp_dns_zone dp_dns_zone_t;

/* One name's RRset, as found by a lookup. */
typedef struct dp_dns_rrset {
    uint32_t ttl;            /* seconds, <= DP_DNS_MAX_TTL */
    uint32_t count;          /* addresses, 0 for a name without A records */
    const uint32_t *addrs;   /* count IPv4 addresses, host order; valid while the zone lives */
    uint32_t bytes_compared; /* name bytes compared by the lookup (see the header comment) */
} dp_dns_rrset_t;

typedef struct dp_dns_zone_stats {
    uint32_t names;          /* names held */
    uint32_t name_bytes;     /* name pool bytes used */
    uint32_t records;        /* A records held */
    uint32_t slots;          /* hash table slots: the smallest power of two >= 2 * max_names
                                (load <= 1/2) */
    size_t memory_bytes;     /* dp_dns_zone_memory_size of the config */
} dp_dns_zone_stats_t;

/* Bytes to give dp_dns_zone_create (any alignment); 0 for a bad config. */
size_t dp_dns_zone_memory_size(const dp_dns_zone_config_t *cfg);

/* Builds an empty zone inside mem; NULL if mem is NULL, the config is bad
 * or mem_size < dp_dns_zone_memory_size(cfg). Freeing = releasing mem. */
dp_dns_zone_t *dp_dns_zone_create(void *mem, size_t mem_size, const dp_dns_zone_config_t *cfg);

/* Adds the wire-form name (any case; stored lowercase) with n_addrs IPv4
 * addresses (host order, may be 0) and one TTL. The name must be exactly
 * name_len bytes of labels of 1..63 bytes ending with the root label, at
 * most 255 bytes, no pointers. Returns 0, DP_DNS_EINVAL (bad name, addrs
 * NULL with n_addrs > 0, n_addrs > 65535, ttl > DP_DNS_MAX_TTL),
 * DP_DNS_EEXIST or DP_DNS_ENOSPC (both change nothing). An RRset is added
 * whole: there is no append, replace or delete (a configuration is loaded,
 * then only read). */
int dp_dns_zone_add(dp_dns_zone_t *zone, const uint8_t *name, size_t name_len, const uint32_t *addrs,
                    uint32_t n_addrs, uint32_t ttl, dp_ops_t *ops);

/* Looks up a wire-form name (any case; not validated beyond 1 <= name_len
 * <= 255). Returns 0 and fills *out, or DP_DNS_ENOENT (out->count 0,
 * out->bytes_compared set), or DP_DNS_EINVAL. Counts the lookup (see the
 * header comment), not the reading of out->addrs. The zone is only read:
 * any number of cores may look up and answer concurrently. */
int dp_dns_zone_lookup(const dp_dns_zone_t *zone, const uint8_t *name, size_t name_len, dp_dns_rrset_t *out,
                       dp_ops_t *ops);

void dp_dns_zone_get_stats(const dp_dns_zone_t *zone, dp_dns_zone_stats_t *st);

/* ---- messages ---- */

/* A parsed message: the header, the question and the OPT RR (offsets into
 * the message; nothing is copied). Fields past the header are set only
 * when the parse got that far (see dp_dns_parse). */
typedef struct dp_dns_query {
    uint16_t id;            /* header ID */
    uint16_t flags;         /* header word 2: QR, OPCODE, AA, TC, RD, RA, Z, AD, CD, RCODE */
    uint16_t qdcount;       /* header counts */
    uint16_t ancount;
    uint16_t nscount;
    uint16_t arcount;
    uint16_t qname_len;     /* wire bytes of the QNAME at offset 12, root label included */
    uint16_t qtype;
    uint16_t qclass;
    uint16_t opt_count;     /* OPT RRs (TYPE 41) in the additional section */
    uint8_t opt_misplaced;  /* an RR of TYPE 41 in the answer or authority section */
    uint8_t opt_owner_root; /* the first OPT's owner name is the root (a single 0 byte) */
    uint16_t opt_udp_size;  /* the first OPT's CLASS: the requester's UDP payload size */
    uint8_t opt_ext_rcode;  /* the first OPT's TTL bits 31-24 */
    uint8_t opt_version;    /* the first OPT's TTL bits 23-16 */
    uint16_t opt_flags;     /* the first OPT's TTL bits 15-0 (bit 15: DO) */
    uint32_t msg_len;       /* bytes of the message (all of them belong to it when accepted) */
} dp_dns_query_t;

/* Parses a DNS message (a UDP payload, len bytes) as far as deciding what
 * to do with it needs: the header; for a standard query (QR 0, OPCODE 0,
 * QDCOUNT 1) the question and then every RR the counts announce, walked
 * without following pointers, so that the whole message is accounted for.
 * Returns the status of the first check that fails (the statuses up to
 * DP_DNS_FORMERR_QDCOUNT and from DP_DNS_SHORT_HEADER on, in the order of
 * the table above), or DP_DNS_NOERROR: a well-formed standard query, whose
 * EDNS, class, type and name are for dp_dns_answer to judge. Never reads
 * msg[len] or beyond. Counts bytes_parsed as documented above. */
dp_dns_status_t dp_dns_parse(const uint8_t *msg, size_t len, dp_dns_query_t *q, dp_ops_t *ops);

/* What dp_dns_answer did. */
typedef struct dp_dns_result {
    dp_dns_status_t status;  /* the outcome (table above) */
    uint8_t rcode;           /* RCODE sent, extended (16 = BADVERS); 0 when nothing is sent */
    uint8_t truncated;       /* TC was set */
    uint8_t opt;             /* an OPT RR was sent */
    uint8_t aa;              /* AA was set */
    uint16_t answers;        /* A records sent */
    uint16_t qtype;          /* from the question, 0 when it was not parsed */
    uint16_t qclass;         /* from the question, 0 when it was not parsed */
    uint32_t udp_limit;      /* size limit applied to the response (512 or the EDNS size) */
    uint32_t bytes_compared; /* name bytes compared by the lookup */
} dp_dns_result_t;

/* Answers the DNS message query[0..query_len) into resp[0..resp_cap),
 * following the table in the header comment. resp may be query itself
 * (answered in place: the question is not copied) or overlap it in any
 * other way: the query is read whole before anything is written.
 * Returns DP_OK with *resp_len set when a response was written; else the
 * status's drop reason with nothing written (DP_DROP_BUFFER_TOO_SMALL when
 * the response would exceed resp_cap; the size limit is a protocol rule,
 * resp_cap only the buffer). zone and resp_len must be valid; res and ops
 * may be NULL. */
dp_drop_reason_t dp_dns_answer(const dp_dns_zone_t *zone, const uint8_t *query, size_t query_len,
                               uint8_t *resp, size_t resp_cap, size_t *resp_len, dp_dns_result_t *res,
                               dp_ops_t *ops);

/* Same for a whole Ethernet II frame (no FCS; at most one 802.1Q tag, kept)
 * carrying IPv4 and UDP: the frame is parsed with dp_parse (IPv4 checksum
 * verified, fragments refused; its drop reasons are returned as they are),
 * a non-UDP packet is DP_DROP_DNS_UNSUPPORTED, the UDP payload (UDP length
 * - 8 bytes) is answered, and the response frame is written to out: MACs,
 * IPv4 addresses and UDP ports swapped, IPv4 header rebuilt (IHL 5, TOS 0,
 * ID 0, DF, TTL 64, protocol 17, checksum), UDP length and checksum
 * (always computed, RFC 768), zero padding to 60 bytes. The destination
 * port is not checked (the caller dispatched the packet to its DNS
 * service); the query's UDP checksum is not verified (NIC offload is
 * assumed). out may be frame itself (in place) or must not overlap it.
 * No fragmentation: a response frame larger than cap is
 * DP_DROP_BUFFER_TOO_SMALL. A drop writes nothing, in place or not.
 * res may be NULL; when the frame is refused before its DNS message is
 * looked at (dp_parse's reasons, not UDP), res is zeroed with status
 * DP_DNS_STATUS__COUNT. */
dp_drop_reason_t dp_dns_answer_frame(const dp_dns_zone_t *zone, const uint8_t *frame, size_t len, uint8_t *out,
                                     size_t cap, size_t *out_len, dp_dns_result_t *res, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
