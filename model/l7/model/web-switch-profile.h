// The product profile of a web switch as the ns-3 switch uses it: the
// keep-alive strategy, the rule-matching method and the cycle prices, read
// from the same files the Python `webswitch` kind reads
// (scenarios/platforms/nctu-*.yaml; docs/nctu.md "Product profiles"), so
// the numbers and their citations live in one place.
//
// Only the scalar keys of `product`, `behaviour` and `costs` are read (the
// blocks are flat "key: value" lines); the Python loader validates the
// whole file. A missing cost or an unknown strategy is an error naming
// the file and line.
#ifndef ROUTERTWIN_WEB_SWITCH_PROFILE_H
#define ROUTERTWIN_WEB_SWITCH_PROFILE_H

#include <cstdint>
#include <string>

namespace routertwin
{

/// How the switch serves the next request of a kept-alive client
/// connection (seed 003 section 5.4).
enum class KeepAliveStrategy
{
    RstServer,      ///< Nortel: a TCP RST to the server after each response
    ServerReuse,    ///< F5: every server connection kept and reused
    DowngradeClose, ///< Foundry, Radware: "Connection: close" added to the request
    Redirect302,    ///< Cisco: a 302 when the content is on another server
    None,           ///< 3Com: no URL switching
};

enum class RuleMatching
{
    FirstMatch,   ///< in order, first match wins
    BestMatch,    ///< every rule evaluated, the most specific (first by precedence) wins
    PerServerAll, ///< every rule of every server evaluated (Nortel, section 5.5)
    None,         ///< no URL switching (3Com): every request to the default server
};

struct WebSwitchProfile
{
    std::string platform; ///< e.g. "nctu-cisco-css11154-v510"
    std::string vendor;
    std::string software; ///< e.g. "WebNS 5.10"
    KeepAliveStrategy keepalive = KeepAliveStrategy::ServerReuse;
    RuleMatching ruleMatching = RuleMatching::FirstMatch;
    double clockHz = 0;
    double l4PacketCycles = 0;  ///< per packet forwarded in L4 mode (NAT or direct routing)
    /// The I/O bus every forwarded frame crosses (costs.io_bus_bytes_per_s,
    /// F5's PCI), in bytes per second; 0 = none named. Each frame crosses it
    /// ioBusCrossings times (DMA in and out), without preamble and gap.
    double ioBusBytesPerS = 0;
    double ioBusCrossings = 0;
    /// The L7 prices: all zero for a product without URL switching (3Com,
    /// keepalive none), whose profile prices no L7 operation.
    double l7PacketCycles = 0;  ///< per spliced or switch-built packet
    double connectionCycles = 0; ///< per TCP connection side set up and torn down
    double parseByteCycles = 0; ///< per request byte parsed
    double ruleCycles = 0;      ///< per URL rule evaluated
    double ruleByteCycles = 0;  ///< per byte a rule compares
    double rewriteCycles = 0;   ///< per header rewritten
    /// The Cisco CSS defect the paper found (seed 003 section 5.4): on a 302
    /// the RST to the old server carries a wrong sequence number. On for
    /// Cisco's WebNS 5.10, the software the paper tested last (an
    /// assumption: the paper reports the bug after the 5.10 results
    /// without naming the version).
    bool rstSeqDefect = false;
    /// Cookie persistence methods the product offers (behaviour.cookie_methods,
    /// seed 003 section 5.6): pre-arranged (Foundry, Radware), insert (Nortel,
    /// F5, Cisco), learn (Nortel, 3Com).
    bool cookiePrearranged = false;
    bool cookieInsert = false;
    bool cookieLearn = false;
    /// SSL session-ID persistence (features.l7.ssl_id_persistence, table 5).
    bool sslIdPersistence = false;
    /// What a connection to the SSL service whose first record is no
    /// ClientHello dp_tls can read gets (behaviour.ssl_unparsed): forwarded
    /// without persistence, or reset.
    bool sslUnparsedDrop = false;
    /// What a request head the switch cannot parse gets (behaviour.malformed_request):
    /// "400 Bad Request" and a FIN (true), or an RST to the client.
    bool malformedBadRequest = false;
    /// Server checks the product offers (features.fault_tolerance, table 6).
    bool checkPing = false;
    bool checkPort = false;
    bool checkWebPage = false;
    bool checkContent = false;
    /// Switch redundancy the product offers (features.fault_tolerance, table 6).
    bool activeBackup = false;
    bool activeActive = false;
    /// Connection synchronisation in a redundant pair (behaviour.session_sync:
    /// "connections"): each L4 session is copied to the other switch as it
    /// is made, so a takeover keeps established connections (an assumption
    /// per product; the seed is silent).
    bool sessionSync = false;
    /// Persistence synchronisation (session_sync "persistence", and
    /// "connections" too): learned cookies and SSL session IDs copied to
    /// the other switch as they are stored.
    bool persistenceSync = false;
    /// Redundant pair: the master's advertisement interval
    /// (behaviour.failover_advert_interval_s; VrrpRouter's
    /// AdvertisementInterval in RedundantPairTestbed).
    double failoverAdvertIntervalS = 1;
};

/// Reads path; throws std::runtime_error "FILE:LINE: key 'x': ..." on a
/// missing or bad value.
WebSwitchProfile LoadWebSwitchProfile(const std::string& path);

const char* KeepAliveName(KeepAliveStrategy k);

} // namespace routertwin

#endif
