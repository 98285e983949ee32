// POS framing (SONET payload rates, PPP in HDLC-like framing) against
// G.707, RFC 1662 and RFC 2615, and the T640 report's percentages, which
// follow from the framing arithmetic alone.
#include "pos-framing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

using namespace routertwin;

namespace
{
// Rounds to the three decimals the BT report prints.
double
Round3(double x)
{
    return std::round(x * 1000.0) / 1000.0;
}
} // namespace

TEST(SonetPayload, StsNcCapacitiesMatchG707)
{
    // 149.76 Mbit/s per STS-3c worth of payload (ITU-T G.707 / GR-253).
    EXPECT_DOUBLE_EQ(SonetPayloadBps(3), 149.76e6);
    EXPECT_DOUBLE_EQ(SonetPayloadBps(12), 599.04e6);
    EXPECT_DOUBLE_EQ(SonetPayloadBps(48), 2396.16e6);
    EXPECT_DOUBLE_EQ(SonetPayloadBps(192), 9584.64e6);
    EXPECT_DOUBLE_EQ(SonetPayloadBps(768), 38338.56e6);
    EXPECT_DOUBLE_EQ(SonetPayloadBps(1), 48.384e6);
    EXPECT_DOUBLE_EQ(SonetLineBps(192), 9953.28e6);
    EXPECT_THROW(SonetPayloadBps(24), std::invalid_argument);
}

TEST(SonetPayload, ParsesRateNames)
{
    EXPECT_EQ(ParseSonetRate("OC-192"), 192u);
    EXPECT_EQ(ParseSonetRate("oc768c"), 768u);
    EXPECT_EQ(ParseSonetRate("STM-64"), 192u);
    EXPECT_THROW(ParseSonetRate("OC-100"), std::invalid_argument);
    EXPECT_THROW(ParseSonetRate("10GE"), std::invalid_argument);
}

TEST(PppHdlc, Fcs16HasRfc1662GoodResidue)
{
    // RFC 1662 C.2: running the FCS over data plus its transmitted FCS gives
    // the "good" value 0xF0B8 (before the final complement).
    const uint8_t data[] = {0xFF, 0x03, 0x00, 0x21, 0x45, 0x00, 0x7E, 0x7D, 0x11};
    uint16_t fcs = Fcs16(data, sizeof data);
    uint8_t with[sizeof data + 2];
    std::copy(data, data + sizeof data, with);
    with[sizeof data] = static_cast<uint8_t>(fcs);
    with[sizeof data + 1] = static_cast<uint8_t>(fcs >> 8);
    EXPECT_EQ(static_cast<uint16_t>(~Fcs16(with, sizeof with)), 0xF0B8);
}

TEST(PppHdlc, Fcs32MatchesCrc32CheckValueAndResidue)
{
    // The CRC-32 catalogue check value of "123456789" is 0xCBF43926.
    const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
    EXPECT_EQ(Fcs32(check, sizeof check), 0xCBF43926u);
    // RFC 1662 C.3 good residue 0xDEBB20E3.
    uint32_t fcs = Fcs32(check, sizeof check);
    uint8_t with[sizeof check + 4];
    std::copy(check, check + sizeof check, with);
    for (int i = 0; i < 4; ++i)
    {
        with[sizeof check + i] = static_cast<uint8_t>(fcs >> (8 * i));
    }
    EXPECT_EQ(~Fcs32(with, sizeof with), 0xDEBB20E3u);
}

TEST(PppHdlc, StuffsEveryFlagAndEscapeOctetBetweenFlags)
{
    PppHdlcConfig cfg; // FCS-32, shared flag
    PosEncoder enc(cfg);
    const uint8_t ip[] = {0x7E, 0x01, 0x7D, 0x7E, 0x20};
    std::vector<uint8_t> wire;
    PosFrameInfo f = enc.Frame(ip, sizeof ip, &wire);
    // Escapes: three in the payload plus whatever the FCS octets need.
    unsigned fcsEscapes = 0;
    std::vector<uint8_t> body = {0xFF, 0x03, 0x00, 0x21, 0x7E, 0x01, 0x7D, 0x7E, 0x20};
    uint32_t fcs = Fcs32(body.data(), body.size());
    for (int i = 0; i < 4; ++i)
    {
        uint8_t b = static_cast<uint8_t>(fcs >> (8 * i));
        fcsEscapes += (b == 0x7E || b == 0x7D);
    }
    EXPECT_EQ(f.escapes, 3u + fcsEscapes);
    EXPECT_EQ(f.unstuffedBytes, 1u + 4u + 5u + 4u);
    EXPECT_EQ(wire.size(), f.WireBytes());
    // Apart from the opening flag no 0x7E remains on the wire, and
    // unstuffing gives back the body.
    EXPECT_EQ(wire[0], 0x7E);
    std::vector<uint8_t> unstuffed;
    for (size_t i = 1; i < wire.size(); ++i)
    {
        ASSERT_NE(wire[i], 0x7E);
        if (wire[i] == 0x7D)
        {
            unstuffed.push_back(static_cast<uint8_t>(wire[++i] ^ 0x20));
        }
        else
        {
            unstuffed.push_back(wire[i]);
        }
    }
    ASSERT_EQ(unstuffed.size(), body.size() + 4);
    EXPECT_TRUE(std::equal(body.begin(), body.end(), unstuffed.begin()));
}

TEST(PppHdlc, OverheadCountsFlagsHeaderAndFcs)
{
    PppHdlcConfig c;
    EXPECT_EQ(c.OverheadBytes(), 9u); // 1 flag + FF 03 + 00 21 + 4 FCS
    c.fcsBits = 16;
    EXPECT_EQ(c.OverheadBytes(), 7u);
    c.sharedFlag = false;
    EXPECT_EQ(c.OverheadBytes(), 8u);
    c.fcsBits = 24;
    EXPECT_THROW(c.Validate(), std::invalid_argument);
}

// The BT report (seed 001) prints 780,069,874 pps = 99.700 % at 40 bytes and
// 749,981,330 pps = 99.767 % at 42 bytes over 32 OC-192 ports. Only
// FCS-32 with one shared flag (9 octets per frame) on the STS-192c payload
// reproduces both to the printed three decimals.
TEST(T640Theoretical, ReportPercentagesFollowFromFcs32SharedFlag)
{
    const double payload = SonetPayloadBps(192);
    PppHdlcConfig cfg;
    double th40 = 32 * TheoreticalPps(payload, cfg, 40);
    double th42 = 32 * TheoreticalPps(payload, cfg, 42);
    EXPECT_NEAR(th40, 782419591.8367347, 1e-3);
    EXPECT_EQ(Round3(100.0 * 780069874.0 / th40), 99.700);
    EXPECT_EQ(Round3(100.0 * 749981330.0 / th42), 99.767);
}

TEST(T640Theoretical, OtherFramingsContradictTheReport)
{
    const double payload = SonetPayloadBps(192);
    for (unsigned fcs : {16u, 32u})
    {
        for (bool shared : {true, false})
        {
            PppHdlcConfig cfg;
            cfg.fcsBits = fcs;
            cfg.sharedFlag = shared;
            if (fcs == 32 && shared)
            {
                continue;
            }
            double pct = 100.0 * 780069874.0 / (32 * TheoreticalPps(payload, cfg, 40));
            EXPECT_NE(Round3(pct), 99.700) << "fcs " << fcs << " shared " << shared;
        }
    }
}

TEST(T640Theoretical, FiveMinuteRunIsNinetySevenPercentOfTheSameDenominator)
{
    // 227,684,101,028 packets in 300 s at "97.000 %".
    double th40 = 32 * TheoreticalPps(SonetPayloadBps(192), PppHdlcConfig{}, 40);
    EXPECT_EQ(Round3(100.0 * (227684101028.0 / 300.0) / th40), 97.000);
}
