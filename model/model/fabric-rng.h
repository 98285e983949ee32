// Deterministic random numbers for the fabric and router models.
//
// Contract: the same seed gives the same sequence on every platform and
// compiler (no std:: distributions, whose algorithms are implementation
// defined). Generator: xoshiro256** (Blackman and Vigna 2018) seeded through
// splitmix64; uniforms are 53-bit; integers below n are exact (Lemire's
// multiply-shift with rejection).
#ifndef ROUTERTWIN_FABRIC_RNG_H
#define ROUTERTWIN_FABRIC_RNG_H

#include <cstdint>

namespace routertwin
{

class FabricRng
{
  public:
    explicit FabricRng(uint64_t seed) { Seed(seed); }

    void Seed(uint64_t seed)
    {
        uint64_t x = seed;
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

    /// Uniform in [0, 1) with 53 random bits.
    double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

    /// True with probability p.
    bool Bernoulli(double p) { return Uniform() < p; }

    /// Uniform integer in [0, n), n > 0, without modulo bias.
    uint32_t Below(uint32_t n)
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

  private:
    static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t m_s[4];
};

} // namespace routertwin

#endif
