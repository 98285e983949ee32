// L4 balancer forwarding methods (dp_nat): NAT rewrites checked against a
// frame assembled from scratch with the new addresses and full RFC 1071
// checksums (tests/ref-frame.h), direct routing and IPIP against the wire
// format.
#include "dp_nat.h"
#include "dp_pkt.h"

#include "ref-frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using ref::Get16;

dp_parsed_t MustParse(const std::vector<uint8_t> &f, const dp_parse_opts_t *opts = nullptr)
{
    dp_parsed_t p;
    EXPECT_EQ(dp_parse(f.data(), f.size(), opts, &p, nullptr), DP_OK);
    return p;
}

void ExpectSameParse(const dp_parsed_t &a, const dp_parsed_t &b)
{
    EXPECT_EQ(a.ethertype, b.ethertype);
    EXPECT_EQ(a.vlan_tci, b.vlan_tci);
    EXPECT_EQ(a.l3_offset, b.l3_offset);
    EXPECT_EQ(a.l4_offset, b.l4_offset);
    EXPECT_EQ(a.payload_offset, b.payload_offset);
    EXPECT_EQ(a.payload_len, b.payload_len);
    EXPECT_EQ(a.ip_total_len, b.ip_total_len);
    EXPECT_EQ(a.ip_ihl, b.ip_ihl);
    EXPECT_EQ(a.ip_ttl, b.ip_ttl);
    EXPECT_EQ(a.ip_proto, b.ip_proto);
    EXPECT_EQ(a.tcp_flags, b.tcp_flags);
    EXPECT_EQ(a.src_ip, b.src_ip);
    EXPECT_EQ(a.dst_ip, b.dst_ip);
    EXPECT_EQ(a.src_port, b.src_port);
    EXPECT_EQ(a.dst_port, b.dst_port);
}

enum Op { kDst, kSrc, kFull };

// What dp_nat.h says one address+port rewrite adds.
void ExpectNatOps(const dp_ops_t &ops, int halves, bool has_l4_csum)
{
    EXPECT_EQ(ops.csum_updates, uint64_t(halves * (has_l4_csum ? 5 : 2)));
    EXPECT_EQ(ops.bytes_written, uint64_t(halves * (has_l4_csum ? 10 : 8)));
    dp_ops_t rest = ops;
    rest.csum_updates = rest.bytes_written = 0;
    dp_ops_t zero{};
    EXPECT_EQ(std::memcmp(&rest, &zero, sizeof zero), 0) << "no other counter moves";
}

} // namespace

// Every rewrite of a random packet (TCP/UDP, IP and TCP options, VLAN,
// UDP with and without checksum) must produce exactly the frame built from
// scratch with the new addresses and ports, checksums recomputed in full.
TEST(Nat, RewriteEqualsAFrameBuiltWithTheNewTupleOnRandomPackets)
{
    std::mt19937 rng(1624);
    int udp_none = 0, with_opts = 0;
    for (int i = 0; i < 100000; i++) {
        ref::Spec s = ref::RandomSpec(rng);
        std::vector<uint8_t> f = ref::Build(s);
        dp_parsed_t p = MustParse(f);
        Op op = Op(rng() % 3);
        uint32_t sip = rng(), dip = rng();
        uint16_t sport = uint16_t(rng()), dport = uint16_t(rng());
        dp_ops_t ops{};
        int rc;
        ref::Spec want = s;
        if (op == kDst) {
            rc = dp_nat_rewrite_dst(f.data(), f.size(), &p, dip, dport, &ops);
            want.dst = dip;
            want.dport = dport;
        } else if (op == kSrc) {
            rc = dp_nat_rewrite_src(f.data(), f.size(), &p, sip, sport, &ops);
            want.src = sip;
            want.sport = sport;
        } else {
            rc = dp_nat_rewrite_full(f.data(), f.size(), &p, sip, sport, dip, dport, &ops);
            want.src = sip;
            want.sport = sport;
            want.dst = dip;
            want.dport = dport;
        }
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(f, ref::Build(want)) << "packet " << i;
        ExpectSameParse(p, MustParse(f));
        bool csum = s.proto == 6 || s.l4_checksum;
        ExpectNatOps(ops, op == kFull ? 2 : 1, csum);
        udp_none += !csum;
        with_opts += !s.ip_opts.empty();
    }
    EXPECT_GT(udp_none, 10000); // the cases the test means to cover occur
    EXPECT_GT(with_opts, 50000);
}

// RFC 768: when the rewritten datagram's checksum computes to 0 it must be
// sent as 0xFFFF; and a checksum carried as 0xFFFF (a computed 0) updates
// like any other.
TEST(Nat, UdpChecksumThatComesOutZeroIsSentAsAllOnes)
{
    ref::Spec s;
    s.proto = 17;
    s.src = 0x0a000001;
    s.dst = 0xc0000201;
    s.sport = 5353;
    s.dport = 53;
    s.payload = {1, 2, 3, 4, 5};
    // The destination port that makes the one's-complement sum all ones.
    int zero_port = -1;
    for (int port = 0; port < 65536 && zero_port < 0; port++) {
        ref::Spec t = s;
        t.dport = uint16_t(port);
        t.dst = 0x0a640001;
        std::vector<uint8_t> g = ref::Build(t);
        if (Get16(&g[14 + 26]) == 0xFFFF)
            zero_port = port;
    }
    ASSERT_GE(zero_port, 0);
    std::vector<uint8_t> f = ref::Build(s);
    dp_parsed_t p = MustParse(f);
    ASSERT_EQ(dp_nat_rewrite_dst(f.data(), f.size(), &p, 0x0a640001, uint16_t(zero_port), nullptr), 0);
    EXPECT_EQ(Get16(&f[14 + 26]), 0xFFFF);
    {
        uint32_t acc = ref::Sum(&f[14 + 12], 8, 17 + 13u);
        EXPECT_EQ(ref::Sum(&f[14 + 20], 13, acc), 0xFFFFu) << "the datagram verifies";
    }
    // And back: 0xFFFF in, the original checksum out.
    ASSERT_EQ(dp_nat_rewrite_dst(f.data(), f.size(), &p, s.dst, s.dport, nullptr), 0);
    EXPECT_EQ(f, ref::Build(s));
}

TEST(Nat, UdpWithoutChecksumStaysWithout)
{
    ref::Spec s;
    s.proto = 17;
    s.l4_checksum = false;
    s.src = 1;
    s.dst = 2;
    s.payload.assign(20, 7);
    std::vector<uint8_t> f = ref::Build(s);
    dp_parsed_t p = MustParse(f);
    dp_ops_t ops{};
    ASSERT_EQ(dp_nat_rewrite_full(f.data(), f.size(), &p, 0x0a000001, 1000, 0x0a000002, 2000, &ops), 0);
    EXPECT_EQ(Get16(&f[14 + 26]), 0);
    EXPECT_EQ(ref::IpChecksum(&f[14]), Get16(&f[14 + 10]));
    ExpectNatOps(ops, 2, false);
}

// A rewrite must not launder a corrupted packet: an incremental update
// carries a wrong checksum's error over unchanged (the receiver still
// drops it), where a full recomputation would hide it.
TEST(Nat, BadChecksumsStayBadByTheSameAmount)
{
    std::mt19937 rng(768);
    for (int i = 0; i < 2000; i++) {
        ref::Spec s = ref::RandomSpec(rng);
        s.l4_checksum = true;
        std::vector<uint8_t> f = ref::Build(s);
        size_t ip = s.vlan ? 18 : 14, l4 = ip + 20 + s.ip_opts.size();
        size_t at = l4 + (s.proto == 6 ? 16 : 6);
        uint16_t ip_err = uint16_t(1 + rng() % 0xFFFE), l4_err = uint16_t(1 + rng() % 0xFFFE);
        ref::Put16(&f[ip + 10], uint16_t(Get16(&f[ip + 10]) ^ ip_err));
        ref::Put16(&f[at], uint16_t(Get16(&f[at]) ^ l4_err));
        dp_parse_opts_t lax = {0, 0};
        dp_parsed_t p = MustParse(f, &lax);
        uint32_t ip_before = ref::Sum(&f[ip], 20 + s.ip_opts.size());
        ASSERT_NE(ip_before, 0xFFFFu);
        ASSERT_EQ(dp_nat_rewrite_full(f.data(), f.size(), &p, rng(), uint16_t(rng()), rng(), uint16_t(rng()),
                                      nullptr),
                  0);
        // The header's one's-complement sum is unchanged by a correct
        // incremental update: still off by the same amount.
        EXPECT_EQ(ref::Sum(&f[ip], 20 + s.ip_opts.size()), ip_before);
        EXPECT_NE(ref::IpChecksum(&f[ip]), Get16(&f[ip + 10]));
    }
}

// A first fragment carries the ports; its L4 checksum covers the whole
// datagram, and the update stays exact for it. A later fragment has no
// ports and is refused, as is a protocol without ports.
TEST(Nat, FirstFragmentIsRewrittenLaterFragmentsAndIcmpAreRefused)
{
    ref::Spec s;
    s.proto = 17;
    s.src = 0xc0a80001;
    s.dst = 0xc0a800c7;
    s.sport = 1000;
    s.dport = 53;
    s.payload.resize(100);
    for (size_t i = 0; i < s.payload.size(); i++)
        s.payload[i] = uint8_t(i * 13);
    std::vector<uint8_t> whole = ref::Build(s);
    // First fragment: IP header + UDP header + 40 payload bytes, MF set.
    std::vector<uint8_t> frag(whole.begin(), whole.begin() + 14 + 20 + 48);
    ref::Put16(&frag[14 + 2], 20 + 48);
    ref::Put16(&frag[14 + 6], 0x2000);
    ref::Put16(&frag[14 + 10], ref::IpChecksum(&frag[14]));
    dp_parse_opts_t frags = {1, 1};
    dp_parsed_t p = MustParse(frag, &frags);
    ASSERT_EQ(dp_nat_rewrite_dst(frag.data(), frag.size(), &p, 0x0a000063, 8053, nullptr), 0);
    ref::Spec t = s;
    t.dst = 0x0a000063;
    t.dport = 8053;
    std::vector<uint8_t> want = ref::Build(t);
    EXPECT_EQ(Get16(&frag[14 + 26]), Get16(&want[14 + 26])) << "checksum of the whole rewritten datagram";
    EXPECT_EQ(ref::IpChecksum(&frag[14]), Get16(&frag[14 + 10]));

    std::vector<uint8_t> later(frag);
    ref::Put16(&later[14 + 6], 6); // offset 48 bytes
    ref::Put16(&later[14 + 10], ref::IpChecksum(&later[14]));
    p = MustParse(later, &frags);
    std::vector<uint8_t> before(later);
    dp_ops_t ops{};
    EXPECT_EQ(dp_nat_rewrite_dst(later.data(), later.size(), &p, 1, 2, &ops), DP_NAT_ENOL4);
    EXPECT_EQ(later, before);

    ref::Spec icmp = s;
    icmp.proto = 1;
    std::vector<uint8_t> g = ref::Build(icmp);
    p = MustParse(g);
    EXPECT_EQ(dp_nat_rewrite_src(g.data(), g.size(), &p, 1, 2, &ops), DP_NAT_ENOL4);
    EXPECT_EQ(ops.bytes_written + ops.csum_updates, 0u);
}

// A parse result that does not describe the frame makes every call fail
// without writing, whatever field is off.
TEST(Nat, StaleParseResultIsRefusedWithoutWriting)
{
    std::mt19937 rng(7);
    ref::Spec s = ref::RandomSpec(rng);
    s.vlan = true;
    s.proto = 6;
    s.ip_opts.assign(8, 1);
    std::vector<uint8_t> f = ref::Build(s);
    const dp_parsed_t good = MustParse(f);
    const std::vector<uint8_t> before(f);
    std::vector<void (*)(dp_parsed_t &)> breakers = {
        [](dp_parsed_t &q) { q.l3_offset = 14; },
        [](dp_parsed_t &q) { q.l3_offset = 22; },
        [](dp_parsed_t &q) { q.ip_ihl = 5; },
        [](dp_parsed_t &q) { q.l4_offset++; },
        [](dp_parsed_t &q) { q.ip_proto = 17; },
        [](dp_parsed_t &q) { q.ip_total_len++; },
        [](dp_parsed_t &q) { q.ethertype = 0x86DD; },
    };
    for (auto br : breakers) {
        dp_parsed_t p = good;
        br(p);
        dp_ops_t ops{};
        EXPECT_EQ(dp_nat_rewrite_full(f.data(), f.size(), &p, 1, 2, 3, 4, &ops), DP_NAT_EINVAL);
        size_t out_len = 0;
        dp_nat_tunnel_t t{};
        t.mtu = 1500;
        EXPECT_EQ(dp_nat_ipip_encap(f.data(), 0, f.size(), &p, &t, &out_len, &ops), DP_NAT_EINVAL);
        EXPECT_EQ(f, before);
        EXPECT_EQ(ops.bytes_written + ops.csum_updates + ops.checksum_bytes, 0u);
    }
    // A frame cut shorter than the parse says.
    dp_parsed_t p = good;
    EXPECT_EQ(dp_nat_rewrite_dst(f.data(), 18 + 20 + 8 + 20 - 1, &p, 1, 2, nullptr), DP_NAT_EINVAL);
    EXPECT_EQ(dp_nat_rewrite_dst(nullptr, f.size(), &p, 1, 2, nullptr), DP_NAT_EINVAL);
    EXPECT_EQ(f, before);
}

TEST(Nat, FullNatIsSourceThenDestination)
{
    std::mt19937 rng(99);
    for (int i = 0; i < 1000; i++) {
        ref::Spec s = ref::RandomSpec(rng);
        std::vector<uint8_t> a = ref::Build(s), b = a;
        dp_parsed_t pa = MustParse(a), pb = pa;
        uint32_t sip = rng(), dip = rng();
        uint16_t sp = uint16_t(rng()), dport = uint16_t(rng());
        dp_ops_t oa{}, ob{};
        ASSERT_EQ(dp_nat_rewrite_full(a.data(), a.size(), &pa, sip, sp, dip, dport, &oa), 0);
        ASSERT_EQ(dp_nat_rewrite_src(b.data(), b.size(), &pb, sip, sp, &ob), 0);
        ASSERT_EQ(dp_nat_rewrite_dst(b.data(), b.size(), &pb, dip, dport, &ob), 0);
        EXPECT_EQ(a, b);
        EXPECT_EQ(std::memcmp(&oa, &ob, sizeof oa), 0);
    }
}

TEST(DirectRouting, RewritesOnlyTheMacs)
{
    std::mt19937 rng(3);
    const uint8_t server[6] = {0x02, 0xaa, 0, 0, 0, 7}, lb[6] = {0x02, 0xbb, 0, 0, 0, 1};
    for (int i = 0; i < 1000; i++) {
        std::vector<uint8_t> f = ref::Build(ref::RandomSpec(rng));
        std::vector<uint8_t> before(f);
        dp_ops_t ops{};
        ASSERT_EQ(dp_nat_dr(f.data(), f.size(), server, lb, &ops), 0);
        EXPECT_EQ(std::memcmp(f.data(), server, 6), 0);
        EXPECT_EQ(std::memcmp(f.data() + 6, lb, 6), 0);
        EXPECT_TRUE(std::equal(f.begin() + 12, f.end(), before.begin() + 12)) << "IP bytes identical";
        EXPECT_EQ(ops.bytes_written, 12u);
    }
    uint8_t short_frame[11] = {};
    EXPECT_EQ(dp_nat_dr(short_frame, sizeof short_frame, server, lb, nullptr), DP_NAT_EINVAL);
}

namespace {

// Buffer with headroom in front of a frame.
struct Headroom {
    std::vector<uint8_t> buf;
    size_t room;
    Headroom(const std::vector<uint8_t> &f, size_t r) : buf(r + f.size(), 0xA5), room(r)
    {
        std::copy(f.begin(), f.end(), buf.begin() + long(r));
    }
    uint8_t *frame() { return buf.data() + room; }
};

} // namespace

// RFC 2003: the outer header is checked field by field and by a full
// checksum; the inner packet must be byte-identical; the L2 header (and
// its VLAN tag) moves up; dp_parse of the result agrees with p.
TEST(IpIp, OuterHeaderIsRfc2003AndInnerPacketUntouched)
{
    std::mt19937 rng(2003);
    for (int i = 0; i < 20000; i++) {
        ref::Spec s = ref::RandomSpec(rng);
        if (i % 5 == 0)
            s.proto = 47; // any protocol tunnels
        std::vector<uint8_t> f = ref::Build(s);
        size_t l3 = s.vlan ? 18 : 14;
        size_t total = Get16(&f[l3 + 2]);
        size_t room = 20 + rng() % 50;
        Headroom h(f, room);
        dp_parsed_t p = MustParse(f);
        dp_nat_tunnel_t t{};
        t.src_ip = rng();
        t.dst_ip = rng();
        for (auto &b : t.dst_mac)
            b = uint8_t(rng());
        for (auto &b : t.src_mac)
            b = uint8_t(rng());
        t.ip_id = uint16_t(rng());
        t.ttl = uint8_t(rng() % 4 == 0 ? 0 : rng());
        t.mtu = uint16_t(total + 20 + rng() % 3);
        size_t out_len = 0;
        dp_ops_t ops{};
        ASSERT_EQ(dp_nat_ipip_encap(h.frame(), room, f.size(), &p, &t, &out_len, &ops), 0);
        const uint8_t *o = h.frame() - 20;
        ASSERT_EQ(out_len, l3 + 20 + total);
        EXPECT_EQ(std::memcmp(o, t.dst_mac, 6), 0);
        EXPECT_EQ(std::memcmp(o + 6, t.src_mac, 6), 0);
        EXPECT_EQ(std::memcmp(o + 12, f.data() + 12, l3 - 12), 0) << "VLAN tag and EtherType moved up";
        const uint8_t *outer = o + l3;
        EXPECT_EQ(outer[0], 0x45);
        EXPECT_EQ(outer[1], s.tos);
        EXPECT_EQ(Get16(outer + 2), total + 20);
        EXPECT_EQ(Get16(outer + 4), t.ip_id);
        EXPECT_EQ(Get16(outer + 6), s.frag & 0x4000);
        EXPECT_EQ(outer[8], t.ttl ? t.ttl : s.ttl);
        EXPECT_EQ(outer[9], 4);
        EXPECT_EQ(ref::Get32(outer + 12), t.src_ip);
        EXPECT_EQ(ref::Get32(outer + 16), t.dst_ip);
        EXPECT_EQ(ref::Sum(outer, 20), 0xFFFFu) << "outer header checksum verifies (RFC 1071)";
        EXPECT_EQ(std::memcmp(outer + 20, f.data() + l3, total), 0) << "inner packet byte-identical";
        EXPECT_TRUE(std::all_of(h.buf.begin(), h.buf.begin() + long(room - 20), [](uint8_t b) { return b == 0xA5; }))
            << "nothing written before the new frame";
        std::vector<uint8_t> out(o, o + out_len);
        ExpectSameParse(p, MustParse(out));
        EXPECT_EQ(ops.bytes_written, l3 + 20);
        EXPECT_EQ(ops.checksum_bytes, 20u);
        EXPECT_EQ(ops.csum_updates + ops.bytes_copied, 0u);
    }
}

TEST(IpIp, RefusesShortHeadroomAndOversizePacketsWithoutWriting)
{
    ref::Spec s;
    s.proto = 6;
    s.src = 0x0a000001;
    s.dst = 0x0a000002;
    s.payload.resize(1460);
    s.frag = 0x4000; // DF
    std::vector<uint8_t> f = ref::Build(s); // IP total 1500
    dp_nat_tunnel_t t{};
    t.src_ip = 0xc0000201;
    t.dst_ip = 0xc0000202;
    t.mtu = 1520;
    size_t out_len = 0;
    for (size_t room : {0, 1, 19}) {
        Headroom h(f, room);
        std::vector<uint8_t> before(h.buf);
        dp_parsed_t p = MustParse(f);
        EXPECT_EQ(dp_nat_ipip_encap(h.frame(), room, f.size(), &p, &t, &out_len, nullptr), DP_NAT_ENOHEADROOM);
        EXPECT_EQ(h.buf, before);
    }
    // MTU 1519: one byte short. DF set: IPVS would send ICMP frag-needed.
    t.mtu = 1519;
    Headroom h(f, 20);
    std::vector<uint8_t> before(h.buf);
    dp_parsed_t p = MustParse(f);
    dp_ops_t ops{};
    EXPECT_EQ(dp_nat_ipip_encap(h.frame(), 20, f.size(), &p, &t, &out_len, &ops), DP_NAT_EFRAG_NEEDED);
    EXPECT_EQ(h.buf, before);
    // DF clear: IPVS would fragment the outer packet; here a named refusal.
    s.frag = 0;
    std::vector<uint8_t> g = ref::Build(s);
    Headroom h2(g, 20);
    before = h2.buf;
    p = MustParse(g);
    EXPECT_EQ(dp_nat_ipip_encap(h2.frame(), 20, g.size(), &p, &t, &out_len, &ops), DP_NAT_EMTU);
    EXPECT_EQ(h2.buf, before);
    EXPECT_EQ(ops.bytes_written + ops.checksum_bytes, 0u);
    // Exactly the MTU fits.
    t.mtu = 1520;
    EXPECT_EQ(dp_nat_ipip_encap(h2.frame(), 20, g.size(), &p, &t, &out_len, &ops), 0);
    EXPECT_EQ(out_len, 14u + 1520u);
}

namespace {

// The balancer's case: a client's full-size DF segment to a VIP that an
// IPIP tunnel with a 1500-byte MTU cannot carry (1500 + 20 > 1500).
ref::Spec FullSizeSegment()
{
    ref::Spec s;
    s.proto = 6;
    s.src = 0xc6120001; // 198.18.0.1
    s.dst = 0x0a000001; // VIP 10.0.0.1
    s.sport = 40000;
    s.dport = 80;
    s.id = 7;
    s.tos = 0x12;
    s.payload.assign(1460, 'x');
    s.frag = 0x4000;
    return s;
}

} // namespace

TEST(IcmpFragNeeded, IsRfc792And1191MessageBackToTheSender)
{
    for (bool vlan : {false, true}) {
        ref::Spec s = FullSizeSegment();
        s.vlan = vlan;
        s.tci = 0x0123;
        std::vector<uint8_t> f = ref::Build(s);
        const std::vector<uint8_t> orig = f;
        const size_t l3 = vlan ? 18 : 14;
        dp_parsed_t p = MustParse(f);
        dp_ops_t ops{};
        size_t out_len = 0;
        ASSERT_EQ(dp_nat_icmp_frag_needed(f.data(), f.size(), f.size(), &p, 1480, 0x0a000001, 0x1234, 64, &out_len,
                                          &ops),
                  0);
        ASSERT_EQ(out_len, l3 + 20 + 8 + 20 + 8); // RFC 792: the header and 64 bits of data
        const uint8_t *ip = f.data() + l3;
        const uint8_t *icmp = ip + 20;
        // Ethernet back to the sender, VLAN tag kept
        EXPECT_TRUE(std::equal(f.begin(), f.begin() + 6, orig.begin() + 6));
        EXPECT_TRUE(std::equal(f.begin() + 6, f.begin() + 12, orig.begin()));
        EXPECT_TRUE(std::equal(f.begin() + 12, f.begin() + long(l3), orig.begin() + 12));
        // IPv4: VIP -> client, protocol 1, TOS with precedence 6 (0xC0)
        EXPECT_EQ(ip[0], 0x45);
        EXPECT_EQ(ip[1], 0xC0 | (0x12 & 0x1E));
        EXPECT_EQ(Get16(ip + 2), 20 + 8 + 28);
        EXPECT_EQ(Get16(ip + 4), 0x1234);
        EXPECT_EQ(Get16(ip + 6), 0); // no DF on an ICMP error
        EXPECT_EQ(ip[8], 64);
        EXPECT_EQ(ip[9], 1);
        EXPECT_EQ(ref::Get32(ip + 12), 0x0a000001u);
        EXPECT_EQ(ref::Get32(ip + 16), 0xc6120001u);
        EXPECT_EQ(ref::Sum(ip, 20), 0xFFFFu) << "IPv4 header checksum verifies (RFC 1071)";
        // ICMP: type 3 code 4, unused 0, next-hop MTU 1480 (RFC 1191 section 4)
        EXPECT_EQ(icmp[0], 3);
        EXPECT_EQ(icmp[1], 4);
        EXPECT_EQ(Get16(icmp + 4), 0);
        EXPECT_EQ(Get16(icmp + 6), 1480);
        EXPECT_EQ(ref::Sum(icmp, 8 + 28), 0xFFFFu) << "ICMP checksum verifies over the message (RFC 792)";
        // the quote: the original IPv4 header and its first 8 bytes (the ports and sequence number)
        EXPECT_TRUE(std::equal(icmp + 8, icmp + 8 + 28, orig.begin() + long(l3)));
        // dp_parse agrees with what p says now
        std::vector<uint8_t> out(f.begin(), f.begin() + long(out_len));
        ExpectSameParse(p, MustParse(out));
        EXPECT_EQ(ops.bytes_written, l3 + 28);
        EXPECT_EQ(ops.bytes_copied, 28u);
        EXPECT_EQ(ops.checksum_bytes, 20u + 36u);
    }
}

TEST(IcmpFragNeeded, QuotesIpOptionsAndAShortPayloadWhole)
{
    ref::Spec s = FullSizeSegment();
    s.ip_opts = {1, 1, 1, 0, 1, 1, 1, 0}; // 8 bytes of options: IHL 7
    std::vector<uint8_t> f = ref::Build(s);
    const std::vector<uint8_t> orig = f;
    dp_parsed_t p = MustParse(f);
    size_t out_len = 0;
    ASSERT_EQ(dp_nat_icmp_frag_needed(f.data(), f.size(), f.size(), &p, 1480, 0x0a000001, 0, 64, &out_len, nullptr), 0);
    EXPECT_EQ(out_len, 14u + 28u + 28u + 8u);
    EXPECT_TRUE(std::equal(f.begin() + 42, f.begin() + long(out_len), orig.begin() + 14));
    EXPECT_EQ(ref::Sum(f.data() + 34, out_len - 34), 0xFFFFu);
}

TEST(IcmpFragNeeded, RefusesIcmpLaterFragmentsAndShortBuffersWithoutWriting)
{
    ref::Spec s = FullSizeSegment();
    std::vector<uint8_t> f = ref::Build(s);
    dp_parsed_t p = MustParse(f);
    std::vector<uint8_t> before = f;
    size_t out_len = 0;
    dp_ops_t ops{};
    // 14 + 20 + 8 + 28 = 70 bytes needed
    EXPECT_EQ(dp_nat_icmp_frag_needed(f.data(), f.size(), 69, &p, 1480, 1, 0, 64, &out_len, &ops), DP_NAT_ENOROOM);
    EXPECT_EQ(dp_nat_icmp_frag_needed(f.data(), f.size(), f.size(), &p, 1480, 1, 0, 64, nullptr, &ops),
              DP_NAT_EINVAL);
    dp_parsed_t stale = p;
    stale.ip_total_len = 1400;
    EXPECT_EQ(dp_nat_icmp_frag_needed(f.data(), f.size(), f.size(), &stale, 1480, 1, 0, 64, &out_len, &ops),
              DP_NAT_EINVAL);
    EXPECT_EQ(f, before);
    // RFC 1122 3.2.2: never about an ICMP message, nor a non-first fragment
    s.proto = 1;
    s.payload.assign(32, 0);
    std::vector<uint8_t> g = ref::Build(s);
    p = MustParse(g);
    before = g;
    EXPECT_EQ(dp_nat_icmp_frag_needed(g.data(), g.size(), g.size(), &p, 1480, 1, 0, 64, &out_len, &ops),
              DP_NAT_ENOICMP);
    EXPECT_EQ(g, before);
    s.proto = 17;
    s.frag = 0x0010; // offset 128 bytes
    std::vector<uint8_t> h = ref::Build(s);
    static const dp_parse_opts_t allow = {1, 1};
    p = MustParse(h, &allow);
    before = h;
    EXPECT_EQ(dp_nat_icmp_frag_needed(h.data(), h.size(), h.size(), &p, 1480, 1, 0, 64, &out_len, &ops),
              DP_NAT_ENOICMP);
    EXPECT_EQ(h, before);
    dp_ops_t zero{};
    EXPECT_EQ(std::memcmp(&ops, &zero, sizeof zero), 0);
}
