// Delayed binding and TCP splicing (dp_splice). Checksums are compared
// with a full recompute (tests/ref-frame.h, RFC 1071 over the
// pseudo-header and segment); sequence arithmetic with hand-worked values
// across the 2^32 wrap; and a whole keep-alive connection (two requests,
// a rebind to another server, a Set-Cookie inserted, retransmissions,
// every ISN near the wrap) against a brute-force model of the byte
// streams each endpoint must receive.
#include "dp_cookie.h"
#include "dp_http.h"
#include "dp_pkt.h"
#include "dp_splice.h"
#include "dp_syncookie.h"

#include "ref-frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using ref::Get16;
using ref::Get32;

const uint32_t kClient = 0xC6120001, kVip = 0xC6120101, kServerA = 0xC6130001, kServerB = 0xC6130002;

std::vector<uint8_t> Seg(uint32_t src, uint32_t dst, uint32_t seq, uint32_t ack, uint8_t flags,
                         const std::string &payload, size_t extra_cap = 0)
{
    ref::Spec s;
    s.src = src;
    s.dst = dst;
    s.sport = 40000;
    s.dport = 80;
    s.seq = seq;
    s.ack = ack;
    s.flags = flags;
    s.payload.assign(payload.begin(), payload.end());
    std::vector<uint8_t> f = ref::Build(s);
    f.reserve(f.size() + extra_cap);
    return f;
}

dp_parsed_t Parse(const std::vector<uint8_t> &f, size_t len)
{
    dp_parsed_t p;
    EXPECT_EQ(dp_parse(f.data(), len, nullptr, &p, nullptr), DP_OK);
    return p;
}

// The TCP checksum of the frame equals a full recompute (0 and 0xFFFF
// are the same one's-complement number, RFC 1624 section 3).
void ExpectChecksumsRight(const std::vector<uint8_t> &f, const char *what)
{
    const uint8_t *ip = f.data() + 14;
    EXPECT_EQ(Get16(ip + 10), ref::IpChecksum(ip)) << what;
    uint16_t got = Get16(ip + 20 + 16), want = ref::L4Checksum(ip);
    EXPECT_TRUE(got == want || (got | want) == 0xFFFF && (got == 0 || want == 0)) << what << " " << got << " "
                                                                                   << want;
}

TEST(Splice, SequenceComparisonIsModulo2To32)
{
    EXPECT_TRUE(dp_splice_after(1, 0xFFFFFFFFu));
    EXPECT_FALSE(dp_splice_after(0xFFFFFFFFu, 1));
    EXPECT_TRUE(dp_splice_after(0x7FFFFFFFu, 0));
    EXPECT_FALSE(dp_splice_after(0x80000000u, 0)); // exactly 2^31 apart: not after
    EXPECT_FALSE(dp_splice_after(5, 5));
    dp_splice_t sp;
    dp_splice_accept(&sp, 0xFFFFFFF0u, 0xFFFFFFFEu, nullptr);
    uint32_t skip, take;
    ASSERT_EQ(dp_splice_take(&sp, 0xFFFFFFF1u, 1, 0xFFFFFFFFu, 40, &skip, &take, nullptr), 0);
    EXPECT_EQ(sp.c_next, 0x19u); // 0xFFFFFFF1 + 40 wraps to 0x19
    // Client bytes from 0xFFFFFFF1 go to the server from 0x10: D_c = 0x1F.
    ASSERT_EQ(dp_splice_bind(&sp, 0xFFFFFFF1u, 0x10u, 0xFFFFFF00u, 0xFFFFFFFFu, nullptr), 0);
    EXPECT_EQ(dp_splice_map_seq(&sp, DP_SPLICE_C2S, 0xFFFFFFF1u), 0x10u);
    EXPECT_EQ(dp_splice_map_seq(&sp, DP_SPLICE_C2S, 0x19u), 0x38u);
    EXPECT_EQ(dp_splice_map_seq(&sp, DP_SPLICE_S2C, 0xFFFFFF00u), 0xFFFFFFFFu);
    EXPECT_EQ(dp_splice_map_seq(&sp, DP_SPLICE_S2C, 0xFFFFFF10u), 0x0Fu);
    // The client acknowledging 0x0F means the server's 0xFFFFFF10.
    EXPECT_EQ(dp_splice_map_ack(&sp, DP_SPLICE_C2S, 0x0Fu), 0xFFFFFF10u);
    EXPECT_EQ(dp_splice_map_ack(&sp, DP_SPLICE_S2C, 0x38u), 0x19u);
}

TEST(Splice, HandshakeAndBufferingTakeOnlyNewInOrderBytes)
{
    dp_splice_t sp;
    dp_ops_t ops = {};
    dp_splice_accept(&sp, 1000, 5000, &ops);
    uint32_t skip = 9, take = 9;
    EXPECT_EQ(dp_splice_take(&sp, 1001, 1, 5000, 10, &skip, &take, &ops), DP_SPLICE_EACK);
    EXPECT_EQ(dp_splice_take(&sp, 1001, 0, 5001, 10, &skip, &take, &ops), DP_SPLICE_EACK);
    EXPECT_EQ(sp.state, DP_SPLICE_SYN_RCVD);
    EXPECT_EQ(dp_splice_take(&sp, 1001, 1, 5001, 0, &skip, &take, &ops), 0); // the handshake ACK
    EXPECT_EQ(sp.state, DP_SPLICE_BUFFERING);
    EXPECT_EQ(dp_splice_take(&sp, 1011, 1, 5001, 10, &skip, &take, &ops), DP_SPLICE_EGAP);
    EXPECT_EQ(dp_splice_take(&sp, 1001, 1, 5001, 10, &skip, &take, &ops), 0);
    EXPECT_EQ(skip, 0u);
    EXPECT_EQ(take, 10u);
    EXPECT_EQ(dp_splice_take(&sp, 1006, 1, 5001, 10, &skip, &take, &ops), 0); // overlaps 5 old bytes
    EXPECT_EQ(skip, 5u);
    EXPECT_EQ(take, 5u);
    EXPECT_EQ(dp_splice_take(&sp, 1001, 1, 5001, 10, &skip, &take, &ops), 0); // all old
    EXPECT_EQ(skip, 10u);
    EXPECT_EQ(take, 0u);
    EXPECT_EQ(sp.c_next, 1016u);
    // accept, handshake, two takes that advanced c_next.
    EXPECT_EQ(ops.table_writes, 4u);
    dp_parsed_t p{};
    std::vector<uint8_t> f = Seg(kClient, kVip, 1, 2, 0x10, "x");
    p = Parse(f, f.size());
    EXPECT_EQ(dp_splice_xlate(&sp, DP_SPLICE_C2S, f.data(), f.size(), &p, nullptr), DP_SPLICE_ESTATE);
}

// The switch's ISN may be a SYN cookie (no state before the handshake
// completes): the ACK that completes it both validates the cookie and
// moves the splice to BUFFERING; a forged ACK does neither.
TEST(Splice, SynCookieServesAsTheSwitchIsn)
{
    dp_syncookie_config_t cfg = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 5, 1};
    dp_syncookie_t sc;
    ASSERT_EQ(dp_syncookie_init(&sc, &cfg), 0);
    dp_syncookie_tuple_t t = {kClient, kVip, 40000, 80};
    uint32_t cookie = dp_syncookie_make(&sc, &t, 1460, 7, nullptr);
    dp_splice_t sp;
    dp_splice_accept(&sp, 0xFFFFFFFFu, cookie, nullptr);
    uint32_t skip, take, ack = cookie + 1;
    EXPECT_EQ(dp_syncookie_check(&sc, &t, ack - 1, 7, nullptr), 1460);
    EXPECT_EQ(dp_splice_take(&sp, 0, 1, ack + 1, 0, &skip, &take, nullptr), DP_SPLICE_EACK);
    EXPECT_EQ(dp_splice_take(&sp, 0, 1, ack, 5, &skip, &take, nullptr), 0);
    EXPECT_EQ(sp.state, DP_SPLICE_BUFFERING);
    EXPECT_EQ(take, 5u);
    EXPECT_EQ(sp.c_next, 5u); // client ISN 0xFFFFFFFF: data from 0 after the wrap
}

TEST(Splice, XlateChecksumMatchesFullRecompute)
{
    std::mt19937 rng(3);
    for (int i = 0; i < 2000; i++) {
        dp_splice_t sp;
        dp_splice_accept(&sp, rng(), rng(), nullptr);
        sp.state = DP_SPLICE_BUFFERING;
        uint32_t req = rng(), local = rng(), srv = rng(), resp = rng();
        ASSERT_EQ(dp_splice_bind(&sp, req, local, srv, resp, nullptr), 0);
        uint8_t flags = uint8_t(rng() % 2 ? 0x18 : 0x02 | (rng() % 2 ? 0x10 : 0));
        std::string payload(rng() % 40, char(rng()));
        uint32_t seq = rng(), ack = rng();
        dp_splice_dir_t dir = rng() % 2 ? DP_SPLICE_C2S : DP_SPLICE_S2C;
        std::vector<uint8_t> f = Seg(kClient, kVip, seq, ack, flags, payload);
        dp_parsed_t p = Parse(f, f.size());
        dp_ops_t ops = {};
        ASSERT_EQ(dp_splice_xlate(&sp, dir, f.data(), f.size(), &p, &ops), 0);
        const uint8_t *tcp = f.data() + 34;
        uint32_t dc = local - req, ds = resp - srv;
        EXPECT_EQ(Get32(tcp + 4), seq + (dir == DP_SPLICE_C2S ? dc : ds));
        EXPECT_EQ(Get32(tcp + 8), (flags & 0x10) ? ack - (dir == DP_SPLICE_C2S ? ds : dc) : ack);
        ExpectChecksumsRight(f, "xlate");
        EXPECT_EQ(ops.csum_updates, (flags & 0x10) ? 4u : 2u);
        EXPECT_EQ(ops.bytes_written, (flags & 0x10) ? 10u : 6u);
        EXPECT_EQ(ops.bytes_parsed, 8u);
    }
}

TEST(Splice, EditFrameChecksumsMatchFullRecompute)
{
    std::mt19937 rng(4);
    for (int i = 0; i < 3000; i++) {
        dp_splice_t sp;
        dp_splice_accept(&sp, 1, 1, nullptr);
        sp.state = DP_SPLICE_BUFFERING;
        dp_splice_bind(&sp, 2, 2, 2, 2, nullptr);
        std::string payload(rng() % 60, 0);
        for (char &c : payload)
            c = char(rng());
        uint32_t off = payload.empty() ? 0 : rng() % (payload.size() + 1);
        uint32_t del = rng() % (payload.size() - off + 1);
        std::string ins(rng() % 30, 0);
        for (char &c : ins)
            c = char(rng());
        std::vector<uint8_t> f = Seg(kServerA, kClient, rng(), rng(), 0x18, payload);
        size_t len = f.size();
        f.resize(len + 64, 0xEE);
        dp_parsed_t p = Parse(f, len);
        size_t out = 0;
        dp_ops_t ops = {};
        ASSERT_EQ(dp_splice_edit_frame(&sp, DP_SPLICE_S2C, f.data(), len, f.size(), &p, off, del,
                                       (const uint8_t *)ins.data(), (uint32_t)ins.size(), &out, &ops),
                  0);
        std::string want = payload.substr(0, off) + ins + payload.substr(off + del);
        f.resize(out);
        dp_parsed_t q = Parse(f, out);
        EXPECT_EQ(q.payload_len, want.size());
        EXPECT_EQ(std::string((const char *)f.data() + q.payload_offset, q.payload_len), want);
        EXPECT_EQ(p.ip_total_len, q.ip_total_len);
        ExpectChecksumsRight(f, "edit");
        uint32_t tail = uint32_t(payload.size() - off - del);
        bool odd = ((ins.size() - del) & 1) != 0;
        EXPECT_EQ(ops.checksum_bytes, del + ins.size() + (odd ? 2 * tail : 0));
        EXPECT_EQ(ops.csum_updates, 3u);
        EXPECT_EQ(ops.bytes_copied, ins.size() != del ? tail : 0u);
        EXPECT_EQ(sp.s2c.offset_after, uint32_t(ins.size() - del));
    }
}

// One keep-alive client connection, two requests, each bound to another
// server, a Set-Cookie inserted in the first response, retransmissions;
// every ISN within a few hundred bytes of 2^32. The model: each receiver
// places payloads at (seq - its peer's ISN - 1) and must end up with
// exactly the bytes the model says were sent to it; every ACK at a segment
// boundary must name the receiver's own byte count.
struct Receiver {
    uint32_t base; // first sequence number of the stream
    std::string got;
    void Put(uint32_t seq, const uint8_t *b, size_t n)
    {
        uint32_t at = seq - base;
        ASSERT_LT(at, 1u << 20);
        if (got.size() < at + n)
            got.resize(at + n, '?');
        std::memcpy(&got[at], b, n);
    }
};

std::vector<size_t> Cuts(std::mt19937 &rng, size_t n)
{
    std::vector<size_t> c = {0};
    while (c.back() < n)
        c.push_back(std::min(n, c.back() + 1 + rng() % 23));
    return c;
}

TEST(Splice, KeepAliveConnectionMatchesByteStreamModel)
{
    for (unsigned seed = 0; seed < 200; seed++) {
        std::mt19937 rng(seed);
        const uint32_t cisn = 0xFFFFFF00u + rng() % 256, visn = 0xFFFFFFF0u + rng() % 16;
        const std::string req[2] = {"GET /index.htm HTTP/1.1\r\nHost: www\r\n\r\n",
                                    "GET /logo.gif HTTP/1.1\r\nHost: www\r\nCookie: SRVID=A\r\n\r\n"};
        const std::string body[2] = {std::string(100 + rng() % 300, 'h'), std::string(50 + rng() % 200, 'g')};
        const uint32_t sisn[2] = {uint32_t(0xFFFFFFFFu - rng() % 64), uint32_t(rng())};
        std::string resp[2], client_want;
        dp_splice_t sp;
        ASSERT_EQ(dp_splice_accept(&sp, cisn, visn, nullptr), 0);
        uint32_t skip, take;
        ASSERT_EQ(dp_splice_take(&sp, cisn + 1, 1, visn + 1, 0, &skip, &take, nullptr), 0);
        Receiver client{visn + 1, ""};
        uint32_t req_seq = cisn + 1;
        for (int r = 0; r < 2; r++) {
            // Client request in random segments (one retransmitted), into the parser.
            std::vector<uint8_t> hbuf(4096);
            dp_http_t h;
            dp_http_config_t cfg = {8190, 101};
            dp_http_init(&h, &cfg, hbuf.data(), 4096, 0);
            std::vector<size_t> cuts = Cuts(rng, req[r].size());
            for (size_t k = 0; k + 1 < cuts.size(); k++) {
                for (int again = 0; again < (k == 1 ? 2 : 1); again++) {
                    ASSERT_EQ(dp_splice_take(&sp, req_seq + uint32_t(cuts[k]), 1, sp.v_next,
                                             uint32_t(cuts[k + 1] - cuts[k]), &skip, &take, nullptr),
                              0);
                    dp_http_feed(&h, (const uint8_t *)req[r].data() + cuts[k] + skip, take, nullptr, nullptr);
                }
            }
            ASSERT_EQ(h.status, DP_HTTP_DONE);
            ASSERT_EQ(sp.c_next, req_seq + uint32_t(req[r].size()));
            // Server connection, ISN derived from the client's: l = req_seq - 1.
            const uint32_t l = req_seq - 1;
            ASSERT_EQ(dp_splice_bind(&sp, req_seq, l + 1, sisn[r] + 1, sp.v_next, nullptr), 0);
            EXPECT_EQ(dp_splice_map_seq(&sp, DP_SPLICE_C2S, req_seq), l + 1);
            Receiver server{l + 1, ""};
            server.Put(l + 1, (const uint8_t *)req[r].data(), req[r].size()); // the buffered request, sent by the switch
            EXPECT_EQ(server.got, req[r]);
            // Server response: head + body in random segments; the switch
            // holds them until the head is parsed, inserts a Set-Cookie in
            // the first response, then forwards all (with a retransmission).
            resp[r] = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body[r].size()) + "\r\n\r\n" + body[r];
            std::vector<uint8_t> rbuf(4096);
            dp_http_t rh;
            dp_http_init(&rh, &cfg, rbuf.data(), 4096, 1);
            dp_http_feed(&rh, (const uint8_t *)resp[r].data(), resp[r].size(), nullptr, nullptr);
            ASSERT_EQ(rh.status, DP_HTTP_DONE);
            dp_cookie_edit_t e{};
            if (r == 0)
                ASSERT_EQ(dp_cookie_insert(&rh, "SRVID", "A", &e, nullptr), 0);
            std::string sent = resp[r];
            sent.insert(e.off, std::string((const char *)e.ins, e.ins_len));
            client_want += sent;
            std::vector<size_t> rc = Cuts(rng, resp[r].size());
            std::vector<size_t> order;
            for (size_t k = 0; k + 1 < rc.size(); k++) {
                order.push_back(k);
                if (rng() % 4 == 0)
                    order.push_back(rng() % (k + 1)); // a retransmission of this or an earlier segment
            }
            for (size_t k : order) {
                std::string pay = resp[r].substr(rc[k], rc[k + 1] - rc[k]);
                std::vector<uint8_t> f = Seg(kServerA, kVip, sisn[r] + 1 + uint32_t(rc[k]), l + 1 + uint32_t(req[r].size()),
                                             0x18, pay);
                size_t len = f.size();
                f.resize(len + 256);
                dp_parsed_t p = Parse(f, len);
                bool holds = r == 0 && e.off >= rc[k] && (e.off < rc[k + 1] || (e.off == rc[k + 1] && k + 2 == rc.size()));
                if (holds) {
                    ASSERT_EQ(dp_splice_edit_frame(&sp, DP_SPLICE_S2C, f.data(), len, f.size(), &p,
                                                   uint32_t(e.off - rc[k]), 0, e.ins, e.ins_len, &len, nullptr),
                              0);
                    f.resize(len);
                    p = Parse(f, len);
                }
                ASSERT_EQ(dp_splice_xlate(&sp, DP_SPLICE_S2C, f.data(), len, &p, nullptr), 0);
                ExpectChecksumsRight(f, "response");
                const uint8_t *tcp = f.data() + p.l4_offset;
                EXPECT_EQ(Get32(tcp + 8), req_seq + uint32_t(req[r].size())); // server's ack in client space
                client.Put(Get32(tcp + 4), f.data() + p.payload_offset, p.payload_len);
            }
            ASSERT_EQ(client.got, client_want) << "seed " << seed << " response " << r;
            EXPECT_EQ(sp.v_next, visn + 1 + uint32_t(client_want.size()));
            // Client ACKs at every segment boundary of what it received map
            // to the server's own byte count.
            size_t before = client_want.size() - sent.size();
            for (size_t k = 0; k < rc.size(); k++) {
                size_t srv_bytes = rc[k];
                size_t cli_bytes = before + srv_bytes + (r == 0 && srv_bytes > e.off ? e.ins_len : 0);
                std::vector<uint8_t> a = Seg(kClient, kVip, req_seq + uint32_t(req[r].size()),
                                             visn + 1 + uint32_t(cli_bytes), 0x10, "");
                dp_parsed_t p = Parse(a, a.size());
                ASSERT_EQ(dp_splice_xlate(&sp, DP_SPLICE_C2S, a.data(), a.size(), &p, nullptr), 0);
                EXPECT_EQ(Get32(a.data() + 34 + 8), sisn[r] + 1 + uint32_t(srv_bytes)) << seed << " " << k;
                EXPECT_EQ(Get32(a.data() + 34 + 4), l + 1 + uint32_t(req[r].size()));
                ExpectChecksumsRight(a, "ack");
            }
            // A segment of the switch's own (an RST to this server, an ACK)
            // must carry the server's next expected number, and toward the
            // client the next number after everything it received.
            EXPECT_EQ(dp_splice_next_seq(&sp, DP_SPLICE_C2S), l + 1 + uint32_t(req[r].size()));
            EXPECT_EQ(dp_splice_next_seq(&sp, DP_SPLICE_S2C), visn + 1 + uint32_t(client_want.size()));
            req_seq += uint32_t(req[r].size());
        }
        EXPECT_EQ(sp.binds, 2u);
    }
}

} // namespace
