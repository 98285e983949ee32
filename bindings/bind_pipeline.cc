// routertwin._core.run_pipeline: the forwarding scenario of
// model/pipeline/helper/forwarding-scenario.h (its header documents every key).
#include "bindings.h"
#include "dict-config.h"
#include "forwarding-scenario.h"

#include <pybind11/stl.h>

#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

py::dict
ToDict(const ForwardingScenarioResult& r)
{
    py::dict d;
    d["offered_pps"] = r.offeredPps;
    d["tx_packets"] = r.txPackets;
    d["rx_packets"] = r.rxPackets;
    d["lost_packets"] = r.lostPackets;
    d["loss_pct"] = r.lossPct;
    d["forwarded_pps"] = r.forwardedPps;
    d["forwarded_bps"] = r.forwardedBitRate;
    d["latency_min_us"] = r.latencyMinUs;
    d["latency_avg_us"] = r.latencyAvgUs;
    d["latency_max_us"] = r.latencyMaxUs;
    d["sequence_errors"] = r.sequenceErrors;
    d["service_cycles"] = r.serviceCyclesMean;
    d["service_us"] = r.serviceUsMean;
    d["core_runs"] = r.coreRuns;
    d["ops_per_packet"] = r.opsPerPacket;
    d["utilization"] = r.utilization;
    d["core_utilization"] = r.coreUtilization;
    d["bottleneck"] = r.bottleneck;
    d["bottleneck_utilization"] = r.bottleneckUtilization;
    d["drops"] = r.drops;
    d["sim_events"] = r.simEvents;
    return d;
}

} // namespace

void
BindPipeline(py::module_& m)
{
    m.def(
        "run_pipeline",
        [](const py::dict& config) {
            std::map<std::string, ConfigValue> keys;
            ForEachKey(config, [&](const std::string& key, const py::handle& v) {
                keys.emplace(key, ToConfigValue(key, v));
            });
            const ForwardingScenarioConfig c = ForwardingScenarioConfig::FromKeys(keys);
            // The GIL stays held: ns3::Simulator is a process-wide singleton,
            // so two runs from Python threads must not overlap.
            return ToDict(RunForwardingScenario(c));
        },
        py::arg("config"),
        "Runs an RFC 2544 tester through a multi-core forwarding pipeline (ns-3) and returns "
        "its metrics. Keys and units: model/pipeline/helper/forwarding-scenario.h and docs/model.md. "
        "Unknown keys or bad values raise ValueError naming the key.");
    m.def("pipeline_config_keys", &ForwardingScenarioConfig::KeyNames,
          "Every key run_pipeline accepts.");
}

} // namespace routertwin::bindings
