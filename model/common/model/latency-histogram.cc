#include "latency-histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace routertwin
{

namespace bh = boost::histogram;

LatencyHistogram::Hist
LatencyHistogram::Make()
{
    // 10 decades from 1 ns to 10 s.
    const unsigned bins = 10 * kBinsPerDecade;
    return bh::make_histogram_with(bh::dense_storage<double>(), Axis(bins, kLowSeconds, kHighSeconds));
}

LatencyHistogram::LatencyHistogram()
    : m_hist(Make())
{
}

void
LatencyHistogram::Add(double seconds, double weight)
{
    if (!(weight > 0))
    {
        return;
    }
    m_hist(seconds, bh::weight(weight));
    if (m_count == 0)
    {
        m_min = m_max = seconds;
    }
    else
    {
        m_min = std::min(m_min, seconds);
        m_max = std::max(m_max, seconds);
    }
    m_count += weight;
}

LatencyHistogram&
LatencyHistogram::operator+=(const LatencyHistogram& other)
{
    if (other.m_count == 0)
    {
        return *this;
    }
    m_hist += other.m_hist;
    if (m_count == 0)
    {
        m_min = other.m_min;
        m_max = other.m_max;
    }
    else
    {
        m_min = std::min(m_min, other.m_min);
        m_max = std::max(m_max, other.m_max);
    }
    m_count += other.m_count;
    return *this;
}

std::vector<LatencyHistogram::Bin>
LatencyHistogram::Bins() const
{
    std::vector<Bin> out;
    for (auto&& x : bh::indexed(m_hist, bh::coverage::all))
    {
        if (*x == 0)
        {
            continue;
        }
        double lo = x.bin().lower();
        double hi = x.bin().upper();
        // Under- and overflow: their open ends are the exact extremes.
        if (x.index() < 0)
        {
            lo = m_min;
            hi = kLowSeconds;
        }
        else if (x.index() >= static_cast<int>(m_hist.axis().size()))
        {
            lo = kHighSeconds;
            hi = m_max;
        }
        out.push_back(Bin{lo, hi, *x});
    }
    return out;
}

double
LatencyHistogram::Quantile(double q) const
{
    if (!(q >= 0 && q <= 1))
    {
        throw std::invalid_argument("quantile must be in [0, 1]");
    }
    if (m_count == 0)
    {
        return 0.0;
    }
    if (q == 0)
    {
        return m_min;
    }
    const double target = q * m_count;
    double before = 0;
    double value = m_max;
    for (const Bin& b : Bins())
    {
        if (before + b.count >= target)
        {
            value = b.lower + (target - before) / b.count * (b.upper - b.lower);
            break;
        }
        before += b.count;
    }
    return std::clamp(value, m_min, m_max);
}

double
LatencyHistogram::BinWidthAt(double seconds)
{
    if (seconds < kLowSeconds)
    {
        return kLowSeconds;
    }
    const double k = std::floor(std::log10(seconds / kLowSeconds) * kBinsPerDecade);
    const double lo = kLowSeconds * std::pow(10.0, k / kBinsPerDecade);
    return lo * (std::pow(10.0, 1.0 / kBinsPerDecade) - 1.0);
}

LossTimeline::LossTimeline(unsigned ports, unsigned bins, double spanSeconds, std::vector<std::string> reasons)
    : m_ports(ports),
      m_bins(bins),
      m_span(spanSeconds),
      m_reasons(std::move(reasons)),
      m_hist(bh::make_histogram_with(bh::dense_storage<double>(),
                                     PortAxis(0, static_cast<int>(std::max(ports, 1u))),
                                     TimeAxis(std::max(bins, 1u), 0.0,
                                              spanSeconds > 0 ? spanSeconds : 1.0),
                                     PortAxis(0, static_cast<int>(std::max<size_t>(m_reasons.size(), 1)))))
{
    if (ports < 1 || bins < 1 || !(spanSeconds > 0) || m_reasons.empty())
    {
        throw std::invalid_argument("loss timeline: ports, bins and reasons must be >= 1 and span > 0");
    }
}

void
LossTimeline::Add(unsigned port, double t, double n, unsigned reason)
{
    if (port >= m_ports || reason >= m_reasons.size())
    {
        throw std::out_of_range("loss timeline: port or reason out of range");
    }
    if (!(n > 0))
    {
        return;
    }
    // Drops while the queues drain after the tester stopped go to the last bin.
    const double last = m_span * (1.0 - 0.5 / m_bins);
    m_hist(static_cast<int>(port), std::clamp(t, 0.0, last), static_cast<int>(reason), bh::weight(n));
}

LossTimeline&
LossTimeline::operator+=(const LossTimeline& other)
{
    if (other.m_ports != m_ports || other.m_bins != m_bins || other.m_span != m_span ||
        other.m_reasons != m_reasons)
    {
        throw std::invalid_argument("loss timelines of different shapes cannot be added");
    }
    m_hist += other.m_hist;
    return *this;
}

double
LossTimeline::At(unsigned port, unsigned bin) const
{
    double s = 0;
    for (unsigned r = 0; r < m_reasons.size(); ++r)
    {
        s += At(port, bin, r);
    }
    return s;
}

double
LossTimeline::At(unsigned port, unsigned bin, unsigned reason) const
{
    if (port >= m_ports || bin >= m_bins || reason >= m_reasons.size())
    {
        throw std::out_of_range("loss timeline: port, bin or reason out of range");
    }
    return m_hist.at(static_cast<int>(port), static_cast<int>(bin), static_cast<int>(reason));
}

double
LossTimeline::Total() const
{
    double s = 0;
    for (auto&& x : bh::indexed(m_hist))
    {
        s += *x;
    }
    return s;
}

std::vector<double>
LossTimeline::ReasonTotals() const
{
    std::vector<double> totals(m_reasons.size(), 0.0);
    for (auto&& x : bh::indexed(m_hist))
    {
        totals[static_cast<size_t>(x.index(2))] += *x;
    }
    return totals;
}

} // namespace routertwin
