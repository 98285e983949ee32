// Test-side frame assembly and RFC 1071 checksums, written independently of
// dp_build and dp_csum, so that the rewrites of dp_nat and dp_syncookie are
// checked against the wire format and a full recomputation, not against
// the core's own helpers.
#ifndef RT_CORE_TESTS_REF_FRAME_H
#define RT_CORE_TESTS_REF_FRAME_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ref {

inline uint16_t Get16(const uint8_t *p)
{
    return uint16_t((p[0] << 8) | p[1]);
}

inline uint32_t Get32(const uint8_t *p)
{
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

inline void Put16(uint8_t *p, uint16_t v)
{
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

inline void Put32(uint8_t *p, uint32_t v)
{
    p[0] = uint8_t(v >> 24);
    p[1] = uint8_t(v >> 16);
    p[2] = uint8_t(v >> 8);
    p[3] = uint8_t(v);
}

// RFC 1071: 32-bit accumulation of big-endian 16-bit words, odd byte padded
// with zero, carries folded at the end. Not complemented.
inline uint32_t Sum(const uint8_t *p, size_t n, uint32_t acc = 0)
{
    uint64_t s = acc;
    for (size_t i = 0; i < n; i++)
        s += (i & 1) ? p[i] : uint32_t(p[i]) << 8;
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return uint32_t(s);
}

// The IPv4 header checksum the header at ip should carry (its own field
// taken as zero).
inline uint16_t IpChecksum(const uint8_t *ip)
{
    size_t ihl = size_t(ip[0] & 15) * 4;
    std::vector<uint8_t> h(ip, ip + ihl);
    h[10] = h[11] = 0;
    return uint16_t(~Sum(h.data(), h.size()));
}

// The TCP/UDP checksum the segment of the IPv4 packet at ip should carry
// (pseudo-header of RFC 768/9293, segment with its field zeroed). UDP: a
// computed 0 is sent as 0xFFFF.
inline uint16_t L4Checksum(const uint8_t *ip)
{
    size_t ihl = size_t(ip[0] & 15) * 4, total = Get16(ip + 2);
    uint8_t proto = ip[9];
    std::vector<uint8_t> seg(ip + ihl, ip + total);
    size_t at = proto == 6 ? 16 : 6;
    seg[at] = seg[at + 1] = 0;
    uint32_t acc = Sum(ip + 12, 8, proto + uint32_t(seg.size()));
    uint16_t c = uint16_t(~Sum(seg.data(), seg.size(), acc));
    if (proto == 17 && c == 0)
        c = 0xFFFF;
    return c;
}

struct Spec {
    bool vlan = false;
    uint16_t tci = 0;
    uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0xd1};
    uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x51};
    std::vector<uint8_t> ip_opts; // multiple of 4, up to 40
    uint8_t tos = 0;
    uint16_t id = 0;
    uint16_t frag = 0x4000; // flags + offset field
    uint8_t ttl = 64;
    uint8_t proto = 6;
    uint32_t src = 0, dst = 0;
    uint16_t sport = 0, dport = 0;
    uint32_t seq = 0, ack = 0; // TCP
    uint8_t flags = 0x10;      // TCP
    uint16_t window = 8192;    // TCP
    std::vector<uint8_t> tcp_opts; // multiple of 4, up to 40
    std::vector<uint8_t> payload;
    bool l4_checksum = true; // UDP: false sends 0 ("none"); TCP always has one
    bool ip_checksum = true;
    size_t pad_to = 60;      // Ethernet minimum without FCS
};

// Frame for spec, with correct checksums.
inline std::vector<uint8_t> Build(const Spec &s)
{
    size_t l3 = s.vlan ? 18 : 14;
    size_t ihl = 20 + s.ip_opts.size();
    size_t l4hdr = s.proto == 6 ? 20 + s.tcp_opts.size() : s.proto == 17 ? 8 : 0;
    size_t total = ihl + l4hdr + s.payload.size();
    std::vector<uint8_t> f(l3 + total, 0);
    std::copy(s.dmac, s.dmac + 6, f.begin());
    std::copy(s.smac, s.smac + 6, f.begin() + 6);
    if (s.vlan) {
        Put16(&f[12], 0x8100);
        Put16(&f[14], s.tci);
    }
    Put16(&f[l3 - 2], 0x0800);
    uint8_t *ip = &f[l3];
    ip[0] = uint8_t(0x40 | (ihl / 4));
    ip[1] = s.tos;
    Put16(ip + 2, uint16_t(total));
    Put16(ip + 4, s.id);
    Put16(ip + 6, s.frag);
    ip[8] = s.ttl;
    ip[9] = s.proto;
    Put32(ip + 12, s.src);
    Put32(ip + 16, s.dst);
    std::copy(s.ip_opts.begin(), s.ip_opts.end(), ip + 20);
    uint8_t *l4 = ip + ihl;
    if (s.proto == 6) {
        Put16(l4, s.sport);
        Put16(l4 + 2, s.dport);
        Put32(l4 + 4, s.seq);
        Put32(l4 + 8, s.ack);
        l4[12] = uint8_t((l4hdr / 4) << 4);
        l4[13] = s.flags;
        Put16(l4 + 14, s.window);
        std::copy(s.tcp_opts.begin(), s.tcp_opts.end(), l4 + 20);
    } else if (s.proto == 17) {
        Put16(l4, s.sport);
        Put16(l4 + 2, s.dport);
        Put16(l4 + 4, uint16_t(l4hdr + s.payload.size()));
    }
    std::copy(s.payload.begin(), s.payload.end(), l4 + l4hdr);
    if (s.ip_checksum)
        Put16(ip + 10, IpChecksum(ip));
    if (s.proto == 6 || (s.proto == 17 && s.l4_checksum))
        Put16(l4 + (s.proto == 6 ? 16 : 6), L4Checksum(ip));
    if (f.size() < s.pad_to)
        f.resize(s.pad_to, 0);
    return f;
}

// A random spec: VLAN or not, 0-40 bytes of IP options, TCP with 0-40
// bytes of options or UDP with or without checksum, 0-99 payload bytes.
inline Spec RandomSpec(std::mt19937 &rng)
{
    Spec s;
    s.vlan = rng() % 3 == 0;
    s.tci = uint16_t(rng());
    for (auto &b : s.dmac)
        b = uint8_t(rng());
    for (auto &b : s.smac)
        b = uint8_t(rng());
    s.ip_opts.assign(4 * (rng() % 11), 1); // NOPs
    s.tos = uint8_t(rng());
    s.id = uint16_t(rng());
    s.frag = (rng() & 1) ? 0x4000 : 0;
    s.ttl = uint8_t(1 + rng() % 255);
    s.proto = (rng() & 1) ? 6 : 17;
    s.src = rng();
    s.dst = rng();
    s.sport = uint16_t(rng());
    s.dport = uint16_t(rng());
    s.seq = rng();
    s.ack = rng();
    s.flags = uint8_t(rng());
    s.window = uint16_t(rng());
    s.tcp_opts.assign(4 * (rng() % 11), 1);
    s.payload.resize(rng() % 100);
    for (auto &b : s.payload)
        b = uint8_t(rng());
    s.l4_checksum = s.proto == 6 || rng() % 3 != 0;
    return s;
}

} // namespace ref

#endif
