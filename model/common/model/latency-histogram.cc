#include "latency-histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

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

LossTimeline::LossTimeline(unsigned ports, unsigned bins, double spanSeconds)
    : m_ports(ports),
      m_bins(bins),
      m_span(spanSeconds),
      m_hist(bh::make_histogram_with(bh::dense_storage<double>(),
                                     PortAxis(0, static_cast<int>(std::max(ports, 1u))),
                                     TimeAxis(std::max(bins, 1u), 0.0,
                                              spanSeconds > 0 ? spanSeconds : 1.0)))
{
    if (ports < 1 || bins < 1 || !(spanSeconds > 0))
    {
        throw std::invalid_argument("loss timeline: ports and bins must be >= 1 and span > 0");
    }
}

void
LossTimeline::Add(unsigned port, double t, double n)
{
    if (port >= m_ports || !(n > 0))
    {
        return;
    }
    // Drops while the queues drain after the tester stopped go to the last bin.
    const double last = m_span * (1.0 - 0.5 / m_bins);
    m_hist(static_cast<int>(port), std::clamp(t, 0.0, last), bh::weight(n));
}

LossTimeline&
LossTimeline::operator+=(const LossTimeline& other)
{
    if (other.m_ports != m_ports || other.m_bins != m_bins || other.m_span != m_span)
    {
        throw std::invalid_argument("loss timelines of different shapes cannot be added");
    }
    m_hist += other.m_hist;
    return *this;
}

double
LossTimeline::At(unsigned port, unsigned bin) const
{
    if (port >= m_ports || bin >= m_bins)
    {
        throw std::out_of_range("loss timeline: port or bin out of range");
    }
    return m_hist.at(static_cast<int>(port), static_cast<int>(bin));
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

} // namespace routertwin
