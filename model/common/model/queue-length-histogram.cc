#include "queue-length-histogram.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

namespace routertwin
{

namespace bh = boost::histogram;

QueueLengthHistogram::QueueLengthHistogram(unsigned maxLength)
    : m_maxLength(maxLength),
      m_hist(bh::make_histogram_with(bh::dense_storage<double>(), Axis(0, 1)))
{
    // the overflow bin, MaxLength() + 1, must be an int
    if (maxLength >= static_cast<unsigned>(std::numeric_limits<int>::max()))
    {
        throw std::invalid_argument("QueueLengthHistogram: maxLength must be below 2^31 - 1");
    }
}

void
QueueLengthHistogram::Add(unsigned length, double seconds)
{
    if (!(seconds > 0))
    {
        return;
    }
    const unsigned bin = std::min(length, m_maxLength + 1);
    const auto size = static_cast<unsigned>(m_hist.axis().size());
    if (bin >= size)
    {
        // grow to at least twice the size in one step (a zero weight adds
        // nothing): a length that creeps up one at a time, as an overloaded
        // queue's does, would otherwise copy the storage at every new length
        const unsigned to = std::min(std::max(bin, 2 * size), m_maxLength + 1);
        m_hist(static_cast<int>(to), bh::weight(0.0));
    }
    m_hist(static_cast<int>(bin), bh::weight(seconds));
    m_seconds += seconds;
    m_area += length * seconds;
    m_max = std::max(m_max, length);
}

QueueLengthHistogram&
QueueLengthHistogram::operator+=(const QueueLengthHistogram& other)
{
    if (other.m_maxLength != m_maxLength)
    {
        if (other.m_seconds <= 0)
        {
            return *this;
        }
        if (m_seconds > 0)
        {
            throw std::invalid_argument("QueueLengthHistogram: merging histograms of different MaxLength()");
        }
        *this = other;
        return *this;
    }
    m_hist += other.m_hist; // growing axes: the longer one's bins are kept
    m_seconds += other.m_seconds;
    m_area += other.m_area;
    m_max = std::max(m_max, other.m_max);
    return *this;
}

double
QueueLengthHistogram::Probability(unsigned n) const
{
    if (m_seconds <= 0 || n > m_maxLength || n >= static_cast<unsigned>(m_hist.axis().size()))
    {
        return 0.0;
    }
    return m_hist.at(m_hist.axis().index(static_cast<int>(n))) / m_seconds;
}

std::vector<QueueLengthHistogram::Bin>
QueueLengthHistogram::Bins() const
{
    std::vector<Bin> out;
    for (auto&& x : bh::indexed(m_hist, bh::coverage::all))
    {
        if (*x > 0)
        {
            out.push_back(Bin{static_cast<unsigned>(x.bin()), *x});
        }
    }
    return out;
}

unsigned
QueueLengthHistogram::Quantile(double q) const
{
    if (!(q >= 0 && q <= 1))
    {
        throw std::invalid_argument("quantile must be in [0, 1]");
    }
    if (m_seconds <= 0)
    {
        return 0;
    }
    const double target = q * m_seconds;
    double below = 0;
    for (const Bin& b : Bins())
    {
        below += b.seconds;
        // a relative slack for the sum's rounding: q = 1 must reach the last bin
        if (below >= target * (1 - 1e-12))
        {
            return b.length > m_maxLength ? m_max : b.length;
        }
    }
    return m_max;
}

void
QueueOccupancy::LeaveUntil(double t)
{
    // every packet that left by t, in leave order: the length drops at each
    const size_t end = m_leaves.size();
    while (m_head < end && m_leaves[m_head] <= t)
    {
        const double leave = m_leaves[m_head];
        m_hist.Add(static_cast<unsigned>(end - m_head), leave - m_last);
        ++m_head;
        m_last = leave;
    }
    if (m_head == end)
    {
        m_leaves.clear(); // empty: start again at the front
        m_head = 0;
    }
    else if (m_head >= 1024)
    {
        m_leaves.erase(m_leaves.begin(), m_leaves.begin() + static_cast<std::ptrdiff_t>(m_head));
        m_head = 0;
    }
}

void
QueueOccupancy::Enter(double enter, double leave)
{
    if (!m_started)
    {
        m_started = true;
        m_last = enter;
    }
    LeaveUntil(enter);
    m_hist.Add(static_cast<unsigned>(m_leaves.size() - m_head), enter - m_last);
    m_last = enter;
    m_leaves.push_back(leave);
    for (size_t i = m_leaves.size() - 1; i > m_head && m_leaves[i - 1] > leave; --i)
    {
        std::swap(m_leaves[i - 1], m_leaves[i]);
    }
}

void
QueueOccupancy::Finish()
{
    if (m_head < m_leaves.size())
    {
        LeaveUntil(m_leaves.back());
    }
}

} // namespace routertwin
