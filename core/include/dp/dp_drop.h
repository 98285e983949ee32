/* Drop reasons: every packet the data plane refuses names why (VPP style).
 * DP_OK is not a drop; the table in dp_drop.c gives each reason a stable
 * snake_case name that counters, traces and reports use. */
#ifndef DP_DROP_H
#define DP_DROP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dp_drop_reason {
    DP_OK = 0,
    DP_DROP_ETH_TRUNCATED,        /* frame shorter than the Ethernet (+VLAN) header */
    DP_DROP_ETH_UNSUPPORTED_TYPE, /* EtherType the parser does not handle */
    DP_DROP_IP4_TRUNCATED,        /* fewer than 20 bytes, or fewer than IHL*4, after L2 */
    DP_DROP_IP4_BAD_VERSION,      /* version field != 4 */
    DP_DROP_IP4_BAD_IHL,          /* IHL < 5 */
    DP_DROP_IP4_BAD_TOTAL_LENGTH, /* total length < IHL*4 or > bytes present */
    DP_DROP_IP4_BAD_CHECKSUM,     /* header checksum does not verify */
    DP_DROP_IP4_FRAGMENT,         /* MF set or fragment offset != 0 */
    DP_DROP_IP4_TTL_EXPIRED,      /* TTL <= 1 on forwarding */
    DP_DROP_L4_TRUNCATED,         /* UDP/TCP header does not fit in the IP payload */
    DP_DROP_UDP_BAD_LENGTH,       /* UDP length < 8 or > IP payload */
    DP_DROP_TCP_BAD_OFFSET,       /* TCP data offset < 5 or beyond the IP payload */
    DP_DROP_NO_ROUTE,             /* LPM miss */
    DP_DROP_FLOW_TABLE_FULL,      /* flow insert refused: shard at capacity */
    DP_DROP_BUFFER_TOO_SMALL,     /* builder output buffer too small */
    DP_DROP_BAD_BUILD_SPEC,       /* builder spec: protocol not UDP/TCP, or IPv4 total length > 65535 */
    DP_DROP_NO_VIRTUAL_SERVICE,   /* balancer: destination address/port/protocol matches no virtual service */
    DP_DROP_NO_SESSION,           /* balancer: a non-SYN TCP segment matches no session */
    DP_DROP_SESSION_TABLE_FULL,   /* balancer: new connection refused, session table shard at capacity */
    DP_DROP_NO_SERVER,            /* balancer: no server of the pool is up and below its connection limit */
    DP_DROP_RATE_LIMITED,         /* balancer: over the virtual service's new-connection rate limit */
    DP_DROP_SYN_COOKIE_INVALID,   /* balancer: an ACK whose SYN cookie does not validate */
    DP_DROP_DNS_MALFORMED,        /* DNS message truncated or inconsistent with its counts */
    DP_DROP_DNS_UNSUPPORTED,      /* DNS message that is not a standard one-question query */
    DP_DROP_HTTP_MALFORMED,       /* L7: HTTP head with a syntax error (dp_http DP_HTTP_EMALFORMED) */
    DP_DROP_HTTP_TOO_LARGE,       /* L7: HTTP line, header count or head over its limit */
    DP_DROP_TLS_MALFORMED,        /* L7: TLS record that is not a well-formed ClientHello */
    DP_DROP_URL_NO_MATCH,         /* L7: no URL rule matches and the service has no default */
    DP_DROP_TUNNEL_MTU_EXCEEDED,  /* balancer: a tunnelled packet's outer header takes it over the
                                     MTU (with DF set, the sender gets ICMP "fragmentation needed") */
    DP_DROP__COUNT
} dp_drop_reason_t;

/* Stable snake_case name, e.g. "ip4_bad_ihl"; "unknown" when out of range. */
const char *dp_drop_reason_name(dp_drop_reason_t reason);

#ifdef __cplusplus
}
#endif
#endif
