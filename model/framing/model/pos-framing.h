// Packet over SONET/SDH framing: PPP in HDLC-like framing (RFC 1662, RFC 2615)
// carried in a concatenated STS-Nc SPE.
//
// Contract:
// - SonetPayloadBps(N) is the payload capacity of an STS-Nc SPE (OC-3c ...
//   OC-768c), i.e. what is left for HDLC octets after section, line and path
//   overhead and fixed stuff. Not the line rate.
// - A PppHdlcConfig states the per-frame octets: flags (one shared flag
//   between back-to-back frames, or an opening and a closing flag), address
//   and control (0xFF 0x03 unless compressed), protocol field (2 octets, or 1
//   when PFC applies) and FCS-16 or FCS-32.
// - PosEncoder::Frame() builds the real HDLC octets of one IP packet and counts
//   the escapes that byte stuffing adds: every 0x7E or 0x7D between the flags
//   (address, control, protocol, payload and FCS) becomes two octets. The ACCM
//   is zero on SONET/SDH links (RFC 2615 section 4), so no other octet is
//   escaped.
// - TheoreticalPps() is the frame rate with no escapes at all: the denominator
//   a tester uses for "percent of theoretical maximum".
#ifndef ROUTERTWIN_POS_FRAMING_H
#define ROUTERTWIN_POS_FRAMING_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace routertwin
{

/// Payload capacity in bit/s of an STS-Nc SPE (N = 3, 12, 48, 192, 768; N = 1
/// gives the STS-1 SPE payload, 49.536 Mbit/s). Throws std::invalid_argument
/// for other N.
double SonetPayloadBps(unsigned n);

/// Line rate of an OC-N in bit/s (N x 51.84 Mbit/s).
double SonetLineBps(unsigned n);

/// Parses "OC-192", "oc192", "OC-768c", "STM-64" into N (STS-N); throws
/// std::invalid_argument naming the text when it is not a SONET/SDH rate.
unsigned ParseSonetRate(const std::string& text);

/// Per-frame PPP/HDLC octets around an IP packet.
struct PppHdlcConfig
{
    unsigned fcsBits = 32;       ///< 16 or 32 (RFC 2615 recommends 32 on OC-192)
    bool sharedFlag = true;      ///< one 0x7E between back-to-back frames
    bool addressControl = true;  ///< 0xFF 0x03 present (no ACFC)
    unsigned protocolBytes = 2;  ///< 2, or 1 when protocol field compression applies
    uint16_t protocol = 0x0021;  ///< PPP protocol number, IPv4

    /// Octets per frame outside the IP packet, before stuffing.
    unsigned OverheadBytes() const;
    /// Throws std::invalid_argument naming the field when inconsistent.
    void Validate() const;
};

/// RFC 1662 FCS-16 (CRC-16/X.25 as transmitted, ones-complemented).
uint16_t Fcs16(const uint8_t* data, size_t len);
/// RFC 1662 FCS-32 (CRC-32 as in IEEE 802.3, ones-complemented).
uint32_t Fcs32(const uint8_t* data, size_t len);

/// The result of framing one IP packet.
struct PosFrameInfo
{
    unsigned unstuffedBytes = 0; ///< flags + header + payload + FCS, no escapes
    unsigned escapes = 0;        ///< octets added by byte stuffing
    unsigned WireBytes() const { return unstuffedBytes + escapes; }
};

/// Frames IP packets as PPP in HDLC-like framing.
class PosEncoder
{
  public:
    explicit PosEncoder(const PppHdlcConfig& cfg);

    /// Frames `ip` (len octets); when `wire` is non-null it receives the
    /// stuffed octets as sent, flags included.
    PosFrameInfo Frame(const uint8_t* ip, size_t len, std::vector<uint8_t>* wire = nullptr) const;

    const PppHdlcConfig& Config() const { return m_cfg; }

  private:
    PppHdlcConfig m_cfg;
};

/// Frames per second of ipBytes-long packets at payloadBps with no escapes:
/// payloadBps / (8 (ipBytes + overhead)).
double TheoreticalPps(double payloadBps, const PppHdlcConfig& cfg, unsigned ipBytes);

/// Octets per frame of ipBytes-long packets with no escapes.
unsigned NominalFrameBytes(const PppHdlcConfig& cfg, unsigned ipBytes);

} // namespace routertwin

#endif
