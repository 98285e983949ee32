#include "pos-framing.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace routertwin
{

namespace
{
constexpr uint8_t kFlag = 0x7E;
constexpr uint8_t kEscape = 0x7D;
constexpr uint8_t kEscapeXor = 0x20;

// Bits per second carried by one SPE column: 9 rows x 8 bits x 8000 frames/s.
constexpr double kColumnBps = 9.0 * 8.0 * 8000.0;

// Reflected CRC tables built once; the polynomials are those of RFC 1662
// (0x8408 is x^16+x^12+x^5+1 reflected, 0xEDB88320 the reflected 802.3 one).
std::array<uint16_t, 256>
MakeTable16()
{
    std::array<uint16_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i)
    {
        uint16_t v = static_cast<uint16_t>(i);
        for (int b = 0; b < 8; ++b)
        {
            v = (v & 1) ? static_cast<uint16_t>((v >> 1) ^ 0x8408) : static_cast<uint16_t>(v >> 1);
        }
        t[i] = v;
    }
    return t;
}

std::array<uint32_t, 256>
MakeTable32()
{
    std::array<uint32_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i)
    {
        uint32_t v = i;
        for (int b = 0; b < 8; ++b)
        {
            v = (v & 1) ? (v >> 1) ^ 0xEDB88320u : v >> 1;
        }
        t[i] = v;
    }
    return t;
}

const std::array<uint16_t, 256> kTable16 = MakeTable16();
const std::array<uint32_t, 256> kTable32 = MakeTable32();

// Running (not yet complemented) CRCs over len more octets, so that a frame's
// FCS can be taken over its header and payload without joining them.
inline uint16_t
Crc16Update(uint16_t c, const uint8_t* data, size_t len)
{
    for (size_t i = 0; i < len; ++i)
    {
        c = static_cast<uint16_t>((c >> 8) ^ kTable16[(c ^ data[i]) & 0xFF]);
    }
    return c;
}

inline uint32_t
Crc32Update(uint32_t c, const uint8_t* data, size_t len)
{
    for (size_t i = 0; i < len; ++i)
    {
        c = (c >> 8) ^ kTable32[(c ^ data[i]) & 0xFF];
    }
    return c;
}
} // namespace

double
SonetPayloadBps(unsigned n)
{
    // STS-1 SPE: 87 columns, 1 of path overhead, 2 of fixed stuff -> 84.
    if (n == 1)
    {
        return 84 * kColumnBps;
    }
    // STS-Nc SPE (N a multiple of 3): 87N columns, 1 of path overhead and
    // N/3 - 1 of fixed stuff (GR-253 / ITU-T G.707), leaving 260 N/3 columns:
    // 149.76 Mbit/s per STS-3c worth, 9584.64 Mbit/s for STS-192c.
    if (n == 3 || n == 12 || n == 48 || n == 192 || n == 768)
    {
        return (260.0 * n / 3.0) * kColumnBps;
    }
    throw std::invalid_argument("SONET rate OC-" + std::to_string(n) +
                                " is not one of OC-1, 3, 12, 48, 192, 768");
}

double
SonetLineBps(unsigned n)
{
    return 51.84e6 * n;
}

unsigned
ParseSonetRate(const std::string& text)
{
    std::string s;
    for (char c : text)
    {
        if (c != '-' && c != ' ' && c != '_')
        {
            s.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
        }
    }
    if (!s.empty() && s.back() == 'C')
    {
        s.pop_back();
    }
    unsigned mult = 0;
    std::string digits;
    if (s.rfind("OC", 0) == 0 || s.rfind("STS", 0) == 0)
    {
        mult = 1;
        digits = s.substr(s[0] == 'O' ? 2 : 3);
    }
    else if (s.rfind("STM", 0) == 0)
    {
        mult = 3; // STM-N carries STS-3N
        digits = s.substr(3);
    }
    if (mult == 0 || digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    {
        throw std::invalid_argument("'" + text + "' is not a SONET/SDH rate such as OC-192 or STM-64");
    }
    unsigned n = static_cast<unsigned>(std::stoul(digits)) * mult;
    SonetPayloadBps(n); // rejects unsupported N
    return n;
}

unsigned
PppHdlcConfig::OverheadBytes() const
{
    return (sharedFlag ? 1u : 2u) + (addressControl ? 2u : 0u) + protocolBytes + fcsBits / 8;
}

void
PppHdlcConfig::Validate() const
{
    if (fcsBits != 16 && fcsBits != 32)
    {
        throw std::invalid_argument("fcs_bits must be 16 or 32, not " + std::to_string(fcsBits));
    }
    if (protocolBytes != 1 && protocolBytes != 2)
    {
        throw std::invalid_argument("protocol_bytes must be 1 or 2, not " +
                                    std::to_string(protocolBytes));
    }
    // PFC can only drop the high octet when it is zero (RFC 1661 6.5).
    if (protocolBytes == 1 && (protocol >> 8) != 0)
    {
        throw std::invalid_argument("protocol_bytes 1 needs a protocol number below 0x100");
    }
}

uint16_t
Fcs16(const uint8_t* data, size_t len)
{
    return static_cast<uint16_t>(~Crc16Update(0xFFFF, data, len));
}

uint32_t
Fcs32(const uint8_t* data, size_t len)
{
    return ~Crc32Update(0xFFFFFFFFu, data, len);
}

PosEncoder::PosEncoder(const PppHdlcConfig& cfg)
    : m_cfg(cfg)
{
    m_cfg.Validate();
}

PosFrameInfo
PosEncoder::Frame(const uint8_t* ip, size_t len, std::vector<uint8_t>* wire) const
{
    // Header octets, then the FCS over the unstuffed header and payload
    // (RFC 1662 section 3.1); the FCS octets are themselves stuffed. Streaming
    // the CRC avoids building the body: this runs for every simulated packet.
    uint8_t hdr[4];
    unsigned h = 0;
    if (m_cfg.addressControl)
    {
        hdr[h++] = 0xFF;
        hdr[h++] = 0x03;
    }
    if (m_cfg.protocolBytes == 2)
    {
        hdr[h++] = static_cast<uint8_t>(m_cfg.protocol >> 8);
    }
    hdr[h++] = static_cast<uint8_t>(m_cfg.protocol & 0xFF);

    uint8_t fcs[4];
    const unsigned fcsBytes = m_cfg.fcsBits / 8;
    if (m_cfg.fcsBits == 16)
    {
        const uint16_t c = static_cast<uint16_t>(~Crc16Update(Crc16Update(0xFFFF, hdr, h), ip, len));
        // Least significant octet first (RFC 1662 C.2).
        fcs[0] = static_cast<uint8_t>(c);
        fcs[1] = static_cast<uint8_t>(c >> 8);
    }
    else
    {
        const uint32_t c = ~Crc32Update(Crc32Update(0xFFFFFFFFu, hdr, h), ip, len);
        for (int i = 0; i < 4; ++i)
        {
            fcs[i] = static_cast<uint8_t>(c >> (8 * i));
        }
    }

    auto special = [](uint8_t b) { return b == kFlag || b == kEscape; };
    PosFrameInfo info;
    info.unstuffedBytes = (m_cfg.sharedFlag ? 1u : 2u) + h + static_cast<unsigned>(len) + fcsBytes;
    for (unsigned i = 0; i < h; ++i)
    {
        info.escapes += special(hdr[i]);
    }
    for (size_t i = 0; i < len; ++i)
    {
        info.escapes += special(ip[i]);
    }
    for (unsigned i = 0; i < fcsBytes; ++i)
    {
        info.escapes += special(fcs[i]);
    }
    if (wire)
    {
        wire->clear();
        // With a shared flag the frame is written with its opening flag only;
        // the next frame's opening flag closes it.
        wire->push_back(kFlag);
        auto put = [&](uint8_t b) {
            if (special(b))
            {
                wire->push_back(kEscape);
                wire->push_back(static_cast<uint8_t>(b ^ kEscapeXor));
            }
            else
            {
                wire->push_back(b);
            }
        };
        for (unsigned i = 0; i < h; ++i)
        {
            put(hdr[i]);
        }
        for (size_t i = 0; i < len; ++i)
        {
            put(ip[i]);
        }
        for (unsigned i = 0; i < fcsBytes; ++i)
        {
            put(fcs[i]);
        }
        if (!m_cfg.sharedFlag)
        {
            wire->push_back(kFlag);
        }
    }
    return info;
}

unsigned
NominalFrameBytes(const PppHdlcConfig& cfg, unsigned ipBytes)
{
    return ipBytes + cfg.OverheadBytes();
}

double
TheoreticalPps(double payloadBps, const PppHdlcConfig& cfg, unsigned ipBytes)
{
    return payloadBps / (8.0 * NominalFrameBytes(cfg, ipBytes));
}

} // namespace routertwin
