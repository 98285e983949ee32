// LbEcmp: N instances of one balancer behind a router's ECMP route to the
// VIP; one instance fails, or one is added. Which established connections
// break, with per-instance session tables only, with shared (synced)
// session state, and with Maglev in every instance?
//
// The router. The ECMP group's members are the instances, in order; each
// connection's member is chosen from a 31-bit flow hash, as Linux does
// (fib_multipath_hash() >> 1; net/ipv4/nexthop.c):
//   hash-threshold  RFC 2992 section 2.2, Linux nh_hthr_group_rebalance():
//                   member i of n live ones owns the hashes up to
//                   DIV_ROUND_CLOSEST((i + 1) << 31, n) - 1 (equal weights;
//                   `instance_weights` below); the first member
//                   whose bound is >= the hash takes it. A change of n moves
//                   every region's edge.
//   resilient       Linux `nexthop group ... type resilient` (nexthop.c
//                   nh_res_group_rebalance / nh_res_table_upkeep /
//                   nh_res_bucket_should_migrate), as switch ASICs do it: a
//                   table of `buckets` buckets, a flow's bucket is hash %
//                   buckets. Each member wants DIV_ROUND_CLOSEST(buckets x
//                   (i + 1), n) - (the previous bound) buckets; buckets of a
//                   removed member are migrated at once, buckets of an
//                   overweight member only when idle (Linux's default:
//                   idle_timer 120 s, unbalanced_timer 0 = never force) or,
//                   with rebalance "forced", at once (the unbalanced timer
//                   expired). A bucket goes to the head of the underweight
//                   list, which nh_res_group_rebalance() builds with
//                   list_add (so the last underweight member in group order
//                   comes first). A bucket is busy here when an established
//                   connection hashes to it.
// The hash is the C core's: dp_flow_hash (MurmurHash3 steps over field
// values, dp_murmur.h) of the connection's 5-tuple (hash "l4", Linux
// fib_multipath_hash_policy 1) or of its addresses only, ports and protocol
// zero (hash "l3", policy 0, Linux's default). The router's own hash seed
// (Linux: a random per boot) is XORed into the source address word, so the
// router's choice is independent of the instances' own dp_flow_hash uses
// (session shards, Maglev's 5-tuple hash).
//
// The instances. Each runs the twin's balancer pieces: its own dp_sess
// session table (one shard) and its own dp_sched pool of the balancer's
// servers (same weights, same server identities: an IPVS or HAProxy config
// deployed N times). `connections` clients (198.18.0.0/15 -> VIP 10.0.0.1:80,
// TCP) connect before the change, each to the instance ECMP gives it, which
// picks a server (dp_sched_pick, counted with dp_sched_conn_opened) and opens
// a session. After the change, each connection's next (mid-flow) packet goes
// where ECMP sends it now; these packets arrive in a seeded random order, not
// the order the connections opened in. Three deployments are run on the same connections:
//   local    per-instance tables only. A hit on the instance's own table
//            keeps the connection. A miss (another instance, or a new one):
//            IPVS by default does not schedule a TCP packet without SYN
//            (ip_vs_proto_tcp.c tcp_conn_schedule: only th->syn, unless the
//            sysctl sloppy_tcp is set): the connection breaks
//            (brokenLocal). With sloppy_tcp = 1, and as Katran does for
//            every packet its LRU misses (balancer_kern.c: connection
//            table miss -> get_packet_dst), the instance schedules the
//            packet: the connection survives only if its scheduler, with
//            its own state, picks the same server (brokenLocalSloppy).
//   shared   session sync: every instance sees every connection (IPVS's
//            sync daemon, ip_vs_sync.c; assumed complete: a connection is
//            synced before the change). A moved connection is found and
//            keeps its server.
//   maglev   every instance schedules with Maglev (dp_sched "maglev", the
//            pool's weights) and, like Katran, schedules mid-flow packets it
//            has no state for: a moved connection lands on the server the
//            same Maglev table gives, the same one while the server set is
//            unchanged.
// All of that holds for balancers that forward packets (IPVS DR and
// tunnel, Katran): the server holds the TCP connection. A proxy (HAProxy)
// terminates the client's TCP connection itself, and full NAT ties the
// server side to the instance's own local address: a connection moved to
// another instance breaks whatever that instance knows (forwarding "proxy"
// or "fullnat"), in every deployment.
//
// Keys (default), from Python as a dict (routertwin._core.lb_ecmp):
//   scheduler    str, "roundrobin"  the pool's dp_sched algorithm
//   servers      int, 4             servers when no `weights`
//   weights      {"i": w}           the pool's weights (servers = entries)
//   instances    int, 4             N instances before the change, 1..256 (memory: a Maglev
//                                   table per instance)
//   action       str, "fail"        "fail": instance `instance` fails (N >= 2);
//                                   "add": instance N joins (after the others)
//   instance     int, 0             the instance that fails
//   ecmp         str, "hash-threshold" | "resilient"
//   instance_weights {"i": w}       the group members' weights, 1..256 (ip nexthop add id N
//                                   group 1,W1/2,W2; Linux keeps w - 1 in a u8), one per
//                                   instance that ever exists (action "add": the added one
//                                   last); default all 1. Hash-threshold: member i's region
//                                   ends at DIV_ROUND_CLOSEST((w_0 + .. + w_i) << 31, W) - 1,
//                                   W the live members' sum; resilient: it wants
//                                   DIV_ROUND_CLOSEST(buckets x (w_0 + .. + w_i), W) - (the
//                                   previous bound) buckets
//   hash         str, "l3" | "l4"   what the router hashes
//   buckets      int, 128           resilient: buckets (ip-nexthop(8)'s default), N+1..65535
//   rebalance    str, "idle"        resilient: "idle" (Linux's default) | "forced"
//   forwarding   str, "dr"          dr | tunnel (forwarded) | fullnat | proxy (terminated)
//   connections  int, 100000        established connections, 1..2,000,000 (about 100 bytes each)
//   seed         int, 1             client addresses and ports, the router's hash seed
// and the hash keys of SchedHashOptions (uri/hdr pools).
#ifndef ROUTERTWIN_LB_ECMP_H
#define ROUTERTWIN_LB_ECMP_H

#include "config-keys.h" // ConfigValue

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct LbEcmpResult
{
    uint64_t connections = 0;        ///< established connections before the change
    uint64_t moved = 0;              ///< connections whose instance changes (the failed one's included)
    uint64_t onChanged = 0;          ///< on the failed instance before / on the added one after
    uint64_t brokenLocal = 0;        ///< per-instance tables, mid-flow packets not scheduled (IPVS default)
    uint64_t brokenLocalSloppy = 0;  ///< per-instance tables, mid-flow packets scheduled (sloppy_tcp, Katran)
    uint64_t brokenShared = 0;       ///< session state shared by every instance
    uint64_t brokenMaglev = 0;       ///< Maglev in every instance, mid-flow packets scheduled
    uint64_t hashSpace = 0;          ///< 2^31: the router's hash values
    uint64_t hashSpaceMoved = 0;     ///< hash values whose member changes (exact, not sampled)
    uint32_t buckets = 0;            ///< resilient: buckets of the group (0: hash-threshold)
    uint32_t bucketsMoved = 0;       ///< resilient: buckets whose member changes
    uint32_t bucketsBusy = 0;        ///< resilient: buckets some established connection hashes to
    bool terminated = false;         ///< proxy / full NAT: a moved connection always breaks
    std::vector<uint64_t> before;    ///< connections per instance before
    std::vector<uint64_t> after;     ///< where they go after (the failed one: 0)
    std::vector<uint64_t> hashSpaceBefore; ///< hash values each instance owns before (exact)
    std::vector<uint64_t> hashSpaceAfter;  ///< and after
    std::vector<uint32_t> bucketsBefore;   ///< resilient: buckets each instance holds before
    std::vector<uint32_t> bucketsAfter;    ///< and after
};

/// Throws std::invalid_argument "key 'K': ..." for an unknown key or bad value.
LbEcmpResult RunLbEcmp(const std::map<std::string, ConfigValue>& keys);

} // namespace routertwin

#endif
