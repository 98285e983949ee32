// Switch redundancy (seed 003 table 6: active/backup and active/active, every
// product) as VRRPv3 (RFC 5798, an assumption: the seed names no protocol),
// measured against section 6.1's closed form.
#include "redundant-pair-testbed.h"
#include "tcp-segment-view.h"
#include "tls-apps.h"
#include "tls-vectors.h"
#include "web-switch-profile.h"

#include <ns3/ipv4-address.h>
#include <ns3/ipv4-l3-protocol.h>
#include <ns3/nstime.h>
#include <ns3/string.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace routertwin;

namespace
{
std::string
Profile(const std::string& name)
{
    return std::string(RT_SOURCE_DIR) + "/scenarios/platforms/" + name + ".yaml";
}

/// The shortest cycle a closed-loop thread of RunRedundantPair can have,
/// from the testbed's numbers alone (every link 10 us long, no processing
/// at the web switch or the server counted): the pair's clients spend no
/// CPU time; the client's SYN, the switch's SYN-ACK and the request cross
/// the client segment's two links (client to the L2 switch, the L2 switch
/// to the web switch); the switch's own SYN, the server's SYN-ACK and the
/// request cross the server's link (delayed binding); the answer crosses
/// the server's link and the client segment's two, and its body is
/// serialized whole at least once, at the server link's rate.
double
MinCycleS(double bodyBytes, double serverLinkBps)
{
    constexpr double kPropagation = 10e-6;
    const double connectionAndRequest = 3 * 2 * kPropagation + 3 * kPropagation;
    const double answer = 3 * kPropagation + bodyBytes * 8 / serverLinkBps;
    return connectionAndRequest + answer;
}

/// The cycle-time histograms hold the answers the rates count (rate x window).
void
ExpectCyclesCountTheRatesAnswers(const RedundantPairRunResult& r, double windowS, const char* what)
{
    EXPECT_EQ(r.cycleBefore.Count(), std::llround(r.requestsPerSBefore * windowS)) << what;
    EXPECT_EQ(r.cycleAfter.Count(), std::llround(r.requestsPerSAfter * windowS)) << what;
}

/// a after b modulo 2^32 (RFC 793 3.3)
bool
After(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(a - b) > 0;
}

/// The server-to-client TCP segments the client host receives (its IPv4
/// layer's Rx trace, headers as on the wire), by client port: (arrival,
/// sequence number, payload bytes).
struct SegmentLog
{
    struct Seg
    {
        double at;
        uint32_t seq;
        uint32_t len;
    };
    explicit SegmentLog(ns3::Ptr<ns3::Node> client)
    {
        client->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Rx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, ns3::Ptr<ns3::Ipv4>, uint32_t>(
                      [this](ns3::Ptr<const ns3::Packet> p, ns3::Ptr<ns3::Ipv4>, uint32_t) { Take(p); }));
    }
    void Take(ns3::Ptr<const ns3::Packet> p)
    {
        const auto seg = test::TcpSegmentView::Of(p);
        if (seg && seg->srcPort == 80 && seg->payload > 0)
            byPort[seg->dstPort].push_back({ns3::Simulator::Now().GetSeconds(), seg->seq, seg->payload});
    }
    /// The port that received the most payload bytes.
    uint16_t Busiest() const
    {
        uint16_t best = 0;
        uint64_t most = 0;
        for (const auto& [port, segs] : byPort)
        {
            uint64_t bytes = 0;
            for (const auto& s : segs)
                bytes += s.len;
            if (bytes > most)
                most = bytes, best = port;
        }
        return best;
    }
    std::map<uint16_t, std::vector<Seg>> byPort;
};

struct PairRun
{
    explicit PairRun(bool activeActive, bool sessionSync = true, double stopS = 10)
    {
        RedundantPairConfig c;
        c.stop = ns3::Seconds(stopS);
        c.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
        c.profile.sessionSync = sessionSync;
        c.activeActive = activeActive;
        bed = std::make_unique<RedundantPairTestbed>(c);
        for (uint32_t i = 0; i < 2; ++i)
            for (uint8_t v = 1; v <= (activeActive ? 2 : 1); ++v)
                bed->Router(i, v)->TraceConnectWithoutContext(
                    "State", ns3::Callback<void, uint8_t, uint8_t, ns3::Time>(
                                 [this, i](uint8_t vrid, uint8_t state, ns3::Time at) { State(i, vrid, state, at); }));
    }
    void State(uint32_t sw, uint8_t vrid, uint8_t state, ns3::Time at)
    {
        if (state == VrrpRouter::Master)
            masters.push_back({sw, vrid, at.GetSeconds()});
    }
    /// A client asking for path from the VIP at t (one HTTP/1.0 request on a new connection).
    ns3::Ptr<HttpClientApp> Client(double t, const std::string& vip, const std::string& path)
    {
        auto app = ns3::CreateObject<HttpClientApp>();
        app->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address(vip.c_str())));
        app->AddRequest(HttpClientApp::Get(path, true));
        bed->ClientNode()->AddApplication(app);
        app->SetStartTime(ns3::Seconds(t));
        return app;
    }
    /// The first response completed after t among apps.
    static double FirstAfter(const std::vector<ns3::Ptr<HttpClientApp>>& apps, double t)
    {
        double first = 1e9;
        for (const auto& a : apps)
            for (const auto& r : a->Responses())
                if (r.at.GetSeconds() > t)
                    first = std::min(first, r.at.GetSeconds());
        return first;
    }
    struct Master
    {
        uint32_t sw;
        uint8_t vrid;
        double at;
    };
    std::unique_ptr<RedundantPairTestbed> bed;
    std::vector<Master> masters;
};

// RFC 5798 section 6.1 with the default 1 s interval: Skew_Time =
// (256 - priority) / 256 s, Master_Down_Interval = 3 s + Skew_Time. The
// master (priority 200) wins the start at 3 + 56/256 = 3.21875 s and
// advertises every second from then; the backup (priority 100) restarts
// its 3 + 156/256 = 3.609375 s timer at each advertisement, so after the
// master dies at t_d it takes over at t_last + 3.609375 s, t_last the last
// advertisement before t_d: a failover in [MDI - interval, MDI].
constexpr double kInterval = 1.0, kMasterMdi = 3.0 + 56.0 / 256, kBackupMdi = 3.0 + 156.0 / 256;
// kLink: the advertisement's crossings of the two links and the bridge
// (10 us each), and its wait in the master's queue behind the frames of a
// download: at most the CSMA device's 100-frame queue (ns-3's DropTail
// default) of 1,518-byte frames at 100 Mbit/s, 121.44 us each, 12.14 ms
// (measured 0.28 ms and, with the download mirrored and its server
// answering through the floating address, 2.45 ms)
constexpr double kDeath = 5.5, kSpacing = 0.05, kLink = 100 * 1518 * 8 / 100e6 + 3 * 10e-6;

// An F5 pair switching URLs, switch 0 dying at 5.55 s, no closed-loop
// load: four 2 MB spliced downloads from startS, spacingS apart.
RedundantPairRunResult
RunF5PairDownloads(bool sync, bool activeActive, double startS, double spacingS)
{
    RedundantPairRunConfig c;
    c.pair.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
    c.pair.profile.sessionSync = sync;
    c.pair.activeActive = activeActive;
    c.pair.segmentRate = "1Gbps";
    c.killAtS = 5.55;
    c.threadsPerVip = 0;
    c.downloads = 4;
    c.downloadBytes = 2000000;
    c.downloadStartS = startS;
    c.downloadSpacingS = spacingS;
    return RunRedundantPair(c);
}
} // namespace

// The failover, and a 5 MB download bound through the master when it dies.
// With connection sync (F5's profile: session_sync connections) the master
// mirrored the spliced connection (its offsets, server connection and the
// response's framing): the backup goes on splicing it, and the client
// gets every byte of the body right (HttpClientApp checks each byte
// against the server's pattern) with no gap in the server-to-client
// sequence numbers it receives (each segment starts at or before the end
// of what came before). Without, the backup knows no connection: it
// answers the client's next segment with an RST (RFC 793 3.4).
TEST(WebSwitchRedundancy, ActiveBackupFailsOverAfterTheMasterDownIntervalAndKeepsASplicedDownloadOnlyWithSync)
{
    for (const bool sync : {true, false})
    {
        // until 25 s: after the takeover (8.83 s) the download goes on at
        // the server's next retransmission (its RTO doubling from 1 s after
        // the death: 6.5, 8.5, 12.5 s)
        PairRun r(false, sync, 25);
        SegmentLog log(r.bed->ClientNode());
        EXPECT_DOUBLE_EQ(r.bed->Router(1, 1)->MasterDownInterval().GetSeconds(), kBackupMdi);
        std::vector<ns3::Ptr<HttpClientApp>> apps;
        for (double t = 4.0; t < 9.9; t += kSpacing)
            apps.push_back(r.Client(t, "198.18.1.1", "/a/CLASS_2000.gif"));
        // a download in flight when the master dies (5 MB: 0.42 s at 100 Mbit/s)
        auto longOne = r.Client(5.3, "198.18.1.1", "/a/CLASS_5000000.gif");
        size_t heldAtDeath = 0;
        r.bed->Kill(0, ns3::Seconds(kDeath));
        ns3::Simulator::Schedule(ns3::Seconds(kDeath), [&]() { heldAtDeath = r.bed->Switch(0)->ClientConnections(); });
        r.bed->Run();

        ASSERT_EQ(r.masters.size(), 2u);
        EXPECT_EQ(r.masters[0].sw, 0u);
        EXPECT_NEAR(r.masters[0].at, kMasterMdi, 1e-9);
        EXPECT_EQ(r.masters[1].sw, 1u);
        const double lastAdvert = kMasterMdi + std::floor((kDeath - kMasterMdi) / kInterval) * kInterval;
        const double takeover = r.masters[1].at - kDeath;
        EXPECT_GE(takeover, kBackupMdi - (kDeath - lastAdvert));
        EXPECT_LT(takeover, kBackupMdi - (kDeath - lastAdvert) + kLink);
        EXPECT_GE(takeover, kBackupMdi - kInterval);
        EXPECT_LE(takeover, kBackupMdi + kLink);
        // the first request served through the backup: one started after the
        // takeover (one every 50 ms), or an earlier one's SYN retransmission
        const double served = PairRun::FirstAfter(apps, kDeath) - kDeath;
        EXPECT_GE(served, takeover);
        EXPECT_LT(served, takeover + kSpacing + 0.01);
        EXPECT_GT(r.bed->Switch(1)->GetCounters().requests, 0u);
        EXPECT_EQ(r.bed->Router(1, 1)->Count("gratuitous_arps"), 1u);
        EXPECT_EQ(heldAtDeath, 1u);
        const auto& segs = log.byPort[log.Busiest()];
        ASSERT_FALSE(segs.empty());
        if (sync)
        {
            ASSERT_EQ(longOne->Responses().size(), 1u);
            EXPECT_EQ(longOne->Responses()[0].bodyBytes, 5000000u);
            EXPECT_TRUE(longOne->Responses()[0].bodyMatches);
            EXPECT_EQ(longOne->ResetsReceived(), 0u);
            EXPECT_GT(r.bed->Switch(0)->GetCounters().spliceMirrorsSent, 0u);
            // client-side sequence continuity across the takeover
            uint32_t end = segs[0].seq, gaps = 0, afterTakeover = 0;
            for (const auto& g : segs)
            {
                gaps += After(g.seq, end);
                if (After(g.seq + g.len, end))
                    end = g.seq + g.len;
                afterTakeover += g.at > r.masters[1].at;
            }
            EXPECT_EQ(gaps, 0u);
            EXPECT_GT(afterTakeover, 0u);
            // the head and the whole body, from the first byte received
            EXPECT_GE(end - segs[0].seq, 5000000u);
            std::printf("active/backup, connection sync: takeover %.6f s after the death, first request served "
                        "%.6f s after; the 5 MB download bound at the death completed, %u segments after the "
                        "takeover, %u sequence gaps; %llu splice mirrors sent\n",
                        takeover, served, afterTakeover, gaps,
                        static_cast<unsigned long long>(r.bed->Switch(0)->GetCounters().spliceMirrorsSent));
        }
        else
        {
            // the client only waits for the body: the survivor resets the
            // server side, at the server's next retransmission (ns-3's TCP
            // reports an RST in ESTABLISHED as a normal close: the
            // survivor's count says it)
            EXPECT_TRUE(longOne->Responses().empty());
            EXPECT_GT(r.bed->Switch(1)->DropCount("no_session"), 0u);
            EXPECT_GT(r.bed->Switch(1)->GetCounters().resetsWithoutSession, 0u);
            EXPECT_EQ(r.bed->Switch(0)->GetCounters().spliceMirrorsSent, 0u);
            std::printf("active/backup, no sync: takeover %.6f s after the death; the download bound at the death "
                        "lost (%llu RSTs from the survivor)\n",
                        takeover,
                        static_cast<unsigned long long>(r.bed->Switch(1)->GetCounters().resetsWithoutSession));
        }
        ns3::Simulator::Destroy();
    }
}

TEST(WebSwitchRedundancy, ActiveActiveSurvivorTakesBothAddressesAndItsOwnNeverStops)
{
    PairRun r(true);
    std::vector<ns3::Ptr<HttpClientApp>> one, two;
    for (double t = 4.0; t < 9.9; t += kSpacing)
    {
        one.push_back(r.Client(t, "198.18.1.1", "/a/CLASS_2000.gif"));
        two.push_back(r.Client(t + 0.001, "198.18.1.3", "/a/CLASS_2000.htm"));
    }
    r.bed->Kill(0, ns3::Seconds(kDeath));
    r.bed->Run();
    // each switch starts as master of its own VRID; switch 1 takes VRID 1
    ASSERT_EQ(r.masters.size(), 3u);
    const double lastAdvert = kMasterMdi + std::floor((kDeath - kMasterMdi) / kInterval) * kInterval;
    const auto& take = r.masters[2];
    EXPECT_EQ(take.sw, 1u);
    EXPECT_EQ(take.vrid, 1u);
    EXPECT_GE(take.at - kDeath, kBackupMdi - (kDeath - lastAdvert));
    EXPECT_LT(take.at - kDeath, kBackupMdi - (kDeath - lastAdvert) + kLink);
    const double served = PairRun::FirstAfter(one, kDeath) - kDeath;
    EXPECT_GE(served, take.at - kDeath);
    EXPECT_LT(served, take.at - kDeath + kSpacing + 0.01);
    // VIP 2 was switch 1's all along: every request to it answered
    for (const auto& a : two)
        EXPECT_EQ(a->Responses().size(), 1u);
    EXPECT_EQ(r.bed->Router(1, 2)->GetState(), VrrpRouter::Master);
    ns3::Simulator::Destroy();
}

TEST(WebSwitchRedundancy, AProductWithoutRedundancyRefusesIt)
{
    RedundantPairConfig c;
    c.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
    c.profile.activeActive = false;
    c.activeActive = true;
    EXPECT_THROW(RedundantPairTestbed{c}, std::invalid_argument);
    ns3::Simulator::Destroy();
}

// Connection synchronisation (behaviour.session_sync) in an L4 pair, NAT
// and direct routing (the servers answer the clients on the L2 switch,
// the web switches see one direction),
// against a count taken from the workload's schedule alone: client i opens
// its connection at t_i = 4.0 + 0.05 i s and sends its request in two
// pieces kGap apart (HttpClientApp Gap), so the connection is open from
// t_i until just after t_i + kGap (an answer takes well under a
// millisecond on these idle 100 Mbit/s links). The connections open when
// the master dies are those with t_i < t_d < t_i + kGap (t_d is 25 ms from
// every such edge). Their second piece goes out after the death; TCP
// retransmits it (RTO 1 s, doubling) until the backup has taken over. With
// sync (F5's profile: connections) the backup has each session and
// forwards it to the same server, which answers through its other link:
// every one of them completes. Without (Nortel's: none) the backup finds no
// session (no_session), answers with an RST, and none completes.
// Connections that ended before the death complete either way.
TEST(WebSwitchRedundancy, L4ConnectionsOpenAtTheMastersDeathSurviveTheTakeoverOnlyWithSessionSync)
{
    constexpr double kGap = 0.5, kL4Death = 5.525;
    for (const L4Forwarding fwd : {L4Forwarding::Nat, L4Forwarding::DirectRouting})
    for (const bool sync : {false, true})
    {
        RedundantPairConfig c;
        c.profile = LoadWebSwitchProfile(Profile(sync ? "nctu-f5-bigip-ha" : "nctu-nortel-ace180e"));
        ASSERT_EQ(c.profile.sessionSync, sync);
        c.l4 = fwd;
        c.stop = ns3::Seconds(25);
        RedundantPairTestbed bed(c);
        std::vector<std::pair<double, ns3::Ptr<HttpClientApp>>> apps;
        for (int i = 0; i < 40; ++i)
        {
            const double t = 4.0 + kSpacing * i;
            auto app = ns3::CreateObject<HttpClientApp>();
            app->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.1")));
            app->SetAttribute("Gap", ns3::TimeValue(ns3::Seconds(kGap)));
            HttpClientApp::Request r = HttpClientApp::Get("/a/CLASS_2000.gif", true);
            r.pieces = {10};
            app->AddRequest(r);
            bed.ClientNode()->AddApplication(app);
            app->SetStartTime(ns3::Seconds(t));
            apps.emplace_back(t, app);
        }
        bed.Kill(0, ns3::Seconds(kL4Death));
        bed.Run();

        uint32_t openAtDeath = 0, survived = 0, endedBefore = 0, endedBeforeCompleted = 0;
        for (const auto& [t, app] : apps)
        {
            const bool done = app->Responses().size() == 1;
            if (t < kL4Death && kL4Death < t + kGap)
            {
                ++openAtDeath;
                survived += done;
            }
            else if (t + kGap < kL4Death)
            {
                ++endedBefore;
                endedBeforeCompleted += done;
            }
        }
        EXPECT_GT(openAtDeath, 0u);
        EXPECT_EQ(survived, sync ? openAtDeath : 0u) << (sync ? "sync" : "no sync");
        EXPECT_EQ(endedBeforeCompleted, endedBefore);
        const auto& backup = bed.Switch(1)->GetCounters();
        EXPECT_EQ(backup.syncReceived, sync ? bed.Switch(0)->GetCounters().syncSent : 0u);
        EXPECT_EQ(bed.Switch(1)->DropCount("no_session") > 0, !sync);
        // without sync the survivor answers each one's retransmitted piece with an RST
        const uint64_t resets = bed.Switch(1)->GetCounters().resetsWithoutSession;
        EXPECT_EQ(resets >= openAtDeath, !sync);
        std::printf("L4 %s pair, %s: %u connections open at the master's death (from the schedule), %u "
                    "completed after the takeover, %llu RSTs from the survivor; %llu session updates sent\n",
                    fwd == L4Forwarding::Nat ? "NAT" : "DR", sync ? "session sync" : "no sync", openAtDeath, survived,
                    static_cast<unsigned long long>(resets),
                    static_cast<unsigned long long>(bed.Switch(0)->GetCounters().syncSent));
        ns3::Simulator::Destroy();
    }
}

TEST(WebSwitchRedundancy, AnL4NatPairIsRefusedActiveActive)
{
    RedundantPairConfig c;
    c.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
    c.l4 = L4Forwarding::Nat;
    c.activeActive = true;
    EXPECT_THROW(RedundantPairTestbed{c}, std::invalid_argument);
    ns3::Simulator::Destroy();
}

// Spliced downloads open at the death (RunRedundantPair): 4 downloads of
// 2 MB to VIP 1 (.gif and .htm in turn: both servers) start 0.3 s apart
// from 4.5 s, on a gigabit client segment (one at a time; the next test
// overlaps them);
// the client's own record says which were open when the master died at
// 5.55 s (started before, not answered before). With connection sync every
// one of them completes with every body byte right; without, none does:
// the survivor resets each at its server's next retransmission. The takeover matches RFC 5798's closed form in both.
TEST(WebSwitchRedundancy, SplicedDownloadsOpenAtTheDeathAllSurviveWithSyncAndAreAllLostWithout)
{
    for (const bool sync : {true, false})
    {
        const RedundantPairRunResult r = RunF5PairDownloads(sync, false, 4.5, 0.3);
        EXPECT_NEAR(r.closedFormTakeoverS, kBackupMdi - (5.55 - (kMasterMdi + 2 * kInterval)), 1e-12);
        EXPECT_GE(r.takeoverS, r.closedFormTakeoverS);
        EXPECT_LT(r.takeoverS, r.closedFormTakeoverS + kLink);
        EXPECT_GE(r.openAtDeath, 1u);
        EXPECT_EQ(r.survived, sync ? r.openAtDeath : 0u);
        EXPECT_EQ(r.lost, sync ? 0u : r.openAtDeath);
        // each lost download's server is reset at its next retransmission
        EXPECT_GE(r.survivorResets, sync ? 0u : r.openAtDeath);
        EXPECT_EQ(r.spliceMirrors > 0, sync);
        std::printf("L7 pair, %s: takeover %.6f s (closed form %.6f s), %u downloads open at the death, %u "
                    "survived, %u lost; %llu RSTs from the survivor; %llu mirrors sent\n",
                    sync ? "connection sync" : "no sync", r.takeoverS, r.closedFormTakeoverS, r.openAtDeath,
                    r.survived, r.lost, static_cast<unsigned long long>(r.survivorResets),
                    static_cast<unsigned long long>(r.spliceMirrors));
    }
}

// Overlapping spliced downloads: four 2 MB downloads (.gif and .htm in
// turn, two per server) start 0.05 s apart from 5.35 s, so that all four
// are open together at the death at 5.55 s (each takes 0.17 s alone on its
// 100 Mbit/s port). Where they meet on the client segment a segment of
// each is lost now and then, and the server recovers it. Before the
// servers' send buffer was kept at the client's window (32768 bytes,
// RedundantPairTestbed) this crashed ns-3 3.37's TCP in the server
// (TcpRateLinux::SkbSent on a null item, SIGSEGV), in every redundancy and
// sync mode. Now every one completes with every body byte right with
// connection sync, and every one is lost without, active/backup and
// active/active.
TEST(WebSwitchRedundancy, OverlappingSplicedDownloadsAllSurviveWithSyncAndAreAllLostWithout)
{
    for (const bool aa : {false, true})
        for (const bool sync : {true, false})
        {
            const RedundantPairRunResult r = RunF5PairDownloads(sync, aa, 5.35, 0.05);
            const char* what = aa ? (sync ? "active/active, sync" : "active/active, no sync")
                                  : (sync ? "active/backup, sync" : "active/backup, no sync");
            EXPECT_EQ(r.openAtDeath, 4u) << what;
            EXPECT_EQ(r.survived, sync ? 4u : 0u) << what;
            EXPECT_EQ(r.lost, sync ? 0u : 4u) << what;
            std::printf("L7 pair, %s: 4 overlapping downloads, %u open at the death, %u survived, %u lost\n", what,
                        r.openAtDeath, r.survived, r.lost);
        }
}

// The capacity step: with the switch's processor the bottleneck (F5's
// profile at a hundredth of its clock, so that the connections of a few
// simulated seconds stay few; gigabit links, 2 KB answers, 4 closed-loop
// threads per virtual address), an active/active pair serves
// with two processors before the death and one after: the answers per
// second halve; an active/backup pair serves with one throughout.
TEST(WebSwitchRedundancy, ActiveActiveCapacityHalvesAtTheDeathActiveBackupKeepsIt)
{
    for (const bool aa : {true, false})
    {
        RedundantPairRunConfig c;
        c.pair.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
        c.pair.profile.clockHz /= 100;
        c.pair.activeActive = aa;
        c.pair.linkRate = "1Gbps";
        c.threadsPerVip = 4;
        c.downloads = 0;
        const RedundantPairRunResult r = RunRedundantPair(c);
        const double ratio = r.requestsPerSAfter / r.requestsPerSBefore;
        const char* what = aa ? "active/active" : "active/backup";
        EXPECT_NEAR(ratio, aa ? 0.5 : 1.0, 0.05) << what;
        // the cycle times: the rates' answers, none shorter than the
        // testbed's links allow, and, before the death, the closed loop's
        // response-time law (N threads, no think time: the mean cycle is
        // N / X; the processor the bottleneck, every thread waits behind
        // the others and the cycles are alike, so the median is the mean;
        // each thread's answers in the window are its cycles in it, give or
        // take one: N / X within a cycle over the window, relative, plus
        // the histogram's bin, 2.33 %)
        ExpectCyclesCountTheRatesAnswers(r, c.windowS, what);
        const double minCycle = MinCycleS(2000, 1e9);
        EXPECT_GE(r.cycleBefore.Min(), minCycle) << what;
        EXPECT_GE(r.cycleAfter.Min(), minCycle) << what;
        const double meanBefore = c.threadsPerVip * (aa ? 2.0 : 1.0) / r.requestsPerSBefore;
        EXPECT_NEAR(r.cycleBefore.Quantile(0.5), meanBefore, meanBefore * (meanBefore / c.windowS + 0.0233)) << what;
        std::printf("L7 %s pair: %.0f answers/s before the death, %.0f after the takeover (ratio %.3f); cycle "
                    "before p50 %.3f ms (N/X %.3f ms, the links' minimum %.3f ms) p99 %.3f max %.3f, after p50 "
                    "%.3f p99 %.3f max %.3f ms; %u requests across the death, the longest %.3f s\n",
                    what, r.requestsPerSBefore, r.requestsPerSAfter, ratio, r.cycleBefore.Quantile(0.5) * 1e3,
                    meanBefore * 1e3, minCycle * 1e3, r.cycleBefore.Quantile(0.99) * 1e3, r.cycleBefore.Max() * 1e3,
                    r.cycleAfter.Quantile(0.5) * 1e3, r.cycleAfter.Quantile(0.99) * 1e3, r.cycleAfter.Max() * 1e3,
                    r.acrossDeath, r.acrossDeathMaxS);
    }
}

// Persistence synchronisation (behaviour.session_sync: persistence, Nortel's
// as its Web OS 10.0 guide documents it) in an L7 pair with cookie learning:
// 8 clients each start a session at 4.0 + 0.05 i s, half with a .gif (the
// URL rule's server 0), half with a .htm (server 1); the server's own
// cookie names it (SID=s<k>-<n>, HttpServerApp). After the takeover each
// client comes back with that cookie for the other kind of file, whose rule
// names the other server. With the learned entries copied to the backup,
// every request follows its cookie to the server that set it (the answer's
// Server header says which); without, the backup has learned nothing and
// the rules send every one to the other server.
TEST(WebSwitchRedundancy, LearnedCookiesCopiedToThePeerKeepEveryClientOnItsServerAfterTheTakeover)
{
    for (const bool sync : {false, true})
    {
        RedundantPairConfig c;
        c.profile = LoadWebSwitchProfile(Profile("nctu-nortel-ace180e"));
        ASSERT_TRUE(c.profile.persistenceSync);
        ASSERT_FALSE(c.profile.sessionSync);
        c.profile.persistenceSync = sync;
        c.stop = ns3::Seconds(14);
        RedundantPairTestbed bed(c);
        for (uint32_t i = 0; i < 2; ++i)
            bed.Switch(i)->SetCookiePersistence(CookieMode::Learn, "SID");
        for (uint32_t k = 0; k < 2; ++k)
            bed.Server(k)->SetAttribute("SessionCookie", ns3::StringValue("SID"));
        const std::string kind[2] = {".gif", ".htm"};
        std::vector<ns3::Ptr<HttpClientApp>> first, second(8);
        for (uint32_t i = 0; i < 8; ++i)
        {
            auto app = ns3::CreateObject<HttpClientApp>();
            app->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.1")));
            app->AddRequest(HttpClientApp::Get("/a/CLASS_2000" + kind[i % 2], true));
            bed.ClientNode()->AddApplication(app);
            app->SetStartTime(ns3::Seconds(4.0 + kSpacing * i));
            first.push_back(app);
        }
        bed.Kill(0, ns3::Seconds(kDeath));
        // well after the takeover (about 3.33 s after the death): each
        // client's next request, for the other kind, with its cookie
        ns3::Simulator::Schedule(ns3::Seconds(kDeath + 5), [&]() {
            for (uint32_t i = 0; i < 8; ++i)
            {
                ASSERT_EQ(first[i]->Responses().size(), 1u);
                ASSERT_EQ(first[i]->Responses()[0].setCookies.size(), 1u);
                const std::string& sc = first[i]->Responses()[0].setCookies[0];
                auto app = ns3::CreateObject<HttpClientApp>();
                app->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.1")));
                app->AddRequest(HttpClientApp::Get("/a/CLASS_2000" + kind[(i + 1) % 2], true,
                                                   "Cookie: " + sc.substr(0, sc.find(';')) + "\r\n"));
                bed.ClientNode()->AddApplication(app);
                app->SetStartTime(ns3::Seconds(0));
                second[i] = app;
            }
        });
        bed.Run();
        uint32_t followed = 0;
        for (uint32_t i = 0; i < 8; ++i)
        {
            ASSERT_EQ(second[i]->Responses().size(), 1u);
            // the cookie's value is "s<k>-<n>": k is the server that set it
            const std::string& sc = first[i]->Responses()[0].setCookies[0];
            followed += second[i]->Responses()[0].server == sc.substr(sc.find('=') + 1, 2);
        }
        EXPECT_EQ(followed, sync ? 8u : 0u);
        EXPECT_EQ(bed.Switch(1)->GetCounters().cookieHits, sync ? 8u : 0u);
        EXPECT_EQ(bed.Switch(1)->GetCounters().syncReceived, sync ? 8u : 0u);
        std::printf("L7 pair, cookie learn, %s: %u of 8 clients on the server of their cookie after the takeover\n",
                    sync ? "persistence sync" : "no sync", followed);
        ns3::Simulator::Destroy();
    }
}

// The same for SSL session IDs (real OpenSSL records, tls-vectors.h):
// before the death two fresh hellos go to the two servers (round robin),
// whose ServerHellos choose X (server 0) and Y (server 1); the master
// stores both. After the takeover the client resumes X and Y on new
// connections. With the entries copied, each hello reaches the server that
// chose its ID (2 SSL hits on the backup); without, the backup knows
// neither when X comes, and round robin decides.
TEST(WebSwitchRedundancy, SessionIdsCopiedToThePeerSendResumingClientsToTheirServersAfterTheTakeover)
{
    using namespace routertwin::tls_vectors;
    const auto first = Unhex(kFirstHello), resumeX = Unhex(kResumingHelloX);
    auto resumeY = resumeX;
    const std::string y = SessionIdAt43(Unhex(kServerHelloY));
    std::copy(y.begin(), y.end(), resumeY.begin() + 44);
    const std::string str0(resumeX.begin(), resumeX.end()), str1(resumeY.begin(), resumeY.end());
    for (const bool sync : {false, true})
    {
        RedundantPairConfig c;
        c.profile = LoadWebSwitchProfile(Profile("nctu-nortel-ace180e"));
        c.profile.persistenceSync = sync;
        c.stop = ns3::Seconds(14);
        RedundantPairTestbed bed(c);
        for (uint32_t i = 0; i < 2; ++i)
            bed.Switch(i)->AddSslService(443);
        std::vector<ns3::Ptr<TlsServerApp>> servers;
        for (uint32_t k = 0; k < 2; ++k)
        {
            auto app = ns3::CreateObject<TlsServerApp>();
            app->SetAnswer(Unhex(k == 0 ? kServerHelloX : kServerHelloY));
            bed.Server(k)->GetNode()->AddApplication(app);
            servers.push_back(app);
        }
        auto before = ns3::CreateObject<TlsClientApp>();
        before->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.1")));
        before->AddConnection(first);
        before->AddConnection(first);
        bed.ClientNode()->AddApplication(before);
        before->SetStartTime(ns3::Seconds(4.0));
        auto after = ns3::CreateObject<TlsClientApp>();
        after->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.1")));
        after->AddConnection(resumeX);
        after->AddConnection(resumeY);
        bed.ClientNode()->AddApplication(after);
        after->SetStartTime(ns3::Seconds(kDeath + 5));
        bed.Kill(0, ns3::Seconds(kDeath));
        bed.Run();
        // both IDs were chosen before the death, one by each server
        ASSERT_EQ(before->Answers().size(), 2u);
        ASSERT_EQ(servers[0]->Records().size() + servers[1]->Records().size(), 4u);
        const auto& got0 = servers[0]->Records();
        const auto& got1 = servers[1]->Records();
        const uint32_t followed = static_cast<uint32_t>(std::count(got0.begin(), got0.end(), str0) +
                                                        std::count(got1.begin(), got1.end(), str1));
        // without the copies, the backup's fresh round robin sends X to
        // server 1 (dp_sched rr starts at 1, as WebSwitchSsl's first test
        // shows), whose ServerHello chooses Y, which the backup then stores
        // itself: the Y hello that follows is a hit on that entry
        const bool xOnItsServer = std::count(got0.begin(), got0.end(), str0) == 1;
        EXPECT_EQ(xOnItsServer, sync);
        EXPECT_EQ(followed, sync ? 2u : 1u);
        EXPECT_EQ(bed.Switch(1)->GetCounters().sslHits, sync ? 2u : 1u);
        // X and Y, copied as the master stored them from the ServerHellos
        EXPECT_EQ(bed.Switch(1)->GetCounters().syncReceived, sync ? 2u : 0u);
        std::printf("L7 pair, SSL session IDs, %s: %u of 2 resuming hellos on the server that chose their ID, "
                    "%llu SSL hits on the backup\n",
                    sync ? "persistence sync" : "no sync", followed,
                    static_cast<unsigned long long>(bed.Switch(1)->GetCounters().sslHits));
        ns3::Simulator::Destroy();
    }
}

// RFC 5798 section 6.1's arithmetic in centiseconds, by hand:
// Master_Down_Interval = 3 x Master_Adver_Interval + ((256 - Priority) x
// Master_Adver_Interval) / 256. At 1 s (100 cs): priority 100, 300 +
// 15600/256 = 360.9375 cs; priority 200, 300 + 5600/256 = 321.875 cs;
// priority 254, 300 + 200/256 = 300.78125 cs. At 0.1 s (10 cs): priority
// 100, 30 + 1560/256 = 36.09375 cs; priority 200, 30 + 560/256 = 32.1875 cs.
// 1 cs = 10,000,000 ns. An interval the protocol cannot carry (1.005 s:
// the advertisement's field counts whole centiseconds) counts as 100 cs.
TEST(VrrpRouter, MasterDownIntervalIsSectionSixOnesArithmeticAtOneSecondAndATenth)
{
    using ns3::NanoSeconds;
    using ns3::Seconds;
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(1), 100), NanoSeconds(3609375000));
    EXPECT_EQ(VrrpRouter::SkewTime(Seconds(1), 100), NanoSeconds(609375000));
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(1), 200), NanoSeconds(3218750000));
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(1), 254), NanoSeconds(3007812500));
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(0.1), 100), NanoSeconds(360937500));
    EXPECT_EQ(VrrpRouter::SkewTime(Seconds(0.1), 100), NanoSeconds(60937500));
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(0.1), 200), NanoSeconds(321875000));
    EXPECT_EQ(VrrpRouter::MasterDownInterval(Seconds(1.005), 100), NanoSeconds(3609375000));
    // the failover run's closed form is the router's own timer
    RedundantPairRunConfig c;
    c.pair.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
    c.pair.advertisementInterval = Seconds(0.1);
    c.killAtS = 1.0;
    c.windowS = 0.2;
    c.loadStartS = 0.5;
    c.threadsPerVip = 0;
    c.downloads = 0;
    const RedundantPairRunResult r = RunRedundantPair(c);
    EXPECT_EQ(r.masterDownIntervalS, 0.3609375);
    // the master's advertisements from 0.321875 s, every 0.1 s: the last
    // before the death at 0.921875 s, so the backup's timer ends at
    // 0.921875 + 0.3609375 = 1.2828125 s, 0.2828125 s after the death
    EXPECT_NEAR(r.closedFormTakeoverS, 0.2828125, 1e-12);
    EXPECT_GE(r.takeoverS, r.closedFormTakeoverS);
    EXPECT_LT(r.takeoverS, r.closedFormTakeoverS + 1e-3);
}

namespace
{
/// F5's pair at a hundredth of its clock, VRRP every 0.1 s: 3 threads a
/// virtual address from 0.5 s, switch 0 dead at 1.2 s, windows of 0.5 s,
/// 0.5 s to settle after the takeover, no downloads.
RedundantPairRunConfig
SlowF5PairDeadAt1200Ms()
{
    RedundantPairRunConfig c;
    c.pair.profile = LoadWebSwitchProfile(Profile("nctu-f5-bigip-ha"));
    c.pair.profile.clockHz /= 100;
    c.pair.advertisementInterval = ns3::Seconds(0.1);
    c.killAtS = 1.2;
    c.windowS = 0.5;
    c.loadStartS = 0.5;
    c.settleS = 0.5;
    c.threadsPerVip = 3;
    c.downloads = 0;
    return c;
}
} // namespace

// The run over time (RedundantPairRunResult's timelines), an L7
// active/backup pair without sync at a hundredth of F5's clock, VRRP every
// 0.1 s, switch 0 dead at 1.2 s (a bin's edge): the answers come in every
// bin of the load before the death and in none after it until the backup
// has taken over and the new threads started (1.2 + 0.3609375 s); the
// window before the death holds the answers requestsPerSBefore counted
// (the same clients' answers, counted in cycleBefore); the bins add up to the run's totals
// (the survivor's reset counter read at the end, the clients' failures).
// The threads open at the death fail once the survivor resets them.
TEST(WebSwitchRedundancy, TimelinesShowTheDeathAndTakeoverAndAddUpToTheRunsTotals)
{
    // the threads run to 1.2 + 0.3609375 + 0.5 + 0.5 s, after the old
    // threads' first retransmissions (RTO 1 s) reach the survivor
    RedundantPairRunConfig c = SlowF5PairDeadAt1200Ms();
    c.pair.profile.sessionSync = false;
    c.pair.profile.persistenceSync = false;
    c.timelineBinS = 0.1;
    const RedundantPairRunResult r = RunRedundantPair(c);
    const auto sum = [](const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); };
    ASSERT_EQ(r.answersPerBin.size(), r.survivorResetsPerBin.size());
    ASSERT_EQ(r.answersPerBin.size(), r.failedPerBin.size());
    EXPECT_EQ(sum(r.answersPerBin), r.answers);
    EXPECT_EQ(sum(r.survivorResetsPerBin), r.survivorResets);
    EXPECT_EQ(sum(r.failedPerBin), r.failedRequests);
    // bins 7-11 are the window before the death, [0.7, 1.2)
    EXPECT_EQ(sum({r.answersPerBin.begin() + 7, r.answersPerBin.begin() + 12}),
              static_cast<uint64_t>(std::llround(r.requestsPerSBefore * c.windowS)));
    for (size_t b = 6; b < 12; ++b)
        EXPECT_GT(r.answersPerBin[b], 0u) << "bin " << b << " before the death";
    const double restart = c.killAtS + r.masterDownIntervalS;
    for (size_t b = 12; (b + 1) * c.timelineBinS <= restart; ++b)
        EXPECT_EQ(r.answersPerBin[b], 0u) << "bin " << b << " between the death and the takeover";
    // no request fails before the takeover: the dead switch tells nobody
    const size_t takeoverBin = static_cast<size_t>((c.killAtS + r.takeoverS) / c.timelineBinS);
    for (size_t b = 0; b < takeoverBin; ++b)
        EXPECT_EQ(r.failedPerBin[b], 0u) << "bin " << b;
    EXPECT_GT(r.failedRequests, 0u);
    EXPECT_GT(r.survivorResets, 0u);
    // the cycle-time histograms hold the rates' answers, none shorter than
    // the links allow (100 Mbit/s, 2 KB answers)
    ExpectCyclesCountTheRatesAnswers(r, c.windowS, "no sync");
    EXPECT_GE(r.cycleBefore.Min(), MinCycleS(2000, 100e6));
    EXPECT_GE(r.cycleAfter.Min(), MinCycleS(2000, 100e6));
    // before the death, the response-time law (as in the capacity test:
    // 3 threads, N / X within a cycle over the window and a bin)
    const double meanBefore = c.threadsPerVip / r.requestsPerSBefore;
    EXPECT_NEAR(r.cycleBefore.Quantile(0.5), meanBefore, meanBefore * (meanBefore / c.windowS + 0.0233));
    // no request spans the death: the survivor resets every connection it
    // does not know at its first retransmission (1 s), and a SYN lost at
    // the death goes again after ns-3's ConnTimeout, 3 s, after the
    // threads stopped (2.56 s)
    EXPECT_EQ(r.acrossDeath, 0u);
    std::printf("cycles: before p50 %.3f ms max %.3f ms, after p50 %.3f ms max %.3f ms; %u across the death "
                "(longest %.3f s)\n",
                r.cycleBefore.Quantile(0.5) * 1e3, r.cycleBefore.Max() * 1e3, r.cycleAfter.Quantile(0.5) * 1e3,
                r.cycleAfter.Max() * 1e3, r.acrossDeath, r.acrossDeathMaxS);
    std::printf("timeline (0.1 s bins from 0.5 s): answers");
    for (size_t b = 5; b < 27; ++b)
        std::printf(" %llu", static_cast<unsigned long long>(r.answersPerBin[b]));
    std::printf("; failed");
    for (size_t b = 5; b < 27; ++b)
        std::printf(" %llu", static_cast<unsigned long long>(r.failedPerBin[b]));
    std::printf("; survivor RSTs");
    for (size_t b = 5; b < 27; ++b)
        std::printf(" %llu", static_cast<unsigned long long>(r.survivorResetsPerBin[b]));
    std::printf("\n");
}

// The stall a takeover costs a client (RedundantPairRunResult::acrossDeath,
// acrossDeathMaxS): an L7 active/backup pair of F5s with connection
// mirroring (the profile's session_sync) at a hundredth of its clock, VRRP
// every 0.1 s, switch 0 dead at 1.2 s under 3 closed-loop threads (2 KB
// answers, 100 Mbit/s): the backup takes over 0.2828125 s after the death
// (the master's advertisements from 0.321875 s, the last before the death
// at 1.121875 s, + 0.3609375 s). A request whose connection was spliced
// (and mirrored) when the master died lost the segment in flight through
// it; its sender retransmits on ns-3's RTO, max(MinRto 1 s, SRTT + 4
// RTTVAR), the second term tens of milliseconds here, doubled on each
// timeout (RFC 6298 5.5): at t0 + 1 s, t0 + 3 s, t0 + 7 s, t0 its first
// sending, within the cycle (started <= t0 <= the death). The first
// retransmission comes after the takeover (t0 + 1 s > death - a cycle of
// 20 ms + 1 s > death + 0.283 s), and the survivor, which has the
// connection, carries it: the stall is at least 1 s, and on the first
// retransmission, not the second (3 s). After the timeout the sender has
// one segment in flight and the receiver's delayed ACK waits ns-3's
// DelAckTimeout, 0.2 s, for a second: the stall is under 1 s + 0.2 s +
// the cycle's part before the lost segment and its part after the
// retransmission, each at most a cycle, with a third cycle's margin
// (measured: started 1.183040 s, answered 2.422193 s, 1.239153 s; with a
// 50 ms DelAckTimeout on every host 1.089242 s, 0.15 s less). The threads stop at
// 2.56 s, before any second retransmission.
TEST(WebSwitchRedundancy, ARequestInFlightAtTheDeathIsAnsweredAtItsFirstRetransmissionAfterTheTakeover)
{
    const RedundantPairRunConfig c = SlowF5PairDeadAt1200Ms();
    ASSERT_TRUE(c.pair.profile.sessionSync);
    const RedundantPairRunResult r = RunRedundantPair(c);
    EXPECT_NEAR(r.closedFormTakeoverS, 0.2828125, 1e-12);
    ASSERT_GE(r.acrossDeath, 1u);
    EXPECT_GE(r.acrossDeathMaxS, r.takeoverS);
    constexpr double kMinRto = 1.0, kDelAckTimeout = 0.2;
    EXPECT_GE(r.acrossDeathMaxS, kMinRto);
    EXPECT_LT(r.acrossDeathMaxS, kMinRto + kDelAckTimeout + 3 * r.cycleBefore.Max());
    ExpectCyclesCountTheRatesAnswers(r, c.windowS, "connection sync");
    EXPECT_GE(r.cycleBefore.Min(), MinCycleS(2000, 100e6));
    EXPECT_GE(r.cycleAfter.Min(), MinCycleS(2000, 100e6));
    std::printf("L7 active/backup pair, connection sync: takeover %.6f s; %u requests across the death, the "
                "longest %.6f s; cycles before p50 %.3f ms p99 %.3f max %.3f (%.0f answers), after p50 %.3f ms "
                "p99 %.3f max %.3f (%.0f answers); the links' minimum %.3f ms\n",
                r.takeoverS, r.acrossDeath, r.acrossDeathMaxS, r.cycleBefore.Quantile(0.5) * 1e3,
                r.cycleBefore.Quantile(0.99) * 1e3, r.cycleBefore.Max() * 1e3, r.cycleBefore.Count(),
                r.cycleAfter.Quantile(0.5) * 1e3, r.cycleAfter.Quantile(0.99) * 1e3, r.cycleAfter.Max() * 1e3,
                r.cycleAfter.Count(), MinCycleS(2000, 100e6) * 1e3);
}
