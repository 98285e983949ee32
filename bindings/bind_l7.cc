// routertwin._core.run_webbench_testbed: the NCTU testbed at scale on the
// ns-3 web switch (model/l7/helper/web-switch-testbed.h documents every key).
#include "bindings.h"
#include "dict-config.h"
#include "distributions.h"
#include "web-switch-profile.h"
#include "web-switch-testbed.h"

#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

WebBenchTestbedConfig
FromDict(const py::dict& config)
{
    WebBenchTestbedConfig c;
    bool profile = false;
    Read(config, "",
         {{"profile",
           [&](auto& k, auto& v) {
               try
               {
                   c.profile = LoadWebSwitchProfile(Str(k, v));
               }
               catch (const std::runtime_error& e)
               {
                   throw std::invalid_argument("key '" + k + "': " + e.what());
               }
               profile = true;
           }},
          {"mode", [&](auto& k, auto& v) { c.mode = Str(k, v); }},
          {"forwarding", [&](auto& k, auto& v) { c.forwarding = Str(k, v); }},
          {"http11", [&](auto& k, auto& v) { c.http11 = Bool(k, v); }},
          {"rules", [&](auto& k, auto& v) { c.rules = Uint(k, v); }},
          {"cookie_method", [&](auto& k, auto& v) { c.cookieMethod = Str(k, v); }},
          {"client_hosts", [&](auto& k, auto& v) { c.clientHosts = Uint(k, v); }},
          {"threads_per_host", [&](auto& k, auto& v) { c.threadsPerHost = Uint(k, v); }},
          {"servers", [&](auto& k, auto& v) { c.servers = Uint(k, v); }},
          {"files",
           [&](auto& k, auto& v) {
               if (!py::isinstance<py::list>(v))
               {
                   throw std::invalid_argument("key '" + k + "': must be a list");
               }
               const py::list items = v.template cast<py::list>();
               for (size_t i = 0; i < items.size(); ++i)
               {
                   const std::string p = k + "[" + std::to_string(i) + "].";
                   if (!py::isinstance<py::dict>(items[i]))
                   {
                       throw std::invalid_argument("key '" + p + "': must be a dict");
                   }
                   WebBenchFileClass f;
                   Read(items[i].cast<py::dict>(), p,
                        {{"name", [&](auto& k2, auto& x) { f.name = Str(k2, x); }},
                         {"bytes", [&](auto& k2, auto& x) { f.bytes = Uint(k2, x); }},
                         {"share", [&](auto& k2, auto& x) { f.share = Num(k2, x); }},
                         {"group", [&](auto& k2, auto& x) { f.group = Str(k2, x); }}});
                   c.files.push_back(f);
               }
           }},
          {"url_prefix", [&](auto& k, auto& v) { c.urlPrefix = Str(k, v); }},
          {"request_bytes", [&](auto& k, auto& v) { c.requestBytes = Uint(k, v); }},
          {"response_header_bytes", [&](auto& k, auto& v) { c.responseHeaderBytes = Uint(k, v); }},
          {"client_cpu_per_request_s", [&](auto& k, auto& v) { c.clientCpuPerRequestS = Num(k, v); }},
          {"client_cpu_per_connection_s", [&](auto& k, auto& v) { c.clientCpuPerConnectionS = Num(k, v); }},
          {"server_cpu_per_request_s", [&](auto& k, auto& v) { c.serverCpuPerRequestS = Num(k, v); }},
          {"server_cpu_per_connection_s", [&](auto& k, auto& v) { c.serverCpuPerConnectionS = Num(k, v); }},
          {"host_link_bps", [&](auto& k, auto& v) { c.hostLinkBps = Num(k, v); }},
          {"uplink_bps", [&](auto& k, auto& v) { c.uplinkBps = Num(k, v); }},
          {"frame_overhead_bytes", [&](auto& k, auto& v) { c.frameOverheadBytes = Uint(k, v); }},
          {"mss_bytes", [&](auto& k, auto& v) { c.mssBytes = Uint(k, v); }},
          {"ack_every_segments", [&](auto& k, auto& v) { c.ackEverySegments = Uint(k, v); }},
          {"l2_latency_s", [&](auto& k, auto& v) { c.l2LatencyS = Num(k, v); }},
          {"host_round_trip_s", [&](auto& k, auto& v) { c.hostRoundTripS = Num(k, v); }},
          {"initial_cwnd_segments", [&](auto& k, auto& v) { c.initialCwndSegments = Uint(k, v); }},
          {"receive_window_bytes", [&](auto& k, auto& v) { c.receiveWindowBytes = Uint(k, v); }},
          {"warmup_s", [&](auto& k, auto& v) { c.warmupS = Num(k, v); }},
          {"duration_s", [&](auto& k, auto& v) { c.durationS = Num(k, v); }},
          {"seed", [&](auto& k, auto& v) { c.seed = Uint(k, v); }},
          {"arrivals", [&](auto& k, auto& v) { c.arrivals = Str(k, v); }},
          {"offered_rps", [&](auto& k, auto& v) { c.offeredRps = Num(k, v); }},
          {"burst_mean_requests", [&](auto& k, auto& v) { c.burstMeanRequests = Num(k, v); }},
          {"burst_peak_ratio", [&](auto& k, auto& v) { c.burstPeakRatio = Num(k, v); }},
          {"mmpp_rate_ratio", [&](auto& k, auto& v) { c.mmppRateRatio = Num(k, v); }},
          {"mmpp_high_fraction", [&](auto& k, auto& v) { c.mmppHighFraction = Num(k, v); }},
          {"mmpp_cycle_s", [&](auto& k, auto& v) { c.mmppCycleS = Num(k, v); }},
          {"popularity", [&](auto& k, auto& v) { c.popularity = Str(k, v); }},
          {"zipf_exponent", [&](auto& k, auto& v) { c.zipfExponent = Num(k, v); }},
          {"drain_s", [&](auto& k, auto& v) { c.drainS = Num(k, v); }},
          {"trace_file", [&](auto& k, auto& v) { c.traceFile = Str(k, v); }},
          {"trace_rescale", [&](auto& k, auto& v) { c.traceRescale = Bool(k, v); }},
          {"syn_backlog_limit_s", [&](auto& k, auto& v) { c.synBacklogLimitS = Num(k, v); }},
          {"loss_bins", [&](auto& k, auto& v) { c.lossBins = Uint(k, v); }}});
    if (!profile)
    {
        throw std::invalid_argument("key 'profile': missing");
    }
    return c;
}

py::dict
ToDict(const WebBenchTestbedResult& r)
{
    py::dict d;
    d["requests"] = r.requests;
    d["requests_per_s"] = r.requestsPerS;
    d["latency_ms"] = r.latencyMs;
    d["response_mbps"] = r.responseMbps;
    d["switch_utilization"] = r.switchUtilization;
    d["switch_cycles_per_request"] = r.switchCyclesPerRequest;
    d["switch_packets_per_request"] = r.switchPacketsPerRequest;
    d["connection_sides_per_request"] = r.connectionSidesPerRequest;
    d["redirects_per_request"] = r.redirectsPerRequest;
    d["rules_per_request"] = r.rulesPerRequest;
    d["cookie_hits_per_request"] = r.cookieHitsPerRequest;
    d["cookies_inserted_per_request"] = r.cookiesInsertedPerRequest;
    d["cookies_learned_per_request"] = r.cookiesLearnedPerRequest;
    d["utilization"] = r.utilization;
    d["drops"] = r.drops;
    d["events"] = r.events;
    if (r.offered > 0)
    {
        // open loop: the requests arrived in the window and their response times
        d["offered"] = r.offered;
        d["answered"] = r.answered;
        d["refused"] = r.refused;
        d["unanswered"] = r.unanswered;
    }
    // the distribution behind latency_ms: the closed loop's cycle times or
    // the open loop's response times
    AddPercentiles(d, r.responseTimes, "latency");
    d["latency_histogram"] = HistogramDict(r.responseTimes);
    d["loss_timeline"] = LossTimelineDict(r.lossTimeline); // one port: the switch, by reason
    return d;
}

py::list
HttpTraceList(const std::vector<HttpTraceConnection>& conns)
{
    py::list out;
    for (const HttpTraceConnection& c : conns)
    {
        py::list requests;
        for (const HttpTraceRequest& q : c.requests)
        {
            py::dict d;
            d["method"] = q.method;
            d["target"] = q.target;
            d["host"] = q.host;
            d["version"] = "1." + std::to_string(q.versionMinor);
            d["keep_alive"] = q.keepAlive;
            d["head_bytes"] = q.headBytes;
            d["request_bytes"] = q.requestBytes;
            d["response_bytes"] = q.responseBytes;
            d["packet"] = q.packet;
            d["think_ns"] = q.thinkNs;
            requests.append(d);
        }
        py::dict d;
        d["syn_ns"] = c.synNs;
        d["requests"] = requests;
        out.append(d);
    }
    return out;
}

} // namespace

void
BindL7(py::module_& m)
{
    m.def(
        "read_http_trace", [](const std::string& path) { return HttpTraceList(ReadHttpTrace(path)); },
        py::arg("path"),
        "The HTTP requests of a pcap or pcapng capture, connection by connection, as the web switch's trace replay "
        "sends them (model/l7/helper/web-switch-testbed.h ReadHttpTrace): [{syn_ns, requests: [{method, target, "
        "host, version, keep_alive, head_bytes, request_bytes, response_bytes, packet, think_ns}]}]. A malformed file or "
        "request head raises ValueError naming the file and the packet.");
    m.def(
        "run_webbench_testbed",
        [](const py::dict& config) {
            const WebBenchTestbedConfig c = FromDict(config);
            try
            {
                return ToDict(RunWebBenchTestbed(c)); // GIL held: one ns-3 simulator per process
            }
            catch (const std::invalid_argument& e)
            {
                throw std::invalid_argument(std::string("webbench testbed: ") + e.what());
            }
        },
        py::arg("config"),
        "Runs seed 003's WebBench testbed (client PCs, L2 switch, gigabit uplink, servers) on the ns-3 web switch "
        "and returns rates, latency, utilizations and drops. Keys: model/l7/helper/web-switch-testbed.h. Unknown "
        "keys or bad values raise ValueError naming the key.");
}

} // namespace routertwin::bindings
