// Seeded random stream with library-independent transforms: the one source
// of random numbers of the models (tester Poisson arrivals, fabric
// arbitration and traffic, the router's steady-state walks).
//
// Contract: the same (seed, stream) gives the same sequence on every
// platform and compiler. The std::*_distribution classes are not used: their
// algorithms are implementation defined (libstdc++ and libc++ give different
// numbers for the same engine state), so every transform is written out.
// Generator: xoshiro256** (Blackman and Vigna 2018), its state filled by
// splitmix64; uniforms are 53-bit; integers below n are exact (Lemire's
// multiply-shift with rejection); exponentials by inversion.
#ifndef ROUTERTWIN_RANDOM_STREAM_H
#define ROUTERTWIN_RANDOM_STREAM_H

#include <cmath>
#include <cstdint>

namespace routertwin
{

class RandomStream
{
  public:
    /// stream separates independent streams derived from one scenario seed.
    /// It is XORed into the seed: the streams of one seed all differ, and
    /// (seed, stream) pairs with the same seed ^ stream give the same numbers.
    explicit RandomStream(uint64_t seed, uint64_t stream = 0)
    {
        uint64_t x = seed ^ stream;
        for (auto& w : m_s)
        {
            // splitmix64 step: spreads any seed, including 0, over the state.
            x += 0x9E3779B97F4A7C15ull;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            w = z ^ (z >> 31);
        }
    }

    /// Raw 64 random bits.
    uint64_t Next()
    {
        const uint64_t result = Rotl(m_s[1] * 5, 7) * 9;
        const uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = Rotl(m_s[3], 45);
        return result;
    }

    /// Uniform on [0, 1): the top 53 bits scaled by 2^-53.
    double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

    /// True with probability p.
    bool Bernoulli(double p) { return Uniform01() < p; }

    /// Uniform integer on [0, n), n > 0, without modulo bias: the top 32 bits
    /// of a draw times n, redrawn in the rare cases that would bias it.
    uint32_t UniformInt(uint32_t n)
    {
        uint64_t m = static_cast<uint64_t>(static_cast<uint32_t>(Next() >> 32)) * n;
        auto low = static_cast<uint32_t>(m);
        if (low < n)
        {
            const uint32_t threshold = static_cast<uint32_t>(-n) % n;
            while (low < threshold)
            {
                m = static_cast<uint64_t>(static_cast<uint32_t>(Next() >> 32)) * n;
                low = static_cast<uint32_t>(m);
            }
        }
        return static_cast<uint32_t>(m >> 32);
    }

    /// Exponential with the given mean, by inversion: -mean * ln(1 - U).
    double Exponential(double mean) { return -mean * std::log1p(-Uniform01()); }

  private:
    static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    uint64_t m_s[4];
};

} // namespace routertwin

#endif
