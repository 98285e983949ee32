#include "lb-ecmp.h"

#include "dp_flow.h"
#include "dp_sched.h"
#include "dp_session.h"
#include "lb-remap.h" // SchedHashOptions, SchedKeyData
#include "random-stream.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace routertwin
{

namespace
{

using config::Bad;

// Linux hashes flows into 31 bits (fib_multipath_hash() >> 1).
constexpr uint64_t kHashSpace = 1ull << 31;

// DIV_ROUND_CLOSEST_ULL of include/linux/math.h for unsigned operands.
uint64_t
DivRoundClosest(uint64_t x, uint64_t d)
{
    return (x + d / 2) / d;
}

/// Hash-threshold over the live members in group order (nh_hthr_group_rebalance,
/// nexthop_select_path_hthr): member i's region ends at the running weight
/// sum's share of 2^31, DIV_ROUND_CLOSEST_ULL((w_0 + ... + w_i) << 31, total) - 1.
class HashThreshold
{
  public:
    HashThreshold(std::vector<uint32_t> live, const std::vector<uint32_t>& weightOf)
        : m_members(std::move(live))
    {
        uint64_t total = 0, w = 0;
        for (uint32_t m : m_members)
        {
            total += weightOf[m];
        }
        for (uint32_t m : m_members)
        {
            w += weightOf[m];
            m_upper.push_back(DivRoundClosest(w << 31, total) - 1);
        }
    }

    uint32_t Select(uint64_t hash) const
    {
        for (size_t i = 0; i < m_members.size(); ++i)
        {
            if (hash <= m_upper[i])
            {
                return m_members[i];
            }
        }
        return m_members.front(); // unreachable: the last bound is 2^31 - 1
    }

    /// Where a region ends: the hash values at which Select may change.
    void Edges(std::vector<uint64_t>& out) const
    {
        for (uint64_t u : m_upper)
        {
            out.push_back(u + 1);
        }
    }

    /// Hash values each member owns (its region's size), indexed by member.
    void Regions(std::vector<uint64_t>& out) const
    {
        uint64_t start = 0;
        for (size_t i = 0; i < m_members.size(); ++i)
        {
            out[m_members[i]] += m_upper[i] + 1 - start;
            start = m_upper[i] + 1;
        }
    }

  private:
    std::vector<uint32_t> m_members;
    std::vector<uint64_t> m_upper;
};

/// A resilient nexthop group's bucket table (net/ipv4/nexthop.c).
class ResilientTable
{
  public:
    ResilientTable(uint32_t buckets, uint32_t maxMembers)
        : m_owner(buckets, -1),
          m_count(maxMembers, 0),
          m_wants(maxMembers, 0)
    {
    }

    /// The group becomes `live` (group order): nh_res_table_migrate_buckets
    /// unsets the buckets of members that left, nh_res_group_rebalance sets
    /// what each wants, nh_res_table_upkeep migrates. `busy[b]`: bucket b
    /// carries traffic (not idle); `forced`: the unbalanced timer expired.
    void Rebalance(const std::vector<uint32_t>& live, const std::vector<uint32_t>& weightOf,
                   const std::vector<uint8_t>& busy, bool forced)
    {
        std::vector<uint8_t> isLive(m_count.size(), 0);
        for (uint32_t m : live)
        {
            isLive[m] = 1;
        }
        for (auto& o : m_owner)
        {
            if (o >= 0 && !isLive[static_cast<uint32_t>(o)])
            {
                --m_count[static_cast<uint32_t>(o)];
                o = -1;
            }
        }
        std::fill(m_wants.begin(), m_wants.end(), 0);
        // nh_res_group_rebalance: member i's upper bound is the running weight
        // sum's share of the table, DIV_ROUND_CLOSEST_ULL(buckets x w, total)
        const uint64_t n = live.size(), buckets = m_owner.size();
        uint64_t total = 0, w = 0, prev = 0;
        for (uint32_t m : live)
        {
            total += weightOf[m];
        }
        std::vector<uint32_t> underweight; // list_add: each new one goes to the head
        for (uint64_t i = 0; i < n; ++i)
        {
            w += weightOf[live[i]];
            const uint64_t upper = DivRoundClosest(buckets * w, total);
            m_wants[live[i]] = static_cast<int64_t>(upper - prev);
            prev = upper;
            if (m_count[live[i]] < m_wants[live[i]])
            {
                underweight.insert(underweight.begin(), live[i]);
            }
        }
        for (size_t b = 0; b < m_owner.size() && !underweight.empty(); ++b)
        {
            const int32_t o = m_owner[b];
            const bool overweight = o >= 0 && m_count[static_cast<uint32_t>(o)] > m_wants[static_cast<uint32_t>(o)];
            if (!(o < 0 || (overweight && (forced || !busy[b]))))
            {
                continue;
            }
            const uint32_t to = underweight.front();
            if (o >= 0)
            {
                --m_count[static_cast<uint32_t>(o)];
            }
            m_owner[b] = static_cast<int32_t>(to);
            if (++m_count[to] == m_wants[to])
            {
                underweight.erase(underweight.begin());
            }
        }
    }

    uint32_t Bucket(uint64_t hash) const
    {
        return static_cast<uint32_t>(hash % m_owner.size());
    }

    uint32_t Select(uint64_t hash) const
    {
        return static_cast<uint32_t>(m_owner[Bucket(hash)]);
    }

    const std::vector<int32_t>& Owners() const
    {
        return m_owner;
    }

  private:
    std::vector<int32_t> m_owner; ///< member of each bucket, -1: unoccupied
    std::vector<int64_t> m_count; ///< buckets each member holds
    std::vector<int64_t> m_wants; ///< buckets each member wants
};

/// One balancer instance: its session table and its scheduler.
struct Instance
{
    std::vector<uint8_t> schedMem, sessMem;
    dp_sched_t* sched = nullptr;
    dp_sess_table_t* sess = nullptr;
};

struct Connection
{
    dp_sched_key_t sched;
    dp_flow_key_t flow;
    uint64_t hash = 0; ///< the router's 31-bit hash
    uint32_t before = 0, after = 0;
    int32_t server = -1;
};

/// N + 1 instances of one balancer deployment (the added one idle until the change).
class Deployment
{
  public:
    Deployment(const dp_sched_config_t& cfg, const std::vector<uint32_t>& weights,
               const std::vector<uint32_t>& capacity, bool shared, uint64_t connections)
        : m_instances(capacity.size()),
          m_shared(shared)
    {
        for (size_t i = 0; i < m_instances.size(); ++i)
        {
            auto& inst = m_instances[i];
            dp_sched_config_t c = cfg;
            c.seed = cfg.seed ^ (0x9E3779B97F4A7C15ull * (i + 1)); // each instance's own PRNG (random)
            inst.schedMem.resize(dp_sched_memory_size(&c));
            inst.sched = dp_sched_create(inst.schedMem.data(), inst.schedMem.size(), &c);
            if (!inst.sched)
            {
                Bad("servers", "the scheduler refused the configuration");
            }
            for (uint32_t s = 0; s < weights.size(); ++s)
            {
                dp_sched_server_t srv{};
                srv.weight = weights[s];
                if (dp_sched_set_server(inst.sched, s, &srv, nullptr) != 0)
                {
                    Bad("weights", "the scheduler refused weight " + std::to_string(weights[s]) + " of server " +
                                       std::to_string(s));
                }
            }
            dp_sched_build(inst.sched, 0, nullptr);
            inst.sess = CreateTable(inst.sessMem, capacity[i]);
        }
        if (shared)
        {
            m_sharedTable = CreateTable(m_sharedMem, connections);
        }
    }

    /// A new connection reaches instance i: its scheduler picks, its table
    /// (and the synced one) opens the connection. The server, or -1.
    int32_t Open(uint32_t i, const Connection& c)
    {
        auto& inst = m_instances[i];
        const int32_t server = dp_sched_pick(inst.sched, &c.sched, 0, nullptr);
        if (server < 0)
        {
            return -1;
        }
        dp_sched_conn_opened(inst.sched, static_cast<uint32_t>(server), nullptr);
        OpenIn(inst.sess, c.flow, server);
        if (m_shared)
        {
            OpenIn(m_sharedTable, c.flow, server);
        }
        return server;
    }

    /// A mid-flow packet of c reaches instance j after the change: does the
    /// connection go on to its server? `schedule`: a packet the tables miss
    /// is scheduled (sloppy_tcp, Katran) instead of refused.
    bool Continues(uint32_t j, const Connection& c, bool schedule)
    {
        dp_sess_hit_t hit{};
        if (dp_sess_lookup(m_shared ? m_sharedTable : m_instances[j].sess, &c.flow, &hit, nullptr) == 0)
        {
            return hit.server == c.server;
        }
        if (!schedule)
        {
            return false;
        }
        auto& inst = m_instances[j];
        const int32_t server = dp_sched_pick(inst.sched, &c.sched, 0, nullptr);
        if (server < 0)
        {
            return false;
        }
        dp_sched_conn_opened(inst.sched, static_cast<uint32_t>(server), nullptr);
        OpenIn(inst.sess, c.flow, server);
        return server == c.server;
    }

  private:
    static dp_sess_table_t* CreateTable(std::vector<uint8_t>& mem, uint64_t connections)
    {
        dp_sess_config_t cfg{};
        // one session per connection (DR and tunnel: replies bypass the balancer)
        dp_sess_config_init(&cfg, 1, static_cast<uint32_t>(std::max<uint64_t>(connections, 2)), 1000);
        mem.resize(dp_sess_memory_size(&cfg));
        return dp_sess_create(mem.data(), mem.size(), &cfg);
    }

    static void OpenIn(dp_sess_table_t* t, const dp_flow_key_t& key, int32_t server)
    {
        dp_sess_conn_t conn{};
        if (dp_sess_open(t, &key, nullptr, static_cast<uint32_t>(server), 0, &conn, nullptr) != 0)
        {
            Bad("connections", "a session table refused a connection (sized for every one it gets)");
        }
        // the handshake as a DR director sees it: SYN, then the client's ACK
        dp_sess_track(t, conn, DP_SESS_DIR_IN, DP_SESS_TCP_SYN, 0, nullptr);
        dp_sess_track(t, conn, DP_SESS_DIR_IN, DP_SESS_TCP_ACK, 0, nullptr);
    }

    std::vector<Instance> m_instances;
    bool m_shared;
    std::vector<uint8_t> m_sharedMem;
    dp_sess_table_t* m_sharedTable = nullptr;
};

std::string
Str(const std::string& key, const ConfigValue& v, std::initializer_list<const char*> allowed)
{
    const auto* s = std::get_if<std::string>(&v);
    std::string list;
    for (const char* a : allowed)
    {
        if (s && *s == a)
        {
            return *s;
        }
        list += (list.empty() ? "" : ", ") + std::string("\"") + a + "\"";
    }
    Bad(key, "must be one of " + list);
}

} // namespace

LbEcmpResult
RunLbEcmp(const std::map<std::string, ConfigValue>& keys)
{
    SchedHashOptions hashOpts;
    std::string algoName = "roundrobin", action = "fail", ecmp = "hash-threshold", hashOn = "l3",
                rebalance = "idle", forwarding = "dr";
    uint32_t servers = 4, instances = 4, failed = 0, buckets = 128, nConn = 100000;
    uint64_t seed = 1;
    const std::map<std::string, double>* weights = nullptr;
    const std::map<std::string, double>* instanceWeights = nullptr;
    for (const auto& [k, v] : keys)
    {
        if (k == "instance_weights")
        {
            instanceWeights = std::get_if<std::map<std::string, double>>(&v);
            if (!instanceWeights || instanceWeights->empty())
            {
                Bad(k, "must map instance indices (\"0\", \"1\", ...) to weights");
            }
            continue;
        }
        if (k == "weights")
        {
            weights = std::get_if<std::map<std::string, double>>(&v);
            if (!weights || weights->empty())
            {
                Bad(k, "must map server indices (\"0\", \"1\", ...) to weights");
            }
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
        else if (k == "action")
        {
            action = Str(k, v, {"fail", "add"});
        }
        else if (k == "ecmp")
        {
            ecmp = Str(k, v, {"hash-threshold", "resilient"});
        }
        else if (k == "hash")
        {
            hashOn = Str(k, v, {"l3", "l4"});
        }
        else if (k == "rebalance")
        {
            rebalance = Str(k, v, {"idle", "forced"});
        }
        else if (k == "forwarding")
        {
            forwarding = Str(k, v, {"dr", "tunnel", "fullnat", "proxy"});
        }
        else if (k == "servers")
        {
            servers = static_cast<uint32_t>(config::AsInt(k, v, 1, DP_SCHED_MAX_SERVERS));
        }
        else if (k == "instances")
        {
            instances = static_cast<uint32_t>(config::AsInt(k, v, 1, 256));
        }
        else if (k == "instance")
        {
            failed = static_cast<uint32_t>(config::AsInt(k, v, 0, 255));
        }
        else if (k == "buckets")
        {
            buckets = static_cast<uint32_t>(config::AsInt(k, v, 1, 65535)); // NHA_RES_GROUP_BUCKETS is a u16
        }
        else if (k == "connections")
        {
            nConn = static_cast<uint32_t>(config::AsInt(k, v, 1, 2000000));
        }
        else if (k == "seed")
        {
            seed = static_cast<uint64_t>(config::AsInt(k, v, 0, INT64_MAX));
        }
        else if (!hashOpts.Take(k, v))
        {
            Bad(k, "unknown key");
        }
    }
    const bool add = action == "add";
    const bool resilient = ecmp == "resilient";
    if (!add && instances < 2)
    {
        Bad("instances", "one instance fails: at least 2 are needed");
    }
    if (!add && failed >= instances)
    {
        Bad("instance", "must be below instances");
    }
    const uint32_t members = instances + (add ? 1 : 0); // instances that ever exist
    if (resilient && buckets < members)
    {
        Bad("buckets", "a resilient group needs at least one bucket per member (" + std::to_string(members) + ")");
    }
    // the group's member weights (ip nexthop ... group 1,W1/2,W2): Linux keeps
    // weight - 1 in struct nexthop_grp's __u8, so 1..256
    std::vector<uint32_t> memberWeight(members, 1);
    if (instanceWeights)
    {
        if (instanceWeights->size() != members)
        {
            Bad("instance_weights", "needs one weight per instance (" + std::to_string(members) +
                                        (add ? ", the added one last" : "") + "), not " +
                                        std::to_string(instanceWeights->size()));
        }
        for (const auto& [index, w] : *instanceWeights)
        {
            char* end = nullptr;
            const unsigned long i = std::strtoul(index.c_str(), &end, 10);
            if (index.empty() || *end != '\0' || i >= members)
            {
                Bad("instance_weights", "'" + index + "' is not an instance index 0..n-1");
            }
            if (!(w >= 1 && w <= 256) || w != static_cast<double>(static_cast<uint32_t>(w)))
            {
                Bad("instance_weights", "weight of instance " + index + " must be an integer in 1..256");
            }
            memberWeight[i] = static_cast<uint32_t>(w);
        }
    }
    std::vector<uint32_t> weightOf(servers, 1);
    if (weights)
    {
        weightOf.assign(weights->size(), 1);
        for (const auto& [index, w] : *weights)
        {
            char* end = nullptr;
            const unsigned long i = std::strtoul(index.c_str(), &end, 10);
            if (index.empty() || *end != '\0' || i >= weights->size())
            {
                Bad("weights", "'" + index + "' is not a server index 0..n-1");
            }
            if (!(w >= 0 && w <= 65535) || w != static_cast<double>(static_cast<uint32_t>(w)))
            {
                Bad("weights", "weight of server " + index + " must be an integer in 0..65535");
            }
            weightOf[i] = static_cast<uint32_t>(w);
        }
    }

    // the router's group before and after, in group order
    std::vector<uint32_t> liveBefore, liveAfter;
    for (uint32_t i = 0; i < instances; ++i)
    {
        liveBefore.push_back(i);
        if (add || i != failed)
        {
            liveAfter.push_back(i);
        }
    }
    if (add)
    {
        liveAfter.push_back(instances);
    }

    // the connections: distinct clients in 198.18.0.0/15 -> VIP 10.0.0.1:80
    dp_sched_config_t cfg{};
    cfg.algo = static_cast<uint32_t>(dp_sched_algo_from_name(algoName.c_str()));
    cfg.max_servers = static_cast<uint32_t>(weightOf.size());
    cfg.seed = seed;
    hashOpts.Apply(cfg);
    const bool request = SchedHashesRequest(cfg.algo);
    RandomStream rng(seed, 11);
    const uint32_t routerSeed = static_cast<uint32_t>(RandomStream(seed, 0xEC3Du).Next() >> 32);
    std::vector<Connection> conns(nConn);
    std::vector<std::string> data(request ? nConn : 0);
    std::unordered_set<uint64_t> seen;
    for (uint32_t i = 0; i < nConn; ++i)
    {
        Connection& c = conns[i];
        uint32_t src = 0;
        uint16_t port = 0;
        do
        {
            src = 0xC6120000u + rng.UniformInt(1u << 17);
            port = static_cast<uint16_t>(1024 + rng.UniformInt(64512));
        } while (!seen.insert((static_cast<uint64_t>(src) << 16) | port).second);
        c.flow = dp_flow_key_t{};
        c.flow.src_ip = src;
        c.flow.dst_ip = 0x0A000001u;
        c.flow.src_port = port;
        c.flow.dst_port = 80;
        c.flow.proto = 6;
        c.sched = dp_sched_key_t{};
        c.sched.src_ip = src;
        c.sched.dst_ip = c.flow.dst_ip;
        c.sched.src_port = port;
        c.sched.dst_port = 80;
        c.sched.proto = 6;
        if (request)
        {
            data[i] = SchedKeyData(cfg.algo, rng.UniformInt(1u << 17));
            c.sched.data = data[i].data();
            c.sched.data_len = static_cast<uint32_t>(data[i].size());
        }
        dp_flow_key_t h = c.flow;
        h.src_ip ^= routerSeed;
        if (hashOn == "l3")
        {
            h.src_port = h.dst_port = 0;
            h.proto = 0;
        }
        c.hash = dp_flow_hash(&h) >> 1;
    }

    // the router before and after the change
    LbEcmpResult r;
    r.connections = nConn;
    r.hashSpace = kHashSpace;
    r.terminated = forwarding == "fullnat" || forwarding == "proxy";
    if (resilient)
    {
        ResilientTable table(buckets, members);
        const std::vector<uint8_t> idle(buckets, 0);
        table.Rebalance(liveBefore, memberWeight, idle, false); // a new group: every bucket unoccupied
        for (auto& c : conns)
        {
            c.before = table.Select(c.hash);
        }
        std::vector<uint8_t> busy(buckets, 0);
        for (const auto& c : conns)
        {
            busy[table.Bucket(c.hash)] = 1;
        }
        const std::vector<int32_t> ownersBefore = table.Owners();
        table.Rebalance(liveAfter, memberWeight, busy, rebalance == "forced");
        for (auto& c : conns)
        {
            c.after = table.Select(c.hash);
        }
        r.buckets = buckets;
        r.bucketsBefore.assign(members, 0);
        r.bucketsAfter.assign(members, 0);
        r.hashSpaceBefore.assign(members, 0);
        r.hashSpaceAfter.assign(members, 0);
        for (uint32_t b = 0; b < buckets; ++b)
        {
            const uint64_t hashes = (kHashSpace - 1 - b) / buckets + 1; // hashes h < 2^31 with h % buckets == b
            ++r.bucketsBefore[static_cast<uint32_t>(ownersBefore[b])];
            ++r.bucketsAfter[static_cast<uint32_t>(table.Owners()[b])];
            r.hashSpaceBefore[static_cast<uint32_t>(ownersBefore[b])] += hashes;
            r.hashSpaceAfter[static_cast<uint32_t>(table.Owners()[b])] += hashes;
            r.bucketsBusy += busy[b];
            if (ownersBefore[b] != table.Owners()[b])
            {
                ++r.bucketsMoved;
                r.hashSpaceMoved += hashes;
            }
        }
    }
    else
    {
        const HashThreshold before(liveBefore, memberWeight), after(liveAfter, memberWeight);
        r.hashSpaceBefore.assign(members, 0);
        r.hashSpaceAfter.assign(members, 0);
        before.Regions(r.hashSpaceBefore);
        after.Regions(r.hashSpaceAfter);
        for (auto& c : conns)
        {
            c.before = before.Select(c.hash);
            c.after = after.Select(c.hash);
        }
        // exact: Select is constant between consecutive region edges
        std::vector<uint64_t> edges{0, kHashSpace};
        before.Edges(edges);
        after.Edges(edges);
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        for (size_t e = 0; e + 1 < edges.size(); ++e)
        {
            if (before.Select(edges[e]) != after.Select(edges[e]))
            {
                r.hashSpaceMoved += edges[e + 1] - edges[e];
            }
        }
    }
    r.before.assign(members, 0);
    r.after.assign(members, 0);
    for (const auto& c : conns)
    {
        ++r.before[c.before];
        ++r.after[c.after];
        r.moved += c.before != c.after;
        r.onChanged += add ? c.after == instances : c.before == failed;
    }

    // the instances: each deployment on the same connections
    std::vector<uint32_t> capacity(members, 0);
    for (const auto& c : conns)
    {
        ++capacity[c.before];
        capacity[c.after] += c.before != c.after;
    }
    dp_sched_config_t maglev{};
    maglev.algo = DP_SCHED_MAGLEV;
    maglev.max_servers = cfg.max_servers;
    maglev.seed = seed;
    // the next packets of established connections arrive in an order
    // unrelated to the one they opened in (a seeded shuffle): in opening
    // order, a whole instance's connections would reach another round-robin
    // instance in lockstep with the cycle that placed them
    std::vector<uint32_t> order(nConn);
    for (uint32_t i = 0; i < nConn; ++i)
    {
        order[i] = i;
    }
    RandomStream shuffle(seed, 13);
    for (uint32_t i = nConn; i > 1; --i)
    {
        std::swap(order[i - 1], order[shuffle.UniformInt(i)]);
    }
    struct Run
    {
        const dp_sched_config_t* cfg;
        bool shared, schedule;
        uint64_t* broken;
    };
    const Run runs[] = {{&cfg, false, false, &r.brokenLocal},
                        {&cfg, false, true, &r.brokenLocalSloppy},
                        {&cfg, true, false, &r.brokenShared},
                        {&maglev, false, true, &r.brokenMaglev}};
    for (const Run& run : runs)
    {
        if (r.terminated)
        {
            *run.broken = r.moved; // the moved connection's TCP peer (or local address) is the old instance's
            continue;
        }
        Deployment d(*run.cfg, weightOf, capacity, run.shared, nConn);
        for (auto& c : conns)
        {
            c.server = d.Open(c.before, c);
        }
        for (uint32_t i : order)
        {
            const Connection& c = conns[i];
            // a connection no server took is not established: none here (every pool has a usable server)
            if (c.server >= 0 && !d.Continues(c.after, c, run.schedule))
            {
                ++*run.broken;
            }
        }
    }
    return r;
}

} // namespace routertwin
