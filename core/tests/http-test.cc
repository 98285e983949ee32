// HTTP/1.x head parsing (dp_http). Each vector's fields and verdict are
// written out by hand from RFC 7230/7231 (the independent truth); every
// vector is then fed split at every byte boundary, and byte by byte, and
// must give the same state, the same error at the same byte and the same
// operation counts as the whole head in one piece.
#include "dp_http.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

const dp_http_config_t kCfg = {8190, 101};

struct Parsed {
    dp_http_t p;
    std::vector<uint8_t> buf;
    int rc;
    size_t used;
    dp_ops_t ops;
};

// Feeds msg in the pieces given by the cut positions (ascending).
Parsed Feed(const std::string &msg, const std::vector<size_t> &cuts, int response = 0, uint32_t cap = 65536,
            dp_http_config_t cfg = kCfg)
{
    Parsed r;
    r.buf.assign(cap, 0);
    std::memset(&r.ops, 0, sizeof r.ops);
    EXPECT_EQ(dp_http_init(&r.p, &cfg, r.buf.data(), cap, response), 0);
    r.used = 0;
    r.rc = DP_HTTP_MORE;
    size_t from = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(msg.size());
    for (size_t e : ends) {
        size_t used = 0;
        r.rc = dp_http_feed(&r.p, reinterpret_cast<const uint8_t *>(msg.data()) + from, e - from, &used, &r.ops);
        r.used += used;
        if (r.rc != DP_HTTP_MORE) {
            // Once finished, further bytes are refused without being taken.
            size_t again = 7;
            EXPECT_EQ(dp_http_feed(&r.p, reinterpret_cast<const uint8_t *>(msg.data()), msg.size(), &again, &r.ops),
                      r.rc);
            EXPECT_EQ(again, 0u);
            break;
        }
        from = e;
    }
    return r;
}

std::string Span(const Parsed &r, dp_http_span_t s)
{
    return std::string(reinterpret_cast<const char *>(r.buf.data()) + s.off, s.len);
}

void ExpectSameState(const Parsed &a, const Parsed &b, const std::string &where)
{
    dp_http_t x = a.p, y = b.p;
    x.buf = y.buf = nullptr;
    EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << where;
    EXPECT_EQ(a.rc, b.rc) << where;
    EXPECT_EQ(a.used, b.used) << where;
    EXPECT_EQ(std::memcmp(&a.ops, &b.ops, sizeof a.ops), 0) << where;
    EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), a.p.len), 0) << where;
}

struct Vector {
    const char *msg;
    int response;
    int rc;
    dp_http_error_t error;
    size_t used; // bytes taken (0: the whole message)
    const char *method, *target, *host, *cookie;
    unsigned flags; // expected flags (DP_HTTP_F_*) when rc is DONE
    uint64_t content_length;
};

const Vector kVectors[] = {
    {"GET /index.htm HTTP/1.1\r\nHost: www.example.com\r\n\r\n", 0, DP_HTTP_DONE, DP_HTTP_ERR_NONE, 0, "GET",
     "/index.htm", "www.example.com", "", DP_HTTP_F_STARTED | DP_HTTP_F_HAS_HOST | DP_HTTP_F_KEEPALIVE, 0},
    {"GET /a.gif HTTP/1.0\r\nConnection: Keep-Alive\r\nCookie: SRV=s1; x=2\r\n\r\nBODY", 0, DP_HTTP_DONE,
     DP_HTTP_ERR_NONE, 68, "GET", "/a.gif", "", "SRV=s1; x=2",
     DP_HTTP_F_STARTED | DP_HTTP_F_CONN_KEEPALIVE | DP_HTTP_F_KEEPALIVE, 0},
    {"GET / HTTP/1.0\r\n\r\n", 0, DP_HTTP_DONE, DP_HTTP_ERR_NONE, 0, "GET", "/", "", "", DP_HTTP_F_STARTED, 0},
    {"POST /cgi/x HTTP/1.1\nHost:h \t\nContent-Length: 12\nConnection: foo, close\n\n", 0, DP_HTTP_DONE,
     DP_HTTP_ERR_NONE, 0, "POST", "/cgi/x", "h", "",
     DP_HTTP_F_STARTED | DP_HTTP_F_HAS_HOST | DP_HTTP_F_HAS_LENGTH | DP_HTTP_F_CONN_CLOSE, 12},
    {"\r\nGET http://h/p?q HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 0, DP_HTTP_DONE,
     DP_HTTP_ERR_NONE, 0, "GET", "http://h/p?q", "", "",
     DP_HTTP_F_STARTED | DP_HTTP_F_HAS_LENGTH | DP_HTTP_F_KEEPALIVE, 5},
    {"get / HTTP/1.1\r\n\r\n", 0, DP_HTTP_DONE, DP_HTTP_ERR_NONE, 0, "get", "/", "", "",
     DP_HTTP_F_STARTED | DP_HTTP_F_KEEPALIVE, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_DUP_HOST, 34},
    {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_FOLDED, 31},
    {"GET / HTTP/2.0\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_VERSION, 16},
    {"GET /\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_TARGET, 7},
    {"GET  / HTTP/1.1\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_TARGET, 17},
    {"G(T / HTTP/1.1\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_METHOD, 16},
    {"GET / HTTP/1.1\r\nX : y\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_HEADER, 23},
    {"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_CR, 24},
    {"GET / HTTP/1.1\r\nX: a\x01\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_CTL, 23},
    {"GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 0, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_LENGTH, 36},
    {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 0, DP_HTTP_EMALFORMED,
     DP_HTTP_ERR_BAD_LENGTH, 54},
    {"GET / HTTP/1.1\r\nContent-Length: 9007199254740993\r\n\r\n", 0, DP_HTTP_EMALFORMED,
     DP_HTTP_ERR_BAD_LENGTH, 50},
    {"GET / HTTP/1.1\r\nHost: h", 0, DP_HTTP_MORE, DP_HTTP_ERR_NONE, 0},
    {"HTTP/1.1 200 OK\r\nSet-Cookie: A=1; path=/\r\nContent-Length: 6\r\nSet-Cookie: B=2\r\n\r\n", 1,
     DP_HTTP_DONE, DP_HTTP_ERR_NONE, 0, "", "", "", "",
     DP_HTTP_F_RESPONSE | DP_HTTP_F_STARTED | DP_HTTP_F_HAS_LENGTH | DP_HTTP_F_KEEPALIVE, 6},
    {"HTTP/1.0 302\r\nLocation: /x\r\n\r\n", 1, DP_HTTP_DONE, DP_HTTP_ERR_NONE, 0, "", "", "", "",
     DP_HTTP_F_RESPONSE | DP_HTTP_F_STARTED, 0},
    {"HTTP/1.1 20 OK\r\n\r\n", 1, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_STATUS, 16},
    {"HTTP/1.1 099 OK\r\n\r\n", 1, DP_HTTP_EMALFORMED, DP_HTTP_ERR_BAD_STATUS, 17},
};

TEST(Http, VectorsGiveTheFieldsTheRfcSays)
{
    for (const Vector &v : kVectors) {
        std::string msg = v.msg;
        Parsed r = Feed(msg, {}, v.response);
        EXPECT_EQ(r.rc, v.rc) << msg;
        EXPECT_EQ(r.used, v.used ? v.used : msg.size()) << msg;
        if (v.rc == DP_HTTP_EMALFORMED)
            EXPECT_EQ(r.p.error, v.error) << msg;
        if (v.rc != DP_HTTP_DONE)
            continue;
        EXPECT_EQ(r.p.flags, v.flags) << msg;
        if (!v.response) {
            EXPECT_EQ(Span(r, r.p.method_s), v.method) << msg;
            EXPECT_EQ(Span(r, r.p.target), v.target) << msg;
        }
        EXPECT_EQ(Span(r, r.p.host), v.host) << msg;
        EXPECT_EQ(Span(r, r.p.cookie), v.cookie) << msg;
        EXPECT_EQ(r.p.content_length, v.content_length) << msg;
        // The head ends with the blank line.
        EXPECT_TRUE(r.p.len == r.p.blank_line + 1 || r.p.len == r.p.blank_line + 2) << msg;
        EXPECT_EQ(r.ops.bytes_parsed, r.used);
        EXPECT_EQ(r.ops.bytes_copied, r.used);
    }
    Parsed resp = Feed(kVectors[19].msg, {}, 1);
    EXPECT_EQ(resp.p.status_code, 200);
    ASSERT_EQ(resp.p.setcookies, 2);
    EXPECT_EQ(Span(resp, resp.p.setcookie[0]), "A=1; path=/");
    EXPECT_EQ(Span(resp, resp.p.setcookie[1]), "B=2");
    EXPECT_EQ(Feed(kVectors[20].msg, {}, 1).p.status_code, 302);
    EXPECT_EQ(Feed(kVectors[0].msg, {}).p.method, DP_HTTP_M_GET);
    EXPECT_EQ(Feed(kVectors[5].msg, {}).p.method, DP_HTTP_M_OTHER); // methods are case-sensitive
}

TEST(Http, EverySplitPointGivesTheSameResult)
{
    for (const Vector &v : kVectors) {
        std::string msg = v.msg;
        Parsed whole = Feed(msg, {}, v.response);
        for (size_t cut = 0; cut <= msg.size(); cut++)
            ExpectSameState(whole, Feed(msg, {cut}, v.response), msg + " cut at " + std::to_string(cut));
        for (size_t cut = 0; cut + 3 <= msg.size(); cut++)
            ExpectSameState(whole, Feed(msg, {cut, cut + 1, cut + 3}, v.response), msg + " 3 cuts");
        std::vector<size_t> every;
        for (size_t cut = 1; cut < msg.size(); cut++)
            every.push_back(cut);
        ExpectSameState(whole, Feed(msg, every, v.response), msg + " byte by byte");
    }
}

TEST(Http, LimitsAreNamedAndHitAtTheSameByteWhateverTheSplit)
{
    // Request line of 8191 bytes + CRLF against max_line 8190: line_too_long
    // at byte 8191 (the first byte over the limit).
    std::string longline = "GET /" + std::string(8180, 'a') + " HTTP/1.1\r\n\r\n";
    Parsed r = Feed(longline, {});
    EXPECT_EQ(r.rc, DP_HTTP_ELINE);
    EXPECT_EQ(r.used, 8191u);
    EXPECT_EQ(Feed(longline, {100, 8190}).used, 8191u);
    EXPECT_STREQ(dp_http_status_name(r.rc), "line_too_long");
    // Exactly max_line bytes, terminator included, is accepted.
    std::string fits = "GET /" + std::string(8174, 'a') + " HTTP/1.1\r\n\r\n";
    ASSERT_EQ(fits.find('\n') + 1, 8190u);
    EXPECT_EQ(Feed(fits, {}).rc, DP_HTTP_DONE);
    // Header count: max_headers = 3; the 4th header line is refused.
    dp_http_config_t small = {64, 3};
    std::string hdrs = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
    Parsed h = Feed(hdrs, {}, 0, 4096, small);
    EXPECT_EQ(h.rc, DP_HTTP_EHEADERS);
    EXPECT_EQ(h.used, hdrs.find("D: 4") + 6);
    EXPECT_EQ(Feed("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", {}, 0, 4096, small).rc, DP_HTTP_DONE);
    // Head larger than the buffer: the byte that does not fit is scanned,
    // not copied.
    Parsed big = Feed(kVectors[0].msg, {}, 0, 20);
    EXPECT_EQ(big.rc, DP_HTTP_EHEAD);
    EXPECT_EQ(big.used, 21u);
    EXPECT_EQ(big.ops.bytes_parsed, 21u);
    EXPECT_EQ(big.ops.bytes_copied, 20u);
    for (size_t cut = 0; cut <= 30; cut++)
        ExpectSameState(big, Feed(kVectors[0].msg, {cut}, 0, 20), "EHEAD cut");
}

// Pipelined requests (RFC 7230 6.3.2): the parser stops after the first
// head's blank line and says how many bytes it took; the caller skips the
// body (Content-Length) and starts the next head there, even when the
// second head is cut mid-header by the segment boundary.
TEST(Http, PipelinedRequestsAreSeparatedByTheBytesTaken)
{
    const std::string first = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n";
    const std::string second = "GET /b.gif HTTP/1.1\r\nHost: h\r\nCookie: SRV=s2\r\n\r\n";
    const std::string stream = first + "body" + second;
    for (size_t cut = 0; cut <= stream.size(); cut++) {
        std::vector<uint8_t> b1(4096), b2(4096);
        dp_http_t h1, h2;
        ASSERT_EQ(dp_http_init(&h1, &kCfg, b1.data(), 4096, 0), 0);
        ASSERT_EQ(dp_http_init(&h2, &kCfg, b2.data(), 4096, 0), 0);
        const uint8_t *d = reinterpret_cast<const uint8_t *>(stream.data());
        // Two segments: [0, cut) and [cut, end).
        size_t seg_start[2] = {0, cut}, seg_end[2] = {cut, stream.size()}, at_body = 0, body_left = 0;
        int phase = 0; // 0: first head, 1: body, 2: second head
        for (int s = 0; s < 2; s++) {
            size_t i = seg_start[s];
            while (i < seg_end[s]) {
                size_t used = 0;
                if (phase == 0) {
                    int rc = dp_http_feed(&h1, d + i, seg_end[s] - i, &used, nullptr);
                    i += used;
                    if (rc == DP_HTTP_DONE) {
                        phase = 1;
                        at_body = i;
                        body_left = size_t(h1.content_length);
                    }
                } else if (phase == 1) {
                    size_t n = std::min(body_left, seg_end[s] - i);
                    body_left -= n;
                    i += n;
                    if (body_left == 0)
                        phase = 2;
                } else {
                    dp_http_feed(&h2, d + i, seg_end[s] - i, &used, nullptr);
                    i += used;
                    break;
                }
            }
        }
        ASSERT_EQ(h1.status, DP_HTTP_DONE) << cut;
        EXPECT_EQ(at_body, first.size()) << cut;
        ASSERT_EQ(h2.status, DP_HTTP_DONE) << cut;
        EXPECT_EQ(std::string((const char *)b2.data() + h2.target.off, h2.target.len), "/b.gif");
        EXPECT_EQ(std::string((const char *)b2.data() + h2.cookie.off, h2.cookie.len), "SRV=s2");
        EXPECT_EQ(h2.len, second.size());
    }
}

TEST(Http, PathIsHaproxysPathFetch)
{
    struct {
        const char *target, *path;
        uint64_t scanned;
    } cases[] = {
        {"/a/b.gif?x=1", "/a/b.gif", 8},  {"/", "/", 1},
        {"http://h:80/p/q?r", "/p/q", 15}, {"HTTP://h", "", 8},
        {"*", "", 1},                      {"/x?", "/x", 2},
    };
    for (auto &c : cases) {
        std::string msg = std::string("GET ") + c.target + " HTTP/1.1\r\n\r\n";
        Parsed r = Feed(msg, {});
        ASSERT_EQ(r.rc, DP_HTTP_DONE) << msg;
        dp_ops_t ops = {};
        dp_http_span_t s = dp_http_path(&r.p, &ops);
        EXPECT_EQ(Span(r, s), c.path) << msg;
        EXPECT_EQ(ops.bytes_parsed, c.scanned) << msg;
    }
}

} // namespace
