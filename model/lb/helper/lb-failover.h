// LbFailover: what users ask of a balancer when a server or a balancer
// dies: how long until the health checks take the server out of the pool,
// how many requests fail meanwhile with and without HAProxy's "option
// redispatch" and "retries", and how long a backup balancer takes to take
// over (active/backup) or what half of the traffic loses (active/active).
//
// Servers: LbBackend models probed by an LbHealthChecker (dp_health, HAProxy's
// rules) that moves them in and out of a dp_sched pool. Requests arrive at a
// constant rate, each one a connection attempt to the server the pool
// picks (timed events, no packets):
//   - to a live server: served;
//   - to a dead one that refuses: fails at once; a silent one: fails after
//     connect_timeout_ms;
//   - a failed attempt is retried up to `retries` times (HAProxy "retries"),
//     as HAProxy 2.6.12 does it (src/backend.c back_handle_st_cer and
//     stream_choose_redispatch in include/haproxy/stream.h, 2.6 branch with
//     the 2.6.3 and 2.6.7 fixes): after the k-th failure (k = 1..retries),
//     with `redispatch` the retry goes back to the scheduler, avoiding the
//     server that failed (dp_sched_pick_avoid: assign_server passes it as
//     the previous server), when that server is already DOWN, or k is
//     one `redispatch_after` names ("option redispatch <interval>": P > 0,
//     every k that P divides; N < 0, every k that retries + 1 + N divides,
//     so -1, the default, is the last retry; 0, none), or the request was
//     not sent by persistence
//     (cookie or stick entry) and more than one active server is up and
//     the algorithm is not a hash (roundrobin, static-rr, leastconn, first,
//     random: every retry); otherwise it goes to the same server again.
//     A retry on the same server after a refusal waits the turn-around
//     min(timeout connect, 1 s); a redispatch with more than one active
//     server and any retry after a connect timeout go at once;
//   - a request whose attempts all fail is failed (HAProxy answers 503).
// A server without `check` (checked = 0) is never probed: HAProxy keeps it
// up whatever happens to it, so a request sent to it dead fails unless a
// redispatch takes it elsewhere.
// Each served request is a connection opened and closed on its server (no
// service time), and an attempt on a dead server holds one until it fails,
// so leastconn rotates as HAProxy's does.
// Balancer redundancy is VRRP's timer arithmetic (RFC 5798 6.1, 6.4.2): the
// master advertises every advert_interval_ms; the backup declares it dead
// Master_Down_Interval = 3 * Advertisement_Interval + Skew_Time after the
// last advertisement, Skew_Time = ((256 - priority) * Advertisement_Interval)
// / 256, and takes the address over. Requests arriving at the dead
// balancer before that are lost: all of them in active/backup, the half
// that the client hash sends to it in active/active.
//
// The configuration arrives from Python as a dict
// (routertwin._core.run_lb_failover). Keys (units, default):
//   servers            int, 3            pool size
//   weights            per server, 1     HAProxy weight (1..256)
//   scheduler          str, "roundrobin" dp_sched algorithm name
//   check              str, "tcp"        ping | tcp | http | content
//   inter_ms           per server, 2000  HAProxy inter (ms)
//   fastinter_ms       per server, 0     HAProxy fastinter (0 = inter)
//   downinter_ms       per server, 0     HAProxy downinter (0 = inter)
//   rise               per server, 2     HAProxy rise
//   fall               per server, 3     HAProxy fall
//   checked            per server, 1     1: the server has `check`; 0: never probed, always up
//   check_timeout_ms   int ms, 0         HAProxy timeout check (0 = not set): when set, a probe whose
//                                        connection is not answered fails after min(timeout connect,
//                                        inter), else after inter (configuration.txt "timeout check")
//     "per server": an integer for every server, or a string of one integer per server in pool order
//     ("3,2,1")
//   kill_server        int, 0            the server that dies
//   kill_at_s          float s, 10       when it dies; at or after duration_s: no server dies
//   kill_mode          str, "refuse"     refuse (process gone) | silent (host gone)
//   revive_at_s        float s, 0        when it comes back; 0 = never
//   request_rate       float 1/s, 100    requests per second (constant)
//   duration_s         float s, 30       requests offered from 0 to this time
//   timeline_bins      int, 60           bins of the failure timeline over [0, duration_s)
//   retries            int, 3            HAProxy retries
//   redispatch         bool, false       HAProxy option redispatch
//   redispatch_after   int, -1           its <interval> (configuration.txt "option redispatch"; HAProxy's
//                                        redispatch_after): P > 0 every P-th retry, N < 0 the N-th retry
//                                        before the last, 0 none of those (a DOWN server's and an
//                                        immediate round-robin redispatch still happen); -(retries + 1)
//                                        is refused (HAProxy would take the retry count modulo 0)
//   connect_timeout_ms int ms, 5000      HAProxy timeout connect (assumption when the configuration
//                                        has none: HAProxy then waits as long as the kernel's SYN retries)
//   redundancy         str, "none"       none | active_backup | active_active
//   advert_interval_ms int ms, 1000      VRRP advertisement interval
//   backup_priority    int, 100          VRRP priority of the backup (1..254)
//   balancer_fail_at_s float s, 0        when the (a) master balancer dies; 0 = never
//   persistence        str, "none"       none | stick_src (HAProxy stick-table type ip + stick on src,
//                                        dp_persist) | cookie (HAProxy cookie insert: the client keeps it)
//   clients            int, 0            distinct client addresses the requests cycle over; 0 = one per
//                                        request (65536 in turn)
//   client_ip_base     int, 0xC6120000   client c's source address is this + c (host order; 198.18.0.0)
//   stick_size         int, 1024         stick_src: table entries
//   stick_expire_ms    int ms, 0         stick_src: HAProxy expire; 0 = never
//   hash_function, hash_avalanche, uri_whole, uri_path_only, uri_len, uri_depth, hdr_domain_only:
//                                        a uri/hdr scheduler's options (lb-remap.h SchedHashOptions);
//                                        request k then carries SchedKeyData of its client
// Persistence: a client whose stored server is usable (not DOWN) goes
// there; otherwise the scheduler picks and the new server is stored (HAProxy
// ignores a stick entry or cookie naming a STOPPED server unless "option
// persist", and its store rules overwrite an existing entry's server id with
// the server that took the request: process_sticking_rules and
// process_store_rules in stream.c). A client whose server changes is
// "moved".
//
// Distributions (issue 15): every failed request (a 503 after its
// attempts, or one lost at a dead balancer) by the time it failed, in
// timeline_bins bins over [0, duration_s) (a LossTimeline of one row, by
// reason: failed, balancer_dead; failures answered after duration_s, connect
// timeouts of the last requests, count in the last bin), so the detection
// window shows as the bins that fail; and each served request's delay, from
// its arrival to the attempt that served it (failed attempts' connect
// timeouts and turn-arounds), in a LatencyHistogram. One run is one death:
// its detection time is one number (the closed-form window beside it).
#ifndef ROUTERTWIN_LB_FAILOVER_H
#define ROUTERTWIN_LB_FAILOVER_H

#include "config-keys.h"
#include "latency-histogram.h" // LatencyHistogram, LossTimeline
#include "lb-remap.h" // SchedHashOptions

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct LbFailoverConfig
{
    uint32_t servers = 3;
    /// Per-server values: one entry for every server, or one per server.
    std::vector<uint32_t> weights{1};
    std::string scheduler = "roundrobin";
    std::string check = "tcp";
    std::vector<uint32_t> interMs{2000}, fastInterMs{0}, downInterMs{0}, rise{2}, fall{3};
    std::vector<uint32_t> checked{1};
    uint32_t checkTimeoutMs = 0;
    uint32_t killServer = 0;
    double killAtS = 10;
    std::string killMode = "refuse";
    double reviveAtS = 0;
    double requestRate = 100;
    double durationS = 30;
    uint32_t timelineBins = 60;
    uint32_t retries = 3;
    bool redispatch = false;
    int32_t redispatchAfter = -1;
    uint32_t connectTimeoutMs = 5000;
    std::string redundancy = "none";
    uint32_t advertIntervalMs = 1000;
    uint32_t backupPriority = 100;
    double balancerFailAtS = 0;
    std::string persistence = "none";
    uint32_t clients = 0;
    uint32_t clientIpBase = 0xC6120000u;
    uint32_t stickSize = 1024;
    uint32_t stickExpireMs = 0;
    SchedHashOptions hash; ///< hash_function, hash_avalanche, uri_*, hdr_domain_only (lb-remap.h)

    /// Throws std::invalid_argument "key 'K': ..." for an unknown key or bad value.
    static LbFailoverConfig FromKeys(const std::map<std::string, ConfigValue>& keys);
    static std::vector<std::string> KeyNames();
    /// Server i's value of a per-server list.
    static uint32_t Of(const std::vector<uint32_t>& v, uint32_t i) { return v.size() == 1 ? v[0] : v.at(i); }
};

struct LbFailoverResult
{
    double downAtS = -1;          ///< when the checks took the killed server out (-1: never)
    double upAtS = -1;            ///< when they put it back after the revival (-1: never)
    double detectionMs = -1;      ///< downAtS - kill time, in ms
    double windowMinMs = 0;       ///< closed-form detection window (dp_health_detection_window;
    double windowMaxMs = 0;       ///< -1 when the killed server is not checked: never)
    uint64_t requests = 0;        ///< requests offered
    uint64_t served = 0;          ///< requests a live server took (possibly after retries)
    uint64_t failed = 0;          ///< requests whose every attempt failed
    uint64_t retried = 0;         ///< requests that needed at least one retry
    uint64_t redispatched = 0;    ///< requests a retry sent back to the scheduler (avoiding the failed server)
    uint64_t toDeadServer = 0;    ///< requests whose first attempt went to the dead server
    double maxDelayMs = 0;        ///< longest arrival-to-serving time of a served request (connect
                                  ///< timeouts and turn-arounds of its failed attempts)
    double failoverMs = -1;       ///< balancer redundancy: master death to takeover (-1: none)
    double masterDownIntervalMs = 0; ///< RFC 5798 Master_Down_Interval of the backup
    uint64_t lostInFailover = 0;  ///< requests that reached a dead balancer
    uint64_t stickyMoved = 0;     ///< requests of a sticky client sent to another server than its stored one
    uint64_t stickyClientsMoved = 0; ///< distinct clients moved at least once
    LossTimeline failures;        ///< failed and lost requests over [0, duration_s), by reason
    LatencyHistogram servedDelay; ///< served requests' arrival-to-serving delay (seconds)
};

LbFailoverResult RunLbFailover(const LbFailoverConfig& config);

} // namespace routertwin

#endif
