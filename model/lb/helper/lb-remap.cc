#include "lb-remap.h"

#include "dp_sched.h"
#include "random-stream.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace routertwin
{

namespace
{

[[noreturn]] void
Bad(const std::string& key, const std::string& what)
{
    throw std::invalid_argument("key '" + key + "': " + what);
}

int64_t
Int(const std::string& key, const ConfigValue& v, int64_t lo, int64_t hi)
{
    const auto* i = std::get_if<int64_t>(&v);
    if (!i || *i < lo || *i > hi)
    {
        Bad(key, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return *i;
}

} // namespace

bool
SchedHashOptions::Take(const std::string& key, const ConfigValue& v)
{
    if (key == "hash_function")
    {
        const auto* s = std::get_if<std::string>(&v);
        static const char* const names[] = {"sdbm", "djb2", "wt6", "crc32"};
        for (uint32_t i = 0; s && i < 4; ++i)
        {
            if (*s == names[i])
            {
                hashFn = i;
                return true;
            }
        }
        Bad(key, "must be sdbm, djb2, wt6 or crc32");
    }
    if (key == "hash_avalanche" || key == "uri_whole" || key == "uri_path_only" || key == "hdr_domain_only")
    {
        const auto* b = std::get_if<bool>(&v);
        if (!b)
        {
            Bad(key, "must be true or false");
        }
        if (key == "hash_avalanche")
        {
            avalanche = *b ? 1 : 0;
        }
        else
        {
            const uint32_t f = key == "uri_whole"       ? DP_SCHED_CFG_URI_WHOLE
                               : key == "uri_path_only" ? DP_SCHED_CFG_URI_PATH_ONLY
                                                        : DP_SCHED_CFG_HDR_DOMAIN_ONLY;
            flags = *b ? (flags | f) : (flags & ~f);
        }
        return true;
    }
    if (key == "uri_len" || key == "uri_depth")
    {
        (key == "uri_len" ? uriLen : uriDepth) = static_cast<uint32_t>(Int(key, v, 1, INT32_MAX - 1));
        return true;
    }
    return false;
}

void
SchedHashOptions::Apply(dp_sched_config_t& c) const
{
    const bool consistent = c.algo == DP_SCHED_SOURCE_CONSISTENT || c.algo == DP_SCHED_URI_CONSISTENT ||
                            c.algo == DP_SCHED_HDR_CONSISTENT;
    c.hash_fn = hashFn;
    c.uri_len = uriLen;
    c.uri_depth = uriDepth;
    c.flags |= flags;
    if (avalanche == 1 && !consistent)
    {
        c.flags |= DP_SCHED_CFG_AVALANCHE;
    }
    if (avalanche == 0 && consistent)
    {
        c.flags |= DP_SCHED_CFG_NO_AVALANCHE;
    }
}

std::string
SchedulerName(const std::string& key, const ConfigValue& v)
{
    std::string name = config::AsString(key, v);
    if (dp_sched_algo_from_name(name.c_str()) < 0)
    {
        Bad(key, "unknown algorithm '" + name + "'");
    }
    return name;
}

dp_sched_t*
CreateSchedPool(const std::string& scheduler, uint32_t slots, uint64_t seed, const SchedHashOptions& hash,
                std::vector<uint8_t>& mem, uint32_t& algo)
{
    dp_sched_config_t sc{};
    sc.algo = static_cast<uint32_t>(dp_sched_algo_from_name(scheduler.c_str()));
    sc.max_servers = slots;
    sc.seed = seed;
    hash.Apply(sc);
    algo = sc.algo;
    mem.resize(dp_sched_memory_size(&sc));
    dp_sched_t* pool = dp_sched_create(mem.data(), mem.size(), &sc);
    if (!pool)
    {
        Bad("scheduler", "cannot build a pool of " + std::to_string(slots) + " servers");
    }
    return pool;
}

bool
SchedHashesRequest(uint32_t algo)
{
    return algo == DP_SCHED_URI || algo == DP_SCHED_URI_CONSISTENT || algo == DP_SCHED_HDR ||
           algo == DP_SCHED_HDR_CONSISTENT;
}

std::string
SchedKeyData(uint32_t algo, uint64_t n)
{
    if (algo == DP_SCHED_URI || algo == DP_SCHED_URI_CONSISTENT)
    {
        return "/objects/" + std::to_string(n) + ".html?session=" + std::to_string(n);
    }
    return "www.site" + std::to_string(n) + ".example";
}

LbRemapResult
RunLbRemap(const std::map<std::string, ConfigValue>& keys)
{
    SchedHashOptions hashOpts;
    std::string algoName = "maglev";
    uint32_t servers = 96, failed = 0, nKeys = 100000;
    uint64_t seed = 1;
    bool add = false;
    bool drain = false;
    const std::map<std::string, double>* weights = nullptr;
    for (const auto& [k, v] : keys)
    {
        if (k == "weights")
        {
            weights = std::get_if<std::map<std::string, double>>(&v);
            if (!weights)
            {
                Bad(k, "must map server indices (\"0\", \"1\", ...) to weights");
            }
        }
        else if (k == "action")
        {
            const auto* s = std::get_if<std::string>(&v);
            if (!s || (*s != "fail" && *s != "add" && *s != "drain"))
            {
                Bad(k, "must be \"fail\", \"drain\" or \"add\"");
            }
            add = *s == "add";
            drain = *s == "drain";
        }
        else if (k == "scheduler")
        {
            const auto* s = std::get_if<std::string>(&v);
            if (!s || dp_sched_algo_from_name(s->c_str()) < 0)
            {
                Bad(k, "must name a dp_sched algorithm");
            }
            algoName = *s;
        }
        else if (k == "servers")
        {
            servers = static_cast<uint32_t>(Int(k, v, 2, DP_SCHED_MAX_SERVERS));
        }
        else if (k == "failed")
        {
            failed = static_cast<uint32_t>(Int(k, v, 0, DP_SCHED_MAX_SERVERS - 1));
        }
        else if (k == "keys")
        {
            nKeys = static_cast<uint32_t>(Int(k, v, 1, 10000000));
        }
        else if (k == "seed")
        {
            seed = static_cast<uint64_t>(Int(k, v, 0, INT64_MAX));
        }
        else if (!hashOpts.Take(k, v))
        {
            Bad(k, "unknown key");
        }
    }
    if (failed >= servers)
    {
        Bad("failed", "must be below servers");
    }
    std::vector<uint32_t> weightOf(servers, 1);
    if (weights)
    {
        for (const auto& [index, w] : *weights)
        {
            char* end = nullptr;
            const unsigned long i = std::strtoul(index.c_str(), &end, 10);
            if (index.empty() || *end != '\0' || i >= servers)
            {
                Bad("weights", "'" + index + "' is not a server index below servers");
            }
            if (!(w >= 0 && w <= 65535) || w != static_cast<double>(static_cast<uint32_t>(w)))
            {
                Bad("weights", "weight of server " + index + " must be an integer in 0..65535");
            }
            weightOf[i] = static_cast<uint32_t>(w);
        }
    }
    if (add)
    {
        failed = servers - 1; // the added server: its keys are the ones that move
    }
    dp_sched_config_t c{};
    c.algo = static_cast<uint32_t>(dp_sched_algo_from_name(algoName.c_str()));
    c.max_servers = servers;
    c.seed = seed;
    hashOpts.Apply(c);
    std::vector<uint8_t> memBefore(dp_sched_memory_size(&c)), memAfter(memBefore.size());
    dp_sched_t* before = dp_sched_create(memBefore.data(), memBefore.size(), &c);
    if (!before)
    {
        Bad("servers", "the scheduler refused the configuration");
    }
    for (uint32_t s = 0; s < servers; ++s)
    {
        dp_sched_server_t srv{};
        srv.weight = weightOf[s];
        if (dp_sched_set_server(before, s, &srv, nullptr) != 0)
        {
            Bad("weights", "the scheduler refused weight " + std::to_string(weightOf[s]) + " of server " +
                               std::to_string(s));
        }
    }
    if (add)
    {
        dp_sched_set_state(before, failed, DP_SCHED_DISABLED, 0, nullptr);
    }
    dp_sched_build(before, 0, nullptr);
    dp_sched_t* after = dp_sched_clone(memAfter.data(), memAfter.size(), before);
    dp_sched_set_state(after, failed, add ? DP_SCHED_UP : drain ? DP_SCHED_DRAINING : DP_SCHED_DOWN, 0, nullptr);
    dp_sched_build(after, 0, nullptr);

    RandomStream rng(seed, 11);
    std::vector<dp_sched_key_t> ks(nKeys);
    const bool request = SchedHashesRequest(c.algo);
    std::vector<std::string> data(request ? nKeys : 0);
    for (uint32_t i = 0; i < nKeys; ++i)
    {
        auto& k = ks[i];
        k = dp_sched_key_t{};
        if (request)
        {
            data[i] = SchedKeyData(c.algo, rng.UniformInt(1u << 17));
            k.data = data[i].data();
            k.data_len = static_cast<uint32_t>(data[i].size());
        }
        k.src_ip = 0xC6120000u + rng.UniformInt(1u << 17); // clients in 198.18.0.0/15
        k.dst_ip = 0x0A000001u;
        k.src_port = static_cast<uint16_t>(1024 + rng.UniformInt(64512));
        k.dst_port = 80;
        k.proto = 6;
    }
    LbRemapResult r;
    r.keys = nKeys;
    // which keys sit on the failed server before it fails: the picks a fresh
    // pool makes (for rr: the round-robin order over the keys), every
    // connection held open (least-connection schedulers see the ones before)
    std::vector<uint8_t> memPick(memBefore.size());
    dp_sched_t* pick = dp_sched_clone(memPick.data(), memPick.size(), add ? after : before);
    for (const auto& k : ks)
    {
        const int32_t id = dp_sched_pick(pick, &k, 0, nullptr);
        if (id >= 0)
        {
            dp_sched_conn_opened(pick, static_cast<uint32_t>(id), nullptr);
        }
        if (id == static_cast<int32_t>(failed))
        {
            ++r.onFailed;
        }
    }
    std::vector<uint8_t> memNext(memBefore.size());
    dp_sched_t* next = dp_sched_clone(memNext.data(), memNext.size(), after);
    r.afterPerServer.assign(servers, 0);
    for (const auto& k : ks)
    {
        const int32_t id = dp_sched_pick(next, &k, 0, nullptr);
        if (id >= 0)
        {
            dp_sched_conn_opened(next, static_cast<uint32_t>(id), nullptr);
            ++r.afterPerServer[static_cast<uint32_t>(id)];
        }
    }
    uint32_t moved = 0;
    const int rc = dp_sched_count_remapped(before, after, ks.data(), nKeys, &moved, nullptr);
    if (rc == 0)
    {
        r.keyed = true;
        r.moved = drain ? 0 : moved; // a draining server keeps its established connections
        r.redirected = moved;
        const uint32_t changes = dp_sched_count_table_changes(before, after);
        if (changes != 0xFFFFFFFFu)
        {
            r.tableChanges = changes;
            r.tableSize = dp_sched_table_size(before);
        }
    }
    else if (rc == DP_SCHED_ENOTKEYED)
    {
        // the session table pins every other connection; an added server
        // only takes new ones
        r.moved = add || drain ? 0 : r.onFailed;
        r.redirected = add ? 0 : r.onFailed;
    }
    else
    {
        Bad("scheduler", "count_remapped failed");
    }
    return r;
}

} // namespace routertwin
