#include "l4-balancer.h"

#include <cstring>
#include <stdexcept>

namespace routertwin
{

namespace
{

// What `field` reads from each shard's statistics, summed over the shards.
template <typename Field>
uint64_t
SumOverShards(const dp_sess_table_t* table, uint32_t shards, Field field)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < shards; ++s)
    {
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(table, s, &st);
        n += field(st);
    }
    return n;
}

const char* const kForwardingNames[] = {"fullnat", "dr", "tunnel"};

[[noreturn]] void
Bad(const std::string& field, const std::string& why)
{
    throw std::invalid_argument(field + ": " + why);
}

dp_flow_key_t
Key(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t proto)
{
    dp_flow_key_t k{};
    k.src_ip = src;
    k.dst_ip = dst;
    k.src_port = sport;
    k.dst_port = dport;
    k.proto = proto;
    return k;
}

// Milliseconds: the session table's tick (ages up to 24.8 days are exact).
uint32_t
MsTick(uint64_t ns)
{
    return static_cast<uint32_t>(ns / 1000000u);
}

} // namespace

LbForwarding
ParseLbForwarding(const std::string& name)
{
    for (int i = 0; i < 3; ++i)
    {
        if (name == kForwardingNames[i])
        {
            return static_cast<LbForwarding>(i);
        }
    }
    throw std::invalid_argument("unknown forwarding '" + name + "' (expected fullnat, dr or tunnel)");
}

const char*
LbForwardingName(LbForwarding f)
{
    return kForwardingNames[static_cast<int>(f)];
}

void
L4BalancerConfig::Validate() const
{
    if (cores < 1 || cores > DP_SESS_MAX_SHARDS)
    {
        Bad("cores", "must be 1..65536");
    }
    if (sessionsPerCore < 2 || sessionsPerCore > DP_SESS_MAX_SESSIONS_PER_SHARD)
    {
        Bad("sessions_per_core", "must be 2..2^28");
    }
    if (services < 1 || services > 256)
    {
        Bad("services", "must be 1..256");
    }
    if (serversPerService < 1 || serversPerService > 254)
    {
        Bad("servers_per_service", "must be 1..254");
    }
    if (dp_sched_algo_from_name(scheduler.c_str()) < 0)
    {
        Bad("scheduler", "unknown algorithm '" + scheduler + "'");
    }
    if (!(connectionSetupCycles >= 0))
    {
        Bad("connection_setup_cycles", "must be >= 0");
    }
    if (cost.clockHz <= 0)
    {
        Bad("clock_hz", "must be > 0");
    }
    if (timeWaitMs > DP_SESS_MAX_TIMEOUT)
    {
        Bad("time_wait_s", "too long for the session table's millisecond ticks");
    }
    if (finWaitMs < 1 || finWaitMs > DP_SESS_MAX_TIMEOUT)
    {
        Bad("fin_wait_s", "must be at least 1 ms and shorter than 2^31 ms");
    }
    if (ipMtu < 576)
    {
        Bad("ip_mtu", "must be at least 576 (RFC 791's minimum datagram every host accepts)");
    }
}

uint32_t
L4Balancer::Vip(uint32_t service)
{
    return 0x0A000001u | (service << 8);
}

uint32_t
L4Balancer::ServerIp(uint32_t service, uint32_t server)
{
    return 0x0A010000u | (service << 8) | (server + 1);
}

std::string
L4Balancer::DnsName(uint32_t service)
{
    return "s" + std::to_string(service) + ".example.";
}

int
L4Balancer::ServiceOfVip(uint32_t ip) const
{
    if ((ip & 0xFFFF00FFu) != 0x0A000001u)
    {
        return -1;
    }
    const uint32_t s = (ip >> 8) & 0xFFu;
    return s < m_cfg.services ? static_cast<int>(s) : -1;
}

L4Balancer::L4Balancer(const L4BalancerConfig& config)
    : m_cfg(config),
      m_drops(DP_DROP__COUNT, 0)
{
    m_cfg.Validate();
    // Session table: one shard per application core.
    dp_sess_config_t sc;
    dp_sess_config_init(&sc, m_cfg.cores, m_cfg.sessionsPerCore, 1000);
    if (m_cfg.timeWaitMs > 0)
    {
        sc.timeout[DP_SESS_TIME_WAIT] = m_cfg.timeWaitMs;
    }
    sc.timeout[DP_SESS_FIN_WAIT] = m_cfg.finWaitMs;
    m_sessMem.resize(dp_sess_memory_size(&sc));
    m_sess = dp_sess_create(m_sessMem.data(), m_sessMem.size(), &sc);
    if (!m_sess)
    {
        throw std::invalid_argument("sessions_per_core: session table refused the configuration");
    }
    // One scheduler (server pool) per virtual service.
    const int algo = dp_sched_algo_from_name(m_cfg.scheduler.c_str());
    for (uint32_t s = 0; s < m_cfg.services; ++s)
    {
        dp_sched_config_t c{};
        c.algo = static_cast<uint32_t>(algo);
        c.max_servers = m_cfg.serversPerService;
        c.seed = s + 1;
        m_schedMem.emplace_back(dp_sched_memory_size(&c));
        dp_sched_t* sch = dp_sched_create(m_schedMem.back().data(), m_schedMem.back().size(), &c);
        if (!sch)
        {
            throw std::invalid_argument("scheduler: refused the configuration");
        }
        for (uint32_t k = 0; k < m_cfg.serversPerService; ++k)
        {
            dp_sched_server_t srv{};
            srv.weight = 1;
            dp_sched_set_server(sch, k, &srv, nullptr);
        }
        dp_sched_build(sch, 0, nullptr);
        m_sched.push_back(sch);
    }
    // Rate limiter, one bucket per service, microsecond ticks.
    dp_rl_config_t rc{m_cfg.services, 1000000u};
    m_rlMem.resize(dp_rl_memory_size(&rc));
    m_rl = dp_rl_create(m_rlMem.data(), m_rlMem.size(), &rc);
    if (m_cfg.rateLimitCps > 0)
    {
        for (uint32_t s = 0; s < m_cfg.services; ++s)
        {
            // a one-second bucket: the limit holds over any second
            dp_rl_set(m_rl, s, m_cfg.rateLimitCps, m_cfg.rateLimitCps, 0, nullptr);
        }
    }
    // SYN cookies: a fixed secret (runs must repeat), Bernstein's 5 counter bits.
    dp_syncookie_config_t kc{};
    for (int i = 0; i < 16; ++i)
    {
        kc.key[i] = static_cast<uint8_t>(0x5A ^ (i * 37));
    }
    kc.counter_bits = 5;
    kc.max_age = 1;
    dp_syncookie_init(&m_cookie, &kc);
    // DNS: one name per service, answered with its servers' addresses.
    dp_dns_zone_config_t zc{};
    zc.max_names = m_cfg.services;
    zc.max_name_bytes = m_cfg.services * 20;
    zc.max_records = m_cfg.services * m_cfg.serversPerService;
    m_dnsMem.resize(dp_dns_zone_memory_size(&zc));
    m_zone = dp_dns_zone_create(m_dnsMem.data(), m_dnsMem.size(), &zc);
    for (uint32_t s = 0; s < m_cfg.services; ++s)
    {
        uint8_t wire[256];
        size_t wl = 0;
        dp_dns_name_to_wire(DnsName(s).c_str(), wire, sizeof wire, &wl);
        std::vector<uint32_t> addrs;
        for (uint32_t k = 0; k < m_cfg.serversPerService; ++k)
        {
            addrs.push_back(ServerIp(s, k));
        }
        if (dp_dns_zone_add(m_zone, wire, wl, addrs.data(), static_cast<uint32_t>(addrs.size()), 30,
                            nullptr) != 0)
        {
            throw std::invalid_argument("services: DNS zone refused a name");
        }
    }
    m_portCursor.assign(static_cast<size_t>(m_cfg.cores) * m_cfg.services * m_cfg.serversPerService,
                        1024);
}

L4Balancer::~L4Balancer() = default;

uint32_t
L4Balancer::CoreOf(uint32_t srcIp, uint32_t dstIp, uint16_t srcPort, uint16_t dstPort,
                   uint8_t proto) const
{
    const dp_flow_key_t k = Key(srcIp, dstIp, srcPort, dstPort, proto);
    return dp_sess_shard_of(m_sess, &k);
}

uint64_t
L4Balancer::Connections() const
{
    return SumOverShards(m_sess, m_cfg.cores, [](const dp_sess_shard_stats_t& st) { return uint64_t{st.connections}; });
}

uint64_t
L4Balancer::ConnectionsIn(int state) const
{
    return SumOverShards(m_sess, m_cfg.cores, [state](const dp_sess_shard_stats_t& st) { return uint64_t{st.by_state[state]}; });
}

uint32_t
L4Balancer::BucketsPerShard() const
{
    dp_sess_shard_stats_t st;
    dp_sess_get_shard_stats(m_sess, 0, &st);
    return st.buckets;
}

namespace
{

// FIN_WAIT, CLOSE_WAIT, TIME_WAIT: IPVS's "inactive" connections.
bool
Closing(int state)
{
    return state == DP_SESS_FIN_WAIT || state == DP_SESS_CLOSE_WAIT || state == DP_SESS_TIME_WAIT;
}

} // namespace

uint64_t
L4Balancer::Age(uint64_t nowNs, uint32_t budget)
{
    const bool lingers = m_cfg.timeWaitMs > 0 || m_cfg.forwarding != LbForwarding::kFullNat;
    m_agingOpsLast.assign(m_cfg.cores, dp_ops_t{});
    if (m_expiredBuf.empty())
    {
        m_expiredBuf.resize(4096);
    }
    uint64_t removed = 0;
    for (uint32_t s = 0; s < m_cfg.cores; ++s)
    {
        dp_ops_t& ops = m_agingOpsLast[s];
        // the report array bounds one call's scan; go on until the budget is spent
        uint32_t left = budget ? budget : BucketsPerShard();
        while (left > 0)
        {
            uint32_t n = 0, scanned = 0;
            dp_sess_expire_report(m_sess, s, MsTick(nowNs), left, m_expiredBuf.data(),
                                  static_cast<uint32_t>(m_expiredBuf.size()), &n, &scanned, &ops);
            for (uint32_t i = 0; i < n; ++i)
            {
                const dp_sess_expired_t& e = m_expiredBuf[i];
                // told already when it entered its closing phase (Finish)
                if (lingers && Closing(e.state))
                {
                    continue;
                }
                const int service = ServiceOfVip(e.in_key.dst_ip);
                if (service >= 0)
                {
                    dp_sched_conn_closed(m_sched[static_cast<uint32_t>(service)], e.server, 0, &ops);
                }
            }
            removed += n;
            left = scanned >= left ? 0 : left - scanned;
            if (scanned == 0)
            {
                break;
            }
        }
        dp_ops_add(&m_agingOps, &ops);
    }
    m_expired += removed;
    return removed;
}

uint64_t
L4Balancer::Inserts() const
{
    return SumOverShards(m_sess, m_cfg.cores, [](const dp_sess_shard_stats_t& st) { return st.inserts; });
}

uint64_t
L4Balancer::RefusedFull() const
{
    return SumOverShards(m_sess, m_cfg.cores, [](const dp_sess_shard_stats_t& st) { return st.refused_full; });
}

uint8_t
L4Balancer::Forward(uint8_t* frame, size_t len, size_t cap, size_t headroom, dp_parsed_t& p,
                    const dp_sess_info_t& info, uint8_t** outFrame, size_t* outLen, LbVerdict& v)
{
    dp_ops_t* ops = &v.ops;
    static const uint8_t kBalancerMac[6] = {0x02, 0, 0, 0, 0, 1};
    uint8_t serverMac[6] = {0x02, 0, 0, 1, 0, 0};
    serverMac[5] = static_cast<uint8_t>(info.server);
    (void)cap;
    int rc = 0;
    switch (m_cfg.forwarding)
    {
    case LbForwarding::kFullNat:
        // client:port -> VIP:80 becomes SNAT:lport -> server:80 (the out key reversed)
        rc = dp_nat_rewrite_full(frame, len, &p, info.out_key.dst_ip, info.out_key.dst_port,
                                 info.out_key.src_ip, info.out_key.src_port, ops);
        if (rc == 0)
        {
            rc = dp_nat_dr(frame, len, serverMac, kBalancerMac, ops);
        }
        break;
    case LbForwarding::kDr:
        rc = dp_nat_dr(frame, len, serverMac, kBalancerMac, ops);
        break;
    case LbForwarding::kTunnel: {
        dp_nat_tunnel_t t{};
        t.src_ip = kSnatIp;
        t.dst_ip = ServerIp(ServiceOfVip(info.in_key.dst_ip) < 0 ? 0 : ServiceOfVip(info.in_key.dst_ip),
                            info.server);
        std::memcpy(t.dst_mac, serverMac, 6);
        std::memcpy(t.src_mac, kBalancerMac, 6);
        t.mtu = m_cfg.ipMtu;
        size_t ol = 0;
        rc = dp_nat_ipip_encap(frame, headroom, len, &p, &t, &ol, ops);
        if (rc == 0)
        {
            if (outFrame)
            {
                *outFrame = frame - DP_NAT_IPIP_HEADROOM;
            }
            if (outLen)
            {
                *outLen = ol;
            }
        }
        else if (rc == DP_NAT_EFRAG_NEEDED || rc == DP_NAT_EMTU)
        {
            return TunnelMtuExceeded(frame, len, cap, p, rc == DP_NAT_EFRAG_NEEDED, outLen, v);
        }
        break;
    }
    }
    return static_cast<uint8_t>(rc == 0 ? DP_OK : DP_DROP_BUFFER_TOO_SMALL);
}

uint8_t
L4Balancer::TunnelMtuExceeded(uint8_t* frame, size_t len, size_t cap, dp_parsed_t& p, bool df, size_t* outLen,
                              LbVerdict& v)
{
    // The packet is dropped either way. With DF set, IPVS (ip_vs_xmit.c,
    // ensure_mtu_is_adequate) sends the client ICMP fragmentation needed
    // with the tunnel's MTU less the outer header (__ip_vs_get_out_rt), from
    // the VIP (icmp_send answers from the packet's local destination): the
    // frame becomes that message. Without DF IPVS fragments the outer
    // packet; the core does not fragment, so that packet is only dropped.
    // ICMP identification 0 and TTL 64 (Linux's default TTL; the ID is an
    // assumption). No rate limit: Linux's icmpv4_xrlim_allow and
    // icmpv4_global_allow exempt fragmentation needed (net/ipv4/icmp.c,
    // "Don't limit PMTU discovery").
    size_t ol = 0;
    if (!df || dp_nat_icmp_frag_needed(frame, len, cap, &p, static_cast<uint16_t>(m_cfg.ipMtu - DP_NAT_IPIP_HEADROOM),
                                       p.dst_ip, 0, 64, &ol, &v.ops) != 0)
    {
        return DP_DROP_TUNNEL_MTU_EXCEEDED; // Process counts it
    }
    // the packet is dropped (counted here: the verdict is the ICMP answer)
    ++m_drops[DP_DROP_TUNNEL_MTU_EXCEEDED];
    v.answered = true;
    v.icmpFragNeeded = true;
    ++m_icmpFragNeeded;
    if (outLen)
    {
        *outLen = ol;
    }
    return DP_OK;
}

void
L4Balancer::Finish(dp_sess_conn_t conn, int prevState, int state, uint8_t tcpFlags, uint32_t service,
                   uint16_t server, LbVerdict& v)
{
    const bool lingers = m_cfg.timeWaitMs > 0 || m_cfg.forwarding != LbForwarding::kFullNat;
    const bool lastAck = state == DP_SESS_TIME_WAIT && !(tcpFlags & (DP_SESS_TCP_FIN | DP_SESS_TCP_SYN));
    if (tcpFlags & DP_SESS_TCP_RST)
    {
        dp_sess_close(m_sess, conn, &v.ops);
        if (!(lingers && Closing(prevState)))
        {
            dp_sched_conn_closed(m_sched[service], server, 0, &v.ops);
        }
        v.closed = true;
    }
    else if (!lingers && lastAck)
    {
        // removed at the last ACK of the close (both FINs seen)
        dp_sess_close(m_sess, conn, &v.ops);
        dp_sched_conn_closed(m_sched[service], server, 0, &v.ops);
        v.closed = true;
    }
    else if (lingers && Closing(state) && !Closing(prevState))
    {
        // active -> inactive; aging removes the connection later
        dp_sched_conn_closed(m_sched[service], server, 0, &v.ops);
    }
}

uint8_t
L4Balancer::NewConnection(uint8_t* frame, size_t len, size_t cap, size_t headroom, dp_parsed_t& p,
                          uint32_t service, uint32_t shard, uint32_t nowMs, uint64_t nowNs,
                          bool fromCookie, uint8_t** outFrame, size_t* outLen, LbVerdict& v)
{
    dp_ops_t* ops = &v.ops;
    if (m_cfg.rateLimitCps > 0 && dp_rl_admit(m_rl, service, nowNs / 1000u, ops) != 0)
    {
        return DP_DROP_RATE_LIMITED;
    }
    dp_sched_key_t sk{};
    sk.src_ip = p.src_ip;
    sk.dst_ip = p.dst_ip;
    sk.src_port = p.src_port;
    sk.dst_port = p.dst_port;
    sk.proto = p.ip_proto;
    const int32_t server = dp_sched_pick(m_sched[service], &sk, nowMs, ops);
    if (server < 0)
    {
        return DP_DROP_NO_SERVER;
    }
    const dp_flow_key_t in = Key(p.src_ip, p.dst_ip, p.src_port, p.dst_port, p.ip_proto);
    dp_sess_conn_t conn;
    int rc;
    if (m_cfg.forwarding == LbForwarding::kFullNat)
    {
        // SNAT port from the core's pool (see the header): a pop is a probe and a write.
        const size_t ci = (static_cast<size_t>(shard) * m_cfg.services + service) *
                              m_cfg.serversPerService + static_cast<uint32_t>(server);
        dp_flow_key_t out = Key(ServerIp(service, static_cast<uint32_t>(server)), kSnatIp, kHttpPort, 0,
                                p.ip_proto);
        ops->table_probes += 1;
        ops->table_writes += 1;
        rc = DP_SESS_EEXIST;
        uint16_t start = m_portCursor[ci];
        for (int tries = 0; tries < 64 && rc == DP_SESS_EEXIST; ++tries)
        {
            if (dp_sess_steer_port(m_sess, &out, shard, 1024, 65535, start, nullptr) != 0)
            {
                return DP_DROP_SESSION_TABLE_FULL; // no port of the range steers here
            }
            start = out.dst_port == 65535 ? 1024 : static_cast<uint16_t>(out.dst_port + 1);
            m_portCursor[ci] = start;
            rc = dp_sess_open(m_sess, &in, &out, static_cast<uint32_t>(server), nowMs, &conn, ops);
        }
    }
    else
    {
        rc = dp_sess_open(m_sess, &in, nullptr, static_cast<uint32_t>(server), nowMs, &conn, ops);
    }
    if (rc == DP_SESS_EFULL)
    {
        return DP_DROP_SESSION_TABLE_FULL;
    }
    if (rc != 0)
    {
        return DP_DROP_SESSION_TABLE_FULL; // ports of this server exhausted on this core
    }
    v.opened = true;
    dp_sess_track(m_sess, conn, DP_SESS_DIR_IN, DP_SESS_TCP_SYN, nowMs, ops);
    dp_sched_conn_opened(m_sched[service], static_cast<uint32_t>(server), ops);
    if (fromCookie)
    {
        // delayed binding: the validated ACK goes on to the server as its SYN
        const uint32_t flagsAt = p.l4_offset + 13u;
        frame[flagsAt] = DP_SESS_TCP_SYN;
        p.tcp_flags = DP_SESS_TCP_SYN;
        ops->bytes_written += 1;
    }
    dp_sess_info_t info;
    dp_sess_get(m_sess, conn, &info, ops);
    return Forward(frame, len, cap, headroom, p, info, outFrame, outLen, v);
}

LbVerdict
L4Balancer::Process(uint8_t* frame, size_t len, size_t cap, size_t headroom, uint64_t nowNs,
                    uint8_t** outFrame, size_t* outLen)
{
    LbVerdict v;
    if (outFrame)
    {
        *outFrame = frame;
    }
    if (outLen)
    {
        *outLen = len;
    }
    dp_ops_t* ops = &v.ops;
    const uint32_t nowMs = MsTick(nowNs);
    dp_parsed_t p;
    uint8_t drop = dp_parse(frame, len, nullptr, &p, ops);
    if (drop == DP_OK)
    {
        // The frame's key and the core (shard) that owns it. A lookup that
        // finds the key returns its shard with the hit, so the shard is
        // hashed separately only when there is no hit to take it from.
        const dp_flow_key_t k = Key(p.src_ip, p.dst_ip, p.src_port, p.dst_port, p.ip_proto);
        const int vipService = ServiceOfVip(p.dst_ip);
        if (p.dst_ip == kSnatIp || vipService >= 0)
        {
            ops->table_probes += 1; // virtual-service table (see the header)
            ops->cache_lines += 1;
        }
        if (vipService >= 0 && p.ip_proto == DP_IPPROTO_UDP && p.dst_port == kDnsPort)
        {
            v.core = dp_sess_shard_of(m_sess, &k);
            size_t ol = 0;
            drop = dp_dns_answer_frame(m_zone, frame, len, frame, cap, &ol, nullptr, ops);
            if (drop == DP_OK)
            {
                v.answered = true;
                ++m_dnsAnswered;
                dp_parse(frame, ol, nullptr, &p, nullptr); // describe the response (not priced)
                if (outLen)
                {
                    *outLen = ol;
                }
            }
        }
        else if (p.dst_ip == kSnatIp && p.ip_proto == DP_IPPROTO_TCP)
        {
            // a server's reply to the SNAT address
            dp_sess_hit_t hit;
            const bool found = dp_sess_lookup(m_sess, &k, &hit, ops) == 0;
            v.core = found ? hit.conn.shard : dp_sess_shard_of(m_sess, &k);
            if (!found || hit.dir != DP_SESS_DIR_OUT)
            {
                drop = DP_DROP_NO_SESSION;
            }
            else
            {
                const uint8_t flags = p.tcp_flags;
                const int prev = hit.state;
                const int state = dp_sess_track(m_sess, hit.conn, DP_SESS_DIR_OUT, flags, nowMs, ops);
                dp_sess_info_t info;
                dp_sess_get(m_sess, hit.conn, &info, ops);
                // server:80 -> SNAT:lport becomes VIP:80 -> client:port
                dp_nat_rewrite_full(frame, len, &p, info.in_key.dst_ip, info.in_key.dst_port,
                                    info.in_key.src_ip, info.in_key.src_port, ops);
                const uint32_t service = (info.in_key.dst_ip >> 8) & 0xFFu;
                Finish(hit.conn, prev, state, flags, service, info.server, v);
            }
        }
        else if (vipService >= 0 && p.ip_proto == DP_IPPROTO_TCP && p.dst_port == kHttpPort)
        {
            const uint32_t service = static_cast<uint32_t>(vipService);
            dp_sess_hit_t hit;
            const uint8_t flags = p.tcp_flags;
            const bool found = dp_sess_lookup(m_sess, &k, &hit, ops) == 0;
            v.core = found ? hit.conn.shard : dp_sess_shard_of(m_sess, &k);
            if (found && hit.dir == DP_SESS_DIR_IN)
            {
                const int prev = hit.state;
                const int state = dp_sess_track(m_sess, hit.conn, DP_SESS_DIR_IN, flags, nowMs, ops);
                dp_sess_info_t info;
                dp_sess_get(m_sess, hit.conn, &info, ops);
                drop = Forward(frame, len, cap, headroom, p, info, outFrame, outLen, v);
                Finish(hit.conn, prev, state, flags, service, info.server, v);
            }
            else if ((flags & DP_SESS_TCP_SYN) && !(flags & DP_SESS_TCP_ACK))
            {
                if (m_cfg.synCookies)
                {
                    dp_syncookie_reply_t r{};
                    r.mss = 1460;
                    r.window = 65535;
                    r.ttl = 64;
                    size_t ol = 0;
                    const int rc = dp_syncookie_synack(&m_cookie, frame, len, cap, &p, nowMs / 64000u, &r,
                                                       &ol, ops);
                    if (rc > 0)
                    {
                        v.answered = true;
                        ++m_cookiesSent;
                        if (outLen)
                        {
                            *outLen = ol;
                        }
                    }
                    else
                    {
                        drop = DP_DROP_BUFFER_TOO_SMALL;
                    }
                }
                else
                {
                    drop = NewConnection(frame, len, cap, headroom, p, service, v.core, nowMs, nowNs,
                                         false, outFrame, outLen, v);
                }
            }
            else if (m_cfg.synCookies && (flags & DP_SESS_TCP_ACK) && !(flags & DP_SESS_TCP_RST))
            {
                if (dp_syncookie_check_ack(&m_cookie, frame, len, &p, nowMs / 64000u, ops) > 0)
                {
                    ++m_cookiesValid;
                    drop = NewConnection(frame, len, cap, headroom, p, service, v.core, nowMs, nowNs, true,
                                         outFrame, outLen, v);
                }
                else
                {
                    drop = DP_DROP_SYN_COOKIE_INVALID;
                }
            }
            else
            {
                drop = DP_DROP_NO_SESSION;
            }
        }
        else
        {
            v.core = dp_sess_shard_of(m_sess, &k);
            drop = DP_DROP_NO_VIRTUAL_SERVICE;
        }
    }
    v.dpDrop = drop;
    if (drop != DP_OK)
    {
        ++m_drops[drop];
    }
    v.out = p;
    const double setup = v.opened ? m_cfg.connectionSetupCycles : 0.0;
    v.cycles = static_cast<uint32_t>(m_cfg.cost.Cycles(v.ops, static_cast<double>(len + 4)) + setup + 0.5);
    return v;
}

} // namespace routertwin
