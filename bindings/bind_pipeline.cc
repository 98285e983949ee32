// routertwin._core.run_pipeline: the forwarding scenario of
// model/pipeline/helper/forwarding-scenario.h (its header documents every key).
#include "bindings.h"
#include "distributions.h"
#include "dict-config.h"
#include "forwarding-scenario.h"
#include "pcap-trace.h"
#include "traffic-profile.h"

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
    AddPercentiles(d, r.latency);
    d["latency_histogram"] = HistogramDict(r.latency);
    d["core_queue"] = QueueLengthDict(r.coreQueue);
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
    d["loss_timeline"] = LossTimelineDict(r.lossTimeline);
    d["sim_events"] = r.simEvents;
    d["mean_frame_bytes"] = r.meanFrameBytes;
    d["line_rate_pps"] = r.lineRatePps;
    d["trace_flows"] = r.traceFlows;
    d["trace_loops"] = r.traceLoops;
    d["flows_started"] = r.flowsStarted;
    d["flows_active_mean"] = r.flowsActiveMean;
    d["flows_active_max"] = r.flowsActiveMax;
    return d;
}

} // namespace

void
BindPipeline(py::module_& m)
{
    m.def(
        "run_pipeline",
        [](const py::dict& config) {
            const std::map<std::string, ConfigValue> keys = ConfigKeys(config);
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
    m.def("frame_mix_names", &FrameSizeMix::Names, "The named frame-size mixes (traffic-profile.h).");
    m.def(
        "frame_mix",
        [](const std::string& name) { return FrameSizeMix::Named(name).parts; },
        py::arg("name"),
        "A named frame-size mix as [(frame bytes incl. FCS, weight), ...]; ValueError for an unknown name.");
    m.def(
        "trace_summary",
        [](const std::string& path) {
            PcapTrace trace(path, 1u << 20);
            const PcapTrace::Summary s = trace.Scan();
            py::dict d;
            d["packets"] = s.packets;
            d["first_s"] = static_cast<double>(s.firstNs) * 1e-9;
            d["span_s"] = static_cast<double>(s.lastNs - s.firstNs) * 1e-9;
            d["mean_frame_bytes"] = s.meanFrameBytes;
            d["frame_sizes"] = s.frameSizes;
            d["ip_sizes"] = s.ipSizes;
            d["flows"] = trace.DistinctFlows();
            return d;
        },
        py::arg("path"),
        "Reads a pcap or pcapng trace once (streamed): packets, first timestamp and span (s), mean frame "
        "bytes, {frame bytes: packets}, {IP bytes: packets}, distinct 5-tuples. ValueError naming the file and packet index "
        "for a malformed or truncated file.");
}

} // namespace routertwin::bindings
