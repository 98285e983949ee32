// What a tester offers beyond one frame size at constant spacing: frame-size
// mixes, bursty arrival processes and flow popularity (issue 16).
//
// - DiscreteSampler: draws an index with given weights in O(1) (Walker's
//   alias method, in Vose's numerically stable construction: M. D. Vose,
//   "A linear algorithm for generating random numbers with a given
//   distribution", IEEE TSE 17(9), 1991). Frame-size mixes and Zipf flow
//   popularity both use it.
// - FrameSizeMix: frame sizes (Ethernet, incl. FCS) and weights (share of
//   frames, as tester IMIX tables are: Spirent FAQ11671, VIAVI TestCenter
//   FAQ), the named IMIX mixes, mean bytes and line rate of the mix.
// - ArrivalProcess: instants of a point process of a given long-run rate:
//   Poisson, on/off bursts, or a two-state Markov-modulated Poisson process.
// - FlowPicker: which flow each frame belongs to: round robin (the
//   RFC 2544 tester's rotation), uniform, or Zipf(s) popularity.
// - FlowSizeDistribution, FlowLevelProcess: flow-level traffic: flows start
//   by an arrival process, carry a heavy-tailed (Pareto or lognormal) number
//   of packets at a per-flow rate, then end; the superposition of their
//   packets is the offered traffic (the M/G/infinity "Poisson shot noise"
//   model of flow-level traffic, cf. Barakat, Thiran et al., "Modeling
//   Internet backbone traffic at the flow level", IEEE TSP 51(8), 2003).
//
// Every random choice draws from its own RandomStream (seed, stream id), so
// adding a mix or a popularity never changes the arrival instants of a seed,
// and the same seed gives bit-identical traffic.
#ifndef ROUTERTWIN_TRAFFIC_PROFILE_H
#define ROUTERTWIN_TRAFFIC_PROFILE_H

#include "random-stream.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace routertwin
{

/// Draws index i with probability weights[i] / sum(weights).
class DiscreteSampler
{
  public:
    DiscreteSampler() = default;
    /// Throws std::invalid_argument if weights is empty, too long (> 2^24),
    /// or has a negative, non-finite or all-zero weight.
    explicit DiscreteSampler(const std::vector<double>& weights);

    uint32_t Sample(RandomStream& rng) const
    {
        const uint32_t i = rng.UniformInt(static_cast<uint32_t>(m_prob.size()));
        return rng.Uniform01() < m_prob[i] ? i : m_alias[i];
    }
    size_t Size() const { return m_prob.size(); }

  private:
    std::vector<double> m_prob;     // probability of keeping column i
    std::vector<uint32_t> m_alias;  // the other index of column i
};

/// A frame-size mix: (frame bytes incl. FCS, weight = share of frames).
struct FrameSizeMix
{
    std::vector<std::pair<uint32_t, double>> parts;

    /// A named mix, or throws std::invalid_argument listing the names:
    ///   simple_imix   64:7, 594:4, 1518:1 -- 7:4:1 of 40/576/1500-byte IPv4
    ///                 packets, in Ethernet frames (+14 header +4 FCS; the 58
    ///                 padded to the 64-byte minimum). Ostinato's "Standard
    ///                 IMIX" table (ostinato.org/blog/imix) lists these frames.
    ///   imix_570      64:7, 570:4, 1518:1 -- the 7:4:1 variant with a 570-byte
    ///                 middle frame that several tester GUIs offer; assumption:
    ///                 no primary source was found for its origin.
    ///   spirent_imix  64:61, 594:21, 1518:18 -- Spirent TestCenter FAQ11671's
    ///                 worked iMix example (457.02-byte mean wire frame).
    ///   four_size_imix 64:67, 570:1, 594:2, 1518:1 -- a four-size "typical
    ///                 mix" (packets per cycle) quoted with byte shares
    ///                 57/7/16/20 %, yangwentao.blogspot.com 2012/04.
    static FrameSizeMix Named(const std::string& name);
    static std::vector<std::string> Names();

    /// Throws std::invalid_argument if empty, a size outside 64..9216 or a
    /// weight that is not > 0 and finite.
    void Validate() const;
    bool Single() const { return parts.size() == 1; }
    /// Mean frame bytes (weighted by frames).
    double MeanFrameBytes() const;
    /// Frames/s at the line rate of an Ethernet port of bitRate: bitRate /
    /// (8 x mean of (frame + 20 bytes preamble, SFD and inter-frame gap)).
    double LineRatePps(double bitRate) const;
};

enum class ArrivalKind : uint8_t
{
    kConstant, ///< evenly spaced (each frame's wire time / load for a mix)
    kPoisson,  ///< exponential gaps
    kOnOff,    ///< geometric bursts at a peak rate, exponential silences
    kMmpp2,    ///< two-state Markov-modulated Poisson process
};
/// "constant", "poisson", "onoff", "mmpp"; throws std::invalid_argument.
ArrivalKind ParseArrivalKind(const std::string& name);

struct ArrivalConfig
{
    ArrivalKind kind = ArrivalKind::kConstant;
    double meanPps = 0;          ///< long-run rate
    // On/off: bursts of a geometric number of frames (mean burstMeanFrames,
    // >= 1) spaced 1 / peakPps, separated by exponential silences whose mean
    // makes the long-run rate meanPps: mean gap = 1/peak + silence/burst.
    double burstMeanFrames = 16;
    double peakPps = 0;          ///< > meanPps
    // MMPP-2: rate ratio high/low (>= 1), fraction of time in the high
    // state (0..1), and the mean high + low sojourn (exponential each).
    double mmppRateRatio = 4;
    double mmppHighFraction = 0.2;
    double mmppCycleSeconds = 1e-3;

    /// Throws std::invalid_argument naming the parameter.
    void Validate() const;
    /// The two MMPP rates (high, low) that give meanPps.
    std::pair<double, double> MmppRates() const;
    /// Asymptotic index of dispersion of counts, lim Var N(t) / E N(t):
    /// 1 for Poisson; MMPP-2: 1 + 2 r1 r2 (l1 - l2)^2 / ((r1 + r2)^2 (l1 r2 + l2 r1))
    /// with r_i the rate of leaving state i (Fischer and Meier-Hellstern,
    /// "The MMPP cookbook", Perf. Eval. 18, 1993, eq. for IDC(inf)).
    double AsymptoticIdc() const;
};

/// Instants from 0 of an arrival process of long-run rate meanPps.
class ArrivalProcess
{
  public:
    /// Instants in units of 1 / unitsPerSecond seconds (the tester uses
    /// picoseconds: 1e12).
    ArrivalProcess(const ArrivalConfig& config, uint64_t seed, uint64_t stream,
                   double unitsPerSecond = 1.0);
    /// The next instant, nondecreasing.
    double Next();

  private:
    ArrivalConfig m_cfg;
    RandomStream m_rng;
    double m_clock = 0;
    double m_meanGap = 0;
    // on/off
    double m_peakGap = 0, m_silenceMean = 0;
    bool m_inBurst = false;
    // MMPP
    bool m_high = false;
    double m_stateLeft = 0, m_gapHigh = 0, m_gapLow = 0, m_sojournHigh = 0, m_sojournLow = 0;
};

enum class FlowPopularity : uint8_t
{
    kRoundRobin, ///< frame k belongs to flow k mod N
    kUniform,    ///< each frame picks a flow uniformly
    kZipf,       ///< flow i (rank i + 1) with probability (i + 1)^-s / H(N, s)
};
/// "round_robin", "uniform", "zipf"; throws std::invalid_argument.
FlowPopularity ParseFlowPopularity(const std::string& name);

class FlowPicker
{
  public:
    FlowPicker(uint32_t numFlows, FlowPopularity popularity, double zipfExponent, uint64_t seed,
               uint64_t stream);
    uint32_t Pick(uint64_t frameIndex);
    /// Probability of flow i under the configured popularity.
    double Pmf(uint32_t flow) const;

  private:
    uint32_t m_numFlows;
    FlowPopularity m_popularity;
    double m_zipfS;
    double m_zipfNorm = 1;
    RandomStream m_rng;
    DiscreteSampler m_zipf;
};

enum class FlowSizeKind : uint8_t
{
    kNone,      ///< flows live for the whole run (FlowPicker)
    kPareto,    ///< P(X > x) = (xm / x)^alpha for x >= xm
    kLognormal, ///< ln X ~ Normal(mu, sigma^2)
};
/// "none", "pareto", "lognormal"; throws std::invalid_argument.
FlowSizeKind ParseFlowSizeKind(const std::string& name);

/// Packets per flow: S = ceil(X) of a continuous X (>= 1 packet).
struct FlowSizeDistribution
{
    FlowSizeKind kind = FlowSizeKind::kNone;
    double paretoAlpha = 1.2;   ///< tail index, > 1 (a finite mean sets the flow rate)
    double paretoMinPackets = 1; ///< xm, >= 1
    double lognormalMu = 2;     ///< mean of ln X
    double lognormalSigma = 1;  ///< sd of ln X, > 0

    /// Throws std::invalid_argument naming the parameter.
    void Validate() const;
    /// One X (inversion for Pareto: xm U^(-1/alpha); Box-Muller for the
    /// normal of the lognormal), from the stream's uniforms only.
    double Draw(RandomStream& rng) const;
    /// ceil(X), at least 1, at most 2^40 (a flow that long outlives any run).
    uint64_t DrawPackets(RandomStream& rng) const;
    /// P(X > x).
    double Survival(double x) const;
    /// E[X]: Pareto alpha xm / (alpha - 1); lognormal exp(mu + sigma^2 / 2).
    double Mean() const;
    /// E[ceil X] = sum over k >= 0 of P(X > k): the terms up to k = K summed,
    /// the rest by Euler-Maclaurin from the closed-form integral of the tail
    /// (Pareto: xm^alpha K^(1-alpha) / (alpha - 1); lognormal: the partial
    /// expectation E[(X - K)+]).
    double MeanPackets() const;
};

/// Packet instants and flow ids of flow-level traffic: flows start at the
/// instants of an ArrivalProcess (any kind) of rate startsPerSecond, each
/// carries FlowSizeDistribution::DrawPackets packets spaced 1 / flowPps
/// (its first at its start), then ends. Its long-run packet rate is
/// startsPerSecond x MeanPackets(); the mean number of flows active at once
/// is m = startsPerSecond x MeanPackets() / flowPps (Little, for a flow
/// active S / flowPps).
///
/// Stationary start: at instant 0 the process is already in its stationary
/// regime, as an M/G/infinity system is: Poisson(m) flows are active, each
/// of a size-biased length (a flow seen at a random instant is picked in
/// proportion to its length S: s P(S = s) / E[S], drawn exactly by rejection
/// from the size-biased X, Pareto(alpha - 1, xm) or lognormal(mu + sigma^2,
/// sigma)), with a uniform number 0..S-1 of its packets
/// left (its time since its start is uniform over its S gaps; with none
/// left it has ended), the next a uniform fraction of a gap away. Without it, heavy-tailed
/// flows would take as long as their longest flows to reach the long-run
/// rate (the long flows carry most packets).
///
/// Every active flow sends every 1 / flowPps, so a flow that has just sent
/// is due after all the others: the active flows form a queue in the order
/// of their next packets (a new flow starts no later than the queue's
/// front and joins there), O(1) a packet, no heap.
///
/// Active flows: a flow is active from its first packet to its last (its
/// duration (S - 1) / flowPps, as NetFlow measures one), so by Little's law
/// the time-average of flows active is startsPerSecond x (MeanPackets() - 1)
/// / flowPps. ActiveFlowSeconds integrates the count of flows with packets
/// left from the process's own events, independently of that formula,
/// which tests hold it to.
///
/// Flow ids: unused ids of 0..idSpace-1 first, then ids of ended flows,
/// first ended first reused (as clients reuse ports), so two active flows
/// never share an id unless more than idSpace are active at once (then the
/// new one takes start order modulo idSpace).
class FlowLevelProcess
{
  public:
    FlowLevelProcess(const FlowSizeDistribution& sizes, const ArrivalConfig& starts, double flowPps,
                     uint32_t idSpace, uint64_t seed, uint64_t startStream, uint64_t sizeStream,
                     double unitsPerSecond = 1.0);
    /// The next packet's instant (nondecreasing) and its flow.
    double Next(uint32_t& flow);
    /// The instant the next Next() returns, without taking it (a caller
    /// that stops at a time leaves the process, and its accounting, there).
    double NextInstant() const
    {
        return m_active.empty() ? m_nextStart : std::min(m_nextStart, m_active.front().next);
    }
    /// Flows active at instant 0 with packets left (the stationary start;
    /// those in their last gap at 0 send nothing more and take no id).
    uint64_t InitialFlows() const { return m_initial; }
    /// Flows started after instant 0.
    uint64_t FlowsStarted() const { return m_order - m_initial; }
    size_t ActiveFlows() const { return m_active.size(); }
    /// Flows that had to share an id (more than idSpace active).
    uint64_t SharedIds() const { return m_sharedIds; }
    /// Integral over [0, until] of the flows active (flow x units), `until`
    /// no earlier than the last instant Next returned.
    double ActiveFlowSeconds(double until) const;
    /// Most flows active at once.
    uint64_t MaxActiveFlows() const { return m_maxActive; }
    /// The last instant Next returned (0 before the first).
    double LastInstant() const { return m_lastAt; }

  private:
    struct Active
    {
        double next;     // instant of its next packet
        uint64_t order;  // start order: ties go to the older flow
        uint64_t left;   // packets still to send
        uint32_t id;
        bool owned;      // its id is its own (returned to the free ids at its end)
    };
    // A flow whose next packet is at `at` with `packets` left: its id; the
    // caller places it in the queue.
    Active Start(double at, uint64_t packets);

    FlowSizeDistribution m_sizes;
    ArrivalProcess m_starts;
    RandomStream m_sizeRng;
    double m_gap;
    uint32_t m_idSpace;
    uint32_t m_freshIds = 0;       // ids below this have been handed out
    std::deque<uint32_t> m_freed;  // ids of ended flows, first ended first
    double m_nextStart;
    uint64_t m_order = 0, m_initial = 0, m_sharedIds = 0;
    std::deque<Active> m_active; // in the order of their next packets
    // Active-flow accounting (see the class comment).
    double m_lastAt = 0;          // the last instant Next returned
    uint64_t m_queued = 0;        // m_active.size(), kept by hand: deque::size() costs a packet more
    double m_queuedIntegral = 0;  // integral of m_queued up to m_lastAt
    uint64_t m_maxActive = 0;
};

} // namespace routertwin

#endif
