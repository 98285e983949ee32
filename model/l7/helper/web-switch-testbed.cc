#include "web-switch-testbed.h"

#include "dp_http.h"
#include "lb-testers.h"
#include "ns3-run-state.h"
#include "path-link.h"
#include "pcap-trace.h"
#include "traffic-profile.h"

#include <ns3/boolean.h>
#include <ns3/double.h>
#include <ns3/ipv4-static-routing-helper.h>
#include <ns3/ipv4.h>
#include <ns3/config.h>
#include <ns3/global-value.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4-address-helper.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

namespace routertwin
{
using namespace ns3;

WebSwitchTestbed::WebSwitchTestbed(const WebSwitchTestbedConfig& c)
    : m_config(c)
{
    // the end hosts compute and verify every IPv4 and TCP checksum, so a
    // wrong incremental update by the switch loses the segment
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.segmentSize));
    m_nodes.Create(2 + c.servers);
    Ptr<Node> client = m_nodes.Get(0);
    Ptr<Node> sw = m_nodes.Get(1);
    NodeContainer hosts(client);
    for (uint32_t k = 0; k < c.servers; ++k)
        hosts.Add(m_nodes.Get(2 + k));
    InternetStackHelper stack;
    stack.Install(hosts);
    // ARP's jitter on its own streams (the links are point-to-point: no ARP
    // is sent, but no random variable takes the process's next stream)
    stack.AssignStreams(hosts, kNs3StreamBase);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(c.linkRate));
    p2p.SetChannelAttribute("Delay", TimeValue(c.linkDelay));

    m_switch = CreateObject<WebSwitch>();
    m_switch->SetProfile(c.profile);
    sw->AggregateObject(m_switch);

    NetDeviceContainer cl = p2p.Install(client, sw);
    Ipv4AddressHelper addr;
    addr.SetBase("198.18.1.0", "255.255.255.0", "0.0.0.2");
    addr.Assign(NetDeviceContainer(cl.Get(0)));
    m_switch->AttachClientSide(cl.Get(1), Ipv4Address("198.18.1.1"), 80);
    if (!c.pcapPrefix.empty())
        p2p.EnablePcap(c.pcapPrefix + "-client.pcap", cl.Get(1), false, true);

    for (uint32_t k = 0; k < c.servers; ++k)
    {
        NetDeviceContainer sl = p2p.Install(m_nodes.Get(2 + k), sw);
        const std::string net = "198.18." + std::to_string(10 + k) + ".0";
        addr.SetBase(net.c_str(), "255.255.255.0", "0.0.0.2");
        addr.Assign(NetDeviceContainer(sl.Get(0)));
        const std::string own = "198.18." + std::to_string(10 + k) + ".1";
        const std::string srv = "198.18." + std::to_string(10 + k) + ".2";
        m_switch->AddServer(sl.Get(1), Ipv4Address(own.c_str()), Ipv4Address(srv.c_str()));
        if (!c.pcapPrefix.empty())
            p2p.EnablePcap(c.pcapPrefix + "-server" + std::to_string(k) + ".pcap", sl.Get(1), false, true);
        Ptr<HttpServerApp> app = CreateObject<HttpServerApp>();
        app->SetAttribute("ServerId", UintegerValue(k));
        // at most the client's window (32768 bytes unscaled: the switch
        // announces no window scaling), as on the redundant pair: ns-3
        // 3.37's TCP crashes in loss recovery when the send buffer holds
        // more, and these links' queues (100 frames) can drop
        app->SetAttribute("SendBufferBytes", UintegerValue(32768));
        m_nodes.Get(2 + k)->AddApplication(app);
        app->SetStartTime(Seconds(0));
        m_servers.push_back(app);
    }
    for (const auto& requests : c.clients)
    {
        Ptr<HttpClientApp> app = CreateObject<HttpClientApp>();
        for (const auto& r : requests)
            app->AddRequest(r);
        client->AddApplication(app);
        app->SetStartTime(MilliSeconds(1 + m_clients.size()));
        m_clients.push_back(app);
    }
}

void
WebSwitchTestbed::Run()
{
    Simulator::Stop(m_config.stop);
    Simulator::Run();
}

} // namespace routertwin

// --- the NCTU testbed at scale ------------------------------------------

namespace routertwin
{
namespace
{
using namespace ns3;

/// One direction of a link: IP bytes + frame overhead at the line rate,
/// then a delay.
Ptr<PathServer>
Wire(double bps, uint32_t overhead, double delayS)
{
    Ptr<PathServer> s = CreateObject<PathServer>();
    s->SetAttribute("PerByte", DoubleValue(8.0 / bps));
    s->SetAttribute("OverheadBytes", UintegerValue(overhead));
    // large enough that nothing is lost: WebBench's closed loop holds at most
    // a window per thread in flight
    s->SetAttribute("QueueLimit", UintegerValue(100000));
    s->SetAttribute("Delay", TimeValue(Seconds(delayS)));
    return s;
}

/// A crossing that takes no line time, only a latency.
Ptr<PathServer>
Latency(double delayS)
{
    return Wire(std::numeric_limits<double>::infinity(), 0, delayS);
}

struct Link
{
    Ptr<PathNetDevice> a, b;
    Ptr<PathServer> ab, ba;
};

Link
Connect(Ptr<Node> a, Ptr<Node> b, double bps, uint32_t overhead, double delayAb, double delayBa)
{
    Link l;
    l.ab = Wire(bps, overhead, delayAb);
    l.ba = Wire(bps, overhead, delayBa);
    Ptr<PathChannel> ch = CreateObject<PathChannel>();
    l.a = CreateObject<PathNetDevice>();
    l.b = CreateObject<PathNetDevice>();
    ch->Attach(l.a, l.b);
    l.a->Configure(ch, l.b, l.ab, nullptr);
    l.b->Configure(ch, l.a, l.ba, nullptr);
    a->AddDevice(l.a);
    b->AddDevice(l.b);
    return l;
}

/// A link from a to b whose frames cross two servers each way (a's port on
/// the L2 switch, then the uplink or the L2 switch's latency): aOut then
/// abHop from a to b, baHop then aIn (may be null) from b to a; the second
/// of each direction is the receiving end's "cpu" server, which
/// PathNetDevice runs before handing a frame up. Passing the uplink's
/// direction servers makes these frames queue with every other frame on
/// the uplink.
Link
ConnectThrough(Ptr<Node> a, Ptr<Node> b, Ptr<PathServer> aOut, Ptr<PathServer> abHop, Ptr<PathServer> baHop,
               Ptr<PathServer> aIn)
{
    Link l;
    l.ab = aOut;
    l.ba = aIn;
    Ptr<PathChannel> ch = CreateObject<PathChannel>();
    l.a = CreateObject<PathNetDevice>();
    l.b = CreateObject<PathNetDevice>();
    ch->Attach(l.a, l.b);
    l.a->Configure(ch, l.b, aOut, aIn);
    l.b->Configure(ch, l.a, baHop, abHop);
    a->AddDevice(l.a);
    b->AddDevice(l.b);
    return l;
}

uint32_t
AddIf(Ptr<Node> n, Ptr<NetDevice> d, const std::string& addr)
{
    Ptr<Ipv4> ip = n->GetObject<Ipv4>();
    const uint32_t i = ip->AddInterface(d);
    ip->AddAddress(i, Ipv4InterfaceAddress(Ipv4Address(addr.c_str()), Ipv4Mask("/24")));
    ip->SetUp(i);
    return i;
}

std::string
Net(uint32_t third, uint32_t host)
{
    return "198.18." + std::to_string(third) + "." + std::to_string(host);
}

// The cookie test's cookie names (assumptions: IIS 5.0's ASP session
// cookie is ASPSESSIONID plus eight letters; the switch's inserted name is
// the model's own) and the pre-arranged value of server k (section 5.6:
// "ServerA ... 發一個 cookie 叫 Server=A"; the MVA's model.server_cookie)
const char* const kAspSessionCookie = "ASPSESSIONIDQQGQGQGQ";
const char* const kPrearrangedCookie = "Server";
const char* const kInsertedCookie = "RTSRV";

std::string
PrearrangedValue(uint32_t k)
{
    return std::string(1, char('A' + k % 26)) + (k / 26 ? std::to_string(k / 26) : "");
}

/// The paper's URL rules (section 3.4): .gif, .htm, padding extensions
/// .aaa, .aab, ..., the default; count counts them all (the MVA kind's
/// model.rule_list).
std::vector<std::pair<dp_urlrule_kind_t, std::string>>
RuleList(uint32_t count)
{
    std::vector<std::pair<dp_urlrule_kind_t, std::string>> out{{DP_URL_EXT, "gif"}, {DP_URL_EXT, "htm"}};
    for (uint32_t i = 0; i + 3 < count; ++i)
        out.emplace_back(DP_URL_EXT, std::string{char('a' + i / 676 % 26), char('a' + i / 26 % 26), char('a' + i % 26)});
    out.emplace_back(DP_URL_PATH_BEG, "/");
    return out;
}

/// The request a trace's HTTP request replays: a GET of the captured
/// target, with its Host and version, "Connection: close" where the
/// captured request was not persistent ("keep-alive" for a persistent
/// HTTP/1.0 one), the captured answer's body size for the server
/// (X-Replay-Body-Bytes: the head's length is the testbed's), padded with
/// an Accept line to the captured head's octets when it is shorter; sent
/// after the captured think time.
HttpClientApp::Request
ReplayedRequest(const HttpTraceRequest& q, uint64_t bodyBytes)
{
    std::string head = "GET " + q.target + " HTTP/1." + std::to_string(q.versionMinor) + "\r\n";
    if (!q.host.empty())
        head += "Host: " + q.host + "\r\n";
    if (!q.keepAlive)
        head += "Connection: close\r\n";
    else if (q.versionMinor == 0)
        head += "Connection: keep-alive\r\n";
    head += "X-Replay-Body-Bytes: " + std::to_string(bodyBytes) + "\r\n";
    const size_t accept = std::string("Accept: \r\n\r\n").size();
    if (head.size() + accept < q.headBytes)
        head += "Accept: " + std::string(q.headBytes - head.size() - accept, 'x') + "\r\n";
    HttpClientApp::Request r;
    r.bytes = head + "\r\n";
    r.pause = NanoSeconds(static_cast<int64_t>(q.thinkNs));
    return r;
}

} // namespace

std::vector<HttpTraceConnection>
ReadHttpTrace(const std::string& path)
{
    const TraceConnections tc = ReadTraceConnections(path, true);
    std::vector<HttpTraceConnection> out;
    std::vector<uint8_t> buf(kKeptRequestBytes);
    for (const TraceConnection& conn : tc.connections)
    {
        HttpTraceConnection hc;
        hc.synNs = conn.synNs;
        for (const TraceExchange& e : conn.exchanges)
        {
            if (e.requestBytes == 0)
                continue; // the server spoke first, or nothing was sent
            const auto fail = [&](const std::string& what) {
                throw TraceError(path + ": packet " + std::to_string(e.requestPacket) + ": " + what);
            };
            // the switch's limits (web-switch.cc: a head of up to kHeadCap
            // octets, Apache's 8,190-octet lines, HAProxy's 101 headers)
            dp_http_t h;
            const dp_http_config_t cfg{8190, 101};
            dp_http_init(&h, &cfg, buf.data(), static_cast<uint32_t>(buf.size()), 0);
            dp_ops_t ops{};
            const int rc = dp_http_feed(&h, reinterpret_cast<const uint8_t*>(e.request.data()), e.request.size(),
                                        nullptr, &ops);
            if (rc == DP_HTTP_MORE)
                fail("the HTTP request head is not whole in the capture (" + std::to_string(e.request.size()) +
                     " of the request's " + std::to_string(e.requestBytes) + " payload octets captured: a snaplen "
                     "or a lost segment?)");
            if (rc != DP_HTTP_DONE)
                fail(std::string("not an HTTP request head: ") + dp_http_status_name(rc) +
                     (rc == DP_HTTP_EMALFORMED ? std::string(" (") +
                                                     dp_http_error_name(static_cast<dp_http_error_t>(h.error)) + ")"
                                               : std::string()));
            const auto span = [&](const dp_http_span_t& x) {
                return std::string(reinterpret_cast<const char*>(buf.data()) + x.off, x.len);
            };
            HttpTraceRequest q;
            q.method = span(h.method_s);
            q.target = span(h.target);
            q.host = span(h.host);
            q.versionMinor = h.version_minor;
            q.keepAlive = (h.flags & DP_HTTP_F_KEEPALIVE) != 0;
            q.headBytes = h.len;
            q.requestBytes = e.requestBytes;
            q.responseBytes = e.responseBytes;
            q.packet = e.requestPacket;
            q.thinkNs = hc.requests.empty() ? 0 : e.thinkNs;
            hc.requests.push_back(std::move(q));
        }
        if (!hc.requests.empty())
            out.push_back(std::move(hc));
    }
    if (out.empty())
        throw TraceError(path + ": no HTTP request on an IPv4 TCP connection that opens in it (a SYN without ACK)");
    return out;
}

WebBenchTestbedResult
RunWebBenchTestbed(const WebBenchTestbedConfig& c)
{
    if (c.mode != "l4" && c.mode != "l7")
        throw std::invalid_argument("mode must be l4 or l7");
    if (c.forwarding != "nat" && c.forwarding != "dr")
        throw std::invalid_argument("forwarding must be nat or dr");
    if (c.mode == "l7" && c.forwarding == "dr")
        throw std::invalid_argument("l7 terminates both connections: forwarding nat");
    if (c.files.empty() || c.clientHosts == 0 || c.threadsPerHost == 0 || c.servers == 0 ||
        (c.mode == "l7" && c.servers < 2))
        throw std::invalid_argument("files, client hosts, threads and servers (l7: 2 or more) are needed");
    const bool cookie = !c.cookieMethod.empty();
    if (cookie && (c.mode != "l7" || (c.cookieMethod != "prearranged" && c.cookieMethod != "insert" &&
                                      c.cookieMethod != "learn")))
        throw std::invalid_argument("cookie method must be prearranged, insert or learn, in mode l7");
    if (cookie && !(c.cookieMethod == "prearranged" ? c.profile.cookiePrearranged
                    : c.cookieMethod == "insert"    ? c.profile.cookieInsert
                                                    : c.profile.cookieLearn))
        throw std::invalid_argument(c.profile.platform + " does not offer cookie method " + c.cookieMethod +
                                    " (behaviour.cookie_methods)");
    if (c.clientHosts > 100 || c.servers > 25)
        throw std::invalid_argument("at most 100 client hosts and 25 servers (the address plan)");
    if (!(c.durationS > 0) || c.warmupS < 0)
        throw std::invalid_argument("duration must be positive and warmup not negative");
    if (!(c.synBacklogLimitS >= 0) || !std::isfinite(c.synBacklogLimitS))
        throw std::invalid_argument("syn_backlog_limit_s must not be negative");
    if (c.lossBins < 1 || c.lossBins > 100000)
        throw std::invalid_argument("loss_bins must be in 1 .. 100000");
    const bool l4 = c.mode == "l4";
    const bool dr = l4 && c.forwarding == "dr";
    const bool open = !c.arrivals.empty();
    ArrivalConfig arrivalCfg;
    FlowPopularity popularity = FlowPopularity::kUniform;
    if (open)
    {
        if (c.http11)
            throw std::invalid_argument("open-loop arrivals are one HTTP/1.0 connection per request: http11 off");
        if (cookie)
            throw std::invalid_argument("open-loop arrivals have no client to keep cookies: no cookie test");
        if (!(c.offeredRps > 0) || !std::isfinite(c.offeredRps))
            throw std::invalid_argument("offered_rps must be positive");
        if (!(c.drainS >= 0))
            throw std::invalid_argument("drain_s must not be negative");
        arrivalCfg.kind = ParseArrivalKind(c.arrivals);
        arrivalCfg.meanPps = c.offeredRps;
        arrivalCfg.burstMeanFrames = c.burstMeanRequests;
        arrivalCfg.peakPps = c.offeredRps * c.burstPeakRatio;
        arrivalCfg.mmppRateRatio = c.mmppRateRatio;
        arrivalCfg.mmppHighFraction = c.mmppHighFraction;
        arrivalCfg.mmppCycleSeconds = c.mmppCycleS;
        arrivalCfg.Validate();
        if (c.popularity != "shares")
            popularity = ParseFlowPopularity(c.popularity);
        if (popularity == FlowPopularity::kRoundRobin)
            throw std::invalid_argument("popularity must be shares, uniform or zipf");
        // every arrival is an application with its socket: bound the memory
        if (c.offeredRps * (c.warmupS + c.durationS) > 2e6)
            throw std::invalid_argument("at most 2e6 requests a run (offered_rps x (warmup_s + duration_s))");
    }

    // from ns-3's own defaults, whatever ran before in the process (a
    // tcp_path run's MinRto, SACK and congestion control stay behind)
    BeginNs3Run(c.seed);
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c.mssBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(c.ackEverySegments));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(c.initialCwndSegments));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(c.receiveWindowBytes));
    // Windows 2000's defaults: no timestamps (so a 1,460-byte segment fills a
    // 1,500-byte packet, network.header_bytes 40) and, with a 17,520-byte
    // window, no window scaling
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));

    NodeContainer clients, servers;
    clients.Create(c.clientHosts);
    servers.Create(c.servers);
    Ptr<Node> l2 = CreateObject<Node>();
    Ptr<Node> sw = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(clients);
    stack.Install(servers);
    stack.Install(l2);
    // ARP's jitter on fixed streams (the path devices send no ARP, but no
    // random variable takes the process's next stream)
    stack.AssignStreams(NodeContainer(clients, servers, NodeContainer(l2)), kNs3StreamBase);
    Ipv4StaticRoutingHelper routing;

    const double rate = c.hostLinkBps;
    // the hosts' stack time: a quarter of a round trip per host-link
    // direction (a round trip crosses the client's and the server's link
    // twice each); the L2 switch's latency on each uplink direction (and
    // on the DR return link, where the answers cross it once)
    const double host = c.hostRoundTripS / 4.0;
    Ptr<WebSwitch> ws = CreateObject<WebSwitch>();
    ws->SetProfile(c.profile);
    sw->AggregateObject(ws);
    if (l4)
        ws->SetL4Forwarding(dr ? L4Forwarding::DirectRouting : L4Forwarding::Nat);
    ws->SetAttribute("SynBacklogLimit", TimeValue(Seconds(c.synBacklogLimitS)));
    // every segment the switch refuses or absorbs, with its time, for the
    // loss timeline (its reasons are known only at the end)
    std::vector<std::pair<std::string, double>> switchDrops;
    ws->TraceConnectWithoutContext(
        "Drop", Callback<void, const std::string&, Ptr<const Packet>>(
                    [&switchDrops](const std::string& reason, Ptr<const Packet>) {
                        switchDrops.emplace_back(reason, Simulator::Now().GetSeconds());
                    }));

    WebBenchTestbedResult out;
    std::vector<std::pair<std::string, Ptr<PathServer>>> wires;

    Link up = Connect(l2, sw, c.uplinkBps, c.frameOverheadBytes, c.l2LatencyS, c.l2LatencyS);
    wires.emplace_back("uplink.to_switch", up.ab);
    wires.emplace_back("uplink.from_switch", up.ba);
    const uint32_t upIf = AddIf(l2, up.a, Net(1, 2));
    routing.GetStaticRouting(l2->GetObject<Ipv4>())->SetDefaultRoute(Ipv4Address("198.18.1.1"), upIf);
    ws->AttachClientSide(up.b, Ipv4Address("198.18.1.1"), 80);

    std::vector<Ptr<HostCpu>> cpus;
    std::vector<std::string> cpuNames;
    for (uint32_t k = 0; k < c.servers; ++k)
    {
        Ptr<Node> n = servers.Get(k);
        // figures 4 and 5: the server is on a 100 Mbit/s port of the L2
        // switch, and what it exchanges with the web switch crosses the
        // gigabit uplink with the clients' frames (in NAT and L7 the
        // uplink carries every response twice, once each way). The L2
        // switch forwards the server's frames by MAC to its gateway, the
        // web switch, whatever their IP destination (in NAT a client's
        // address), which an IP-forwarding node cannot do: so the server's
        // link to the web switch is its port then the uplink, each way.
        Ptr<PathServer> portOut = Wire(rate, c.frameOverheadBytes, host);
        Ptr<PathServer> portIn = Wire(rate, c.frameOverheadBytes, host);
        wires.emplace_back("server" + std::to_string(k + 1) + ".link_out", portOut);
        wires.emplace_back("server" + std::to_string(k + 1) + ".link_in", portIn);
        Link sl = ConnectThrough(n, sw, portOut, up.ab, up.ba, portIn);
        const uint32_t i = AddIf(n, sl.a, Net(10 + k, 2));
        routing.GetStaticRouting(n->GetObject<Ipv4>())->SetDefaultRoute(Ipv4Address(Net(10 + k, 1).c_str()), i);
        ws->AddServer(sl.b, Ipv4Address(Net(10 + k, 1).c_str()), Ipv4Address(Net(10 + k, 2).c_str()));
        if (dr)
        {
            // figure 4: the server holds the virtual address and answers
            // the clients from its port through the L2 switch (its latency
            // as the L2 side's "cpu"), not through the web switch
            Ptr<Ipv4> ip = n->GetObject<Ipv4>();
            ip->AddAddress(0, Ipv4InterfaceAddress(Ipv4Address("198.18.1.1"), Ipv4Mask("/32")));
            Link back = ConnectThrough(n, l2, portOut, Latency(c.l2LatencyS), portIn, nullptr);
            const uint32_t bi = AddIf(n, back.a, Net(40 + k, 2));
            AddIf(l2, back.b, Net(40 + k, 1));
            routing.GetStaticRouting(ip)->AddNetworkRouteTo(Ipv4Address("198.18.96.0"), Ipv4Mask("/19"),
                                                            Ipv4Address(Net(40 + k, 1).c_str()), bi);
        }
        Ptr<HttpServerApp> app = CreateObject<HttpServerApp>();
        app->SetAttribute("ServerId", UintegerValue(k));
        app->SetAttribute("HeadBytes", UintegerValue(c.responseHeaderBytes));
        app->SetRecordRequests(false);
        if (cookie)
        {
            // section 3.5: "這個 asp 程式會向 client 送出 cookie", read as on
            // every run of the page (the MVA's reading: every response
            // carries it); pre-arranged: the page's own Server=A, B, ...
            app->SetAttribute("SessionCookie", StringValue(c.cookieMethod == "prearranged" ? kPrearrangedCookie
                                                                                           : kAspSessionCookie));
            app->SetAttribute("CookieEveryAnswer", BooleanValue(true));
            if (c.cookieMethod == "prearranged")
                app->SetAttribute("CookieValue", StringValue(PrearrangedValue(k)));
        }
        Ptr<HostCpu> cpu = Create<HostCpu>();
        app->SetCpu(cpu, Seconds(c.serverCpuPerRequestS), Seconds(c.serverCpuPerConnectionS));
        cpus.push_back(cpu);
        cpuNames.push_back("server" + std::to_string(k + 1) + ".cpu");
        n->AddApplication(app);
        app->SetStartTime(Seconds(0));
    }

    if (cookie)
    {
        // section 3.5: no content partition, no URL rules; the profile's
        // method (section 5.6) keeps a client on the server of its first answer
        std::vector<uint32_t> all(c.servers);
        std::iota(all.begin(), all.end(), 0u);
        ws->SetServerGroups({all});
        if (c.cookieMethod == "prearranged")
            for (uint32_t k = 0; k < c.servers; ++k)
                ws->AddCookieServer(kPrearrangedCookie, PrearrangedValue(k), k);
        else if (c.cookieMethod == "insert")
        {
            ws->SetCookiePersistence(CookieMode::Insert, kInsertedCookie);
            ws->SetAttribute("CookieInsertEveryResponse", BooleanValue(true));
        }
        else
            ws->SetCookiePersistence(CookieMode::Learn, kAspSessionCookie);
    }
    else if (!l4)
    {
        // section 3.4: .gif to the first half, .htm to the second, the
        // rest (padding rules never match; the default) to any server
        const uint32_t half = c.servers / 2;
        std::vector<std::vector<uint32_t>> groups(3);
        for (uint32_t k = 0; k < c.servers; ++k)
        {
            groups[k < half ? 0 : 1].push_back(k);
            groups[2].push_back(k);
        }
        ws->SetServerGroups(groups);
        ws->SetAttribute("DefaultServer", UintegerValue(2));
        const auto rules = RuleList(c.rules);
        for (size_t r = 0; r < rules.size(); ++r)
            ws->AddUrlRule(rules[r].first, rules[r].second, r < 2 ? static_cast<uint32_t>(r) : 2u,
                           static_cast<uint16_t>(r));
    }

    // WebBench's requests: a GET of the class's path, padded to requestBytes
    std::vector<double> cumulative;
    double total = 0;
    for (const auto& f : c.files)
        cumulative.push_back(total += f.share);
    std::vector<HttpClientApp::Request> byClass;
    for (const auto& f : c.files)
    {
        // the path names the body size for HttpServerApp ("CLASS_<bytes>")
        std::string path = c.urlPrefix + f.name;
        const std::string sized = "CLASS_" + std::to_string(f.bytes);
        if (path.find(sized) == std::string::npos)
            path = c.urlPrefix + sized + (f.group == "other" ? "" : "." + f.group);
        HttpClientApp::Request r = HttpClientApp::Get(path, !c.http11);
        if (r.bytes.size() + 10 < c.requestBytes)
            r = HttpClientApp::Get(path, !c.http11, "Accept: " + std::string(c.requestBytes - r.bytes.size() - 10, 'x') + "\r\n");
        byClass.push_back(r);
    }

    std::vector<Ptr<HttpClientApp>> apps;
    std::vector<Ptr<Node>> clientNodes;
    std::vector<Ptr<HostCpu>> clientCpus;
    for (uint32_t h = 0; h < c.clientHosts; ++h)
    {
        Ptr<Node> n = clients.Get(h);
        Link cl = Connect(n, l2, rate, c.frameOverheadBytes, host, host);
        wires.emplace_back("client" + std::to_string(h + 1) + ".link_out", cl.ab);
        wires.emplace_back("client" + std::to_string(h + 1) + ".link_in", cl.ba);
        const uint32_t i = AddIf(n, cl.a, Net(100 + h, 2));
        AddIf(l2, cl.b, Net(100 + h, 1));
        routing.GetStaticRouting(n->GetObject<Ipv4>())->SetDefaultRoute(Ipv4Address(Net(100 + h, 1).c_str()), i);
        Ptr<HostCpu> cpu = Create<HostCpu>();
        cpus.push_back(cpu);
        cpuNames.push_back("client" + std::to_string(h + 1) + ".cpu");
        clientNodes.push_back(n);
        clientCpus.push_back(cpu);
        for (uint32_t t = 0; t < (open ? 0 : c.threadsPerHost); ++t)
        {
            Ptr<HttpClientApp> app = CreateObject<HttpClientApp>();
            app->SetAttribute("Remote", Ipv4AddressValue("198.18.1.1"));
            auto rng = std::make_shared<std::mt19937_64>(uint64_t(c.seed) * 1000003u + h * 1009u + t);
            app->SetRequestSource([rng, cumulative, total, byClass](uint64_t) {
                const double u = std::uniform_real_distribution<double>(0.0, total)(*rng);
                const size_t k = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
                return byClass[std::min(k, byClass.size() - 1)];
            });
            app->SetCpu(cpu, Seconds(c.clientCpuPerRequestS), Seconds(c.clientCpuPerConnectionS));
            app->SetSummaryOnly(Seconds(c.warmupS));
            // the cookie test: WebBench returns what it is sent (an
            // assumption, as for the MVA: without it nothing persists)
            app->SetAttribute("Cookies", BooleanValue(cookie));
            n->AddApplication(app);
            // threads start spread over the first millisecond
            app->SetStartTime(MicroSeconds(1 + (h * c.threadsPerHost + t) * 1000 / (c.clientHosts * c.threadsPerHost)));
            apps.push_back(app);
        }
    }

    // open loop: every arrival up to the window's end, drawn before the run
    // (its own random streams: the arrival instants of a seed do not
    // depend on the popularity, nor either on ns-3's streams)
    const double end = c.warmupS + c.durationS;
    std::vector<double> arrivedAt;
    if (open)
    {
        ArrivalProcess process(arrivalCfg, c.seed, 1);
        std::unique_ptr<FlowPicker> picker;
        DiscreteSampler byShare;
        RandomStream shareRng(c.seed, 2);
        if (c.popularity == "shares")
        {
            std::vector<double> shares;
            for (const auto& f : c.files)
                shares.push_back(f.share);
            byShare = DiscreteSampler(shares);
        }
        else
            picker = std::make_unique<FlowPicker>(static_cast<uint32_t>(c.files.size()), popularity,
                                                  c.zipfExponent, c.seed, 2);
        // a trace: its connections' instants (s from the first SYN) and
        // each one's requests, sent one after another on it (keep-alive)
        std::vector<double> traceAt;
        std::vector<std::vector<HttpClientApp::Request>> traceRequests;
        double tracePass = 0;
        if (!c.traceFile.empty())
        {
            const std::vector<HttpTraceConnection> conns = ReadHttpTrace(c.traceFile);
            const double first = static_cast<double>(conns.front().synNs) * 1e-9;
            const double span = static_cast<double>(conns.back().synNs) * 1e-9 - first;
            const double n = static_cast<double>(conns.size());
            double requests = 0;
            for (const auto& conn : conns)
                requests += static_cast<double>(conn.requests.size());
            // a pass offers its requests at offeredRps on average and lasts
            // n gaps of the connections' mean spacing, so passes join evenly
            const double pass = requests / c.offeredRps;
            const double scale = c.traceRescale && span > 0 ? pass * (n - 1) / (n * span) : 1.0;
            tracePass = n > 1 && span > 0 ? span * scale * n / (n - 1) : pass;
            for (const auto& conn : conns)
            {
                traceAt.push_back((static_cast<double>(conn.synNs) * 1e-9 - first) * scale);
                std::vector<HttpClientApp::Request> rs;
                for (const HttpTraceRequest& q : conn.requests)
                    rs.push_back(ReplayedRequest(q, q.responseBytes > c.responseHeaderBytes
                                                        ? q.responseBytes - c.responseHeaderBytes : 0));
                traceRequests.push_back(std::move(rs));
            }
        }
        for (uint64_t i = 0;; ++i)
        {
            const size_t traced = traceAt.empty() ? 0 : i % traceAt.size();
            const double t = traceAt.empty() ? process.Next()
                                             : traceAt[traced] + static_cast<double>(i / traceAt.size()) * tracePass;
            if (t >= end)
                break;
            const uint32_t h = static_cast<uint32_t>(i % c.clientHosts);
            Ptr<HttpClientApp> app = CreateObject<HttpClientApp>();
            app->SetAttribute("Remote", Ipv4AddressValue("198.18.1.1"));
            if (traceAt.empty())
                app->AddRequest(byClass[picker ? picker->Pick(i) : byShare.Sample(shareRng)]);
            else
            {
                for (const auto& r : traceRequests[traced])
                    app->AddRequest(r);
                app->SetAttribute("CloseWhenDone", BooleanValue(true)); // as the captured client's FIN
            }
            app->SetCpu(clientCpus[h], Seconds(c.clientCpuPerRequestS), Seconds(c.clientCpuPerConnectionS));
            clientNodes[h]->AddApplication(app);
            app->SetStartTime(Seconds(t));
            apps.push_back(app);
            arrivedAt.push_back(t);
        }
    }

    // the measured window starts after the warm-up
    WebSwitch::Counters atWarmup;
    // the switch's work is priced as its packets arrive and served later:
    // its busy time in the window is the work priced in it, plus what was
    // queued at its start, less what is still queued at its end
    Time queuedAtWarmup, queuedAtEnd;
    std::vector<Time> cpuAtWarmup(cpus.size());
    Simulator::Schedule(Seconds(c.warmupS), [&]() {
        atWarmup = ws->GetCounters();
        queuedAtWarmup = ws->QueuedWork();
        for (auto& [name, w] : wires)
            w->ResetBusy();
        for (size_t i = 0; i < cpus.size(); ++i)
            cpuAtWarmup[i] = cpus[i]->Busy();
    });
    // open loop: the window's busy times and switch counters at its end,
    // before the drain
    WebSwitch::Counters atEnd;
    std::vector<std::pair<std::string, double>> busyAtEnd;
    std::vector<Time> cpuAtEnd(cpus.size());
    if (open)
        Simulator::Schedule(Seconds(end), [&]() {
            atEnd = ws->GetCounters();
            queuedAtEnd = ws->QueuedWork();
            for (auto& [name, w] : wires)
                busyAtEnd.emplace_back(name, w->BusyTime().GetSeconds());
            for (size_t i = 0; i < cpus.size(); ++i)
                cpuAtEnd[i] = cpus[i]->Busy();
        });
    Simulator::Stop(Seconds(end + (open ? c.drainS : 0.0)));
    Simulator::Run();
    if (!open)
        queuedAtEnd = ws->QueuedWork(); // the run stopped at the window's end

    double cycleSum = 0;
    uint64_t bytes = 0;
    // open loop: the requests of a connection refused or left unanswered,
    // at its arrival
    struct RequestLoss
    {
        double arrivedS;
        uint64_t requests;
        bool refused;
    };
    std::vector<RequestLoss> requestLoss;
    if (open)
    {
        // throughput: answers in the window; response times: the requests
        // of the connections arrived in it (answered in it or in the drain),
        // the first from its connection's arrival, a kept-alive one's from
        // the previous answer (its client CPU time included)
        for (size_t i = 0; i < apps.size(); ++i)
        {
            std::vector<const HttpClientApp::Response*> answers;
            for (const auto& r : apps[i]->Responses())
                if (r.status != 302)
                    answers.push_back(&r);
            for (const auto* answer : answers)
                if (answer->at.GetSeconds() >= c.warmupS && answer->at.GetSeconds() < end)
                {
                    ++out.requests;
                    bytes += answer->bodyBytes + c.responseHeaderBytes;
                }
            if (arrivedAt[i] < c.warmupS)
                continue;
            const uint64_t asked = apps[i]->Requested();
            out.offered += asked;
            for (size_t k = 0; k < answers.size(); ++k)
            {
                const double rt = answers[k]->at.GetSeconds() -
                                  (k == 0 ? arrivedAt[i] : answers[k]->started.GetSeconds());
                ++out.answered;
                cycleSum += rt;
                out.responseTimes.Add(rt);
            }
            const uint64_t left = asked - answers.size();
            if (apps[i]->ResetsReceived() > 0 || apps[i]->ConnectFailures() > 0)
            {
                out.refused += left;
                requestLoss.push_back({arrivedAt[i], left, true});
            }
            else if (left > 0)
            {
                out.unanswered += left;
                requestLoss.push_back({arrivedAt[i], left, false});
            }
        }
    }
    else
        for (const auto& a : apps)
        {
            out.requests += a->Completed();
            cycleSum += a->CycleSecondsSum();
            bytes += a->ResponseBytes();
            out.responseTimes += *a->CycleTimes();
        }
    const WebSwitch::Counters& n = open ? atEnd : ws->GetCounters();
    const double req = static_cast<double>(std::max<uint64_t>(out.requests, 1));
    out.requestsPerS = static_cast<double>(out.requests) / c.durationS;
    out.latencyMs = open ? (out.answered ? cycleSum / static_cast<double>(out.answered) * 1e3 : 0.0)
                         : (out.requests ? cycleSum / req * 1e3 : 0.0);
    out.responseMbps = static_cast<double>(bytes) * 8.0 / c.durationS / 1e6;
    const double cycles = n.cycles - atWarmup.cycles;
    out.switchUtilization =
        c.profile.clockHz > 0
            ? (cycles / c.profile.clockHz + (queuedAtWarmup - queuedAtEnd).GetSeconds()) / c.durationS
            : 0.0;
    out.switchCyclesPerRequest = cycles / req;
    out.switchPacketsPerRequest = static_cast<double>(n.packets - atWarmup.packets) / req;
    out.connectionSidesPerRequest = static_cast<double>(n.connectionSides - atWarmup.connectionSides) / req;
    out.redirectsPerRequest = static_cast<double>(n.redirects - atWarmup.redirects) / req;
    out.rulesPerRequest = static_cast<double>(n.ruleOps.rules_evaluated - atWarmup.ruleOps.rules_evaluated) / req;
    out.cookieHitsPerRequest = static_cast<double>(n.cookieHits - atWarmup.cookieHits) / req;
    out.cookiesInsertedPerRequest = static_cast<double>(n.cookiesInserted - atWarmup.cookiesInserted) / req;
    out.cookiesLearnedPerRequest = static_cast<double>(n.cookiesLearned - atWarmup.cookiesLearned) / req;
    out.utilization["switch.cpu"] = out.switchUtilization;
    if (open)
        for (auto& [name, busy] : busyAtEnd)
            out.utilization[name] = busy / c.durationS;
    else
        for (auto& [name, w] : wires)
            out.utilization[name] = w->BusyTime().GetSeconds() / c.durationS;
    for (size_t i = 0; i < cpus.size(); ++i)
        out.utilization[cpuNames[i]] =
            std::min(1.0, ((open ? cpuAtEnd[i] : cpus[i]->Busy()) - cpuAtWarmup[i]).GetSeconds() / c.durationS);
    out.drops = ws->DropCounts();
    std::vector<std::string> reasons;
    for (const auto& [name, count] : out.drops)
        reasons.push_back(name);
    if (open)
        reasons.insert(reasons.end(), {"request_refused", "request_unanswered"});
    if (reasons.empty())
        reasons.push_back("dropped"); // nothing refused: an empty timeline of LossTimeline's one default reason
    out.lossTimeline = LossTimeline(1, c.lossBins, end, reasons);
    const auto reasonIndex = [&reasons](const std::string& name) {
        return static_cast<unsigned>(std::find(reasons.begin(), reasons.end(), name) - reasons.begin());
    };
    for (const auto& [reason, at] : switchDrops)
        out.lossTimeline.Add(0, at, 1.0, reasonIndex(reason));
    for (const RequestLoss& q : requestLoss)
        out.lossTimeline.Add(0, q.arrivedS, static_cast<double>(q.requests),
                             reasonIndex(q.refused ? "request_refused" : "request_unanswered"));
    out.events = Simulator::GetEventCount();
    Simulator::Destroy();
    return out;
}

} // namespace routertwin
