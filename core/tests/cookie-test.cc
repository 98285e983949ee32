// Cookie persistence (dp_cookie): the find/learn results against
// hand-read RFC 6265 headers, and the insert, rewrite and prefix edits
// against the response heads HAProxy's `cookie <name> insert|rewrite|prefix`
// produce (written out by hand here), re-parsed with dp_http.
#include "dp_cookie.h"
#include "dp_http.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct Resp {
    std::vector<uint8_t> buf = std::vector<uint8_t>(4096);
    dp_http_t p;
    explicit Resp(const std::string &m)
    {
        dp_http_config_t cfg = {8190, 101};
        dp_http_init(&p, &cfg, buf.data(), 4096, 1);
        EXPECT_EQ(dp_http_feed(&p, (const uint8_t *)m.data(), m.size(), nullptr, nullptr), DP_HTTP_DONE);
    }
    std::string Head() const { return std::string((const char *)buf.data(), p.len); }
};

std::string Find(const std::string &v, const char *name, dp_ops_t *ops = nullptr)
{
    uint32_t off = 0, len = 0;
    int rc = dp_cookie_find((const uint8_t *)v.data(), (uint32_t)v.size(), name, &off, &len, ops);
    return rc == 0 ? v.substr(off, len) : "<" + std::to_string(rc) + ">";
}

TEST(Cookie, FindTakesTheFirstCookieOfThatName)
{
    EXPECT_EQ(Find("SRV=s1; x=2", "SRV"), "s1");
    EXPECT_EQ(Find("a=1;SRV = s2 ;SRV=s3", "SRV"), "s2");
    EXPECT_EQ(Find("srv=s1; SRVX=2; XSRV=3", "SRV"), "<-2>"); // names are case-sensitive and whole
    EXPECT_EQ(Find("flag; SRV=", "SRV"), "");
    EXPECT_EQ(Find("", "SRV"), "<-2>");
    EXPECT_EQ(Find("a=1", "bad name"), "<-1>");
    dp_ops_t ops = {};
    Find("a=1; SRV=s1; b=2", "SRV", &ops);
    EXPECT_EQ(ops.bytes_parsed, 11u); // up to the end of "s1"
}

const char *kResp = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: ASPSESSIONID=abc123; path=/\r\n"
                    "Set-Cookie: Server=A\r\n\r\n";

TEST(Cookie, LearnReadsTheServersValue)
{
    Resp r(kResp);
    dp_http_span_t v;
    ASSERT_EQ(dp_cookie_learn(&r.p, "ASPSESSIONID", &v, nullptr), 0);
    EXPECT_EQ(r.Head().substr(v.off, v.len), "abc123");
    ASSERT_EQ(dp_cookie_learn(&r.p, "Server", &v, nullptr), 0);
    EXPECT_EQ(r.Head().substr(v.off, v.len), "A");
    EXPECT_EQ(dp_cookie_learn(&r.p, "path", &v, nullptr), DP_COOKIE_ENOTFOUND);
}

TEST(Cookie, EditsGiveHaproxysHeads)
{
    struct {
        int mode;
        const char *want;
    } cases[] = {
        {0, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: ASPSESSIONID=abc123; path=/\r\n"
            "Set-Cookie: Server=A\r\nSet-Cookie: SRVID=s1; path=/\r\n\r\n"},
        {1, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: ASPSESSIONID=s1; path=/\r\n"
            "Set-Cookie: Server=A\r\n\r\n"},
        {2, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: ASPSESSIONID=s1~abc123; path=/\r\n"
            "Set-Cookie: Server=A\r\n\r\n"},
    };
    for (auto &c : cases) {
        Resp r(kResp);
        dp_cookie_edit_t e;
        dp_ops_t ops = {};
        int rc = c.mode == 0   ? dp_cookie_insert(&r.p, "SRVID", "s1", &e, &ops)
                 : c.mode == 1 ? dp_cookie_rewrite(&r.p, "ASPSESSIONID", "s1", &e, &ops)
                               : dp_cookie_prefix(&r.p, "ASPSESSIONID", "s1", &e, &ops);
        ASSERT_EQ(rc, 0);
        EXPECT_EQ(ops.bytes_written, e.ins_len);
        uint32_t len = r.p.len, before = len;
        dp_ops_t ap = {};
        ASSERT_EQ(dp_cookie_apply(r.buf.data(), &len, 4096, &e, &ap), 0);
        std::string got((const char *)r.buf.data(), len);
        EXPECT_EQ(got, c.want);
        EXPECT_EQ(int64_t(len) - int64_t(before), int64_t(std::strlen(c.want)) - int64_t(std::strlen(kResp)));
        EXPECT_EQ(ap.bytes_copied, e.ins_len + (e.ins_len != e.del ? before - e.off - e.del : 0));
        Resp again(got); // still a valid head
        EXPECT_EQ(again.p.setcookies, c.mode == 0 ? 3 : 2);
    }
    Resp r(kResp);
    dp_cookie_edit_t e;
    ASSERT_EQ(dp_cookie_insert(&r.p, "SRVID", "s1", &e, nullptr), 0);
    uint32_t len = r.p.len;
    EXPECT_EQ(dp_cookie_apply(r.buf.data(), &len, len + 5, &e, nullptr), DP_COOKIE_ENOSPC);
    EXPECT_EQ(len, r.p.len);
    EXPECT_EQ(dp_cookie_insert(&r.p, "SRVID", "s 1", &e, nullptr), DP_COOKIE_EINVAL);
    EXPECT_EQ(dp_cookie_rewrite(&r.p, "NONE", "s1", &e, nullptr), DP_COOKIE_ENOTFOUND);
}

} // namespace
