// Seeded random stream with library-independent transforms.
//
// std::mt19937_64's output sequence is fixed by the C++ standard, but the
// std::*_distribution classes are not: libstdc++ and libc++ give different
// numbers for the same engine state. Every transform here is written out so
// that a seed gives the same variates with any standard library.
#ifndef ROUTERTWIN_RANDOM_STREAM_H
#define ROUTERTWIN_RANDOM_STREAM_H

#include <cmath>
#include <cstdint>
#include <random>

namespace routertwin
{

class RandomStream
{
  public:
    /// stream separates independent streams derived from one scenario seed.
    explicit RandomStream(uint64_t seed, uint64_t stream = 0)
        : m_engine(Mix(seed) ^ Mix(stream + 0x9E3779B97F4A7C15ULL))
    {
    }

    /// Raw 64 random bits.
    uint64_t Next() { return m_engine(); }

    /// Uniform on [0, 1): the top 53 bits scaled by 2^-53.
    double Uniform01() { return static_cast<double>(m_engine() >> 11) * 0x1.0p-53; }

    /// Uniform integer on [0, n) by Lemire's multiply-shift (bias < n / 2^64).
    uint64_t UniformInt(uint64_t n)
    {
        return static_cast<uint64_t>((static_cast<unsigned __int128>(m_engine()) * n) >> 64);
    }

    /// Exponential with the given mean, by inversion: -mean * ln(1 - U).
    double Exponential(double mean) { return -mean * std::log1p(-Uniform01()); }

  private:
    /// SplitMix64 finaliser: spreads small seeds over the whole state.
    static uint64_t Mix(uint64_t z)
    {
        z += 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    std::mt19937_64 m_engine;
};

} // namespace routertwin

#endif
