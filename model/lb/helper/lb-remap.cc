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

LbRemapResult
RunLbRemap(const std::map<std::string, ConfigValue>& keys)
{
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
        else
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
    for (auto& k : ks)
    {
        k = dp_sched_key_t{};
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
