// Distributions of a run as Python values (issue 15): the percentiles of a
// LatencyHistogram as flat metrics, its non-empty bins for plots, and a
// LossTimeline as one row of drops per port.
#ifndef ROUTERTWIN_BINDINGS_DISTRIBUTIONS_H
#define ROUTERTWIN_BINDINGS_DISTRIBUTIONS_H

#include "latency-histogram.h"
#include "queue-length-histogram.h"

#include <pybind11/pybind11.h>

#include <string>

namespace routertwin::bindings
{

/// Adds latency_p50_us, latency_p99_us, latency_p999_us to d (0 when empty).
inline void
AddPercentiles(pybind11::dict& d, const LatencyHistogram& h)
{
    d["latency_p50_us"] = h.Quantile(0.5) * 1e6;
    d["latency_p99_us"] = h.Quantile(0.99) * 1e6;
    d["latency_p999_us"] = h.Quantile(0.999) * 1e6;
}

/// {"count", "bins": [[lower_us, upper_us, count], ...]} (non-empty bins).
inline pybind11::dict
HistogramDict(const LatencyHistogram& h)
{
    pybind11::dict d;
    d["count"] = h.Count();
    pybind11::list bins;
    for (const LatencyHistogram::Bin& b : h.Bins())
    {
        bins.append(pybind11::make_tuple(b.lower * 1e6, b.upper * 1e6, b.count));
    }
    d["bins"] = bins;
    return d;
}

/// Adds <prefix>_p50_us, _p99_us, _p999_us, _max_us of h to d.
inline void
AddPercentiles(pybind11::dict& d, const LatencyHistogram& h, const std::string& prefix)
{
    d[(prefix + "_p50_us").c_str()] = h.Quantile(0.5) * 1e6;
    d[(prefix + "_p99_us").c_str()] = h.Quantile(0.99) * 1e6;
    d[(prefix + "_p999_us").c_str()] = h.Quantile(0.999) * 1e6;
    d[(prefix + "_max_us").c_str()] = h.Max() * 1e6;
}

/// {"seconds", "mean", "p50", "p99", "p999", "max", "bins": [[length,
/// seconds], ...]} (lengths with time at them; MaxLength() + 1 = the overflow
/// bin, which the fabric's delays never reach).
inline pybind11::dict
QueueLengthDict(const QueueLengthHistogram& h)
{
    pybind11::dict d;
    d["seconds"] = h.Seconds();
    d["mean"] = h.Mean();
    d["p50"] = h.Quantile(0.5);
    d["p99"] = h.Quantile(0.99);
    d["p999"] = h.Quantile(0.999);
    d["max"] = h.Max();
    pybind11::list bins;
    for (const QueueLengthHistogram::Bin& b : h.Bins())
    {
        bins.append(pybind11::make_tuple(b.length, b.seconds));
    }
    d["bins"] = bins;
    return d;
}

/// {"bin_s", "ports": [[drops of bin 0, 1, ...] per port]}, and, when the
/// timeline keeps reasons apart, "reasons": {name: [[drops per bin] per
/// port]} for each reason with a drop (VPP-style names).
inline pybind11::dict
LossTimelineDict(const LossTimeline& t)
{
    auto rows = [&t](auto at) {
        pybind11::list ports;
        for (unsigned p = 0; p < t.Ports(); ++p)
        {
            pybind11::list row;
            for (unsigned b = 0; b < t.Bins(); ++b)
            {
                row.append(at(p, b));
            }
            ports.append(row);
        }
        return ports;
    };
    pybind11::dict d;
    d["bin_s"] = t.BinSeconds();
    d["ports"] = rows([&t](unsigned p, unsigned b) { return t.At(p, b); });
    if (t.Reasons().size() > 1)
    {
        pybind11::dict reasons;
        const std::vector<double> totals = t.ReasonTotals();
        for (unsigned r = 0; r < t.Reasons().size(); ++r)
        {
            if (totals[r] > 0)
            {
                reasons[t.Reasons()[r].c_str()] = rows([&t, r](unsigned p, unsigned b) { return t.At(p, b, r); });
            }
        }
        d["reasons"] = reasons;
    }
    return d;
}

} // namespace routertwin::bindings

#endif
