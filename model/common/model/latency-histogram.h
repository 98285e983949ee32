// Distributions of a run, beyond min/avg/max (issue 15): a latency histogram
// with percentiles, and drops counted per port and per time bin, both on
// Boost.Histogram so that they merge across ports, runs and sweep workers
// (`+=` adds two histograms of the same axes).
//
// LatencyHistogram: a log-spaced axis from 1 ns to 10 s, BinsPerDecade bins
// per decade (each bin 10^(1/100) = 1.0233 times wider than its lower edge,
// so a percentile read from it is within 2.33 % of the exact one), plus
// under- and overflow bins; the exact minimum and maximum are kept beside
// it. Counts are weights (double): the router's steady-state mode fills one
// entry per block of packets with the block's packet count as weight.
//
// Quantile(q): the value below which a fraction q of the weight lies, read
// as in R's type-1 definition (the smallest sample x with F(x) >= q),
// located in its bin and interpolated linearly inside it, then clamped to
// the exact [min, max]. For a set of samples the result is within one bin
// width of the exact order statistic (tests/latency-histogram-test.cc).
//
// LossTimeline: drops of a run as a 3-D histogram over (port, time bin,
// drop reason); the time axis spans the tester's transmit time in Bins
// equal bins, and a drop after the tester stopped (a queue draining) counts
// in the last bin. The reasons are the model's VPP-style drop names (one,
// "dropped", where a model keeps no reason per drop); At(port, bin) adds
// them, so a timeline reads the same with one reason or many.
#ifndef ROUTERTWIN_LATENCY_HISTOGRAM_H
#define ROUTERTWIN_LATENCY_HISTOGRAM_H

#include <boost/histogram.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace routertwin
{

class LatencyHistogram
{
  public:
    static constexpr unsigned kBinsPerDecade = 100;
    static constexpr double kLowSeconds = 1e-9;  ///< lower edge of the first bin
    static constexpr double kHighSeconds = 10.0; ///< upper edge of the last bin

    LatencyHistogram();

    /// Adds one sample (seconds) with weight w (packets).
    void Add(double seconds, double weight = 1.0);
    /// Adds every sample of another histogram (same axis by construction).
    LatencyHistogram& operator+=(const LatencyHistogram& other);

    double Count() const { return m_count; }
    double Min() const { return m_count > 0 ? m_min : 0.0; }
    double Max() const { return m_count > 0 ? m_max : 0.0; }
    /// q in [0, 1]; 0 when empty. Throws std::invalid_argument for q outside.
    double Quantile(double q) const;
    /// Width of the bin holding x (seconds): the accuracy of a quantile near x.
    static double BinWidthAt(double seconds);

    struct Bin
    {
        double lower; ///< seconds
        double upper;
        double count;
    };
    /// Non-empty bins in increasing order; under/overflow as [0, 1 ns) and [10 s, max].
    std::vector<Bin> Bins() const;

  private:
    using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
    using Hist = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<double>>;
    static Hist Make();

    Hist m_hist;
    double m_count = 0;
    double m_min = 0;
    double m_max = 0;
};

class LossTimeline
{
  public:
    /// ports >= 1, bins >= 1, spanSeconds > 0, at least one reason;
    /// throws std::invalid_argument.
    LossTimeline(unsigned ports = 1, unsigned bins = 1, double spanSeconds = 1.0,
                 std::vector<std::string> reasons = {"dropped"});

    /// n drops of port `port` at time t (seconds from the tester's start),
    /// for reason `reason` (an index into Reasons()). A port or reason out of
    /// range throws std::out_of_range: a drop is never lost silently.
    void Add(unsigned port, double t, double n = 1.0, unsigned reason = 0);
    /// Same shape and reasons only; throws std::invalid_argument otherwise.
    LossTimeline& operator+=(const LossTimeline& other);

    unsigned Ports() const { return m_ports; }
    unsigned Bins() const { return m_bins; }
    double BinSeconds() const { return m_span / m_bins; }
    const std::vector<std::string>& Reasons() const { return m_reasons; }
    /// Drops of a port in a time bin, all reasons.
    double At(unsigned port, unsigned bin) const;
    /// Drops of a port in a time bin for one reason.
    double At(unsigned port, unsigned bin, unsigned reason) const;
    double Total() const;
    /// Drops of each reason (in Reasons() order), all ports and bins.
    std::vector<double> ReasonTotals() const;

  private:
    using PortAxis = boost::histogram::axis::integer<int, boost::histogram::use_default,
                                                     boost::histogram::axis::option::none_t>;
    using TimeAxis = boost::histogram::axis::regular<double, boost::histogram::use_default,
                                                     boost::histogram::use_default,
                                                     boost::histogram::axis::option::none_t>;
    using Hist = boost::histogram::histogram<std::tuple<PortAxis, TimeAxis, PortAxis>,
                                             boost::histogram::dense_storage<double>>;

    unsigned m_ports;
    unsigned m_bins;
    double m_span;
    std::vector<std::string> m_reasons;
    Hist m_hist;
};

} // namespace routertwin

#endif
