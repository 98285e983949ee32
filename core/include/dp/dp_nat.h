/* L4 load-balancer forwarding methods, applied in place to a frame that
 * dp_parse accepted (Ethernet II, at most one VLAN tag, IPv4, TCP or UDP):
 *
 * - NAT (IPVS -m, "masquerading"): the destination rewrite inbound
 *   (VIP:port -> server:port, dp_nat_rewrite_dst) and the source rewrite
 *   outbound (server:port -> VIP:port, dp_nat_rewrite_src);
 * - full NAT (IPVS FULLNAT, HAProxy "mode tcp" seen on the wire): both at
 *   once (dp_nat_rewrite_full), client -> local address:port as the source
 *   and VIP:port -> server:port as the destination inbound; outbound the
 *   reverse of both;
 * - direct routing (IPVS -g, dp_nat_dr): only the MAC addresses change, the
 *   IP packet is untouched and the server answers the client directly;
 * - IP-in-IP tunnel (IPVS -i, RFC 2003, dp_nat_ipip_encap): an outer IPv4
 *   header (protocol 4, balancer -> server) goes in front of the untouched
 *   inner packet, in headroom the caller leaves before the frame.
 *
 * Every address or port rewrite updates the IPv4 header checksum and the
 * TCP/UDP checksum incrementally (RFC 1624 eqn. 3, via dp_csum_update16/32):
 * an address is part of the L4 checksum through the pseudo-header. A UDP
 * checksum of 0 means "none" (RFC 768) and stays 0; an updated UDP checksum
 * that comes out as 0 is sent as 0xFFFF. The updates are exact: a packet
 * whose checksums verified before verifies after, and the new fields equal
 * a full RFC 1071 recomputation (tests check both).
 *
 * The rewrites take p, dp_parse's result for this frame, and keep it true
 * for the rewritten frame (addresses, ports, offsets), so rewrites can be
 * chained. p's offsets are re-checked against len and against the IPv4
 * header bytes before anything is written: a stale or forged p makes a
 * call fail with DP_NAT_EINVAL, never write outside the frame. What is not
 * done here: TTL (dp_ip4_decrement_ttl; IPVS decrements it in every
 * method, so a caller copying IPVS calls both), ICMP errors about a NATed
 * connection (IPVS ip_vs_nat_icmp), fragmentation, and IP options (left as
 * they are: they are covered by the header checksum, not rewritten). */
#ifndef DP_NAT_H
#define DP_NAT_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"
#include "dp_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error returns (negative); nothing is written when one is returned. */
#define DP_NAT_EINVAL (-1)      /* p does not describe this frame: offsets beyond len, IHL, version or
                                   protocol differ from the header bytes, ethertype not IPv4, NULL */
#define DP_NAT_ENOL4 (-2)       /* not TCP/UDP, or no L4 header parsed (a non-first fragment) */
#define DP_NAT_ENOHEADROOM (-3) /* IPIP: fewer than DP_NAT_IPIP_HEADROOM bytes of headroom */
#define DP_NAT_EFRAG_NEEDED (-4) /* IPIP: outer packet > MTU and the inner has DF set. IPVS answers
                                    the client with ICMP "fragmentation needed" (type 3 code 4,
                                    next-hop MTU = mtu - 20) and drops the packet; here nothing is
                                    sent, the caller (the model) does what IPVS does */
#define DP_NAT_EMTU (-5)        /* IPIP: outer packet > MTU and the inner has DF clear. IPVS would
                                   fragment the outer packet (ip_fragment); the core does not
                                   fragment, the caller decides (drop or model the fragments) */
#define DP_NAT_ENOICMP (-6)     /* ICMP error: none may be sent about this packet (RFC 1122
                                   3.2.2: it is itself an ICMP message, or a non-first fragment) */
#define DP_NAT_ENOROOM (-7)     /* ICMP error: the buffer (cap) cannot hold the message */

/* Bytes an IPIP encapsulation adds in front of the frame (the outer IPv4
 * header, no options; the Ethernet header moves up by as much). */
#define DP_NAT_IPIP_HEADROOM 20u
#define DP_IPPROTO_IPIP 4u

/* Destination NAT (inbound, VIP:port -> server:port): sets the IPv4
 * destination to ip and the TCP/UDP destination port to port (host order),
 * updates both checksums and p->dst_ip, p->dst_port. 0 or DP_NAT_EINVAL /
 * DP_NAT_ENOL4. The L4 header must be wholly present (a first fragment
 * qualifies: its L4 checksum covers the whole datagram, and the update
 * stays exact). Adds, whatever the old and new values (a field rewritten
 * to its own value counts the same):
 *   TCP, or UDP with a checksum:  csum_updates 5 (2 IPv4 header for the
 *     address, 2 L4 for the address in the pseudo-header, 1 L4 for the
 *     port), bytes_written 10 (address 4, IPv4 checksum 2, port 2, L4
 *     checksum 2);
 *   UDP with checksum 0: csum_updates 2, bytes_written 8.
 * Nothing on failure. */
int dp_nat_rewrite_dst(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t ip, uint16_t port,
                       dp_ops_t *ops);

/* Source NAT (outbound server:port -> VIP:port, or the full-NAT source
 * half client:port -> local address:port): the same for the source address
 * and port (p->src_ip, p->src_port); same counts. */
int dp_nat_rewrite_src(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t ip, uint16_t port,
                       dp_ops_t *ops);

/* Full NAT (IPVS FULLNAT): source and destination in one call, exactly
 * dp_nat_rewrite_src followed by dp_nat_rewrite_dst (same result, sum of
 * the counts: csum_updates 10 and bytes_written 20; UDP with checksum 0:
 * 4 and 16). Checks everything before writing anything. */
int dp_nat_rewrite_full(uint8_t *frame, size_t len, dp_parsed_t *p, uint32_t src_ip, uint16_t src_port,
                        uint32_t dst_ip, uint16_t dst_port, dp_ops_t *ops);

/* Direct routing (IPVS -g): destination MAC := server_mac, source MAC :=
 * balancer_mac. Nothing else changes (the VIP stays the destination; the
 * server holds it on a non-ARPing interface and answers the client
 * directly). Needs only len >= 12 (any EtherType). 0 or DP_NAT_EINVAL.
 * Adds bytes_written 12. NAT modes use it for their L2 next hop too. */
int dp_nat_dr(uint8_t *frame, size_t len, const uint8_t server_mac[6], const uint8_t balancer_mac[6],
              dp_ops_t *ops);

/* IPIP tunnel parameters (RFC 2003 section 3.1). */
typedef struct dp_nat_tunnel {
    uint32_t src_ip;     /* outer source: the balancer's tunnel address (host order) */
    uint32_t dst_ip;     /* outer destination: the real server (host order) */
    uint8_t dst_mac[6];  /* Ethernet destination of the encapsulated frame (next hop to the server) */
    uint8_t src_mac[6];  /* Ethernet source (the balancer) */
    uint16_t ip_id;      /* outer IPv4 identification (IPVS: ip_select_ident) */
    uint16_t mtu;        /* egress IP MTU: the outer total length must not exceed it */
    uint8_t ttl;         /* outer TTL; 0 copies the inner TTL, as IPVS does */
    uint8_t pad[3];      /* set to zero; ignored */
} dp_nat_tunnel_t;

/* IP-in-IP encapsulation. frame[0..len) is the parsed frame; the headroom
 * bytes before it, frame[-headroom..-1], belong to the caller's buffer. The
 * encapsulated frame starts at frame - DP_NAT_IPIP_HEADROOM and is *out_len
 * bytes long: the Ethernet header (with its VLAN tag, if any) moved up 20
 * bytes with t's MACs, then the outer IPv4 header:
 *   version 4, IHL 5, TOS copied from the inner (RFC 2003; IPVS also turns
 *   an inner ECN CE into ECT(0), not done here), total length = inner total
 *   length + 20, identification t->ip_id, DF copied from the inner, MF 0,
 *   offset 0, TTL t->ttl (inner TTL when 0), protocol 4, checksum computed
 *   in full (RFC 1071), source t->src_ip, destination t->dst_ip,
 * then the inner IPv4 packet, byte for byte where it was. Ethernet padding
 * after the inner packet is dropped from *out_len and nothing is padded
 * (a TCP/UDP inner packet gives at least 62 bytes). The inner packet may
 * carry any protocol. On success p describes the new frame as dp_parse
 * would (protocol 4, no L4: l4_offset = payload_offset = l3_offset + 20,
 * ports 0).
 * Errors, checked in this order, writing nothing: DP_NAT_EINVAL,
 * DP_NAT_ENOHEADROOM (headroom < 20), then, when inner total length + 20 >
 * t->mtu, DP_NAT_EFRAG_NEEDED (inner DF set) or DP_NAT_EMTU (DF clear).
 * Adds bytes_written l3_offset + 20 (the Ethernet header rewritten in its
 * new place, the outer header) and checksum_bytes 20. The inner packet is
 * not moved: bytes_copied 0. */
int dp_nat_ipip_encap(uint8_t *frame, size_t headroom, size_t len, dp_parsed_t *p, const dp_nat_tunnel_t *t,
                      size_t *out_len, dp_ops_t *ops);

/* The ICMP "fragmentation needed and DF set" message that IPVS sends when
 * a tunnelled packet does not fit (Linux net/netfilter/ipvs/ip_vs_xmit.c:
 * __ip_vs_get_out_rt takes the route MTU less the outer IPv4 header as the
 * MTU, ensure_mtu_is_adequate calls icmp_send(ICMP_DEST_UNREACH,
 * ICMP_FRAG_NEEDED, mtu) for a DF packet over it and drops the packet).
 * What the sender does with it is RFC 1191 path MTU discovery. */
#define DP_NAT_ICMP_HDR_LEN 8u          /* type, code, checksum, unused, next-hop MTU */
#define DP_NAT_ICMP_QUOTE_DATA 8u       /* bytes of the original payload quoted (RFC 792) */
#define DP_IPPROTO_ICMP 1u

/* Turns frame[0..len), a frame dp_parse accepted (p, checked as the
 * rewrites check it), in place into an ICMP destination unreachable,
 * code 4 "fragmentation needed and DF set" (RFC 792 type 3 code 4; RFC 1191
 * section 4: the next-hop MTU in the low 16 bits of the second word, the
 * high 16 bits zero), addressed back to the packet's sender:
 *   Ethernet: destination := the frame's source MAC, source := its
 *     destination MAC (the balancer's port that received it); a VLAN tag
 *     stays;
 *   IPv4: version 4, IHL 5, TOS = (original TOS & 0x1E) | 0xC0 (Linux
 *     icmp_send: the original's TOS bits with precedence "internetwork
 *     control"), total length 20 + 8 + quote, identification ip_id, no DF
 *     (Linux's ICMP socket does not set it), TTL ttl, protocol 1, checksum
 *     in full (RFC 1071), source src_ip (IPVS: the VIP, the packet's local
 *     destination, as icmp_send picks for a packet addressed to the box),
 *     destination the original source;
 *   ICMP: type 3, code 4, checksum over the ICMP message (RFC 792), 0,
 *     next_hop_mtu, then the quote: the original IPv4 header with its
 *     options and the first 8 bytes of its payload (fewer if it has fewer),
 *     byte for byte. RFC 792 asks for exactly that; Linux quotes up to 576
 *     bytes of message (RFC 1812 4.3.2.3), not done here.
 * *out_len = l3_offset + 28 + quote (70 bytes for an untagged IHL-5 TCP
 * packet; Ethernet padding is the port's). frame must have cap bytes
 * (cap >= *out_len). p then describes the new frame as dp_parse would
 * (protocol 1, l4_offset = payload_offset = l3_offset + 20, payload_len =
 * 8 + quote, ports 0, tcp_flags 0).
 * Errors, checked in this order, writing nothing: DP_NAT_EINVAL (p does not
 * describe the frame, out_len NULL), DP_NAT_ENOICMP (the packet is ICMP or
 * a non-first fragment: RFC 1122 3.2.2; IPVS's check skips ICMP too),
 * DP_NAT_ENOROOM (cap < *out_len).
 * Adds bytes_written l3_offset + 28 (the headers written), bytes_copied
 * quote (the quote moved up 28 bytes), checksum_bytes 20 + 8 + quote. */
int dp_nat_icmp_frag_needed(uint8_t *frame, size_t len, size_t cap, dp_parsed_t *p, uint16_t next_hop_mtu,
                            uint32_t src_ip, uint16_t ip_id, uint8_t ttl, size_t *out_len, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
