#include "lb-failover.h"

#include "lb-health-checker.h"

#include "dp_persist.h"

#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>
#include <ns3/boolean.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <variant>

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

/// A per-server key: one integer for every server, or a string of one
/// integer per server ("3,2,1"); each in lo..hi.
std::vector<uint32_t>
PerServer(S k, V v, int64_t lo, int64_t hi)
{
    if (!std::holds_alternative<std::string>(v))
    {
        return {static_cast<uint32_t>(AsInt(k, v, lo, hi))};
    }
    std::vector<uint32_t> out;
    const std::string& text = std::get<std::string>(v);
    size_t at = 0;
    while (true)
    {
        const size_t comma = text.find(',', at);
        const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        size_t used = 0;
        int64_t x = 0;
        try
        {
            x = std::stoll(item, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used == 0 || item.find_first_not_of(" \t", used) != std::string::npos)
        {
            Bad(k, "'" + item + "' is not an integer (a per-server list is \"V1,V2,...\")");
        }
        out.push_back(static_cast<uint32_t>(AsInt(k, ConfigValue(x), lo, hi)));
        if (comma == std::string::npos)
        {
            return out;
        }
        at = comma + 1;
    }
}

const std::vector<Key>&
Keys()
{
    static const std::vector<Key> keys = WithSchedHashKeys<C>({
        {"servers", [](C& c, S k, V v) { c.servers = static_cast<uint32_t>(AsInt(k, v, 1, DP_SCHED_MAX_SERVERS)); }},
        {"weights", [](C& c, S k, V v) { c.weights = PerServer(k, v, 1, DP_SCHED_MAX_WEIGHT); }},
        {"scheduler", [](C& c, S k, V v) { c.scheduler = SchedulerName(k, v); }},
        {"check",
         [](C& c, S k, V v) {
             c.check = AsString(k, v);
             if (c.check != "ping" && c.check != "tcp" && c.check != "http" && c.check != "content")
             {
                 Bad(k, "must be ping, tcp, http or content");
             }
         }},
        {"inter_ms", [](C& c, S k, V v) { c.interMs = PerServer(k, v, 1, 86400000); }},
        {"fastinter_ms", [](C& c, S k, V v) { c.fastInterMs = PerServer(k, v, 0, 86400000); }},
        {"downinter_ms", [](C& c, S k, V v) { c.downInterMs = PerServer(k, v, 0, 86400000); }},
        {"rise", [](C& c, S k, V v) { c.rise = PerServer(k, v, 1, DP_HEALTH_MAX_COUNT); }},
        {"fall", [](C& c, S k, V v) { c.fall = PerServer(k, v, 1, DP_HEALTH_MAX_COUNT); }},
        {"checked", [](C& c, S k, V v) { c.checked = PerServer(k, v, 0, 1); }},
        {"check_timeout_ms", [](C& c, S k, V v) { c.checkTimeoutMs = Ms(k, v); }},
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
        {"timeline_bins", [](C& c, S k, V v) { c.timelineBins = static_cast<uint32_t>(AsInt(k, v, 1, 10000)); }},
        {"retries", [](C& c, S k, V v) { c.retries = static_cast<uint32_t>(AsInt(k, v, 0, 100)); }},
        {"redispatch", [](C& c, S k, V v) { c.redispatch = AsBool(k, v); }},
        {"redispatch_after",
         [](C& c, S k, V v) { c.redispatchAfter = static_cast<int32_t>(AsInt(k, v, INT32_MIN, INT32_MAX)); }},
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
        {"client_ip_base",
         [](C& c, S k, V v) { c.clientIpBase = static_cast<uint32_t>(AsInt(k, v, 0, 0xFFFFFFFFLL)); }},
        {"stick_size", [](C& c, S k, V v) { c.stickSize = static_cast<uint32_t>(AsInt(k, v, 1, 1 << 24)); }},
        {"stick_expire_ms", [](C& c, S k, V v) { c.stickExpireMs = Ms(k, v); }},
    });
    return keys;
}

/// HAProxy's hash algorithms (BE_LB_KIND_HI), and IPVS's hashes: a
/// redispatch is not taken early for them (stream_choose_redispatch).
bool
IsHash(uint32_t algo)
{
    switch (algo)
    {
    case DP_SCHED_SH:
    case DP_SCHED_MAGLEV:
    case DP_SCHED_SOURCE:
    case DP_SCHED_SOURCE_CONSISTENT:
    case DP_SCHED_URI:
    case DP_SCHED_URI_CONSISTENT:
    case DP_SCHED_HDR:
    case DP_SCHED_HDR_CONSISTENT:
        return true;
    default:
        return false;
    }
}

/// The failure timeline's reasons (LbFailoverResult::failures).
enum FailureReason : unsigned
{
    kFailed,       ///< 503: every attempt failed, or no usable server
    kBalancerDead, ///< the request reached a dead balancer before the takeover
};

/// One run: the pool, its checker, the requests and the balancers.
class FailoverRun
{
  public:
    explicit FailoverRun(const LbFailoverConfig& c)
        : m_c(c)
    {
        uint32_t algo = 0;
        m_pool = CreateSchedPool(c.scheduler, c.servers, 1, c.hash, m_poolMem, algo);
        m_request = SchedHashesRequest(algo);
        m_hashes = IsHash(algo);
        m_checker = CreateObject<LbHealthChecker>();
        m_checker->SetAttribute("Kind", StringValue(c.check));
        for (uint32_t i = 0; i < c.servers; ++i)
        {
            dp_sched_server_t sv{};
            sv.weight = C::Of(c.weights, i);
            dp_sched_set_server(m_pool, i, &sv, nullptr);
            m_backends.push_back(CreateObject<LbBackend>());
            // HAProxy "timeout check": a check's connection is given
            // min(timeout connect, inter); without it, inter (dp_health's
            // default timeout).
            const uint32_t inter = C::Of(c.interMs, i);
            const uint32_t probeTimeout = c.checkTimeoutMs ? std::min(c.connectTimeoutMs ? c.connectTimeoutMs : inter,
                                                                      inter)
                                                           : 0;
            m_checker->SetServerTimers(i, inter, C::Of(c.fastInterMs, i), C::Of(c.downInterMs, i), C::Of(c.rise, i),
                                       C::Of(c.fall, i), probeTimeout);
            m_checker->SetServerChecked(i, C::Of(c.checked, i) != 0);
        }
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
        m_r.failures = LossTimeline(1, c.timelineBins, c.durationS, {"failed", "balancer_dead"});
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
        dp_health_config_t hc = m_checker->GetServerConfig(m_c.killServer);
        const uint32_t failDelay = m_c.killMode == "refuse" ? 0 : dp_health_timeout_ms(&hc);
        uint64_t lo = 0, hi = 0;
        dp_health_detection_window(&hc, failDelay, &lo, &hi);
        const bool checked = C::Of(m_c.checked, m_c.killServer) != 0; // unchecked: never taken out
        m_r.windowMinMs = checked ? static_cast<double>(lo) : -1;
        m_r.windowMaxMs = checked ? static_cast<double>(hi) : -1;
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
        key.src_ip = m_c.clientIpBase + ClientOf(k); // client c: base + c
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
            m_r.failures.Add(0, Simulator::Now().GetSeconds(), 1.0, kBalancerDead);
            return;
        }
        std::string data;
        const dp_sched_key_t key = KeyOf(k, data);
        bool direct = false;
        const int32_t s = Persisted(k, key, direct);
        if (s < 0)
        {
            Failed();
            return;
        }
        if (static_cast<uint32_t>(s) == m_c.killServer && !m_backends[s]->IsAlive())
        {
            m_r.toDeadServer++;
        }
        Attempt(k, static_cast<uint32_t>(s), 0, direct);
    }

    /// The server for request k: its client's stored server when that one
    /// is not DOWN (direct: HAProxy's SF_DIRECT), else the scheduler's pick.
    int32_t Persisted(uint64_t k, const dp_sched_key_t& key, bool& direct)
    {
        direct = false;
        if (m_c.persistence != "none")
        {
            const int32_t stored = Stored(k, key);
            dp_sched_server_info_t info{};
            if (stored >= 0 && dp_sched_get_server(m_pool, static_cast<uint32_t>(stored), &info) == 0 &&
                info.usable)
            {
                direct = true;
                return stored;
            }
        }
        return dp_sched_pick(m_pool, &key, NowMs(), nullptr);
    }

    /// The server client k's cookie or stick entry names (-1: none).
    int32_t Stored(uint64_t k, const dp_sched_key_t& key)
    {
        if (m_stick)
        {
            uint8_t src[4];
            dp_persist_key_ipv4(key.src_ip, src);
            return dp_persist_lookup(m_stick, src, NowMs(), nullptr);
        }
        const uint32_t client = ClientOf(k);
        return client < m_cookie.size() ? m_cookie[client] : -1;
    }

    /// Request k was served by s: the response's Set-Cookie, or the stick
    /// store rules, name s from now on (HAProxy writes the server that took
    /// the request over an entry that named another one). A client whose
    /// server changes is "moved".
    void Store(uint64_t k, uint32_t s)
    {
        if (m_c.persistence == "none")
        {
            return;
        }
        std::string data;
        const dp_sched_key_t key = KeyOf(k, data);
        const uint32_t client = ClientOf(k);
        const int32_t stored = Stored(k, key);
        if (stored >= 0 && static_cast<uint32_t>(stored) != s)
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
            uint8_t src[4];
            dp_persist_key_ipv4(key.src_ip, src);
            dp_persist_store(m_stick, src, static_cast<int32_t>(s), NowMs(), nullptr);
        }
        else if (client < m_cookie.size())
        {
            m_cookie[client] = static_cast<int32_t>(s);
        }
    }

    /// Active servers the checks have up (HAProxy srv_act).
    uint32_t ActiveUp() const
    {
        uint32_t n = 0;
        for (uint32_t i = 0; i < m_c.servers; ++i)
        {
            dp_sched_server_info_t info{};
            n += dp_sched_get_server(m_pool, i, &info) == 0 && info.usable;
        }
        return n;
    }

    /// A request answered with a 503 now (every attempt failed, or no usable server).
    void Failed()
    {
        m_r.failed++;
        m_r.failures.Add(0, Simulator::Now().GetSeconds(), 1.0, kFailed);
    }

    void Attempt(uint64_t k, uint32_t server, uint32_t attempt, bool direct)
    {
        const LbBackend& b = *m_backends[server];
        // The attempt holds a connection slot on its server until it ends
        // (sess_change_server): leastconn sees it.
        dp_sched_conn_opened(m_pool, server, nullptr);
        if (b.IsAlive())
        {
            dp_sched_conn_closed(m_pool, server, 0, nullptr);
            m_r.served++;
            const double waitedMs = Simulator::Now().GetSeconds() * 1000.0 - 1000.0 * k / m_c.requestRate;
            // to the us: the arrival time k / rate is rounded to ns by the scheduler
            const double delayMs = std::max(0.0, std::round(waitedMs * 1000.0) / 1000.0);
            m_r.maxDelayMs = std::max(m_r.maxDelayMs, delayMs);
            m_r.servedDelay.Add(delayMs / 1000.0);
            Store(k, server);
            return;
        }
        const bool refused = b.HowDead() == LbBackend::Failure::Refuse;
        const Time failAfter = refused ? Time(0) : MilliSeconds(m_c.connectTimeoutMs);
        Simulator::Schedule(failAfter, &FailoverRun::OnFail, this, k, server, attempt, direct, refused);
    }

    /// back_handle_st_cer and stream_choose_redispatch (HAProxy 2.6.12).
    void OnFail(uint64_t k, uint32_t server, uint32_t attempt, bool direct, bool refused)
    {
        dp_sched_conn_closed(m_pool, server, 0, nullptr);
        if (attempt >= m_c.retries)
        {
            Failed();
            return;
        }
        if (attempt == 0)
        {
            m_r.retried++;
        }
        const uint32_t retry = attempt + 1; // s->conn_retries after its increment
        dp_sched_server_info_t info{};
        dp_sched_get_server(m_pool, server, &info);
        const uint32_t active = ActiveUp();
        const bool redispatch =
            m_c.redispatch &&
            (info.state != DP_SCHED_UP || RedispatchRetry(retry) || (!direct && active > 1 && !m_hashes));
        // The turn-around comes only after an error (not a connect timeout),
        // and only when the retry stays on the server or one active server
        // is left: min(timeout connect, 1 s).
        const uint32_t tar = m_c.connectTimeoutMs ? std::min<uint32_t>(m_c.connectTimeoutMs, 1000) : 1000;
        const Time turnAround = refused && (!redispatch || active <= 1) ? MilliSeconds(tar) : Time(0);
        if (!redispatch)
        {
            Simulator::Schedule(turnAround, &FailoverRun::Attempt, this, k, server, retry, direct);
            return;
        }
        if (m_redispatched.insert(k).second)
        {
            m_r.redispatched++;
        }
        Simulator::Schedule(turnAround, &FailoverRun::Redispatch, this, k, server, retry);
    }

    /// Whether retry number `retry` (1..retries) is one "option redispatch
    /// <interval>" names: stream_choose_redispatch's redispatch_after test
    /// (its C remainder is 0 exactly when the divisor's magnitude divides).
    bool RedispatchRetry(uint32_t retry) const
    {
        const int64_t after = m_c.redispatchAfter;
        const int64_t divisor = after > 0 ? after : int64_t(m_c.retries) + 1 + after;
        return after != 0 && retry % static_cast<uint64_t>(std::llabs(divisor)) == 0;
    }

    /// assign_server again with the failed server as the one to avoid; the
    /// persistence that sent the request there no longer applies (SF_DIRECT
    /// cleared).
    void Redispatch(uint64_t k, uint32_t failed, uint32_t retry)
    {
        std::string data;
        const dp_sched_key_t key = KeyOf(k, data);
        const int32_t s = dp_sched_pick_avoid(m_pool, &key, static_cast<int32_t>(failed), NowMs(), nullptr);
        if (s < 0)
        {
            Failed();
            return;
        }
        Attempt(k, static_cast<uint32_t>(s), retry, false);
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
    bool m_hashes = false;  ///< a hash algorithm (HAProxy BE_LB_KIND_HI): no immediate redispatch
    std::set<uint64_t> m_redispatched; ///< requests counted in redispatched
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
    for (const auto& [name, list] : std::vector<std::pair<const char*, const std::vector<uint32_t>*>>{
             {"weights", &c.weights},
             {"inter_ms", &c.interMs},
             {"fastinter_ms", &c.fastInterMs},
             {"downinter_ms", &c.downInterMs},
             {"rise", &c.rise},
             {"fall", &c.fall},
             {"checked", &c.checked}})
    {
        if (list->size() != 1 && list->size() != c.servers)
        {
            Bad(name, "has " + std::to_string(list->size()) + " values for " + std::to_string(c.servers) +
                          " servers (one for all, or one per server)");
        }
    }
    if (c.redispatch && c.retries > 0 && c.redispatchAfter < 0 &&
        int64_t(c.retries) + 1 + c.redispatchAfter == 0)
    {
        Bad("redispatch_after", std::to_string(c.redispatchAfter) + " with retries " + std::to_string(c.retries) +
                                    " names no retry (HAProxy 2.6 would take the retry count modulo 0)");
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
