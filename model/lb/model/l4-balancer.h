// L4Balancer: what an L4 load balancer (such as the ServerIron ADX's
// application cores) does to each frame, run on the real C data-plane core,
// and what it costs in core cycles. No ns-3 types, no time model: the
// L4BalancerDevice and the lb scenario put these verdicts on a
// PipelineEngine (cores, queues, CPU utilisation).
//
// Addressing (all host order, RFC 5737 / RFC 2544 ranges):
//   virtual service s (0..services-1): VIP 10.0.s.1 (s < 256 per octet: s
//     is split over the second and third octets), TCP port 80 for HTTP, UDP
//     port 53 for its DNS service (answering names "s<s>.example." with the
//     service's server addresses);
//   server k of service s: 10.1.s.(k+1), port 80;
//   the balancer's source-NAT (full NAT) address: 10.2.0.1, ports 1024..65535.
//
// Per frame (Process), in order, each step the C core's:
//   dp_parse (IPv4 header checksum verified);
//   UDP to a VIP port 53: dp_dns_answer_frame, in place (stateless, the
//     frame becomes the response);
//   destination = the SNAT address: a server's reply. dp_sess_lookup of its
//     key (miss: no_session), dp_sess_track (OUT), dp_sess_get (the client
//     side of the connection), dp_nat_rewrite_full back to VIP -> client;
//   destination = a VIP:80: dp_sess_lookup of the client key;
//     hit: dp_sess_track (IN), dp_sess_get, dp_nat_rewrite_full (client ->
//       server becomes SNAT:lport -> server) (DR: dp_nat_dr; tunnel:
//       dp_nat_ipip_encap; a packet whose outer header takes it over
//       ipMtu is dropped as tunnel_mtu_exceeded and, DF set, the frame
//       becomes dp_nat_icmp_frag_needed's answer to the client, next-hop
//       MTU ipMtu - 20, as IPVS sends it);
//     miss, SYN: with SYN cookies, dp_syncookie_synack in place (the frame
//       becomes the SYN-ACK, nothing is stored); without, a new connection:
//       dp_rl_admit (service rate limit), dp_sched_pick, the SNAT port from
//       the core's port pool, dp_sess_open (two sessions under full NAT, one
//       for DR/tunnel), dp_sess_track (SYN), the rewrite,
//       dp_sched_conn_opened;
//     miss, ACK with SYN cookies: dp_syncookie_check_ack, then the new
//       connection as above; the frame goes to the server as its SYN (flags
//       byte rewritten: bytes_written +1) - delayed binding, without the
//       sequence translation an L7 splice would add;
//     miss, anything else: no_session;
//   other destinations: no_virtual_service (after a virtual-service table
//     probe).
// Closing. With timeWaitMs = 0 (the ADX profile) a full-NAT connection whose
// state reaches TIME_WAIT (both FINs seen) is removed at its last ACK, and
// on RST (dp_sess_close, dp_sched_conn_closed). The seed is silent on the
// ADX's TIME_WAIT handling; IPVS keeps TIME_WAIT 120 s, which at the 1.5M
// CPS Tolly measured would hold 180M connections, more than the 128M the
// tables hold, so the ADX cannot be doing that. With timeWaitMs > 0, and
// always for DR and tunnel connections (one session, IPVS's INPUT-ONLY
// states: the balancer never sees the end of the close, a client FIN leaves
// the connection in FIN_WAIT), a closing connection lingers and idle aging
// (Age: dp_sess_expire) removes it after its state's timeout, as IPVS's
// per-connection timers do. The scheduler is told once, when the connection
// enters its closing phase (FIN_WAIT, CLOSE_WAIT or TIME_WAIT): IPVS moves
// it from the server's active to its inactive connections there
// (ip_vs_proto_tcp.c set_tcp_state); an RST before that tells it at removal.
// Aging is background work on the core that owns the shard: its dp_ops
// are kept per shard (LastAgingOps) for the device to put on that core, not
// on any frame.
//
// Costs: the dp_ops counters of these calls, priced by CycleCost, plus
// connectionSetupCycles on the frame that opens a connection. Two parts
// are not a core call and are counted here, stated:
//   virtual-service table read: table_probes 1, cache_lines 1 per frame
//     addressed to a VIP or the SNAT address (a direct-indexed array);
//   SNAT port pool pop (new connection): table_probes 1, table_writes 1. The
//     pool stands for DPVS's per-core port pools (src/sa_pool.c), filled at
//     configuration time with ports whose reply flow hashes to the core; it
//     is filled here lazily by dp_sess_steer_port, whose hashes are
//     configuration work and not priced.
#ifndef ROUTERTWIN_L4_BALANCER_H
#define ROUTERTWIN_L4_BALANCER_H

#include "cycle-cost.h"
#include "dp_dns.h"
#include "dp_nat.h"
#include "dp_pkt.h"
#include "dp_ratelimit.h"
#include "dp_sched.h"
#include "dp_session.h"
#include "dp_syncookie.h"

#include <cstdint>
#include <string>
#include <vector>

namespace routertwin
{

/// How a new connection's packets reach the server.
enum class LbForwarding : uint8_t
{
    kFullNat, ///< source and destination NAT (two sessions per connection)
    kDr,      ///< direct routing: MACs only, replies bypass the balancer (one session)
    kTunnel,  ///< IP-in-IP to the server, replies bypass the balancer (one session)
};

/// "fullnat", "dr", "tunnel"; throws std::invalid_argument.
LbForwarding ParseLbForwarding(const std::string& name);
const char* LbForwardingName(LbForwarding f);

struct L4BalancerConfig
{
    uint32_t cores = 32;                ///< application cores = session-table shards
    uint32_t sessionsPerCore = 65536;   ///< session-table capacity per core (sessions)
    uint32_t services = 96;             ///< virtual services (HTTP VIP:80 + DNS VIP:53 each)
    uint32_t serversPerService = 4;     ///< real servers behind each service
    std::string scheduler = "rr";       ///< dp_sched algorithm name
    LbForwarding forwarding = LbForwarding::kFullNat;
    bool synCookies = false;            ///< answer every SYN with a cookie (no state until the ACK)
    uint32_t rateLimitCps = 0;          ///< new connections/s per service; 0 = none
    CycleCost cost;                     ///< prices of the dp_ops counters
    /// Cycles added to the frame that opens a connection, for the work of a
    /// new connection that the core's counters do not see (session memory
    /// allocation, aging timers, statistics, the line card's flow entry on a
    /// real box): fitted per platform, 0 by default.
    double connectionSetupCycles = 0;
    /// TIME_WAIT linger in ms: 0 = a full-NAT connection is removed at its
    /// last ACK; > 0 = it stays in TIME_WAIT this long (IPVS: 120,000).
    uint32_t timeWaitMs = 0;
    /// FIN_WAIT timeout in ms (IPVS: 120,000): where DR and tunnel
    /// connections end (the balancer sees only the client's half of the close).
    uint32_t finWaitMs = 120000;
    /// IP MTU of the links towards the servers: a tunnel's outer packet
    /// must fit it (1500 Ethernet; 9000 jumbo frames).
    uint16_t ipMtu = 1500;

    /// Throws std::invalid_argument naming the first bad field.
    void Validate() const;
};

/// What the balancer did with one frame.
struct LbVerdict
{
    uint8_t dpDrop = DP_OK;  ///< dp_drop_reason_t; DP_OK = forwarded or answered
    bool answered = false;   ///< the frame became a reply to its sender (SYN-ACK cookie, DNS, ICMP)
    /// tunnel: the packet did not fit the MTU and was dropped; the frame is
    /// now the ICMP fragmentation-needed message to the client (answered)
    bool icmpFragNeeded = false;
    bool opened = false;     ///< a connection was opened
    bool closed = false;     ///< a connection was removed
    uint32_t core = 0;       ///< the core (shard) that did the work: RSS of the client key
    uint32_t cycles = 0;     ///< priced cycles of the work
    dp_ops_t ops{};          ///< the work's counters
    dp_parsed_t out{};       ///< the frame as it leaves (valid when dpDrop == DP_OK)
};

class L4Balancer
{
  public:
    /// Allocates and builds the tables; throws std::invalid_argument on a bad config.
    explicit L4Balancer(const L4BalancerConfig& config);
    ~L4Balancer();
    L4Balancer(const L4Balancer&) = delete;
    L4Balancer& operator=(const L4Balancer&) = delete;

    /// Processes frame[0..len) (no FCS) in place; cap is the buffer size
    /// from frame on, headroom the bytes before frame the caller owns (>= 20
    /// for the tunnel mode). nowNs is the arrival time. The frame may be
    /// rewritten (NAT), turned into a reply, or moved back by 20 bytes
    /// (tunnel): *outFrame / *outLen say where it is then.
    LbVerdict Process(uint8_t* frame, size_t len, size_t cap, size_t headroom, uint64_t nowNs,
                      uint8_t** outFrame = nullptr, size_t* outLen = nullptr);

    /// Shard (core) of a client -> VIP key, as RSS and the session table see it.
    uint32_t CoreOf(uint32_t srcIp, uint32_t dstIp, uint16_t srcPort, uint16_t dstPort,
                    uint8_t proto) const;

    const L4BalancerConfig& Config() const { return m_cfg; }
    /// Connections held now, over all shards.
    uint64_t Connections() const;
    /// Connections held now in `state` (dp_sess_state_t), over all shards.
    uint64_t ConnectionsIn(int state) const;
    /// Idle aging at nowNs: dp_sess_expire_report on every shard, scanning
    /// up to `budget` buckets each (0: all). Each connection removed that the
    /// scheduler still counts as active (not already told at its closing
    /// phase) is closed there (dp_sched_conn_closed), as an IPVS connection
    /// timer's expiry drops its server's counts: lc and wlc then see the
    /// true load. Returns the connections removed.
    uint64_t Age(uint64_t nowNs, uint32_t budget);
    /// Connections removed by Age so far, and the work it did (all shards).
    uint64_t Expired() const { return m_expired; }
    const dp_ops_t& AgingOps() const { return m_agingOps; }
    /// The work the last Age call did on `shard` (the owning core's cycles).
    const dp_ops_t& LastAgingOps(uint32_t shard) const { return m_agingOpsLast.at(shard); }
    /// Buckets of one shard (Age's budget is per shard).
    uint32_t BucketsPerShard() const;
    /// Bytes of the session table (all shards, as dp_sess_memory_size gives them).
    size_t SessionTableBytes() const { return m_sessMem.size(); }
    /// Connections opened, refused for lack of room, over all shards.
    uint64_t Inserts() const;
    uint64_t RefusedFull() const;
    /// Drops by dp_drop_reason_t.
    const std::vector<uint64_t>& Drops() const { return m_drops; }
    /// Frames answered with a SYN cookie, cookies validated.
    uint64_t CookiesSent() const { return m_cookiesSent; }
    uint64_t CookiesValid() const { return m_cookiesValid; }
    uint64_t DnsAnswered() const { return m_dnsAnswered; }
    /// ICMP fragmentation-needed messages sent (tunnel, DF packets over the MTU).
    uint64_t IcmpFragNeeded() const { return m_icmpFragNeeded; }

    static uint32_t Vip(uint32_t service);
    static uint32_t ServerIp(uint32_t service, uint32_t server);
    static constexpr uint32_t kSnatIp = 0x0A020001u; ///< 10.2.0.1
    static constexpr uint16_t kHttpPort = 80;
    static constexpr uint16_t kDnsPort = 53;
    /// The DNS name of service s, dotted ("s12.example.").
    static std::string DnsName(uint32_t service);

  private:
    int ServiceOfVip(uint32_t ip) const;
    uint8_t NewConnection(uint8_t* frame, size_t len, size_t cap, size_t headroom, dp_parsed_t& p,
                          uint32_t service, uint32_t shard, uint32_t nowMs, uint64_t nowNs,
                          bool fromCookie, uint8_t** outFrame, size_t* outLen, LbVerdict& v);
    uint8_t Forward(uint8_t* frame, size_t len, size_t cap, size_t headroom, dp_parsed_t& p,
                    const dp_sess_info_t& info, uint8_t** outFrame, size_t* outLen, LbVerdict& v);
    /// A tunnelled packet over the MTU: dropped (tunnel_mtu_exceeded); with
    /// DF the frame becomes the ICMP fragmentation-needed answer (DP_OK,
    /// answered), as IPVS does.
    uint8_t TunnelMtuExceeded(uint8_t* frame, size_t len, size_t cap, dp_parsed_t& p, bool df, size_t* outLen,
                              LbVerdict& v);
    void Finish(dp_sess_conn_t conn, int prevState, int state, uint8_t tcpFlags, uint32_t service,
                uint16_t server, LbVerdict& v);

    L4BalancerConfig m_cfg;
    std::vector<uint8_t> m_sessMem;
    dp_sess_table_t* m_sess = nullptr;
    std::vector<std::vector<uint8_t>> m_schedMem;
    std::vector<dp_sched_t*> m_sched;
    std::vector<uint8_t> m_rlMem;
    dp_rl_t* m_rl = nullptr;
    dp_syncookie_t m_cookie{};
    std::vector<uint8_t> m_dnsMem;
    dp_dns_zone_t* m_zone = nullptr;
    // SNAT port pool cursor per (core, service, server)
    std::vector<uint16_t> m_portCursor;
    std::vector<uint64_t> m_drops;
    uint64_t m_cookiesSent = 0, m_cookiesValid = 0, m_dnsAnswered = 0, m_icmpFragNeeded = 0;
    uint64_t m_expired = 0;
    dp_ops_t m_agingOps{};
    std::vector<dp_ops_t> m_agingOpsLast; // per shard, of the last Age call
    std::vector<dp_sess_expired_t> m_expiredBuf;
};

} // namespace routertwin

#endif
