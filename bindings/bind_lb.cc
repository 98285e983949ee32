// routertwin._core.run_lb: the L4 balancer scenario of
// model/lb/helper/lb-scenario.h (its header documents every key).
#include "bindings.h"
#include "dict-config.h"
#include "distributions.h"
#include "lb-ecmp.h"
#include "lb-failover.h"
#include "lb-remap.h"
#include "lb-scenario.h"
#include "lb-timed.h"
#include "dp_sched.h"

#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

py::dict
ToDict(const LbScenarioResult& r)
{
    py::dict d;
    d["offered_rate"] = r.offeredRate;
    d["completed_rate"] = r.completedRate;
    d["units_started"] = r.unitsStarted;
    d["units_completed"] = r.unitsCompleted;
    d["packets_per_unit"] = r.packetsPerUnit;
    d["cycles_per_unit"] = r.cyclesPerUnit;
    d["cycles_per_packet"] = r.cyclesPerPacket;
    d["delivered_pps"] = r.deliveredPps;
    d["delivered_bps"] = r.deliveredBitRate;
    d["ops_per_unit"] = r.opsPerUnit;
    d["cpu_mean_pct"] = r.cpuMeanPct;
    d["cpu_max_pct"] = r.cpuMaxPct;
    d["cpu_span_mean_pct"] = r.cpuSpanMeanPct;
    d["aging_cpu_mean_pct"] = r.agingCpuMeanPct;
    d["aging_cycles"] = r.agingCycles;
    d["core_utilization_pct"] = r.coreUtilizationPct;
    d["cpu_closed_form_pct"] = r.cpuClosedFormPct;
    d["bottleneck"] = r.bottleneck;
    d["drops"] = r.drops;
    d["legit_offered_rate"] = r.legitOfferedRate;
    d["legit_completed_rate"] = r.legitCompletedRate;
    d["cookies_sent"] = r.cookiesSent;
    d["cookies_valid"] = r.cookiesValid;
    d["icmp_frag_needed"] = r.icmpFragNeeded;
    d["icmp_frag_needed_used"] = r.icmpFragNeededUsed;
    d["connections_end"] = r.connectionsEnd;
    d["refused_full"] = r.refusedFull;
    d["fill_connections_per_core"] = r.fillConnectionsPerCore;
    d["max_concurrent"] = r.maxConcurrent;
    d["units_failed"] = r.unitsFailed;
    d["frames_to_servers"] = r.framesToServers;
    d["delivery_errors"] = r.deliveryErrors;
    d["trace_ipv6_connections_not_replayed"] = r.traceIpv6Connections;
    d["trace_ipv6_packets_not_replayed"] = r.traceIpv6Packets;
    d["expired"] = r.expired;
    d["time_wait_end"] = r.timeWaitEnd;
    d["occupancy_t_s"] = r.occupancyTimes;
    d["occupancy_connections"] = r.occupancyConnections;
    d["occupancy_time_wait"] = r.occupancyTimeWait;
    d["fill_validated"] = r.fillValidated;
    d["bytes_per_connection"] = r.bytesPerConnection;
    d["fill_cycles_per_connection"] = r.fillCyclesPerConnection;
    d["sim_events"] = r.simEvents;
    d["level"] = r.level;
    d["frames_measured"] = r.framesMeasured;
    d["mean_latency_s"] = r.meanLatencySeconds;
    d["mean_core_wait_s"] = r.meanCoreWaitSeconds;
    d["mean_core_service_s"] = r.meanCoreServiceSeconds;
    d["mean_port_wait_s"] = r.meanPortWaitSeconds;
    AddPercentiles(d, r.latency, "latency");
    d["latency_histogram"] = HistogramDict(r.latency);
    AddPercentiles(d, r.unitLatency, "unit_latency");
    d["unit_latency_histogram"] = HistogramDict(r.unitLatency);
    d["core_queue"] = QueueLengthDict(r.coreQueue);
    d["loss_timeline"] = LossTimelineDict(r.lossTimeline);
    // latency and drops per ingress port (LbPortMap), the
    // router's per-port shape so that distributions.py reads both alike
    py::list ports;
    for (size_t i = 0; i < r.portLatency.size(); ++i)
    {
        const LatencyHistogram& h = r.portLatency[i];
        py::dict p;
        p["rx_packets"] = h.Count();
        double dropped = 0;
        for (unsigned b = 0; b < r.lossTimeline.Bins(); ++b)
        {
            dropped += r.lossTimeline.At(static_cast<unsigned>(i), b);
        }
        p["dropped_packets"] = dropped;
        p["latency_avg_us"] = h.Count() > 0 ? r.portLatencySumSeconds[i] / h.Count() * 1e6 : 0.0;
        AddPercentiles(p, h, "latency");
        p["latency_histogram"] = HistogramDict(h);
        ports.append(p);
    }
    d["ports"] = ports;
    return d;
}

/// One dp_sched pool driven request by request from Python: the twin side of
/// `routertwin lab haproxy`, which replays the lab's own workload (arrival
/// times, client addresses, service delays) against the C scheduler HAProxy's
/// algorithms are modelled by.
class SchedPool
{
  public:
    SchedPool(const std::string& algo, const std::vector<uint32_t>& weights, const std::vector<bool>& backup,
              uint64_t seed, const py::dict& options)
    {
        const int a = dp_sched_algo_from_name(algo.c_str());
        if (a < 0)
        {
            throw std::invalid_argument("key 'scheduler': unknown dp_sched algorithm '" + algo + "'");
        }
        if (weights.empty() || (!backup.empty() && backup.size() != weights.size()))
        {
            throw std::invalid_argument("key 'weights': one weight per server (and one backup flag each)");
        }
        dp_sched_config_t c{};
        c.algo = static_cast<uint32_t>(a);
        c.max_servers = static_cast<uint32_t>(weights.size());
        c.seed = seed;
        SchedHashOptions hash; // a uri/hdr pool's hash-type function, avalanche and balance options
        ForEachKey(options, [&](const std::string& key, const py::handle& v) {
            if (!hash.Take(key, ToConfigValue(key, v)))
            {
                throw std::invalid_argument("key '" + key + "': not a scheduler option (lb-remap.h SchedHashOptions)");
            }
        });
        hash.Apply(c);
        mem_.resize(dp_sched_memory_size(&c));
        s_ = dp_sched_create(mem_.data(), mem_.size(), &c);
        if (!s_)
        {
            throw std::invalid_argument("key 'weights': the scheduler refused the pool");
        }
        for (uint32_t i = 0; i < weights.size(); ++i)
        {
            dp_sched_server_t srv{};
            srv.weight = weights[i];
            srv.flags = !backup.empty() && backup[i] ? DP_SCHED_SRV_BACKUP : 0u;
            if (dp_sched_set_server(s_, i, &srv, nullptr) != 0)
            {
                throw std::invalid_argument("key 'weights': the scheduler refused weight " +
                                            std::to_string(weights[i]) + " of server " + std::to_string(i));
            }
        }
        dp_sched_build(s_, 0, nullptr);
    }

    /// The server for a new connection from src_ip:src_port (IPv4, host
    /// order), or -1 when none is usable. `hash` is the caller's key hash;
    /// `data` what uri and hdr hash (the request target, the header's value;
    /// None: none, as in mode tcp). `avoid` >= 0: a redispatch's pick,
    /// avoiding that server as HAProxy's assign_server does
    /// (dp_sched_pick_avoid).
    int32_t Pick(uint32_t srcIp, uint16_t srcPort, uint32_t hash, uint64_t nowMs,
                 const std::optional<std::string>& data, int32_t avoid)
    {
        dp_sched_key_t k{};
        k.src_ip = srcIp;
        k.src_port = srcPort;
        k.dst_port = 80;
        k.proto = 6;
        k.hash = hash;
        if (data)
        {
            k.data = data->data();
            k.data_len = static_cast<uint32_t>(data->size());
        }
        const int32_t id = dp_sched_pick_avoid(s_, &k, avoid, nowMs, nullptr);
        if (id == DP_SCHED_EINVAL)
        {
            throw std::invalid_argument("avoid: no server " + std::to_string(avoid) + " in this pool");
        }
        return id < 0 ? -1 : id;
    }

    void Opened(uint32_t id)
    {
        Check(dp_sched_conn_opened(s_, id, nullptr), "conn_opened");
    }

    void Closed(uint32_t id)
    {
        Check(dp_sched_conn_closed(s_, id, 0, nullptr), "conn_closed");
    }

    void SetState(uint32_t id, const std::string& state, uint64_t nowMs)
    {
        for (int st = 0; st < DP_SCHED__STATES; ++st)
        {
            if (state == dp_sched_state_name(static_cast<dp_sched_state_t>(st)))
            {
                Check(dp_sched_set_state(s_, id, static_cast<dp_sched_state_t>(st), nowMs, nullptr), "set_state");
                dp_sched_build(s_, nowMs, nullptr);
                return;
            }
        }
        throw std::invalid_argument("unknown server state '" + state + "'");
    }

  private:
    static void Check(int rc, const char* what)
    {
        if (rc != 0)
        {
            throw std::invalid_argument(std::string("dp_sched ") + what + " failed (" + std::to_string(rc) + ")");
        }
    }

    std::vector<uint8_t> mem_;
    dp_sched_t* s_ = nullptr;
};

} // namespace

void
BindLb(py::module_& m)
{
    m.def(
        "run_lb",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            const LbScenarioConfig c = LbScenarioConfig::FromKeys(keys);
            return ToDict(RunLbScenario(c)); // GIL held: one ns-3 simulator per process
        },
        py::arg("config"),
        "Runs the Tolly testers against an L4 balancer (C core on ns-3 application cores) and returns "
        "its metrics. Keys and units: model/lb/helper/lb-scenario.h. Unknown keys or bad values raise "
        "ValueError naming the key.");
    m.def("lb_config_keys", &LbScenarioConfig::KeyNames, "Every key run_lb accepts.");
    m.def(
        "lb_scheduler_names",
        []() {
            std::vector<std::string> names;
            for (int a = 0; a < DP_SCHED__COUNT; ++a)
            {
                names.emplace_back(dp_sched_algo_name(static_cast<dp_sched_algo_t>(a)));
            }
            return names;
        },
        "The dp_sched algorithm names (IPVS's and HAProxy's) a balancer or a remap case accepts.");
    m.def(
        "lb_remap",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            const LbRemapResult r = RunLbRemap(keys);
            py::dict d;
            d["keys"] = r.keys;
            d["moved"] = r.moved;
            d["redirected"] = r.redirected;
            d["on_failed"] = r.onFailed;
            d["keyed"] = r.keyed;
            d["table_changes"] = r.tableChanges;
            d["table_size"] = r.tableSize;
            d["after_per_server"] = r.afterPerServer;
            return d;
        },
        py::arg("config"),
        "Connections remapped when one server of a pool fails (model/lb/helper/lb-remap.h documents the keys).");
    m.def(
        "lb_ecmp",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            LbEcmpResult r;
            {
                py::gil_scoped_release release;
                r = RunLbEcmp(keys);
            }
            py::dict d;
            d["connections"] = r.connections;
            d["moved"] = r.moved;
            d["on_changed"] = r.onChanged;
            d["broken_local"] = r.brokenLocal;
            d["broken_local_sloppy"] = r.brokenLocalSloppy;
            d["broken_shared"] = r.brokenShared;
            d["broken_maglev"] = r.brokenMaglev;
            d["hash_space"] = r.hashSpace;
            d["hash_space_moved"] = r.hashSpaceMoved;
            d["buckets"] = r.buckets;
            d["buckets_moved"] = r.bucketsMoved;
            d["buckets_busy"] = r.bucketsBusy;
            d["terminated"] = r.terminated;
            d["before"] = r.before;
            d["after"] = r.after;
            d["hash_space_before"] = r.hashSpaceBefore;
            d["hash_space_after"] = r.hashSpaceAfter;
            d["buckets_before"] = r.bucketsBefore;
            d["buckets_after"] = r.bucketsAfter;
            return d;
        },
        py::arg("config"),
        "N balancer instances behind ECMP, one fails or one is added: connections moved and broken with "
        "per-instance state, shared state and Maglev (model/lb/helper/lb-ecmp.h documents the keys).");
    m.def(
        "run_lb_failover",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            const LbFailoverConfig c = LbFailoverConfig::FromKeys(keys);
            LbFailoverResult r;
            {
                py::gil_scoped_release release;
                r = RunLbFailover(c);
            }
            py::dict d;
            d["down_at_s"] = r.downAtS;
            d["up_at_s"] = r.upAtS;
            d["detection_ms"] = r.detectionMs;
            d["window_min_ms"] = r.windowMinMs;
            d["window_max_ms"] = r.windowMaxMs;
            d["requests"] = r.requests;
            d["served"] = r.served;
            d["failed"] = r.failed;
            d["retried"] = r.retried;
            d["redispatched"] = r.redispatched;
            d["to_dead_server"] = r.toDeadServer;
            d["max_delay_ms"] = r.maxDelayMs;
            d["failover_ms"] = r.failoverMs;
            d["master_down_interval_ms"] = r.masterDownIntervalMs;
            d["lost_in_failover"] = r.lostInFailover;
            d["sticky_moved"] = r.stickyMoved;
            d["sticky_clients_moved"] = r.stickyClientsMoved;
            d["failure_timeline"] = LossTimelineDict(r.failures);
            AddPercentiles(d, r.servedDelay, "served_delay");
            d["served_delay_histogram"] = HistogramDict(r.servedDelay);
            return d;
        },
        py::arg("config"),
        "Health-check detection, requests failed with and without option redispatch / retries, and balancer "
        "failover (model/lb/helper/lb-failover.h documents the keys). Unknown keys or bad values raise "
        "ValueError naming the key.");
    m.def(
        "lb_timed",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            const LbTimedConfig c = LbTimedConfig::FromKeys(keys);
            LbTimedResult r;
            {
                py::gil_scoped_release release;
                r = RunLbTimed(c);
            }
            py::dict d;
            d["requests"] = r.requests;
            d["served"] = r.served;
            d["queued"] = r.queued;
            d["queue_timeouts"] = r.queueTimeouts;
            d["refused_maxqueue"] = r.refusedMaxqueue;
            d["refused_no_server"] = r.refusedNoServer;
            d["redispatched_full"] = r.redispatchedFull;
            d["broken"] = r.broken;
            d["refused_frontend"] = r.refusedFrontend;
            d["queue_wait_mean_ms"] = r.queueWaitMeanMs;
            AddPercentiles(d, r.queueWait, "queue_wait");
            d["queue_wait_histogram"] = HistogramDict(r.queueWait);
            d["refusal_timeline"] = LossTimelineDict(r.refusals);
            d["before_requests"] = r.beforeRequests;
            d["before_refused_frontend"] = r.beforeRefusedFrontend;
            d["before_queued"] = r.beforeQueued;
            d["before_accept_queue"] = r.beforeAcceptQueue;
            d["frontend_held_max"] = r.frontendHeldMax;
            d["accept_queue_max"] = r.acceptQueueMax;
            d["backend_queue_max"] = r.backendQueueMax;
            d["server_queue_max"] = r.serverQueueMax;
            d["before_active"] = r.beforeActive;
            d["after_active"] = r.afterActive;
            d["before_new_per_s"] = r.beforeNewPerS;
            d["after_new_per_s"] = r.afterNewPerS;
            d["before_503_per_s"] = r.before503PerS;
            d["after_503_per_s"] = r.after503PerS;
            d["n0"] = r.n0;
            d["drain_s"] = r.drainS;
            d["draining_new"] = r.drainingNew;
            d["samples"] = r.samples;
            return d;
        },
        py::arg("config"),
        "A pool under Poisson connection arrivals with lifetimes while a server is drained, removed or added, "
        "with HAProxy's maxconn, queues, maxqueue and timeout queue (model/lb/helper/lb-timed.h documents the "
        "keys). Unknown keys or bad values raise ValueError naming the key.");
    m.def("lb_timed_config_keys", &LbTimedConfig::KeyNames, "Every key lb_timed accepts.");
    m.def(
        "lb_timed_check",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            LbTimedConfig::FromKeys(keys);
        },
        py::arg("config"),
        "Checks lb_timed keys without running: ValueError \"key 'K': ...\" for the first bad one.");
    py::class_<SchedPool>(m, "SchedPool",
                          "A dp_sched pool driven connection by connection (routertwin lab haproxy's twin side).")
        .def(py::init<const std::string&, const std::vector<uint32_t>&, const std::vector<bool>&, uint64_t,
                      const py::dict&>(),
             py::arg("scheduler"), py::arg("weights"), py::arg("backup") = std::vector<bool>{},
             py::arg("seed") = 1, py::arg("options") = py::dict(),
             "options: a pool's scheduler keys (runners/lb/balancer.py Pool.sched_keys(): hash_function, "
             "hash_avalanche, uri_whole, uri_path_only, uri_len, uri_depth, hdr_domain_only)")
        .def("pick", &SchedPool::Pick, py::arg("src_ip"), py::arg("src_port") = 0, py::arg("hash") = 0,
             py::arg("now_ms") = 0, py::arg("data") = py::none(), py::arg("avoid") = -1,
             "Server id for a new connection, -1 when none is usable; data: the URI (uri) or header value (hdr); "
             "avoid: the server a redispatch leaves (HAProxy assign_server), -1 for none.")
        .def("opened", &SchedPool::Opened, py::arg("server"))
        .def("closed", &SchedPool::Closed, py::arg("server"))
        .def("set_state", &SchedPool::SetState, py::arg("server"), py::arg("state"), py::arg("now_ms") = 0,
             "up | down | draining | disabled");
    m.def("lb_failover_config_keys", &LbFailoverConfig::KeyNames, "Every key run_lb_failover accepts.");
    m.def(
        "lb_failover_check",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
            LbFailoverConfig::FromKeys(keys);
        },
        py::arg("config"),
        "Checks run_lb_failover keys without running: ValueError \"key 'K': ...\" for the first bad one.");
}

} // namespace routertwin::bindings
