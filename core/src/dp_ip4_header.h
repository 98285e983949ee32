/* Internal to core/src: the writer of a fresh 20-byte IPv4 header (no
 * options) for the answers and tunnels the core builds (ICMP, DNS, SYN
 * cookie SYN/ACK, IPIP outer header); dp_build writes its own, for the
 * reason given there. Not part of the public API. */
#ifndef DP_IP4_HEADER_H
#define DP_IP4_HEADER_H

#include <stdint.h>

#include "dp_bytes.h"
#include "dp_csum.h"
#include "dp_pkt.h"

#define IP4_FLAG_DF 0x4000u

/* Writes version 4, IHL 5 and the given fields at ip, then the header
 * checksum (RFC 791) over the 20 bytes, priced in ops like any checksum.
 * frag is the whole flags-and-fragment-offset word (IP4_FLAG_DF: DF). */
static inline void ip4_write_header(uint8_t *ip, uint8_t tos, uint16_t total_len, uint16_t id, uint16_t frag,
                                    uint8_t ttl, uint8_t proto, uint32_t src, uint32_t dst, dp_ops_t *ops)
{
    ip[0] = 0x45;
    ip[1] = tos;
    wr16(ip + 2, total_len);
    wr16(ip + 4, id);
    wr16(ip + 6, frag);
    ip[8] = ttl;
    ip[9] = proto;
    wr16(ip + 10, 0);
    wr32(ip + 12, src);
    wr32(ip + 16, dst);
    wr16(ip + 10, dp_csum(ip, DP_IP4_MIN_HDR_LEN, ops));
}

#endif
