// HTTP/1.x end hosts on ns-3's TCP (ns3::TcpSocketBase), for the L7 web
// switch (seed 003's WebBench clients and IIS servers, reduced to what the
// switch sees on the wire).
//
// HttpServerApp listens on a port and answers every request head (up to the
// blank line) with "HTTP/1.1 200 OK", a Content-Length and a body whose
// size the request's path names ("/x/CLASS_<bytes>.<ext>"; otherwise
// DefaultBodyBytes; a request with an "X-Replay-Body-Bytes: <n>" header,
// as a trace replay writes it, gets n whatever its path). Body byte i of server k's answer to a path of n bytes
// is (i + 7k + 13n) mod 251 + 1: the client checks every byte it gets
// against it, so a byte misplaced by a wrong sequence translation shows. A request with "Connection: close" (or HTTP/1.0 without
// keep-alive) is answered and the connection closed.
//
// HttpClientApp sends its requests one after another on one connection
// (keep-alive), each when the previous response has fully arrived; each
// request may be written in several pieces with a gap between them (a head
// split across segments). A response with "Connection: close" or a closed
// connection makes it reconnect for the next request; a 302 makes it send
// the same request again (the web switch's keep-alive redirect). With
// GiveUpAfter set, a request not answered that long after it started ends
// the client: it closes the connection (a FIN) and sends nothing more.
// With CloseWhenDone set it closes its connection after its last answer.
// At its stop time (StopApplication) the client closes its connection and
// ends: no step scheduled before the stop (a connection after the CPU time
// or a think time, a request's next piece, a give-up) and no answer
// arriving on the closed connection opens a connection, sends a request or
// records an answer after it.
//
// Cookies (seed 003 section 5.6): with the server's SessionCookie set, a
// request without that cookie starts a session: the answer sets
// "<name>=s<k>-<n>; path=/" (n counts the server's sessions), as an ASP
// page sets its session cookie; CookieValue gives every session the page's
// own fixed value instead (pre-arranged: Server=A), and CookieEveryAnswer
// sets the cookie again on every answer (the session's value), as a page
// that sets it each time it runs. With the client's Cookies set, the client
// keeps every Set-Cookie it receives (name=value, the last one of a name
// wins) and sends them all in a Cookie header on each later request, on
// whatever connection, as a browser does (RFC 6265 5.4, attributes not
// checked: one host, path=/).
//
// For the switch's server checks the server answers with its Status
// attribute's code (a 503 takes a web-page check down), serves HealthBody
// for the path "/health" when set (a content check searches it), and
// SetListening(false) closes its listening socket (the service gone, the
// host up: connections refused by an RST) until SetListening(true).
#ifndef ROUTERTWIN_HTTP_APPS_H
#define ROUTERTWIN_HTTP_APPS_H

#include "latency-histogram.h"

#include <ns3/application.h>
#include <ns3/ipv4-address.h>
#include <ns3/nstime.h>
#include <ns3/socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace routertwin
{

/// One host's processor as a FIFO server of work (seed 003's client and
/// server PCs: WebBench's and IIS's time per request and per connection,
/// shared by every application on the host).
class HostCpu : public ns3::SimpleRefCount<HostCpu>
{
  public:
    /// Queues `work`; returns how long from now until it is done.
    ns3::Time Reserve(ns3::Time work);
    /// Work done or queued so far.
    ns3::Time Busy() const { return m_busy; }

  private:
    ns3::Time m_until;
    ns3::Time m_busy;
};

/// Body byte i of server k's answer to a path of pathBytes bytes.
uint8_t HttpBodyByte(uint32_t server, uint64_t pathBytes, uint64_t i);
/// Body size named by a path "/.../CLASS_<bytes>.<ext>", else fallback.
uint64_t HttpBodyBytesOfPath(const std::string& path, uint64_t fallback);

class HttpServerApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();

    uint32_t Requests() const { return m_requests; }
    uint32_t Accepted() const { return m_accepted; }
    /// Connections ended by a reset from the peer.
    uint32_t ResetsReceived() const { return m_resets; }
    /// Paths of the requests served, in order.
    const std::vector<std::string>& Paths() const { return m_paths; }
    /// Requests served per accepted connection, in order of acceptance.
    std::vector<uint32_t> RequestsPerConnection() const;
    /// Closes (false) or opens again (true) the listening socket.
    void SetListening(bool on);
    /// The Cookie header of each request served, in order ("" when none).
    const std::vector<std::string>& Cookies() const { return m_cookies; }
    /// Each request's answer waits for perRequest of cpu (and perConnection
    /// more for a connection's first request): IIS's time on the server PC.
    void SetCpu(ns3::Ptr<HostCpu> cpu, ns3::Time perRequest, ns3::Time perConnection);
    /// Keeps no record of paths and cookies (long runs).
    void SetRecordRequests(bool on) { m_record = on; }

  private:
    struct Conn
    {
        std::string in;       ///< bytes of the request being read
        std::string out;      ///< bytes not yet accepted by the socket
        bool closeAfter = false;
        uint32_t index = 0;   ///< order of acceptance
        uint32_t served = 0;
    };
    void StartApplication() override;
    void StopApplication() override;
    void Accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void Read(ns3::Ptr<ns3::Socket> s);
    void Pump(ns3::Ptr<ns3::Socket> s, uint32_t room);
    void Reset(ns3::Ptr<ns3::Socket> s);
    /// Queues an answer's bytes (and the close after it) and sends.
    void Deliver(ns3::Ptr<ns3::Socket> s, const std::string& resp, bool closeAfter);

    ns3::Ptr<HostCpu> m_cpu;
    ns3::Time m_cpuPerRequest, m_cpuPerConnection;
    bool m_record = true;
    uint32_t m_headBytes = 0;
    uint16_t m_port = 80;
    uint32_t m_serverId = 0;
    uint64_t m_defaultBody = 1000;
    uint32_t m_sendBuffer = 0; ///< 0: ns-3's SndBufSize
    std::string m_sessionCookie;
    std::string m_cookieValue;       ///< "" = a value per session
    bool m_cookieEveryAnswer = false;
    uint32_t m_sessions = 0;
    uint32_t m_status = 200;
    std::string m_healthBody;
    std::vector<std::string> m_cookies;
    ns3::Ptr<ns3::Socket> m_listen;
    std::map<ns3::Ptr<ns3::Socket>, Conn> m_conns;
    uint32_t m_requests = 0, m_accepted = 0, m_resets = 0;
    std::vector<std::string> m_paths;
};

class HttpClientApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();

    /// One request: its bytes, written in pieces of the given sizes (the
    /// rest in one last piece) with Gap between pieces.
    struct Request
    {
        std::string bytes;
        std::vector<uint32_t> pieces;
        /// The client's think time before it, from the previous answer (a
        /// replayed capture's; its cycle and response time start after it)
        ns3::Time pause;
    };
    /// A GET of path (HTTP/1.1 unless http10), optionally with extra header lines.
    static Request Get(const std::string& path, bool http10 = false, const std::string& extra = "");
    void AddRequest(const Request& r) { m_requests.push_back(r); }
    /// An endless closed loop (WebBench's thread, think time 0): request i
    /// is source(i), asked for when the previous one is answered.
    void SetRequestSource(std::function<Request(uint64_t)> source) { m_source = std::move(source); }
    /// Each request waits for perRequest of cpu before it is sent, and each
    /// connection for perConnection more: WebBench's time on the client PC.
    void SetCpu(ns3::Ptr<HostCpu> cpu, ns3::Time perRequest, ns3::Time perConnection);
    /// Keeps only counts and the sum of cycle times of responses after
    /// `from`, not each response (long runs).
    void SetSummaryOnly(ns3::Time from)
    {
        m_summaryOnly = true;
        m_summaryFrom = from;
        m_cycleTimes = std::make_unique<LatencyHistogram>();
    }
    /// Summary mode: requests completed after `from`, and the sum of their
    /// cycle times (from the previous answer to this one: client CPU,
    /// connection, request, response) in seconds, and their response bytes.
    uint64_t Completed() const { return m_completed; }
    double CycleSecondsSum() const { return m_cycleSum; }
    /// Summary mode: the same cycle times, one sample each (issue 15: the
    /// distribution behind CycleSecondsSum's mean); nullptr otherwise (an
    /// open loop's one-request clients keep no histogram of 1,000 bins each).
    const LatencyHistogram* CycleTimes() const { return m_cycleTimes.get(); }
    uint64_t ResponseBytes() const { return m_responseBytes; }

    struct Response
    {
        uint32_t status = 0;
        std::string server;  ///< the Server header ("s<k>")
        uint64_t bodyBytes = 0;
        bool bodyMatches = true; ///< every body byte is HttpBodyByte(server, path bytes, i)
        std::vector<std::string> setCookies; ///< the Set-Cookie header values, in order
        ns3::Time at;
        ns3::Time started; ///< when its request's cycle began (the previous answer, or the start)
    };
    const std::vector<Response>& Responses() const { return m_responses; }
    uint32_t Connections() const { return m_connections; }
    uint32_t ResetsReceived() const { return m_resets; }
    /// Connection attempts refused (a RST to the SYN) or abandoned (SYN retries exhausted).
    uint32_t ConnectFailures() const { return m_connectFailures; }
    uint32_t Redirects() const { return m_redirects; }
    /// Requests given up (GiveUpAfter).
    uint32_t GaveUp() const { return m_gaveUp; }
    /// When each request in progress ended without its answer: its
    /// connection refused or abandoned, closed or reset before the answer
    /// was whole, or the request given up (stopping the application ends
    /// none). A closed loop's thread stops there.
    const std::vector<ns3::Time>& Failures() const { return m_failures; }
    bool Done() const { return !m_source && m_next >= m_requests.size(); }
    /// A request in progress (connecting, sent, or its answer arriving);
    /// read at the end of a run the client was not stopped in, it is one
    /// that never got its answer.
    bool Awaiting() const { return m_awaiting; }
    /// Requests given (AddRequest) or, with a source, taken from it so far.
    uint64_t Requested() const { return m_source ? m_sourced : m_requests.size(); }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Connect();
    void Connected(ns3::Ptr<ns3::Socket> s);
    void ConnectFailed(ns3::Ptr<ns3::Socket> s);
    /// A request in progress on s, the current socket, ended without its answer.
    void Failed(ns3::Ptr<ns3::Socket> s);
    void SendPiece(uint32_t piece, uint32_t offset);
    void Read(ns3::Ptr<ns3::Socket> s);
    void Closed(ns3::Ptr<ns3::Socket> s);
    void Reset(ns3::Ptr<ns3::Socket> s);
    void ResponseDone();
    /// The CPU time, then the next request (or a new connection for it);
    /// afterPause: its think time has passed, its cycle starts now.
    void StartNext(bool afterPause);
    void GiveUp(size_t request, uint32_t responses);
    /// The current request's bytes, with the jar's Cookie header.
    std::string RequestBytes() const;
    /// The source's requests up to the current one.
    void Fill();

    std::function<Request(uint64_t)> m_source;
    uint64_t m_sourced = 0; ///< requests taken from m_source
    ns3::Ptr<HostCpu> m_cpu;
    ns3::Time m_cpuPerRequest, m_cpuPerConnection;
    ns3::Time m_cycleStart;
    bool m_summaryOnly = false;
    ns3::Time m_summaryFrom;
    uint64_t m_completed = 0, m_responseBytes = 0, m_headBytes = 0;
    double m_cycleSum = 0;
    std::unique_ptr<LatencyHistogram> m_cycleTimes;

    ns3::Ipv4Address m_vip;
    uint16_t m_port = 80;
    ns3::Time m_gap;
    ns3::Time m_giveUpAfter;
    bool m_useCookies = false;
    bool m_closeWhenDone = false;
    std::map<std::string, std::string> m_jar; ///< cookie name -> value
    ns3::Ptr<ns3::Socket> m_socket;
    std::vector<Request> m_requests;
    std::string m_sending; ///< the bytes of the request being written
    size_t m_next = 0;
    bool m_connected = false;
    std::string m_in;
    bool m_headDone = false;
    uint64_t m_bodyLeft = 0;
    bool m_closeAfter = false;
    Response m_current;
    std::string m_currentPath;
    std::vector<Response> m_responses;
    uint32_t m_connections = 0, m_resets = 0, m_redirects = 0, m_gaveUp = 0, m_connectFailures = 0;
    bool m_awaiting = false; ///< a request is in progress (connecting, sent, or its answer arriving)
    /// Between StartApplication and StopApplication: each scheduled step
    /// and socket callback that would start work checks it.
    bool m_running = false;
    std::vector<ns3::Time> m_failures;
};

} // namespace routertwin

#endif
