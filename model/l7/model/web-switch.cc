#include "web-switch.h"

#include "dp_csum.h"
#include "dp_drop.h"
#include "dp_tls.h"

#include <ns3/boolean.h>
#include <ns3/enum.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>

namespace routertwin
{
using namespace ns3;

namespace
{

// A non-negative duration in ns as a Time, rounded to nearest as
// Seconds(double) rounds, without its 128-bit fixed point: two such
// conversions a handled packet were about 6 % of an L7 request's
// instructions (bench/l7-l4-callgrind.py).
Time
WholeNs(double ns)
{
    return NanoSeconds(static_cast<int64_t>(ns + 0.5));
}
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;
constexpr uint16_t kIpv4 = 0x0800;
constexpr uint8_t kIcmp = 1, kEchoReply = 0, kEchoRequest = 8;
constexpr uint16_t kEchoId = 0x5254; ///< the switch's echo identifier (any fixed value)
constexpr uint16_t kEchoData = 56;   ///< ping(8)'s default data length
constexpr uint32_t kHeadCap = 16384; ///< longest request head accepted (HAProxy's tune.bufsize)

uint32_t
Rd32(const uint8_t* b)
{
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
}

uint16_t
Rd16(const uint8_t* b)
{
    return static_cast<uint16_t>((b[0] << 8) | b[1]);
}

void
Wr32(uint8_t* b, uint32_t v)
{
    b[0] = uint8_t(v >> 24);
    b[1] = uint8_t(v >> 16);
    b[2] = uint8_t(v >> 8);
    b[3] = uint8_t(v);
}

void
Wr16(uint8_t* b, uint16_t v)
{
    b[0] = uint8_t(v >> 8);
    b[1] = uint8_t(v);
}

uint64_t
ClientKey(uint32_t ip, uint16_t port)
{
    return (uint64_t(ip) << 16) | port;
}

/// A counter's growth between two snapshots: the work to price.
uint64_t
Delta(uint64_t now, uint64_t before)
{
    return now - before;
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(WebSwitch);

TypeId
WebSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("routertwin::WebSwitch")
            .SetParent<Object>()
            .AddConstructor<WebSwitch>()
            .AddAttribute("MalformedAction",
                          "What a malformed or oversized request head gets. Set by SetProfile from "
                          "behaviour.malformed_request; this attribute overrides it when set afterwards.",
                          EnumValue(static_cast<int>(MalformedAction::Reset)),
                          MakeEnumAccessor(&WebSwitch::m_malformed),
                          MakeEnumChecker(static_cast<int>(MalformedAction::Reset), "reset",
                                          static_cast<int>(MalformedAction::BadRequest), "400"))
            .AddAttribute("RstSeqDefect",
                          "The Cisco CSS defect (seed 003 section 5.4): the RST that closes the old server "
                          "connection on a 302 carries the client-side (untranslated) sequence number, and the "
                          "ACK piggybacked on the redirected request is not passed to the old server. Set by "
                          "SetProfile from the profile; this attribute overrides it when set afterwards.",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_rstSeqDefect),
                          MakeBooleanChecker())
            .AddAttribute("SslUnparsedReset",
                          "SSL service: a first record that is no readable ClientHello gets an RST (else it is "
                          "forwarded without persistence). Set by SetProfile from behaviour.ssl_unparsed; this "
                          "attribute overrides it when set afterwards.",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_sslUnparsedDrop),
                          MakeBooleanChecker())
            .AddAttribute("DefaultServer", "Server of the requests no URL rule matches.", UintegerValue(0),
                          MakeUintegerAccessor(&WebSwitch::m_defaultServer), MakeUintegerChecker<uint32_t>())
            .AddAttribute("IsnSeed", "Seed of the switch's initial sequence numbers.", UintegerValue(1),
                          MakeUintegerAccessor(&WebSwitch::m_isnSeed), MakeUintegerChecker<uint32_t>())
            .AddAttribute("MaxLine", "Longest request line or header line (Apache's 8190).", UintegerValue(8190),
                          MakeUintegerAccessor(&WebSwitch::m_maxLine), MakeUintegerChecker<uint32_t>(16))
            .AddAttribute("CookieInsertEveryResponse",
                          "Insert mode: the Set-Cookie goes into every response, as seed 003 section 5.6 "
                          "describes the method (\"when the server sends a response, the switch ... adds a "
                          "set-cookie\"); false: only into a response whose request did not come by a valid "
                          "cookie (HAProxy's insert rule, dp_persist_cookie_response).",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_insertEveryResponse),
                          MakeBooleanChecker())
            .AddAttribute("SessionSync",
                          "Redundant pair: copy each L4 session to the peer (SetSyncPeer) as it is made or "
                          "starts closing, and mirror each L7 spliced connection (SpliceMirror) when its "
                          "binding, response, edits or FINs change, so the peer's takeover keeps established "
                          "connections. Set by "
                          "SetProfile from behaviour.session_sync; this attribute overrides it when set "
                          "afterwards.",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_sessionSync),
                          MakeBooleanChecker())
            .AddAttribute("PersistenceSync",
                          "Redundant pair: copy every learned-cookie and SSL session-ID entry to the peer "
                          "(SetSyncPeer) as it is stored, so that after a takeover a client's next "
                          "connection goes to its server. Set by SetProfile from behaviour.session_sync "
                          "(persistence or connections); this attribute overrides it when set afterwards.",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_persistSync),
                          MakeBooleanChecker())
            .AddAttribute("ResetWithoutSession",
                          "A TCP segment of no connection the switch knows (after a takeover without "
                          "synchronisation: no_session) gets an RST, as RFC 793 section 3.4 (Reset Generation, "
                          "case 1) says of a segment to a closed connection; false: dropped silently.",
                          BooleanValue(false), MakeBooleanAccessor(&WebSwitch::m_resetWithoutSession),
                          MakeBooleanChecker())
            .AddAttribute("FirstLocalPort",
                          "The switch's first port toward the servers (one per server connection, then the "
                          "next). The two switches of a pair that share their server-side address take "
                          "separate ranges, so a mirrored connection's port is never reused by the peer.",
                          UintegerValue(20000), MakeUintegerAccessor(&WebSwitch::m_nextPort),
                          MakeUintegerChecker<uint16_t>(1024))
            .AddAttribute("PersistEntries",
                          "Capacity of the learned-cookie table (dp_persist; the oldest entry of a full set "
                          "is replaced). Assumption: 4,096, the paper gives no table size.",
                          UintegerValue(4096), MakeUintegerAccessor(&WebSwitch::m_persistEntries),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SynBacklogLimit",
                          "A client's SYN of a new connection that finds the processor with more work queued "
                          "ahead of it than this is dropped unanswered (overload_syn_dropped), as Linux drops a "
                          "SYN its full accept queue cannot take (net.ipv4.tcp_abort_on_overflow = 0, the "
                          "default): the client tries again after its SYN timeout, and overload is shed at the "
                          "door instead of queued without bound. 0 (the default): no limit. No product profile "
                          "names one: an assumption wherever it is set.",
                          TimeValue(Time(0)), MakeTimeAccessor(&WebSwitch::m_synBacklogLimit), MakeTimeChecker())
            .AddTraceSource("Drop", "A segment refused or absorbed by the switch, with its reason's name.",
                            MakeTraceSourceAccessor(&WebSwitch::m_dropTrace),
                            "routertwin::WebSwitch::DropTracedCallback")
            .AddTraceSource("ServerState", "A server left (up = false) or rejoined the pool (server checks).",
                            MakeTraceSourceAccessor(&WebSwitch::m_healthTrace),
                            "routertwin::WebSwitch::HealthTracedCallback")
            .AddTraceSource("Probe", "A server check's result (dp_health_result_t) at its end.",
                            MakeTraceSourceAccessor(&WebSwitch::m_probeTrace),
                            "routertwin::WebSwitch::ProbeTracedCallback")
            .AddTraceSource("Bind", "A request bound to a server connection, with the sequence offsets.",
                            MakeTraceSourceAccessor(&WebSwitch::m_bindTrace),
                            "routertwin::WebSwitch::BindTracedCallback");
    return tid;
}

WebSwitch::WebSwitch() = default;
WebSwitch::~WebSwitch() = default;

void
WebSwitch::DoDispose()
{
    m_clientDev = nullptr;
    m_syncPeer = nullptr; // the pair points at each other
    m_servers.clear();
    m_out.clear();
    Object::DoDispose();
}

void
WebSwitch::SetProfile(const WebSwitchProfile& p)
{
    m_profile = p;
    m_rstSeqDefect = p.rstSeqDefect;
    m_sslUnparsedDrop = p.sslUnparsedDrop;
    m_sessionSync = p.sessionSync;
    m_persistSync = p.persistenceSync;
    m_malformed = static_cast<int>(p.malformedBadRequest ? MalformedAction::BadRequest : MalformedAction::Reset);
}

void
WebSwitch::SetSyncPeer(Ptr<WebSwitch> peer, Time delay)
{
    m_syncPeer = peer;
    m_syncDelay = delay;
}

void
WebSwitch::SyncL4Session(uint64_t key, const L4Session& s)
{
    if (!m_sessionSync || !m_syncPeer)
        return;
    // one update on the inter-switch link, priced as one packet built
    // (an assumption: no product's figure for it)
    ++m_counters.packets;
    ++m_counters.syncSent;
    Ptr<WebSwitch> peer = m_syncPeer;
    Simulator::Schedule(m_syncDelay, [peer, key, s]() { peer->ReceiveL4Session(key, s); });
}

void
WebSwitch::ReceiveL4Session(uint64_t key, const L4Session& s)
{
    m_l4Sessions[key] = s;
    ++m_counters.syncReceived;
}

void
WebSwitch::SyncSplice(ClientConn& c, bool gone)
{
    if (!m_sessionSync || !m_syncPeer || m_l4 != L4Forwarding::Off || (gone && !c.mirrored) ||
        (!gone && c.bound < 0))
        return;
    SpliceMirror m;
    m.gone = gone;
    if (!gone)
    {
        const ServerConn& s = c.sconns[c.bound];
        m.vip = c.vip;
        m.clientIp = c.clientIp;
        m.clientPort = c.clientPort;
        const auto mac = m_clientMacs.find(c.clientIp);
        if (mac != m_clientMacs.end())
            m.clientMac = mac->second;
        m.port = c.port;
        m.tls = c.tls;
        m.sp = c.sp;
        m.server = s.server;
        m.localPort = s.localPort;
        m.localNext = s.localNext;
        m.serverNext = s.serverNext;
        m.respActive = c.respActive;
        m.respFramed = c.respActive && c.resp.status == DP_HTTP_DONE && c.bodyLeft != UINT64_MAX;
        m.respEnd = c.respEnd;
        m.clientFinSeen = c.clientFinSeen;
        m.serverFinSeen = c.serverFinSeen;
        m.clientFinEnd = c.clientFinEnd;
        m.serverFinEnd = c.serverFinEnd;
    }
    // one update on the inter-switch link, priced as one packet built (an
    // assumption, as for an L4 session)
    ++m_counters.packets;
    ++m_counters.syncSent;
    ++m_counters.spliceMirrorsSent;
    c.mirrored = true;
    Ptr<WebSwitch> peer = m_syncPeer;
    const uint64_t key = ClientKey(c.clientIp, c.clientPort);
    Simulator::Schedule(m_syncDelay, [peer, key, m]() { peer->ReceiveSpliceMirror(key, m); });
}

void
WebSwitch::ReceiveSpliceMirror(uint64_t key, const SpliceMirror& m)
{
    ++m_counters.syncReceived;
    if (m.gone)
    {
        Remove(key);
        return;
    }
    ClientConn& c = m_clients[key];
    for (const ServerConn& old : c.sconns)
        m_byLocalPort.erase(old.localPort);
    if (!c.head)
        c.head = TakeHeadBuffer();
    c.vip = m.vip;
    c.clientIp = m.clientIp;
    if (m_segment && m.clientMac != Mac48Address())
        m_clientMacs[m.clientIp] = m.clientMac;
    c.clientPort = m.clientPort;
    c.port = m.port;
    c.tls = m.tls;
    c.sp = m.sp;
    ServerConn s;
    s.server = m.server;
    s.localPort = m.localPort;
    s.localNext = m.localNext;
    s.serverNext = m.serverNext;
    s.state = ServerConn::Open;
    c.sconns.assign(1, s);
    c.bound = 0;
    c.pending = -1;
    c.reading = false;
    m_byLocalPort[m.localPort] = key;
    // the response under way, framed as the master framed it: the body
    // left counts from the server byte this switch expects next (the
    // server segments after the takeover take off what the peer passed)
    c.respActive = m.respActive;
    c.respEnd = m.respEnd;
    c.resp.status = m.respActive ? DP_HTTP_DONE : DP_HTTP_MORE;
    c.bodyLeft = !m.respActive ? 0 : m.respFramed ? uint64_t(m.respEnd - m.serverNext) : UINT64_MAX;
    c.clientFinSeen = m.clientFinSeen;
    c.serverFinSeen = m.serverFinSeen;
    c.clientFinEnd = m.clientFinEnd;
    c.serverFinEnd = m.serverFinEnd;
}

void
WebSwitch::ResetWithoutSession(const std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<NetDevice> dev)
{
    if (!m_resetWithoutSession || (p.tcp_flags & kRst))
        return;
    const uint8_t* tcp = f.data() + p.l4_offset;
    const uint32_t seq = Rd32(tcp + 4), ack = Rd32(tcp + 8);
    ++m_counters.resetsWithoutSession;
    // RFC 793 3.4: "If the incoming segment has an ACK field, the reset
    // takes its sequence number from the ACK field of the segment,
    // otherwise the reset has sequence number zero and the ACK field is set
    // to the sum of the sequence number and segment length"
    if (p.tcp_flags & kAck)
        SendTcp(dev, p.dst_ip, p.dst_port, p.src_ip, p.src_port, ack, 0, kRst, nullptr, 0);
    else
    {
        const uint32_t segLen = p.payload_len + ((p.tcp_flags & kSyn) ? 1u : 0u) + ((p.tcp_flags & kFin) ? 1u : 0u);
        SendTcp(dev, p.dst_ip, p.dst_port, p.src_ip, p.src_port, 0, seq + segLen, kRst | kAck, nullptr, 0);
    }
}

ns3::Time
WebSwitch::QueuedWork() const
{
    return std::max(m_busyUntil - Simulator::Now(), Time(0));
}

bool
WebSwitch::DropOverload(const std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<const Packet> pkt)
{
    if (m_synBacklogLimit.IsZero() || !(p.tcp_flags & kSyn) || (p.tcp_flags & kAck) ||
        m_busyUntil - Simulator::Now() <= m_synBacklogLimit)
        return false;
    // a retransmitted SYN of a connection already accepted is not a new one
    const uint64_t key = ClientKey(p.src_ip, p.src_port);
    if (m_l4 != L4Forwarding::Off)
    {
        const auto it = m_l4Sessions.find(key);
        if (it != m_l4Sessions.end() && !it->second.closing)
            return false;
    }
    else
    {
        const auto it = m_clients.find(key);
        if (it != m_clients.end() && it->second.sp.client_isn == Rd32(f.data() + p.l4_offset + 4))
            return false;
    }
    Drop("overload_syn_dropped", pkt);
    return true;
}

int
WebSwitch::Store(PersistTable table, const uint8_t key[DP_PERSIST_MAX_KEY], int32_t server)
{
    dp_persist_t* t = table == PersistTable::SslIds ? m_sslIds : m_learned;
    const int rc = dp_persist_store(t, key, server, 0, &m_counters.persistOps);
    if (rc >= 0 && m_persistSync && m_syncPeer)
    {
        // one update on the inter-switch link, priced as one packet built
        // (an assumption, as for a session)
        ++m_counters.packets;
        ++m_counters.syncSent;
        Ptr<WebSwitch> peer = m_syncPeer;
        std::array<uint8_t, DP_PERSIST_MAX_KEY> k;
        std::copy(key, key + DP_PERSIST_MAX_KEY, k.begin());
        Simulator::Schedule(m_syncDelay, [peer, table, k, server]() { peer->ReceivePersist(table, k.data(), server); });
    }
    return rc;
}

void
WebSwitch::ReceivePersist(PersistTable table, const uint8_t key[DP_PERSIST_MAX_KEY], int32_t server)
{
    dp_persist_t* t = table == PersistTable::SslIds ? m_sslIds : m_learned;
    if (t && dp_persist_store(t, key, server, 0, &m_counters.persistOps) >= 0)
        ++m_counters.syncReceived;
}

void
WebSwitch::AttachClientSegment(Ptr<NetDevice> dev, Ipv4Address vip, Mac48Address vmac, uint16_t port)
{
    // nothing registered: the frames for the virtual MAC come from whoever
    // owns it on this switch (ClientFrame)
    m_clientDev = dev;
    m_vip = vip.Get();
    m_vport = port;
    m_rng.seed(m_isnSeed);
    m_segment = true;
    m_vmacs[m_vip] = vmac;
}

void
WebSwitch::AddVirtualAddress(Ipv4Address vip, Mac48Address vmac)
{
    if (!m_segment)
        throw std::invalid_argument("a second virtual address needs a client segment (AttachClientSegment)");
    m_moreVips.push_back(vip.Get());
    m_vmacs[vip.Get()] = vmac;
}

void
WebSwitch::SetVipActive(uint32_t vip, bool active)
{
    m_standbyVips.erase(std::remove(m_standbyVips.begin(), m_standbyVips.end(), vip), m_standbyVips.end());
    if (!active)
        m_standbyVips.push_back(vip);
}

void
WebSwitch::SetVipServerAddress(Ipv4Address vip, uint32_t server, Ipv4Address self)
{
    std::vector<uint32_t>& v = m_vipSelf[vip.Get()];
    if (v.size() <= server)
        v.resize(server + 1, 0);
    v[server] = self.Get();
}

uint32_t
WebSwitch::SelfAddress(uint32_t vip, uint32_t server) const
{
    const auto it = m_vipSelf.find(vip);
    if (it != m_vipSelf.end() && server < it->second.size() && it->second[server] != 0)
        return it->second[server];
    return m_servers[server].switchIp;
}

void
WebSwitch::ClientFrame(Ptr<const Packet> p, const Mac48Address& from)
{
    // the client's MAC, for the answers (the switch keeps no ARP cache:
    // every connection starts with a frame from its client)
    uint8_t ip[20];
    if (p->CopyData(ip, sizeof ip) == sizeof ip)
        m_clientMacs[Rd32(ip + 12)] = from;
    ReceiveFromClient(m_clientDev, p, kIpv4, from);
}

void
WebSwitch::SegmentSend(Ptr<Packet> q)
{
    uint8_t ip[20];
    q->CopyData(ip, sizeof ip);
    auto src = m_vmacs.find(Rd32(ip + 12));
    auto dst = m_clientMacs.find(Rd32(ip + 16));
    if (src == m_vmacs.end() || dst == m_clientMacs.end())
    {
        Drop("segment_no_mac", q);
        return;
    }
    m_clientDev->SendFrom(q, src->second, dst->second, kIpv4);
}

void
WebSwitch::AttachClientSide(Ptr<NetDevice> dev, Ipv4Address vip, uint16_t port)
{
    m_clientDev = dev;
    m_vip = vip.Get();
    m_vport = port;
    m_rng.seed(m_isnSeed);
    dev->GetNode()->RegisterProtocolHandler(
        [this](Ptr<NetDevice> d, Ptr<const Packet> p, uint16_t proto, const Address& from, const Address&,
               NetDevice::PacketType) { ReceiveFromClient(d, p, proto, from); },
        kIpv4, dev);
}

uint32_t
WebSwitch::AddServer(Ptr<NetDevice> dev, Ipv4Address switchAddr, Ipv4Address serverAddr)
{
    m_servers.push_back({dev, switchAddr.Get(), serverAddr.Get()});
    dev->GetNode()->RegisterProtocolHandler(
        [this](Ptr<NetDevice> d, Ptr<const Packet> p, uint16_t proto, const Address& from, const Address&,
               NetDevice::PacketType) { ReceiveFromServer(d, p, proto, from); },
        kIpv4, dev);
    return static_cast<uint32_t>(m_servers.size() - 1);
}

void
WebSwitch::AddUrlRule(dp_urlrule_kind_t kind, const std::string& pattern, uint32_t server, uint16_t precedence)
{
    if (!m_rules)
    {
        dp_urlrule_config_t cfg{};
        cfg.max_rules = 1024;
        cfg.max_pattern_bytes = 64 * 1024;
        cfg.order = m_profile.ruleMatching == RuleMatching::FirstMatch ? DP_URLRULE_FIRST : DP_URLRULE_PRECEDENCE;
        m_ruleMem.assign((dp_urlrule_memory_size(&cfg) + 7) / 8, 0);
        m_rules = dp_urlrule_create(m_ruleMem.data(), m_ruleMem.size() * 8, &cfg);
    }
    if (dp_urlrule_add(m_rules, kind, 0, pattern.c_str(), precedence, server, nullptr) < 0)
        throw std::invalid_argument("URL rule '" + pattern + "' refused by dp_urlrule_add");
}

void
WebSwitch::AddCookieServer(const std::string& name, const std::string& value, uint32_t server)
{
    if (!m_profile.cookiePrearranged)
        throw std::invalid_argument(m_profile.platform + ": no pre-arranged cookies (behaviour.cookie_methods)");
    if (m_cookieMode != CookieMode::None && (m_cookieMode != CookieMode::Prearranged || name != m_cookieName))
        throw std::invalid_argument("cookie persistence on '" + m_cookieName + "' already, not '" + name + "'");
    m_cookieMode = CookieMode::Prearranged;
    m_cookieName = name;
    m_cookieServers[value] = server;
}

std::string
WebSwitch::InsertedCookieValue(uint32_t server) const
{
    std::ostringstream o;
    Ipv4Address(m_servers.at(server).serverIp).Print(o);
    return o.str();
}

void
WebSwitch::SetCookiePersistence(CookieMode mode, const std::string& name)
{
    const bool offered = (mode == CookieMode::Insert && m_profile.cookieInsert) ||
                         (mode == CookieMode::Learn && m_profile.cookieLearn);
    if (!offered)
        throw std::invalid_argument(m_profile.platform + ": cookie " +
                                    (mode == CookieMode::Insert  ? "insert"
                                     : mode == CookieMode::Learn ? "learn"
                                                                 : "mode") +
                                    " not offered (behaviour.cookie_methods)");
    if (m_cookieMode != CookieMode::None)
        throw std::invalid_argument("cookie persistence on '" + m_cookieName + "' already");
    uint32_t nameLen = 0, valOff = 0, valLen = 0, nOff = 0;
    const std::string probe = name + "=x";
    if (name.empty() || name.size() > DP_COOKIE_MAX_NAME ||
        dp_cookie_setcookie(reinterpret_cast<const uint8_t*>(probe.data()), static_cast<uint32_t>(probe.size()),
                            &nOff, &nameLen, &valOff, &valLen, nullptr) != 0 ||
        nameLen != name.size())
        throw std::invalid_argument("cookie name '" + name + "' refused");
    m_cookieMode = mode;
    m_cookieName = name;
    if (mode == CookieMode::Insert)
        for (uint32_t k = 0; k < m_servers.size(); ++k)
            m_cookieServers[InsertedCookieValue(k)] = k;
    else
    {
        dp_persist_config_t cfg{m_persistEntries, DP_PERSIST_MAX_KEY, 0, DP_PERSIST_FULL_PURGE};
        m_learnMem.assign((dp_persist_memory_size(&cfg) + 7) / 8, 0);
        m_learned = dp_persist_create(m_learnMem.data(), m_learnMem.size() * 8, &cfg);
    }
}

bool
WebSwitch::PersistKey(const uint8_t* v, uint32_t len, uint8_t key[DP_PERSIST_MAX_KEY])
{
    // cookie values hold no NUL (RFC 6265 4.1.1 cookie-octet), so zero
    // padding keeps distinct values distinct
    if (len == 0 || len > DP_PERSIST_MAX_KEY)
        return false;
    std::fill(key, key + DP_PERSIST_MAX_KEY, 0);
    std::copy(v, v + len, key);
    return true;
}

uint64_t
WebSwitch::DropCount(const std::string& reason) const
{
    auto it = m_drops.find(reason);
    return it == m_drops.end() ? 0 : it->second;
}

void
WebSwitch::Remove(uint64_t key)
{
    auto it = m_clients.find(key);
    if (it == m_clients.end())
        return;
    SyncSplice(it->second, true);
    for (const ServerConn& s : it->second.sconns)
        m_byLocalPort.erase(s.localPort);
    for (auto* buf : {&it->second.head, &it->second.respHead})
        if (*buf)
            m_freeHeads.push_back(std::move(*buf));
    m_clients.erase(it);
}

std::unique_ptr<uint8_t[]>
WebSwitch::TakeHeadBuffer()
{
    // 16 KB buffers come back from closed connections: a fresh one per
    // connection and per response parser had cost about 5,000 instructions
    // a request in malloc (each large allocation consolidates the heap)
    if (m_freeHeads.empty())
        return std::unique_ptr<uint8_t[]>(new uint8_t[kHeadCap]);
    std::unique_ptr<uint8_t[]> b = std::move(m_freeHeads.back());
    m_freeHeads.pop_back();
    return b;
}

void
WebSwitch::Drop(const std::string& reason, Ptr<const Packet> p)
{
    ++m_drops[reason];
    m_dropTrace(reason, p);
}

// --- receive -----------------------------------------------------------

namespace
{
/// The packet as dp_parse wants it, in f (reused: its capacity stays): a
/// 14-byte Ethernet header (addresses zero: point-to-point links have
/// none) in front of the IPv4 packet.
void
AsFrame(Ptr<const Packet> p, std::vector<uint8_t>& f)
{
    f.resize(DP_ETH_HDR_LEN + p->GetSize());
    std::fill(f.begin(), f.begin() + DP_ETH_HDR_LEN, 0);
    f[12] = 0x08;
    p->CopyData(f.data() + DP_ETH_HDR_LEN, p->GetSize());
}
} // namespace

bool
WebSwitch::ReceiveFromClient(Ptr<NetDevice>, Ptr<const Packet> pkt, uint16_t proto, const Address&)
{
    if (proto != kIpv4)
    {
        Drop(dp_drop_reason_name(DP_DROP_ETH_UNSUPPORTED_TYPE), pkt);
        return true;
    }
    std::vector<uint8_t>& f = m_frame;
    AsFrame(pkt, f);
    dp_parsed_t p;
    ++m_counters.packets;
    const dp_drop_reason_t r = dp_parse(f.data(), f.size(), nullptr, &p, &m_counters.spliceOps);
    if (r != DP_OK)
        Drop(dp_drop_reason_name(r), pkt);
    else if (p.ip_proto != DP_IPPROTO_TCP || (p.dst_ip != m_vip && !OtherVip(p.dst_ip)) ||
             (p.dst_port != m_vport && (m_sslPort == 0 || p.dst_port != m_sslPort)))
        Drop(dp_drop_reason_name(DP_DROP_NO_VIRTUAL_SERVICE), pkt);
    else if (!DropOverload(f, p, pkt)) // dropped: Finish prices the SYN read
    {
        if (m_l4 != L4Forwarding::Off)
            HandleL4Client(f, p, pkt);
        else
            HandleClient(f, p, pkt);
    }
    Finish();
    return true;
}

bool
WebSwitch::ReceiveFromServer(Ptr<NetDevice> dev, Ptr<const Packet> pkt, uint16_t proto, const Address&)
{
    uint32_t server = 0;
    while (server < m_servers.size() && m_servers[server].dev != dev)
        ++server;
    if (proto != kIpv4)
    {
        Drop(dp_drop_reason_name(DP_DROP_ETH_UNSUPPORTED_TYPE), pkt);
        return true;
    }
    std::vector<uint8_t>& f = m_frame;
    AsFrame(pkt, f);
    dp_parsed_t p;
    ++m_counters.packets;
    const dp_drop_reason_t r = dp_parse(f.data(), f.size(), nullptr, &p, &m_counters.spliceOps);
    if (r != DP_OK || p.ip_proto != DP_IPPROTO_TCP || p.src_ip != m_servers[server].serverIp)
    {
        // an echo reply is looked for among what the spliced path refuses
        // (dp_parse reads no ICMP), so that path pays nothing for it
        if (!(m_checking && m_checkCfg.kind == DP_HEALTH_PING && EchoReply(server, f)))
            Drop(dp_drop_reason_name(r != DP_OK ? r : DP_DROP_NO_SESSION), pkt);
    }
    else if (m_probeByPort.count(p.dst_port))
        ProbeSegment(server, f, p);
    else if (m_l4 == L4Forwarding::Nat)
        HandleL4Server(f, p, pkt);
    else
        HandleServer(server, f, p, pkt);
    Finish();
    return true;
}

// --- L4 balancing ------------------------------------------------------

void
WebSwitch::HandleL4Client(std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<const Packet> pkt)
{
    const uint64_t key = ClientKey(p.src_ip, p.src_port);
    auto it = m_l4Sessions.find(key);
    if ((p.tcp_flags & kSyn) && !(p.tcp_flags & kAck) && (it == m_l4Sessions.end() || it->second.closing))
    {
        const int32_t server = PickServer();
        if (server < 0)
        {
            Drop("no_server_up", pkt);
            return;
        }
        it = m_l4Sessions.insert_or_assign(key, L4Session{static_cast<uint32_t>(server), p.dst_ip, false}).first;
        SyncL4Session(key, it->second);
    }
    else if (it == m_l4Sessions.end())
    {
        Drop(dp_drop_reason_name(DP_DROP_NO_SESSION), pkt);
        ResetWithoutSession(f, p, m_clientDev);
        return;
    }
    if ((p.tcp_flags & (kFin | kRst)) && !it->second.closing)
    {
        it->second.closing = true;
        SyncL4Session(key, it->second);
    }
    const Server& srv = m_servers[it->second.server];
    if (m_l4 == L4Forwarding::Nat)
        Rewrite(f, p, p.src_ip, p.src_port, srv.serverIp, p.dst_port);
    Emit(srv.dev, f, static_cast<uint16_t>(f.size() - DP_ETH_HDR_LEN));
}

void
WebSwitch::HandleL4Server(std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<const Packet> pkt)
{
    const auto it = m_l4Sessions.find(ClientKey(p.dst_ip, p.dst_port));
    if (it == m_l4Sessions.end())
    {
        Drop(dp_drop_reason_name(DP_DROP_NO_SESSION), pkt);
        return;
    }
    if (Standby(it->second.vip))
    {
        Drop("standby", pkt);
        return;
    }
    // from the virtual address the client opened the connection to
    Rewrite(f, p, it->second.vip, p.src_port, p.dst_ip, p.dst_port);
    Emit(m_clientDev, f, static_cast<uint16_t>(f.size() - DP_ETH_HDR_LEN));
}

// --- client side -------------------------------------------------------

void
WebSwitch::HandleClient(std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<const Packet> pkt)
{
    const uint8_t* tcp = f.data() + p.l4_offset;
    const uint32_t seq = Rd32(tcp + 4);
    const uint32_t ack = Rd32(tcp + 8);
    const uint8_t flags = p.tcp_flags;
    const uint64_t key = ClientKey(p.src_ip, p.src_port);

    if ((flags & kSyn) && !(flags & kAck))
    {
        auto old = m_clients.find(key);
        if (old != m_clients.end() && old->second.sp.client_isn == seq)
        {
            // a retransmitted SYN: the same answer again
            m_counters.handshakeSegments += 2;
            ToClient(old->second, old->second.sp.vip_isn, seq + 1, kSyn | kAck);
            return;
        }
        if (old != m_clients.end())
            Remove(key); // a new connection from the same port (another ISN): what was kept of the old one is stale
        ClientConn& c = m_clients[key];
        c.vip = p.dst_ip;
        c.clientIp = p.src_ip;
        c.clientPort = p.src_port;
        c.port = p.dst_port;
        c.tls = m_sslPort != 0 && p.dst_port == m_sslPort;
        c.head = TakeHeadBuffer();
        dp_splice_accept(&c.sp, seq, static_cast<uint32_t>(m_rng()), &m_counters.spliceOps);
        ++m_counters.connectionSides;
        m_counters.handshakeSegments += 2; // the SYN and the SYN-ACK
        ToClient(c, c.sp.vip_isn, seq + 1, kSyn | kAck);
        return;
    }
    auto it = m_clients.find(key);
    if (it == m_clients.end())
    {
        Drop(dp_drop_reason_name(DP_DROP_NO_SESSION), pkt);
        ResetWithoutSession(f, p, m_clientDev);
        return;
    }
    ClientConn& c = it->second;
    const uint8_t* payload = f.data() + p.payload_offset;
    const uint32_t plen = p.payload_len;
    const bool boundOpen = c.bound >= 0 && c.sconns[c.bound].state == ServerConn::Open;

    if (flags & kRst)
    {
        if (boundOpen)
        {
            ServerConn& s = c.sconns[c.bound];
            Rewrite(f, p, SelfAddress(c.vip, s.server), s.localPort, m_servers[s.server].serverIp, c.port);
            dp_splice_xlate(&c.sp, DP_SPLICE_C2S, f.data(), f.size(), &p, &m_counters.spliceOps);
            Emit(m_servers[s.server].dev, f, p.ip_total_len);
        }
        Remove(key);
        return;
    }
    if (c.sp.state == DP_SPLICE_SYN_RCVD)
    {
        uint32_t skip = 0, take = 0;
        if (dp_splice_take(&c.sp, seq, (flags & kAck) != 0, ack, 0, &skip, &take, &m_counters.spliceOps) < 0)
        {
            Drop("splice_bad_handshake_ack", pkt);
            return;
        }
        if (plen == 0 && !(flags & kFin))
        {
            ++m_counters.handshakeSegments;
            return; // the handshake's ACK: the request comes next
        }
    }
    const bool spliced = c.sp.state == DP_SPLICE_SPLICED;
    const bool newBytes = plen > 0 && dp_splice_after(seq + plen, c.sp.c_next);
    if (plen > 0 && (!spliced || c.reading || (newBytes && !c.tls)))
    {
        if (c.refused)
        {
            Drop("data_after_refusal", pkt);
            return;
        }
        if (spliced && !c.reading && boundOpen && (flags & kAck) &&
            !(m_rstSeqDefect && m_profile.keepalive == KeepAliveStrategy::Redirect302))
        {
            // The ACK this request carries acknowledges the bound server's
            // last response bytes; the request itself is held until its
            // server is chosen, so the ACK goes on alone (seed 003 section
            // 5.4: without it the old server retransmits).
            const ServerConn& s = c.sconns[c.bound];
            ToServer(c, s, s.localNext, dp_splice_map_ack(&c.sp, DP_SPLICE_C2S, ack), kAck);
        }
        uint32_t skip = 0, take = 0;
        const int rc = dp_splice_take(&c.sp, seq, (flags & kAck) != 0, ack, plen, &skip, &take,
                                      &m_counters.spliceOps);
        if (rc == DP_SPLICE_EGAP)
        {
            Drop("splice_gap", pkt);
            return;
        }
        if (take > 0)
            TakeRequestBytes(c, payload + skip, take, seq + skip, pkt);
        if (c.dead)
        {
            Remove(key);
            return;
        }
        ToClient(c, c.sp.v_next, c.sp.c_next, kAck);
        if (!(flags & kFin))
            return;
    }
    else if (plen > 0 && !boundOpen)
    {
        Drop("retransmission_without_server", pkt);
        return;
    }

    if (spliced && boundOpen && !c.reading && !c.switchFin)
    {
        ServerConn& s = c.sconns[c.bound];
        Rewrite(f, p, SelfAddress(c.vip, s.server), s.localPort, m_servers[s.server].serverIp, c.port);
        dp_splice_xlate(&c.sp, DP_SPLICE_C2S, f.data(), f.size(), &p, &m_counters.spliceOps);
        const uint32_t end = Rd32(f.data() + p.l4_offset + 4) + plen + ((flags & kFin) ? 1u : 0u);
        if (dp_splice_after(end, s.localNext))
            s.localNext = end;
        Emit(m_servers[s.server].dev, f, p.ip_total_len);
        if (c.serverFinSeen && (flags & kAck) && ack == c.serverFinEnd)
            c.serverFinAcked = true;
        if ((flags & kFin) && !c.clientFinSeen)
        {
            c.clientFinSeen = true;
            c.clientFinEnd = c.sp.c_next;
            SyncSplice(c);
        }
        if (c.clientFinAcked && c.serverFinAcked)
            Remove(key); // the close is complete both ways
        return;
    }
    if (flags & kFin)
    {
        if (c.reading)
        {
            RefuseRequest(c, c.tls ? "ssl_incomplete_at_fin" : "http_incomplete_at_fin", pkt);
            if (c.dead)
                Remove(key);
            return;
        }
        // the client closes a connection with no server behind it: the
        // switch ends it itself (its FIN, or only the ACK when it sent one)
        c.sp.c_next = seq + plen + 1;
        c.clientFinSeen = true;
        if (c.switchFin)
        {
            ToClient(c, c.sp.v_next, c.sp.c_next, kAck);
            if ((flags & kAck) && ack == c.sp.v_next)
                Remove(key); // both FINs acknowledged
        }
        else
        {
            ToClient(c, c.sp.v_next, c.sp.c_next, kFin | kAck);
            c.sp.v_next += 1;
            c.switchFin = true;
        }
        return;
    }
    if (plen == 0 && c.switchFin)
    {
        if (c.clientFinSeen && (flags & kAck) && ack == c.sp.v_next)
            Remove(key); // the last ACK of a connection the switch closed
        return;
    }
    if (!c.reading && c.pending < 0)
        Drop("ack_without_server", pkt); // e.g. the ACK of a 302, or after the server was reset
}

void
WebSwitch::TakeRequestBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq, Ptr<const Packet> pkt)
{
    if (!c.reading && c.pending >= 0)
    {
        // more bytes while the server connection is being opened: they
        // follow the head to the same server
        c.reqRaw.insert(c.reqRaw.end(), data, data + len);
        return;
    }
    if (c.tls)
    {
        TakeHelloBytes(c, data, len, seq, pkt);
        return;
    }
    if (!c.reading)
    {
        c.reading = true;
        c.reqStart = seq;
        c.reqRaw.clear();
        dp_http_config_t cfg{m_maxLine, 101};
        dp_http_init(&c.req, &cfg, c.head.get(), kHeadCap, 0);
    }
    c.reqRaw.insert(c.reqRaw.end(), data, data + len);
    size_t used = 0;
    const int rc = dp_http_feed(&c.req, data, len, &used, &m_counters.httpOps);
    if (rc == DP_HTTP_DONE)
        RequestComplete(c);
    else if (rc == DP_HTTP_EMALFORMED)
        RefuseRequest(c, dp_drop_reason_name(DP_DROP_HTTP_MALFORMED), pkt);
    else if (rc < 0)
        RefuseRequest(c, dp_drop_reason_name(DP_DROP_HTTP_TOO_LARGE), pkt);
}

void
WebSwitch::TakeHelloBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq, Ptr<const Packet> pkt)
{
    if (!c.reading)
    {
        c.reading = true;
        c.reqStart = seq;
        c.reqRaw.clear();
    }
    c.reqRaw.insert(c.reqRaw.end(), data, data + len);
    dp_tls_hello_t h;
    const int rc = dp_tls_parse_client_hello(c.reqRaw.data(), c.reqRaw.size(), &h, &m_counters.httpOps);
    if (rc == DP_TLS_MORE)
        return;
    ++m_counters.requests;
    uint8_t key[DP_PERSIST_MAX_KEY] = {};
    int32_t server = -1;
    if (rc != DP_TLS_OK)
    {
        // not a ClientHello dp_tls reads (another record type, SSLv2, a
        // length that disagrees): the profile's action, counted by name
        const std::string reason = std::string("ssl_") + dp_tls_status_name(rc);
        if (m_sslUnparsedDrop)
        {
            RefuseRequest(c, reason, pkt); // an RST: no HTTP answer on the SSL service
            return;
        }
        ++m_forwarded[reason];
    }
    else if (h.session_id_len > 0)
    {
        // HAProxy "stick on req.ssl_sid": the offered ID is looked up...
        std::copy(h.session_id, h.session_id + h.session_id_len, key);
        server = dp_persist_lookup(m_sslIds, key, 0, &m_counters.persistOps);
        if (server >= 0 && !IsServerUp(static_cast<uint32_t>(server)))
        {
            ++m_counters.notFollowedDown;
            server = -1;
        }
        if (server >= 0)
            ++m_counters.sslHits;
    }
    c.reading = false;
    if (server < 0)
        server = PickServer();
    // ... and stored with the server it goes to (the ServerHello's own ID
    // is stored when it passes, ResponseBytes)
    if (rc == DP_TLS_OK && h.session_id_len > 0)
        Store(PersistTable::SslIds, key, server);
    OpenServer(c, static_cast<uint32_t>(server));
}

int32_t
WebSwitch::PickServer()
{
    EnsurePool();
    const dp_sched_key_t key{};
    const int32_t k = dp_sched_pick(m_pool, &key, 0, &m_counters.ruleOps);
    return k >= 0 ? k : static_cast<int32_t>(m_defaultServer);
}

uint32_t
WebSwitch::Usable(uint32_t server)
{
    if (IsServerUp(server))
        return server;
    ++m_counters.notFollowedDown;
    return static_cast<uint32_t>(PickServer());
}

void
WebSwitch::EnsurePool()
{
    if (!m_pool)
    {
        dp_sched_config_t cfg{};
        cfg.algo = DP_SCHED_RR;
        cfg.max_servers = static_cast<uint32_t>(m_servers.size());
        m_poolMem.assign((dp_sched_memory_size(&cfg) + 7) / 8, 0);
        m_pool = dp_sched_create(m_poolMem.data(), m_poolMem.size() * 8, &cfg);
        for (uint32_t k = 0; k < m_servers.size(); ++k)
        {
            dp_sched_server_t srv{};
            srv.weight = 1;
            dp_sched_set_server(m_pool, k, &srv, nullptr);
        }
        dp_sched_build(m_pool, 0, nullptr);
    }
}

void
WebSwitch::AddSslService(uint16_t port)
{
    if (!m_profile.sslIdPersistence)
        throw std::invalid_argument(m_profile.platform + ": no SSL session-ID persistence (features.l7)");
    if (port == 0 || port == m_vport)
        throw std::invalid_argument("SSL service port " + std::to_string(port) + " refused");
    m_sslPort = port;
    dp_persist_config_t cfg{m_persistEntries, DP_PERSIST_MAX_KEY, 0, DP_PERSIST_FULL_PURGE};
    m_sslMem.assign((dp_persist_memory_size(&cfg) + 7) / 8, 0);
    m_sslIds = dp_persist_create(m_sslMem.data(), m_sslMem.size() * 8, &cfg);
}

uint64_t
WebSwitch::ForwardedCount(const std::string& reason) const
{
    auto it = m_forwarded.find(reason);
    return it == m_forwarded.end() ? 0 : it->second;
}

void
WebSwitch::RefuseRequest(ClientConn& c, const std::string& reason, Ptr<const Packet> pkt)
{
    Drop(reason, pkt);
    c.reading = false;
    c.refused = true;
    if (m_malformed == static_cast<int>(MalformedAction::Reset) || c.tls)
    {
        ToClient(c, c.sp.v_next, c.sp.c_next, kRst | kAck);
        c.dead = true; // the caller removes it
        return;
    }
    static const std::string answer =
        "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    ToClient(c, c.sp.v_next, c.sp.c_next, kAck | kPsh | kFin, reinterpret_cast<const uint8_t*>(answer.data()),
             static_cast<uint16_t>(answer.size()));
    c.sp.v_next += static_cast<uint32_t>(answer.size()) + 1;
    c.switchFin = true;
}

uint32_t
WebSwitch::ChooseServer(ClientConn& c)
{
    c.persist = dp_persist_cookie_request_t{};
    c.persist.server = c.persist.cookie_server = -1;
    if (m_cookieMode != CookieMode::None)
    {
        int32_t named = -1;
        uint32_t off = 0, len = 0;
        const uint8_t* v = c.head.get() + c.req.cookie.off;
        if (c.req.cookie.len > 0 &&
            dp_cookie_find(v, c.req.cookie.len, m_cookieName.c_str(), &off, &len, &m_counters.httpOps) == 0)
        {
            uint8_t key[DP_PERSIST_MAX_KEY];
            if (m_cookieMode == CookieMode::Learn)
                named = PersistKey(v + off, len, key)
                            ? dp_persist_lookup(m_learned, key, 0, &m_counters.persistOps)
                            : -1;
            else
            {
                auto it = m_cookieServers.find(std::string(reinterpret_cast<const char*>(v + off), len));
                named = it == m_cookieServers.end() ? -1 : static_cast<int32_t>(it->second);
            }
        }
        // HAProxy's request phase: insert mode remembers whether the
        // request came by a valid cookie (then nothing is inserted); the
        // servers' own cookies (pre-arranged, learn) are read only
        const dp_persist_cookie_config_t cfg{m_cookieMode == CookieMode::Insert ? DP_PERSIST_COOKIE_INSERT
                                                                                : DP_PERSIST_COOKIE_PASSIVE,
                                             0};
        const int usable = named >= 0 && IsServerUp(static_cast<uint32_t>(named));
        if (named >= 0 && !usable)
            ++m_counters.notFollowedDown;
        dp_persist_cookie_request(&cfg, named < 0 ? -1 : named, usable, &c.persist, &m_counters.persistOps);
        if (c.persist.actions & DP_PERSIST_REQ_USE_COOKIE_SERVER)
        {
            ++m_counters.cookieHits;
            return static_cast<uint32_t>(c.persist.server);
        }
    }
    const dp_http_span_t path = dp_http_path(&c.req, &m_counters.httpOps);
    dp_urlrule_req_t r{c.head.get() + path.off, path.len, c.head.get() + c.req.host.off, c.req.host.len};
    uint32_t target = m_defaultServer;
    if (!m_rules || m_profile.ruleMatching == RuleMatching::None)
        return GroupMember(c, target);
    if (m_profile.ruleMatching == RuleMatching::FirstMatch)
    {
        dp_urlrule_match(m_rules, &r, &target, &m_counters.ruleOps);
        return GroupMember(c, target);
    }
    // best match: every rule evaluated, the first in precedence order wins;
    // per server: every server's list (here each server holds the whole
    // table) evaluated before the switch knows which servers qualify
    const size_t lists = m_profile.ruleMatching == RuleMatching::PerServerAll ? m_servers.size() : 1;
    uint32_t first = 0;
    int matches = 0;
    for (size_t i = 0; i < lists; ++i)
        matches = dp_urlrule_match_all(m_rules, &r, &first, 1, &m_counters.ruleOps);
    return GroupMember(c, matches > 0 ? dp_urlrule_get(m_rules, first)->target : target);
}

uint32_t
WebSwitch::GroupMember(const ClientConn& c, uint32_t target) const
{
    if (m_groups.empty())
        return target;
    const std::vector<uint32_t>& g = m_groups.at(target);
    return g[(c.clientIp + c.clientPort) % g.size()];
}

void
WebSwitch::RequestComplete(ClientConn& c)
{
    c.reading = false;
    ++m_counters.requests;
    const uint32_t server = Usable(ChooseServer(c));
    const KeepAliveStrategy ka = m_profile.keepalive;
    const bool boundOpen = c.bound >= 0 && c.sconns[c.bound].state == ServerConn::Open;

    if (ka == KeepAliveStrategy::Redirect302 && boundOpen && c.sconns[c.bound].server != server)
    {
        // the content is on another server: a 302 to the same URL, and the
        // old server connection closed; the client asks again, and finds
        // no server bound
        const dp_http_span_t t = c.req.target;
        const std::string host(reinterpret_cast<const char*>(c.head.get() + c.req.host.off), c.req.host.len);
        const std::string target(reinterpret_cast<const char*>(c.head.get() + t.off), t.len);
        const std::string answer =
            "HTTP/1.1 302 Found\r\nLocation: http://" + host + target + "\r\nContent-Length: 0\r\n\r\n";
        ToClient(c, c.sp.v_next, c.sp.c_next, kAck | kPsh, reinterpret_cast<const uint8_t*>(answer.data()),
                 static_cast<uint16_t>(answer.size()));
        c.sp.v_next += static_cast<uint32_t>(answer.size());
        ++m_counters.redirects;
        ResetServer(c, c.bound, m_rstSeqDefect);
        c.bound = -1;
        c.reqRaw.clear();
        return;
    }
    if (ka == KeepAliveStrategy::DowngradeClose && (c.req.flags & DP_HTTP_F_KEEPALIVE))
    {
        // Foundry, Radware: the request goes on with "Connection: close",
        // so the server ends the connection after its response
        static const std::string close = "Connection: close\r\n";
        c.reqRaw.insert(c.reqRaw.begin() + c.req.blank_line, close.begin(), close.end());
        ++m_counters.rewrites;
    }
    if (boundOpen && c.sconns[c.bound].server == server && ka != KeepAliveStrategy::DowngradeClose)
    {
        BindAndSend(c, c.bound);
        return;
    }
    if (ka == KeepAliveStrategy::ServerReuse)
        for (size_t i = 0; i < c.sconns.size(); ++i)
            if (c.sconns[i].server == server && c.sconns[i].state == ServerConn::Open)
            {
                ++m_counters.serverReuses;
                BindAndSend(c, static_cast<int>(i));
                return;
            }
    OpenServer(c, server);
}

void
WebSwitch::OpenServer(ClientConn& c, uint32_t server)
{
    ServerConn s;
    s.server = server;
    s.localPort = m_nextPort++;
    s.localIsn = static_cast<uint32_t>(m_rng());
    s.state = ServerConn::SynSent;
    c.sconns.push_back(s);
    c.pending = static_cast<int>(c.sconns.size() - 1);
    m_byLocalPort[s.localPort] = ClientKey(c.clientIp, c.clientPort);
    ++m_counters.connectionSides;
    ++m_counters.handshakeSegments;
    ToServer(c, s, s.localIsn, 0, kSyn);
}

void
WebSwitch::BindAndSend(ClientConn& c, int idx)
{
    ServerConn& s = c.sconns[idx];
    const uint32_t clientLen = c.sp.c_next - c.reqStart;
    const uint32_t sentLen = static_cast<uint32_t>(c.reqRaw.size());
    // D_c maps the client's next byte after the request to the server's
    // next byte after what is sent (longer by a rewrite's insertion)
    const uint32_t localSeq = s.localNext + sentLen - clientLen;
    dp_splice_bind(&c.sp, c.reqStart, localSeq, s.serverNext, c.sp.v_next, &m_counters.spliceOps);
    c.bound = idx;
    SpliceBinding b{c.clientPort, s.localPort, s.server, c.reqStart, localSeq - c.reqStart,
                    c.sp.v_next - s.serverNext, Simulator::Now()};
    m_bindings.push_back(b);
    m_bindTrace(b);
    const uint32_t mss = 1448;
    for (uint32_t off = 0; off < sentLen; off += mss)
    {
        const uint32_t n = std::min(mss, sentLen - off);
        ToServer(c, s, s.localNext, s.serverNext, kAck | kPsh, c.reqRaw.data() + off, static_cast<uint16_t>(n));
        s.localNext += n;
    }
    c.reqRaw.clear();
    c.respActive = false;
    SyncSplice(c);
}

void
WebSwitch::ResetServer(ClientConn& c, int idx, bool defect)
{
    ServerConn& s = c.sconns[idx];
    // correct: the next sequence number the server expects; the CSS
    // defect: the client's number, not translated to the server's space
    // (assumption: the paper says only that it was wrong)
    const uint32_t seq = defect ? c.sp.c_next : s.localNext;
    ToServer(c, s, seq, s.serverNext, kRst | kAck);
    s.state = ServerConn::Closed;
    ++m_counters.serverResets;
}

// --- server side -------------------------------------------------------

void
WebSwitch::HandleServer(uint32_t server, std::vector<uint8_t>& f, const dp_parsed_t& p, Ptr<const Packet> pkt)
{
    auto port = m_byLocalPort.find(p.dst_port);
    auto it = port == m_byLocalPort.end() ? m_clients.end() : m_clients.find(port->second);
    if (it == m_clients.end())
    {
        Drop(dp_drop_reason_name(DP_DROP_NO_SESSION), pkt);
        ResetWithoutSession(f, p, m_servers[server].dev);
        return;
    }
    ClientConn& c = it->second;
    if (Standby(c.vip))
    {
        Drop("standby", pkt);
        return;
    }
    int idx = -1;
    for (size_t i = 0; i < c.sconns.size(); ++i)
        if (c.sconns[i].localPort == p.dst_port && c.sconns[i].server == server)
            idx = static_cast<int>(i);
    if (idx < 0)
    {
        Drop(dp_drop_reason_name(DP_DROP_NO_SESSION), pkt);
        return;
    }
    ServerConn& s = c.sconns[idx];
    const uint8_t* tcp = f.data() + p.l4_offset;
    const uint32_t seq = Rd32(tcp + 4);
    const uint32_t ack = Rd32(tcp + 8);
    const uint8_t flags = p.tcp_flags;
    const uint32_t plen = p.payload_len;

    if ((flags & kSyn) && (flags & kAck))
    {
        if (s.state != ServerConn::SynSent || ack != s.localIsn + 1)
        {
            Drop("server_bad_syn_ack", pkt);
            return;
        }
        s.serverNext = seq + 1;
        s.localNext = s.localIsn + 1;
        s.state = ServerConn::Open;
        m_counters.handshakeSegments += 2; // the SYN-ACK and the ACK
        ToServer(c, s, s.localNext, s.serverNext, kAck);
        if (c.pending == idx)
        {
            c.pending = -1;
            BindAndSend(c, idx);
        }
        return;
    }
    if (s.state != ServerConn::Open)
    {
        Drop("server_connection_closed", pkt);
        return;
    }
    if (idx != c.bound)
    {
        Drop("server_connection_idle", pkt);
        return;
    }
    const uint32_t end = seq + plen + ((flags & kFin) ? 1u : 0u);
    const bool fresh = dp_splice_after(end, s.serverNext); // not a retransmission
    // the bytes before serverNext were read already (a retransmission that
    // also carries new bytes reads only those)
    const uint32_t seen = fresh && dp_splice_after(s.serverNext, seq) ? std::min(s.serverNext - seq, plen) : 0;
    if (fresh && dp_splice_after(seq, s.serverNext) && c.respActive && c.bodyLeft != UINT64_MAX)
    {
        // bytes this switch never saw: a mirrored connection's, which the
        // peer passed before the takeover (on one switch, the server does
        // not send past a gap)
        c.bodyLeft -= std::min<uint64_t>(c.bodyLeft, seq - s.serverNext);
    }
    if (fresh)
        s.serverNext = end;
    if (flags & kRst)
        s.state = ServerConn::Closed;
    else if (plen > seen && fresh && c.tls)
        ServerHelloBytes(c, f.data() + p.payload_offset + seen, plen - seen);
    else if (plen > seen && fresh)
        ResponseBytes(c, f.data() + p.payload_offset + seen, plen - seen, seq + seen); // read before any edit
    dp_parsed_t q = p;
    if (c.edit)
        ApplyEdit(c, f, q, seq, pkt);
    Rewrite(f, q, c.vip, c.port, c.clientIp, c.clientPort);
    dp_splice_xlate(&c.sp, DP_SPLICE_S2C, f.data(), f.size(), &q, &m_counters.spliceOps);
    EmitToClient(c, f, q);
    if (c.clientFinSeen && (flags & kAck) && Rd32(f.data() + p.l4_offset + 8) == c.clientFinEnd)
        c.clientFinAcked = true; // (the ack, translated, is in the client's space)
    if ((flags & kFin) && !c.serverFinSeen)
    {
        c.serverFinSeen = true;
        c.serverFinEnd = c.sp.v_next;
        SyncSplice(c);
    }
    if (c.clientFinAcked && c.serverFinAcked)
        Remove(port->second); // the close is complete both ways
}

void
WebSwitch::ResponseBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq)
{
    const uint32_t endSeq = seq + len;
    while (len > 0)
    {
        if (!c.respActive)
        {
            c.respActive = true;
            c.respHeadSeq = endSeq - len;
            c.bodyLeft = 0;
            if (!c.respHead)
                c.respHead = TakeHeadBuffer();
            dp_http_config_t cfg{m_maxLine, 101};
            dp_http_init(&c.resp, &cfg, c.respHead.get(), kHeadCap, 1);
        }
        if (c.resp.status == DP_HTTP_MORE)
        {
            size_t used = 0;
            const int rc = dp_http_feed(&c.resp, data, len, &used, &m_counters.httpOps);
            data += used;
            len -= static_cast<uint32_t>(used);
            if (rc < 0 || (rc == DP_HTTP_DONE && !(c.resp.flags & DP_HTTP_F_HAS_LENGTH)))
            {
                // not a response the switch can frame: it passes unframed
                c.bodyLeft = UINT64_MAX;
                return;
            }
            if (rc == DP_HTTP_MORE)
                return;
            c.bodyLeft = c.resp.content_length;
            c.respEnd = endSeq - len + static_cast<uint32_t>(c.bodyLeft);
            ResponseHead(c);
            SyncSplice(c); // after ResponseHead: a pending insert is mirrored once made (ApplyEdit)
        }
        const uint32_t body = static_cast<uint32_t>(std::min<uint64_t>(c.bodyLeft, len));
        c.bodyLeft -= body;
        data += body;
        len -= body;
        if (c.bodyLeft == 0)
            ResponseComplete(c);
    }
}

void
WebSwitch::ServerHelloBytes(ClientConn& c, const uint8_t* data, uint32_t len)
{
    if (c.respActive)
        return; // the first record was read
    c.respRaw.insert(c.respRaw.end(), data, data + len);
    dp_tls_server_hello_t h;
    const int rc = dp_tls_parse_server_hello(c.respRaw.data(), c.respRaw.size(), &h, &m_counters.httpOps);
    if (rc == DP_TLS_MORE)
        return;
    c.respActive = true;
    c.respRaw.clear();
    if (rc != DP_TLS_OK)
    {
        ++m_forwarded[std::string("ssl_server_") + dp_tls_status_name(rc)];
        return;
    }
    // HAProxy "stick store-response payload_lv(43,1) if serverhello": the
    // ID the server chose, which the client offers when it comes back
    uint8_t key[DP_PERSIST_MAX_KEY] = {};
    std::copy(h.session_id, h.session_id + h.session_id_len, key);
    if (h.session_id_len > 0 &&
        Store(PersistTable::SslIds, key, static_cast<int32_t>(c.sconns[c.bound].server)) >= 0)
        ++m_counters.sslLearned;
}

void
WebSwitch::ResponseHead(ClientConn& c)
{
    if ((m_cookieMode != CookieMode::Learn && m_cookieMode != CookieMode::Insert) || c.bound < 0)
        return;
    const uint32_t served = c.sconns[c.bound].server;
    dp_http_span_t value{};
    const bool serverSets = dp_cookie_learn(&c.resp, m_cookieName.c_str(), &value, &m_counters.httpOps) == 0;
    if (m_cookieMode == CookieMode::Learn)
    {
        uint8_t key[DP_PERSIST_MAX_KEY];
        if (serverSets && PersistKey(c.respHead.get() + value.off, value.len, key) &&
            Store(PersistTable::LearnedCookies, key, static_cast<int32_t>(served)) >= 0)
            ++m_counters.cookiesLearned;
        return;
    }
    const dp_persist_cookie_config_t cfg{DP_PERSIST_COOKIE_INSERT, 0};
    const int actions = dp_persist_cookie_response(&cfg, &c.persist, static_cast<int32_t>(served), serverSets, 0,
                                                   &m_counters.persistOps);
    const bool insert = actions >= 0 && ((actions & DP_PERSIST_RESP_INSERT) || (m_insertEveryResponse && !serverSets));
    if (!insert)
        return;
    auto edit = std::make_unique<dp_cookie_edit_t>();
    if (dp_cookie_insert(&c.resp, m_cookieName.c_str(), InsertedCookieValue(served).c_str(), edit.get(),
                         &m_counters.httpOps) == 0)
    {
        c.editSeq = c.respHeadSeq + edit->off;
        c.edit = std::move(edit);
    }
}

bool
WebSwitch::ApplyEdit(ClientConn& c, std::vector<uint8_t>& f, dp_parsed_t& p, uint32_t seq, Ptr<const Packet> pkt)
{
    const uint32_t plen = p.payload_len;
    if (!dp_splice_after(seq + plen, c.editSeq))
        return false; // its place comes in a later segment
    const std::unique_ptr<dp_cookie_edit_t> e = std::move(c.edit);
    if (dp_splice_after(seq, c.editSeq))
    {
        Drop("cookie_insert_point_passed", pkt); // the head's last line went out in an earlier segment
        return false;
    }
    const size_t len = f.size();
    f.resize(len + e->ins_len);
    size_t outLen = 0;
    if (dp_splice_edit_frame(&c.sp, DP_SPLICE_S2C, f.data(), len, f.size(), &p, c.editSeq - seq, e->del,
                             e->ins, e->ins_len, &outLen, &m_counters.spliceOps) != 0)
    {
        f.resize(len);
        Drop("cookie_insert_refused", pkt);
        return false;
    }
    f.resize(outLen);
    SyncSplice(c); // the offsets moved by the insert
    ++m_counters.cookiesInserted;
    ++m_counters.rewrites;
    const ServerConn& s = c.sconns[c.bound];
    m_edits.push_back({c.clientPort, s.localPort, s.server, c.editSeq,
                       std::string(reinterpret_cast<const char*>(e->ins), e->ins_len), Simulator::Now()});
    return true;
}

void
WebSwitch::EmitToClient(ClientConn& c, const std::vector<uint8_t>& f, const dp_parsed_t& p)
{
    const uint32_t mtu = m_clientDev->GetMtu();
    if (p.ip_total_len <= mtu)
    {
        Emit(m_clientDev, f, p.ip_total_len);
        return;
    }
    // grown past the MTU by an insert: two segments, the first as long as
    // the link carries, with the translated numbers (dp_build sums them)
    const uint8_t* tcp = f.data() + p.l4_offset;
    const uint32_t seq = Rd32(tcp + 4), ack = Rd32(tcp + 8);
    const uint8_t flags = p.tcp_flags;
    const uint8_t* payload = f.data() + p.payload_offset;
    const uint16_t first = static_cast<uint16_t>(mtu - DP_IP4_MIN_HDR_LEN - DP_TCP_MIN_HDR_LEN);
    const std::vector<uint8_t> rest(payload + first, payload + p.payload_len);
    ToClient(c, seq, ack, flags & ~(kFin | kPsh), payload, first);
    ToClient(c, seq + first, ack, flags, rest.data(), static_cast<uint16_t>(rest.size()));
}

void
WebSwitch::ResponseComplete(ClientConn& c)
{
    c.respActive = false;
    if (m_profile.keepalive == KeepAliveStrategy::RstServer && c.bound >= 0 &&
        c.sconns[c.bound].state == ServerConn::Open)
        ResetServer(c, c.bound, false); // Nortel: the client side stays kept alive
}

// --- server checks -----------------------------------------------------

namespace
{
uint64_t
NowMs()
{
    // dp_health counts in ms; times are rounded down the way HAProxy's ticks are
    return static_cast<uint64_t>(Simulator::Now().GetMilliSeconds());
}
} // namespace

void
WebSwitch::SetHealthCheck(const dp_health_config_t& cfg, const std::string& uri)
{
    const bool offered = (cfg.kind == DP_HEALTH_PING && m_profile.checkPing) ||
                         (cfg.kind == DP_HEALTH_TCP && m_profile.checkPort) ||
                         (cfg.kind == DP_HEALTH_HTTP && m_profile.checkWebPage) ||
                         (cfg.kind == DP_HEALTH_CONTENT && m_profile.checkContent);
    if (!offered)
        throw std::invalid_argument(m_profile.platform + ": no " + dp_health_kind_name(static_cast<int>(cfg.kind)) +
                                    " server check (features.fault_tolerance)");
    dp_health_t probe;
    if (dp_health_init(&probe, &cfg, 0, 0) != 0)
        throw std::invalid_argument("server check refused by dp_health_init");
    if (m_servers.empty())
        throw std::invalid_argument("server checks need the servers first");
    m_checkCfg = cfg;
    m_checkUri = uri;
    m_health.clear();
    m_health.resize(m_servers.size());
}

void
WebSwitch::StartHealthChecks(Time at)
{
    if (m_health.empty())
        throw std::invalid_argument("no server check set (SetHealthCheck)");
    EnsurePool();
    m_checking = true;
    const uint64_t start = static_cast<uint64_t>(at.GetMilliSeconds());
    const uint32_t n = static_cast<uint32_t>(m_health.size());
    std::vector<dp_health_config_t> all(n, m_checkCfg);
    const uint32_t minInter = dp_health_spread_min_inter(all.data(), n);
    const uint32_t own = dp_health_initial_interval_ms(&m_checkCfg);
    for (uint32_t k = 0; k < n; ++k)
    {
        const uint64_t first = dp_health_first_check_ms(start, k, n, minInter, own, 0);
        dp_health_init(&m_health[k].h, &m_checkCfg, start, first);
        if (m_checkCfg.start == DP_HEALTH_START_DOWN)
            dp_sched_set_state(m_pool, k, DP_SCHED_DOWN, start, &m_counters.healthOps);
        Simulator::Schedule(MilliSeconds(static_cast<int64_t>(first)) - Simulator::Now(), &WebSwitch::Probe, this, k);
    }
}

bool
WebSwitch::IsServerUp(uint32_t server) const
{
    return !m_checking || m_health.at(server).h.up != 0;
}

void
WebSwitch::ProbeSend(uint32_t server, uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload, uint16_t len)
{
    const Server& srv = m_servers[server];
    SendTcp(srv.dev, srv.switchIp, m_health[server].localPort, srv.serverIp, m_vport, seq, ack, flags, payload, len);
}

void
WebSwitch::Probe(uint32_t server)
{
    Health& x = m_health[server];
    x.active = true;
    x.open = false;
    x.headDone = false;
    x.body.clear();
    x.startMs = NowMs();
    ++m_counters.probes;
    if (m_checkCfg.kind == DP_HEALTH_PING)
        EchoRequest(server);
    else
    {
        x.localPort = m_nextPort++;
        m_probeByPort[x.localPort] = server;
        x.next = static_cast<uint32_t>(m_rng());
        ProbeSend(server, x.next, 0, kSyn);
        x.next += 1;
    }
    x.timeout = Simulator::Schedule(MilliSeconds(dp_health_timeout_ms(&m_checkCfg)), &WebSwitch::ProbeTimeout, this,
                                    server);
    Finish();
}

void
WebSwitch::ProbeTimeout(uint32_t server)
{
    Health& x = m_health[server];
    if (x.open)
        ProbeSend(server, x.next, x.serverNext, kRst | kAck); // a slow answer is abandoned
    const dp_health_result_t r = dp_health_classify(&m_checkCfg, 0, 0, 0, nullptr, 0, &m_counters.healthOps);
    ProbeEnd(server, r, x.startMs + dp_health_timeout_ms(&m_checkCfg));
    Finish();
}

void
WebSwitch::ProbeSegment(uint32_t server, const std::vector<uint8_t>& f, const dp_parsed_t& p)
{
    Health& x = m_health[server];
    if (!x.active || m_probeByPort[p.dst_port] != server || p.dst_port != x.localPort)
    {
        Drop("health_probe_closed", nullptr); // e.g. the server's FIN after the switch's RST
        return;
    }
    const uint8_t* tcp = f.data() + p.l4_offset;
    const uint32_t seq = Rd32(tcp + 4);
    const uint8_t flags = p.tcp_flags;
    const dp_health_config_t& cfg = m_checkCfg;
    if (flags & kRst)
    {
        ProbeEnd(server, dp_health_classify(&cfg, 1, 1, 0, nullptr, 0, &m_counters.healthOps), NowMs());
        return;
    }
    if ((flags & kSyn) && (flags & kAck))
    {
        if (x.open)
            return; // a repeated SYN-ACK
        x.serverNext = seq + 1;
        if (cfg.kind == DP_HEALTH_TCP)
        {
            // connected: passed, and closed at once (as HAProxy's port check)
            ProbeSend(server, x.next, x.serverNext, kRst | kAck);
            ProbeEnd(server, dp_health_classify(&cfg, 1, 0, 0, nullptr, 0, &m_counters.healthOps), NowMs());
            return;
        }
        x.open = true;
        if (!x.head)
            x.head.reset(new uint8_t[kHeadCap]);
        dp_http_config_t hc{m_maxLine, 101};
        dp_http_init(&x.resp, &hc, x.head.get(), kHeadCap, 1);
        std::ostringstream host;
        Ipv4Address(m_servers[server].serverIp).Print(host);
        const std::string get = "GET " + m_checkUri + " HTTP/1.0\r\nHost: " + host.str() + "\r\n\r\n";
        ProbeSend(server, x.next, x.serverNext, kAck);
        ProbeSend(server, x.next, x.serverNext, kAck | kPsh, reinterpret_cast<const uint8_t*>(get.data()),
                  static_cast<uint16_t>(get.size()));
        x.next += static_cast<uint32_t>(get.size());
        return;
    }
    if (!x.open)
        return;
    const uint8_t* data = f.data() + p.payload_offset;
    uint32_t len = p.payload_len;
    if (len > 0 && seq == x.serverNext)
    {
        x.serverNext += len;
        if (!x.headDone)
        {
            size_t used = 0;
            const int rc = dp_http_feed(&x.resp, data, len, &used, &m_counters.healthOps);
            if (rc < 0)
            {
                // not an HTTP answer: a status no range accepts
                ProbeSend(server, x.next, x.serverNext, kRst | kAck);
                ProbeEnd(server, dp_health_classify(&cfg, 1, 0, 0, nullptr, 0, &m_counters.healthOps), NowMs());
                return;
            }
            data += used;
            len -= static_cast<uint32_t>(used);
            x.headDone = rc == DP_HTTP_DONE;
            x.bodyLeft = (x.resp.flags & DP_HTTP_F_HAS_LENGTH) ? x.resp.content_length : UINT64_MAX;
        }
        if (x.headDone)
        {
            const uint32_t take = static_cast<uint32_t>(std::min<uint64_t>(x.bodyLeft, len));
            x.body.append(reinterpret_cast<const char*>(data), take);
            x.bodyLeft -= take;
        }
    }
    const bool fin = (flags & kFin) && seq + p.payload_len == x.serverNext;
    if (fin)
        x.serverNext += 1;
    if (fin || (x.headDone && x.bodyLeft == 0))
    {
        const uint32_t status = x.headDone ? x.resp.status_code : 0;
        const dp_health_result_t r =
            dp_health_classify(&cfg, 1, 0, status, reinterpret_cast<const uint8_t*>(x.body.data()),
                               static_cast<uint32_t>(x.body.size()), &m_counters.healthOps);
        ProbeSend(server, x.next, x.serverNext, kRst | kAck);
        ProbeEnd(server, r, NowMs());
    }
    else if (p.payload_len > 0)
        ProbeSend(server, x.next, x.serverNext, kAck);
}

void
WebSwitch::EchoRequest(uint32_t server)
{
    // RFC 792 echo: type 8, code 0, identifier, sequence number, then the
    // 56 data bytes ping(8) sends by default; IPv4 header by hand (dp_build
    // makes UDP and TCP only), checksums by RFC 1071 (dp_csum)
    constexpr uint16_t kIcmpLen = 8 + kEchoData;
    Health& x = m_health[server];
    ++x.echoSeq;
    const Server& srv = m_servers[server];
    std::vector<uint8_t>& f = m_build;
    f.assign(DP_ETH_HDR_LEN + DP_IP4_MIN_HDR_LEN + kIcmpLen, 0);
    f[12] = 0x08;
    uint8_t* ip = f.data() + DP_ETH_HDR_LEN;
    ip[0] = 0x45;
    Wr16(ip + 2, DP_IP4_MIN_HDR_LEN + kIcmpLen);
    Wr16(ip + 4, m_ipId++);
    ip[8] = 64;
    ip[9] = kIcmp;
    Wr32(ip + 12, srv.switchIp);
    Wr32(ip + 16, srv.serverIp);
    Wr16(ip + 10, dp_csum(ip, DP_IP4_MIN_HDR_LEN, &m_counters.healthOps));
    uint8_t* icmp = ip + DP_IP4_MIN_HDR_LEN;
    icmp[0] = kEchoRequest;
    Wr16(icmp + 4, kEchoId);
    Wr16(icmp + 6, x.echoSeq);
    for (uint16_t k = 0; k < kEchoData; ++k)
        icmp[8 + k] = static_cast<uint8_t>(k);
    Wr16(icmp + 2, dp_csum(icmp, kIcmpLen, &m_counters.healthOps));
    ++m_counters.packets;
    Emit(srv.dev, f, DP_IP4_MIN_HDR_LEN + kIcmpLen);
}

bool
WebSwitch::EchoReply(uint32_t server, const std::vector<uint8_t>& f)
{
    // the reply to the echo in flight: from the server to the switch's
    // address on its link, both checksums right, identifier and sequence
    // number the request's, the data echoed whole
    Health& x = m_health[server];
    const Server& srv = m_servers[server];
    if (f.size() < DP_ETH_HDR_LEN + DP_IP4_MIN_HDR_LEN + 8u)
        return false;
    const uint8_t* ip = f.data() + DP_ETH_HDR_LEN;
    const uint32_t ihl = (ip[0] & 0x0f) * 4u;
    const uint32_t total = Rd16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < DP_IP4_MIN_HDR_LEN || ip[9] != kIcmp || total < ihl + 8u ||
        DP_ETH_HDR_LEN + total > f.size() || Rd32(ip + 12) != srv.serverIp || Rd32(ip + 16) != srv.switchIp ||
        dp_csum(ip, ihl, &m_counters.healthOps) != 0)
        return false;
    const uint8_t* icmp = ip + ihl;
    const uint32_t icmpLen = total - ihl;
    if (icmp[0] != kEchoReply || icmp[1] != 0 || dp_csum(icmp, icmpLen, &m_counters.healthOps) != 0 ||
        Rd16(icmp + 4) != kEchoId)
        return false;
    if (!x.active || Rd16(icmp + 6) != x.echoSeq || icmpLen != 8u + kEchoData)
    {
        Drop("health_echo_stale", nullptr); // the answer to an abandoned probe
        return true;
    }
    ProbeEnd(server, dp_health_classify(&m_checkCfg, 1, 0, 0, nullptr, 0, &m_counters.healthOps), NowMs());
    return true;
}

void
WebSwitch::ProbeEnd(uint32_t server, dp_health_result_t result, uint64_t endMs)
{
    Health& x = m_health[server];
    Simulator::Cancel(x.timeout);
    x.active = false;
    x.open = false;
    m_probeByPort.erase(x.localPort);
    const int change = dp_health_report(&x.h, result, endMs, &m_counters.healthOps);
    m_probeTrace(server, static_cast<uint32_t>(result), Simulator::Now());
    if (change != DP_HEALTH_NO_CHANGE)
    {
        dp_health_apply_to_sched(change, m_pool, server, endMs, &m_counters.healthOps);
        m_healthTrace(server, change == DP_HEALTH_WENT_UP, Simulator::Now());
    }
    Simulator::Schedule(MilliSeconds(static_cast<int64_t>(x.h.next_check_ms)) - Simulator::Now(), &WebSwitch::Probe,
                        this, server);
}

// --- sending -----------------------------------------------------------

void
WebSwitch::Rewrite(std::vector<uint8_t>& f, const dp_parsed_t& p, uint32_t srcIp, uint16_t srcPort, uint32_t dstIp,
                   uint16_t dstPort)
{
    uint8_t* ip = f.data() + p.l3_offset;
    uint8_t* tcp = f.data() + p.l4_offset;
    dp_ops_t* ops = &m_counters.spliceOps;
    uint16_t ipSum = Rd16(ip + 10);
    uint16_t tcpSum = Rd16(tcp + 16);
    const uint32_t oldSrc = Rd32(ip + 12), oldDst = Rd32(ip + 16);
    const uint16_t oldSport = Rd16(tcp), oldDport = Rd16(tcp + 2);
    // RFC 1624: each changed field updates the IPv4 header sum and, through
    // the pseudo-header (addresses) or the header (ports), the TCP sum. The
    // addresses move both sums by the same amount D (eqn. 3: HC' = ~(~HC +
    // D)), and D = ~HC'ip + HCip, so the TCP sum takes it in one update, as
    // if a word HC'ip had become HCip: ~(~HCtcp + ~HC'ip + HCip).
    const uint16_t ipSumBefore = ipSum;
    ipSum = dp_csum_update32(ipSum, oldSrc, srcIp, ops);
    ipSum = dp_csum_update32(ipSum, oldDst, dstIp, ops);
    tcpSum = dp_csum_update16(tcpSum, ipSum, ipSumBefore, ops);
    tcpSum = dp_csum_update16(tcpSum, oldSport, srcPort, ops);
    tcpSum = dp_csum_update16(tcpSum, oldDport, dstPort, ops);
    Wr32(ip + 12, srcIp);
    Wr32(ip + 16, dstIp);
    Wr16(ip + 10, ipSum);
    Wr16(tcp, srcPort);
    Wr16(tcp + 2, dstPort);
    Wr16(tcp + 16, tcpSum);
    ops->bytes_written += 16;
}

void
WebSwitch::SendTcp(Ptr<NetDevice> dev, uint32_t srcIp, uint16_t srcPort, uint32_t dstIp, uint16_t dstPort,
                   uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload, uint16_t len)
{
    dp_build_spec_t spec{};
    spec.src_ip = srcIp;
    spec.dst_ip = dstIp;
    spec.ttl = 64;
    spec.ip_proto = DP_IPPROTO_TCP;
    spec.ip_id = m_ipId++;
    spec.src_port = srcPort;
    spec.dst_port = dstPort;
    spec.tcp_seq = seq;
    spec.tcp_ack = (flags & kAck) ? ack : 0;
    spec.tcp_flags = flags;
    spec.payload = payload;
    spec.payload_len = len;
    spec.l4_checksum = 1;
    std::vector<uint8_t>& f = m_build;
    f.resize(dp_build_len(DP_IPPROTO_TCP, len) + 64);
    size_t n = 0;
    dp_build(&spec, f.data(), f.size(), &n, &m_counters.spliceOps);
    ++m_counters.packets;
    Emit(dev, f, static_cast<uint16_t>(DP_IP4_MIN_HDR_LEN + DP_TCP_MIN_HDR_LEN + len));
}

void
WebSwitch::ToClient(ClientConn& c, uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload, uint16_t len)
{
    SendTcp(m_clientDev, c.vip, c.port, c.clientIp, c.clientPort, seq, ack, flags, payload, len);
}

void
WebSwitch::ToServer(ClientConn& c, const ServerConn& s, uint32_t seq, uint32_t ack, uint8_t flags,
                    const uint8_t* payload, uint16_t len)
{
    const Server& srv = m_servers[s.server];
    SendTcp(srv.dev, SelfAddress(c.vip, s.server), s.localPort, srv.serverIp, c.port, seq, ack, flags, payload,
            len);
}

void
WebSwitch::Emit(Ptr<NetDevice> dev, const std::vector<uint8_t>& f, uint16_t ipTotalLen)
{
    m_out.emplace_back(dev, Create<Packet>(f.data() + DP_ETH_HDR_LEN, ipTotalLen));
}

void
WebSwitch::Transmit(Ptr<NetDevice> d, Ptr<Packet> q)
{
    if (m_segment && d == m_clientDev)
        SegmentSend(q);
    else
        d->Send(q, d->GetBroadcast(), kIpv4);
}

void
WebSwitch::Finish()
{
    const Counters& n = m_counters;
    // only the priced counts are remembered (a copy of every counter per
    // packet was a measurable share of the L7 path)
    const Priced now_{n.packets,
                      n.handshakeSegments,
                      n.connectionSides,
                      n.httpOps.bytes_parsed,
                      n.ruleOps.rules_evaluated,
                      n.ruleOps.bytes_parsed,
                      n.rewrites};
    const Priced& o = m_priced;
    const WebSwitchProfile& pr = m_profile;
    const double packetCycles = m_l4 == L4Forwarding::Off ? pr.l7PacketCycles : pr.l4PacketCycles;
    // a handshake segment's work is part of its connection side's price
    const double priced = double(Delta(now_.packets, o.packets)) -
                          double(Delta(now_.handshakeSegments, o.handshakeSegments));
    const double cycles = packetCycles * priced +
                          pr.connectionCycles * double(Delta(now_.connectionSides, o.connectionSides)) +
                          pr.parseByteCycles * double(Delta(now_.parsedBytes, o.parsedBytes)) +
                          pr.ruleCycles * double(Delta(now_.rules, o.rules)) +
                          pr.ruleByteCycles * double(Delta(now_.ruleBytes, o.ruleBytes)) +
                          pr.rewriteCycles * double(Delta(now_.rewrites, o.rewrites));
    m_counters.cycles += cycles;
    m_priced = now_;
    const Time now = Simulator::Now();
    const Time start = std::max(now, m_busyUntil);
    m_busyUntil = start + (pr.clockHz > 0 ? WholeNs(cycles * 1e9 / pr.clockHz) : Time(0));
    Time leave = m_busyUntil;
    if (pr.ioBusBytesPerS > 0 && !m_out.empty())
    {
        // every frame crosses the bus in and out: IPv4 bytes, the Ethernet
        // header and FCS (18), no preamble or gap
        uint64_t bytes = 0;
        for (const auto& [d, q] : m_out)
            bytes += q->GetSize() + 18;
        m_busBusyUntil = std::max(now, m_busBusyUntil) + WholeNs(double(bytes) * pr.ioBusCrossings * 1e9 / pr.ioBusBytesPerS);
        leave = std::max(leave, m_busBusyUntil);
    }
    if (m_out.size() == 1)
    {
        Ptr<NetDevice> d = m_out[0].first;
        Ptr<Packet> q = m_out[0].second;
        Simulator::Schedule(leave - now, [this, d, q]() { Transmit(d, q); });
    }
    else if (!m_out.empty())
    {
        // what one packet's work produced leaves together: one event, the
        // packets in the order they were made (as separate events at the
        // same time would run)
        auto batch = std::make_shared<std::vector<std::pair<Ptr<NetDevice>, Ptr<Packet>>>>(std::move(m_out));
        Simulator::Schedule(leave - now, [this, batch]() {
            for (auto& [d, q] : *batch)
                Transmit(d, q);
        });
    }
    m_out.clear();
}

} // namespace routertwin
