// routertwin._core.run_redundant_pair: a failover on a redundant pair of
// ns-3 web switches (model/l7/helper/redundant-pair-testbed.h,
// RunRedundantPair), for the `webswitch_pair` kind.
#include "bindings.h"
#include "dict-config.h"
#include "distributions.h"
#include "redundant-pair-testbed.h"
#include "web-switch-profile.h"

#include <ns3/nstime.h>

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

RedundantPairRunConfig
FromDict(const py::dict& config)
{
    RedundantPairRunConfig c;
    bool profile = false;
    std::string sync = "profile", mode = "l7", forwarding = "nat", redundancy = "active_backup";
    double advertS = 0, linkMbps = 100, segmentMbps = 0, clockScale = 1;
    const std::map<std::string, Setter> table{
        {"profile",
         [&](auto& k, auto& v) {
             try
             {
                 c.pair.profile = LoadWebSwitchProfile(Str(k, v));
             }
             catch (const std::runtime_error& e)
             {
                 throw std::invalid_argument("key '" + k + "': " + e.what());
             }
             profile = true;
         }},
        {"mode", [&](auto& k, auto& v) { mode = Str(k, v); }},
        {"forwarding", [&](auto& k, auto& v) { forwarding = Str(k, v); }},
        {"redundancy", [&](auto& k, auto& v) { redundancy = Str(k, v); }},
        {"session_sync", [&](auto& k, auto& v) { sync = Str(k, v); }},
        {"advert_interval_s", [&](auto& k, auto& v) { advertS = Num(k, v); }},
        {"link_mbps", [&](auto& k, auto& v) { linkMbps = Num(k, v); }},
        {"segment_mbps", [&](auto& k, auto& v) { segmentMbps = Num(k, v); }},
        {"clock_scale", [&](auto& k, auto& v) { clockScale = Num(k, v); }},
        {"servers", [&](auto& k, auto& v) { c.pair.servers = Uint(k, v); }},
        {"kill_at_s", [&](auto& k, auto& v) { c.killAtS = Num(k, v); }},
        {"seed", [&](auto& k, auto& v) { c.seed = Uint(k, v); }},
        {"threads_per_vip", [&](auto& k, auto& v) { c.threadsPerVip = Uint(k, v); }},
        {"load_start_s", [&](auto& k, auto& v) { c.loadStartS = Num(k, v); }},
        {"load_path", [&](auto& k, auto& v) { c.loadPath = Str(k, v); }},
        {"window_s", [&](auto& k, auto& v) { c.windowS = Num(k, v); }},
        {"settle_s", [&](auto& k, auto& v) { c.settleS = Num(k, v); }},
        {"downloads", [&](auto& k, auto& v) { c.downloads = Uint(k, v); }},
        {"download_start_s", [&](auto& k, auto& v) { c.downloadStartS = Num(k, v); }},
        {"download_spacing_s", [&](auto& k, auto& v) { c.downloadSpacingS = Num(k, v); }},
        {"download_bytes", [&](auto& k, auto& v) { c.downloadBytes = Uint(k, v); }},
        {"timeline_bin_s", [&](auto& k, auto& v) { c.timelineBinS = Num(k, v); }},
    };
    Read(config, "", table);
    if (!profile)
    {
        throw std::invalid_argument("key 'profile': missing");
    }
    if (sync == "none" || sync == "persistence" || sync == "connections")
    {
        c.pair.profile.sessionSync = sync == "connections";
        c.pair.profile.persistenceSync = sync != "none";
    }
    else if (sync != "profile")
    {
        throw std::invalid_argument("key 'session_sync': profile, none, persistence or connections, not '" + sync + "'");
    }
    if (mode != "l4" && mode != "l7")
    {
        throw std::invalid_argument("key 'mode': l4 or l7, not '" + mode + "'");
    }
    if (forwarding != "nat" && forwarding != "dr")
    {
        throw std::invalid_argument("key 'forwarding': nat or dr, not '" + forwarding + "'");
    }
    if (redundancy != "active_backup" && redundancy != "active_active")
    {
        throw std::invalid_argument("key 'redundancy': active_backup or active_active, not '" + redundancy + "'");
    }
    c.pair.l4 = mode == "l7"            ? L4Forwarding::Off
                : forwarding == "nat" ? L4Forwarding::Nat
                                        : L4Forwarding::DirectRouting;
    c.pair.activeActive = redundancy == "active_active";
    if (advertS > 0)
    {
        c.pair.advertisementInterval = ns3::Seconds(advertS);
    }
    if (!(linkMbps > 0))
    {
        throw std::invalid_argument("key 'link_mbps': must be positive");
    }
    c.pair.linkRate = std::to_string(static_cast<uint64_t>(linkMbps * 1e6)) + "bps";
    if (segmentMbps > 0)
    {
        c.pair.segmentRate = std::to_string(static_cast<uint64_t>(segmentMbps * 1e6)) + "bps";
    }
    if (!(clockScale > 0))
    {
        throw std::invalid_argument("key 'clock_scale': must be positive");
    }
    c.pair.profile.clockHz *= clockScale;
    return c;
}

py::dict
ToDict(const RedundantPairRunResult& r)
{
    py::dict d;
    d["takeover_s"] = r.takeoverS;
    d["master_down_interval_s"] = r.masterDownIntervalS;
    d["closed_form_takeover_s"] = r.closedFormTakeoverS;
    d["requests_per_s_before"] = r.requestsPerSBefore;
    d["requests_per_s_after"] = r.requestsPerSAfter;
    d["open_at_death"] = r.openAtDeath;
    d["survived"] = r.survived;
    d["lost"] = r.lost;
    d["survivor_resets"] = r.survivorResets;
    d["sync_updates"] = r.syncSent;
    d["splice_mirrors"] = r.spliceMirrors;
    d["survivor_no_session"] = r.survivorNoSession;
    d["timeline_bin_s"] = r.timelineBinS;
    d["answers_per_bin"] = r.answersPerBin;
    d["survivor_resets_per_bin"] = r.survivorResetsPerBin;
    d["failed_per_bin"] = r.failedPerBin;
    d["answers"] = r.answers;
    d["failed_requests"] = r.failedRequests;
    // the closed-loop threads' cycle times in the two windows the rates
    // count (percentiles only of a window that has answers: an empty one's
    // 0 would read as a 0 us cycle), and the requests whose cycle spans
    // the death
    if (r.cycleBefore.Count() > 0)
        AddPercentiles(d, r.cycleBefore, "cycle_before");
    d["cycle_before_histogram"] = HistogramDict(r.cycleBefore);
    if (r.cycleAfter.Count() > 0)
        AddPercentiles(d, r.cycleAfter, "cycle_after");
    d["cycle_after_histogram"] = HistogramDict(r.cycleAfter);
    d["across_death"] = r.acrossDeath;
    if (r.acrossDeath > 0)
        d["across_death_max_us"] = r.acrossDeathMaxS * 1e6;
    return d;
}

} // namespace

void
BindL7Pair(py::module_& m)
{
    m.def(
        "run_redundant_pair",
        [](const py::dict& config) {
            const RedundantPairRunConfig c = FromDict(config);
            try
            {
                return ToDict(RunRedundantPair(c)); // GIL held: one ns-3 simulator per process
            }
            catch (const std::invalid_argument& e)
            {
                throw std::invalid_argument(std::string("redundant pair: ") + e.what());
            }
        },
        py::arg("config"),
        "Kills switch 0 of a redundant pair of ns-3 web switches under load and returns the takeover time, "
        "RFC 5798's closed form, the downloads open at the death that survived or were reset, and the "
        "closed-loop throughput before and after. Keys: bindings/bind_l7_pair.cc; unknown keys or bad values "
        "raise ValueError naming the key.");
}

} // namespace routertwin::bindings
