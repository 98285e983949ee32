// LbRemap: how many connections move to another server when one server of a
// pool fails, per scheduler. Key-mapping schedulers (sh, maglev, source,
// source-consistent) are asked dp_sched_count_remapped over the same keys
// before and after the failure: a key whose server changes is remapped (its
// connection breaks unless a session table pins it). Schedulers that map no
// key (rr, wrr, lc, ...) only move the failed server's connections, since
// the session table pins every other one: those are counted by picking each
// key's server before the failure.
//
// With action "add" the pool gains a server instead: server `servers` - 1
// is in maintenance before and up after; key-mapping schedulers move the
// keys the new server takes, the others move none (the session table pins
// every established connection). With action "drain" server `failed` is
// drained (HAProxy drain, IPVS weight 0): no established connection moves;
// `redirected` counts the keys whose next connection goes elsewhere (or
// nowhere: IPVS mh without its fallback flag refuses a drained server's keys).
//
// The same configuration arrives from Python as a dict
// (routertwin._core.lb_remap). Keys (default):
//   scheduler  str, "maglev"   dp_sched algorithm name
//   servers    int, 96         servers in the pool (all up)
//   weights    {"i": w}, {}    weight of server i (default 1 each; an
//                              imported pool's weights)
//   action     str, "fail"     "fail": server `failed` goes down; "drain":
//                              it drains; "add": the last server comes up
//   failed     int, 0          the server that fails (action "fail")
//   keys       int, 100000     connections (client address:port -> VIP:80)
//   seed       int, 1          client addresses and ports
// and the hash keys of SchedHashOptions (uri/hdr schedulers). A uri or hdr
// scheduler's connections are HTTP requests whose URI / header value is
// SchedKeyData's: key k asks for object k of a 2^17-object site (uri) or
// names site k (hdr), k drawn uniformly.
#ifndef ROUTERTWIN_LB_REMAP_H
#define ROUTERTWIN_LB_REMAP_H

#include "config-keys.h"
#include "forwarding-scenario.h" // ConfigValue
#include "dp_sched.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct LbRemapResult
{
    uint64_t keys = 0;        ///< connections considered
    uint64_t moved = 0;       ///< established connections whose server changes
    uint64_t redirected = 0;  ///< keys whose next connection goes to another server (or none)
    uint64_t onFailed = 0;    ///< connections that were on the failed server (after: on the added one)
    bool keyed = false;       ///< the scheduler maps keys (count_remapped answered)
    uint32_t tableChanges = 0;///< maglev/sh: lookup-table entries that changed (0 otherwise)
    uint32_t tableSize = 0;   ///< maglev/sh: entries of the table
    /// Where the keys' next connections go after the change, per server: the
    /// load on the others (a fresh pick of every key, connections held)
    std::vector<uint64_t> afterPerServer;
};

/// What an HAProxy hash-type and balance uri/hdr line add to a dp_sched
/// configuration (keys of lb_remap and lb_failover):
///   hash_function    str   sdbm | djb2 | wt6 | crc32 (hash-type's function; default sdbm)
///   hash_avalanche   bool  full_hash() after it (default: HAProxy's, yes for consistent only)
///   uri_whole, uri_path_only, hdr_domain_only  bool   balance uri whole / path-only, hdr use_domain_only
///   uri_len, uri_depth                         int    balance uri len N / depth N
struct SchedHashOptions
{
    uint32_t hashFn = 0;
    int avalanche = -1; ///< -1: the hash type's default
    uint32_t flags = 0; ///< DP_SCHED_CFG_URI_* / HDR_DOMAIN_ONLY
    uint32_t uriLen = 0, uriDepth = 0;

    /// Takes key if it is one of the above (true), throws std::invalid_argument
    /// "key 'K': ..." on a bad value, false for another key.
    bool Take(const std::string& key, const ConfigValue& v);
    /// Sets the fields and flags of c (c.algo already set).
    void Apply(dp_sched_config_t& c) const;
};

/// The key-table rows of SchedHashOptions's keys, for a scenario Config
/// whose member `hash` takes them; appended after `rows` (documentation order).
template <typename Config>
std::vector<config::Key<Config>>
WithSchedHashKeys(std::vector<config::Key<Config>> rows)
{
    for (const char* name : {"hash_function", "hash_avalanche", "uri_whole", "uri_path_only", "uri_len", "uri_depth",
                             "hdr_domain_only"})
    {
        rows.push_back({name, [](Config& c, const std::string& k, const ConfigValue& v) { c.hash.Take(k, v); }});
    }
    return rows;
}

/// The value of a `scheduler` key: a name dp_sched knows (throws
/// std::invalid_argument "key 'K': unknown algorithm ..." otherwise).
std::string SchedulerName(const std::string& key, const ConfigValue& v);

/// A dp_sched pool of `slots` servers for `scheduler` (a SchedulerName) with
/// the hash options, built in `mem`; `algo` gets its dp_sched algorithm.
/// Throws std::invalid_argument "key 'scheduler': ..." when dp_sched refuses it.
dp_sched_t* CreateSchedPool(const std::string& scheduler, uint32_t slots, uint64_t seed,
                            const SchedHashOptions& hash, std::vector<uint8_t>& mem, uint32_t& algo);

/// True for the dp_sched algorithms that hash a request string (uri, hdr).
bool SchedHashesRequest(uint32_t algo);

/// The request string key number n carries for a uri or hdr algorithm:
/// "/objects/<n>.html?session=<n>" (uri) or "www.site<n>.example" (hdr: a
/// Host-like value whose domain label is site<n>).
std::string SchedKeyData(uint32_t algo, uint64_t n);

/// Throws std::invalid_argument "key 'K': ..." for an unknown key or bad value.
LbRemapResult RunLbRemap(const std::map<std::string, ConfigValue>& keys);

} // namespace routertwin

#endif
