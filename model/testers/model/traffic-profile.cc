#include "traffic-profile.h"

#include "ethernet-framing.h"

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

} // namespace routertwin
