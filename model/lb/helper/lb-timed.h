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
//           a draining server: it is not STOPPED);
//   remove  the server leaves the pool (HAProxy maint / IPVS -d, dp_sched
//           DISABLED) and its established connections are cut (`broken`);
//           requests queued on it go back to the scheduler with `redispatch`
//           (HAProxy pendconn_redistribute, src/queue.c: only with option
//           redispatch) and otherwise wait there until timeout queue;
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
//   - a request sent to a full server by its cookie, or by a map-based hash
//     that returns a full server (source, uri, hdr), waits in that server's
//     queue, unless the queue holds maxqueue (> 0) requests: then a
//     cookie request is sent to the scheduler with `redispatch`
//     (SF_DIRECT cleared) and otherwise gets a 503;
//   - when a connection ends, its server takes the oldest of its own queue's
//     head and the backend queue's head (ties to its own), the backend queue
//     only while the server takes new connections (not draining, not down:
//     srv_currently_usable), repeatedly while below maxconn;
//   - a request still queued timeout_queue_ms after it was queued gets a 503
//     (timeout queue; HAProxy's default is timeout connect, the Python side
//     applies it; 0 = no timeout, as HAProxy's tick_add_ifset).
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
// and the hash keys of SchedHashOptions (lb-remap.h).
#ifndef ROUTERTWIN_LB_TIMED_H
#define ROUTERTWIN_LB_TIMED_H

#include "lb-remap.h" // ConfigValue, SchedHashOptions

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
    uint64_t queued = 0;          ///< requests that waited in a queue (server or backend)
    uint64_t queueTimeouts = 0;   ///< 503: still queued after timeout queue
    uint64_t refusedMaxqueue = 0; ///< 503: the server's queue held maxqueue (no redispatch)
    uint64_t refusedNoServer = 0; ///< 503: no usable server
    uint64_t redispatchedFull = 0;///< cookie requests sent elsewhere because the server's queue was full
    uint64_t broken = 0;          ///< connections cut by remove
    double queueWaitMeanMs = 0;   ///< mean wait of the queued requests that got a server
    uint32_t backendQueueMax = 0; ///< longest backend queue
    uint32_t serverQueueMax = 0;  ///< longest server queue
    /// Per server (servers, +1 with add): time-averaged active connections and
    /// new connections per second in the before and after windows.
    std::vector<double> beforeActive, afterActive, beforeNewPerS, afterNewPerS;
    double before503PerS = 0, after503PerS = 0; ///< 503s per second in the before and after windows
    uint32_t n0 = 0;              ///< drain/remove: connections (and queued requests) on the server at at_s
    /// drain: at_s until its last connection ended and its queue emptied, for
    /// good (no connection later in the run); -1: it still holds some at end_s
    double drainS = -1;
    uint64_t drainingNew = 0;     ///< drain: connections it took after at_s (cookies, its queue)
    std::vector<uint32_t> samples;///< sample_s > 0: its connections at at_s + k sample_s
};

LbTimedResult RunLbTimed(const LbTimedConfig& config);

} // namespace routertwin

#endif
