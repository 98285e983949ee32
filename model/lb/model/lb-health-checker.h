// Health checks of a balancer's server pool in simulated time: LbBackend is
// a server that can be killed (its process gone: probes refused at once;
// or its host gone: probes unanswered until the timeout) and revived;
// LbHealthChecker probes every backend on HAProxy's schedule and applies
// HAProxy's rise/fall rules, all of it the C core's dp_health (see
// core/include/dp/dp_health.h for each rule and its source), and moves
// servers in and out of a dp_sched pool (server down, and back through
// slow start when the server has one).
//
// Probes are timed ns-3 events against the backend models, not packets: a
// probe started at t ends at t + the backend's ResponseDelay when it is
// alive or refuses (RST), at t + the check timeout when it is silent. What
// a probe sees is decided by the backend's state when the probe starts.
#ifndef ROUTERTWIN_LB_HEALTH_CHECKER_H
#define ROUTERTWIN_LB_HEALTH_CHECKER_H

#include "dp_health.h"
#include "dp_sched.h"

#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/ptr.h>
#include <ns3/traced-callback.h>

#include <cstdint>
#include <string>
#include <vector>

namespace routertwin
{

/// A real server as its health checks and requests see it.
class LbBackend : public ns3::Object
{
  public:
    enum class Failure
    {
        Refuse, ///< the service is gone, the host answers: connection refused (RST)
        Silent, ///< the host is gone: nothing answers, probes and connects time out
    };

    static ns3::TypeId GetTypeId();

    /// Kills the server now.
    void Kill(Failure how);
    /// Brings it back now.
    void Revive();
    bool IsAlive() const { return m_alive; }
    Failure HowDead() const { return m_failure; }
    ns3::Time GetResponseDelay() const { return m_responseDelay; }
    uint32_t GetHttpStatus() const { return m_httpStatus; }
    const std::string& GetBody() const { return m_body; }

  private:
    bool m_alive = true;
    Failure m_failure = Failure::Refuse;
    ns3::Time m_responseDelay;
    uint32_t m_httpStatus = 200;
    std::string m_body;
};

class LbHealthChecker : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();

    /// The backends to check, in pool order (server id = index), and the
    /// pool they belong to (may be null: states are only traced). The
    /// pool's servers must be ids 0..n-1.
    void Watch(const std::vector<ns3::Ptr<LbBackend>>& backends, dp_sched_t* pool);

    /// Gives one server its own check timers (HAProxy's inter, fastinter,
    /// downinter, rise and fall are per-server options; 0 keeps the
    /// Attribute's value) and its own probe timeout (0: the Attribute's).
    /// Call before Start.
    void SetServerTimers(uint32_t server, uint32_t interMs, uint32_t fastInterMs, uint32_t downInterMs,
                         uint32_t rise, uint32_t fall, uint32_t timeoutMs = 0);

    /// A server without HAProxy's `check` keyword is never probed: it stays
    /// up whatever happens to it, and it takes no place in the spread of
    /// the first checks (start_checks counts CHK_ST_CONFIGURED servers
    /// only). Call before Start.
    void SetServerChecked(uint32_t server, bool checked);

    /// Starts checking at `at`, each server's first probe spread over the
    /// check phase (dp_health_first_check_ms, the spread minimum taken over
    /// every server's own timers). Throws std::invalid_argument when the
    /// Attributes or a server's timers make no valid dp_health configuration.
    void Start(ns3::Time at);

    bool IsUp(uint32_t server) const { return m_state.at(server).up != 0; }
    const dp_health_t& GetState(uint32_t server) const { return m_state.at(server); }
    /// The configuration the Attributes describe.
    dp_health_config_t GetConfig() const;
    /// Server i's configuration: the Attributes' with its own timers.
    dp_health_config_t GetServerConfig(uint32_t server) const;

    /// (server, up, time): a server left (up = false) or rejoined the pool.
    using StateChangeCallback = void (*)(uint32_t, bool, ns3::Time);
    /// (server, dp_health_result_t, end time): one probe's result.
    using ProbeCallback = void (*)(uint32_t, uint32_t, ns3::Time);

  private:
    void Probe(uint32_t server);
    bool IsUnchecked(uint32_t server) const;
    void Finish(uint32_t server, dp_health_result_t result);

    std::string m_kind;
    ns3::Time m_inter, m_fastInter, m_downInter, m_timeout, m_maxSpread;
    uint32_t m_rise = DP_HEALTH_DEFAULT_RISE, m_fall = DP_HEALTH_DEFAULT_FALL;
    bool m_startDown = false;
    std::string m_expect;
    uint32_t m_statusMin = 0, m_statusMax = 0;

    struct Timers
    {
        uint32_t inter = 0, fastInter = 0, downInter = 0, rise = 0, fall = 0, timeout = 0;
    };
    std::vector<Timers> m_timers; ///< per server, 0 = the Attribute's value
    std::vector<bool> m_unchecked; ///< per server: true = no `check`, never probed
    std::vector<ns3::Ptr<LbBackend>> m_backends;
    dp_sched_t* m_pool = nullptr;
    std::vector<dp_health_t> m_state;
    ns3::TracedCallback<uint32_t, bool, ns3::Time> m_stateChange;
    ns3::TracedCallback<uint32_t, uint32_t, ns3::Time> m_probe;
};

} // namespace routertwin

#endif
