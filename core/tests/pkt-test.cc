// Ethernet/IPv4/UDP/TCP parser and builder. Frames are written out byte by
// byte here (not with dp_build), so the parser is checked against the wire
// format, not against the builder.
#include "dp_csum.h"
#include "dp_pkt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

void Put16(std::vector<uint8_t> &f, size_t at, uint16_t v)
{
    f[at] = uint8_t(v >> 8);
    f[at + 1] = uint8_t(v);
}

void FixIpChecksum(std::vector<uint8_t> &f, size_t l3)
{
    Put16(f, l3 + 10, 0);
    size_t ihl = size_t(f[l3] & 0x0F) * 4;
    Put16(f, l3 + 10, dp_csum(&f[l3], ihl, nullptr));
}

// Ethernet + the well-known IPv4 header 4500 0073 0000 4000 4011 b861
// c0a8 0001 c0a8 00c7 (192.168.0.1 -> 192.168.0.199, UDP, 115 bytes) + a UDP
// header 1234 -> 53 with length 95 and a zero payload.
std::vector<uint8_t> UdpFrame()
{
    std::vector<uint8_t> f = {
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61,
        0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        0x04, 0xd2, 0x00, 0x35, 0x00, 0x5f, 0x00, 0x00,
    };
    f.resize(14 + 0x73, 0);
    return f;
}

// Ethernet + 802.1Q (VID 100, PCP 5) + IPv4 with IHL 6 (one option word)
// + TCP with data offset 7 (two option words), SYN|ACK, 10 payload bytes.
std::vector<uint8_t> TaggedTcpFrame()
{
    const size_t ip_len = 24 + 28 + 10;
    std::vector<uint8_t> f(18 + ip_len, 0);
    const uint8_t l2[] = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0xa0, 0x64, 0x08, 0x00};
    std::copy(std::begin(l2), std::end(l2), f.begin());
    size_t ip = 18;
    f[ip] = 0x46;
    Put16(f, ip + 2, uint16_t(ip_len));
    Put16(f, ip + 4, 0xbeef);
    f[ip + 8] = 64;
    f[ip + 9] = 6;
    const uint8_t addrs[] = {10, 0, 0, 1, 10, 0, 0, 2};
    std::copy(std::begin(addrs), std::end(addrs), f.begin() + ip + 12);
    f[ip + 20] = 1; // NOP options
    f[ip + 21] = 1;
    f[ip + 22] = 1;
    f[ip + 23] = 0; // end of options
    FixIpChecksum(f, ip);
    size_t tcp = ip + 24;
    Put16(f, tcp, 40000);
    Put16(f, tcp + 2, 80);
    f[tcp + 12] = 7 << 4;
    f[tcp + 13] = 0x12;
    return f;
}

dp_drop_reason_t Parse(const std::vector<uint8_t> &f, size_t len, dp_parsed_t *out = nullptr,
                       const dp_parse_opts_t *opts = nullptr)
{
    dp_parsed_t scratch;
    return dp_parse(f.data(), len, opts, out ? out : &scratch, nullptr);
}

dp_drop_reason_t Parse(const std::vector<uint8_t> &f)
{
    return Parse(f, f.size());
}

} // namespace

TEST(Parse, ReadsEveryFieldOfAUdpFrame)
{
    auto f = UdpFrame();
    dp_parsed_t p;
    dp_ops_t ops{};
    ASSERT_EQ(dp_parse(f.data(), f.size(), nullptr, &p, &ops), DP_OK);
    EXPECT_EQ(p.ethertype, 0x0800);
    EXPECT_EQ(p.vlan_tci, 0);
    EXPECT_EQ(p.l3_offset, 14);
    EXPECT_EQ(p.l4_offset, 34);
    EXPECT_EQ(p.payload_offset, 42);
    EXPECT_EQ(p.payload_len, 0x73 - 20 - 8);
    EXPECT_EQ(p.ip_total_len, 0x73);
    EXPECT_EQ(p.ip_ihl, 5);
    EXPECT_EQ(p.ip_ttl, 64);
    EXPECT_EQ(p.ip_proto, 17);
    EXPECT_EQ(p.src_ip, 0xc0a80001u);
    EXPECT_EQ(p.dst_ip, 0xc0a800c7u);
    EXPECT_EQ(p.src_port, 1234);
    EXPECT_EQ(p.dst_port, 53);
    EXPECT_EQ(p.tcp_flags, 0);
    EXPECT_EQ(ops.packets, 1u);
    EXPECT_EQ(ops.bytes_parsed, 14u + 20u + 8u);
    EXPECT_EQ(ops.checksum_bytes, 20u);
}

TEST(Parse, ReadsVlanTagIpOptionsAndTcpOptions)
{
    auto f = TaggedTcpFrame();
    dp_parsed_t p;
    ASSERT_EQ(Parse(f, f.size(), &p), DP_OK);
    EXPECT_EQ(p.vlan_tci, 0xa064);
    EXPECT_EQ(p.l3_offset, 18);
    EXPECT_EQ(p.ip_ihl, 6);
    EXPECT_EQ(p.l4_offset, 18 + 24);
    EXPECT_EQ(p.payload_offset, 18 + 24 + 28);
    EXPECT_EQ(p.payload_len, 10);
    EXPECT_EQ(p.src_port, 40000);
    EXPECT_EQ(p.dst_port, 80);
    EXPECT_EQ(p.tcp_flags, 0x12);
    EXPECT_EQ(p.src_ip, 0x0a000001u);
}

TEST(Parse, AcceptsEthernetPaddingAfterTheIpPacket)
{
    auto f = UdpFrame();
    f.resize(f.size() + 7, 0xee);
    dp_parsed_t p;
    ASSERT_EQ(Parse(f, f.size(), &p), DP_OK);
    EXPECT_EQ(p.payload_len, 0x73 - 28);
}

// Every prefix of a valid frame is refused, with the reason for the first
// header that no longer fits: Ethernet below 14 bytes, IPv4 below 14+20,
// then the total length field claims more than is present.
TEST(Parse, RefusesEveryTruncationOfAUdpFrame)
{
    auto f = UdpFrame();
    for (size_t len = 0; len < f.size(); len++) {
        dp_drop_reason_t want = len < 14   ? DP_DROP_ETH_TRUNCATED
                                : len < 34 ? DP_DROP_IP4_TRUNCATED
                                           : DP_DROP_IP4_BAD_TOTAL_LENGTH;
        // The parser must not read past len: hand it an exact-size copy so
        // the sanitizer build catches any over-read.
        std::vector<uint8_t> cut(f.begin(), f.begin() + len);
        EXPECT_EQ(Parse(cut, len), want) << "len " << len;
    }
}

TEST(Parse, RefusesEveryTruncationOfATaggedTcpFrame)
{
    auto f = TaggedTcpFrame();
    for (size_t len = 0; len < f.size(); len++) {
        dp_drop_reason_t want = len < 18        ? DP_DROP_ETH_TRUNCATED
                                : len < 18 + 24 ? DP_DROP_IP4_TRUNCATED // IHL 6 needs 24
                                                : DP_DROP_IP4_BAD_TOTAL_LENGTH;
        std::vector<uint8_t> cut(f.begin(), f.begin() + len);
        EXPECT_EQ(Parse(cut, len), want) << "len " << len;
    }
}

TEST(Parse, RefusesNonIpv4AndDoubleTags)
{
    auto f = UdpFrame();
    Put16(f, 12, 0x86dd);
    EXPECT_EQ(Parse(f), DP_DROP_ETH_UNSUPPORTED_TYPE);
    auto t = TaggedTcpFrame();
    Put16(t, 16, 0x8100); // QinQ: a second tag
    EXPECT_EQ(Parse(t), DP_DROP_ETH_UNSUPPORTED_TYPE);
}

TEST(Parse, RefusesBadVersion)
{
    auto f = UdpFrame();
    f[14] = 0x65;
    EXPECT_EQ(Parse(f), DP_DROP_IP4_BAD_VERSION);
}

TEST(Parse, RefusesIhlBelowFive)
{
    for (uint8_t ihl = 0; ihl < 5; ihl++) {
        auto f = UdpFrame();
        f[14] = uint8_t(0x40 | ihl);
        EXPECT_EQ(Parse(f), DP_DROP_IP4_BAD_IHL) << int(ihl);
    }
}

TEST(Parse, RefusesIhlBeyondTheFrame)
{
    auto f = UdpFrame();
    f.resize(14 + 40);
    f[14] = 0x4f; // 60-byte header, 40 present
    EXPECT_EQ(Parse(f), DP_DROP_IP4_TRUNCATED);
}

TEST(Parse, RefusesTotalLengthShorterThanHeaderOrLongerThanFrame)
{
    auto f = UdpFrame();
    Put16(f, 16, 19);
    FixIpChecksum(f, 14);
    EXPECT_EQ(Parse(f), DP_DROP_IP4_BAD_TOTAL_LENGTH);
    Put16(f, 16, uint16_t(f.size() - 14 + 1));
    FixIpChecksum(f, 14);
    EXPECT_EQ(Parse(f), DP_DROP_IP4_BAD_TOTAL_LENGTH);
}

TEST(Parse, RefusesBadHeaderChecksumUnlessNotAsked)
{
    auto f = UdpFrame();
    f[14 + 11] ^= 1;
    EXPECT_EQ(Parse(f), DP_DROP_IP4_BAD_CHECKSUM);
    dp_parse_opts_t lax{0, 0};
    dp_parsed_t p;
    EXPECT_EQ(Parse(f, f.size(), &p, &lax), DP_OK);
}

TEST(Parse, RefusesFragmentsByDefault)
{
    for (uint16_t frag : {uint16_t(0x2000), uint16_t(0x0001), uint16_t(0x20b9)}) {
        auto f = UdpFrame();
        Put16(f, 14 + 6, frag);
        FixIpChecksum(f, 14);
        EXPECT_EQ(Parse(f), DP_DROP_IP4_FRAGMENT) << std::hex << frag;
    }
}

TEST(Parse, AllowedFragmentsParseL4OnlyInTheFirst)
{
    dp_parse_opts_t opts{1, 1};
    dp_parsed_t p;
    auto first = UdpFrame();
    Put16(first, 14 + 6, 0x2000); // MF, offset 0
    Put16(first, 34 + 4, 1000);   // UDP length of the whole datagram
    FixIpChecksum(first, 14);
    ASSERT_EQ(Parse(first, first.size(), &p, &opts), DP_OK);
    EXPECT_EQ(p.dst_port, 53);
    auto later = UdpFrame();
    Put16(later, 14 + 6, 0x00b9); // offset 185*8, last fragment
    FixIpChecksum(later, 14);
    ASSERT_EQ(Parse(later, later.size(), &p, &opts), DP_OK);
    EXPECT_EQ(p.src_port, 0);
    EXPECT_EQ(p.dst_port, 0);
    EXPECT_EQ(p.payload_offset, p.l4_offset);
    EXPECT_EQ(p.payload_len, 0x73 - 20);
}

TEST(Parse, RefusesBadUdpLength)
{
    for (uint16_t udp_len : {uint16_t(0), uint16_t(7), uint16_t(0x5f + 1), uint16_t(0xffff)}) {
        auto f = UdpFrame();
        Put16(f, 34 + 4, udp_len);
        EXPECT_EQ(Parse(f), DP_DROP_UDP_BAD_LENGTH) << udp_len;
    }
}

TEST(Parse, RefusesL4HeaderThatDoesNotFitTheIpPayload)
{
    auto f = UdpFrame();
    Put16(f, 16, 20 + 7); // 7 bytes of IP payload: no room for UDP
    FixIpChecksum(f, 14);
    EXPECT_EQ(Parse(f), DP_DROP_L4_TRUNCATED);
    auto t = TaggedTcpFrame();
    Put16(t, 18 + 2, 24 + 19); // 19 bytes: no room for TCP
    FixIpChecksum(t, 18);
    EXPECT_EQ(Parse(t), DP_DROP_L4_TRUNCATED);
}

TEST(Parse, RefusesBadTcpDataOffset)
{
    for (uint8_t doff : {uint8_t(0), uint8_t(4), uint8_t(10), uint8_t(15)}) {
        // IP payload is 38 bytes: offsets 10 (40 bytes) and 15 do not fit.
        auto t = TaggedTcpFrame();
        t[18 + 24 + 12] = uint8_t(doff << 4);
        EXPECT_EQ(Parse(t), DP_DROP_TCP_BAD_OFFSET) << int(doff);
    }
}

TEST(Parse, OtherIpProtocolsStopAtL3)
{
    auto f = UdpFrame();
    f[14 + 9] = 47; // GRE
    FixIpChecksum(f, 14);
    dp_parsed_t p;
    ASSERT_EQ(Parse(f, f.size(), &p), DP_OK);
    EXPECT_EQ(p.ip_proto, 47);
    EXPECT_EQ(p.src_port, 0);
    EXPECT_EQ(p.payload_offset, 34);
    EXPECT_EQ(p.payload_len, 0x73 - 20);
}

TEST(Build, UdpFrameMatchesTheWireFormat)
{
    // The builder reproduces the hand-written frame of UdpFrame() except
    // for the UDP checksum, which it fills in when asked.
    dp_build_spec_t s{};
    const uint8_t dmac[] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
    const uint8_t smac[] = {0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
    std::copy(std::begin(dmac), std::end(dmac), s.dst_mac);
    std::copy(std::begin(smac), std::end(smac), s.src_mac);
    s.src_ip = 0xc0a80001u;
    s.dst_ip = 0xc0a800c7u;
    s.ttl = 64;
    s.ip_proto = DP_IPPROTO_UDP;
    s.src_port = 1234;
    s.dst_port = 53;
    s.payload_len = 0x73 - 28;
    std::vector<uint8_t> buf(200, 0xcc);
    size_t n = 0;
    ASSERT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_OK);
    buf.resize(n);
    EXPECT_EQ(buf, UdpFrame());

    s.l4_checksum = 1;
    buf.assign(200, 0);
    ASSERT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_OK);
    // Receiver check: pseudo-header + UDP segment sums to 0xffff.
    uint32_t pseudo = dp_csum_partial(&buf[26], 8, 0, nullptr) + 17u + 0x5fu;
    EXPECT_EQ(dp_csum_partial(&buf[34], 0x5f, pseudo, nullptr), 0xffff);
}

TEST(Build, PadsShortFramesToSixtyBytesAndRefusesSmallBuffers)
{
    dp_build_spec_t s{};
    s.ip_proto = DP_IPPROTO_UDP;
    s.ttl = 1;
    EXPECT_EQ(dp_build_len(DP_IPPROTO_UDP, 0), 42u);
    std::vector<uint8_t> buf(59, 0xcc);
    size_t n = 0;
    EXPECT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_DROP_BUFFER_TOO_SMALL);
    EXPECT_EQ(buf, std::vector<uint8_t>(59, 0xcc)) << "nothing written";
    buf.assign(60, 0xcc);
    ASSERT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_OK);
    EXPECT_EQ(n, 60u);
    for (size_t i = 42; i < 60; i++)
        EXPECT_EQ(buf[i], 0) << i;
}

TEST(Build, RefusesOtherProtocolsAndOversizePackets)
{
    dp_build_spec_t s{};
    std::vector<uint8_t> buf(70000);
    size_t n = 0;
    s.ip_proto = 1;
    EXPECT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_DROP_BAD_BUILD_SPEC);
    s.ip_proto = DP_IPPROTO_TCP;
    s.payload_len = 65535 - 40 + 1;
    EXPECT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_DROP_BAD_BUILD_SPEC);
    s.payload_len = 65535 - 40;
    EXPECT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_OK);
}

// parse(build(spec)) gives back every field of spec, for random specs.
TEST(Build, ParseOfBuildRoundTrips)
{
    std::mt19937 rng(99);
    std::vector<uint8_t> payload(1500);
    for (auto &b : payload)
        b = uint8_t(rng());
    for (int i = 0; i < 2000; i++) {
        dp_build_spec_t s{};
        for (auto &b : s.dst_mac)
            b = uint8_t(rng());
        for (auto &b : s.src_mac)
            b = uint8_t(rng());
        s.src_ip = rng();
        s.dst_ip = rng();
        s.ttl = uint8_t(rng());
        s.ip_proto = (rng() & 1) ? DP_IPPROTO_TCP : DP_IPPROTO_UDP;
        s.ip_id = uint16_t(rng());
        s.src_port = uint16_t(rng());
        s.dst_port = uint16_t(rng());
        s.tcp_seq = rng();
        s.tcp_ack = rng();
        s.tcp_flags = uint8_t(rng());
        s.payload = (rng() & 1) ? payload.data() : nullptr;
        s.payload_len = uint16_t(rng() % payload.size());
        s.l4_checksum = int(rng() & 1);
        std::vector<uint8_t> buf(1600);
        size_t n = 0;
        ASSERT_EQ(dp_build(&s, buf.data(), buf.size(), &n, nullptr), DP_OK);
        dp_parsed_t p;
        ASSERT_EQ(dp_parse(buf.data(), n, nullptr, &p, nullptr), DP_OK);
        EXPECT_EQ(p.src_ip, s.src_ip);
        EXPECT_EQ(p.dst_ip, s.dst_ip);
        EXPECT_EQ(p.ip_ttl, s.ttl);
        EXPECT_EQ(p.ip_proto, s.ip_proto);
        EXPECT_EQ(p.src_port, s.src_port);
        EXPECT_EQ(p.dst_port, s.dst_port);
        EXPECT_EQ(p.payload_len, s.payload_len);
        EXPECT_EQ(p.tcp_flags, s.ip_proto == DP_IPPROTO_TCP ? s.tcp_flags : 0);
        EXPECT_EQ(n, std::max<size_t>(60, dp_build_len(s.ip_proto, s.payload_len)));
        EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + 6, s.dst_mac));
        if (s.payload && s.payload_len)
            EXPECT_TRUE(std::equal(payload.begin(), payload.begin() + s.payload_len, buf.begin() + p.payload_offset));
        EXPECT_EQ(dp_csum(&buf[14], 20, nullptr), 0) << "IPv4 header checksum verifies";
        if (s.l4_checksum) {
            // Receiver check (RFC 768/793): pseudo-header + segment sums to
            // 0xffff when the checksum is right.
            uint32_t l4_len = uint32_t(p.ip_total_len) - 20u;
            uint32_t pseudo = dp_csum_partial(&buf[26], 8, 0, nullptr) + s.ip_proto + l4_len;
            EXPECT_EQ(dp_csum_partial(&buf[34], l4_len, pseudo, nullptr), 0xffff);
        }
        if (HasFailure())
            return;
    }
}
