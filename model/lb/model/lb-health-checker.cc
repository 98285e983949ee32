#include "lb-health-checker.h"

#include <ns3/boolean.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <stdexcept>

namespace routertwin
{

NS_OBJECT_ENSURE_REGISTERED(LbBackend);
NS_OBJECT_ENSURE_REGISTERED(LbHealthChecker);

ns3::TypeId
LbBackend::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("routertwin::LbBackend")
            .SetParent<ns3::Object>()
            .AddConstructor<LbBackend>()
            .AddAttribute("ResponseDelay",
                          "Time from a probe's start to the answer or refusal (assumption: 0.2 ms, a LAN "
                          "round trip plus the server's accept)",
                          ns3::TimeValue(ns3::MicroSeconds(200)),
                          ns3::MakeTimeAccessor(&LbBackend::m_responseDelay),
                          ns3::MakeTimeChecker())
            .AddAttribute("HttpStatus",
                          "Status of the check page while alive",
                          ns3::UintegerValue(200),
                          ns3::MakeUintegerAccessor(&LbBackend::m_httpStatus),
                          ns3::MakeUintegerChecker<uint32_t>(100, 599))
            .AddAttribute("Body",
                          "Body of the check page while alive (content checks search it)",
                          ns3::StringValue("ready"),
                          ns3::MakeStringAccessor(&LbBackend::m_body),
                          ns3::MakeStringChecker());
    return tid;
}

void
LbBackend::Kill(Failure how)
{
    m_alive = false;
    m_failure = how;
}

void
LbBackend::Revive()
{
    m_alive = true;
}

ns3::TypeId
LbHealthChecker::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("routertwin::LbHealthChecker")
            .SetParent<ns3::Object>()
            .AddConstructor<LbHealthChecker>()
            .AddAttribute("Kind",
                          "Check kind: ping, tcp, http (option httpchk) or content (http-check expect string)",
                          ns3::StringValue("tcp"),
                          ns3::MakeStringAccessor(&LbHealthChecker::m_kind),
                          ns3::MakeStringChecker())
            .AddAttribute("Inter",
                          "HAProxy inter: interval while fully up (default 2000 ms)",
                          ns3::TimeValue(ns3::MilliSeconds(DP_HEALTH_DEFAULT_INTER_MS)),
                          ns3::MakeTimeAccessor(&LbHealthChecker::m_inter),
                          ns3::MakeTimeChecker())
            .AddAttribute("FastInter",
                          "HAProxy fastinter: interval in transition or unchecked; 0 = Inter",
                          ns3::TimeValue(ns3::Time(0)),
                          ns3::MakeTimeAccessor(&LbHealthChecker::m_fastInter),
                          ns3::MakeTimeChecker())
            .AddAttribute("DownInter",
                          "HAProxy downinter: interval while fully down; 0 = Inter",
                          ns3::TimeValue(ns3::Time(0)),
                          ns3::MakeTimeAccessor(&LbHealthChecker::m_downInter),
                          ns3::MakeTimeChecker())
            .AddAttribute("Timeout",
                          "HAProxy timeout check: an unanswered probe fails after it; 0 = Inter",
                          ns3::TimeValue(ns3::Time(0)),
                          ns3::MakeTimeAccessor(&LbHealthChecker::m_timeout),
                          ns3::MakeTimeChecker())
            .AddAttribute("MaxSpreadChecks",
                          "HAProxy max-spread-checks: cap of the check phase; 0 = none",
                          ns3::TimeValue(ns3::Time(0)),
                          ns3::MakeTimeAccessor(&LbHealthChecker::m_maxSpread),
                          ns3::MakeTimeChecker())
            .AddAttribute("Rise",
                          "Consecutive passes to come up",
                          ns3::UintegerValue(DP_HEALTH_DEFAULT_RISE),
                          ns3::MakeUintegerAccessor(&LbHealthChecker::m_rise),
                          ns3::MakeUintegerChecker<uint32_t>(1, DP_HEALTH_MAX_COUNT))
            .AddAttribute("Fall",
                          "Consecutive failures to go down",
                          ns3::UintegerValue(DP_HEALTH_DEFAULT_FALL),
                          ns3::MakeUintegerAccessor(&LbHealthChecker::m_fall),
                          ns3::MakeUintegerChecker<uint32_t>(1, DP_HEALTH_MAX_COUNT))
            .AddAttribute("StartDown",
                          "Start down at health 0 (in the pool after Rise passes) instead of HAProxy's "
                          "up-at-health-rise",
                          ns3::BooleanValue(false),
                          ns3::MakeBooleanAccessor(&LbHealthChecker::m_startDown),
                          ns3::MakeBooleanChecker())
            .AddAttribute("Expect",
                          "Content checks: the string the body must contain",
                          ns3::StringValue("ready"),
                          ns3::MakeStringAccessor(&LbHealthChecker::m_expect),
                          ns3::MakeStringChecker())
            .AddAttribute("StatusMin",
                          "HTTP checks: lowest accepted status; 0 with StatusMax 0 = 200..399",
                          ns3::UintegerValue(0),
                          ns3::MakeUintegerAccessor(&LbHealthChecker::m_statusMin),
                          ns3::MakeUintegerChecker<uint32_t>(0, 599))
            .AddAttribute("StatusMax",
                          "HTTP checks: highest accepted status; 0 = 399",
                          ns3::UintegerValue(0),
                          ns3::MakeUintegerAccessor(&LbHealthChecker::m_statusMax),
                          ns3::MakeUintegerChecker<uint32_t>(0, 599))
            .AddTraceSource("StateChange",
                            "A server left (up = false) or rejoined the pool",
                            ns3::MakeTraceSourceAccessor(&LbHealthChecker::m_stateChange),
                            "routertwin::LbHealthChecker::StateChangeCallback")
            .AddTraceSource("Probe",
                            "A probe's result (dp_health_result_t) at its end",
                            ns3::MakeTraceSourceAccessor(&LbHealthChecker::m_probe),
                            "routertwin::LbHealthChecker::ProbeCallback");
    return tid;
}

void
LbHealthChecker::Watch(const std::vector<ns3::Ptr<LbBackend>>& backends, dp_sched_t* pool)
{
    m_backends = backends;
    m_pool = pool;
}

dp_health_config_t
LbHealthChecker::GetConfig() const
{
    static const char* const kinds[] = {"ping", "tcp", "http", "content"};
    dp_health_config_t c;
    dp_health_config_default(&c, DP_HEALTH_TCP);
    c.kind = DP_HEALTH__KIND_COUNT; // refused by dp_health_init unless named below
    for (uint32_t k = 0; k < DP_HEALTH__KIND_COUNT; ++k)
    {
        if (m_kind == kinds[k])
        {
            c.kind = k;
        }
    }
    c.inter_ms = static_cast<uint32_t>(m_inter.GetMilliSeconds());
    c.fastinter_ms = static_cast<uint32_t>(m_fastInter.GetMilliSeconds());
    c.downinter_ms = static_cast<uint32_t>(m_downInter.GetMilliSeconds());
    c.timeout_ms = static_cast<uint32_t>(m_timeout.GetMilliSeconds());
    c.rise = static_cast<uint16_t>(m_rise);
    c.fall = static_cast<uint16_t>(m_fall);
    c.start = m_startDown ? DP_HEALTH_START_DOWN : DP_HEALTH_START_UP;
    c.status_min = static_cast<uint16_t>(m_statusMin);
    c.status_max = static_cast<uint16_t>(m_statusMax);
    if (m_expect.size() <= DP_HEALTH_MAX_EXPECT)
    {
        c.expect_len = static_cast<uint32_t>(m_expect.size());
        for (size_t i = 0; i < m_expect.size(); ++i)
        {
            c.expect[i] = static_cast<uint8_t>(m_expect[i]);
        }
    }
    return c;
}

void
LbHealthChecker::SetServerTimers(uint32_t server, uint32_t interMs, uint32_t fastInterMs, uint32_t downInterMs,
                                 uint32_t rise, uint32_t fall, uint32_t timeoutMs)
{
    if (m_timers.size() <= server)
    {
        m_timers.resize(server + 1);
    }
    m_timers[server] = Timers{interMs, fastInterMs, downInterMs, rise, fall, timeoutMs};
}

void
LbHealthChecker::SetServerChecked(uint32_t server, bool checked)
{
    if (m_unchecked.size() <= server)
    {
        m_unchecked.resize(server + 1, false);
    }
    m_unchecked[server] = !checked;
}

bool
LbHealthChecker::IsUnchecked(uint32_t server) const
{
    return server < m_unchecked.size() && m_unchecked[server];
}

dp_health_config_t
LbHealthChecker::GetServerConfig(uint32_t server) const
{
    dp_health_config_t c = GetConfig();
    if (server < m_timers.size())
    {
        const Timers& t = m_timers[server];
        c.inter_ms = t.inter ? t.inter : c.inter_ms;
        c.fastinter_ms = t.fastInter ? t.fastInter : c.fastinter_ms;
        c.downinter_ms = t.downInter ? t.downInter : c.downinter_ms;
        c.rise = t.rise ? static_cast<uint16_t>(t.rise) : c.rise;
        c.fall = t.fall ? static_cast<uint16_t>(t.fall) : c.fall;
        c.timeout_ms = t.timeout ? t.timeout : c.timeout_ms;
    }
    return c;
}

void
LbHealthChecker::Start(ns3::Time at)
{
    const uint32_t n = static_cast<uint32_t>(m_backends.size());
    std::vector<dp_health_config_t> all(n);
    std::vector<dp_health_config_t> checked; // the servers start_checks counts, in pool order
    for (uint32_t i = 0; i < n; ++i)
    {
        all[i] = GetServerConfig(i);
        if (!IsUnchecked(i))
        {
            checked.push_back(all[i]);
        }
    }
    // HAProxy spreads the first checks over the smallest initial interval
    // of all checked servers (checks.c start_checks).
    const uint32_t minInter = dp_health_spread_min_inter(checked.data(), static_cast<uint32_t>(checked.size()));
    const uint64_t start = static_cast<uint64_t>(at.GetMilliSeconds());
    m_state.assign(n, dp_health_t{});
    uint32_t pos = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        const dp_health_config_t& c = all[i];
        const uint32_t own = dp_health_initial_interval_ms(&c);
        const uint64_t first =
            dp_health_first_check_ms(start, pos, static_cast<uint32_t>(checked.size()), minInter, own,
                                     static_cast<uint32_t>(m_maxSpread.GetMilliSeconds()));
        if (dp_health_init(&m_state[i], &c, start, first) != 0)
        {
            throw std::invalid_argument("health check: invalid configuration (kind '" + m_kind +
                                        "', inter, rise, fall or expect)");
        }
        if (IsUnchecked(i))
        {
            // no check: the server is up for good (HAProxy: "no check" in
            // its stats, never marked down)
            m_state[i].up = 1;
            continue;
        }
        ++pos;
        if (m_pool && c.start == DP_HEALTH_START_DOWN)
        {
            dp_sched_set_state(m_pool, i, DP_SCHED_DOWN, start, nullptr);
        }
        ns3::Simulator::Schedule(ns3::MilliSeconds(static_cast<int64_t>(first)) - ns3::Simulator::Now(),
                                 &LbHealthChecker::Probe, this, i);
    }
}

void
LbHealthChecker::Probe(uint32_t server)
{
    const LbBackend& b = *m_backends[server];
    const dp_health_config_t& c = m_state[server].cfg;
    dp_health_result_t r;
    ns3::Time took = b.GetResponseDelay();
    if (b.IsAlive())
    {
        const std::string& body = b.GetBody();
        r = dp_health_classify(&c, 1, 0, b.GetHttpStatus(), reinterpret_cast<const uint8_t*>(body.data()),
                               static_cast<uint32_t>(body.size()), nullptr);
    }
    else if (b.HowDead() == LbBackend::Failure::Refuse)
    {
        r = dp_health_classify(&c, 1, 1, 0, nullptr, 0, nullptr);
    }
    else
    {
        r = dp_health_classify(&c, 0, 0, 0, nullptr, 0, nullptr);
        took = ns3::MilliSeconds(dp_health_timeout_ms(&c));
    }
    ns3::Simulator::Schedule(took, &LbHealthChecker::Finish, this, server, r);
}

void
LbHealthChecker::Finish(uint32_t server, dp_health_result_t result)
{
    dp_health_t& h = m_state[server];
    // dp_health counts in ms; the probe's end is rounded down to the ms the
    // way HAProxy's ticks are.
    const uint64_t now = static_cast<uint64_t>(ns3::Simulator::Now().GetMilliSeconds());
    const int change = dp_health_report(&h, result, now, nullptr);
    m_probe(server, static_cast<uint32_t>(result), ns3::Simulator::Now());
    if (change != DP_HEALTH_NO_CHANGE)
    {
        if (m_pool)
        {
            dp_health_apply_to_sched(change, m_pool, server, now, nullptr);
        }
        m_stateChange(server, change == DP_HEALTH_WENT_UP, ns3::Simulator::Now());
    }
    ns3::Simulator::Schedule(ns3::MilliSeconds(static_cast<int64_t>(h.next_check_ms)) - ns3::Simulator::Now(),
                             &LbHealthChecker::Probe, this, server);
}

} // namespace routertwin
