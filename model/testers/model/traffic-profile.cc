#include "traffic-profile.h"

#include "ethernet-framing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace routertwin
{

DiscreteSampler::DiscreteSampler(const std::vector<double>& weights)
{
    const size_t n = weights.size();
    if (n == 0 || n > (1u << 24))
    {
        throw std::invalid_argument("sampler: between 1 and 2^24 weights needed");
    }
    double sum = 0;
    for (double w : weights)
    {
        if (!std::isfinite(w) || w < 0)
        {
            throw std::invalid_argument("sampler: weights must be finite and >= 0");
        }
        sum += w;
    }
    if (!(sum > 0))
    {
        throw std::invalid_argument("sampler: weights must not all be zero");
    }
    // Vose: scale to mean 1, pair each column below 1 with one above.
    m_prob.assign(n, 0);
    m_alias.assign(n, 0);
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i)
    {
        scaled[i] = weights[i] * static_cast<double>(n) / sum;
        (scaled[i] < 1 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty())
    {
        const uint32_t s = small.back(), l = large.back();
        small.pop_back();
        m_prob[s] = scaled[s];
        m_alias[s] = l;
        scaled[l] = (scaled[l] + scaled[s]) - 1;
        if (scaled[l] < 1)
        {
            large.pop_back();
            small.push_back(l);
        }
    }
    // What is left is 1 up to rounding.
    for (uint32_t i : large)
    {
        m_prob[i] = 1;
        m_alias[i] = i;
    }
    for (uint32_t i : small)
    {
        m_prob[i] = 1;
        m_alias[i] = i;
    }
}

FrameSizeMix
FrameSizeMix::Named(const std::string& name)
{
    FrameSizeMix m;
    if (name == "simple_imix")
    {
        m.parts = {{64, 7}, {594, 4}, {1518, 1}};
    }
    else if (name == "imix_570")
    {
        m.parts = {{64, 7}, {570, 4}, {1518, 1}};
    }
    else if (name == "spirent_imix")
    {
        m.parts = {{64, 61}, {594, 21}, {1518, 18}};
    }
    else if (name == "four_size_imix")
    {
        m.parts = {{64, 67}, {570, 1}, {594, 2}, {1518, 1}};
    }
    else
    {
        std::string names;
        for (const auto& n : Names())
        {
            names += (names.empty() ? "" : ", ") + n;
        }
        throw std::invalid_argument("unknown frame mix '" + name + "' (known: " + names + ")");
    }
    return m;
}

std::vector<std::string>
FrameSizeMix::Names()
{
    return {"simple_imix", "imix_570", "spirent_imix", "four_size_imix"};
}

void
FrameSizeMix::Validate() const
{
    if (parts.empty())
    {
        throw std::invalid_argument("frame mix is empty");
    }
    for (const auto& [bytes, weight] : parts)
    {
        if (bytes < ethernet::kMinFrameBytes || bytes > ethernet::kMaxFrameBytes)
        {
            throw std::invalid_argument("frame mix size " + std::to_string(bytes) + " outside 64..9216");
        }
        if (!std::isfinite(weight) || !(weight > 0))
        {
            throw std::invalid_argument("frame mix weight of " + std::to_string(bytes) + " must be > 0");
        }
    }
}

double
FrameSizeMix::MeanFrameBytes() const
{
    double sum = 0, wsum = 0;
    for (const auto& [bytes, weight] : parts)
    {
        sum += bytes * weight;
        wsum += weight;
    }
    return sum / wsum;
}

double
FrameSizeMix::LineRatePps(double bitRate) const
{
    return bitRate / (8.0 * (MeanFrameBytes() + ethernet::kOverheadBytes));
}

ArrivalKind
ParseArrivalKind(const std::string& name)
{
    if (name == "constant")
    {
        return ArrivalKind::kConstant;
    }
    if (name == "poisson")
    {
        return ArrivalKind::kPoisson;
    }
    if (name == "onoff")
    {
        return ArrivalKind::kOnOff;
    }
    if (name == "mmpp")
    {
        return ArrivalKind::kMmpp2;
    }
    throw std::invalid_argument("must be 'constant', 'poisson', 'onoff' or 'mmpp'");
}

void
ArrivalConfig::Validate() const
{
    if (!(meanPps > 0) || !std::isfinite(meanPps))
    {
        throw std::invalid_argument("arrival mean rate must be > 0");
    }
    if (kind == ArrivalKind::kOnOff)
    {
        if (!(burstMeanFrames >= 1) || !std::isfinite(burstMeanFrames))
        {
            throw std::invalid_argument("burst_mean_frames must be >= 1");
        }
        if (!(peakPps > meanPps) || !std::isfinite(peakPps))
        {
            throw std::invalid_argument("the burst peak rate must exceed the mean rate");
        }
    }
    if (kind == ArrivalKind::kMmpp2)
    {
        if (!(mmppRateRatio >= 1) || !std::isfinite(mmppRateRatio))
        {
            throw std::invalid_argument("mmpp_rate_ratio must be >= 1");
        }
        if (!(mmppHighFraction > 0 && mmppHighFraction < 1))
        {
            throw std::invalid_argument("mmpp_high_fraction must be in (0, 1)");
        }
        if (!(mmppCycleSeconds > 0) || !std::isfinite(mmppCycleSeconds))
        {
            throw std::invalid_argument("mmpp_cycle_s must be > 0");
        }
    }
}

std::pair<double, double>
ArrivalConfig::MmppRates() const
{
    // mean = p * high + (1 - p) * low, high = ratio * low.
    const double low = meanPps / (mmppHighFraction * mmppRateRatio + (1 - mmppHighFraction));
    return {mmppRateRatio * low, low};
}

double
ArrivalConfig::AsymptoticIdc() const
{
    if (kind != ArrivalKind::kMmpp2)
    {
        return kind == ArrivalKind::kPoisson ? 1.0 : NAN;
    }
    const auto [l1, l2] = MmppRates();
    const double r1 = 1.0 / (mmppHighFraction * mmppCycleSeconds);       // leaves high
    const double r2 = 1.0 / ((1 - mmppHighFraction) * mmppCycleSeconds); // leaves low
    return 1 + 2 * r1 * r2 * (l1 - l2) * (l1 - l2) / ((r1 + r2) * (r1 + r2) * (l1 * r2 + l2 * r1));
}

ArrivalProcess::ArrivalProcess(const ArrivalConfig& config, uint64_t seed, uint64_t stream,
                               double unitsPerSecond)
    : m_cfg(config),
      m_rng(seed, stream)
{
    m_cfg.Validate();
    m_meanGap = unitsPerSecond / m_cfg.meanPps;
    if (m_cfg.kind == ArrivalKind::kOnOff)
    {
        // mean gap = peak gap + silence / burst.
        m_peakGap = unitsPerSecond / m_cfg.peakPps;
        m_silenceMean = m_cfg.burstMeanFrames * (m_meanGap - m_peakGap);
    }
    if (m_cfg.kind == ArrivalKind::kMmpp2)
    {
        const auto [high, low] = m_cfg.MmppRates();
        m_gapHigh = unitsPerSecond / high;
        m_gapLow = unitsPerSecond / low;
        m_sojournHigh = m_cfg.mmppHighFraction * m_cfg.mmppCycleSeconds * unitsPerSecond;
        m_sojournLow = (1 - m_cfg.mmppHighFraction) * m_cfg.mmppCycleSeconds * unitsPerSecond;
        // Start in the stationary state distribution.
        m_high = m_rng.Bernoulli(m_cfg.mmppHighFraction);
        m_stateLeft = m_rng.Exponential(m_high ? m_sojournHigh : m_sojournLow);
    }
}

double
ArrivalProcess::Next()
{
    switch (m_cfg.kind)
    {
    case ArrivalKind::kConstant:
        m_clock += m_meanGap;
        break;
    case ArrivalKind::kPoisson:
        m_clock += m_rng.Exponential(m_meanGap);
        break;
    case ArrivalKind::kOnOff:
        // A burst ends after each frame with probability 1 / mean length
        // (geometric, mean burstMeanFrames); the first frame opens one.
        m_clock += m_peakGap;
        if (!m_inBurst)
        {
            m_clock += m_rng.Exponential(m_silenceMean);
            m_inBurst = true;
        }
        if (m_rng.Bernoulli(1.0 / m_cfg.burstMeanFrames))
        {
            m_inBurst = false;
        }
        break;
    case ArrivalKind::kMmpp2:
        // Exponential gaps are memoryless: a gap that outlasts the state is
        // cut at the switch and redrawn at the new state's rate.
        for (;;)
        {
            const double gap = m_rng.Exponential(m_high ? m_gapHigh : m_gapLow);
            if (gap < m_stateLeft)
            {
                m_stateLeft -= gap;
                m_clock += gap;
                break;
            }
            m_clock += m_stateLeft;
            m_high = !m_high;
            m_stateLeft = m_rng.Exponential(m_high ? m_sojournHigh : m_sojournLow);
        }
        break;
    }
    return m_clock;
}

FlowPopularity
ParseFlowPopularity(const std::string& name)
{
    if (name == "round_robin")
    {
        return FlowPopularity::kRoundRobin;
    }
    if (name == "uniform")
    {
        return FlowPopularity::kUniform;
    }
    if (name == "zipf")
    {
        return FlowPopularity::kZipf;
    }
    throw std::invalid_argument("must be 'round_robin', 'uniform' or 'zipf'");
}

FlowPicker::FlowPicker(uint32_t numFlows, FlowPopularity popularity, double zipfExponent, uint64_t seed,
                       uint64_t stream)
    : m_numFlows(numFlows),
      m_popularity(popularity),
      m_zipfS(zipfExponent),
      m_rng(seed, stream)
{
    if (numFlows == 0)
    {
        throw std::invalid_argument("flows must be >= 1");
    }
    if (popularity == FlowPopularity::kZipf)
    {
        if (!std::isfinite(zipfExponent) || zipfExponent < 0)
        {
            throw std::invalid_argument("zipf exponent must be >= 0");
        }
        std::vector<double> w(numFlows);
        double sum = 0;
        for (uint32_t i = 0; i < numFlows; ++i)
        {
            w[i] = std::pow(static_cast<double>(i + 1), -zipfExponent);
            sum += w[i];
        }
        m_zipfNorm = sum;
        m_zipf = DiscreteSampler(w);
    }
}

uint32_t
FlowPicker::Pick(uint64_t frameIndex)
{
    switch (m_popularity)
    {
    case FlowPopularity::kUniform:
        return m_rng.UniformInt(m_numFlows);
    case FlowPopularity::kZipf:
        return m_zipf.Sample(m_rng);
    case FlowPopularity::kRoundRobin:
        break;
    }
    return static_cast<uint32_t>(frameIndex % m_numFlows);
}

double
FlowPicker::Pmf(uint32_t flow) const
{
    if (flow >= m_numFlows)
    {
        return 0;
    }
    if (m_popularity == FlowPopularity::kZipf)
    {
        return std::pow(static_cast<double>(flow + 1), -m_zipfS) / m_zipfNorm;
    }
    return 1.0 / m_numFlows;
}

FlowSizeKind
ParseFlowSizeKind(const std::string& name)
{
    if (name == "none")
    {
        return FlowSizeKind::kNone;
    }
    if (name == "pareto")
    {
        return FlowSizeKind::kPareto;
    }
    if (name == "lognormal")
    {
        return FlowSizeKind::kLognormal;
    }
    throw std::invalid_argument("must be 'none', 'pareto' or 'lognormal'");
}

namespace
{
constexpr double kMaxFlowPackets = 1099511627776.0; // 2^40
constexpr double kTwoPi = 6.283185307179586476925286766559;

// Standard normal cdf, from erfc (accurate in both tails).
double
NormalCdf(double z)
{
    return 0.5 * std::erfc(-z / std::sqrt(2.0));
}
} // namespace

void
FlowSizeDistribution::Validate() const
{
    if (kind == FlowSizeKind::kPareto)
    {
        if (!(paretoAlpha > 1) || !std::isfinite(paretoAlpha))
        {
            throw std::invalid_argument("pareto_alpha must be > 1 (a finite mean flow size)");
        }
        if (!(paretoMinPackets >= 1) || !std::isfinite(paretoMinPackets) || paretoMinPackets > 1e9)
        {
            throw std::invalid_argument("pareto_min_packets must be in 1..1e9");
        }
    }
    if (kind == FlowSizeKind::kLognormal)
    {
        if (!std::isfinite(lognormalMu) || lognormalMu < 0 || lognormalMu > 20)
        {
            throw std::invalid_argument("lognormal_mu must be in 0..20");
        }
        if (!(lognormalSigma > 0) || lognormalSigma > 5)
        {
            throw std::invalid_argument("lognormal_sigma must be in (0, 5]");
        }
    }
}

double
FlowSizeDistribution::Draw(RandomStream& rng) const
{
    switch (kind)
    {
    case FlowSizeKind::kPareto:
        // Inversion of P(X > x) = (xm / x)^alpha with U in (0, 1].
        return paretoMinPackets * std::pow(1.0 - rng.Uniform01(), -1.0 / paretoAlpha);
    case FlowSizeKind::kLognormal: {
        // Box-Muller (one of the pair is used: each draw is two uniforms).
        const double u1 = 1.0 - rng.Uniform01(); // (0, 1]
        const double u2 = rng.Uniform01();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
        return std::exp(lognormalMu + lognormalSigma * z);
    }
    case FlowSizeKind::kNone:
        break;
    }
    return 1;
}

uint64_t
FlowSizeDistribution::DrawPackets(RandomStream& rng) const
{
    const double x = std::ceil(Draw(rng));
    return static_cast<uint64_t>(std::clamp(x, 1.0, kMaxFlowPackets));
}

double
FlowSizeDistribution::Survival(double x) const
{
    switch (kind)
    {
    case FlowSizeKind::kPareto:
        return x < paretoMinPackets ? 1.0 : std::pow(paretoMinPackets / x, paretoAlpha);
    case FlowSizeKind::kLognormal:
        return x <= 0 ? 1.0 : NormalCdf((lognormalMu - std::log(x)) / lognormalSigma);
    case FlowSizeKind::kNone:
        break;
    }
    return x < 1 ? 1.0 : 0.0;
}

double
FlowSizeDistribution::Mean() const
{
    switch (kind)
    {
    case FlowSizeKind::kPareto:
        return paretoAlpha * paretoMinPackets / (paretoAlpha - 1);
    case FlowSizeKind::kLognormal:
        return std::exp(lognormalMu + 0.5 * lognormalSigma * lognormalSigma);
    case FlowSizeKind::kNone:
        break;
    }
    return 1;
}

double
FlowSizeDistribution::MeanPackets() const
{
    if (kind == FlowSizeKind::kNone)
    {
        return 1;
    }
    // The terms k < K exactly; from K on, the sum of f(k) is the integral of
    // f from K, + f(K) / 2 - f'(K) / 12 (Euler-Maclaurin); the next term,
    // f'''(K) / 720, is negligible this far out for these smooth tails.
    const double start = kind == FlowSizeKind::kPareto ? paretoMinPackets
                                                        : std::exp(lognormalMu + lognormalSigma);
    const double k0 = std::ceil(start) + 4096;
    double sum = 0;
    for (double k = 0; k < k0; ++k)
    {
        sum += Survival(k);
    }
    double integral, slope;
    if (kind == FlowSizeKind::kPareto)
    {
        const double a = paretoAlpha, xm = paretoMinPackets;
        integral = std::pow(xm, a) * std::pow(k0, 1 - a) / (a - 1);
        slope = -a * std::pow(xm, a) * std::pow(k0, -a - 1);
    }
    else
    {
        const double mu = lognormalMu, s = lognormalSigma, lk = std::log(k0);
        // E[(X - K)+] = E[X] Phi((mu + s^2 - ln K) / s) - K Phi((mu - ln K) / s).
        integral = Mean() * NormalCdf((mu + s * s - lk) / s) - k0 * NormalCdf((mu - lk) / s);
        const double z = (lk - mu) / s;
        slope = -std::exp(-0.5 * z * z) / (std::sqrt(kTwoPi) * s * k0);
    }
    return sum + integral + 0.5 * Survival(k0) - slope / 12;
}

FlowLevelProcess::FlowLevelProcess(const FlowSizeDistribution& sizes, const ArrivalConfig& starts,
                                   double flowPps, uint32_t idSpace, uint64_t seed, uint64_t startStream,
                                   uint64_t sizeStream, double unitsPerSecond)
    : m_sizes(sizes),
      m_starts(starts, seed, startStream, unitsPerSecond),
      m_sizeRng(seed, sizeStream),
      m_gap(0),
      m_idSpace(idSpace ? idSpace : 1)
{
    m_sizes.Validate();
    if (m_sizes.kind == FlowSizeKind::kNone)
    {
        throw std::invalid_argument("flow-level traffic needs a flow size distribution");
    }
    if (!(flowPps > 0) || !std::isfinite(flowPps))
    {
        throw std::invalid_argument("the per-flow packet rate must be > 0");
    }
    m_gap = unitsPerSecond / flowPps;
    // The stationary state at 0, from its own stream (the flows started
    // later draw exactly what they would without it).
    RandomStream init(seed, sizeStream ^ 0x57A7ull);
    const double mean = starts.meanPps * m_sizes.MeanPackets() / flowPps;
    if (!(mean <= 1e8))
    {
        throw std::invalid_argument("flow-level traffic: more than 1e8 flows active at once");
    }
    uint64_t n = 0;
    for (double t = init.Exponential(1.0); t < mean; t += init.Exponential(1.0))
    {
        ++n; // Poisson(mean): unit-rate arrivals before `mean`
    }
    // A flow seen at a random instant has S = s packets with probability
    // s P(S = s) / E[S] (size-biased). Drawn exactly: S = 1 with its share
    // P(X <= 1) / E[S]; otherwise X from its size-biased law x f(x) / E[X]
    // (Pareto(alpha - 1, xm); lognormal(mu + sigma^2, sigma)) above 1,
    // kept with probability ceil(X) / (2 X) (at most 1 above 1), which turns
    // the weight x into ceil(x). Biasing X alone weighs a long flow
    // E[S] / E[X] too much (8 % for Pareto(1.2, 1)), and with alpha < 2 the
    // flows active at 0 carry much of a run's packets.
    FlowSizeDistribution biased = m_sizes;
    if (biased.kind == FlowSizeKind::kPareto)
    {
        biased.paretoAlpha -= 1; // x f(x) / E[X] of Pareto(alpha) is Pareto(alpha - 1)
    }
    else
    {
        biased.lognormalMu += biased.lognormalSigma * biased.lognormalSigma;
    }
    const double onePacketShare = (1.0 - m_sizes.Survival(1.0)) / m_sizes.MeanPackets();
    for (uint64_t k = 0; k < n; ++k)
    {
        double length = 1;
        if (!(init.Uniform01() < onePacketShare))
        {
            double x;
            do
            {
                x = biased.Draw(init);
            } while (!(x > 1) || init.Uniform01() * 2 * x >= std::ceil(x));
            length = std::min(std::ceil(x), kMaxFlowPackets);
        }
        // Its time since its start is uniform over its S gaps: it has sent
        // 1..S packets (uniform), so 0..S-1 are left (none: it has ended),
        // and its next packet is a uniform fraction of a gap away.
        const auto left = std::min(static_cast<uint64_t>(init.Uniform01() * length),
                                   static_cast<uint64_t>(length) - 1);
        const double next = (1.0 - init.Uniform01()) * m_gap; // (0, gap]
        if (left > 0)
        {
            m_active.push_back(Start(next, left));
        }
    }
    std::sort(m_active.begin(), m_active.end(), [](const Active& a, const Active& b) {
        return a.next < b.next || (a.next == b.next && a.order < b.order);
    });
    m_initial = m_order;
    m_queued = m_maxActive = m_active.size();
    m_nextStart = m_starts.Next();
}

FlowLevelProcess::Active
FlowLevelProcess::Start(double at, uint64_t packets)
{
    Active a{at, m_order++, packets, 0, true};
    if (m_freshIds < m_idSpace)
    {
        a.id = m_freshIds++;
    }
    else if (!m_freed.empty())
    {
        a.id = m_freed.front();
        m_freed.pop_front();
    }
    else
    {
        a.id = static_cast<uint32_t>(a.order % m_idSpace);
        a.owned = false;
        ++m_sharedIds;
    }
    return a;
}

double
FlowLevelProcess::Next(uint32_t& flow)
{
    // Flows queued since the last instant (a flow starting now joins at it).
    const uint64_t queued = m_queued;
    // A flow that starts before (or with) the front's next packet sends first.
    if (m_active.empty() || m_nextStart <= m_active.front().next)
    {
        m_active.push_front(Start(m_nextStart, m_sizes.DrawPackets(m_sizeRng)));
        m_nextStart = m_starts.Next();
        m_maxActive = std::max(m_maxActive, ++m_queued);
    }
    // The front sends; it is then due after every other active flow.
    Active a = m_active.front();
    m_active.pop_front();
    flow = a.id;
    const double at = a.next;
    m_queuedIntegral += static_cast<double>(queued) * (at - m_lastAt);
    m_lastAt = at;
    if (--a.left == 0)
    {
        --m_queued; // its last packet: no longer active
        if (a.owned)
        {
            m_freed.push_back(a.id);
        }
    }
    else
    {
        a.next += m_gap;
        m_active.push_back(a);
    }
    return at;
}

double
FlowLevelProcess::ActiveFlowSeconds(double until) const
{
    return m_queuedIntegral + static_cast<double>(m_queued) * (until - m_lastAt);
}

} // namespace routertwin
