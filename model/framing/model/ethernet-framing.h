// Ethernet on-wire accounting (IEEE 802.3 clause 4 framing) for the port
// speeds the seeds use: 1, 10, 25, 40, 100 and 400 Gbit/s.
//
// Frame sizes follow RFC 2544 / RFC 1242: a "64-byte frame" counts from the
// destination MAC through the FCS. On the wire every frame additionally
// carries 8 bytes of preamble + start-of-frame delimiter and is followed by a
// 12-byte inter-frame gap, and a frame shorter than 64 bytes is padded to 64.
// All functions are exact closed forms; nothing here keeps state.
#ifndef ROUTERTWIN_ETHERNET_FRAMING_H
#define ROUTERTWIN_ETHERNET_FRAMING_H

#include <cstdint>
#include <string>

namespace routertwin::ethernet
{

constexpr uint32_t kMinFrameBytes = 64;    ///< minimum frame incl. FCS (pad below)
constexpr uint32_t kMaxFrameBytes = 9216;  ///< largest jumbo frame accepted here
constexpr uint32_t kFcsBytes = 4;          ///< frame check sequence (CRC-32)
constexpr uint32_t kPreambleSfdBytes = 8;  ///< 7 preamble + 1 SFD
constexpr uint32_t kIfgBytes = 12;         ///< minimum inter-frame gap
constexpr uint32_t kOverheadBytes = kPreambleSfdBytes + kIfgBytes; ///< 20 per frame

/// Frame bytes (incl. FCS) after padding to the 64-byte minimum.
constexpr uint32_t
PaddedFrameBytes(uint32_t frameBytes)
{
    return frameBytes < kMinFrameBytes ? kMinFrameBytes : frameBytes;
}

/// Frame bytes incl. FCS for an L2 frame of l2Bytes without FCS (what
/// dp_build writes), after padding.
constexpr uint32_t
FrameBytesFromL2(uint32_t l2BytesNoFcs)
{
    return PaddedFrameBytes(l2BytesNoFcs + kFcsBytes);
}

/// Bytes a frame of frameBytes (incl. FCS) occupies on the wire: padded frame
/// + preamble/SFD + IFG. 64 -> 84, 1518 -> 1538.
constexpr uint32_t
WireBytes(uint32_t frameBytes)
{
    return PaddedFrameBytes(frameBytes) + kOverheadBytes;
}

/// Seconds the frame occupies a port of bitRate bit/s, IFG included.
inline double
WireSeconds(double bitRate, uint32_t frameBytes)
{
    return 8.0 * WireBytes(frameBytes) / bitRate;
}

/// Line-rate frames per second of a port: bitRate / (8 * wire bytes).
/// 10GbE at 64 bytes = 14,880,952.38 pps.
inline double
LineRatePps(double bitRate, uint32_t frameBytes)
{
    return bitRate / (8.0 * WireBytes(frameBytes));
}

/// Frame bits per second (incl. FCS, excl. preamble/IFG) at pps, the "bps"
/// figure lab reports quote next to pps.
inline double
FrameBitRate(double pps, uint32_t frameBytes)
{
    return pps * 8.0 * PaddedFrameBytes(frameBytes);
}

/// Bit rate of a named Ethernet speed: "1G", "10G", "25G", "40G", "100G",
/// "400G" (also with "bE"/"GbE" suffixes such as "10GbE"). Throws
/// std::invalid_argument naming the text for anything else.
double EthernetBitRate(const std::string& name);

} // namespace routertwin::ethernet

#endif
