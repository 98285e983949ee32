#include "lb-failover.h"

#include "lb-health-checker.h"

#include "dp_persist.h"

#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>
#include <ns3/boolean.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace routertwin
{

using namespace ns3;
using namespace config;

namespace
{

using C = LbFailoverConfig;
using S = const std::string&;
using V = const ConfigValue&;
using Key = config::Key<LbFailoverConfig>;

uint32_t
Ms(S k, V v)
{
    return static_cast<uint32_t>(AsInt(k, v, 0, 86400000));
}

const std::vector<Key>&
Keys()
{
    static const std::vector<Key> keys = {
        {"servers", [](C& c, S k, V v) { c.servers = static_cast<uint32_t>(AsInt(k, v, 1, DP_SCHED_MAX_SERVERS)); }},
        {"scheduler",
         [](C& c, S k, V v) {
             c.scheduler = AsString(k, v);
             if (dp_sched_algo_from_name(c.scheduler.c_str()) < 0)
             {
                 Bad(k, "unknown algorithm '" + c.scheduler + "'");
             }
         }},
        {"check",
         [](C& c, S k, V v) {
             c.check = AsString(k, v);
             if (c.check != "ping" && c.check != "tcp" && c.check != "http" && c.check != "content")
             {
                 Bad(k, "must be ping, tcp, http or content");
             }
         }},
        {"inter_ms", [](C& c, S k, V v) { c.interMs = static_cast<uint32_t>(AsInt(k, v, 1, 86400000)); }},
        {"fastinter_ms", [](C& c, S k, V v) { c.fastInterMs = Ms(k, v); }},
        {"downinter_ms", [](C& c, S k, V v) { c.downInterMs = Ms(k, v); }},
        {"timeout_ms", [](C& c, S k, V v) { c.timeoutMs = Ms(k, v); }},
        {"rise", [](C& c, S k, V v) { c.rise = static_cast<uint32_t>(AsInt(k, v, 1, DP_HEALTH_MAX_COUNT)); }},
        {"fall", [](C& c, S k, V v) { c.fall = static_cast<uint32_t>(AsInt(k, v, 1, DP_HEALTH_MAX_COUNT)); }},
        {"kill_server",
         [](C& c, S k, V v) { c.killServer = static_cast<uint32_t>(AsInt(k, v, 0, DP_SCHED_MAX_SERVERS - 1)); }},
        {"kill_at_s", [](C& c, S k, V v) { c.killAtS = NonNeg(k, v); }},
        {"kill_mode",
         [](C& c, S k, V v) {
             c.killMode = AsString(k, v);
             if (c.killMode != "refuse" && c.killMode != "silent")
             {
                 Bad(k, "must be refuse or silent");
             }
         }},
        {"revive_at_s", [](C& c, S k, V v) { c.reviveAtS = NonNeg(k, v); }},
        {"request_rate", [](C& c, S k, V v) { c.requestRate = Positive(k, v); }},
        {"duration_s", [](C& c, S k, V v) { c.durationS = Positive(k, v); }},
        {"retries", [](C& c, S k, V v) { c.retries = static_cast<uint32_t>(AsInt(k, v, 0, 100)); }},
        {"redispatch", [](C& c, S k, V v) { c.redispatch = AsBool(k, v); }},
        {"connect_timeout_ms", [](C& c, S k, V v) { c.connectTimeoutMs = Ms(k, v); }},
        {"redundancy",
         [](C& c, S k, V v) {
             c.redundancy = AsString(k, v);
             if (c.redundancy != "none" && c.redundancy != "active_backup" && c.redundancy != "active_active")
             {
                 Bad(k, "must be none, active_backup or active_active");
             }
         }},
        {"advert_interval_ms",
         [](C& c, S k, V v) { c.advertIntervalMs = static_cast<uint32_t>(AsInt(k, v, 10, 40950)); }},
        {"backup_priority", [](C& c, S k, V v) { c.backupPriority = static_cast<uint32_t>(AsInt(k, v, 1, 254)); }},
        {"balancer_fail_at_s", [](C& c, S k, V v) { c.balancerFailAtS = NonNeg(k, v); }},
        {"persistence",
         [](C& c, S k, V v) {
             c.persistence = AsString(k, v);
             if (c.persistence != "none" && c.persistence != "stick_src" && c.persistence != "cookie")
             {
                 Bad(k, "must be none, stick_src or cookie");
             }
         }},
        {"clients", [](C& c, S k, V v) { c.clients = static_cast<uint32_t>(AsInt(k, v, 0, 65536)); }},
        {"stick_size", [](C& c, S k, V v) { c.stickSize = static_cast<uint32_t>(AsInt(k, v, 1, 1 << 24)); }},
        {"stick_expire_ms", [](C& c, S k, V v) { c.stickExpireMs = Ms(k, v); }},
        {"hash_function", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"hash_avalanche", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"uri_whole", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"uri_path_only", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"uri_len", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"uri_depth", [](C& c, S k, V v) { c.hash.Take(k, v); }},
        {"hdr_domain_only", [](C& c, S k, V v) { c.hash.Take(k, v); }},
    };
    return keys;
}

/// One run: the pool, its checker, the requests and the balancers.
class FailoverRun
{
  public:
    explicit FailoverRun(const LbFailoverConfig& c)
        : m_c(c)
    {
        dp_sched_config_t sc{};
        sc.algo = static_cast<uint32_t>(dp_sched_algo_from_name(c.scheduler.c_str()));
        sc.max_servers = c.servers;
        sc.seed = 1;
        c.hash.Apply(sc);
        m_request = SchedHashesRequest(sc.algo);
        m_poolMem.resize(dp_sched_memory_size(&sc));
        m_pool = dp_sched_create(m_poolMem.data(), m_poolMem.size(), &sc);
        if (!m_pool)
        {
            Bad("scheduler", "cannot build a pool of " + std::to_string(c.servers) + " servers");
        }
        for (uint32_t i = 0; i < c.servers; ++i)
        {
            dp_sched_server_t sv{};
            sv.weight = 1;
            dp_sched_set_server(m_pool, i, &sv, nullptr);
            m_backends.push_back(CreateObject<LbBackend>());
        }
        m_checker = CreateObject<LbHealthChecker>();
        m_checker->SetAttribute("Kind", StringValue(c.check));
        m_checker->SetAttribute("Inter", TimeValue(MilliSeconds(c.interMs)));
        m_checker->SetAttribute("FastInter", TimeValue(MilliSeconds(c.fastInterMs)));
        m_checker->SetAttribute("DownInter", TimeValue(MilliSeconds(c.downInterMs)));
        m_checker->SetAttribute("Timeout", TimeValue(MilliSeconds(c.timeoutMs)));
        m_checker->SetAttribute("Rise", UintegerValue(c.rise));
        m_checker->SetAttribute("Fall", UintegerValue(c.fall));
        m_checker->Watch(m_backends, m_pool);
        m_checker->TraceConnectWithoutContext("StateChange", MakeCallback(&FailoverRun::OnStateChange, this));
        if (c.persistence == "stick_src")
        {
            dp_persist_config_t pc{};
            pc.capacity = c.stickSize;
            pc.key_len = 4;
            pc.expire_ms = c.stickExpireMs;
            pc.on_full = DP_PERSIST_FULL_PURGE;
            m_stickMem.resize(dp_persist_memory_size(&pc));
            m_stick = dp_persist_create(m_stickMem.data(), m_stickMem.size(), &pc);
        }
        m_cookie.assign(c.clients ? c.clients : 0, -1);
        m_moved.assign(c.clients ? c.clients : 0, false);
    }

    LbFailoverResult Run()
    {
        Simulator::Destroy();
        m_checker->Start(Seconds(0));
        const auto how = m_c.killMode == "refuse" ? LbBackend::Failure::Refuse : LbBackend::Failure::Silent;
        if (m_c.killAtS < m_c.durationS) // a kill at or after the offered traffic is no kill
        {
            Simulator::Schedule(Seconds(m_c.killAtS), &LbBackend::Kill, m_backends[m_c.killServer], how);
        }
        if (m_c.reviveAtS > 0 && m_c.killAtS < m_c.durationS)
        {
            Simulator::Schedule(Seconds(m_c.reviveAtS), &LbBackend::Revive, m_backends[m_c.killServer]);
        }
        const uint64_t n = static_cast<uint64_t>(std::floor(m_c.durationS * m_c.requestRate));
        for (uint64_t k = 0; k < n; ++k)
        {
            Simulator::Schedule(Seconds(static_cast<double>(k) / m_c.requestRate), &FailoverRun::Arrive, this, k);
        }
        if (m_c.redundancy != "none")
        {
            StartVrrp();
        }
        dp_health_config_t hc = m_checker->GetConfig();
        const uint32_t failDelay = m_c.killMode == "refuse" ? 0 : dp_health_timeout_ms(&hc);
        uint64_t lo = 0, hi = 0;
        dp_health_detection_window(&hc, failDelay, &lo, &hi);
        m_r.windowMinMs = static_cast<double>(lo);
        m_r.windowMaxMs = static_cast<double>(hi);
        // Requests in flight finish within (retries + 1) connect timeouts.
        Simulator::Stop(Seconds(m_c.durationS) + MilliSeconds(uint64_t(m_c.retries + 2) * m_c.connectTimeoutMs));
        Simulator::Run();
        Simulator::Destroy();
        if (m_r.downAtS >= 0)
        {
            // Whole ms (dp_health's clock) minus the kill time in ms, so a
            // detection of 1866 ms reads 1866, not 1866.0000000000005.
            m_r.detectionMs = std::round(m_r.downAtS * 1000.0) - m_c.killAtS * 1000.0;
        }
        return m_r;
    }

  private:
    void OnStateChange(uint32_t server, bool up, Time at)
    {
        if (server != m_c.killServer)
        {
            return;
        }
        // dp_health's clock is whole ms (HAProxy's ticks): report its time.
        at = MilliSeconds(at.GetMilliSeconds());
        if (!up && m_r.downAtS < 0 && at.GetSeconds() >= m_c.killAtS)
        {
            m_r.downAtS = at.GetSeconds();
        }
        if (up && m_c.reviveAtS > 0 && at.GetSeconds() >= m_c.reviveAtS && m_r.upAtS < 0)
        {
            m_r.upAtS = at.GetSeconds();
        }
    }

    uint32_t ClientOf(uint64_t k) const
    {
        return static_cast<uint32_t>(m_c.clients ? k % m_c.clients : k % 65536);
    }

    /// Request k's key; for a uri/hdr scheduler it points into data, which
    /// must outlive the key.
    dp_sched_key_t KeyOf(uint64_t k, std::string& data) const
    {
        dp_sched_key_t key{};
        if (m_request)
        {
            data = SchedKeyData(static_cast<uint32_t>(dp_sched_algo_from_name(m_c.scheduler.c_str())), ClientOf(k));
            key.data = data.data();
            key.data_len = static_cast<uint32_t>(data.size());
        }
        key.src_ip = 0xC6120000u + ClientOf(k); // 198.18.0.0/16 clients
        key.dst_ip = 0xC6130001u;
        key.src_port = static_cast<uint16_t>(1024 + k % 60000);
        key.dst_port = 80;
        key.proto = 6;
        return key;
    }

    uint64_t NowMs() const { return static_cast<uint64_t>(Simulator::Now().GetMilliSeconds()); }

    void Arrive(uint64_t k)
    {
        m_r.requests++;
        if (m_balancerDead && !m_takenOver && (m_c.redundancy == "active_backup" || k % 2 == 0))
        {
            m_r.lostInFailover++; // active/active: even clients hash to the dead balancer
            return;
        }
        std::string data;
        const dp_sched_key_t key = KeyOf(k, data);
        const int32_t s = Persisted(k, key);
        if (s < 0)
        {
            m_r.failed++;
            return;
        }
        if (static_cast<uint32_t>(s) == m_c.killServer && !m_backends[s]->IsAlive())
        {
            m_r.toDeadServer++;
        }
        Attempt(k, static_cast<uint32_t>(s), 0);
    }

    /// The server for request k: its client's stored server when that one
    /// is not DOWN, else the scheduler's pick (then stored).
    int32_t Persisted(uint64_t k, const dp_sched_key_t& key)
    {
        if (m_c.persistence == "none")
        {
            return dp_sched_pick(m_pool, &key, NowMs(), nullptr);
        }
        const uint32_t client = ClientOf(k);
        uint8_t src[4];
        dp_persist_key_ipv4(key.src_ip, src);
        int32_t stored = -1;
        if (m_stick)
        {
            stored = dp_persist_lookup(m_stick, src, NowMs(), nullptr);
        }
        else if (client < m_cookie.size())
        {
            stored = m_cookie[client];
        }
        dp_sched_server_info_t info{};
        if (stored >= 0 && dp_sched_get_server(m_pool, static_cast<uint32_t>(stored), &info) == 0 && info.usable)
        {
            return stored;
        }
        const int32_t s = dp_sched_pick(m_pool, &key, NowMs(), nullptr);
        if (s < 0)
        {
            return s;
        }
        if (stored >= 0 && s != stored)
        {
            m_r.stickyMoved++;
            if (client < m_moved.size() && !m_moved[client])
            {
                m_moved[client] = true;
                m_r.stickyClientsMoved++;
            }
        }
        if (m_stick)
        {
            dp_persist_store(m_stick, src, s, NowMs(), nullptr);
        }
        else if (client < m_cookie.size())
        {
            m_cookie[client] = s;
        }
        return s;
    }

    void Attempt(uint64_t k, uint32_t server, uint32_t attempt)
    {
        const LbBackend& b = *m_backends[server];
        if (b.IsAlive())
        {
            m_r.served++;
            return;
        }
        const Time failAfter =
            b.HowDead() == LbBackend::Failure::Refuse ? Time(0) : MilliSeconds(m_c.connectTimeoutMs);
        Simulator::Schedule(failAfter, &FailoverRun::OnFail, this, k, server, attempt);
    }

    void OnFail(uint64_t k, uint32_t server, uint32_t attempt)
    {
        if (attempt >= m_c.retries)
        {
            m_r.failed++;
            return;
        }
        if (attempt == 0)
        {
            m_r.retried++;
        }
        const uint32_t next = attempt + 1;
        if (m_c.redispatch && next == m_c.retries)
        {
            m_r.redispatched++;
            std::string data;
            const dp_sched_key_t key = KeyOf(k, data);
            const int32_t s = dp_sched_pick(m_pool, &key, NowMs(), nullptr);
            if (s < 0)
            {
                m_r.failed++;
                return;
            }
            Attempt(k, static_cast<uint32_t>(s), next);
            return;
        }
        const Time turnAround = MilliSeconds(std::min<uint32_t>(m_c.connectTimeoutMs, 1000));
        Simulator::Schedule(turnAround, &FailoverRun::Attempt, this, k, server, next);
    }

    // VRRP (RFC 5798): the master advertises every A; the backup's
    // Master_Down_Timer restarts at each advertisement.
    void StartVrrp()
    {
        const double a = m_c.advertIntervalMs;
        m_r.masterDownIntervalMs = 3 * a + (256.0 - m_c.backupPriority) * a / 256.0;
        Simulator::Schedule(Time(0), &FailoverRun::Advertise, this);
        if (m_c.balancerFailAtS > 0)
        {
            Simulator::Schedule(Seconds(m_c.balancerFailAtS), &FailoverRun::BalancerDies, this);
        }
    }

    void Advertise()
    {
        if (m_balancerDead)
        {
            return;
        }
        m_masterDown.Cancel();
        m_masterDown = Simulator::Schedule(MicroSeconds(static_cast<int64_t>(m_r.masterDownIntervalMs * 1000.0)),
                                           &FailoverRun::TakeOver, this);
        Simulator::Schedule(MilliSeconds(m_c.advertIntervalMs), &FailoverRun::Advertise, this);
    }

    void BalancerDies()
    {
        m_balancerDead = true;
        m_deathAt = Simulator::Now();
    }

    void TakeOver()
    {
        m_takenOver = true;
        m_r.failoverMs = (Simulator::Now() - m_deathAt).GetSeconds() * 1000.0;
    }

    LbFailoverConfig m_c;
    bool m_request = false; ///< the scheduler hashes a request string (uri, hdr)
    std::vector<uint8_t> m_poolMem;
    dp_sched_t* m_pool = nullptr;
    std::vector<Ptr<LbBackend>> m_backends;
    Ptr<LbHealthChecker> m_checker;
    LbFailoverResult m_r;
    std::vector<uint8_t> m_stickMem;
    dp_persist_t* m_stick = nullptr;
    std::vector<int32_t> m_cookie; ///< cookie persistence: the server each client's cookie names
    std::vector<bool> m_moved;
    bool m_balancerDead = false, m_takenOver = false;
    Time m_deathAt;
    EventId m_masterDown;
};

} // namespace

std::vector<std::string>
LbFailoverConfig::KeyNames()
{
    return config::KeyNames(Keys());
}

LbFailoverConfig
LbFailoverConfig::FromKeys(const std::map<std::string, ConfigValue>& keys)
{
    LbFailoverConfig c;
    config::ApplyKeys(Keys(), keys, c);
    if (c.killServer >= c.servers)
    {
        Bad("kill_server", "must be below servers");
    }
    if (c.reviveAtS > 0 && c.reviveAtS <= c.killAtS)
    {
        Bad("revive_at_s", "must be after kill_at_s");
    }
    if (c.persistence == "cookie" && c.clients == 0)
    {
        Bad("clients", "cookie persistence needs a client count (each client keeps its cookie)");
    }
    if (c.redundancy == "none" && c.balancerFailAtS > 0)
    {
        Bad("balancer_fail_at_s", "needs redundancy active_backup or active_active");
    }
    return c;
}

LbFailoverResult
RunLbFailover(const LbFailoverConfig& config)
{
    FailoverRun run(config);
    return run.Run();
}

} // namespace routertwin
