// URL rules (dp_urlrule) against a brute-force reference written with
// std::string (find, compare, a stable sort for precedence), and the
// NCTU paper's rule-count scenarios (3 vs 50 extension rules, 50 rules x
// 14 servers = 700 checks) against their closed-form counts.
#include "dp_urlrule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Table {
    std::vector<uint64_t> mem;
    dp_urlrule_table_t *t;
    explicit Table(uint32_t rules, uint8_t order = DP_URLRULE_FIRST)
    {
        dp_urlrule_config_t cfg = {rules, rules * 256u, order, {0, 0, 0}};
        size_t n = dp_urlrule_memory_size(&cfg);
        mem.assign(n / 8 + 1, 0);
        t = dp_urlrule_create(mem.data(), n, &cfg);
    }
};

struct RefRule {
    int kind;
    bool icase;
    std::string pat;
    uint16_t prec;
    uint32_t target;
    uint32_t seq;
};

std::string Low(std::string s, bool icase)
{
    if (icase)
        for (char &c : s)
            c = (char)std::tolower((unsigned char)c);
    return s;
}

bool RefMatch(const RefRule &r, const std::string &path, const std::string &host)
{
    std::string p = Low(r.pat, r.icase), s = Low(r.kind == DP_URL_HOST ? host : path, r.icase);
    switch (r.kind) {
    case DP_URL_PATH_BEG: return s.compare(0, p.size(), p) == 0 && s.size() >= p.size();
    case DP_URL_PATH_SUB: return s.find(p) != std::string::npos;
    case DP_URL_PATH_END: return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
    case DP_URL_EXT:
        p = "." + p;
        return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
    default: return s == p;
    }
}

dp_urlrule_req_t Req(const std::string &path, const std::string &host)
{
    return {reinterpret_cast<const uint8_t *>(path.data()), (uint32_t)path.size(),
            reinterpret_cast<const uint8_t *>(host.data()), (uint32_t)host.size()};
}

TEST(UrlRule, KindsMatchAsHaproxyAcls)
{
    Table t(8);
    ASSERT_NE(t.t, nullptr);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_PATH_BEG, 0, "/cgi/", 0, 1, nullptr), 0);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_EXT, DP_URL_ICASE, "gif", 0, 2, nullptr), 1);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_PATH_SUB, 0, "cart", 0, 3, nullptr), 2);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_HOST, DP_URL_ICASE, "img.example.com", 0, 4, nullptr), 3);
    struct {
        const char *path, *host;
        int rule;
        uint32_t target;
    } cases[] = {
        {"/cgi/run.gif", "", 0, 1},        {"/img/A.GIF", "", 1, 2},       {"/img/a.gifx", "", DP_URLRULE_ENOMATCH, 0},
        {"/shop/cart/add", "x", 2, 3},     {"/", "IMG.example.COM", 3, 4}, {"/cgi", "", DP_URLRULE_ENOMATCH, 0},
        {"/gif", "", DP_URLRULE_ENOMATCH, 0},
    };
    for (auto &c : cases) {
        uint32_t target = 99;
        std::string path = c.path, host = c.host;
        dp_urlrule_req_t r = Req(path, host);
        EXPECT_EQ(dp_urlrule_match(t.t, &r, &target, nullptr), c.rule) << c.path;
        if (c.rule >= 0)
            EXPECT_EQ(target, c.target);
    }
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_HOST, 0, "", 0, 0, nullptr), DP_URLRULE_EINVAL);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_HOST, 0, std::string(256, 'a').c_str(), 0, 0, nullptr), DP_URLRULE_EINVAL);
    EXPECT_EQ(dp_urlrule_add(t.t, DP_URL_EXT, 0, std::string(255, 'a').c_str(), 0, 0, nullptr), DP_URLRULE_EINVAL);
}

TEST(UrlRule, ByteComparisonsAreCountedAsDocumented)
{
    Table t(4);
    dp_urlrule_add(t.t, DP_URL_PATH_SUB, 0, "aab", 0, 1, nullptr);
    std::string path = "/aaab", host;
    dp_urlrule_req_t r = Req(path, host);
    dp_ops_t ops = {};
    EXPECT_EQ(dp_urlrule_eval(t.t, 0, &r, &ops), 1);
    // starts 0 ('/' vs 'a': 1), 1 ("aaa" vs "aab": 3), 2 ("aab": 3, match).
    EXPECT_EQ(ops.bytes_parsed, 7u);
    EXPECT_EQ(ops.rules_evaluated, 1u);
}

TEST(UrlRule, FirstMatchAndPrecedenceAgreeWithBruteForce)
{
    std::mt19937 rng(12);
    const char *alpha = "ab/.Gg";
    auto word = [&](size_t lo, size_t hi) {
        std::string s;
        size_t n = lo + rng() % (hi - lo + 1);
        for (size_t i = 0; i < n; i++)
            s += alpha[rng() % 6];
        return s;
    };
    for (int trial = 0; trial < 300; trial++) {
        uint8_t order = trial % 2 ? DP_URLRULE_PRECEDENCE : DP_URLRULE_FIRST;
        Table t(40, order);
        std::vector<RefRule> ref;
        int nrules = 1 + rng() % 40;
        for (int i = 0; i < nrules; i++) {
            RefRule r{int(rng() % DP_URL__KINDS), bool(rng() % 2), word(1, 4), uint16_t(rng() % 5), uint32_t(rng()),
                      uint32_t(i)};
            dp_ops_t ops = {};
            int pos = dp_urlrule_add(t.t, (dp_urlrule_kind_t)r.kind, r.icase ? DP_URL_ICASE : 0, r.pat.c_str(),
                                     r.prec, r.target, &ops);
            ASSERT_GE(pos, 0);
            ref.push_back(r);
            EXPECT_EQ(ops.table_writes, uint64_t(i + 1 - pos));
        }
        if (order == DP_URLRULE_PRECEDENCE)
            std::stable_sort(ref.begin(), ref.end(), [](const RefRule &a, const RefRule &b) { return a.prec < b.prec; });
        for (int q = 0; q < 30; q++) {
            std::string path = word(0, 12), host = word(0, 5);
            dp_urlrule_req_t r = Req(path, host);
            int want = DP_URLRULE_ENOMATCH;
            std::vector<uint32_t> all;
            for (size_t i = 0; i < ref.size(); i++)
                if (RefMatch(ref[i], path, host)) {
                    if (want < 0)
                        want = int(i);
                    all.push_back(uint32_t(i));
                }
            uint32_t target = 0;
            dp_ops_t ops = {};
            ASSERT_EQ(dp_urlrule_match(t.t, &r, &target, &ops), want) << path << " " << host;
            EXPECT_EQ(ops.rules_evaluated, want < 0 ? ref.size() : size_t(want) + 1);
            if (want >= 0)
                EXPECT_EQ(target, ref[want].target);
            std::vector<uint32_t> got(64);
            dp_ops_t all_ops = {};
            ASSERT_EQ(dp_urlrule_match_all(t.t, &r, got.data(), 64, &all_ops), int(all.size()));
            got.resize(all.size());
            EXPECT_EQ(got, all);
            EXPECT_EQ(all_ops.rules_evaluated, ref.size());
        }
    }
}

// Seed 003, section 3.4: rule set I is .gif and .htm; rule set II adds 48
// extensions that no request has (.aaa, .aab, ...). A WebBench request for
// /wbtree/a.gif costs, with naive comparison, 4 bytes compared for the
// matching ".gif" rule, and 1 per non-matching 4-byte extension rule whose
// last bytes differ at the first compared byte ('.' vs the path's byte).
TEST(UrlRule, RuleCountScenariosOfTheNctuPaperCostWhatTheyCost)
{
    auto ext = [](int i) {
        std::string s = "aaa";
        s[1] = char('a' + i / 26);
        s[2] = char('a' + i % 26);
        return s;
    };
    std::string path = "/wbtree/a.htm", host = "www";
    dp_urlrule_req_t r = Req(path, host);
    Table three(3), fifty(50);
    for (Table *t : {&three, &fifty}) {
        dp_urlrule_add(t->t, DP_URL_EXT, 0, "gif", 0, 1, nullptr);
        dp_urlrule_add(t->t, DP_URL_EXT, 0, "htm", 0, 2, nullptr);
    }
    for (int i = 0; i < 48; i++)
        dp_urlrule_add(fifty.t, DP_URL_EXT, 0, ext(i).c_str(), 0, 3 + i, nullptr);
    // The .htm rule is the second: first-match stops there in both tables.
    dp_ops_t a = {}, b = {};
    EXPECT_EQ(dp_urlrule_match(three.t, &r, nullptr, &a), 1);
    EXPECT_EQ(dp_urlrule_match(fifty.t, &r, nullptr, &b), 1);
    EXPECT_EQ(a.rules_evaluated, 2u);
    EXPECT_EQ(b.rules_evaluated, 2u);
    // ".gif" vs ".htm": '.' equal, 'g' != 'h': 2 bytes; ".htm": 4.
    EXPECT_EQ(a.bytes_parsed, 6u);
    // A request for another extension walks the whole list.
    std::string other = "/x.jpg";
    dp_urlrule_req_t o = Req(other, host);
    dp_ops_t c = {};
    EXPECT_EQ(dp_urlrule_match(fifty.t, &o, nullptr, &c), DP_URLRULE_ENOMATCH);
    EXPECT_EQ(c.rules_evaluated, 50u);
    EXPECT_EQ(c.bytes_parsed, 100u); // '.' matches, then the first letter differs
    // Nortel: 50 rules for each of 14 servers, all checked: 700.
    Table nortel(700);
    for (int s = 0; s < 14; s++)
        for (int i = 0; i < 50; i++)
            dp_urlrule_add(nortel.t, DP_URL_EXT, 0, i == 0 ? "htm" : ext(i).c_str(), 0, uint32_t(s), nullptr);
    std::vector<uint32_t> hits(14);
    dp_ops_t n = {};
    EXPECT_EQ(dp_urlrule_match_all(nortel.t, &r, hits.data(), 14, &n), 14);
    EXPECT_EQ(n.rules_evaluated, 700u);
    EXPECT_EQ(hits[13], 13u * 50u);
}

TEST(UrlRule, FullTableRefusesAndStaysIntact)
{
    dp_urlrule_config_t cfg = {2, 6, DP_URLRULE_FIRST, {0, 0, 0}};
    std::vector<uint64_t> mem(dp_urlrule_memory_size(&cfg) / 8 + 1);
    EXPECT_EQ(dp_urlrule_create(mem.data(), 8, &cfg), nullptr);
    dp_urlrule_table_t *t = dp_urlrule_create(mem.data(), dp_urlrule_memory_size(&cfg), &cfg);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(dp_urlrule_add(t, DP_URL_EXT, 0, "gif", 0, 1, nullptr), 0);
    EXPECT_EQ(dp_urlrule_add(t, DP_URL_EXT, 0, "htm", 0, 1, nullptr), DP_URLRULE_ENOSPC); // 4 + 4 > 6
    EXPECT_EQ(dp_urlrule_add(t, DP_URL_PATH_BEG, 0, "/a", 0, 1, nullptr), 1);
    EXPECT_EQ(dp_urlrule_add(t, DP_URL_PATH_BEG, 0, "/", 0, 1, nullptr), DP_URLRULE_ENOSPC);
    EXPECT_EQ(dp_urlrule_count(t), 2u);
}

} // namespace
