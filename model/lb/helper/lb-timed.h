// LbTimed: a pool under a connection workload, timed, while one of its
// servers is drained, removed or a server is added: how long the drain
// takes, what the others carry before and after, and what maxconn and the
// queues do (queued, 503s). The remap what-if (lb-remap.h) counts which
// connections move; this one gives them lifetimes.
//
// Workload: connections arrive as a Poisson process of `rate` per second
// (from 0 to end_s), each held for a lifetime drawn from an exponential,
// Pareto or lognormal distribution (milliseconds; the lognormal and Pareto
// draws are FlowSizeDistribution's, traffic-profile.h), on the server the
// pool's dp_sched scheduler picks (dp_sched_conn_opened / _closed, so
// leastconn sees them). With persistence "cookie" the arrivals come from
// `clients` clients drawn uniformly, each carrying the cookie of the server
// that last served it (HAProxy cookie insert).
//
// At at_s the action happens:
//   drain   HAProxy "set server <b>/<s> state drain" (weight 0; configuration
//           manual 9.3, management.txt "set server"), IPVS weight 0
//           (dp_sched DRAINING): no new connection from the scheduler, the
//           established ones run their course, and a client whose cookie
//           names the server still goes there (HAProxy honours persistence to
//           a draining server: it is not STOPPED); requests queued on it go
//           back to the scheduler with `redispatch` (srv_update_status calls
//           pendconn_redistribute on entering drain, src/server.c) and
//           otherwise stay in its queue, served as its connections end;
//   remove  the server leaves the pool (HAProxy "set server <b>/<s> state
//           maint" with "shutdown sessions server <b>/<s>": maint alone
//           keeps established connections; IPVS -d, dp_sched DISABLED) and
//           its established connections are cut (`broken`); requests queued
//           on it go back to the scheduler with `redispatch` (HAProxy
//           pendconn_redistribute, src/queue.c: only with option redispatch)
//           and otherwise stay in its queue, and the slots the cut streams
//           free serve them (stream_free's process_srv_queue: a server's own
//           queue is served whatever its state), so they still reach it;
//   add     server `servers` joins with its own weight/maxconn and at once
//           takes requests from the backend queue up to its maxconn
//           (pendconn_grab_from_px);
//   none    nothing: the steady state.
//
// maxconn and queues follow HAProxy 2.6 (src/backend.c assign_server_and_queue
// and srv_redispatch_connect, src/queue.c pendconn_process_next_strm,
// configuration manual 5.2 "maxconn", "maxqueue", 4.2 "timeout queue"):
//   - the scheduler skips a server at its maxconn (dp_sched); when every
//     usable server is at its maxconn the request waits in the backend
//     queue (no limit); when none is usable it gets a 503 at once;
//   - a request sent to a full server by its cookie, or by a hash that
//     returns a full server (source, uri, hdr; map-based, and consistent as
//     well: 2.6's chash_get_server_hash skips a full server only with
//     hash-balance-factor, src/lb_chash.c), waits in that server's
//     queue, unless the queue holds maxqueue (> 0) requests: then a
//     cookie request is sent to the scheduler with `redispatch`
//     (SF_DIRECT cleared) and otherwise gets a 503;
//   - when a connection ends, its server takes the oldest of its own queue's
//     head and the backend queue's head, by the ms each was queued in (ties,
//     within one ms, to its own: HAProxy's queue key is now_ms), the backend queue
//     only while the server takes new connections (not draining, not down:
//     srv_currently_usable), repeatedly while below maxconn;
//   - a request still queued timeout_queue_ms after it was queued gets a 503
//     (timeout queue; HAProxy's default is timeout connect, the Python side
//     applies it; 0 = no timeout, as HAProxy's tick_add_ifset).
//   - at one instant the connections ending at it end first (in the order
//     they opened), before the arrivals, queue timeouts, the action and the
//     samples falling on it, whatever was scheduled when: a slot freed at
//     the instant a queued request's timeout expires serves it (HAProxy's
//     back_handle_st_que takes a request pendconn_dequeue already took out
//     of the queue before it looks at the expired timeout), and an arrival
//     at the instant a connection ends finds its slot free.
//
// In front of all that, a frontend limit (frontend_maxconn > 0): at most
// that many requests are accepted at once, from their accept until they end
// (open on a server, or waiting in a server or backend queue: HAProxy's
// feconn against the frontend's maxconn, else global maxconn; IPVS: the
// entries its connection table has memory for). At the limit HAProxy stops
// accepting (limit_listener) and the kernel's accept queue of the listener
// holds up to accept_queue completed handshakes (its backlog), taken in
// arrival order as accepted requests end; an arrival that finds it full is
// refused (the kernel drops the handshake, or resets it with
// tcp_abort_on_overflow=1: no 503, the client never reached HAProxy).
// IPVS has no such queue (accept_queue 0: a new entry that finds the table
// full is not created). With one server of unlimited maxconn this is
// M/M/c/(c+K) for exponential lifetimes, c = frontend_maxconn, K =
// accept_queue (Erlang's loss system for K = 0).
//
// Distributions (issue 15): the wait of every queued request that got a
// server, from its first queueing (accept queue, server or backend queue)
// to its server, in a Boost.Histogram (LatencyHistogram), for the requests
// first queued at or after warmup_s (the run's start from empty left out);
// and every refusal and cut connection by the time it happened, in
// timeline_bins bins over [0, end_s) (LossTimeline, one row, a reason each:
// queue_timeout, maxqueue_full, no_server (the three 503s),
// accept_queue_full, broken).
//
// Keys (routertwin._core.lb_timed; units, default):
//   scheduler         str, "roundrobin"  dp_sched algorithm name
//   servers           int, 4             servers at the start (all up)
//   weights           {"i": w}, 1 each   weight of server i (i = servers: the added one, default server 0's)
//   maxconn           {"i": n}, 0 each   HAProxy maxconn (0 = unlimited)
//   maxqueue          {"i": n}, 0 each   HAProxy maxqueue (0 = unlimited)
//   action            str, "drain"       none | drain | remove | add
//   server            int, 0             the server drained or removed
//   rate              float 1/s, 100     connection arrivals (Poisson)
//   lifetime          str, "exponential" exponential | pareto | lognormal
//   lifetime_mean_ms  float, 1000        exponential: the mean
//   pareto_alpha      float, 2.5         pareto: P(L > x) = (xm / x)^alpha, alpha > 1
//   pareto_min_ms     float, 600         pareto: xm (>= 1 ms)
//   lognormal_mu      float, 6.5         lognormal: ln(L / 1 ms) ~ N(mu, sigma^2), mu in 0..20
//   lognormal_sigma   float, 0.8         (0, 5]
//   warmup_s          float, 30          the "before" window is [warmup_s, at_s)
//   at_s              float, 60          when the action happens
//   settle_s          float, 30          the "after" window is [at_s + settle_s, end_s)
//   end_s             float, 120         arrivals stop; the run ends
//   sample_s          float, 0           > 0: the drained/removed server's connections every sample_s from at_s
//   timeout_queue_ms  int, 0             HAProxy timeout queue (0 = none)
//   redispatch        bool, false        HAProxy option redispatch
//   persistence       str, "none"        none | cookie
//   clients           int, 0             cookie: distinct clients (0 = a new address per connection)
//   seed              int, 1             arrivals, lifetimes, clients
//   arrivals_s        {"k": s}, none     a trace instead: request k arrives at this time (increasing,
//   lifetimes_ms      {"k": ms}, none    before end_s) and holds its connection this long (the live
//                                        lab's workload replayed; rate and lifetime are then unused)
//   cookies           {"k": i}, none     with a trace: request k carries a cookie naming server i (-1: none)
//   frontend_maxconn  int, 0             requests accepted at once (0 = no frontend limit)
//   accept_queue      int, 0             with frontend_maxconn: the listener's accept queue (backlog)
//   initial_connections int, 0           requests arriving at time 0, before the Poisson stream (a
//                                        large table starts near its expected occupancy, not empty;
//                                        not with a trace, which gives every request)
//   timeline_bins     int, 60            bins of the refusal timeline over [0, end_s)
// and the hash keys of SchedHashOptions (lb-remap.h).
#ifndef ROUTERTWIN_LB_TIMED_H
#define ROUTERTWIN_LB_TIMED_H

#include "latency-histogram.h" // LatencyHistogram, LossTimeline
#include "lb-remap.h"          // ConfigValue, SchedHashOptions

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

/// The per-server maps as given ({"i": value}), before FromKeys expands them.
struct PerServerGiven
{
    std::map<std::string, double> weights, maxconn, maxqueue, arrivals, lifetimes, cookies;
};

struct LbTimedConfig
{
    PerServerGiven given;
    std::string scheduler = "roundrobin";
    uint32_t servers = 4;
    std::vector<uint32_t> weights, maxconn, maxqueue; ///< servers (+1 with action add) entries
    SchedHashOptions hash;
    std::string action = "drain";
    uint32_t server = 0;
    double rate = 100;
    std::string lifetime = "exponential";
    double lifetimeMeanMs = 1000;
    double paretoAlpha = 2.5, paretoMinMs = 600;
    double lognormalMu = 6.5, lognormalSigma = 0.8;
    double warmupS = 30, atS = 60, settleS = 30, endS = 120, sampleS = 0;
    uint32_t timeoutQueueMs = 0;
    bool redispatch = false;
    std::string persistence = "none";
    uint32_t clients = 0;
    uint64_t seed = 1;
    /// A trace instead of the Poisson arrivals and drawn lifetimes: request k
    /// arrives at traceArrivalsS[k] and holds its connection traceLifetimesMs[k]
    std::vector<double> traceArrivalsS, traceLifetimesMs;
    std::vector<int32_t> traceCookies; ///< the server request k's cookie names (-1: none); empty: no trace cookies
    uint32_t frontendMaxconn = 0;      ///< requests accepted at once (0: no frontend limit)
    uint32_t acceptQueue = 0;          ///< the listener's accept queue beyond frontendMaxconn
    uint32_t initialConnections = 0;   ///< requests arriving at time 0
    uint32_t timelineBins = 60;        ///< bins of the refusal timeline over [0, end_s)

    /// Throws std::invalid_argument "key 'K': ..." for an unknown key or bad value.
    static LbTimedConfig FromKeys(const std::map<std::string, ConfigValue>& keys);
    static std::vector<std::string> KeyNames();
    /// Servers that ever exist (servers, +1 with action add).
    uint32_t Slots() const { return servers + (action == "add" ? 1 : 0); }
};

struct LbTimedResult
{
    uint64_t requests = 0;        ///< connection requests that arrived
    uint64_t served = 0;          ///< connections opened on a server (at once or after queueing)
    uint64_t queued = 0;          ///< requests that waited in a queue (accept, server or backend)
    uint64_t queueTimeouts = 0;   ///< 503: still queued after timeout queue
    uint64_t refusedMaxqueue = 0; ///< 503: the server's queue held maxqueue (no redispatch)
    uint64_t refusedNoServer = 0; ///< 503: no usable server
    uint64_t redispatchedFull = 0;///< cookie requests sent elsewhere because the server's queue was full
    uint64_t broken = 0;          ///< connections cut by remove
    uint64_t refusedFrontend = 0; ///< refused: the frontend at its limit and its accept queue full (no 503)
    /// mean wait of the queued requests that got a server, from their first
    /// queueing, of those first queued at or after warmup_s (queueWait's mean)
    double queueWaitMeanMs = 0;
    LatencyHistogram queueWait;   ///< those waits (seconds)
    LossTimeline refusals;        ///< refusals and cut connections over [0, end_s), by reason
    uint32_t backendQueueMax = 0; ///< longest backend queue
    uint32_t serverQueueMax = 0;  ///< longest server queue
    /// Per server (servers, +1 with add): time-averaged active connections and
    /// new connections per second in the before and after windows.
    std::vector<double> beforeActive, afterActive, beforeNewPerS, afterNewPerS;
    double before503PerS = 0, after503PerS = 0; ///< 503s per second in the before and after windows
    /// In the before window [warmup_s, at_s): requests that arrived, those
    /// refused at the frontend, those first queued (served or not by end_s),
    /// and the time-averaged accept queue length
    uint64_t beforeRequests = 0, beforeRefusedFrontend = 0, beforeQueued = 0;
    double beforeAcceptQueue = 0;
    uint32_t frontendHeldMax = 0; ///< most requests accepted at once
    uint32_t acceptQueueMax = 0;  ///< longest accept queue
    /// drain/remove: connections (and queued requests) on the server at at_s;
    /// drain: after the queued ones left with redispatch
    uint32_t n0 = 0;
    /// drain: at_s until its last connection ended and its queue emptied, for
    /// good (no connection later in the run); -1: it still holds some at end_s
    double drainS = -1;
    uint64_t drainingNew = 0;     ///< drain: connections it took after at_s (cookies, its queue)
    std::vector<uint32_t> samples;///< sample_s > 0: its connections at at_s + k sample_s
};

LbTimedResult RunLbTimed(const LbTimedConfig& config);

} // namespace routertwin

#endif
