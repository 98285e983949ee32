// routertwin._core.run_lb: the L4 balancer scenario of
// model/lb/helper/lb-scenario.h (its header documents every key).
#include "bindings.h"
#include "dict-config.h"
#include "lb-failover.h"
#include "lb-remap.h"
#include "lb-scenario.h"
#include "dp_sched.h"

#include <pybind11/stl.h>

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
    d["connections_end"] = r.connectionsEnd;
    d["refused_full"] = r.refusedFull;
    d["fill_connections_per_core"] = r.fillConnectionsPerCore;
    d["max_concurrent"] = r.maxConcurrent;
    d["units_failed"] = r.unitsFailed;
    d["frames_to_servers"] = r.framesToServers;
    d["delivery_errors"] = r.deliveryErrors;
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
    return d;
}

} // namespace

void
BindLb(py::module_& m)
{
    m.def(
        "run_lb",
        [](const py::dict& config) {
            std::map<std::string, ConfigValue> keys;
            ForEachKey(config, [&](const std::string& key, const py::handle& v) {
                keys.emplace(key, ToConfigValue(key, v));
            });
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
            std::map<std::string, ConfigValue> keys;
            ForEachKey(config, [&](const std::string& key, const py::handle& v) {
                keys.emplace(key, ToConfigValue(key, v));
            });
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
        "run_lb_failover",
        [](const py::dict& config) {
            std::map<std::string, ConfigValue> keys;
            ForEachKey(config, [&](const std::string& key, const py::handle& v) {
                keys.emplace(key, ToConfigValue(key, v));
            });
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
            d["failover_ms"] = r.failoverMs;
            d["master_down_interval_ms"] = r.masterDownIntervalMs;
            d["lost_in_failover"] = r.lostInFailover;
            d["sticky_moved"] = r.stickyMoved;
            d["sticky_clients_moved"] = r.stickyClientsMoved;
            return d;
        },
        py::arg("config"),
        "Health-check detection, requests failed with and without option redispatch / retries, and balancer "
        "failover (model/lb/helper/lb-failover.h documents the keys). Unknown keys or bad values raise "
        "ValueError naming the key.");
    m.def("lb_failover_config_keys", &LbFailoverConfig::KeyNames, "Every key run_lb_failover accepts.");
    m.def(
        "lb_failover_check",
        [](const py::dict& config) {
            std::map<std::string, ConfigValue> keys;
            ForEachKey(config, [&](const std::string& key, const py::handle& v) {
                keys.emplace(key, ToConfigValue(key, v));
            });
            LbFailoverConfig::FromKeys(keys);
        },
        py::arg("config"),
        "Checks run_lb_failover keys without running: ValueError \"key 'K': ...\" for the first bad one.");
}

} // namespace routertwin::bindings
