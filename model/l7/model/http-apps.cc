#include "http-apps.h"

#include <ns3/inet-socket-address.h>
#include <ns3/ipv4-address.h>
#include <ns3/packet.h>
#include <ns3/simulator.h>
#include <ns3/tcp-socket-factory.h>
#include <ns3/uinteger.h>
#include <ns3/boolean.h>
#include <ns3/string.h>

#include <algorithm>
#include <cctype>

namespace routertwin
{
using namespace ns3;

uint8_t
HttpBodyByte(uint32_t server, uint64_t pathBytes, uint64_t i)
{
    return static_cast<uint8_t>((i + 7u * server + 13u * pathBytes) % 251u + 1u);
}

uint64_t
HttpBodyBytesOfPath(const std::string& path, uint64_t fallback)
{
    const size_t at = path.rfind("CLASS_");
    if (at == std::string::npos)
        return fallback;
    uint64_t n = 0;
    size_t i = at + 6;
    if (i >= path.size() || !std::isdigit(static_cast<unsigned char>(path[i])))
        return fallback;
    for (; i < path.size() && std::isdigit(static_cast<unsigned char>(path[i])); ++i)
        n = n * 10 + static_cast<uint64_t>(path[i] - '0');
    return n;
}

namespace
{
/// Lower-case copy, for the case-insensitive header checks (RFC 7230 3.2).
std::string
Lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

/// The values of every header called name (lower case) in head, in order.
std::vector<std::string>
HeaderValues(const std::string& head, const std::string& name)
{
    std::vector<std::string> out;
    const std::string low = Lower(head);
    for (size_t at = low.find("\n" + name + ":"); at != std::string::npos;
         at = low.find("\n" + name + ":", at + 1))
    {
        size_t v = at + name.size() + 2;
        while (v < head.size() && head[v] == ' ')
            ++v;
        const size_t end = head.find_first_of("\r\n", v);
        out.push_back(head.substr(v, end - v));
    }
    return out;
}

/// The value of the first header called name (lower case), "" when absent.
std::string
HeaderValue(const std::string& head, const std::string& name)
{
    const auto all = HeaderValues(head, name);
    return all.empty() ? "" : all.front();
}
} // namespace

Time
HostCpu::Reserve(Time work)
{
    const Time now = Simulator::Now();
    m_until = std::max(m_until, now) + work;
    m_busy += work;
    return m_until - now;
}

// --- server ------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(HttpServerApp);

TypeId
HttpServerApp::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::HttpServerApp")
                            .SetParent<Application>()
                            .AddConstructor<HttpServerApp>()
                            .AddAttribute("Port", "TCP port listened on.", UintegerValue(80),
                                          MakeUintegerAccessor(&HttpServerApp::m_port),
                                          MakeUintegerChecker<uint16_t>())
                            .AddAttribute("ServerId", "k in the Server header \"s<k>\" and the body bytes.",
                                          UintegerValue(0), MakeUintegerAccessor(&HttpServerApp::m_serverId),
                                          MakeUintegerChecker<uint32_t>())
                            .AddAttribute("SendBufferBytes",
                                          "Each connection's TCP send buffer (SndBufSize); 0: ns-3's default "
                                          "(131072). At most the client's window: ns-3 3.37 crashes in "
                                          "loss recovery when a sender's buffer holds more than the "
                                          "peer's window (TcpRateLinux::SkbSent on a null item, "
                                          "docs/nctu.md).",
                                          UintegerValue(0), MakeUintegerAccessor(&HttpServerApp::m_sendBuffer),
                                          MakeUintegerChecker<uint32_t>())
                            .AddAttribute("DefaultBodyBytes", "Body size when the path names none.",
                                          UintegerValue(1000), MakeUintegerAccessor(&HttpServerApp::m_defaultBody),
                                          MakeUintegerChecker<uint64_t>())
                            .AddAttribute("SessionCookie",
                                          "Name of the session cookie a request without it is given "
                                          "(Set-Cookie: <name>=s<k>-<n>; path=/); \"\" = none.",
                                          StringValue(""), MakeStringAccessor(&HttpServerApp::m_sessionCookie),
                                          MakeStringChecker())
                            .AddAttribute("CookieValue",
                                          "The session cookie's value when it is the page's own fixed one "
                                          "(pre-arranged persistence: Server=A); \"\" = s<k>-<n> per session.",
                                          StringValue(""), MakeStringAccessor(&HttpServerApp::m_cookieValue),
                                          MakeStringChecker())
                            .AddAttribute("CookieEveryAnswer",
                                          "Set the session cookie on every answer (a page that sets it each "
                                          "time it runs), not only on a request without it.",
                                          BooleanValue(false), MakeBooleanAccessor(&HttpServerApp::m_cookieEveryAnswer),
                                          MakeBooleanChecker())
                            .AddAttribute("Status", "Status code of every answer.", UintegerValue(200),
                                          MakeUintegerAccessor(&HttpServerApp::m_status),
                                          MakeUintegerChecker<uint32_t>(100, 599))
                            .AddAttribute("HeadBytes",
                                          "An answer's head is padded to at least this many bytes with an "
                                          "X-Pad header (IIS's Date, ETag, ... headers); 0 = no padding.",
                                          UintegerValue(0), MakeUintegerAccessor(&HttpServerApp::m_headBytes),
                                          MakeUintegerChecker<uint32_t>())
                            .AddAttribute("HealthBody", "Body of the page \"/health\" (\"\" = none: a generated one).",
                                          StringValue(""), MakeStringAccessor(&HttpServerApp::m_healthBody),
                                          MakeStringChecker());
    return tid;
}

std::vector<uint32_t>
HttpServerApp::RequestsPerConnection() const
{
    std::vector<uint32_t> out(m_accepted, 0);
    for (const auto& [s, c] : m_conns)
        out[c.index] = c.served;
    return out;
}

void
HttpServerApp::SetCpu(Ptr<HostCpu> cpu, Time perRequest, Time perConnection)
{
    m_cpu = cpu;
    m_cpuPerRequest = perRequest;
    m_cpuPerConnection = perConnection;
}

void
HttpServerApp::Deliver(Ptr<Socket> s, const std::string& resp, bool closeAfter)
{
    Conn& c = m_conns[s];
    c.out += resp;
    c.closeAfter = c.closeAfter || closeAfter;
    Pump(s, s->GetTxAvailable());
}

void
HttpServerApp::SetListening(bool on)
{
    if (!on && m_listen)
    {
        m_listen->Close();
        m_listen = nullptr;
    }
    else if (on && !m_listen)
        StartApplication();
}

void
HttpServerApp::StartApplication()
{
    m_listen = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
    m_listen->Listen();
    m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&HttpServerApp::Accept, this));
}

void
HttpServerApp::StopApplication()
{
    if (m_listen)
        m_listen->Close();
}

void
HttpServerApp::Accept(Ptr<Socket> s, const Address&)
{
    Conn c;
    c.index = m_accepted++;
    m_conns[s] = c;
    if (m_sendBuffer > 0)
        s->SetAttribute("SndBufSize", UintegerValue(m_sendBuffer));
    s->SetRecvCallback(MakeCallback(&HttpServerApp::Read, this));
    s->SetSendCallback(MakeCallback(&HttpServerApp::Pump, this));
    s->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(), MakeCallback(&HttpServerApp::Reset, this));
}

void
HttpServerApp::Reset(Ptr<Socket>)
{
    ++m_resets;
}

void
HttpServerApp::Read(Ptr<Socket> s)
{
    Conn& c = m_conns[s];
    while (Ptr<Packet> p = s->Recv())
    {
        std::string chunk(p->GetSize(), '\0');
        p->CopyData(reinterpret_cast<uint8_t*>(chunk.data()), chunk.size());
        c.in += chunk;
    }
    for (size_t end; (end = c.in.find("\r\n\r\n")) != std::string::npos;)
    {
        const std::string head = c.in.substr(0, end + 2);
        c.in.erase(0, end + 4);
        const size_t sp1 = head.find(' ');
        const size_t sp2 = head.find(' ', sp1 + 1);
        const std::string path = head.substr(sp1 + 1, sp2 - sp1 - 1);
        const bool http10 = head.compare(sp2 + 1, 8, "HTTP/1.0") == 0;
        const std::string conn = Lower(HeaderValue(head, "connection"));
        const bool closeAfter = conn.find("close") != std::string::npos ||
                                (http10 && conn.find("keep-alive") == std::string::npos);
        const bool health = !m_healthBody.empty() && path == "/health";
        // a replayed request carries the captured answer's body size (its path is the captured one)
        const std::string replayed = HeaderValue(head, "x-replay-body-bytes");
        const uint64_t n = health              ? m_healthBody.size()
                           : !replayed.empty() ? std::strtoull(replayed.c_str(), nullptr, 10)
                                               : HttpBodyBytesOfPath(path, m_defaultBody);
        const std::string cookie = HeaderValue(head, "cookie");
        if (m_record)
            m_cookies.push_back(cookie);
        std::string setCookie;
        if (!m_sessionCookie.empty())
        {
            const std::string jar = "; " + cookie;
            const std::string key = "; " + m_sessionCookie + "=";
            const size_t at = jar.find(key);
            std::string value;
            if (at == std::string::npos)
                value = m_cookieValue.empty()
                            ? "s" + std::to_string(m_serverId) + "-" + std::to_string(++m_sessions)
                            : m_cookieValue;
            else if (m_cookieEveryAnswer)
            {
                // the page sets its cookie again: the session's own value
                const size_t from = at + key.size();
                value = m_cookieValue.empty() ? jar.substr(from, jar.find(';', from) - from) : m_cookieValue;
            }
            if (!value.empty())
                setCookie = "Set-Cookie: " + m_sessionCookie + "=" + value + "; path=/\r\n";
        }
        const std::string reason = m_status == 200 ? "OK" : m_status == 503 ? "Service Unavailable" : "Status";
        std::string resp = "HTTP/1.1 " + std::to_string(m_status) + " " + reason + "\r\nServer: s" +
                           std::to_string(m_serverId) +
                           "\r\nContent-Length: " + std::to_string(n) + "\r\n" + setCookie +
                           (closeAfter ? "Connection: close\r\n" : "");
        static const size_t kPadLine = 11; // "X-Pad: ", its CRLF and the blank line's CRLF
        if (resp.size() + kPadLine < m_headBytes)
            resp += "X-Pad: " + std::string(m_headBytes - resp.size() - kPadLine, 'x') + "\r\n";
        resp += "\r\n";
        if (health)
            resp += m_healthBody;
        else
            for (uint64_t i = 0; i < n; ++i)
                resp.push_back(static_cast<char>(HttpBodyByte(m_serverId, path.size(), i)));
        ++m_requests;
        ++c.served;
        if (m_record)
            m_paths.push_back(path);
        if (!m_cpu)
        {
            Deliver(s, resp, closeAfter);
            continue;
        }
        // the answer leaves when the server's processor has done it (FIFO:
        // answers of one connection stay in order)
        const Time work = m_cpuPerRequest + (c.served == 1 ? m_cpuPerConnection : Time(0));
        Simulator::Schedule(m_cpu->Reserve(work), &HttpServerApp::Deliver, this, s, resp, closeAfter);
    }
    Pump(s, s->GetTxAvailable());
}

void
HttpServerApp::Pump(Ptr<Socket> s, uint32_t)
{
    auto it = m_conns.find(s);
    if (it == m_conns.end())
        return;
    Conn& c = it->second;
    while (!c.out.empty())
    {
        const uint32_t room = s->GetTxAvailable();
        if (room == 0)
            return; // the send callback resumes
        const uint32_t n = std::min<uint32_t>(room, static_cast<uint32_t>(c.out.size()));
        const int sent = s->Send(reinterpret_cast<const uint8_t*>(c.out.data()), n, 0);
        if (sent <= 0)
            return;
        c.out.erase(0, static_cast<size_t>(sent));
    }
    if (c.closeAfter)
    {
        c.closeAfter = false;
        s->Close();
    }
}

// --- client ------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(HttpClientApp);

TypeId
HttpClientApp::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::HttpClientApp")
                            .SetParent<Application>()
                            .AddConstructor<HttpClientApp>()
                            .AddAttribute("Remote", "The virtual service's address.",
                                          Ipv4AddressValue(Ipv4Address("198.18.1.1")),
                                          MakeIpv4AddressAccessor(&HttpClientApp::m_vip), MakeIpv4AddressChecker())
                            .AddAttribute("Port", "The virtual service's port.", UintegerValue(80),
                                          MakeUintegerAccessor(&HttpClientApp::m_port),
                                          MakeUintegerChecker<uint16_t>())
                            .AddAttribute("Gap", "Time between the pieces of one request.",
                                          TimeValue(MilliSeconds(1)), MakeTimeAccessor(&HttpClientApp::m_gap),
                                          MakeTimeChecker())
                            .AddAttribute("GiveUpAfter",
                                          "A request not answered this long after it started ends the client "
                                          "(connection closed); 0 = wait for ever.",
                                          TimeValue(Time(0)), MakeTimeAccessor(&HttpClientApp::m_giveUpAfter),
                                          MakeTimeChecker())
                            .AddAttribute("CloseWhenDone",
                                          "Close the connection after the last request's answer (else it stays "
                                          "open, idle).",
                                          BooleanValue(false), MakeBooleanAccessor(&HttpClientApp::m_closeWhenDone),
                                          MakeBooleanChecker())
                            .AddAttribute("Cookies",
                                          "Keep the cookies responses set and send them on later requests.",
                                          BooleanValue(false), MakeBooleanAccessor(&HttpClientApp::m_useCookies),
                                          MakeBooleanChecker());
    return tid;
}

HttpClientApp::Request
HttpClientApp::Get(const std::string& path, bool http10, const std::string& extra)
{
    Request r;
    r.bytes = "GET " + path + (http10 ? " HTTP/1.0" : " HTTP/1.1") + "\r\nHost: www.example.com\r\n" +
              "User-Agent: WebBench\r\n" + extra + "\r\n";
    return r;
}

void
HttpClientApp::SetCpu(Ptr<HostCpu> cpu, Time perRequest, Time perConnection)
{
    m_cpu = cpu;
    m_cpuPerRequest = perRequest;
    m_cpuPerConnection = perConnection;
}

void
HttpClientApp::Fill()
{
    while (m_source && m_requests.size() <= m_next)
        m_requests.push_back(m_source(m_sourced++));
}

void
HttpClientApp::StartApplication()
{
    m_running = true;
    m_cycleStart = Simulator::Now();
    Fill();
    if (m_cpu)
        Simulator::Schedule(m_cpu->Reserve(m_cpuPerConnection + m_cpuPerRequest), &HttpClientApp::Connect, this);
    else
        Connect();
}

void
HttpClientApp::StopApplication()
{
    // the end of the run, not a failure; the steps still scheduled (a
    // connect after the CPU, a piece, the next request after a pause, a
    // give-up) and the socket's callbacks now find m_running false
    m_running = false;
    m_awaiting = false;
    m_connected = false;
    if (m_socket)
        m_socket->Close();
}

void
HttpClientApp::Connect()
{
    if (!m_running || Done())
        return;
    m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_socket->Bind();
    m_socket->SetConnectCallback(MakeCallback(&HttpClientApp::Connected, this),
                                 MakeCallback(&HttpClientApp::ConnectFailed, this));
    m_socket->SetRecvCallback(MakeCallback(&HttpClientApp::Read, this));
    m_socket->SetCloseCallbacks(MakeCallback(&HttpClientApp::Closed, this),
                                MakeCallback(&HttpClientApp::Reset, this));
    m_socket->Connect(InetSocketAddress(m_vip, m_port));
    ++m_connections;
    m_awaiting = true;
}

void
HttpClientApp::Connected(Ptr<Socket>)
{
    if (!m_running)
        return;
    m_connected = true;
    SendPiece(0, 0);
}

void
HttpClientApp::ConnectFailed(Ptr<Socket> s)
{
    m_connected = false;
    ++m_connectFailures;
    Failed(s);
}

void
HttpClientApp::Failed(Ptr<Socket> s)
{
    if (s != m_socket || !m_awaiting)
        return; // an earlier connection's close, or between requests
    m_awaiting = false;
    m_failures.push_back(Simulator::Now());
}

void
HttpClientApp::SendPiece(uint32_t piece, uint32_t offset)
{
    if (!m_running || Done() || !m_connected)
        return;
    Fill();
    const Request& r = m_requests[m_next];
    if (piece == 0)
    {
        m_awaiting = true;
        m_sending = RequestBytes();
        m_in.clear();
        m_headDone = false;
        const size_t sp1 = r.bytes.find(' ');
        const size_t sp2 = r.bytes.find(' ', sp1 + 1);
        m_currentPath = sp1 == std::string::npos ? "" : r.bytes.substr(sp1 + 1, sp2 - sp1 - 1);
        if (m_giveUpAfter.IsStrictlyPositive())
            Simulator::Schedule(m_giveUpAfter, &HttpClientApp::GiveUp, this, m_next,
                                static_cast<uint32_t>(m_responses.size()));
    }
    const uint32_t total = static_cast<uint32_t>(m_sending.size());
    const uint32_t n = piece < r.pieces.size() ? std::min(r.pieces[piece], total - offset) : total - offset;
    m_socket->Send(reinterpret_cast<const uint8_t*>(m_sending.data()) + offset, n, 0);
    if (offset + n < total)
        Simulator::Schedule(m_gap, &HttpClientApp::SendPiece, this, piece + 1, offset + n);
}

void
HttpClientApp::Read(Ptr<Socket> s)
{
    // an answer arriving on the closed socket after the stop (TCP still
    // delivers in FIN_WAIT) is read and dropped: not recorded, no next
    // request, and the receive window stays open so the server's side ends
    if (!m_running)
    {
        while (s->Recv())
        {
        }
        return;
    }
    while (Ptr<Packet> p = s->Recv())
    {
        std::string chunk(p->GetSize(), '\0');
        p->CopyData(reinterpret_cast<uint8_t*>(chunk.data()), chunk.size());
        m_in += chunk;
        while (!m_in.empty())
        {
            if (!m_headDone)
            {
                const size_t end = m_in.find("\r\n\r\n");
                if (end == std::string::npos)
                    break;
                const std::string head = m_in.substr(0, end + 2);
                m_in.erase(0, end + 4);
                m_headBytes = end + 4;
                m_headDone = true;
                m_current = Response();
                m_current.status = static_cast<uint32_t>(std::atoi(head.c_str() + head.find(' ') + 1));
                m_current.server = HeaderValue(head, "server");
                m_bodyLeft = std::strtoull(HeaderValue(head, "content-length").c_str(), nullptr, 10);
                m_closeAfter = Lower(HeaderValue(head, "connection")).find("close") != std::string::npos;
                m_current.setCookies = HeaderValues(head, "set-cookie");
                if (m_useCookies)
                    for (const std::string& sc : m_current.setCookies)
                    {
                        const size_t eq = sc.find('=');
                        const size_t end = sc.find(';');
                        if (eq != std::string::npos && eq < end)
                            m_jar[sc.substr(0, eq)] = sc.substr(eq + 1, end == std::string::npos ? end : end - eq - 1);
                    }
            }
            const uint64_t take = std::min<uint64_t>(m_bodyLeft, m_in.size());
            const uint32_t server =
                m_current.server.size() > 1 ? static_cast<uint32_t>(std::atoi(m_current.server.c_str() + 1)) : 0;
            for (uint64_t i = 0; i < take; ++i)
                if (static_cast<uint8_t>(m_in[i]) !=
                    HttpBodyByte(server, m_currentPath.size(), m_current.bodyBytes + i))
                    m_current.bodyMatches = false;
            m_current.bodyBytes += take;
            m_bodyLeft -= take;
            m_in.erase(0, take);
            if (m_bodyLeft > 0)
                break;
            ResponseDone();
        }
    }
}

void
HttpClientApp::ResponseDone()
{
    m_current.at = Simulator::Now();
    m_current.started = m_cycleStart;
    if (!m_summaryOnly)
        m_responses.push_back(m_current);
    m_headDone = false;
    m_awaiting = m_current.status == 302; // a redirect's request goes again
    if (m_current.status == 302)
        ++m_redirects; // the same request again: the switch now binds it to its server
    else
    {
        if (m_summaryOnly && m_current.at >= m_summaryFrom)
        {
            const double cycle = (m_current.at - m_cycleStart).GetSeconds();
            ++m_completed;
            m_cycleSum += cycle;
            m_cycleTimes->Add(cycle);
            m_responseBytes += m_current.bodyBytes + m_headBytes;
        }
        m_cycleStart = Simulator::Now();
        ++m_next;
        if (m_source)
        {
            // a closed loop keeps only the current request
            m_requests.clear();
            m_next = 0;
        }
    }
    if (m_closeWhenDone && Done())
    {
        // no next request: the client ends its connection (a replayed
        // capture's client, whose FIN ended it)
        m_connected = false;
        m_socket->Close();
        return;
    }
    // a replayed client's think time before its next request (not before
    // a 302's repeat of the same one); the next cycle starts after it
    const Time pause = m_current.status == 302 || m_source || Done() ? Time(0) : m_requests[m_next].pause;
    if (pause.IsStrictlyPositive())
    {
        if (m_closeAfter)
        {
            m_connected = false;
            m_socket->Close();
        }
        Simulator::Schedule(pause, &HttpClientApp::StartNext, this, true);
        return;
    }
    StartNext(false);
}

void
HttpClientApp::StartNext(bool afterPause)
{
    if (!m_running)
        return; // the stop fell in the think time
    if (afterPause)
        m_cycleStart = Simulator::Now();
    // WebBench's work for the next request (and a new connection) first
    Time cpu(0);
    if (m_cpu)
        cpu = m_cpu->Reserve(m_cpuPerRequest + (m_closeAfter ? m_cpuPerConnection : Time(0)));
    if (m_closeAfter)
    {
        if (!afterPause)
        {
            m_connected = false;
            m_socket->Close();
        }
        Simulator::Schedule(cpu, &HttpClientApp::Connect, this);
        return;
    }
    Simulator::Schedule(cpu, &HttpClientApp::SendPiece, this, 0, 0);
}

std::string
HttpClientApp::RequestBytes() const
{
    std::string bytes = m_requests[m_next].bytes;
    if (!m_useCookies || m_jar.empty() || bytes.size() < 4 || bytes.compare(bytes.size() - 4, 4, "\r\n\r\n") != 0)
        return bytes;
    std::string cookie = "Cookie: ";
    for (auto it = m_jar.begin(); it != m_jar.end(); ++it)
        cookie += (it == m_jar.begin() ? "" : "; ") + it->first + "=" + it->second;
    bytes.insert(bytes.size() - 2, cookie + "\r\n");
    return bytes;
}

void
HttpClientApp::GiveUp(size_t request, uint32_t responses)
{
    if (!m_running || m_next != request || m_responses.size() != responses || !m_connected)
        return; // answered (or the connection already gone)
    ++m_gaveUp;
    Failed(m_socket);
    m_next = m_requests.size();
    m_connected = false;
    m_socket->Close();
}

void
HttpClientApp::Closed(Ptr<Socket> s)
{
    m_connected = false;
    Failed(s);
}

void
HttpClientApp::Reset(Ptr<Socket> s)
{
    m_connected = false;
    ++m_resets;
    Failed(s);
}

} // namespace routertwin
