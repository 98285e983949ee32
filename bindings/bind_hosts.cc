// routertwin._core.run_tcp_path: one IxChariot transfer over a virtual L3
// path (model/hosts/helper/tcp-path-scenario.h documents every key).
#include "bindings.h"
#include "dict-config.h"
#include "distributions.h"
#include "tcp-path-scenario.h"

#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

py::dict
AsDict(const py::handle& v, const std::string& key)
{
    if (!py::isinstance<py::dict>(v))
    {
        throw std::invalid_argument("key '" + key + "': must be a dict");
    }
    return v.cast<py::dict>();
}

py::list
AsList(const py::handle& v, const std::string& key)
{
    if (!py::isinstance<py::list>(v))
    {
        throw std::invalid_argument("key '" + key + "': must be a list");
    }
    return v.cast<py::list>();
}

TcpPathConfig
FromDict(const py::dict& config)
{
    TcpPathConfig c;
    Read(config, "",
         {{"seed", [&](auto& k, auto& v) { c.seed = Uint(k, v); }},
          {"file_bytes", [&](auto& k, auto& v) { c.fileBytes = static_cast<uint64_t>(Num(k, v)); }},
          {"records", [&](auto& k, auto& v) { c.records = Uint(k, v); }},
          {"duration_s", [&](auto& k, auto& v) { c.durationS = Num(k, v); }},
          {"loss_bins", [&](auto& k, auto& v) { c.lossBins = Uint(k, v); }},
          {"tcp",
           [&](auto& k, auto& v) {
               auto& t = c.tcp;
               Read(AsDict(v, k), k + ".",
                    {{"congestion", [&](auto& k2, auto& x) { t.congestion = Str(k2, x); }},
                     {"mtu", [&](auto& k2, auto& x) { t.mtu = Uint(k2, x); }},
                     {"timestamps", [&](auto& k2, auto& x) { t.timestamps = Bool(k2, x); }},
                     {"sack", [&](auto& k2, auto& x) { t.sack = Bool(k2, x); }},
                     {"window_scaling", [&](auto& k2, auto& x) { t.windowScaling = Bool(k2, x); }},
                     {"snd_buf_bytes", [&](auto& k2, auto& x) { t.sndBufBytes = Uint(k2, x); }},
                     {"rcv_buf_bytes", [&](auto& k2, auto& x) { t.rcvBufBytes = Uint(k2, x); }},
                     {"initial_cwnd_segments", [&](auto& k2, auto& x) { t.initialCwndSegments = Uint(k2, x); }},
                     {"ack_every_segments", [&](auto& k2, auto& x) { t.ackEverySegments = Uint(k2, x); }},
                     {"delayed_ack_s", [&](auto& k2, auto& x) { t.delayedAckS = Num(k2, x); }},
                     {"min_rto_s", [&](auto& k2, auto& x) { t.minRtoS = Num(k2, x); }}});
           }},
          {"nodes",
           [&](auto& k, auto& v) {
               const py::list items = AsList(v, k);
               for (size_t i = 0; i < items.size(); ++i)
               {
                   PathNodeSpec n;
                   const std::string p = k + "[" + std::to_string(i) + "].";
                   Read(AsDict(items[i], p), p,
                        {{"name", [&](auto& k2, auto& x) { n.name = Str(k2, x); }},
                         {"type", [&](auto& k2, auto& x) { n.type = Str(k2, x); }},
                         {"cpu_per_packet_s", [&](auto& k2, auto& x) { n.cpuPerPacketS = Num(k2, x); }},
                         {"cpu_per_byte_s", [&](auto& k2, auto& x) { n.cpuPerByteS = Num(k2, x); }},
                         {"cpu_queue_packets", [&](auto& k2, auto& x) { n.cpuQueuePackets = Uint(k2, x); }},
                         {"latency_s", [&](auto& k2, auto& x) { n.latencyS = Num(k2, x); }},
                         {"nat",
                          [&](auto& k2, auto& x) {
                              const std::string s = Str(k2, x);
                              if (s != "none" && s != "dnat")
                              {
                                  throw std::invalid_argument("key '" + k2 + "': must be 'none' or 'dnat'");
                              }
                              n.dnat = s == "dnat";
                          }},
                         {"nat_prices_ns",
                          [&](auto& k2, auto& x) {
                              for (const auto& [name, price] : AsDict(x, k2))
                              {
                                  n.natPricesNs[py::cast<std::string>(name)] = Num(k2, price);
                              }
                          }}});
                   c.nodes.push_back(n);
               }
           }},
          {"links", [&](auto& k, auto& v) {
               const py::list items = AsList(v, k);
               for (size_t i = 0; i < items.size(); ++i)
               {
                   PathLinkSpec l;
                   const std::string p = k + "[" + std::to_string(i) + "].";
                   Read(AsDict(items[i], p), p,
                        {{"type", [&](auto& k2, auto& x) { l.type = Str(k2, x); }},
                         {"wire", [&](auto& k2, auto& x) { l.wire = Str(k2, x); }},
                         {"rate_bps", [&](auto& k2, auto& x) { l.rateBps = Num(k2, x); }},
                         {"frame_overhead_bytes", [&](auto& k2, auto& x) { l.frameOverheadBytes = Uint(k2, x); }},
                         {"per_frame_s", [&](auto& k2, auto& x) { l.perFrameS = Num(k2, x); }},
                         {"delay_s", [&](auto& k2, auto& x) { l.delayS = Num(k2, x); }},
                         {"queue_packets", [&](auto& k2, auto& x) { l.queuePackets = Uint(k2, x); }},
                         {"loss_rate", [&](auto& k2, auto& x) { l.lossRate = Num(k2, x); }}});
                   c.links.push_back(l);
               }
           }}});
    return c;
}

py::dict
ToDict(const TcpPathResult& r)
{
    py::dict d;
    d["record_seconds"] = r.recordSeconds;
    d["half_seconds"] = r.halfSeconds;
    d["half_bytes"] = r.halfBytes;
    d["duration_goodput_bps"] = r.durationGoodputBps;
    d["completed"] = r.completed;
    py::list servers;
    for (const auto& s : r.servers)
    {
        py::dict e;
        e["name"] = s.name;
        e["utilization"] = s.utilization;
        e["served"] = s.served;
        e["drops_queue_full"] = s.dropsQueueFull;
        e["drops_random_loss"] = s.dropsRandomLoss;
        e["drops_nat"] = s.dropsNat;
        e["max_queue"] = s.maxQueue;
        e["service_seconds_full"] = s.serviceSecondsFull;
        servers.append(e);
    }
    d["servers"] = servers;
    d["recoveries"] = r.recoveries;
    d["timeouts"] = r.timeouts;
    d["rtt_mean_s"] = r.rttMeanS;
    d["rtt_min_s"] = r.rttMinS;
    d["rtt_histogram"] = HistogramDict(r.rtt);
    AddPercentiles(d, r.rtt, "rtt"); // rtt_p50_us, rtt_p99_us, rtt_p999_us, rtt_max_us
    d["loss_timeline"] = LossTimelineDict(r.lossTimeline); // ports: the servers, in `servers` order
    d["retransmission_timeline"] = LossTimelineDict(r.retransmissionTimeline); // one port: the sender
    d["segment_bytes"] = r.segmentBytes;
    d["nat_connections"] = r.natConnections;
    d["nat_translated"] = r.natTranslated;
    d["nat_ns_per_packet"] = r.natNsPerPacket;
    d["nat_ops_per_packet"] = r.natOpsPerPacket;
    d["simulated_seconds"] = r.simulatedSeconds;
    return d;
}

} // namespace

void
BindHosts(py::module_& m)
{
    m.def(
        "run_tcp_path",
        [](const py::dict& config) {
            const TcpPathConfig c = FromDict(config);
            return ToDict(RunTcpPath(c)); // GIL held: one ns-3 simulator per process
        },
        py::arg("config"),
        "Runs IxChariot's Throughput.scr over a virtual L3 path on ns-3's TCP and returns its records and "
        "per-server figures. Keys: model/hosts/helper/tcp-path-scenario.h. Unknown keys or bad values raise "
        "ValueError naming the key.");
}

} // namespace routertwin::bindings
