// Queue lengths of a run as a distribution over time (issue 15): how long a
// queue held 0, 1, 2, ... packets, on Boost.Histogram so that it merges
// across queues, runs and sweep workers like LatencyHistogram.
//
// QueueLengthHistogram: an integer axis 0..MaxLength() with an overflow bin
// (MaxLength() + 1); each entry is a length and the seconds the queue spent at it (a
// time-weighted histogram: the fraction of time at length n is the
// probability P(N = n) that an outside observer at a random instant sees n,
// which is what the closed forms of queueing theory give, e.g. (1 - rho)
// rho^n for M/M/1). The exact time-weighted mean and the longest length are
// kept beside it, so a length beyond the axis still counts in both. The
// largest length with a bin of its own is kMaxLength (queues of packets)
// unless the constructor is given another: a user whose values are bounded
// by its run (the fabric's cell delays, at most the run's slots) passes that
// bound and then has no overflow bin in use, so every quantile is exact. The
// axis is a Boost growing axis: storage follows the longest length seen
// (doubling), not the bound.
//
// QueueOccupancy: fills one from the instants packets enter and leave a
// queue. The length counted is every packet that entered and has not left:
// waiting and in service (the "number in system" of queueing theory).
// Enter() is called in nondecreasing entry time, with the packet's leave
// time already known (the models compute departures as max-plus
// recurrences, so a packet's leave time is known when it enters); leave
// times may come in any order (several servers). Time is counted from the
// first entry to the last leave (Finish).
#ifndef ROUTERTWIN_QUEUE_LENGTH_HISTOGRAM_H
#define ROUTERTWIN_QUEUE_LENGTH_HISTOGRAM_H

#include <boost/histogram.hpp>

#include <cstdint>
#include <vector>

namespace routertwin
{

class QueueLengthHistogram
{
  public:
    /// The default largest length with a bin of its own: lengths above
    /// share the overflow bin (their exact values count in Mean and Max).
    static constexpr unsigned kMaxLength = 4095;

    /// maxLength: the largest length with a bin of its own (below 2^31 - 1;
    /// std::invalid_argument otherwise).
    explicit QueueLengthHistogram(unsigned maxLength = kMaxLength);

    /// The largest length with a bin of its own; MaxLength() + 1 is the overflow bin.
    unsigned MaxLength() const { return m_maxLength; }

    /// The queue held `length` packets for `seconds` (>= 0; 0 adds nothing).
    void Add(unsigned length, double seconds);
    /// Merges `other`, which has the same MaxLength() or is empty
    /// (std::invalid_argument otherwise: the overflow bins would mix lengths).
    QueueLengthHistogram& operator+=(const QueueLengthHistogram& other);

    double Seconds() const { return m_seconds; }      ///< time observed
    double Mean() const { return m_seconds > 0 ? m_area / m_seconds : 0.0; }
    unsigned Max() const { return m_max; }            ///< longest length seen (0 when empty)
    /// Fraction of the time at exactly n (n <= MaxLength(); 0 when empty).
    double Probability(unsigned n) const;
    /// Smallest n with P(N <= n) >= q, q in [0, 1] (Max() for the overflow
    /// bin; 0 when empty). Throws std::invalid_argument for q outside.
    unsigned Quantile(double q) const;

    struct Bin
    {
        unsigned length; ///< MaxLength() + 1: the overflow bin
        double seconds;
    };
    /// Lengths with time spent at them, in increasing order.
    std::vector<Bin> Bins() const;

  private:
    // Lengths 0..MaxLength() + 1 (the last the overflow bin), grown on demand.
    using Axis = boost::histogram::axis::integer<int, boost::histogram::use_default,
                                                 boost::histogram::axis::option::growth_t>;
    using Hist = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<double>>;

    unsigned m_maxLength;
    Hist m_hist;
    double m_seconds = 0;
    double m_area = 0; // sum of length x seconds
    unsigned m_max = 0;
};

class QueueOccupancy
{
  public:
    /// A packet enters at `enter` and leaves at `leave` >= enter (seconds);
    /// `enter` nondecreasing over calls (not checked: the callers' arrival
    /// order guarantees it).
    void Enter(double enter, double leave);
    /// Counts the time until the last packet left; Enter may follow (the
    /// idle gap in between then counts at length 0).
    void Finish();
    /// The histogram so far (call Finish first to include the last packets' time).
    const QueueLengthHistogram& Histogram() const { return m_hist; }

  private:
    void LeaveUntil(double t);

    QueueLengthHistogram m_hist;
    // Leave times of the packets inside, sorted, from m_head on: a packet
    // that leaves after all inside (a FIFO single server: every one) is
    // appended, another is inserted from the back (a few places at most,
    // as many as the servers), and packets leave from the front.
    std::vector<double> m_leaves;
    size_t m_head = 0;
    double m_last = 0;            // instant up to which time has been counted
    bool m_started = false;
};

} // namespace routertwin

#endif
