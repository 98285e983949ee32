#include "lb-timed.h"

#include "config-keys.h"
#include "random-stream.h"
#include "traffic-profile.h" // FlowSizeDistribution

#include <ns3/simulator.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <list>
#include <queue>
#include <stdexcept>
#include <variant>

namespace routertwin
{

using namespace ns3;
using namespace config;

namespace
{

using C = LbTimedConfig;
using S = const std::string&;
using V = const ConfigValue&;
using Key = config::Key<LbTimedConfig>;

/// A per-server map {"i": value} (i below the servers that ever exist is
/// checked in FromKeys, once `servers` and `action` are known).
std::map<std::string, double>
PerServerMap(S k, V v)
{
    const auto* m = std::get_if<std::map<std::string, double>>(&v);
    if (!m)
    {
        Bad(k, "must map server indices (\"0\", \"1\", ...) to values");
    }
    return *m;
}

const std::vector<Key>&
Keys()
{
    static const std::vector<Key> keys = WithSchedHashKeys<C>({
        {"scheduler", [](C& c, S k, V v) { c.scheduler = SchedulerName(k, v); }},
        {"servers",
         [](C& c, S k, V v) { c.servers = static_cast<uint32_t>(AsInt(k, v, 1, DP_SCHED_MAX_SERVERS - 1)); }},
        {"weights", [](C& c, S k, V v) { c.given.weights = PerServerMap(k, v); }},
        {"maxconn", [](C& c, S k, V v) { c.given.maxconn = PerServerMap(k, v); }},
        {"maxqueue", [](C& c, S k, V v) { c.given.maxqueue = PerServerMap(k, v); }},
        {"action",
         [](C& c, S k, V v) {
             c.action = AsString(k, v);
             if (c.action != "none" && c.action != "drain" && c.action != "remove" && c.action != "add")
             {
                 Bad(k, "must be none, drain, remove or add");
             }
         }},
        {"server", [](C& c, S k, V v) { c.server = static_cast<uint32_t>(AsInt(k, v, 0, DP_SCHED_MAX_SERVERS - 1)); }},
        {"rate",
         [](C& c, S k, V v) {
             c.rate = Positive(k, v);
             if (c.rate > 1e6)
             {
                 Bad(k, "at most 1e6 connections/s (an event per connection)");
             }
         }},
        {"lifetime",
         [](C& c, S k, V v) {
             c.lifetime = AsString(k, v);
             if (c.lifetime != "exponential" && c.lifetime != "pareto" && c.lifetime != "lognormal")
             {
                 Bad(k, "must be exponential, pareto or lognormal");
             }
         }},
        {"lifetime_mean_ms", [](C& c, S k, V v) { c.lifetimeMeanMs = Positive(k, v); }},
        {"pareto_alpha", [](C& c, S k, V v) { c.paretoAlpha = AsDouble(k, v); }},
        {"pareto_min_ms", [](C& c, S k, V v) { c.paretoMinMs = AsDouble(k, v); }},
        {"lognormal_mu", [](C& c, S k, V v) { c.lognormalMu = AsDouble(k, v); }},
        {"lognormal_sigma", [](C& c, S k, V v) { c.lognormalSigma = AsDouble(k, v); }},
        {"warmup_s", [](C& c, S k, V v) { c.warmupS = NonNeg(k, v); }},
        {"at_s", [](C& c, S k, V v) { c.atS = NonNeg(k, v); }},
        {"settle_s", [](C& c, S k, V v) { c.settleS = NonNeg(k, v); }},
        {"end_s",
         [](C& c, S k, V v) {
             c.endS = Positive(k, v);
             if (c.endS > 86400)
             {
                 Bad(k, "at most 86400 s");
             }
         }},
        {"sample_s", [](C& c, S k, V v) { c.sampleS = NonNeg(k, v); }},
        {"timeout_queue_ms",
         [](C& c, S k, V v) { c.timeoutQueueMs = static_cast<uint32_t>(AsInt(k, v, 0, 86400000)); }},
        {"redispatch", [](C& c, S k, V v) { c.redispatch = AsBool(k, v); }},
        {"persistence",
         [](C& c, S k, V v) {
             c.persistence = AsString(k, v);
             if (c.persistence != "none" && c.persistence != "cookie")
             {
                 Bad(k, "must be none or cookie");
             }
         }},
        {"clients", [](C& c, S k, V v) { c.clients = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 24)); }},
        {"seed", [](C& c, S k, V v) { c.seed = static_cast<uint64_t>(AsInt(k, v, 0, INT64_MAX)); }},
        {"arrivals_s", [](C& c, S k, V v) { c.given.arrivals = PerServerMap(k, v); }},
        {"lifetimes_ms", [](C& c, S k, V v) { c.given.lifetimes = PerServerMap(k, v); }},
        {"cookies", [](C& c, S k, V v) { c.given.cookies = PerServerMap(k, v); }},
        {"frontend_maxconn",
         [](C& c, S k, V v) { c.frontendMaxconn = static_cast<uint32_t>(AsInt(k, v, 0, 2147483647)); }},
        {"accept_queue", [](C& c, S k, V v) { c.acceptQueue = static_cast<uint32_t>(AsInt(k, v, 0, 2147483647)); }},
        {"initial_connections",
         [](C& c, S k, V v) { c.initialConnections = static_cast<uint32_t>(AsInt(k, v, 0, 1 << 26)); }},
        {"timeline_bins", [](C& c, S k, V v) { c.timelineBins = static_cast<uint32_t>(AsInt(k, v, 1, 10000)); }},
    });
    return keys;
}

/// A map key naming an index below `below`, in canonical decimal ("0",
/// "17"): "01", "+1" or " 1" would name the same index as another key.
bool
IndexBelow(const std::string& text, uint32_t below, uint32_t& out)
{
    if (text.empty() || text.size() > 9 || (text.size() > 1 && text[0] == '0') ||
        !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    {
        return false;
    }
    const unsigned long v = std::stoul(text);
    if (v >= below)
    {
        return false;
    }
    out = static_cast<uint32_t>(v);
    return true;
}

/// A per-server map as a vector of `slots` values (default `fallback`),
/// each an integer in lo..hi.
std::vector<uint32_t>
Expand(const char* key, const std::map<std::string, double>& m, uint32_t slots, uint32_t fallback, double lo,
       double hi)
{
    std::vector<uint32_t> out(slots, fallback);
    for (const auto& [index, value] : m)
    {
        uint32_t i = 0;
        if (!IndexBelow(index, slots, i))
        {
            Bad(key, "'" + index + "' is not a server index below " + std::to_string(slots));
        }
        if (!(value >= lo && value <= hi) || value != std::floor(value))
        {
            Bad(key, "value of server " + index + " must be an integer in " + std::to_string(int64_t(lo)) + ".." +
                         std::to_string(int64_t(hi)));
        }
        out[i] = static_cast<uint32_t>(value);
    }
    return out;
}

/// The Pareto or lognormal lifetime law of c (FlowSizeDistribution draws
/// "packets": the unit is the ms here).
FlowSizeDistribution
HeavyLifetime(const LbTimedConfig& c)
{
    FlowSizeDistribution d;
    d.kind = c.lifetime == "pareto" ? FlowSizeKind::kPareto : FlowSizeKind::kLognormal;
    d.paretoAlpha = c.paretoAlpha;
    d.paretoMinPackets = c.paretoMinMs;
    d.lognormalMu = c.lognormalMu;
    d.lognormalSigma = c.lognormalSigma;
    return d;
}

constexpr uint32_t kNone = UINT32_MAX;

/// The refusal timeline's reasons (LbTimedResult::refusals), VPP-style names.
enum Refusal : unsigned
{
    kQueueTimeout, ///< 503: timeout queue
    kMaxqueueFull, ///< 503: the server's queue held maxqueue
    kNoServer,     ///< 503: no usable server
    kAcceptQueueFull,
    kBroken,       ///< a connection cut by remove
};
const std::vector<std::string> kRefusalNames = {"queue_timeout", "maxqueue_full", "no_server", "accept_queue_full",
                                                "broken"};

/// One run: the pool, the queues, the connections.
class TimedRun
{
  public:
    explicit TimedRun(const LbTimedConfig& c)
        : m_c(c),
          m_arrivals(c.seed, 1),
          m_lifetimes(c.seed, 2),
          m_clients(c.seed, 3)
    {
        m_pool = CreateSchedPool(c.scheduler, c.Slots(), c.seed, c.hash, m_poolMem, m_algo);
        m_request = SchedHashesRequest(m_algo);
        for (uint32_t i = 0; i < c.servers; ++i)
        {
            AddServer(i);
        }
        const uint32_t n = c.Slots();
        m_active.assign(n, 0);
        m_queue.resize(n);
        m_lastChange.assign(n, 0.0);
        m_r.beforeActive.assign(n, 0.0);
        m_r.afterActive.assign(n, 0.0);
        m_r.beforeNewPerS.assign(n, 0.0);
        m_r.afterNewPerS.assign(n, 0.0);
        m_cookie.assign(c.persistence == "cookie" ? c.clients : 0, -1);
        m_r.refusals = LossTimeline(1, c.timelineBins, c.endS, kRefusalNames);
        if (c.lifetime != "exponential")
        {
            m_heavy = HeavyLifetime(c);
        }
    }

    LbTimedResult Run()
    {
        Simulator::Destroy();
        if (m_c.traceArrivalsS.empty())
        {
            Simulator::Schedule(Seconds(m_arrivals.Exponential(1.0 / m_c.rate)), &TimedRun::Arrive, this);
        }
        for (double t : m_c.traceArrivalsS)
        {
            Simulator::Schedule(Seconds(t), &TimedRun::NewRequest, this);
        }
        if (m_c.initialConnections)
        {
            Simulator::ScheduleNow(&TimedRun::Prefill, this);
        }
        if (m_c.action != "none")
        {
            Simulator::Schedule(Seconds(m_c.atS), &TimedRun::Act, this);
        }
        if (m_c.sampleS > 0 && m_c.action != "add" && m_c.action != "none")
        {
            for (uint64_t k = 0; m_c.atS + static_cast<double>(k) * m_c.sampleS < m_c.endS; ++k)
            {
                Simulator::Schedule(Seconds(m_c.atS + static_cast<double>(k) * m_c.sampleS), &TimedRun::Sample,
                                    this);
            }
        }
        Simulator::Stop(Seconds(m_c.endS));
        Simulator::Run();
        const double end = m_c.endS;
        for (uint32_t s = 0; s < m_c.Slots(); ++s)
        {
            Integrate(s, end);
        }
        IntegrateAcceptQueue(end);
        const double before = m_c.atS - m_c.warmupS, after = m_c.endS - m_c.atS - m_c.settleS;
        for (uint32_t s = 0; s < m_c.Slots(); ++s)
        {
            m_r.beforeActive[s] = before > 0 ? m_r.beforeActive[s] / before : 0;
            m_r.beforeNewPerS[s] = before > 0 ? m_r.beforeNewPerS[s] / before : 0;
            m_r.afterActive[s] = after > 0 ? m_r.afterActive[s] / after : 0;
            m_r.afterNewPerS[s] = after > 0 ? m_r.afterNewPerS[s] / after : 0;
        }
        if (m_emptySince >= 0)
        {
            m_r.drainS = m_emptySince - m_c.atS;
        }
        m_r.before503PerS = before > 0 ? m_r.before503PerS / before : 0;
        m_r.beforeAcceptQueue = before > 0 ? m_r.beforeAcceptQueue / before : 0;
        m_r.after503PerS = after > 0 ? m_r.after503PerS / after : 0;
        m_r.queueWaitMeanMs =
            m_r.queueWait.Count() > 0 ? m_waitSumS * 1000.0 / m_r.queueWait.Count() : 0;
        Simulator::Destroy();
        return m_r;
    }

  private:
    struct Request
    {
        uint32_t client = 0;
        uint32_t server = kNone; ///< the server whose queue holds it; kNone: the backend queue
        bool direct = false;     ///< sent by its cookie (HAProxy SF_DIRECT)
        bool waited = false;     ///< counted in queued
        bool queued = false;     ///< in a server's or the backend queue now
        int64_t queueKeyMs = 0;   ///< when it entered its queue, in whole ms: HAProxy's key (pendconn_add, now_ms)
        double firstQueuedAt = 0; ///< when it first waited (its wait spans a redistribution)
        std::list<uint64_t>::iterator at;
        EventId timeout;
    };

    struct Connection
    {
        uint32_t server;
        bool open;
    };

    struct PendingClose
    {
        int64_t at;   ///< time step it ends at
        uint64_t seq; ///< scheduling order: ties end first scheduled first
        uint64_t conn;
        bool operator>(const PendingClose& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };

    double Now() const { return Simulator::Now().GetSeconds(); }

    void AddServer(uint32_t i)
    {
        dp_sched_server_t sv{};
        sv.weight = m_c.weights[i];
        sv.maxconn = m_c.maxconn[i];
        if (dp_sched_set_server(m_pool, i, &sv, nullptr) != 0)
        {
            Bad("weights", "the scheduler refused weight " + std::to_string(sv.weight) + " of server " +
                               std::to_string(i));
        }
    }

    /// Adds server s's connections since its last change to the windows'
    /// integrals (connection-seconds).
    void Integrate(uint32_t s, double now)
    {
        const double from = m_lastChange[s];
        const auto overlap = [&](double lo, double hi) {
            return std::max(0.0, std::min(now, hi) - std::max(from, lo));
        };
        m_r.beforeActive[s] += m_active[s] * overlap(m_c.warmupS, m_c.atS);
        m_r.afterActive[s] += m_active[s] * overlap(m_c.atS + m_c.settleS, m_c.endS);
        m_lastChange[s] = now;
    }

    /// Server s's state; one not in the pool (the added server before at_s)
    /// is DISABLED: a cookie naming it is ignored, as HAProxy ignores a
    /// cookie that names no server (a zeroed info would read DP_SCHED_UP).
    uint32_t State(uint32_t s) const
    {
        dp_sched_server_info_t info{};
        if (dp_sched_get_server(m_pool, s, &info) != 0)
        {
            return DP_SCHED_DISABLED;
        }
        return info.state;
    }

    bool Full(uint32_t s) const
    {
        return m_c.maxconn[s] && (!m_queue[s].empty() || m_active[s] >= m_c.maxconn[s]);
    }

    /// Some server takes new connections from the scheduler (up, weight > 0),
    /// maxconn aside: the backend queue can be served.
    bool AnyUsable() const
    {
        for (uint32_t s = 0; s < m_c.Slots(); ++s)
        {
            dp_sched_server_info_t info{};
            if (dp_sched_get_server(m_pool, s, &info) == 0 && info.usable)
            {
                return true;
            }
        }
        return false;
    }

    void Arrive()
    {
        if (Now() >= m_c.endS)
        {
            return;
        }
        Simulator::Schedule(Seconds(m_arrivals.Exponential(1.0 / m_c.rate)), &TimedRun::Arrive, this);
        NewRequest();
    }

    void Prefill()
    {
        for (uint32_t k = 0; k < m_c.initialConnections; ++k)
        {
            NewRequest();
        }
    }

    bool InBefore(double t) const { return t >= m_c.warmupS && t < m_c.atS; }

    void NewRequest()
    {
        EndDue(); // connection ends at this instant come first (lb-timed.h)
        m_r.requests++;
        const double now = Now();
        m_r.beforeRequests += InBefore(now);
        Request q;
        q.client = m_c.clients ? m_clients.UniformInt(m_c.clients) : m_clients.UniformInt(1u << 17);
        const uint64_t id = m_requests.size();
        m_requests.push_back(q);
        if (!m_c.frontendMaxconn || m_held < m_c.frontendMaxconn)
        {
            Accept(id);
        }
        else if (m_acceptQueue.size() < m_c.acceptQueue)
        {
            // the listener is paused: the handshake completes into the kernel's backlog
            IntegrateAcceptQueue(now);
            m_acceptQueue.push_back(id);
            m_r.acceptQueueMax = std::max<uint32_t>(m_r.acceptQueueMax, static_cast<uint32_t>(m_acceptQueue.size()));
            FirstQueued(m_requests[id]);
        }
        else
        {
            m_r.refusedFrontend++;
            m_r.beforeRefusedFrontend += InBefore(now);
            m_r.refusals.Add(0, now, 1.0, kAcceptQueueFull);
        }
    }

    /// The frontend takes request id (HAProxy accepts the stream; IPVS
    /// creates the table entry) and hands it to the backend.
    void Accept(uint64_t id)
    {
        m_held++;
        m_r.frontendHeldMax = std::max(m_r.frontendHeldMax, m_held);
        Assign(id);
    }

    /// An accepted request ends (its connection closed or cut, or a 503):
    /// its place in the frontend is free.
    void Leave()
    {
        m_held--;
        AcceptWaiting();
    }

    /// While below its limit the frontend takes the accept queue's head
    /// (HAProxy resumes the listener). Not reentrant: a request it accepts
    /// that ends at once (a 503) frees its place for the loop running.
    void AcceptWaiting()
    {
        if (m_accepting)
        {
            return;
        }
        m_accepting = true;
        while (!m_acceptQueue.empty() && m_held < m_c.frontendMaxconn)
        {
            IntegrateAcceptQueue(Now());
            const uint64_t id = m_acceptQueue.front();
            m_acceptQueue.pop_front();
            Accept(id);
        }
        m_accepting = false;
    }

    /// The accept queue's length since its last change, into the before window's integral.
    void IntegrateAcceptQueue(double now)
    {
        const double from = m_acceptLastChange;
        const double overlap = std::max(0.0, std::min(now, m_c.atS) - std::max(from, m_c.warmupS));
        m_r.beforeAcceptQueue += static_cast<double>(m_acceptQueue.size()) * overlap;
        m_acceptLastChange = now;
    }

    void FirstQueued(Request& q)
    {
        if (!q.waited)
        {
            q.waited = true;
            q.firstQueuedAt = Now();
            m_r.queued++;
            m_r.beforeQueued += InBefore(q.firstQueuedAt);
        }
    }

    dp_sched_key_t KeyOf(uint32_t client, std::string& data) const
    {
        dp_sched_key_t key{};
        if (m_request)
        {
            data = SchedKeyData(m_algo, client);
            key.data = data.data();
            key.data_len = static_cast<uint32_t>(data.size());
        }
        key.src_ip = 0xC6120000u + client; // 198.18.0.0/15 clients
        key.dst_ip = 0xC6130001u;
        key.src_port = static_cast<uint16_t>(1024 + client % 60000);
        key.dst_port = 80;
        key.proto = 6;
        return key;
    }

    /// assign_server_and_queue and srv_redispatch_connect for request id;
    /// followCookie false: a request pendconn_redistribute took out of a
    /// server's queue (SF_DIRECT and SF_ASSIGNED cleared: the balancer picks,
    /// its cookie is not read again).
    void Assign(uint64_t id, bool followCookie = true)
    {
        Request& q = m_requests[id];
        int32_t s = -1;
        q.direct = false;
        // The cookie the request carries: the trace's, or its client's last Set-Cookie.
        const int32_t named = !followCookie              ? -1
                              : !m_c.traceCookies.empty() ? m_c.traceCookies[id]
                              : !m_cookie.empty()        ? m_cookie[q.client]
                                                         : -1;
        if (named >= 0)
        {
            // A cookie naming a server that is not stopped (up or draining) is
            // followed; one naming a down or removed server is ignored.
            const uint32_t stored = static_cast<uint32_t>(named);
            const uint32_t st = State(stored);
            if (st == DP_SCHED_UP || st == DP_SCHED_DRAINING)
            {
                s = static_cast<int32_t>(stored);
                q.direct = true;
            }
        }
        while (true)
        {
            if (!q.direct)
            {
                std::string data;
                const dp_sched_key_t key = KeyOf(q.client, data);
                s = dp_sched_pick(m_pool, &key, static_cast<uint64_t>(Now() * 1000.0), nullptr);
                if (s < 0)
                {
                    if (AnyUsable())
                    {
                        Enqueue(id, kNone); // every usable server at its maxconn
                    }
                    else
                    {
                        m_r.refusedNoServer++;
                        Refused(kNoServer);
                    }
                    return;
                }
            }
            const uint32_t srv = static_cast<uint32_t>(s);
            if (!Full(srv))
            {
                Open(id, srv);
                return;
            }
            if (m_c.maxqueue[srv] == 0 || m_queue[srv].size() < m_c.maxqueue[srv])
            {
                Enqueue(id, srv);
                return;
            }
            // SRV_STATUS_FULL: only a cookie request may be redispatched.
            if (q.direct && m_c.redispatch)
            {
                q.direct = false;
                m_r.redispatchedFull++;
                continue;
            }
            m_r.refusedMaxqueue++;
            Refused(kMaxqueueFull);
            return;
        }
    }

    void Enqueue(uint64_t id, uint32_t server)
    {
        Request& q = m_requests[id];
        std::list<uint64_t>& l = server == kNone ? m_backend : m_queue[server];
        q.server = server;
        q.queueKeyMs = Simulator::Now().GetMilliSeconds();
        q.at = l.insert(l.end(), id);
        q.queued = true;
        FirstQueued(q);
        if (server == kNone)
        {
            m_r.backendQueueMax = std::max<uint32_t>(m_r.backendQueueMax, static_cast<uint32_t>(l.size()));
        }
        else
        {
            m_r.serverQueueMax = std::max<uint32_t>(m_r.serverQueueMax, static_cast<uint32_t>(l.size()));
        }
        if (m_c.timeoutQueueMs)
        {
            q.timeout = Simulator::Schedule(MilliSeconds(m_c.timeoutQueueMs), &TimedRun::QueueTimeout, this, id);
        }
    }

    void Unqueue(uint64_t id)
    {
        Request& q = m_requests[id];
        (q.server == kNone ? m_backend : m_queue[q.server]).erase(q.at);
        q.queued = false;
        q.timeout.Cancel();
        q.timeout = EventId(); // a table of millions of requests keeps no spent event each
    }

    void QueueTimeout(uint64_t id)
    {
        // Connection ends at this instant come first (lb-timed.h): a slot one
        // of them frees takes the request before its timeout is looked at
        // (back_handle_st_que: pendconn_dequeue before SF_CONN_EXP).
        EndDue();
        if (!m_requests[id].queued)
        {
            return;
        }
        Unqueue(id);
        m_r.queueTimeouts++;
        Refused(kQueueTimeout);
    }

    /// A 503 now, for an accepted request: counted in the window and the
    /// time bin it falls in; its place in the frontend is free.
    void Refused(Refusal why)
    {
        const double now = Now();
        m_r.refusals.Add(0, now, 1.0, why);
        Leave();
        if (now >= m_c.warmupS && now < m_c.atS)
        {
            m_r.before503PerS += 1;
        }
        else if (now >= m_c.atS + m_c.settleS && now < m_c.endS)
        {
            m_r.after503PerS += 1;
        }
    }

    void Open(uint64_t id, uint32_t s)
    {
        const double now = Now();
        Integrate(s, now);
        m_active[s]++;
        dp_sched_conn_opened(m_pool, s, nullptr);
        m_r.served++;
        if (now >= m_c.warmupS && now < m_c.atS)
        {
            m_r.beforeNewPerS[s] += 1;
        }
        else if (now >= m_c.atS + m_c.settleS && now < m_c.endS)
        {
            m_r.afterNewPerS[s] += 1;
        }
        if (m_acted && s == m_c.server && m_c.action == "drain")
        {
            m_r.drainingNew++;
            m_emptySince = -1;
        }
        const Request& q = m_requests[id];
        if (q.waited && q.firstQueuedAt >= m_c.warmupS)
        {
            // dequeued, or redistributed to a server with a free slot
            m_waitSumS += now - q.firstQueuedAt;
            m_r.queueWait.Add(now - q.firstQueuedAt);
        }
        if (!m_cookie.empty())
        {
            m_cookie[q.client] = static_cast<int32_t>(s); // Set-Cookie names the server that took it
        }
        const uint64_t conn = m_conns.size();
        m_conns.push_back({s, true});
        const double ms = !m_c.traceLifetimesMs.empty()    ? m_c.traceLifetimesMs[id]
                          : m_c.lifetime == "exponential" ? m_lifetimes.Exponential(m_c.lifetimeMeanMs)
                                                          : m_heavy.Draw(m_lifetimes);
        ScheduleClose(conn, MicroSeconds(static_cast<int64_t>(std::llround(ms * 1000.0))));
    }

    /// Connection conn ends after `lifetime`. The ends wait in a heap of
    /// their own with one ns-3 event for the earliest (DESIGN.md: events at
    /// the next time something changes): a table of millions of connections
    /// costs a heap entry each, not a pending event each in ns-3's map.
    /// Ends at the same instant are taken in the order they were scheduled.
    void ScheduleClose(uint64_t conn, Time lifetime)
    {
        const int64_t at = (Simulator::Now() + lifetime).GetTimeStep();
        m_closes.push({at, m_closeSeq++, conn});
        if (m_closing || (!m_closeEvent.IsExpired() && m_closeEventAt <= at))
        {
            return; // EndDue, running or pending, comes first and schedules what follows
        }
        m_closeEvent.Cancel();
        m_closeEventAt = at;
        m_closeEvent = Simulator::Schedule(lifetime, &TimedRun::EndDue, this);
    }

    /// Ends every connection due now, then schedules the next end. Run by
    /// the close event and first thing by every arrival and queue timeout,
    /// so that at one instant the ends come before them whenever the close
    /// event was last scheduled.
    void EndDue()
    {
        if (m_closing)
        {
            return; // already ending them, further up the stack
        }
        const int64_t now = Simulator::Now().GetTimeStep();
        m_closing = true;
        while (!m_closes.empty() && m_closes.top().at <= now)
        {
            const uint64_t conn = m_closes.top().conn;
            m_closes.pop();
            Close(conn);
        }
        m_closing = false;
        if (!m_closes.empty() && (m_closeEvent.IsExpired() || m_closeEventAt != m_closes.top().at))
        {
            m_closeEvent.Cancel();
            m_closeEventAt = m_closes.top().at;
            m_closeEvent = Simulator::Schedule(TimeStep(m_closeEventAt - now), &TimedRun::EndDue, this);
        }
    }

    void Close(uint64_t conn)
    {
        Connection& k = m_conns[conn];
        if (!k.open)
        {
            return; // cut by remove
        }
        k.open = false;
        const uint32_t s = k.server;
        Integrate(s, Now());
        m_active[s]--;
        dp_sched_conn_closed(m_pool, s, 0, nullptr);
        Dequeue(s);
        CheckDrained();
        Leave();
    }

    /// process_srv_queue / pendconn_process_next_strm: while s is below its
    /// maxconn, the oldest of its queue's head and the backend queue's head
    /// (the latter only while s takes new connections) gets s.
    void Dequeue(uint32_t s)
    {
        while (!m_c.maxconn[s] || m_active[s] < m_c.maxconn[s])
        {
            const bool usable = State(s) == DP_SCHED_UP && m_c.weights[s] > 0;
            const uint64_t* own = m_queue[s].empty() ? nullptr : &m_queue[s].front();
            const uint64_t* pool = usable && !m_backend.empty() ? &m_backend.front() : nullptr;
            if (!own && !pool)
            {
                return;
            }
            // pendconn_process_next_strm compares the two heads' keys, in
            // ms: a tie (queued within the same ms) goes to the server's own
            const uint64_t id =
                own && (!pool || m_requests[*own].queueKeyMs <= m_requests[*pool].queueKeyMs) ? *own : *pool;
            Unqueue(id);
            Open(id, s);
        }
    }

    /// The drained server is empty now: its drain ended here unless a
    /// persistent client brings it another connection later (Open resets it).
    void CheckDrained()
    {
        if (m_acted && m_c.action == "drain" && m_active[m_c.server] == 0 && m_queue[m_c.server].empty() &&
            m_emptySince < 0)
        {
            m_emptySince = Now();
        }
    }

    void Act()
    {
        const uint32_t d = m_c.server;
        const uint64_t now = static_cast<uint64_t>(Now() * 1000.0);
        EndDue(); // connection ends at this instant come first (lb-timed.h)
        m_acted = true;
        // The accept queue waits until the action is done: a 503 given to a
        // redistributed request frees a frontend place, but the requests
        // redistributed, older, are reassigned and the server's queue served
        // before the listener resumes.
        m_accepting = true;
        if (m_c.action == "drain")
        {
            dp_sched_set_state(m_pool, d, DP_SCHED_DRAINING, now, nullptr);
            // srv_update_status entering drain calls pendconn_redistribute
            // too (src/server.c, 2.6: "enters drain state")
            Redistribute(d);
            // what it still has to finish (the drain's closed form takes N0
            // as its connections): the requests redistributed are not its
            m_r.n0 = m_active[d] + static_cast<uint32_t>(m_queue[d].size());
        }
        else if (m_c.action == "remove")
        {
            m_r.n0 = m_active[d] + static_cast<uint32_t>(m_queue[d].size());
            dp_sched_set_state(m_pool, d, DP_SCHED_DISABLED, now, nullptr);
            Integrate(d, Now());
            for (Connection& k : m_conns)
            {
                if (k.open && k.server == d)
                {
                    k.open = false;
                    m_r.broken++;
                    m_r.refusals.Add(0, Now(), 1.0, kBroken);
                    m_held--; // the accept queue is served once the server's own queue was
                    dp_sched_conn_closed(m_pool, d, 0, nullptr);
                }
            }
            m_active[d] = 0;
            Redistribute(d);
            // Each cut stream frees its slot (stream_free, src/stream.c:
            // may_dequeue_tasks, process_srv_queue): the server's own queue
            // is served even out of the pool (pendconn_process_next_strm
            // takes its own queue whatever the server's state; only the
            // backend queue needs it usable).
            Dequeue(d);
        }
        else if (m_c.action == "add")
        {
            AddServer(m_c.servers);
            Dequeue(m_c.servers); // pendconn_grab_from_px
        }
        m_accepting = false;
        AcceptWaiting();
        CheckDrained(); // a cookie may have brought the drained server a request from the accept queue
    }

    /// pendconn_redistribute (src/queue.c), called by srv_update_status when
    /// server d enters maintenance or drain: with option redispatch the
    /// requests queued on d go back to the balancer; without, they stay.
    void Redistribute(uint32_t d)
    {
        if (!m_c.redispatch)
        {
            return;
        }
        const std::vector<uint64_t> waiting(m_queue[d].begin(), m_queue[d].end());
        for (uint64_t id : waiting)
        {
            Unqueue(id);
            Assign(id, false);
        }
    }

    void Sample()
    {
        EndDue(); // connection ends at this instant come first (lb-timed.h)
        m_r.samples.push_back(m_active[m_c.server]);
    }

    LbTimedConfig m_c;
    RandomStream m_arrivals, m_lifetimes, m_clients;
    FlowSizeDistribution m_heavy;
    uint32_t m_algo = 0;
    bool m_request = false;
    std::vector<uint8_t> m_poolMem;
    dp_sched_t* m_pool = nullptr;
    std::vector<uint32_t> m_active;
    std::vector<std::list<uint64_t>> m_queue;
    std::list<uint64_t> m_backend;
    std::vector<double> m_lastChange;
    std::vector<Request> m_requests;
    std::vector<Connection> m_conns;
    std::vector<int32_t> m_cookie;
    bool m_acted = false;
    double m_emptySince = -1; ///< drain: since when the drained server holds nothing (-1: it holds some)
    double m_waitSumS = 0;  ///< the waits in m_r.queueWait, summed exactly
    uint32_t m_held = 0;    ///< requests accepted and not ended (the frontend's count)
    std::deque<uint64_t> m_acceptQueue;
    double m_acceptLastChange = 0;
    bool m_accepting = false; ///< AcceptWaiting is running
    std::priority_queue<PendingClose, std::vector<PendingClose>, std::greater<PendingClose>> m_closes;
    uint64_t m_closeSeq = 0;
    EventId m_closeEvent;       ///< EndDue at m_closeEventAt
    int64_t m_closeEventAt = 0;
    bool m_closing = false;     ///< EndDue is running
    LbTimedResult m_r;
};

} // namespace

std::vector<std::string>
LbTimedConfig::KeyNames()
{
    return config::KeyNames(Keys());
}

LbTimedConfig
LbTimedConfig::FromKeys(const std::map<std::string, ConfigValue>& keys)
{
    LbTimedConfig c;
    config::ApplyKeys(Keys(), keys, c);
    const PerServerGiven& given = c.given;
    const uint32_t slots = c.Slots();
    c.weights = Expand("weights", given.weights, slots, 1, 0, DP_SCHED_MAX_WEIGHT);
    if (c.action == "add" && !given.weights.count(std::to_string(c.servers)))
    {
        c.weights[c.servers] = c.weights[0]; // the added server: the first one's weight
    }
    c.maxconn = Expand("maxconn", given.maxconn, slots, 0, 0, 2147483647.0);
    c.maxqueue = Expand("maxqueue", given.maxqueue, slots, 0, 0, 2147483647.0);
    if ((c.action == "drain" || c.action == "remove") && c.server >= c.servers)
    {
        Bad("server", "must be below servers");
    }
    if (!given.cookies.empty() && given.arrivals.empty())
    {
        Bad("cookies", "the cookies requests carry belong to a trace (arrivals_s, lifetimes_ms)");
    }
    if (given.arrivals.size() != given.lifetimes.size())
    {
        Bad("lifetimes_ms", "a trace gives one lifetime per arrival (arrivals_s has " +
                                std::to_string(given.arrivals.size()) + ")");
    }
    if (!given.arrivals.empty() && c.initialConnections > 0)
    {
        // the trace gives every request its arrival and lifetime: requests
        // beyond it would have neither
        Bad("initial_connections", "a trace (arrivals_s, lifetimes_ms) gives every request; it takes no initial "
                                   "connections (put them in the trace at time 0)");
    }
    if (!given.arrivals.empty())
    {
        const auto n = static_cast<uint32_t>(given.arrivals.size());
        const auto fill = [n](const char* key, const std::map<std::string, double>& given, std::vector<double>& out) {
            out.assign(n, 0.0);
            for (const auto& [index, value] : given)
            {
                uint32_t i = 0;
                if (!IndexBelow(index, n, i) || !(value >= 0) || !std::isfinite(value))
                {
                    Bad(key, "'" + index + "': indices 0..n-1, each value a finite number >= 0");
                }
                out[i] = value;
            }
        };
        // n distinct canonical indices below n: every request has its entry
        fill("arrivals_s", given.arrivals, c.traceArrivalsS);
        fill("lifetimes_ms", given.lifetimes, c.traceLifetimesMs);
        if (!given.cookies.empty())
        {
            c.traceCookies.assign(n, -1);
            for (const auto& [index, value] : given.cookies)
            {
                uint32_t i = 0;
                if (!IndexBelow(index, n, i) || value != std::floor(value) || value < -1 || value >= slots)
                {
                    Bad("cookies", "'" + index + "': a request index of the trace, naming a server index (-1: none)");
                }
                c.traceCookies[i] = static_cast<int32_t>(value);
            }
        }
        if (!std::is_sorted(c.traceArrivalsS.begin(), c.traceArrivalsS.end()) || c.traceArrivalsS.back() >= c.endS)
        {
            Bad("arrivals_s", "must be in increasing order, before end_s");
        }
    }
    if (c.lifetime != "exponential")
    {
        try
        {
            HeavyLifetime(c).Validate();
        }
        catch (const std::invalid_argument& e)
        {
            const std::string what = e.what();
            Bad(c.lifetime == "pareto" ? (what.find("alpha") != std::string::npos ? "pareto_alpha" : "pareto_min_ms")
                                       : (what.find("sigma") != std::string::npos ? "lognormal_sigma" : "lognormal_mu"),
                what.substr(what.find(' ') + 1));
        }
    }
    // action none has no after window: it may be empty (the before window runs to end_s)
    if (!(c.warmupS <= c.atS && (c.atS + c.settleS < c.endS || (c.action == "none" && c.atS + c.settleS == c.endS))))
    {
        Bad("at_s", "needs warmup_s <= at_s and at_s + settle_s < end_s (<= with action none)");
    }
    if (c.acceptQueue > 0 && c.frontendMaxconn == 0)
    {
        Bad("accept_queue", "an accept queue holds what a frontend limit (frontend_maxconn) turns away");
    }
    if (c.persistence == "cookie" && c.clients == 0)
    {
        Bad("clients", "cookie persistence needs a client count (each client keeps its cookie)");
    }
    if (c.sampleS > 0 && (c.endS - c.atS) / c.sampleS > 1e6)
    {
        Bad("sample_s", "at most 1e6 samples");
    }
    bool any = false;
    for (uint32_t i = 0; i < c.servers; ++i)
    {
        any = any || c.weights[i] > 0;
    }
    if (!any)
    {
        Bad("weights", "every server has weight 0");
    }
    return c;
}

LbTimedResult
RunLbTimed(const LbTimedConfig& config)
{
    TimedRun run(config);
    return run.Run();
}

} // namespace routertwin
