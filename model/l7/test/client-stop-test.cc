// A client's stop time ends it (ns-3's Application contract): an
// HttpClientApp whose stop falls while it waits (a think time, its host's
// CPU, an answer the server is still working on, a give-up timer), or a
// TlsClientApp whose stop falls while its connection waits for the
// answer, opens no connection and sends no request after it. Counted where
// the client cannot touch it: the server's accepts and requests
// (hand-worked for each schedule below) and the segments the server host
// receives, read off its IPv4 layer.
#include "http-apps.h"
#include "tcp-segment-view.h"
#include "tls-apps.h"
#include "ns3-run-state.h"

#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/ipv4-l3-protocol.h>
#include <ns3/node-container.h>
#include <ns3/packet.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

using namespace routertwin;

namespace
{
// one 100 Mbit/s link, 1 ms each way: an HTTP/1.0 cycle (SYN, request,
// 100-byte answer) takes a few ms, far from every stop below
constexpr double kOneWayS = 0.001;

uint32_t
Served(const HttpServerApp& s)
{
    return s.Requests();
}

uint32_t
Served(const TlsServerApp& s)
{
    return static_cast<uint32_t>(s.Records().size());
}

/// Client host 198.18.1.1 and server host 198.18.1.2 on one link; the
/// server's requests (and an HTTP server's accepts) read at the stop and
/// at the run's end, and the client's segments the server host receives
/// after the stop.
template <class Server, class Client>
struct StopBedOf
{
    explicit StopBedOf(double stopS) : stopS(stopS)
    {
        BeginNs3Run(1);
        nodes.Create(2);
        ns3::PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", ns3::StringValue("100Mbps"));
        p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::Seconds(kOneWayS)));
        ns3::NetDeviceContainer link = p2p.Install(nodes);
        ns3::InternetStackHelper().Install(nodes);
        ns3::Ipv4AddressHelper addr;
        addr.SetBase("198.18.1.0", "255.255.255.0");
        addr.Assign(link);
        server = ns3::CreateObject<Server>();
        nodes.Get(1)->AddApplication(server);
        server->SetStartTime(ns3::Seconds(0));
        client = ns3::CreateObject<Client>();
        client->SetAttribute("Remote", ns3::Ipv4AddressValue(ns3::Ipv4Address("198.18.1.2")));
        nodes.Get(0)->AddApplication(client);
        client->SetStartTime(ns3::Seconds(0));
        client->SetStopTime(ns3::Seconds(stopS));
        ns3::Simulator::Schedule(ns3::Seconds(stopS), [this]() {
            if constexpr (std::is_same_v<Server, HttpServerApp>)
                acceptedAtStop = server->Accepted();
            requestsAtStop = Served(*server);
        });
        nodes.Get(1)->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Rx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, ns3::Ptr<ns3::Ipv4>, uint32_t>(
                      [this](ns3::Ptr<const ns3::Packet> p, ns3::Ptr<ns3::Ipv4>, uint32_t) { Take(p); }));
        nodes.Get(0)->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Tx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, ns3::Ptr<ns3::Ipv4>, uint32_t>(
                      [this](ns3::Ptr<const ns3::Packet> p, ns3::Ptr<ns3::Ipv4>, uint32_t) { TakeAck(p); }));
    }
    /// The highest acknowledgement number the client host sends (ns-3's
    /// initial sequence number is 0: the bytes it took from the server + 1
    /// for the SYN).
    void TakeAck(ns3::Ptr<const ns3::Packet> p)
    {
        if (const auto seg = test::TcpSegmentView::Of(p); seg && seg->Ack())
            highestAck = std::max(highestAck, seg->ack);
    }
    /// A SYN or a segment with payload sent after the stop reaches the
    /// server host later than a one-way delay after it (the segments are
    /// a few µs on the wire).
    void Take(ns3::Ptr<const ns3::Packet> p)
    {
        const auto seg = test::TcpSegmentView::Of(p);
        if (!seg)
            return;
        if (ns3::Simulator::Now().GetSeconds() <= stopS + kOneWayS)
        {
            synsBeforeStop += seg->Syn();
            return;
        }
        synsAfterStop += seg->Syn();
        requestBytesAfterStop += seg->payload;
    }
    void Run(double endS = 10)
    {
        ns3::Simulator::Stop(ns3::Seconds(endS));
        ns3::Simulator::Run();
        ns3::Simulator::Destroy();
    }
    double stopS;
    ns3::NodeContainer nodes;
    ns3::Ptr<Server> server;
    ns3::Ptr<Client> client;
    uint32_t acceptedAtStop = 0, requestsAtStop = 0;
    uint32_t synsBeforeStop = 0, synsAfterStop = 0;
    uint32_t highestAck = 0;
    uint64_t requestBytesAfterStop = 0;
};

using StopBed = StopBedOf<HttpServerApp, HttpClientApp>;

HttpClientApp::Request
Get10(double pauseS)
{
    HttpClientApp::Request r = HttpClientApp::Get("/x/CLASS_100.htm", true);
    r.pause = ns3::Seconds(pauseS);
    return r;
}
} // namespace

// Four HTTP/1.0 requests (a connection each), 1 s of think time before
// each but the first: connections at 0, ~1.005, ~2.010 and ~3.015 s. The
// stop at 2.5 s falls in the third think time: three connections and three
// requests, none after (the fourth would come at ~3.015 s).
TEST(HttpClientStop, NoConnectionAfterAStopInTheThinkTime)
{
    StopBed b(2.5);
    b.client->AddRequest(Get10(0));
    for (int i = 0; i < 3; ++i)
        b.client->AddRequest(Get10(1.0));
    b.Run();
    EXPECT_EQ(b.acceptedAtStop, 3u);
    EXPECT_EQ(b.requestsAtStop, 3u);
    EXPECT_EQ(b.synsBeforeStop, 3u); // the segment reader sees each connection's SYN
    EXPECT_EQ(b.server->Accepted(), 3u);
    EXPECT_EQ(b.server->Requests(), 3u);
    EXPECT_EQ(b.synsAfterStop, 0u);
    EXPECT_EQ(b.requestBytesAfterStop, 0u);
    EXPECT_EQ(b.client->Connections(), 3u);
}

// The client host's CPU before the first connection (WebBench's work:
// 0.7 s per connection + 0.3 s per request, the connection at 1 s) and a
// stop at 0.5 s: nothing reaches the server.
TEST(HttpClientStop, NoConnectionAfterAStopDuringTheClientsCpuTime)
{
    StopBed b(0.5);
    b.client->AddRequest(HttpClientApp::Get("/x/CLASS_100.htm", true));
    b.client->SetCpu(ns3::Create<HostCpu>(), ns3::Seconds(0.3), ns3::Seconds(0.7));
    b.Run();
    EXPECT_EQ(b.server->Accepted(), 0u);
    EXPECT_EQ(b.server->Requests(), 0u);
    EXPECT_EQ(b.synsAfterStop, 0u);
    EXPECT_EQ(b.client->Connections(), 0u);
}

// A closed loop (HTTP/1.0) with 0.4 s of client CPU per request:
// connections at 0.4 and ~0.805 s, the third's CPU time running when the
// stop comes at 1 s (it would connect at ~1.21 s): two, and none of the
// ~24 the loop would make by 10 s.
TEST(HttpClientStop, AClosedLoopStopsInItsCpuTime)
{
    StopBed b(1.0);
    b.client->SetRequestSource([](uint64_t) { return HttpClientApp::Get("/x/CLASS_100.htm", true); });
    b.client->SetCpu(ns3::Create<HostCpu>(), ns3::Seconds(0.4), ns3::Seconds(0));
    b.Run();
    EXPECT_EQ(b.acceptedAtStop, 2u);
    EXPECT_EQ(b.server->Accepted(), 2u);
    EXPECT_EQ(b.server->Requests(), 2u);
    EXPECT_EQ(b.synsAfterStop, 0u);
    EXPECT_EQ(b.requestBytesAfterStop, 0u);
}

// The server's CPU takes 1 s per request: the closed loop's first request
// (sent at ~2 ms) is answered at ~1.003 s, after the stop at 0.5 s. TCP
// still delivers the answer on the closed connection (FIN_WAIT_2); the
// stopped client neither records it nor connects again: one connection and
// one request in the whole run.
TEST(HttpClientStop, AnAnswerAfterTheStopStartsNoNextRequest)
{
    StopBed b(0.5);
    b.server->SetCpu(ns3::Create<HostCpu>(), ns3::Seconds(1.0), ns3::Seconds(0));
    b.client->SetRequestSource([](uint64_t) { return HttpClientApp::Get("/x/CLASS_100.htm", true); });
    b.Run();
    EXPECT_EQ(b.acceptedAtStop, 1u);
    EXPECT_EQ(b.server->Accepted(), 1u);
    EXPECT_EQ(b.server->Requests(), 1u);
    EXPECT_EQ(b.synsAfterStop, 0u);
    EXPECT_EQ(b.requestBytesAfterStop, 0u);
    EXPECT_TRUE(b.client->Responses().empty());
}

// As above with a 1 MB answer, 8x the client socket's 128 KiB receive
// buffer (ns-3's TcpSocket RcvBufSize): the stopped client still reads and
// drops what comes, so its window stays open and it acknowledges the whole
// answer; unread, the server's side would stall at a closed window.
TEST(HttpClientStop, AnAnswerAfterTheStopIsReadAndDropped)
{
    StopBed b(0.5);
    b.server->SetCpu(ns3::Create<HostCpu>(), ns3::Seconds(1.0), ns3::Seconds(0));
    b.client->AddRequest(HttpClientApp::Get("/x/CLASS_1000000.htm", true));
    b.Run();
    EXPECT_EQ(b.server->Requests(), 1u);
    EXPECT_GT(b.highestAck, 1000000u);
    EXPECT_TRUE(b.client->Responses().empty());
}

// A give-up timer (2 s) still running at the stop (1 s), the server's
// answer 5 s away: the stopped client gives nothing up and records no
// failure (the stop ends the run, it is not a failure).
TEST(HttpClientStop, AGiveUpTimerAfterTheStopDoesNothing)
{
    StopBed b(1.0);
    b.server->SetCpu(ns3::Create<HostCpu>(), ns3::Seconds(5.0), ns3::Seconds(0));
    b.client->SetAttribute("GiveUpAfter", ns3::TimeValue(ns3::Seconds(2)));
    b.client->AddRequest(HttpClientApp::Get("/x/CLASS_100.htm"));
    b.Run();
    EXPECT_EQ(b.server->Requests(), 1u);
    EXPECT_EQ(b.client->GaveUp(), 0u);
    EXPECT_TRUE(b.client->Failures().empty());
}

// Ten TLS connections, one after the other: SYN at 0, the record at ~2 ms
// (after the SYN-ACK), at the server at ~3 ms, its answer and FIN back at
// ~4 ms. The stop at 2.5 ms falls while the first waits for its answer: the
// record already sent reaches the server (one), the answer that follows
// is not kept, and none of the nine other connections is opened.
TEST(TlsClientStop, AnAnswerAfterTheStopOpensNoNextConnection)
{
    StopBedOf<TlsServerApp, TlsClientApp> b(0.0025);
    const std::vector<uint8_t> hello = {22, 3, 1, 0, 4, 1, 0, 0, 0}; // a 4-byte handshake record
    b.server->SetAnswer(hello);
    for (int i = 0; i < 10; ++i)
        b.client->AddConnection(hello);
    b.Run();
    EXPECT_EQ(b.requestsAtStop, 0u);
    EXPECT_EQ(b.server->Records().size(), 1u);
    EXPECT_EQ(b.synsBeforeStop, 1u);
    EXPECT_EQ(b.synsAfterStop, 0u);
    EXPECT_EQ(b.requestBytesAfterStop, 0u);
    EXPECT_TRUE(b.client->Answers().empty());
}
