// WebSwitch: an L7 web switch (URL switching with delayed binding and TCP
// splicing, seed 003 section 1.2, figure 2 and table 1) on an ns-3 node
// without an IP stack, between real ns-3 TCP clients and servers.
//
// The switch's node has one device toward the clients and one per server
// (point-to-point links in the helper); IPv4 packets reach it through
// Node::RegisterProtocolHandler and leave through NetDevice::Send. Each is
// handled as bytes by the C core:
//   - the client's SYN to the virtual service is answered with the switch's
//     own ISN (dp_splice_accept; nothing goes to a server);
//   - the request is read from as many segments as it takes (dp_splice_take
//     says which bytes are new; dp_http parses them incrementally) and
//     ACKed by the switch;
//   - the URL rules (dp_urlrule, the profile's matching method) choose the
//     server; the switch opens its own connection to it (SYN with a seeded
//     ISN of its own, so the offsets are not zero), sends the request, and
//     binds (dp_splice_bind);
//   - from then on every segment is spliced: addresses and ports rewritten
//     (RFC 1624 updates, dp_csum) and sequence/ack numbers translated
//     (dp_splice_xlate), for the life of the connection;
//   - the next request on a kept-alive client connection is served by the
//     profile's keep-alive strategy (web-switch-profile.h).
// The switch's processor is one FIFO server: a packet leaves after the
// cycles its operations cost at the profile's prices (the C core's
// counters, priced as docs/nctu.md "Product profiles" says).
//
// Every refused or absorbed segment is counted by name (DropCount, the
// "Drop" TraceSource), with dp_drop's names where the core has one.
//
// Overload: the processor is a FIFO without bound unless SynBacklogLimit
// is set; then a client's SYN of a new connection that finds more work
// queued ahead of it than that limit is dropped unanswered
// (overload_syn_dropped, as Linux drops a SYN its full accept queue cannot
// take), so the accepted rate is held at what the processor does and the
// rest waits for its SYN timeout. (An RST would not do in ns-3 3.37: its
// SYN_SENT state ignores an RST with ACK, the form RFC 793 3.4 gives.)
//
// Cookie persistence (seed 003 section 5.6), the methods the profile offers
// (behaviour.cookie_methods; another is refused): pre-arranged (the
// servers' own cookie value mapped by a rule), insert (the switch adds
// "Set-Cookie: <name>=<server's address>; path=/" to a response whose
// request was not sent by a valid cookie, HAProxy's insert rule,
// dp_persist_cookie_response; dp_cookie_insert makes the edit and
// dp_splice_edit_frame puts it in the segment, moving every later
// server-to-client sequence number and every client acknowledgment of that
// binding by its length), learn (the value a server sets in its own
// Set-Cookie, dp_cookie_learn, kept with the server in a dp_persist stick
// table). A request whose cookie names a server goes there before any URL
// rule (dp_persist_cookie_request).
//
// Server checks (seed 003 table 6: ping, port, web page, content; the profile's
// features.fault_tolerance, another kind is refused) on real packets from
// the switch's own address on each server link: a TCP connect to the
// service port (SYN-ACK: passed, RST: refused, nothing within the check
// timeout: timeout), closed by an RST; for HTTP and content checks an
// HTTP/1.0 GET of the check URI whose status (and body) decide. HAProxy's
// schedule and rise/fall rules, all of them dp_health's (the interval
// counts from the previous probe's end; ms ticks). A server that goes down
// leaves the round-robin pool (dp_health_apply_to_sched); a URL rule, a
// cookie or a session ID naming a down server is not followed: the pool
// chooses (a cookie: dp_persist_cookie_request with the server unusable).
//
// Not done: retransmission of the switch's own segments (SYN, the request,
// the 302; the links here are lossless) and of an edited segment (a
// retransmitted response head would get no Set-Cookie), TCP options (the switch announces
// none, so the end hosts run without timestamps, window scaling and SACK),
// an insert when the head's last line ends in an earlier segment than its
// blank line (counted as cookie_insert_point_passed, the response passes
// unedited), HAProxy's removal of a server cookie of the inserted name,
// pipelined
// requests (bytes after a complete head go unparsed to the same server as
// the head, whole or cut mid-header); a FIN in the same segment as request
// bytes (the hosts here send it alone). Kept server connections of a client
// connection that ends stay open (the servers here have no idle timeout;
// nothing reuses them).
#ifndef ROUTERTWIN_WEB_SWITCH_H
#define ROUTERTWIN_WEB_SWITCH_H

#include "web-switch-profile.h"

#include "dp_cookie.h"
#include "dp_health.h"
#include "dp_http.h"
#include "dp_ops.h"
#include "dp_persist.h"
#include "dp_pkt.h"
#include "dp_sched.h"
#include "dp_splice.h"
#include "dp_urlrule.h"

#include <ns3/event-id.h>
#include <ns3/ipv4-address.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/packet.h>
#include <ns3/traced-callback.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace routertwin
{

/// What a malformed or oversized request head gets (per product).
enum class MalformedAction
{
    Reset,      ///< a TCP RST to the client
    BadRequest, ///< "400 Bad Request" and the connection closed
};

/// L4 load balancing on the switch (seed 003 section 3.3, figures 4 and 5):
/// each connection to the virtual service goes, at its SYN, to the next
/// server of the round-robin pool, with no delayed binding and no parsing.
enum class L4Forwarding
{
    Off,           ///< URL switching (L7), the default
    Nat,           ///< the destination rewritten to the server; its answers' source back to the virtual address
    DirectRouting, ///< forwarded unchanged on the server's link; the server (holding the virtual address) answers the client directly
};

/// Cookie persistence methods (seed 003 section 5.6).
enum class CookieMode
{
    None,
    Prearranged, ///< the servers set their own cookie; a rule maps its value (AddCookieServer)
    Insert,      ///< the switch inserts Set-Cookie: <name>=<server address>
    Learn,       ///< the switch learns the value of the servers' own cookie <name>
};

/// A Set-Cookie the switch inserted into a server's response: the server
/// connection's sequence number of the first inserted byte (server space)
/// and the bytes. On the client side the bytes after it are shifted by
/// inserted.size() (dp_splice_edit_frame).
struct SpliceEdit
{
    uint16_t clientPort;
    uint16_t localPort;
    uint32_t server;
    uint32_t serverSeq;
    std::string inserted;
    ns3::Time at;
};

/// One binding of a client connection's bytes to a server connection:
/// client-space sequence number c maps to c + clientOffset toward the
/// server; server sequence number s maps to s + serverOffset toward the
/// client (mod 2^32, dp_splice_bind).
struct SpliceBinding
{
    uint16_t clientPort;
    uint16_t localPort; ///< the switch's port toward the server
    uint32_t server;
    uint32_t reqSeq;       ///< client sequence number of the request's first byte
    uint32_t clientOffset; ///< D_c
    uint32_t serverOffset; ///< D_s
    ns3::Time at;
};

class WebSwitch : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    WebSwitch();
    ~WebSwitch() override;

    void SetProfile(const WebSwitchProfile& p);
    const WebSwitchProfile& GetProfile() const { return m_profile; }

    /// The device toward the clients and the virtual service on it.
    void AttachClientSide(ns3::Ptr<ns3::NetDevice> dev, ns3::Ipv4Address vip, uint16_t port);
    /// The clients on a shared L2 segment (switch redundancy): the virtual
    /// service vip answered from the virtual MAC vmac. No handler is
    /// registered: the owner of the virtual MAC (VrrpRouter, while master)
    /// hands the switch its frames (ClientFrame); answers leave from the
    /// VIP's virtual MAC to the MAC the client's frames came from.
    void AttachClientSegment(ns3::Ptr<ns3::NetDevice> dev, ns3::Ipv4Address vip, ns3::Mac48Address vmac,
                             uint16_t port);
    /// Another virtual service address on the segment (active/active: the
    /// VIP of the other switch, served while this one is its master); a
    /// client connection answers from the address it was opened to.
    void AddVirtualAddress(ns3::Ipv4Address vip, ns3::Mac48Address vmac);
    /// Whether this switch serves the virtual address vip now (its VRRP
    /// router is master): a standby switch passes no server segment of a
    /// connection to it (counted as `standby`), so that a mirrored
    /// connection moves only at the takeover. Every address is served
    /// unless told otherwise (VrrpRouter tells it).
    void SetVipActive(uint32_t vip, bool active);
    /// The switch's own address toward server k for the connections to
    /// vip (active/active pairs: each virtual address's floating self
    /// address on the server segment), instead of AddServer's.
    void SetVipServerAddress(ns3::Ipv4Address vip, uint32_t server, ns3::Ipv4Address self);
    /// An IPv4 packet from the client segment, sent by MAC from.
    void ClientFrame(ns3::Ptr<const ns3::Packet> p, const ns3::Mac48Address& from);
    /// A server behind dev: its address and the switch's own on that link.
    /// Returns the server's index.
    uint32_t AddServer(ns3::Ptr<ns3::NetDevice> dev, ns3::Ipv4Address switchAddr, ns3::Ipv4Address serverAddr);
    /// A URL rule naming a server (precedence: smaller first, for the
    /// profiles with rule precedence). Requests no rule matches go to the
    /// DefaultServer attribute's server.
    void AddUrlRule(dp_urlrule_kind_t kind, const std::string& pattern, uint32_t server, uint16_t precedence = 0);
    /// Balances at L4 instead of switching URLs (priced by the profile's
    /// l4_packet_cycles per packet forwarded). Call before traffic starts.
    /// A session lives until its client address and port send a new SYN
    /// after a FIN or RST (no aging: the runs here are seconds long).
    void SetL4Forwarding(L4Forwarding f) { m_l4 = f; }
    L4Forwarding GetL4Forwarding() const { return m_l4; }
    /// Connection synchronisation in a redundant pair: with SessionSync on
    /// (the profile's behaviour.session_sync), every L4 session this switch
    /// makes, and its start of closing, reaches peer `delay` later (one
    /// update on an inter-switch link; the client and server addresses and
    /// the server chosen), so that the peer, on taking over the virtual
    /// address, forwards the established connection's next segments where
    /// they went. L7 (spliced) connections are mirrored too (SpliceMirror:
    /// at each binding, response head, inserted cookie, FIN and end), so
    /// the peer goes on splicing them; that needs the peer to reach the
    /// servers from the same address (a floating self address on a shared
    /// server segment, RedundantPairTestbed). Without it the peer has no
    /// session for them (`no_session`; an RST with ResetWithoutSession):
    /// the connection is lost. With PersistenceSync every learned-cookie and
    /// SSL session-ID entry is copied the same way, so a client's next
    /// connection after the takeover still goes to its server.
    void SetSyncPeer(ns3::Ptr<WebSwitch> peer, ns3::Time delay);
    size_t L4Sessions() const { return m_l4Sessions.size(); }
    /// Server groups (seed 003 section 3.4: .gif on half the servers, .htm
    /// on the other half): when set, a URL rule's target and DefaultServer
    /// name a group, and a client connection goes to the group's member
    /// (client address + client port) mod size, so a kept-alive connection
    /// stays on one member (an assumption: the paper does not say how a
    /// rule's servers share its requests).
    void SetServerGroups(const std::vector<std::vector<uint32_t>>& groups) { m_groups = groups; }
    /// Pre-arranged cookie persistence (seed 003 section 5.6: the servers
    /// set their own cookie, e.g. Server=A, and the switch maps its value):
    /// a request whose cookie `name` (dp_cookie_find) has `value` goes to
    /// server, before any URL rule. Values not mapped fall through to the rules.
    /// Needs the profile's "prearranged" method.
    void AddCookieServer(const std::string& name, const std::string& value, uint32_t server);
    /// Cookie insert or learn on the cookie `name`; throws
    /// std::invalid_argument when the profile does not offer the method.
    void SetCookiePersistence(CookieMode mode, const std::string& name);
    CookieMode GetCookieMode() const { return m_cookieMode; }
    /// The value insert mode gives server k: its address, dotted (seed 003
    /// section 5.6: "usually the server's IP").
    std::string InsertedCookieValue(uint32_t server) const;
    const std::vector<SpliceEdit>& Edits() const { return m_edits; }
    /// SSL session-ID persistence on the virtual service's port `port`
    /// (443): the client's first record is read as a ClientHello
    /// (dp_tls_parse_client_hello) instead of an HTTP head; an offered
    /// session ID the switch knows goes to its server, anything else to
    /// the next server in round robin (dp_sched); the offered ID and the
    /// one the server's ServerHello chooses (dp_tls_parse_server_hello)
    /// are stored with the server (dp_persist), as HAProxy's documented
    /// SSL-ID affinity does. A first record that is no readable
    /// ClientHello is reset or forwarded without persistence, as the
    /// profile's behaviour.ssl_unparsed (the SslUnparsed attribute) says,
    /// counted as ssl_<dp_tls status> in DropCount resp. ForwardedCount.
    /// Throws std::invalid_argument when the profile has no SSL-ID
    /// persistence.
    void AddSslService(uint16_t port);
    /// Connections passed on without persistence, by reason.
    uint64_t ForwardedCount(const std::string& reason) const;

    /// Server checks of kind cfg.kind (DP_HEALTH_PING: an ICMP echo
    /// answered, _TCP, _HTTP or _CONTENT) on every server, with cfg's interval, timeout,
    /// rise and fall; uri is the page HTTP and content checks GET. Throws
    /// std::invalid_argument when the profile lacks the check or
    /// dp_health refuses cfg. Call after the servers are added.
    void SetHealthCheck(const dp_health_config_t& cfg, const std::string& uri = "/");
    /// Starts checking at `at`: server k's first probe at dp_health's
    /// check phase (dp_health_first_check_ms).
    void StartHealthChecks(ns3::Time at);
    bool IsServerUp(uint32_t server) const;
    const dp_health_t& HealthState(uint32_t server) const { return m_health.at(server).h; }
    /// (server, up, time): a server left (up = false) or rejoined the pool.
    typedef void (*HealthTracedCallback)(uint32_t server, bool up, ns3::Time at);

    /// Counted refusals and absorbed segments by name.
    uint64_t DropCount(const std::string& reason) const;
    const std::map<std::string, uint64_t>& DropCounts() const { return m_drops; }
    const std::vector<SpliceBinding>& Bindings() const { return m_bindings; }
    /// Client connections the switch holds now (a spliced one is removed
    /// once both FINs have been acknowledged).
    size_t ClientConnections() const { return m_clients.size(); }

    struct Counters
    {
        uint64_t requests = 0;          ///< request heads completed
        uint64_t connectionSides = 0;   ///< client connections accepted + server connections opened
        uint64_t packets = 0;           ///< packets spliced or built by the switch (L4: forwarded)
        /// Of those, L7's opening handshakes (RFC 793 3.4: SYN, SYN-ACK, ACK
        /// on each side, received or built): priced inside connectionCycles,
        /// not per packet (the profiles' words, docs/nctu.md "Product profiles")
        uint64_t handshakeSegments = 0;
        uint64_t rewrites = 0;          ///< header rewrites (downgrade)
        uint64_t redirects = 0;         ///< 302s sent
        uint64_t serverResets = 0;      ///< RSTs sent to servers
        uint64_t serverReuses = 0;      ///< requests bound to a kept server connection
        uint64_t cookieHits = 0;        ///< requests sent where their cookie said
        uint64_t cookiesInserted = 0;   ///< Set-Cookie headers inserted
        uint64_t cookiesLearned = 0;    ///< server cookie values stored (learn)
        uint64_t sslHits = 0;           ///< SSL connections sent where their session ID said
        uint64_t sslLearned = 0;        ///< session IDs stored from ServerHellos
        uint64_t probes = 0;            ///< server checks made
        uint64_t notFollowedDown = 0;   ///< requests whose rule, cookie or session ID named a down server
        uint64_t syncSent = 0;          ///< updates sent to the peer (L4 sessions, splice mirrors, persistence entries)
        uint64_t syncReceived = 0;      ///< updates taken from the peer (the same)
        uint64_t spliceMirrorsSent = 0; ///< of syncSent, L7 connection mirrors (SpliceMirror)
        uint64_t resetsWithoutSession = 0; ///< RSTs answering a segment of no known connection (ResetWithoutSession)
        dp_ops_t healthOps{};           ///< dp_health
        dp_ops_t persistOps{};          ///< dp_persist (stick table, cookie decisions)
        dp_ops_t httpOps{};             ///< dp_http
        dp_ops_t ruleOps{};             ///< dp_urlrule
        dp_ops_t spliceOps{};           ///< dp_splice, addresses, dp_build
        double cycles = 0;              ///< priced work
    };
    const Counters& GetCounters() const { return m_counters; }
    /// The processor's work priced but not yet served (0 when idle): the
    /// part of Counters::cycles still ahead of a packet arriving now.
    ns3::Time QueuedWork() const;

    typedef void (*ProbeTracedCallback)(uint32_t server, uint32_t result, ns3::Time end);
    typedef void (*DropTracedCallback)(const std::string& reason, ns3::Ptr<const ns3::Packet> p);
    typedef void (*BindTracedCallback)(const SpliceBinding& b);

    /// An L4 connection's session (by client address and port).
    struct L4Session
    {
        uint32_t server;
        uint32_t vip;  ///< the virtual address the client opened it to (its answers' source)
        bool closing;  ///< a FIN or RST passed: the next SYN of this address and port is a new connection
    };
    /// A session from the peer (SetSyncPeer).
    void ReceiveL4Session(uint64_t key, const L4Session& s);
    /// What the peer needs to go on splicing an L7 connection after a
    /// takeover (SessionSync): the client side, the splice state (offsets
    /// and edits of the current binding, dp_splice_t), the bound server
    /// connection and where the current response ends. Sent when one of
    /// them changes, not per segment: the sequence numbers the switch
    /// tracks (c_next, v_next, the server side's next numbers) are as they
    /// were then and catch up with the first segments after the takeover.
    struct SpliceMirror
    {
        uint32_t vip = 0;
        uint32_t clientIp = 0;
        ns3::Mac48Address clientMac; ///< on a client segment: where its answers go
        uint16_t clientPort = 0;
        uint16_t port = 0;
        bool tls = false;
        dp_splice_t sp{};
        uint32_t server = 0;       ///< the bound server
        uint16_t localPort = 0;    ///< the switch's port toward it
        uint32_t localNext = 0;    ///< server space: next sequence number toward the server
        uint32_t serverNext = 0;   ///< server space: next server byte expected
        bool respActive = false;   ///< a response is under way
        bool respFramed = false;   ///< its head was read and gave a length: respEnd holds
        uint32_t respEnd = 0;      ///< server space: the sequence number after the response's body
        bool clientFinSeen = false, serverFinSeen = false;
        uint32_t clientFinEnd = 0, serverFinEnd = 0;
        bool gone = false;         ///< the connection ended: the peer forgets it
    };
    /// A mirror from the peer (SetSyncPeer, SessionSync, L7).
    void ReceiveSpliceMirror(uint64_t key, const SpliceMirror& m);
    /// The persistence tables a pair can copy (PersistenceSync).
    enum class PersistTable : uint8_t { LearnedCookies, SslIds };
    /// A persistence entry from the peer: stored when this switch keeps
    /// that table (its cookie learn or SSL service is configured).
    void ReceivePersist(PersistTable table, const uint8_t key[DP_PERSIST_MAX_KEY], int32_t server);

  private:
    /// Sends the session to the peer when SessionSync is on.
    void SyncL4Session(uint64_t key, const L4Session& s);
    struct ClientConn;
    /// Sends c's mirror to the peer when SessionSync is on (L7, once bound).
    void SyncSplice(ClientConn& c, bool gone = false);
    /// RFC 793 section 3.4 "Reset Generation" (1): a segment of no known
    /// connection gets an RST, sent back on dev, when ResetWithoutSession is on.
    void ResetWithoutSession(const std::vector<uint8_t>& f, const dp_parsed_t& p, ns3::Ptr<ns3::NetDevice> dev);
    /// dp_persist_store into the table, and to the peer when PersistenceSync is on.
    int Store(PersistTable table, const uint8_t key[DP_PERSIST_MAX_KEY], int32_t server);
    struct ServerConn
    {
        enum State : uint8_t { SynSent, Open, Closed };
        uint32_t server = 0;
        uint16_t localPort = 0;
        uint32_t localIsn = 0;
        uint32_t localNext = 0;  ///< next sequence number toward the server (server space)
        uint32_t serverNext = 0; ///< next server byte expected (server space)
        State state = SynSent;
    };
    struct ClientConn
    {
        uint32_t vip = 0;            ///< the virtual address the client opened it to
        uint32_t clientIp = 0;
        uint16_t clientPort = 0;
        uint16_t port = 0;           ///< the service port (the servers' port too)
        bool tls = false;            ///< on the SSL service: the first record is a ClientHello
        dp_splice_t sp{};
        dp_http_t req{};
        std::unique_ptr<uint8_t[]> head; ///< dp_http's request buffer (not zeroed: dp_http writes before it reads)
        std::vector<uint8_t> reqRaw; ///< every byte of the current request, as the client sent it
        uint32_t reqStart = 0;       ///< client sequence number of its first byte
        bool reading = false;        ///< a request is being read
        int bound = -1;              ///< index in sconns of the bound server connection
        int pending = -1;            ///< server connection whose SYN-ACK is awaited
        std::vector<ServerConn> sconns;
        dp_http_t resp{};
        std::unique_ptr<uint8_t[]> respHead; ///< dp_http's response buffer, reused by every response
        bool respActive = false;
        uint64_t bodyLeft = 0;
        bool refused = false;        ///< a request was refused: later bytes are not read
        bool switchFin = false;      ///< the switch sent its own FIN to the client
        bool dead = false;           ///< reset: remove after this segment
        bool clientFinSeen = false;  ///< the client's FIN went to the bound server
        bool serverFinSeen = false;  ///< the bound server's FIN went to the client
        uint32_t clientFinEnd = 0;   ///< client space: the sequence number after the client's FIN
        uint32_t serverFinEnd = 0;   ///< client space: the sequence number after the server's FIN
        bool clientFinAcked = false; ///< the server acknowledged the client's FIN
        bool serverFinAcked = false; ///< the client acknowledged the server's FIN
        dp_persist_cookie_request_t persist{}; ///< the current request's cookie decision
        uint32_t respHeadSeq = 0;    ///< server space: the current response's first byte
        uint32_t editSeq = 0;        ///< server space: where the pending insert goes
        /// the insert waiting for the segment holding its place (allocated
        /// only then: the connection stays small for the common case)
        std::unique_ptr<dp_cookie_edit_t> edit;
        std::vector<uint8_t> respRaw; ///< SSL: the server's first bytes until its record is whole
        uint32_t respEnd = 0;        ///< server space: after the current response's body (framed)
        bool mirrored = false;       ///< a mirror of it went to the peer (its end is sent too)
    };

    void DoDispose() override;
    bool ReceiveFromClient(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<const ns3::Packet> p, uint16_t proto,
                           const ns3::Address& from);
    bool ReceiveFromServer(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<const ns3::Packet> p, uint16_t proto,
                           const ns3::Address& from);
    void HandleClient(std::vector<uint8_t>& f, const dp_parsed_t& p, ns3::Ptr<const ns3::Packet> pkt);
    void HandleServer(uint32_t server, std::vector<uint8_t>& f, const dp_parsed_t& p,
                      ns3::Ptr<const ns3::Packet> pkt);
    void TakeRequestBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq, ns3::Ptr<const ns3::Packet> pkt);
    void RequestComplete(ClientConn& c);
    /// SSL service: the ClientHello's bytes; when whole, the server.
    void TakeHelloBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq,
                        ns3::Ptr<const ns3::Packet> pkt);
    /// SSL service: the server's first bytes; when its record is whole, its session ID.
    void ServerHelloBytes(ClientConn& c, const uint8_t* data, uint32_t len);
    /// The next server of the round-robin pool (dp_sched) that is up.
    int32_t PickServer();
    /// server when it is up, else the pool's choice.
    uint32_t Usable(uint32_t server);
    void EnsurePool();
    /// A request or response head buffer (kHeadCap bytes, not zeroed: dp_http
    /// writes before it reads), from those of closed connections when any.
    std::unique_ptr<uint8_t[]> TakeHeadBuffer();

    /// One server's checker and its probe in flight.
    struct Health
    {
        dp_health_t h{};
        bool active = false;      ///< a probe is in flight
        bool open = false;        ///< its connection is established (HTTP, content)
        uint16_t localPort = 0;
        uint32_t next = 0;        ///< the switch's next sequence number on it
        uint32_t serverNext = 0;  ///< the server's next byte expected
        uint64_t startMs = 0;
        dp_http_t resp{};
        std::unique_ptr<uint8_t[]> head;
        std::string body;
        uint64_t bodyLeft = 0;
        bool headDone = false;
        ns3::EventId timeout;
        uint16_t echoSeq = 0;     ///< ping: the sequence number of the last echo request
    };
    /// Ping check: an ICMP echo request to the server.
    void EchoRequest(uint32_t server);
    /// Ping check: whether f (refused by dp_parse) is an ICMP echo reply
    /// from the server; the one in flight ends its probe.
    bool EchoReply(uint32_t server, const std::vector<uint8_t>& f);
    void Probe(uint32_t server);
    void ProbeSegment(uint32_t server, const std::vector<uint8_t>& f, const dp_parsed_t& p);
    void ProbeTimeout(uint32_t server);
    void ProbeEnd(uint32_t server, dp_health_result_t result, uint64_t endMs);
    void ProbeSend(uint32_t server, uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload = nullptr,
                   uint16_t len = 0);
    void RefuseRequest(ClientConn& c, const std::string& reason, ns3::Ptr<const ns3::Packet> pkt);
    void OpenServer(ClientConn& c, uint32_t server);
    void BindAndSend(ClientConn& c, int idx);
    /// Response bytes from server sequence number seq, before they are sent.
    void ResponseBytes(ClientConn& c, const uint8_t* data, uint32_t len, uint32_t seq);
    /// A response head parsed: learn its cookie, or decide an insert.
    void ResponseHead(ClientConn& c);
    /// Makes the pending insert in frame f (a server segment from seq)
    /// when its place is in it; returns whether the frame changed.
    bool ApplyEdit(ClientConn& c, std::vector<uint8_t>& f, dp_parsed_t& p, uint32_t seq,
                   ns3::Ptr<const ns3::Packet> pkt);
    /// Sends a translated server segment to the client, in two segments
    /// when an insert made it longer than the client link's MTU.
    void EmitToClient(ClientConn& c, const std::vector<uint8_t>& f, const dp_parsed_t& p);
    void ResponseComplete(ClientConn& c);
    /// The 32-byte stick-table key of a cookie value (zero-padded).
    static bool PersistKey(const uint8_t* v, uint32_t len, uint8_t key[DP_PERSIST_MAX_KEY]);
    void ResetServer(ClientConn& c, int idx, bool defect);
    uint32_t ChooseServer(ClientConn& c);
    /// A rule's target as a server: itself, or its group's member for c.
    uint32_t GroupMember(const ClientConn& c, uint32_t target) const;
    /// L4 mode: a client segment to its connection's server; a server's to the client (NAT).
    void HandleL4Client(std::vector<uint8_t>& f, const dp_parsed_t& p, ns3::Ptr<const ns3::Packet> pkt);
    void HandleL4Server(std::vector<uint8_t>& f, const dp_parsed_t& p, ns3::Ptr<const ns3::Packet> pkt);

    /// Builds a TCP segment and queues it on dev.
    void SendTcp(ns3::Ptr<ns3::NetDevice> dev, uint32_t srcIp, uint16_t srcPort, uint32_t dstIp, uint16_t dstPort,
                 uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload, uint16_t len);
    void ToClient(ClientConn& c, uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t* payload = nullptr,
                  uint16_t len = 0);
    void ToServer(ClientConn& c, const ServerConn& s, uint32_t seq, uint32_t ack, uint8_t flags,
                  const uint8_t* payload = nullptr, uint16_t len = 0);
    /// Queues frame f (fake 14-byte Ethernet header + IPv4) on dev.
    void Emit(ns3::Ptr<ns3::NetDevice> dev, const std::vector<uint8_t>& f, uint16_t ipTotalLen);
    void Rewrite(std::vector<uint8_t>& f, const dp_parsed_t& p, uint32_t srcIp, uint16_t srcPort, uint32_t dstIp,
                 uint16_t dstPort);
    void Drop(const std::string& reason, ns3::Ptr<const ns3::Packet> p);
    /// SynBacklogLimit: true (and the SYN dropped) when p is a new
    /// connection's SYN and the processor is further behind than the limit.
    bool DropOverload(const std::vector<uint8_t>& f, const dp_parsed_t& p, ns3::Ptr<const ns3::Packet> pkt);
    /// Forgets a client connection and its server connections' ports.
    void Remove(uint64_t key);
    /// Prices the work done since the last call and sends what it produced
    /// when the processor has done it.
    void Finish();
    /// Sends a finished packet on d (on the client segment: SegmentSend).
    void Transmit(ns3::Ptr<ns3::NetDevice> d, ns3::Ptr<ns3::Packet> q);
    void SegmentSend(ns3::Ptr<ns3::Packet> q);
    bool OtherVip(uint32_t ip) const
    {
        return std::find(m_moreVips.begin(), m_moreVips.end(), ip) != m_moreVips.end();
    }

    struct Server
    {
        ns3::Ptr<ns3::NetDevice> dev;
        uint32_t switchIp;
        uint32_t serverIp;
    };

    WebSwitchProfile m_profile;
    int m_malformed = static_cast<int>(MalformedAction::Reset); ///< a MalformedAction (EnumValue holds int)
    bool m_rstSeqDefect = false;
    uint32_t m_defaultServer = 0;
    uint32_t m_isnSeed = 1;
    uint32_t m_maxLine = 8190;
    std::mt19937 m_rng;
    ns3::Ptr<ns3::NetDevice> m_clientDev;
    uint32_t m_vip = 0;
    uint16_t m_vport = 80;
    bool m_segment = false;                                   ///< clients on a shared L2 segment
    std::vector<uint32_t> m_moreVips;                         ///< active/active: the other switch's VIP
    std::map<uint32_t, ns3::Mac48Address> m_vmacs;            ///< VIP -> virtual MAC (segment)
    std::map<uint32_t, ns3::Mac48Address> m_clientMacs;       ///< client address -> MAC (segment)
    std::vector<Server> m_servers;
    std::vector<uint64_t> m_ruleMem;
    dp_urlrule_table_t* m_rules = nullptr;
    std::string m_cookieName;                                 ///< "" = no cookie persistence
    CookieMode m_cookieMode = CookieMode::None;
    bool m_insertEveryResponse = false;                       ///< insert: every response, not only the first of a client
    std::map<std::string, uint32_t> m_cookieServers;          ///< cookie value -> server (pre-arranged, insert)
    uint32_t m_persistEntries = 4096;
    std::vector<uint64_t> m_learnMem;
    dp_persist_t* m_learned = nullptr;                        ///< learn: cookie value -> server
    std::vector<SpliceEdit> m_edits;
    uint16_t m_sslPort = 0;                                   ///< 0 = no SSL service
    bool m_sslUnparsedDrop = false;
    std::vector<uint64_t> m_sslMem;
    dp_persist_t* m_sslIds = nullptr;                         ///< session ID -> server
    std::vector<uint64_t> m_poolMem;
    dp_sched_t* m_pool = nullptr;
    std::map<std::string, uint64_t> m_forwarded;
    dp_health_config_t m_checkCfg{};
    std::string m_checkUri;
    bool m_checking = false;
    std::vector<Health> m_health;
    std::map<uint16_t, uint32_t> m_probeByPort; ///< the switch's probe port -> server
    ns3::TracedCallback<uint32_t, bool, ns3::Time> m_healthTrace;
    ns3::TracedCallback<uint32_t, uint32_t, ns3::Time> m_probeTrace;
    L4Forwarding m_l4 = L4Forwarding::Off;
    std::map<uint64_t, L4Session> m_l4Sessions;               ///< by (client address, port)
    bool m_sessionSync = false;
    bool m_resetWithoutSession = false;
    std::vector<uint32_t> m_standbyVips;                      ///< virtual addresses not served now
    std::map<uint32_t, std::vector<uint32_t>> m_vipSelf;      ///< vip -> own address toward each server
    /// The switch's address toward server k for a connection to vip.
    uint32_t SelfAddress(uint32_t vip, uint32_t server) const;
    bool Standby(uint32_t vip) const
    {
        return std::find(m_standbyVips.begin(), m_standbyVips.end(), vip) != m_standbyVips.end();
    }
    bool m_persistSync = false;
    ns3::Ptr<WebSwitch> m_syncPeer;
    ns3::Time m_syncDelay;
    std::vector<std::vector<uint32_t>> m_groups;
    std::map<uint64_t, ClientConn> m_clients;                 ///< by (client address, port)
    std::map<uint16_t, uint64_t> m_byLocalPort;               ///< server side -> client key
    uint16_t m_nextPort = 20000;
    uint16_t m_ipId = 1;
    std::map<std::string, uint64_t> m_drops;
    std::vector<SpliceBinding> m_bindings;
    Counters m_counters;
    /// The priced counts at the last Finish.
    struct Priced
    {
        uint64_t packets = 0, handshakeSegments = 0, connectionSides = 0, parsedBytes = 0, rules = 0, ruleBytes = 0,
                 rewrites = 0;
    };
    Priced m_priced;
    std::vector<std::unique_ptr<uint8_t[]>> m_freeHeads; ///< at most two per connection open at the peak
    std::vector<std::pair<ns3::Ptr<ns3::NetDevice>, ns3::Ptr<ns3::Packet>>> m_out;
    ns3::Time m_busyUntil;
    ns3::Time m_synBacklogLimit; ///< 0: no limit (SynBacklogLimit)
    ns3::Time m_busBusyUntil; ///< the I/O bus (profile ioBusBytesPerS), a FIFO server beside the processor
    std::vector<uint8_t> m_frame; ///< the packet being handled, as a frame
    std::vector<uint8_t> m_build; ///< the segment being built
    ns3::TracedCallback<const std::string&, ns3::Ptr<const ns3::Packet>> m_dropTrace;
    ns3::TracedCallback<const SpliceBinding&> m_bindTrace;
};

} // namespace routertwin

#endif
