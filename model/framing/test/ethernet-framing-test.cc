// Ethernet line-rate arithmetic against the closed form
// pps = bitRate / (8 * (max(frame, 64) + 8 preamble/SFD + 12 IFG)).
#include "ethernet-framing.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace routertwin::ethernet;

namespace
{
void
ExpectRel(double actual, double expected)
{
    EXPECT_LE(std::abs(actual - expected), 1e-9 * expected) << actual << " vs " << expected;
}
} // namespace

TEST(EthernetFraming, TenGigabitSixtyFourByteLineRate)
{
    // 10e9 / (84 * 8) = 14,880,952.380952...
    ExpectRel(LineRatePps(10e9, 64), 10e9 / 672.0);
    EXPECT_NEAR(LineRatePps(10e9, 64), 14880952.38, 0.005);
}

TEST(EthernetFraming, FortyGigabitSixtyFourByteLineRate)
{
    ExpectRel(LineRatePps(40e9, 64), 59523809.523809524);
}

TEST(EthernetFraming, FortyGigabitMaxFrameLineRate)
{
    // 1518 + 20 = 1538 wire bytes = 12304 bits: 40e9 / 12304 = 3,250,975.2926 pps.
    ExpectRel(LineRatePps(40e9, 1518), 3250975.2925877763);
}

TEST(EthernetFraming, HundredGigabitSixtyFourByteLineRate)
{
    ExpectRel(LineRatePps(100e9, 64), 148809523.80952381);
}

TEST(EthernetFraming, ShortFramesArePaddedToSixtyFour)
{
    EXPECT_EQ(WireBytes(40), 84u);
    EXPECT_EQ(WireBytes(64), 84u);
    EXPECT_EQ(WireBytes(65), 85u);
    EXPECT_EQ(FrameBytesFromL2(42), 64u); // 14 + 20 + 8 = 42-byte UDP frame pads
    EXPECT_EQ(FrameBytesFromL2(1514), 1518u);
}

TEST(EthernetFraming, WireTimeOfOneFrame)
{
    // 84 bytes at 1 Gbit/s: 672 ns.
    EXPECT_DOUBLE_EQ(WireSeconds(1e9, 64), 672e-9);
    // Frame bit rate excludes preamble and IFG: 14.88 Mpps of 64 B = 7.619 Gbit/s.
    ExpectRel(FrameBitRate(LineRatePps(10e9, 64), 64), 10e9 * 64.0 / 84.0);
}

TEST(EthernetFraming, NamedSpeeds)
{
    EXPECT_EQ(EthernetBitRate("1G"), 1e9);
    EXPECT_EQ(EthernetBitRate("25G"), 25e9);
    EXPECT_EQ(EthernetBitRate("100GbE"), 100e9);
    EXPECT_EQ(EthernetBitRate("400G"), 400e9);
    EXPECT_THROW(EthernetBitRate("2.5G"), std::invalid_argument);
    EXPECT_THROW(EthernetBitRate("G"), std::invalid_argument);
}
