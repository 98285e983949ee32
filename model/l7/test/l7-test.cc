// The L7 web switch between ns-3 TCP end hosts, checked against what the
// wire shows: the pcaps on both sides of the switch read by an independent
// parser (pcap-segments.h), sequence arithmetic mod 2^32, RFC 1071 sums,
// and the byte counts HTTP implies.
#include "pcap-segments.h"
#include "tls-vectors.h"
#include "tls-apps.h"
#include "web-switch-testbed.h"

#include <ns3/enum.h>
#include <ns3/boolean.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/error-model.h>
#include <ns3/pointer.h>
#include <ns3/uinteger.h>
#include <ns3/net-device.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

using namespace routertwin;
using namespace routertwin::tls_vectors;
using routertwin::test::ReadPcapSegments;
using routertwin::test::Segment;

namespace
{
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
constexpr uint32_t kClient = (198u << 24) | (18u << 16) | (1u << 8) | 2u;

std::string
Profile(const std::string& name)
{
    return std::string(RT_SOURCE_DIR) + "/scenarios/platforms/" + name + ".yaml";
}

std::string
Tmp(const std::string& name)
{
    return ::testing::TempDir() + "l7-" + name;
}

/// A testbed on a profile: .gif to server 0, .htm to server 1.
struct Bed
{
    explicit Bed(const std::string& profile, std::vector<std::vector<HttpClientApp::Request>> clients,
                 const std::string& pcap = "")
    {
        WebSwitchTestbedConfig c;
        c.profile = LoadWebSwitchProfile(Profile(profile));
        c.clients = std::move(clients);
        c.pcapPrefix = pcap.empty() ? "" : Tmp(pcap);
        bed = std::make_unique<WebSwitchTestbed>(c);
        bed->Switch()->AddUrlRule(DP_URL_EXT, "gif", 0);
        bed->Switch()->AddUrlRule(DP_URL_EXT, "htm", 1);
    }
    /// Runs, then destroys the simulation: the pcap files are complete
    /// (closed) afterwards; the applications and the switch keep their counts.
    void Run()
    {
        bed->Run();
        ns3::Simulator::Destroy();
    }
    std::unique_ptr<WebSwitchTestbed> bed;
};

HttpClientApp::Request
Get(const std::string& path)
{
    return HttpClientApp::Get(path);
}

std::vector<Segment>
From(const std::vector<Segment>& all, bool fromHost, uint32_t host)
{
    std::vector<Segment> out;
    for (const auto& s : all)
        if ((s.src == host) == fromHost)
            out.push_back(s);
    return out;
}

uint32_t
ServerAddr(uint32_t k)
{
    return (198u << 24) | (18u << 16) | ((10u + k) << 8) | 2u;
}
} // namespace

TEST(WebSwitchDelayedBinding, SplitRequestIsAnsweredBySwitchThenBoundToTheServerItsUrlNames)
{
    auto gif = Get("/wbtree/CLASS_223.gif");
    gif.pieces = {10, 20}; // the head arrives in three segments
    Bed b("nctu-f5-bigip-ha", {{gif, Get("/wbtree/CLASS_4096.htm")}}, "split");
    b.Run();
    const auto& resp = b.bed->Client(0)->Responses();
    ASSERT_EQ(resp.size(), 2u);
    // the bodies are the sizes the paths name, every byte where it belongs
    EXPECT_EQ(resp[0].bodyBytes, 223u);
    EXPECT_EQ(resp[1].bodyBytes, 4096u);
    EXPECT_TRUE(resp[0].bodyMatches && resp[1].bodyMatches);
    EXPECT_EQ(resp[0].server, "s0");
    EXPECT_EQ(resp[1].server, "s1");
    EXPECT_EQ(b.bed->Server(0)->Paths(), std::vector<std::string>{"/wbtree/CLASS_223.gif"});
    EXPECT_EQ(b.bed->Server(1)->Paths(), std::vector<std::string>{"/wbtree/CLASS_4096.htm"});
    EXPECT_EQ(b.bed->Client(0)->Connections(), 1u);

    // Delayed binding on the wire: the switch answers the client's SYN,
    // and its SYN to server 0 leaves only after the request's last piece.
    const auto client = ReadPcapSegments(Tmp("split-client.pcap"));
    const auto server0 = ReadPcapSegments(Tmp("split-server0.pcap"));
    ASSERT_FALSE(client.empty());
    ASSERT_FALSE(server0.empty());
    EXPECT_EQ(client[0].flags, kSyn);
    EXPECT_EQ(client[1].flags, kSyn | kAck);
    EXPECT_EQ(client[1].ack, client[0].seq + 1);
    std::vector<Segment> pieces;
    for (const auto& s : From(client, true, kClient))
        if (!s.payload.empty() && pieces.size() < 3)
            pieces.push_back(s);
    ASSERT_EQ(pieces.size(), 3u);
    EXPECT_EQ(pieces[0].payload, "GET /wbtre");
    EXPECT_EQ(pieces[1].seq, pieces[0].seq + 10);
    EXPECT_EQ(server0[0].flags, kSyn);
    EXPECT_GT(server0[0].t, pieces[2].t);
    // the request reaches the server whole, as the three pieces together
    std::string request;
    for (const auto& s : From(server0, false, ServerAddr(0)))
        request += s.payload;
    EXPECT_EQ(request, gif.bytes);
}

TEST(WebSwitchSplice, EveryPcapSequenceNumberMapsByTheRecordedOffsetsAndEveryChecksumVerifies)
{
    // F5's server reuse: four requests on one client connection, two
    // server connections each used twice (four bindings)
    Bed b("nctu-f5-bigip-ha",
          {{Get("/a/CLASS_3000.gif"), Get("/a/CLASS_5000.htm"), Get("/b/CLASS_2000.gif"), Get("/b/CLASS_100.htm")}},
          "map");
    b.Run();
    ASSERT_EQ(b.bed->Client(0)->Responses().size(), 4u);
    const auto& binds = b.bed->Switch()->Bindings();
    ASSERT_EQ(binds.size(), 4u);
    EXPECT_EQ(b.bed->Switch()->GetCounters().serverReuses, 2u);
    const auto client = ReadPcapSegments(Tmp("map-client.pcap"));
    std::vector<std::vector<Segment>> server = {ReadPcapSegments(Tmp("map-server0.pcap")),
                                                ReadPcapSegments(Tmp("map-server1.pcap"))};
    size_t checked = 0;
    for (const std::vector<Segment>* side : std::vector<const std::vector<Segment>*>{&client, &server[0], &server[1]})
        for (const auto& s : *side)
        {
            EXPECT_TRUE(s.ipChecksumOk) << "IPv4 checksum at t=" << s.t;
            EXPECT_TRUE(s.tcpChecksumOk) << "TCP checksum at t=" << s.t;
            ++checked;
        }
    EXPECT_GT(checked, 20u);

    // Binding i holds from its time to the next binding's. Server to client:
    // each server segment in it appears on the client side with seq + D_s,
    // ack - D_c and the same bytes; client to server: each client segment
    // after the request it bound appears with seq + D_c and ack - D_s.
    size_t s2c = 0, c2s = 0;
    for (size_t i = 0; i < binds.size(); ++i)
    {
        const SpliceBinding& bd = binds[i];
        EXPECT_NE(bd.clientOffset, 0u);
        EXPECT_NE(bd.serverOffset, 0u);
        const double from = bd.at.GetSeconds();
        const double to = i + 1 < binds.size() ? binds[i + 1].at.GetSeconds() : 1e9;
        for (const auto& s : server[bd.server])
        {
            if (s.src != ServerAddr(bd.server) || s.dport != bd.localPort || s.t < from || s.t >= to ||
                (s.payload.empty() && !(s.flags & kFin)))
                continue;
            const bool found = std::any_of(client.begin(), client.end(), [&](const Segment& c) {
                return c.dst == kClient && c.seq == s.seq + bd.serverOffset &&
                       c.ack == s.ack - bd.clientOffset && c.payload == s.payload;
            });
            EXPECT_TRUE(found) << "server segment seq " << s.seq << " of binding " << i;
            ++s2c;
        }
        for (const auto& c : client)
        {
            if (c.src != kClient || c.t < from || c.t >= to || !c.payload.empty() || (c.flags & kSyn))
                continue;
            const bool found = std::any_of(server[bd.server].begin(), server[bd.server].end(), [&](const Segment& s) {
                return s.dst == ServerAddr(bd.server) && s.sport == bd.localPort &&
                       s.seq == c.seq + bd.clientOffset && s.ack == c.ack - bd.serverOffset;
            });
            EXPECT_TRUE(found) << "client segment ack " << c.ack << " of binding " << i;
            ++c2s;
        }
    }
    EXPECT_GE(s2c, 10u); // 10,100 body bytes in segments of at most 1,448
    EXPECT_GE(c2s, 4u);
    // nothing refused or absorbed on a clean run
    for (const auto& [reason, n] : b.bed->Switch()->DropCounts())
        ADD_FAILURE() << n << " counted as " << reason;
}

namespace
{
/// The RSTs the switch sent toward server k, each with the next sequence
/// number the server expected then: the ACK number of the server's last
/// segment on that connection before the RST.
struct ResetSeen
{
    uint32_t seq;
    uint32_t expected;
};

std::vector<ResetSeen>
ResetsToServer(const std::vector<Segment>& side, uint32_t k)
{
    std::vector<ResetSeen> out;
    for (size_t i = 0; i < side.size(); ++i)
    {
        const Segment& r = side[i];
        if (!(r.flags & kRst) || r.dst != ServerAddr(k))
            continue;
        uint32_t expected = 0;
        for (size_t j = 0; j < i; ++j)
            if (side[j].src == ServerAddr(k) && side[j].dport == r.sport && (side[j].flags & kAck))
                expected = side[j].ack;
        out.push_back({r.seq, expected});
    }
    return out;
}
} // namespace

TEST(WebSwitchKeepAlive, RstServerResetsEachServerConnectionAfterItsResponseAndKeepsTheClientOne)
{
    Bed b("nctu-nortel-ace180e", {{Get("/CLASS_500.gif"), Get("/CLASS_600.gif"), Get("/CLASS_700.htm")}}, "rst");
    b.Run();
    ASSERT_EQ(b.bed->Client(0)->Responses().size(), 3u);
    EXPECT_EQ(b.bed->Client(0)->Connections(), 1u);
    EXPECT_EQ(b.bed->Server(0)->Accepted(), 2u);
    EXPECT_EQ(b.bed->Server(1)->Accepted(), 1u);
    EXPECT_EQ(b.bed->Server(0)->ResetsReceived() + b.bed->Server(1)->ResetsReceived(), 3u);
    size_t resets = 0;
    for (uint32_t k = 0; k < 2; ++k)
        for (const auto& r : ResetsToServer(ReadPcapSegments(Tmp("rst-server" + std::to_string(k) + ".pcap")), k))
        {
            EXPECT_EQ(r.seq, r.expected); // in the server's window: accepted
            ++resets;
        }
    EXPECT_EQ(resets, 3u);
    EXPECT_EQ(b.bed->Switch()->GetCounters().connectionSides, 1u + 3u);
}

TEST(WebSwitchKeepAlive, ServerReuseKeepsOneConnectionPerServerAndResetsNone)
{
    Bed b("nctu-f5-bigip-ha",
          {{Get("/CLASS_10.gif"), Get("/CLASS_20.htm"), Get("/CLASS_30.gif"), Get("/CLASS_40.htm")}}, "reuse");
    b.Run();
    ASSERT_EQ(b.bed->Client(0)->Responses().size(), 4u);
    EXPECT_EQ(b.bed->Server(0)->RequestsPerConnection(), std::vector<uint32_t>{2});
    EXPECT_EQ(b.bed->Server(1)->RequestsPerConnection(), std::vector<uint32_t>{2});
    for (uint32_t k = 0; k < 2; ++k)
        EXPECT_TRUE(ResetsToServer(ReadPcapSegments(Tmp("reuse-server" + std::to_string(k) + ".pcap")), k).empty());
    EXPECT_EQ(b.bed->Switch()->GetCounters().connectionSides, 1u + 2u);
}

TEST(WebSwitchKeepAlive, DowngradeCloseAddsConnectionCloseAndEveryRequestTakesAConnection)
{
    const auto r = Get("/CLASS_800.htm");
    Bed b("nctu-foundry-serveironxl", {{r, Get("/CLASS_900.htm"), Get("/CLASS_1000.gif")}}, "down");
    b.Run();
    ASSERT_EQ(b.bed->Client(0)->Responses().size(), 3u);
    EXPECT_EQ(b.bed->Client(0)->Connections(), 3u);
    EXPECT_EQ(b.bed->Server(1)->RequestsPerConnection(), (std::vector<uint32_t>{1, 1}));
    EXPECT_EQ(b.bed->Switch()->GetCounters().rewrites, 3u);
    // each connection closed by both ends is forgotten at its last ACK
    EXPECT_EQ(b.bed->Switch()->ClientConnections(), 0u);
    // the server got the client's request plus "Connection: close\r\n"
    // (19 bytes) before its blank line
    std::string got;
    for (const auto& s : ReadPcapSegments(Tmp("down-server1.pcap")))
        if (s.dst == ServerAddr(1) && !s.payload.empty())
        {
            got = s.payload;
            break;
        }
    std::string want = r.bytes;
    want.insert(want.size() - 2, "Connection: close\r\n");
    EXPECT_EQ(got, want);
}

namespace
{
/// The 302 case on a Cisco profile: .gif then .htm on one client
/// connection. Returns server 0's resets and the client's sequence number
/// after the redirected request.
struct RedirectRun
{
    std::vector<ResetSeen> resets;
    uint32_t clientNextAfterRequest2 = 0;
    uint32_t redirects = 0;
    std::vector<uint32_t> statuses;
    std::map<std::string, uint64_t> drops;
};

RedirectRun
Redirect(const std::string& profile, const std::string& pcap)
{
    RedirectRun out;
    Bed b(profile, {{Get("/CLASS_2000.gif"), Get("/CLASS_300.htm")}}, pcap);
    b.Run();
    for (const auto& r : b.bed->Client(0)->Responses())
        out.statuses.push_back(r.status);
    out.redirects = b.bed->Client(0)->Redirects();
    out.drops = b.bed->Switch()->DropCounts();
    out.resets = ResetsToServer(ReadPcapSegments(Tmp(pcap + "-server0.pcap")), 0);
    std::vector<Segment> requests;
    for (const auto& s : ReadPcapSegments(Tmp(pcap + "-client.pcap")))
        if (s.src == kClient && !s.payload.empty())
            requests.push_back(s);
    if (requests.size() >= 2)
        out.clientNextAfterRequest2 = requests[1].seq + static_cast<uint32_t>(requests[1].payload.size());
    return out;
}
} // namespace

TEST(WebSwitchRedirect302, ContentOnAnotherServerGetsA302AndTheOldServerAnInWindowReset)
{
    const RedirectRun r = Redirect("nctu-cisco-css11154-v310", "r302");
    EXPECT_EQ(r.statuses, (std::vector<uint32_t>{200, 302, 200}));
    EXPECT_EQ(r.redirects, 1u);
    ASSERT_EQ(r.resets.size(), 1u);
    EXPECT_EQ(r.resets[0].seq, r.resets[0].expected);
    // the client ACKs the 302 on its repeated request, so nothing is
    // absorbed on the client side; ns-3's server answers the switch's RST
    // with one of its own, which finds that connection closed
    EXPECT_EQ(r.drops, (std::map<std::string, uint64_t>{{"server_connection_closed", 1}}));
}

TEST(WebSwitchCssDefect, TheResetOnA302CarriesTheUntranslatedClientSequenceNumber)
{
    const RedirectRun r = Redirect("nctu-cisco-css11154-v510", "css");
    EXPECT_EQ(r.statuses, (std::vector<uint32_t>{200, 302, 200}));
    ASSERT_EQ(r.resets.size(), 1u);
    // found in the pcap: not the number the server expects, but the
    // client's own (its next byte after the redirected request)
    EXPECT_NE(r.resets[0].seq, r.resets[0].expected);
    EXPECT_EQ(r.resets[0].seq, r.clientNextAfterRequest2);
}

TEST(WebSwitchBadInput, RequestLineOver8KBIsResetAndCountedAsTooLarge)
{
    HttpClientApp::Request longLine;
    longLine.bytes = "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
    Bed b("nctu-f5-bigip-ha", {{longLine}});
    b.Run();
    EXPECT_EQ(b.bed->Switch()->DropCount("http_too_large"), 1u);
    EXPECT_EQ(b.bed->Client(0)->ResetsReceived(), 1u);
    EXPECT_EQ(b.bed->Switch()->ClientConnections(), 0u);
    EXPECT_EQ(b.bed->Server(0)->Accepted() + b.bed->Server(1)->Accepted(), 0u);
}

TEST(WebSwitchBadInput, BareCrIsAnswered400WhenTheProfileSaysSoAndCountedAsMalformed)
{
    HttpClientApp::Request bad;
    bad.bytes = "GET /x.gif HTTP/1.1\rHost: x\r\n\r\n";
    Bed b("nctu-f5-bigip-ha", {{bad}});
    // F5's profile with behaviour.malformed_request: bad_request
    WebSwitchProfile p = b.bed->Switch()->GetProfile();
    EXPECT_FALSE(p.malformedBadRequest); // the file's assumption: reset
    p.malformedBadRequest = true;
    b.bed->Switch()->SetProfile(p);
    b.Run();
    EXPECT_EQ(b.bed->Switch()->DropCount("http_malformed"), 1u);
    ASSERT_EQ(b.bed->Client(0)->Responses().size(), 1u);
    EXPECT_EQ(b.bed->Client(0)->Responses()[0].status, 400u);
    EXPECT_EQ(b.bed->Server(0)->Accepted() + b.bed->Server(1)->Accepted(), 0u);
    // the switch's FIN and the client's are both acknowledged: forgotten
    EXPECT_EQ(b.bed->Switch()->ClientConnections(), 0u);
}

TEST(WebSwitchPricing, CyclesAreTheProfilesPricesTimesTheCountedOperations)
{
    Bed b("nctu-nortel-ace180e", {{Get("/CLASS_100.gif")}});
    b.Run();
    const auto& c = b.bed->Switch()->GetCounters();
    const WebSwitchProfile& p = b.bed->Switch()->GetProfile();
    // a handshake segment is priced in its connection side, not as a packet
    const double expected = p.l7PacketCycles * double(c.packets - c.handshakeSegments) +
                            p.connectionCycles * double(c.connectionSides) +
                            p.parseByteCycles * double(c.httpOps.bytes_parsed) +
                            p.ruleCycles * double(c.ruleOps.rules_evaluated) +
                            p.ruleByteCycles * double(c.ruleOps.bytes_parsed) + p.rewriteCycles * double(c.rewrites);
    EXPECT_DOUBLE_EQ(c.cycles, expected);
    // Nortel evaluates every rule of every server: 2 rules x 2 servers
    EXPECT_EQ(c.ruleOps.rules_evaluated, 4u);
    EXPECT_EQ(c.connectionSides, 2u);
    // RFC 793 3.4: SYN, SYN-ACK, ACK on the client's side and on the server's
    EXPECT_EQ(c.handshakeSegments, 6u);
}

TEST(WebSwitchPricing, TheSynAckLeavesAfterTheProfilesCyclesForAConnectionSide)
{
    // Nortel: 10,000 cycles for the connection side, its handshake segments
    // included (the profile: "control block, handshake segments built,
    // timers"), at 200 MHz = 50 us between the SYN's arrival and the
    // SYN-ACK's departure on the switch's client port (pcap: microsecond
    // stamps)
    Bed b("nctu-nortel-ace180e", {{Get("/CLASS_100.gif")}}, "price");
    const WebSwitchProfile& p = b.bed->Switch()->GetProfile();
    const double expected = p.connectionCycles / p.clockHz;
    EXPECT_NEAR(expected, 50e-6, 1e-12);
    b.Run();
    const auto client = ReadPcapSegments(Tmp("price-client.pcap"));
    ASSERT_GE(client.size(), 2u);
    ASSERT_EQ(client[0].flags, kSyn);
    ASSERT_EQ(client[1].flags, kSyn | kAck);
    EXPECT_NEAR(client[1].t - client[0].t, expected, 1.01e-6);
}

TEST(WebSwitchConcurrency, ThreeClientsInterleavedKeepTheirOwnBindingsAndBytes)
{
    for (const char* profile : {"nctu-f5-bigip-ha", "nctu-nortel-ace180e"})
    {
        std::vector<std::vector<HttpClientApp::Request>> clients;
        for (int i = 0; i < 3; ++i)
            clients.push_back({Get("/c" + std::to_string(i) + "/CLASS_" + std::to_string(3000 + i) + ".gif"),
                               Get("/c" + std::to_string(i) + "/CLASS_" + std::to_string(7000 + i) + ".htm"),
                               Get("/c" + std::to_string(i) + "/CLASS_" + std::to_string(500 + i) + ".gif")});
        Bed b(profile, clients);
        b.Run();
        for (uint32_t i = 0; i < 3; ++i)
        {
            const auto& r = b.bed->Client(i)->Responses();
            ASSERT_EQ(r.size(), 3u) << profile << " client " << i;
            EXPECT_EQ(r[0].bodyBytes, 3000u + i);
            EXPECT_EQ(r[1].bodyBytes, 7000u + i);
            EXPECT_EQ(r[2].bodyBytes, 500u + i);
            for (const auto& x : r)
                EXPECT_TRUE(x.bodyMatches) << profile << " client " << i;
            EXPECT_EQ(b.bed->Client(i)->Connections(), 1u);
        }
        EXPECT_EQ(b.bed->Server(0)->Requests(), 6u);
        EXPECT_EQ(b.bed->Server(1)->Requests(), 3u);
        EXPECT_EQ(b.bed->Switch()->DropCount("no_session"), 0u);
    }
}

TEST(WebSwitchBadInput, ClientFinBeforeTheHeadEndsIsCountedAsIncomplete)
{
    HttpClientApp::Request cut;
    cut.bytes = "GET /x.gif HTTP/1.1\r\nHost: x"; // no end of line, no blank line
    Bed b("nctu-f5-bigip-ha", {{cut}});
    b.bed->Client(0)->SetAttribute("GiveUpAfter", ns3::TimeValue(ns3::MilliSeconds(50)));
    b.Run();
    EXPECT_EQ(b.bed->Client(0)->GaveUp(), 1u);
    EXPECT_EQ(b.bed->Switch()->DropCount("http_incomplete_at_fin"), 1u);
    EXPECT_EQ(b.bed->Server(0)->Accepted() + b.bed->Server(1)->Accepted(), 0u);
}

TEST(WebSwitchCookie, PreArrangedCookieValueChoosesTheServerBeforeTheUrlRules)
{
    // the .htm rule names server 1, but "Server=A" maps to server 0;
    // a value nobody mapped falls through to the rules (Foundry: the
    // pre-arranged method, seed 003 section 5.6)
    Bed b("nctu-foundry-serveironxl", {{HttpClientApp::Get("/CLASS_10.htm", false, "Cookie: lang=en; Server=A\r\n"),
                                HttpClientApp::Get("/CLASS_20.htm", false, "Cookie: Server=Z\r\n"),
                                Get("/CLASS_30.htm")}});
    b.bed->Switch()->AddCookieServer("Server", "A", 0);
    b.bed->Switch()->AddCookieServer("Server", "B", 1);
    b.Run();
    EXPECT_EQ(b.bed->Server(0)->Paths(), std::vector<std::string>{"/CLASS_10.htm"});
    EXPECT_EQ(b.bed->Server(1)->Paths(), (std::vector<std::string>{"/CLASS_20.htm", "/CLASS_30.htm"}));
    EXPECT_EQ(b.bed->Switch()->GetCounters().cookieHits, 1u);
}

TEST(WebSwitchCookie, EachProductOffersOnlyTheMethodsSection56Lists)
{
    // seed 003 section 5.6: pre-arranged Foundry, Radware; insert Nortel,
    // F5 (Big-ip), Cisco; learn Nortel, 3Com (3Com does no URL switching:
    // its profile has no L7 prices and the ns-3 switch is not built on it)
    struct Case
    {
        const char* profile;
        bool prearranged, insert, learn;
    };
    for (const Case& k : {Case{"nctu-nortel-ace180e", false, true, true}, Case{"nctu-f5-bigip-ha", false, true, false},
                          Case{"nctu-cisco-css11154-v510", false, true, false},
                          Case{"nctu-foundry-serveironxl", true, false, false},
                          Case{"nctu-radware-wsdpro", true, false, false}})
    {
        auto offered = [&](auto&& configure) {
            Bed b(k.profile, {{Get("/CLASS_1.gif")}});
            bool ok = true;
            try
            {
                configure(*b.bed->Switch());
            }
            catch (const std::invalid_argument&)
            {
                ok = false;
            }
            ns3::Simulator::Destroy();
            return ok;
        };
        EXPECT_EQ(offered([](WebSwitch& w) { w.AddCookieServer("Server", "A", 0); }), k.prearranged) << k.profile;
        EXPECT_EQ(offered([](WebSwitch& w) { w.SetCookiePersistence(CookieMode::Insert, "RT"); }), k.insert)
            << k.profile;
        EXPECT_EQ(offered([](WebSwitch& w) { w.SetCookiePersistence(CookieMode::Learn, "SID"); }), k.learn)
            << k.profile;
    }
}

namespace
{
/// Three HTTP/1.0 requests per client (a connection each): client 0 asks
/// for a .gif first (server 0 by the URL rules), then two .htm (server 1's
/// by the rules); client 1 the other way round. With cookie persistence
/// every request of a client goes to its first server.
/// a after b modulo 2^32 (RFC 793 3.3), the test's own
bool
After(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(a - b) > 0;
}

std::vector<std::vector<HttpClientApp::Request>>
StickyClients()
{
    auto get10 = [](const std::string& p) { return HttpClientApp::Get(p, true); };
    return {{get10("/a/CLASS_6000.gif"), get10("/a/CLASS_700.htm"), get10("/a/CLASS_800.htm")},
            {get10("/b/CLASS_900.htm"), get10("/b/CLASS_3000.gif"), get10("/b/CLASS_100.gif")}};
}
} // namespace

TEST(WebSwitchCookie, InsertedCookieShiftsEveryLaterSequenceNumberByItsLengthAndKeepsEachClientOnItsServer)
{
    Bed b("nctu-f5-bigip-ha", StickyClients(), "insert");
    WebSwitch& w = *b.bed->Switch();
    w.SetCookiePersistence(CookieMode::Insert, "RTSRV");
    for (uint32_t i = 0; i < 2; ++i)
        b.bed->Client(i)->SetAttribute("Cookies", ns3::BooleanValue(true));
    b.Run();

    // stickiness over three connections each, against the URL rules
    for (uint32_t i = 0; i < 2; ++i)
    {
        const auto& r = b.bed->Client(i)->Responses();
        ASSERT_EQ(r.size(), 3u);
        EXPECT_EQ(b.bed->Client(i)->Connections(), 3u);
        for (const auto& x : r)
        {
            EXPECT_EQ(x.server, "s" + std::to_string(i));
            EXPECT_TRUE(x.bodyMatches);
        }
        // the first answer carries the inserted cookie (the server's
        // address, 198.18.(10+i).2); the later ones came by it: none
        EXPECT_EQ(r[0].setCookies, std::vector<std::string>{"RTSRV=198.18.1" + std::to_string(i) + ".2; path=/"});
        EXPECT_TRUE(r[1].setCookies.empty() && r[2].setCookies.empty());
        const std::string sent = "RTSRV=198.18.1" + std::to_string(i) + ".2";
        EXPECT_EQ(b.bed->Server(i)->Cookies(), (std::vector<std::string>{"", sent, sent}));
    }
    EXPECT_EQ(b.bed->Server(0)->Paths(),
              (std::vector<std::string>{"/a/CLASS_6000.gif", "/a/CLASS_700.htm", "/a/CLASS_800.htm"}));
    EXPECT_EQ(w.GetCounters().cookieHits, 4u);
    EXPECT_EQ(w.GetCounters().cookiesInserted, 2u);
    ASSERT_EQ(w.Edits().size(), 2u);
    for (const auto& [reason, n] : w.DropCounts())
        ADD_FAILURE() << n << " counted as " << reason;

    const auto client = ReadPcapSegments(Tmp("insert-client.pcap"));
    std::vector<std::vector<Segment>> server = {ReadPcapSegments(Tmp("insert-server0.pcap")),
                                                ReadPcapSegments(Tmp("insert-server1.pcap"))};
    for (const std::vector<Segment>* side : std::vector<const std::vector<Segment>*>{&client, &server[0], &server[1]})
        for (const auto& s : *side)
            EXPECT_TRUE(s.ipChecksumOk && s.tcpChecksumOk) << "checksum at t=" << s.t;

    // Map every segment of the two edited connections across the splice:
    // server byte x before the edit point e is client byte x + D_s, from e
    // on x + D_s + n (n inserted bytes); a client acknowledgment A is
    // A - D_s up to e + D_s, A - D_s - n from e + D_s + n on.
    for (const SpliceEdit& e : w.Edits())
    {
        const auto bd = std::find_if(w.Bindings().begin(), w.Bindings().end(), [&](const SpliceBinding& x) {
            return x.clientPort == e.clientPort && x.localPort == e.localPort;
        });
        ASSERT_NE(bd, w.Bindings().end());
        const uint32_t n = static_cast<uint32_t>(e.inserted.size());
        EXPECT_EQ(e.inserted, "Set-Cookie: RTSRV=198.18.1" + std::to_string(e.server) + ".2; path=/\r\n");
        const uint32_t editClient = e.serverSeq + bd->serverOffset;
        // the client's byte stream of this connection, by sequence number
        std::map<uint32_t, std::string> toClient;
        for (const auto& c : client)
            if (c.dst == kClient && c.dport == e.clientPort && !c.payload.empty())
                toClient[c.seq] = c.payload;
        auto clientBytes = [&](uint32_t from, size_t len) {
            std::string out;
            for (uint32_t at = from; out.size() < len;)
            {
                auto it = toClient.find(at);
                if (it == toClient.end())
                    break;
                out += it->second;
                at += static_cast<uint32_t>(it->second.size());
            }
            return out.substr(0, len);
        };
        size_t mapped = 0, acks = 0, straddling = 0;
        for (const auto& s : server[e.server])
        {
            if (s.src != ServerAddr(e.server) || s.dport != e.localPort || (s.flags & kSyn) ||
                (s.payload.empty() && !(s.flags & kFin)))
                continue;
            const uint32_t len = static_cast<uint32_t>(s.payload.size());
            std::string want = s.payload;
            uint32_t at = s.seq + bd->serverOffset;
            if (After(s.seq + len, e.serverSeq) && !After(s.seq, e.serverSeq))
            {
                want.insert(e.serverSeq - s.seq, e.inserted); // the edited segment
                ++straddling;
            }
            else if (!After(e.serverSeq, s.seq))
                at += n; // after the edit
            if (!want.empty())
                EXPECT_EQ(clientBytes(at, want.size()), want) << "server seq " << s.seq;
            else
                EXPECT_TRUE(std::any_of(client.begin(), client.end(), [&](const Segment& c) {
                    return c.dst == kClient && (c.flags & kFin) && c.seq == at;
                })) << "server FIN seq " << s.seq;
            ++mapped;
        }
        EXPECT_EQ(straddling, 1u);
        EXPECT_GE(mapped, e.server == 0 ? 5u : 1u); // 6,000 body bytes: five segments at least
        for (const auto& c : client)
        {
            if (c.src != kClient || c.sport != e.clientPort || !c.payload.empty() || (c.flags & kSyn) ||
                c.t < bd->at.GetSeconds())
                continue;
            const uint32_t want = After(c.ack, editClient) ? c.ack - bd->serverOffset - n
                                                                      : c.ack - bd->serverOffset;
            EXPECT_TRUE(std::any_of(server[e.server].begin(), server[e.server].end(), [&](const Segment& s) {
                return s.dst == ServerAddr(e.server) && s.sport == e.localPort && s.ack == want;
            })) << "client ack " << c.ack;
            ++acks;
        }
        EXPECT_GE(acks, 2u);
    }
    // the first response (6,000 bytes) filled a segment: with the cookie it
    // no longer fits the 1,500-byte MTU and goes as two segments
    const auto first = std::find_if(w.Edits().begin(), w.Edits().end(), [](const SpliceEdit& e) { return e.server == 0; });
    ASSERT_NE(first, w.Edits().end());
    size_t full = 0;
    for (const auto& c : client)
        if (c.dst == kClient && c.dport == first->clientPort && c.payload.size() == 1460)
            ++full;
    EXPECT_EQ(full, 1u);
}

TEST(WebSwitchCookie, LearnedServerCookieSendsTheReturningClientBackToTheServerThatSetIt)
{
    auto clients = StickyClients();
    // a third client with a value no server set: the URL rules decide
    clients.push_back({HttpClientApp::Get("/c/CLASS_50.htm", true, "Cookie: SID=s0-99\r\n")});
    Bed b("nctu-nortel-ace180e", clients, "learn");
    WebSwitch& w = *b.bed->Switch();
    w.SetCookiePersistence(CookieMode::Learn, "SID");
    for (uint32_t k = 0; k < 2; ++k)
        b.bed->Server(k)->SetAttribute("SessionCookie", ns3::StringValue("SID"));
    for (uint32_t i = 0; i < 2; ++i)
        b.bed->Client(i)->SetAttribute("Cookies", ns3::BooleanValue(true));
    b.Run();
    for (uint32_t i = 0; i < 2; ++i)
    {
        const auto& r = b.bed->Client(i)->Responses();
        ASSERT_EQ(r.size(), 3u);
        for (const auto& x : r)
            EXPECT_EQ(x.server, "s" + std::to_string(i));
        // the server's own cookie, passed untouched, once
        EXPECT_EQ(r[0].setCookies, std::vector<std::string>{"SID=s" + std::to_string(i) + "-1; path=/"});
        EXPECT_TRUE(r[1].setCookies.empty() && r[2].setCookies.empty());
    }
    const std::string sid0 = "SID=s0-1", sid1 = "SID=s1-1";
    EXPECT_EQ(b.bed->Server(0)->Cookies(), (std::vector<std::string>{"", sid0, sid0}));
    // server 1: client 1's three requests and the unknown value's
    EXPECT_EQ(b.bed->Server(1)->Requests(), 4u);
    const auto& paths1 = b.bed->Server(1)->Paths();
    EXPECT_NE(std::find(paths1.begin(), paths1.end(), "/c/CLASS_50.htm"), paths1.end());
    // client 2 already holds a SID, so server 1 sets none: 2 values learned
    EXPECT_EQ(w.GetCounters().cookiesLearned, 2u);
    EXPECT_EQ(w.GetCounters().cookieHits, 4u);
    EXPECT_TRUE(w.Edits().empty());
    // learning edits nothing: the client gets the server's bytes
    size_t toClient = 0, fromServers = 0;
    for (const auto& c : ReadPcapSegments(Tmp("learn-client.pcap")))
        if (c.dst == kClient)
            toClient += c.payload.size();
    for (uint32_t k = 0; k < 2; ++k)
        for (const auto& s : ReadPcapSegments(Tmp("learn-server" + std::to_string(k) + ".pcap")))
            if (s.src == ServerAddr(k))
                fromServers += s.payload.size();
    EXPECT_EQ(toClient, fromServers);
}

namespace
{
struct SslRun
{
    std::vector<std::string> answers;
    std::vector<std::string> got0, got1;
    uint32_t resets = 0;
    WebSwitch::Counters counters;
    std::map<std::string, uint64_t> drops;
    uint64_t forwardedNotHandshake = 0;
};

SslRun
RunSsl(const std::string& profile, const std::vector<std::vector<uint8_t>>& connections, bool resetUnparsed)
{
    Bed b(profile, {}, resetUnparsed ? "ssl-reset" : "ssl");
    WebSwitch& w = *b.bed->Switch();
    w.AddSslService(443);
    if (resetUnparsed)
        w.SetAttribute("SslUnparsedReset", ns3::BooleanValue(true));
    std::vector<ns3::Ptr<TlsServerApp>> servers;
    for (uint32_t k = 0; k < 2; ++k)
    {
        auto app = ns3::CreateObject<TlsServerApp>();
        app->SetAnswer(Unhex(k == 0 ? kServerHelloX : kServerHelloY));
        b.bed->ServerNode(k)->AddApplication(app);
        servers.push_back(app);
    }
    auto client = ns3::CreateObject<TlsClientApp>();
    for (const auto& r : connections)
        client->AddConnection(r);
    b.bed->ClientNode()->AddApplication(client);
    client->SetStartTime(ns3::MilliSeconds(1));
    b.Run();
    SslRun out;
    out.answers = client->Answers();
    out.resets = client->ResetsReceived();
    out.got0 = servers[0]->Records();
    out.got1 = servers[1]->Records();
    out.counters = w.GetCounters();
    out.drops = w.DropCounts();
    out.forwardedNotHandshake = w.ForwardedCount("ssl_not_handshake");
    return out;
}
} // namespace

TEST(WebSwitchSsl, AClientOfferingItsSessionIdGoesBackToTheServerThatChoseIt)
{
    const auto first = Unhex(kFirstHello), resumeX = Unhex(kResumingHelloX);
    const auto shX = Unhex(kServerHelloX), shY = Unhex(kServerHelloY);
    // the vectors are what they claim: X offered by the resuming hello
    ASSERT_EQ(first[43], 0);
    ASSERT_EQ(SessionIdAt43(resumeX), SessionIdAt43(shX));
    ASSERT_EQ(SessionIdAt43(shY).size(), 32u);
    // a hello offering Y: the resuming hello with Y's 32 bytes at 44
    auto resumeY = resumeX;
    const std::string y = SessionIdAt43(shY);
    std::copy(y.begin(), y.end(), resumeY.begin() + 44);
    // an application-data record first (type 23): no ClientHello
    const std::vector<uint8_t> appData = {23, 3, 3, 0, 5, 1, 2, 3, 4, 5};
    // round robin (dp_sched rr) gives servers 1, 0, 1 to the three fresh
    // hellos and would give 0 next; the hellos offering Y go to server 1
    // all the same, X to server 0, and the application data is forwarded
    // without persistence to round robin's next (0)
    const SslRun r = RunSsl("nctu-f5-bigip-ha", {first, first, first, resumeY, resumeX, resumeY, appData}, false);
    auto str = [](const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); };
    const std::string X = str(shX), Y = str(shY);
    EXPECT_EQ(r.answers, (std::vector<std::string>{Y, X, Y, Y, X, Y, X}));
    EXPECT_EQ(r.got0, (std::vector<std::string>{str(first), str(resumeX), str(appData)}));
    EXPECT_EQ(r.got1, (std::vector<std::string>{str(first), str(first), str(resumeY), str(resumeY)}));
    EXPECT_EQ(r.counters.sslHits, 3u);
    EXPECT_EQ(r.counters.sslLearned, 7u); // every ServerHello (X or Y), the application data's answer too
    EXPECT_EQ(r.forwardedNotHandshake, 1u);
    EXPECT_EQ(r.resets, 0u);
    for (const auto& [reason, n] : r.drops)
        ADD_FAILURE() << n << " counted as " << reason;
}

TEST(WebSwitchSsl, AFirstRecordThatIsNoClientHelloIsResetWhenTheProfileSaysSo)
{
    const std::vector<uint8_t> appData = {23, 3, 3, 0, 5, 1, 2, 3, 4, 5};
    std::vector<uint8_t> sslv2 = {0x80, 0x2e, 0x01, 0x00, 0x02}; // SSLv2-compatible hello start
    sslv2.resize(0x2e + 2, 0);
    const SslRun r = RunSsl("nctu-f5-bigip-ha", {appData, sslv2}, true);
    EXPECT_EQ(r.answers, (std::vector<std::string>{"", ""}));
    EXPECT_EQ(r.resets, 2u);
    EXPECT_TRUE(r.got0.empty() && r.got1.empty());
    // the SSLv2 start counts as not_handshake too (dp_tls: first byte not
    // 22); what ns-3's client sends after the reset (an RST and a FIN per
    // connection) finds the connection forgotten: no_session
    EXPECT_EQ(r.drops, (std::map<std::string, uint64_t>{{"no_session", 4}, {"ssl_not_handshake", 2}}));
    EXPECT_EQ(r.forwardedNotHandshake, 0u);
}

namespace
{
/// A server check run on F5's profile (two servers, .gif to 0 and .htm to
/// 1): the ServerState and Probe traces, and HTTP clients started later.
struct HealthRun
{
    explicit HealthRun(dp_health_kind_t kind, const std::string& uri = "/")
        : bed("nctu-f5-bigip-ha", {})
    {
        dp_health_config_default(&cfg, kind);
        cfg.inter_ms = 200;
        cfg.timeout_ms = 50;
        cfg.rise = 2;
        cfg.fall = 3;
        if (kind == DP_HEALTH_CONTENT)
        {
            cfg.expect_len = 5;
            std::memcpy(cfg.expect, "ready", 5);
        }
        WebSwitch& w = *bed.bed->Switch();
        w.SetHealthCheck(cfg, uri);
        w.TraceConnectWithoutContext("ServerState", ns3::MakeCallback(&HealthRun::State, this));
        w.TraceConnectWithoutContext("Probe", ns3::MakeCallback(&HealthRun::Result, this));
        w.StartHealthChecks(ns3::Seconds(0));
    }
    void State(uint32_t server, bool up, ns3::Time at) { changes.push_back({server, up, at.GetSeconds()}); }
    void Result(uint32_t server, uint32_t result, ns3::Time) { ++results[{server, result}]; }
    uint32_t Count(uint32_t server, uint32_t result) const
    {
        auto it = results.find({server, result});
        return it == results.end() ? 0 : it->second;
    }
    /// One HTTP client asking for path at time t.
    ns3::Ptr<HttpClientApp> ClientAt(double t, const std::string& path)
    {
        auto app = ns3::CreateObject<HttpClientApp>();
        app->AddRequest(HttpClientApp::Get(path, true));
        bed.bed->ClientNode()->AddApplication(app);
        app->SetStartTime(ns3::Seconds(t));
        return app;
    }
    template <typename F>
    void At(double t, F f)
    {
        ns3::Simulator::Schedule(ns3::Seconds(t), f);
    }
    struct Change
    {
        uint32_t server;
        bool up;
        double at;
    };
    Bed bed;
    dp_health_config_t cfg{};
    std::vector<Change> changes;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> results;
};
} // namespace

// HAProxy's rules (core/include/dp/dp_health.h): after a server dies, the
// first failing probe starts within one interval (the probe cycle of a
// healthy server: inter plus an answer well under 1 ms); each failure takes
// d (the timeout when silent, the answer's delay otherwise) and the next
// probe starts inter (fastinter unset) after the previous one ended; the
// fall-th failure takes it down. So the detection time lies in
// [fall*d + (fall-1)*inter, fall*d + (fall-1)*inter + inter + 1 ms). Coming
// back: the first passing probe starts within one down cycle (inter + the
// timeout of the failing probes), then rise-1 more, inter apart:
// [(rise-1)*inter, (rise-1)*inter + inter + timeout + rise ms).
TEST(WebSwitchHealth, ASilentServerLeavesThePoolWithinTheTcpCheckWindowAndRejoinsAfterRisePasses)
{
    HealthRun h(DP_HEALTH_TCP);
    // server 1's host silent from 1.03 s to 2.5 s: its link drops everything
    auto em = ns3::CreateObject<ns3::RateErrorModel>();
    em->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
    em->SetRate(1.0);
    em->Disable();
    h.bed.bed->ServerNode(1)->GetDevice(1)->SetAttribute("ReceiveErrorModel", ns3::PointerValue(em));
    h.At(1.03, [em]() { em->Enable(); });
    h.At(2.5, [em]() { em->Disable(); });
    // during the outage the .htm rule's server is down: server 0 answers
    auto during = h.ClientAt(1.9, "/d/CLASS_100.htm");
    auto after = h.ClientAt(3.5, "/e/CLASS_100.htm");
    h.bed.bed->Run();
    ns3::Simulator::Destroy();

    ASSERT_EQ(h.changes.size(), 2u);
    EXPECT_EQ(h.changes[0].server, 1u);
    EXPECT_FALSE(h.changes[0].up);
    EXPECT_TRUE(h.changes[1].up);
    const double inter = 0.2, timeout = 0.05, ms = 1e-3;
    const double detect = h.changes[0].at - 1.03;
    EXPECT_GE(detect, 3 * timeout + 2 * inter - 1e-9);
    EXPECT_LT(detect, 3 * timeout + 2 * inter + inter + ms);
    const double rejoin = h.changes[1].at - 2.5;
    EXPECT_GE(rejoin, 1 * inter - 1e-9);
    EXPECT_LT(rejoin, 1 * inter + inter + timeout + 2 * ms);
    // the C core's closed form agrees with the window above
    uint64_t lo = 0, hi = 0;
    ASSERT_EQ(dp_health_detection_window(&h.cfg, 50, &lo, &hi), 0);
    EXPECT_EQ(lo, 550u);
    EXPECT_EQ(hi, 750u);
    // only server 1's probes failed, by timeout; server 0 stayed up
    EXPECT_EQ(h.Count(0, DP_HEALTH_FAIL_TIMEOUT), 0u);
    EXPECT_GE(h.Count(1, DP_HEALTH_FAIL_TIMEOUT), 3u);
    EXPECT_GT(h.Count(0, DP_HEALTH_PASSED), 15u);
    ASSERT_EQ(during->Responses().size(), 1u);
    EXPECT_EQ(during->Responses()[0].server, "s0");
    ASSERT_EQ(after->Responses().size(), 1u);
    EXPECT_EQ(after->Responses()[0].server, "s1");
    EXPECT_EQ(h.bed.bed->Switch()->GetCounters().notFollowedDown, 1u);
}

TEST(WebSwitchHealth, ContentCheckTakesAServerDownWhenItsPageLosesTheStringAndBackWhenItReturns)
{
    HealthRun h(DP_HEALTH_CONTENT, "/health");
    for (uint32_t k = 0; k < 2; ++k)
        h.bed.bed->Server(k)->SetAttribute("HealthBody", ns3::StringValue("status: ready"));
    auto s1 = h.bed.bed->Server(1);
    h.At(1.03, [s1]() { s1->SetAttribute("HealthBody", ns3::StringValue("status: maintenance")); });
    h.At(2.5, [s1]() { s1->SetAttribute("HealthBody", ns3::StringValue("status: ready")); });
    h.bed.bed->Run();
    ns3::Simulator::Destroy();
    ASSERT_EQ(h.changes.size(), 2u);
    EXPECT_FALSE(h.changes[0].up);
    EXPECT_EQ(h.changes[0].server, 1u);
    // an answered probe fails after its round trip (d < 1 ms)
    const double inter = 0.2, ms = 1e-3;
    const double detect = h.changes[0].at - 1.03;
    EXPECT_GE(detect, 2 * inter);
    EXPECT_LT(detect, 3 * inter + 4 * ms);
    const double rejoin = h.changes[1].at - 2.5;
    EXPECT_GE(rejoin, inter);
    EXPECT_LT(rejoin, 2 * inter + 3 * ms);
    EXPECT_GE(h.Count(1, DP_HEALTH_FAIL_CONTENT), 3u);
    EXPECT_EQ(h.Count(1, DP_HEALTH_FAIL_STATUS), 0u);
    EXPECT_EQ(h.Count(0, DP_HEALTH_FAIL_CONTENT), 0u);
}

TEST(WebSwitchHealth, WebPageCheckFailsOnA503AndOnARefusedConnection)
{
    HealthRun h(DP_HEALTH_HTTP, "/index.htm");
    auto s1 = h.bed.bed->Server(1);
    h.At(1.03, [s1]() { s1->SetAttribute("Status", ns3::UintegerValue(503)); });
    h.At(2.0, [s1]() { s1->SetAttribute("Status", ns3::UintegerValue(200)); });
    h.At(3.03, [s1]() { s1->SetListening(false); });
    h.bed.bed->Run();
    ns3::Simulator::Destroy();
    ASSERT_EQ(h.changes.size(), 3u);
    EXPECT_FALSE(h.changes[0].up);
    EXPECT_TRUE(h.changes[1].up);
    EXPECT_FALSE(h.changes[2].up);
    EXPECT_GE(h.Count(1, DP_HEALTH_FAIL_STATUS), 3u);
    EXPECT_GE(h.Count(1, DP_HEALTH_FAIL_REFUSED), 3u);
    EXPECT_LT(h.changes[2].at - 3.03, 3 * 0.2 + 4e-3);
}

TEST(WebSwitchHealth, AProductWithoutTheCheckRefusesIt)
{
    // seed 003 table 6: 3Com has no content check (its profile cannot
    // drive the ns-3 switch: no URL switching); F5's profile without it
    Bed b("nctu-f5-bigip-ha", {});
    WebSwitchProfile p = b.bed->Switch()->GetProfile();
    p.checkContent = false;
    b.bed->Switch()->SetProfile(p);
    dp_health_config_t cfg;
    dp_health_config_default(&cfg, DP_HEALTH_CONTENT);
    cfg.expect_len = 1;
    cfg.expect[0] = 'x';
    EXPECT_THROW(b.bed->Switch()->SetHealthCheck(cfg), std::invalid_argument);
    dp_health_config_default(&cfg, DP_HEALTH_HTTP);
    EXPECT_NO_THROW(b.bed->Switch()->SetHealthCheck(cfg));
    ns3::Simulator::Destroy();
}

// Ping checks (seed 003 table 6, every product): ICMP echo requests from
// the switch, answered by the servers' own ns-3 IPv4 stacks
// (Icmpv4L4Protocol), on dp_health's schedule. A silent host fails each
// probe by the timeout, so the window is the TCP check's:
// [fall*timeout + (fall-1)*inter, that + inter + 1 ms), and back
// [(rise-1)*inter, (rise-1)*inter + inter + timeout + rise ms).
TEST(WebSwitchHealth, PingTakesASilentHostDownWithinTheClosedFormWindowButNotAClosedPort)
{
    HealthRun h(DP_HEALTH_PING);
    auto em = ns3::CreateObject<ns3::RateErrorModel>();
    em->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
    em->SetRate(1.0);
    em->Disable();
    h.bed.bed->ServerNode(1)->GetDevice(1)->SetAttribute("ReceiveErrorModel", ns3::PointerValue(em));
    h.At(1.03, [em]() { em->Enable(); });
    h.At(2.5, [em]() { em->Disable(); });
    // a closed service port: the host still answers echo, so ping keeps it up
    auto s0 = h.bed.bed->Server(0);
    h.At(3.0, [s0]() { s0->SetListening(false); });
    h.bed.bed->Run();
    ns3::Simulator::Destroy();

    ASSERT_EQ(h.changes.size(), 2u);
    EXPECT_EQ(h.changes[0].server, 1u);
    EXPECT_FALSE(h.changes[0].up);
    EXPECT_EQ(h.changes[1].server, 1u);
    EXPECT_TRUE(h.changes[1].up);
    const double inter = 0.2, timeout = 0.05, ms = 1e-3;
    const double detect = h.changes[0].at - 1.03;
    EXPECT_GE(detect, 3 * timeout + 2 * inter - 1e-9);
    EXPECT_LT(detect, 3 * timeout + 2 * inter + inter + ms);
    const double rejoin = h.changes[1].at - 2.5;
    EXPECT_GE(rejoin, 1 * inter - 1e-9);
    EXPECT_LT(rejoin, 1 * inter + inter + timeout + 2 * ms);
    uint64_t lo = 0, hi = 0;
    ASSERT_EQ(dp_health_detection_window(&h.cfg, 50, &lo, &hi), 0);
    EXPECT_EQ(lo, 550u);
    EXPECT_EQ(hi, 750u);
    // every probe of server 0 was answered (the run lasts past 3 s at
    // one probe per 200 ms), none refused; server 1's silent ones timed out
    EXPECT_GT(h.Count(0, DP_HEALTH_PASSED), 15u);
    EXPECT_EQ(h.Count(0, DP_HEALTH_FAIL_TIMEOUT), 0u);
    EXPECT_EQ(h.Count(0, DP_HEALTH_FAIL_REFUSED), 0u);
    EXPECT_GE(h.Count(1, DP_HEALTH_FAIL_TIMEOUT), 3u);
    EXPECT_EQ(h.bed.bed->Switch()->DropCount("health_echo_stale"), 0u);
    std::printf("ping: down %.1f ms after the host fell silent, back %.1f ms after it answered again\n",
                detect * 1e3, rejoin * 1e3);
}
