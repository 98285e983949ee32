// Test support: the TCP segments of a classic pcap file written by ns-3's
// PcapHelper on a point-to-point port (DLT_PPP: a 2-byte PPP protocol field,
// 0x0021 for IPv4, before each IPv4 packet), read independently of the
// switch's code: its own byte reader and its own RFC 1071 sum, so that a
// checksum the switch updates wrongly shows here.
#ifndef ROUTERTWIN_L7_PCAP_SEGMENTS_H
#define ROUTERTWIN_L7_PCAP_SEGMENTS_H

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace routertwin::test
{

struct Segment
{
    double t = 0;
    uint32_t src = 0, dst = 0;
    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    std::string payload;
    bool ipChecksumOk = false;
    bool tcpChecksumOk = false;
};

/// RFC 1071: the one's-complement sum of 16-bit big-endian words (an odd
/// last byte padded with zero), folded, not complemented.
inline uint32_t
OnesSum(const uint8_t* b, size_t n, uint32_t sum = 0)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t(b[i]) << 8) | b[i + 1];
    if (n & 1)
        sum += uint32_t(b[n - 1]) << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum;
}

inline uint32_t
Be32(const uint8_t* b)
{
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
}

/// Every IPv4/TCP record of path; an empty vector when it cannot be read.
inline std::vector<Segment>
ReadPcapSegments(const std::string& path)
{
    std::vector<Segment> out;
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (f.size() < 24)
        return out;
    const bool swapped = f[0] == 0xd4; // little-endian file (written by an x86 host)
    auto u32 = [&](size_t at) {
        return swapped ? (uint32_t(f[at + 3]) << 24) | (uint32_t(f[at + 2]) << 16) | (uint32_t(f[at + 1]) << 8) | f[at]
                       : Be32(&f[at]);
    };
    if (u32(20) != 9) // DLT_PPP
        return out;
    for (size_t at = 24; at + 16 <= f.size();)
    {
        const double t = u32(at) + u32(at + 4) * 1e-6;
        const uint32_t caplen = u32(at + 8);
        const uint8_t* r = &f[at + 16];
        at += 16 + caplen;
        if (at > f.size() || caplen < 2 + 40 || r[0] != 0x00 || r[1] != 0x21)
            continue;
        const uint8_t* ip = r + 2;
        const uint32_t ihl = (ip[0] & 0x0f) * 4u;
        const uint32_t total = (uint32_t(ip[2]) << 8) | ip[3];
        if (ip[9] != 6 || total > caplen - 2)
            continue;
        Segment s;
        s.t = t;
        s.src = Be32(ip + 12);
        s.dst = Be32(ip + 16);
        s.ipChecksumOk = OnesSum(ip, ihl) == 0xffff;
        const uint8_t* tcp = ip + ihl;
        const uint32_t tcpLen = total - ihl;
        s.sport = static_cast<uint16_t>((tcp[0] << 8) | tcp[1]);
        s.dport = static_cast<uint16_t>((tcp[2] << 8) | tcp[3]);
        s.seq = Be32(tcp + 4);
        s.ack = Be32(tcp + 8);
        s.flags = tcp[13];
        const uint32_t off = (tcp[12] >> 4) * 4u;
        s.payload.assign(reinterpret_cast<const char*>(tcp + off), tcpLen - off);
        // pseudo-header: addresses, zero + protocol, TCP length
        uint8_t pseudo[12];
        for (int i = 0; i < 8; ++i)
            pseudo[i] = ip[12 + i];
        pseudo[8] = 0;
        pseudo[9] = 6;
        pseudo[10] = uint8_t(tcpLen >> 8);
        pseudo[11] = uint8_t(tcpLen);
        s.tcpChecksumOk = OnesSum(tcp, tcpLen, OnesSum(pseudo, 12)) == 0xffff;
        out.push_back(s);
    }
    return out;
}

} // namespace routertwin::test

#endif
