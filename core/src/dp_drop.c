#include "dp_drop.h"

/* Indexed by dp_drop_reason_t; names are part of the output format
 * (counters, traces, reports), so never rename one. */
static const char *const drop_names[DP_DROP__COUNT] = {
    "ok",
    "eth_truncated",
    "eth_unsupported_type",
    "ip4_truncated",
    "ip4_bad_version",
    "ip4_bad_ihl",
    "ip4_bad_total_length",
    "ip4_bad_checksum",
    "ip4_fragment",
    "ip4_ttl_expired",
    "l4_truncated",
    "udp_bad_length",
    "tcp_bad_offset",
    "no_route",
    "flow_table_full",
    "buffer_too_small",
    "bad_build_spec",
    "no_virtual_service",
    "no_session",
    "session_table_full",
    "no_server",
    "rate_limited",
    "syn_cookie_invalid",
    "dns_malformed",
    "dns_unsupported",
    "http_malformed",
    "http_too_large",
    "tls_malformed",
    "url_no_match",
    "tunnel_mtu_exceeded",
};

const char *dp_drop_reason_name(dp_drop_reason_t reason)
{
    if ((unsigned)reason >= (unsigned)DP_DROP__COUNT)
        return "unknown";
    return drop_names[reason];
}
