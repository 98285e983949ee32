/* Ethernet / IPv4 / UDP / TCP parse, build and forward-path rewrites.
 *
 * Parsers never read past the bytes given and never trust a length field
 * before checking it against what is present. Every rejection returns a
 * dp_drop_reason_t. Multi-byte fields in dp_parsed_t are host order. */
#ifndef DP_PKT_H
#define DP_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "dp_drop.h"
#include "dp_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_ETH_HDR_LEN 14u
#define DP_VLAN_TAG_LEN 4u
#define DP_IP4_MIN_HDR_LEN 20u
#define DP_UDP_HDR_LEN 8u
#define DP_TCP_MIN_HDR_LEN 20u

#define DP_ETHERTYPE_IPV4 0x0800u
#define DP_ETHERTYPE_VLAN 0x8100u
#define DP_IPPROTO_TCP 6u
#define DP_IPPROTO_UDP 17u

/* Parse result: offsets are from the start of the frame. */
typedef struct dp_parsed {
    uint16_t ethertype;    /* inner EtherType after at most one VLAN tag */
    uint16_t vlan_tci;     /* 0 when untagged */
    uint16_t l3_offset;    /* start of the IPv4 header */
    uint16_t l4_offset;    /* start of the UDP/TCP header (l3_offset + IHL*4) */
    uint16_t payload_offset; /* first byte after the L4 header */
    uint16_t payload_len;  /* L4 payload bytes, from IP total length */
    uint16_t ip_total_len; /* IPv4 total length field */
    uint8_t ip_ihl;        /* header length in 32-bit words */
    uint8_t ip_ttl;
    uint8_t ip_proto;
    uint8_t tcp_flags;     /* 0 unless TCP */
    uint32_t src_ip;
    uint32_t dst_ip;
    uint16_t src_port;     /* 0 unless UDP/TCP */
    uint16_t dst_port;
} dp_parsed_t;

/* Options for dp_parse. */
typedef struct dp_parse_opts {
    int verify_ip_checksum; /* nonzero: reject a bad IPv4 header checksum */
    int allow_fragments;    /* nonzero: accept fragments (L4 is then not parsed
                               for non-first fragments) */
} dp_parse_opts_t;

/* Parse an Ethernet II frame (no preamble, no FCS) carrying IPv4 and,
 * optionally, UDP or TCP. Other IP protocols parse to L3 only (l4_offset
 * set, ports 0). opts may be NULL (checksum verified, fragments refused).
 * Checks run in wire order and the first failure is returned: L2 length,
 * EtherType, 20 bytes of IPv4, version, IHL, IHL*4 bytes present, total
 * length, checksum, fragment, L4. Bytes after the IPv4 total length
 * (Ethernet padding) are ignored. In an allowed first fragment (MF set,
 * offset 0) the UDP length may exceed the fragment's payload.
 * Adds to ops->packets, ops->bytes_parsed (header bytes walked, up to where
 * parsing stopped) and ops->checksum_bytes. Headers are counted whole, once
 * their bytes are known to be present: the Ethernet header (14, 18 with the
 * tag; 14 when the tag is cut short), the fixed IPv4 header (20), its
 * options (IHL*4 - 20), and the UDP/TCP header only when it is accepted.
 * checksum_bytes is IHL*4 when the header checksum is verified (only once
 * the total length has passed), else 0. */
dp_drop_reason_t dp_parse(const uint8_t *frame, size_t len, const dp_parse_opts_t *opts,
                          dp_parsed_t *out, dp_ops_t *ops);

/* What to build: an Ethernet + IPv4 + UDP or TCP packet. */
typedef struct dp_build_spec {
    uint8_t dst_mac[6];
    uint8_t src_mac[6];
    uint32_t src_ip;
    uint32_t dst_ip;
    uint8_t ttl;
    uint8_t ip_proto;       /* DP_IPPROTO_UDP or DP_IPPROTO_TCP */
    uint16_t ip_id;
    uint16_t src_port;
    uint16_t dst_port;
    uint32_t tcp_seq;       /* TCP only */
    uint32_t tcp_ack;       /* TCP only */
    uint8_t tcp_flags;      /* TCP only */
    const uint8_t *payload; /* may be NULL: payload bytes are then zero */
    uint16_t payload_len;
    int l4_checksum;        /* nonzero: compute the UDP/TCP checksum */
} dp_build_spec_t;

/* Writes the frame (no FCS) into buf and returns its length in *out_len.
 * Frames shorter than 60 bytes are zero-padded to 60 (64 with FCS).
 * Returns DP_DROP_BUFFER_TOO_SMALL if cap is too small, writing nothing;
 * DP_DROP_BAD_BUILD_SPEC if ip_proto is not UDP/TCP or the IPv4 total length
 * would exceed 65535. The IPv4 header has IHL 5, DF set, TOS 0; TCP has data
 * offset 5 and window 65535. On success adds to ops->bytes_written every
 * byte but the payload (headers and padding), to ops->bytes_copied the
 * payload_len bytes (copied, or zero-filled when payload is NULL), and to
 * ops->checksum_bytes the 20 header bytes plus, with l4_checksum, the 8
 * address bytes of the pseudo-header and the whole UDP/TCP segment. */
dp_drop_reason_t dp_build(const dp_build_spec_t *spec, uint8_t *buf, size_t cap, size_t *out_len,
                          dp_ops_t *ops);

/* Frame length (no FCS, before padding) for an L4 payload of payload_len. */
size_t dp_build_len(uint8_t ip_proto, uint16_t payload_len);

/* Forwarding rewrite of an IPv4 header in place: TTL decrement with the
 * RFC 1624 incremental checksum update. ip points at the IPv4 header, len
 * bytes of it are present. Returns DP_DROP_IP4_TTL_EXPIRED (header untouched)
 * when TTL <= 1. A rewrite adds one ops->csum_updates and 3 ops->bytes_written
 * (TTL and checksum); a refusal adds nothing. */
dp_drop_reason_t dp_ip4_decrement_ttl(uint8_t *ip, size_t len, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
