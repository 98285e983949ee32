// Persistence (dp_persist.h) against independent truth: a std::map model
// of "stick on src" with HAProxy's expire rule (lifetime restarts at each
// store or match), an LRU list for the full-table purge of one set, the
// documented refusal of nopurge, and HAProxy's cookie table
// (doc/cookie-options.txt and configuration.txt 4.2 "cookie") as rows.
#include "dp_persist.h"
#include "dp_tls.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <random>
#include <vector>

namespace {

class Table {
public:
    explicit Table(dp_persist_config_t cfg)
    {
        mem_.resize(dp_persist_memory_size(&cfg));
        t_ = dp_persist_create(mem_.data(), mem_.size(), &cfg);
    }
    dp_persist_t *get() { return t_; }
    dp_persist_stats_t Stats()
    {
        dp_persist_stats_t st;
        dp_persist_get_stats(t_, &st);
        return st;
    }

private:
    std::vector<uint8_t> mem_;
    dp_persist_t *t_ = nullptr;
};

dp_persist_config_t Cfg(uint32_t capacity, uint32_t key_len, uint32_t expire_ms, uint32_t on_full)
{
    dp_persist_config_t c{};
    c.capacity = capacity;
    c.key_len = key_len;
    c.expire_ms = expire_ms;
    c.on_full = on_full;
    return c;
}

std::vector<uint8_t> Ip(uint32_t a)
{
    std::vector<uint8_t> k(4);
    dp_persist_key_ipv4(a, k.data());
    return k;
}

TEST(Persist, RejectsBadConfigurationsAndShortMemory)
{
    dp_persist_config_t c = Cfg(0, 4, 0, 0);
    EXPECT_EQ(dp_persist_memory_size(&c), 0u);
    c = Cfg(16, 33, 0, 0);
    EXPECT_EQ(dp_persist_memory_size(&c), 0u);
    c = Cfg(16, 4, 0, 7);
    EXPECT_EQ(dp_persist_memory_size(&c), 0u);
    c = Cfg(100, 4, 0, 0);
    size_t n = dp_persist_memory_size(&c);
    std::vector<uint8_t> mem(n);
    EXPECT_EQ(dp_persist_create(mem.data(), n - 1, &c), nullptr);
    dp_persist_t *t = dp_persist_create(mem.data(), n, &c);
    ASSERT_NE(t, nullptr);
    dp_persist_stats_t st;
    dp_persist_get_stats(t, &st);
    EXPECT_EQ(st.capacity, 128u); // 13 sets of 8 rounded up to 16
}

TEST(Persist, Ipv4KeyIsNetworkOrder)
{
    auto k = Ip(0xC6120001u); // 198.18.0.1
    EXPECT_EQ(k, (std::vector<uint8_t>{198, 18, 0, 1}));
}

// "expire: the maximum duration of an entry in the table since it was
// last created, refreshed ... or matched": worked by hand with expire 1000.
TEST(Persist, ExpiryRestartsAtEveryMatch)
{
    Table t(Cfg(64, 4, 1000, DP_PERSIST_FULL_PURGE));
    auto k = Ip(0xC6120101u);
    EXPECT_EQ(dp_persist_store(t.get(), k.data(), 2, 0, nullptr), 0);
    EXPECT_EQ(dp_persist_lookup(t.get(), k.data(), 999, nullptr), 2);  // alive, now until 1999
    EXPECT_EQ(dp_persist_lookup(t.get(), k.data(), 1998, nullptr), 2); // until 2998
    EXPECT_EQ(dp_persist_lookup(t.get(), k.data(), 2998, nullptr), DP_PERSIST_ENOTFOUND);
    auto st = t.Stats();
    EXPECT_EQ(st.expired, 1u);
    EXPECT_EQ(st.entries, 0u);
    EXPECT_EQ(st.hits, 2u);
    EXPECT_EQ(st.lookups, 3u);
}

// Random stick-on-src traffic against a std::map model; the table is
// large enough that no set overflows (checked: nothing purged).
TEST(Persist, StickOnSrcMatchesMapModel)
{
    Table t(Cfg(4096, 4, 5000, DP_PERSIST_FULL_PURGE));
    struct Ref {
        int32_t server;
        uint64_t expire_at;
    };
    std::map<uint32_t, Ref> ref;
    std::mt19937 rng(20);
    uint64_t now = 0;
    uint32_t rr = 0;
    for (int i = 0; i < 20000; i++) {
        now += rng() % 20;
        uint32_t src = 0xC6120000u + rng() % 400;
        auto k = Ip(src);
        // stick match
        int32_t got = dp_persist_lookup(t.get(), k.data(), now, nullptr);
        auto it = ref.find(src);
        int32_t want = DP_PERSIST_ENOTFOUND;
        if (it != ref.end()) {
            if (it->second.expire_at <= now) {
                ref.erase(it);
            } else {
                want = it->second.server;
                it->second.expire_at = now + 5000;
            }
        }
        ASSERT_EQ(got, want) << "step " << i;
        if (got < 0) { // balance, then stick store-request
            int32_t server = int32_t(rr++ % 5);
            ASSERT_EQ(dp_persist_store(t.get(), k.data(), server, now, nullptr), 0);
            ref[src] = Ref{server, now + 5000};
        }
    }
    EXPECT_EQ(t.Stats().purged, 0u);
    // Every live reference entry is in the table.
    size_t live = 0;
    for (auto &kv : ref)
        if (kv.second.expire_at > now)
            live++;
    // A full sweep leaves exactly the entries the model holds alive.
    dp_persist_expire(t.get(), now, 1u << 20, nullptr);
    EXPECT_EQ(t.Stats().entries, live);
}

// One set (capacity 8): the ninth key replaces the least recently used
// entry, as an LRU list says; every replacement is counted.
TEST(Persist, FullSetPurgesLeastRecentlyUsed)
{
    Table t(Cfg(8, 4, 0, DP_PERSIST_FULL_PURGE));
    std::list<uint32_t> lru; // front = least recent
    std::mt19937 rng(8);
    uint64_t purged = 0;
    for (int i = 0; i < 3000; i++) {
        uint32_t src = rng() % 14;
        auto k = Ip(src);
        int32_t got = dp_persist_lookup(t.get(), k.data(), uint64_t(i), nullptr);
        auto it = std::find(lru.begin(), lru.end(), src);
        if (it != lru.end()) {
            ASSERT_EQ(got, int32_t(src % 3));
            lru.erase(it);
            lru.push_back(src);
            continue;
        }
        ASSERT_EQ(got, DP_PERSIST_ENOTFOUND);
        ASSERT_EQ(dp_persist_store(t.get(), k.data(), int32_t(src % 3), uint64_t(i), nullptr), 0);
        if (lru.size() == 8) {
            lru.pop_front();
            purged++;
        }
        lru.push_back(src);
    }
    auto st = t.Stats();
    EXPECT_EQ(st.purged, purged);
    EXPECT_EQ(st.entries, 8u);
    EXPECT_GT(purged, 100u);
}

// "nopurge": new entries are refused when full; existing ones still match
// and update, and an expired one frees its way.
TEST(Persist, NopurgeRefusesNewKeysWhenFull)
{
    Table t(Cfg(8, 4, 1000, DP_PERSIST_FULL_REFUSE));
    for (uint32_t i = 0; i < 8; i++)
        ASSERT_EQ(dp_persist_store(t.get(), Ip(i).data(), 1, 0, nullptr), 0);
    dp_ops_t ops{};
    EXPECT_EQ(dp_persist_store(t.get(), Ip(100).data(), 1, 10, &ops), DP_PERSIST_EFULL);
    EXPECT_EQ(ops.table_writes, 0u);
    EXPECT_EQ(ops.table_probes, 8u);
    EXPECT_EQ(ops.hashes, 1u);
    EXPECT_EQ(ops.cache_lines, 7u);
    EXPECT_EQ(dp_persist_store(t.get(), Ip(3).data(), 2, 10, nullptr), 1); // update
    EXPECT_EQ(dp_persist_lookup(t.get(), Ip(3).data(), 11, nullptr), 2);
    auto st = t.Stats();
    EXPECT_EQ(st.refused_full, 1u);
    EXPECT_EQ(st.updates, 1u);
    // At 1000 the seven untouched entries have expired: room again.
    EXPECT_EQ(dp_persist_store(t.get(), Ip(100).data(), 0, 1000, nullptr), 0);
    EXPECT_EQ(t.Stats().expired, 1u);
    EXPECT_EQ(dp_persist_expire(t.get(), 1000, 1, nullptr), 6u);
    EXPECT_EQ(t.Stats().entries, 2u);
}

TEST(Persist, LookupCostsFollowTheWaysExamined)
{
    Table t(Cfg(8, 4, 0, DP_PERSIST_FULL_PURGE));
    for (uint32_t i = 0; i < 8; i++)
        ASSERT_EQ(dp_persist_store(t.get(), Ip(i).data(), int32_t(i), 0, nullptr), 0);
    for (uint32_t i = 0; i < 8; i++) {
        dp_ops_t ops{};
        EXPECT_EQ(dp_persist_lookup(t.get(), Ip(i).data(), 0, &ops), int32_t(i));
        EXPECT_EQ(ops.table_probes, i + 1); // ways fill in order in an empty set
        EXPECT_EQ(ops.cache_lines, ((i + 1) * 56 + 63) / 64);
        EXPECT_EQ(ops.table_writes, 1u);
    }
    dp_ops_t miss{};
    EXPECT_EQ(dp_persist_lookup(t.get(), Ip(99).data(), 0, &miss), DP_PERSIST_ENOTFOUND);
    EXPECT_EQ(miss.table_probes, 8u);
    EXPECT_EQ(miss.table_writes, 0u);
}

TEST(Persist, ForgetServerRemovesItsEntries)
{
    Table t(Cfg(256, 4, 0, DP_PERSIST_FULL_PURGE));
    for (uint32_t i = 0; i < 60; i++)
        ASSERT_EQ(dp_persist_store(t.get(), Ip(0xC6120000u + i).data(), int32_t(i % 4), 0, nullptr), 0);
    EXPECT_EQ(dp_persist_forget_server(t.get(), 1, nullptr), 15u);
    for (uint32_t i = 0; i < 60; i++)
        EXPECT_EQ(dp_persist_lookup(t.get(), Ip(0xC6120000u + i).data(), 0, nullptr),
                  i % 4 == 1 ? DP_PERSIST_ENOTFOUND : int32_t(i % 4));
    EXPECT_EQ(dp_persist_remove(t.get(), Ip(0xC6120000u).data(), nullptr), 0);
    EXPECT_EQ(dp_persist_remove(t.get(), Ip(0xC6120000u).data(), nullptr), DP_PERSIST_ENOTFOUND);
    EXPECT_EQ(t.Stats().removed, 16u);
    EXPECT_EQ(t.Stats().entries, 44u);
}

// SSL session-ID persistence: the ID a ClientHello carries (dp_tls) keys
// a 32-byte table; a resumed hello with the same ID finds the server.
TEST(Persist, SslSessionIdKeysTheTable)
{
    // TLS 1.2 ClientHello: record header, handshake header, version,
    // random (32 x 0x11), session ID (32 x 0xAB), 1 suite, 1 compression.
    std::vector<uint8_t> hello = {0x16, 0x03, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x03};
    hello.insert(hello.end(), 32, 0x11);
    hello.push_back(32);
    hello.insert(hello.end(), 32, 0xAB);
    hello.insert(hello.end(), {0x00, 0x02, 0x00, 0x2f, 0x01, 0x00});
    uint32_t hs_len = uint32_t(hello.size() - 9), rec_len = uint32_t(hello.size() - 5);
    hello[3] = uint8_t(rec_len >> 8);
    hello[4] = uint8_t(rec_len);
    hello[7] = uint8_t(hs_len >> 8);
    hello[8] = uint8_t(hs_len);
    dp_tls_hello_t h;
    ASSERT_EQ(dp_tls_parse_client_hello(hello.data(), hello.size(), &h, nullptr), DP_TLS_OK);
    ASSERT_EQ(h.session_id_len, 32u);
    Table t(Cfg(1024, 32, 300000, DP_PERSIST_FULL_PURGE));
    EXPECT_EQ(dp_persist_lookup(t.get(), h.session_id, 0, nullptr), DP_PERSIST_ENOTFOUND);
    EXPECT_EQ(dp_persist_store(t.get(), h.session_id, 4, 0, nullptr), 0);
    uint8_t other[32];
    std::memcpy(other, h.session_id, 32);
    other[31] ^= 1;
    EXPECT_EQ(dp_persist_lookup(t.get(), other, 10, nullptr), DP_PERSIST_ENOTFOUND);
    EXPECT_EQ(dp_persist_lookup(t.get(), h.session_id, 10, nullptr), 4);
}

// ---- cookie decisions -----------------------------------------------------

dp_persist_cookie_config_t CookieCfg(dp_persist_cookie_mode_t mode, uint32_t flags)
{
    dp_persist_cookie_config_t c{};
    c.mode = mode;
    c.flags = flags;
    return c;
}

// doc/cookie-options.txt's forbidden rows.
TEST(PersistCookie, ForbiddenCombinationsOfCookieOptions)
{
    auto rew_ind = CookieCfg(DP_PERSIST_COOKIE_REWRITE, DP_PERSIST_COOKIE_INDIRECT);
    EXPECT_EQ(dp_persist_cookie_check(&rew_ind), DP_PERSIST_EINVAL);
    auto psv_only = CookieCfg(DP_PERSIST_COOKIE_PASSIVE, DP_PERSIST_COOKIE_PRESERVE);
    EXPECT_EQ(dp_persist_cookie_check(&psv_only), DP_PERSIST_EINVAL);
    auto psv_prefix = CookieCfg(DP_PERSIST_COOKIE_PREFIX, DP_PERSIST_COOKIE_PRESERVE);
    EXPECT_EQ(dp_persist_cookie_check(&psv_prefix), DP_PERSIST_EINVAL);
    auto ok1 = CookieCfg(DP_PERSIST_COOKIE_INSERT, DP_PERSIST_COOKIE_PRESERVE | DP_PERSIST_COOKIE_INDIRECT);
    EXPECT_EQ(dp_persist_cookie_check(&ok1), 0);
    auto ok2 = CookieCfg(DP_PERSIST_COOKIE_PREFIX, DP_PERSIST_COOKIE_PRESERVE | DP_PERSIST_COOKIE_INDIRECT);
    EXPECT_EQ(dp_persist_cookie_check(&ok2), 0);
}

struct CookieRow {
    dp_persist_cookie_mode_t mode;
    uint32_t flags;
    int32_t cookie_server; // -1: none
    int usable;
    int32_t served_by;     // -1: whoever the balancer picked (here server 7)
    int server_set_cookie;
    int cacheable;
    uint32_t want_req;
    int want_resp;
};

// Rows from configuration.txt 4.2 "cookie" and "option persist"; each
// comment quotes the sentence that decides it.
TEST(PersistCookie, DecisionsFollowTheManual)
{
    const uint32_t IND = DP_PERSIST_COOKIE_INDIRECT, NOC = DP_PERSIST_COOKIE_NOCACHE,
                   PSV = DP_PERSIST_COOKIE_PRESERVE, PER = DP_PERSIST_COOKIE_PERSIST;
    const uint32_t USE = DP_PERSIST_REQ_USE_COOKIE_SERVER, BAL = DP_PERSIST_REQ_BALANCE,
                   STRIP = DP_PERSIST_REQ_STRIP_COOKIE, STRIPPFX = DP_PERSIST_REQ_STRIP_PREFIX;
    const int INS = DP_PERSIST_RESP_INSERT, NC = DP_PERSIST_RESP_NOCACHE, RM = DP_PERSIST_RESP_REMOVE_SERVER,
              REW = DP_PERSIST_RESP_REWRITE, PFX = DP_PERSIST_RESP_PREFIX;
    const CookieRow rows[] = {
        // insert: "inserted ... if the client did not already have a cookie that would have permitted it"
        {DP_PERSIST_COOKIE_INSERT, IND | NOC, -1, 0, -1, 0, 1, BAL, INS | NC},
        // nocache: "a cacheable response will be tagged non-cacheable"; a bare 200 is not cacheable
        {DP_PERSIST_COOKIE_INSERT, IND | NOC, -1, 0, -1, 0, 0, BAL, INS},
        {DP_PERSIST_COOKIE_INSERT, IND | NOC, 2, 1, 2, 0, 1, USE | STRIP, 0},
        {DP_PERSIST_COOKIE_INSERT, 0, 2, 1, 2, 0, 1, USE, 0},
        // a cookie naming a DOWN server is ignored: balanced, new cookie
        {DP_PERSIST_COOKIE_INSERT, IND | NOC, 2, 0, -1, 0, 1, BAL | STRIP, INS | NC},
        // "option persist": sent to the DOWN server anyway
        {DP_PERSIST_COOKIE_INSERT, IND | PER, 2, 0, 2, 0, 1, USE | STRIP, 0},
        // redispatched after a failed connection: served elsewhere, new cookie
        {DP_PERSIST_COOKIE_INSERT, IND, 2, 1, 5, 0, 1, USE | STRIP, INS},
        // "if the server emits a cookie with the same name, it will be removed"
        {DP_PERSIST_COOKIE_INSERT, 0, -1, 0, -1, 1, 1, BAL, RM | INS},
        // preserve: "if a cookie is found in the response, HAProxy will leave it untouched"
        {DP_PERSIST_COOKIE_INSERT, PSV, -1, 0, -1, 1, 1, BAL, 0},
        // rewrite: the server's cookie gets the id, only when it sets one
        {DP_PERSIST_COOKIE_REWRITE, 0, -1, 0, -1, 1, 1, BAL, REW},
        {DP_PERSIST_COOKIE_REWRITE, 0, 3, 1, 3, 0, 1, USE, 0},
        // prefix: "the prefix will be removed from all client requests"
        {DP_PERSIST_COOKIE_PREFIX, 0, 3, 1, 3, 1, 1, USE | STRIPPFX, PFX},
        {DP_PERSIST_COOKIE_PREFIX, 0, -1, 0, -1, 1, 1, BAL, PFX},
        // prefix + indirect: "remove response cookie if not needed"
        {DP_PERSIST_COOKIE_PREFIX, IND, 3, 1, 3, 1, 1, USE | STRIPPFX, RM},
        // passive (pre-arranged Server=A): read only; + indirect removes a needless server cookie
        {DP_PERSIST_COOKIE_PASSIVE, 0, 1, 1, 1, 1, 1, USE, 0},
        {DP_PERSIST_COOKIE_PASSIVE, IND, 1, 1, 1, 1, 1, USE, RM},
        {DP_PERSIST_COOKIE_PASSIVE, IND, -1, 0, -1, 1, 1, BAL, 0},
    };
    int n = 0;
    for (const CookieRow &r : rows) {
        dp_persist_cookie_config_t c = CookieCfg(r.mode, r.flags);
        dp_persist_cookie_request_t req;
        dp_ops_t ops{};
        ASSERT_EQ(dp_persist_cookie_request(&c, r.cookie_server, r.usable, &req, &ops), 0) << "row " << n;
        EXPECT_EQ(req.actions, r.want_req) << "row " << n;
        int32_t served = r.served_by >= 0 ? r.served_by : 7;
        EXPECT_EQ(dp_persist_cookie_response(&c, &req, served, r.server_set_cookie, r.cacheable, &ops), r.want_resp) << "row " << n;
        EXPECT_EQ(ops.rules_evaluated, 2u);
        n++;
    }
}

// What Debian bookworm's HAProxy 2.6.12 did with "cookie SRV insert
// indirect nocache" (core/tests/haproxy_health_record.py, K1-K3, three
// runs alike): a fresh request got Set-Cookie naming the server that
// answered, with Cache-Control: private only when the response was
// cacheable (Last-Modified) and none on a bare 200; a request with a valid
// cookie went to that server, got no Set-Cookie, and the server did not see
// the cookie; after "set server b/s1 health down" s1's cookies were
// re-balanced and got a new Set-Cookie.
TEST(PersistCookieHaproxyRecorded, InsertIndirectNocache)
{
    dp_persist_cookie_config_t c = CookieCfg(DP_PERSIST_COOKIE_INSERT, DP_PERSIST_COOKIE_INDIRECT | DP_PERSIST_COOKIE_NOCACHE);
    dp_persist_cookie_request_t req;
    ASSERT_EQ(dp_persist_cookie_request(&c, -1, 0, &req, nullptr), 0);
    EXPECT_EQ(req.actions, DP_PERSIST_REQ_BALANCE);
    EXPECT_EQ(dp_persist_cookie_response(&c, &req, 0, 0, 0, nullptr), DP_PERSIST_RESP_INSERT);
    EXPECT_EQ(dp_persist_cookie_response(&c, &req, 1, 0, 1, nullptr), DP_PERSIST_RESP_INSERT | DP_PERSIST_RESP_NOCACHE);
    ASSERT_EQ(dp_persist_cookie_request(&c, 2, 1, &req, nullptr), 0);
    EXPECT_EQ(req.actions, DP_PERSIST_REQ_USE_COOKIE_SERVER | DP_PERSIST_REQ_STRIP_COOKIE);
    EXPECT_EQ(req.server, 2);
    EXPECT_EQ(dp_persist_cookie_response(&c, &req, 2, 0, 1, nullptr), 0);
    ASSERT_EQ(dp_persist_cookie_request(&c, 1, 0, &req, nullptr), 0); // s1 DOWN
    EXPECT_EQ(req.actions, DP_PERSIST_REQ_BALANCE | DP_PERSIST_REQ_STRIP_COOKIE);
    EXPECT_EQ(dp_persist_cookie_response(&c, &req, 0, 0, 0, nullptr), DP_PERSIST_RESP_INSERT);
}

} // namespace
