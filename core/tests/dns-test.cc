// DNS zone and query answering. Messages are written out byte by byte here
// from RFC 1035 section 4 (and RFC 6891 section 6 for OPT), responses are
// read back by a decoder written in this file, and table costs are checked
// against a model of the layout dp_dns.h documents, so nothing here relies
// on the core to judge the core.
#include "dp_dns.h"
#include "dp_pkt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

// ---- building messages ----

// Wire form of a dotted name, case kept (RFC 1035 section 3.1), written
// independently of dp_dns_name_to_wire.
Bytes W(const std::string &dotted)
{
    Bytes w;
    if (dotted == ".")
        return {0};
    size_t start = 0;
    while (start < dotted.size()) {
        size_t dot = dotted.find('.', start);
        if (dot == std::string::npos)
            dot = dotted.size();
        w.push_back(uint8_t(dot - start));
        for (size_t i = start; i < dot; i++)
            w.push_back(uint8_t(dotted[i]));
        start = dot + 1;
    }
    w.push_back(0);
    return w;
}

void Put16(Bytes &b, uint32_t v)
{
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}

void Put32(Bytes &b, uint32_t v)
{
    Put16(b, v >> 16);
    Put16(b, v & 0xFFFF);
}

void Append(Bytes &b, const Bytes &more)
{
    b.insert(b.end(), more.begin(), more.end());
}

Bytes Header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar)
{
    Bytes b;
    Put16(b, id);
    Put16(b, flags);
    Put16(b, qd);
    Put16(b, an);
    Put16(b, ns);
    Put16(b, ar);
    return b;
}

// A standard query: RD set (what stub resolvers send), one question.
Bytes Query(const Bytes &qname, uint16_t qtype, uint16_t qclass = 1, uint16_t id = 0x1234, uint16_t flags = 0x0100,
            uint16_t ar = 0)
{
    Bytes b = Header(id, flags, 1, 0, 0, ar);
    Append(b, qname);
    Put16(b, qtype);
    Put16(b, qclass);
    return b;
}

// An OPT pseudo-RR (RFC 6891 section 6.1.2): owner, TYPE 41, CLASS = UDP
// payload size, TTL = extended RCODE | version | flags, RDATA options.
Bytes Opt(uint16_t udp, uint8_t ext = 0, uint8_t version = 0, uint16_t flags = 0, const Bytes &rdata = {},
          const Bytes &owner = {0})
{
    Bytes b = owner;
    Put16(b, 41);
    Put16(b, udp);
    b.push_back(ext);
    b.push_back(version);
    Put16(b, flags);
    Put16(b, uint32_t(rdata.size()));
    Append(b, rdata);
    return b;
}

Bytes QueryWithOpt(const Bytes &qname, uint16_t qtype, const Bytes &opt, uint16_t qclass = 1)
{
    Bytes b = Query(qname, qtype, qclass, 0x1234, 0x0100, 1);
    Append(b, opt);
    return b;
}

// ---- an independent decoder of what comes back ----

struct Rr {
    std::string name; // dotted, case kept, "" for the root
    uint16_t type = 0, cls = 0;
    uint32_t ttl = 0;
    Bytes rdata;
};

struct Decoded {
    bool ok = false;
    uint16_t id = 0, flags = 0, qd = 0, an = 0, ns = 0, ar = 0;
    std::string qname;
    uint16_t qtype = 0, qclass = 0;
    std::vector<Rr> answers, additional;
    bool qr() const { return flags & 0x8000; }
    unsigned opcode() const { return (flags >> 11) & 15; }
    bool aa() const { return flags & 0x0400; }
    bool tc() const { return flags & 0x0200; }
    bool rd() const { return flags & 0x0100; }
    bool ra() const { return flags & 0x0080; }
    unsigned z() const { return (flags >> 4) & 7; }
    unsigned rcode() const { return flags & 15; }
};

uint16_t Get16(const Bytes &m, size_t at)
{
    return uint16_t(m.at(at) << 8 | m.at(at + 1));
}

uint32_t Get32(const Bytes &m, size_t at)
{
    return uint32_t(Get16(m, at)) << 16 | Get16(m, at + 2);
}

// Reads a possibly compressed name; follows at most 64 pointers.
bool ReadName(const Bytes &m, size_t &pos, std::string &out)
{
    size_t p = pos;
    bool jumped = false;
    out.clear();
    for (int hops = 0; hops < 64;) {
        if (p >= m.size())
            return false;
        uint8_t c = m[p];
        if (c == 0) {
            if (!jumped)
                pos = p + 1;
            return true;
        }
        if ((c & 0xC0) == 0xC0) {
            if (p + 1 >= m.size())
                return false;
            if (!jumped)
                pos = p + 2;
            jumped = true;
            p = size_t(c & 0x3F) << 8 | m[p + 1];
            hops++;
            continue;
        }
        if (c > 63 || p + 1 + c > m.size())
            return false;
        if (!out.empty())
            out += '.';
        out.append(reinterpret_cast<const char *>(&m[p + 1]), c);
        p += 1 + c;
    }
    return false;
}

bool ReadRr(const Bytes &m, size_t &pos, Rr &rr)
{
    if (!ReadName(m, pos, rr.name) || pos + 10 > m.size())
        return false;
    rr.type = Get16(m, pos);
    rr.cls = Get16(m, pos + 2);
    rr.ttl = Get32(m, pos + 4);
    uint16_t rdlen = Get16(m, pos + 8);
    pos += 10;
    if (pos + rdlen > m.size())
        return false;
    rr.rdata.assign(m.begin() + long(pos), m.begin() + long(pos + rdlen));
    pos += rdlen;
    return true;
}

Decoded Decode(const Bytes &m)
{
    Decoded d;
    if (m.size() < 12)
        return d;
    d.id = Get16(m, 0);
    d.flags = Get16(m, 2);
    d.qd = Get16(m, 4);
    d.an = Get16(m, 6);
    d.ns = Get16(m, 8);
    d.ar = Get16(m, 10);
    size_t pos = 12;
    if (d.qd > 1)
        return d;
    if (d.qd == 1) {
        if (!ReadName(m, pos, d.qname) || pos + 4 > m.size())
            return d;
        d.qtype = Get16(m, pos);
        d.qclass = Get16(m, pos + 2);
        pos += 4;
    }
    for (unsigned i = 0; i < d.an; i++) {
        Rr rr;
        if (!ReadRr(m, pos, rr))
            return d;
        d.answers.push_back(rr);
    }
    for (unsigned i = 0; i < d.ns; i++) {
        Rr rr;
        if (!ReadRr(m, pos, rr))
            return d;
    }
    for (unsigned i = 0; i < d.ar; i++) {
        Rr rr;
        if (!ReadRr(m, pos, rr))
            return d;
        d.additional.push_back(rr);
    }
    d.ok = pos == m.size();
    return d;
}

std::string Lower(std::string s)
{
    for (char &c : s)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return s;
}

// ---- the hash and the layout, as dp_dns.h documents them ----

uint32_t Fnv1a(const Bytes &b)
{
    uint32_t h = 0x811C9DC5u;
    for (uint8_t c : b) {
        h ^= c;
        h *= 0x01000193u;
    }
    return h;
}

uint32_t Fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

Bytes LowerBytes(Bytes b)
{
    for (uint8_t &c : b)
        if (c >= 'A' && c <= 'Z')
            c = uint8_t(c + 32);
    return b;
}

uint32_t RefHash(const Bytes &wire)
{
    return Fmix32(Fnv1a(LowerBytes(wire)));
}

uint64_t LinesSpanned(uint64_t off, uint64_t n)
{
    return (off + n - 1) / 64 - off / 64 + 1;
}

// The zone as dp_dns.h lays it out: linear probing over 16-byte slots from
// hash & (slots - 1); names and RRsets back to back in insertion order.
struct RefZone {
    struct Entry {
        Bytes name; // lowercase wire
        uint32_t hash, name_off, word;
        std::vector<uint32_t> addrs;
        uint32_t ttl;
    };
    uint32_t slots;
    std::vector<int> slot; // entry index or -1
    std::vector<Entry> entries;
    uint32_t name_bytes = 0, words = 0;

    explicit RefZone(uint32_t nslots) : slots(nslots), slot(nslots, -1) {}

    struct Walk {
        int entry = -1;
        uint32_t empty_slot = 0;
        uint64_t probes = 0, lines = 0, compared = 0;
    };

    Walk Find(const Bytes &wire) const
    {
        Walk w;
        Bytes low = LowerBytes(wire);
        uint32_t h = RefHash(wire), i = h & (slots - 1), prev = 0;
        for (uint32_t n = 0; n < slots; n++, i = (i + 1) & (slots - 1)) {
            w.probes++;
            if (n == 0 || i / 4 != prev)
                w.lines++;
            prev = i / 4;
            if (slot[i] < 0) {
                w.empty_slot = i;
                return w;
            }
            const Entry &e = entries[size_t(slot[i])];
            if (e.hash != h || e.name.size() != low.size())
                continue;
            size_t k = 0;
            while (k < low.size() && e.name[k] == low[k])
                k++;
            uint64_t read = k < low.size() ? k + 1 : low.size();
            w.compared += read;
            w.lines += LinesSpanned(e.name_off, read);
            if (k == low.size()) {
                w.entry = slot[i];
                return w;
            }
        }
        return w;
    }

    void Add(const Bytes &wire, const std::vector<uint32_t> &addrs, uint32_t ttl)
    {
        Walk w = Find(wire);
        ASSERT_LT(w.entry, 0);
        Entry e{LowerBytes(wire), RefHash(wire), name_bytes, words, addrs, ttl};
        name_bytes += uint32_t(wire.size());
        words += 1 + uint32_t(addrs.size());
        slot[w.empty_slot] = int(entries.size());
        entries.push_back(e);
    }

    uint64_t RrsetLines(const Entry &e) const { return LinesSpanned(uint64_t(e.word) * 4, (e.addrs.size() + 1) * 4); }
};

// A zone in a heap block, with its reference model alongside.
struct Zone {
    dp_dns_zone_config_t cfg;
    std::vector<uint8_t> mem;
    dp_dns_zone_t *z = nullptr;
    std::unique_ptr<RefZone> ref;

    explicit Zone(dp_dns_zone_config_t c) : cfg(c)
    {
        size_t n = dp_dns_zone_memory_size(&cfg);
        EXPECT_GT(n, 0u);
        mem.resize(n);
        z = dp_dns_zone_create(mem.data(), mem.size(), &cfg);
        EXPECT_NE(z, nullptr);
        dp_dns_zone_stats_t st;
        dp_dns_zone_get_stats(z, &st);
        ref = std::make_unique<RefZone>(st.slots);
    }

    int Add(const std::string &dotted, const std::vector<uint32_t> &addrs, uint32_t ttl)
    {
        Bytes w = W(dotted);
        int rc = dp_dns_zone_add(z, w.data(), w.size(), addrs.data(), uint32_t(addrs.size()), ttl, nullptr);
        if (rc == 0)
            ref->Add(w, addrs, ttl);
        return rc;
    }
};

struct Answer {
    dp_drop_reason_t reason;
    dp_dns_result_t res;
    dp_ops_t ops;
    Bytes resp;
};

// Answers msg from an exactly sized heap copy into a buffer of cap bytes
// followed by canary bytes; checks nothing was written past what is sent.
Answer Ask(const Zone &zone, const Bytes &msg, size_t cap = 4096)
{
    Answer a;
    std::unique_ptr<uint8_t[]> in(new uint8_t[msg.size() ? msg.size() : 1]);
    if (!msg.empty())
        std::memcpy(in.get(), msg.data(), msg.size());
    Bytes out(cap + 64, 0xA5);
    size_t len = 0;
    dp_ops_reset(&a.ops);
    a.reason = dp_dns_answer(zone.z, in.get(), msg.size(), out.data(), cap, &len, &a.res, &a.ops);
    size_t written = a.reason == DP_OK ? len : 0;
    for (size_t i = written; i < out.size(); i++)
        if (out[i] != 0xA5) {
            ADD_FAILURE() << "byte " << i << " written beyond the " << written << " sent";
            break;
        }
    a.resp.assign(out.begin(), out.begin() + long(written));
    return a;
}

dp_dns_zone_config_t Config(uint32_t names = 64, uint32_t name_bytes = 4096, uint32_t records = 1024,
                            uint32_t edns = 1232)
{
    dp_dns_zone_config_t c;
    c.max_names = names;
    c.max_name_bytes = name_bytes;
    c.max_records = records;
    c.edns_udp_size = edns;
    return c;
}

std::vector<uint32_t> Addrs(uint32_t base, unsigned n)
{
    std::vector<uint32_t> v;
    for (unsigned i = 0; i < n; i++)
        v.push_back(base + i);
    return v;
}

// ================================================================ names

TEST(DnsName, DottedToWireIsRfc1035LayoutInLowercase)
{
    // RFC 1035 section 4.1.4's example name F.ISI.ARPA: 1 F 3 I S I 4 A R P A 0.
    const Bytes want = {1, 'f', 3, 'i', 's', 'i', 4, 'a', 'r', 'p', 'a', 0};
    uint8_t w[300];
    size_t n = 0;
    ASSERT_EQ(dp_dns_name_to_wire("F.ISI.ARPA", w, sizeof w, &n), 0);
    EXPECT_EQ(Bytes(w, w + n), want);
    ASSERT_EQ(dp_dns_name_to_wire("f.isi.arpa.", w, sizeof w, &n), 0);
    EXPECT_EQ(Bytes(w, w + n), want);
    ASSERT_EQ(dp_dns_name_to_wire(".", w, sizeof w, &n), 0);
    EXPECT_EQ(Bytes(w, w + n), Bytes{0});
    // Only ASCII letters fold (RFC 4343 section 3).
    ASSERT_EQ(dp_dns_name_to_wire("\xC9Z", w, sizeof w, &n), 0);
    EXPECT_EQ(Bytes(w, w + n), (Bytes{2, 0xC9, 'z', 0}));
}

TEST(DnsName, RefusesEmptyLabelsAndLimitsAt63And255)
{
    uint8_t w[300];
    size_t n = 0;
    for (const char *bad : {"", "a..b", ".a", "..", "a.."})
        EXPECT_EQ(dp_dns_name_to_wire(bad, w, sizeof w, &n), DP_DNS_EINVAL) << bad;
    std::string l63(63, 'x'), l64(64, 'x');
    ASSERT_EQ(dp_dns_name_to_wire(l63.c_str(), w, sizeof w, &n), 0);
    EXPECT_EQ(n, 65u);
    EXPECT_EQ(dp_dns_name_to_wire(l64.c_str(), w, sizeof w, &n), DP_DNS_EINVAL);
    // 63+63+63+61 byte labels: 4 length bytes + 250 + root = 255 wire bytes.
    std::string n255 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'y');
    ASSERT_EQ(dp_dns_name_to_wire(n255.c_str(), w, sizeof w, &n), 0);
    EXPECT_EQ(n, 255u);
    EXPECT_EQ(Bytes(w, w + n), W(n255));
    std::string n256 = l63 + "." + l63 + "." + l63 + "." + std::string(62, 'y');
    EXPECT_EQ(W(n256).size(), 256u);
    EXPECT_EQ(dp_dns_name_to_wire(n256.c_str(), w, sizeof w, &n), DP_DNS_EINVAL);
    // The buffer must hold the whole name.
    EXPECT_EQ(dp_dns_name_to_wire("abc", w, 4, &n), DP_DNS_EINVAL);
    EXPECT_EQ(dp_dns_name_to_wire("abc", w, 5, &n), 0);
}

TEST(DnsName, HashIsFnv1aFinishedWithFmix32OverFoldedBytes)
{
    // The FNV-1a reference itself, against published test values.
    EXPECT_EQ(Fnv1a({}), 0x811C9DC5u);
    EXPECT_EQ(Fnv1a({'a'}), 0xE40C292Cu);
    EXPECT_EQ(Fnv1a({'f', 'o', 'o', 'b', 'a', 'r'}), 0xBF9CF968u);
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; i++) {
        Bytes b(rng() % 40);
        for (uint8_t &c : b)
            c = uint8_t(rng());
        EXPECT_EQ(dp_dns_name_hash(b.data(), b.size()), RefHash(b));
    }
    Bytes up = W("WWW.Example.COM"), low = W("www.example.com");
    EXPECT_EQ(dp_dns_name_hash(up.data(), up.size()), dp_dns_name_hash(low.data(), low.size()));
    Bytes e1 = {1, 0xC9, 0}, e2 = {1, 0xE9, 0}; // É vs é in Latin-1: not folded
    EXPECT_NE(dp_dns_name_hash(e1.data(), 3), dp_dns_name_hash(e2.data(), 3));
}

// ================================================================ zone

TEST(DnsZone, CreateRefusesBadConfigAndShortMemory)
{
    for (auto c : {Config(0), Config(1u << 25), Config(4, 0), Config(4, 16, 1u << 29), Config(4, 16, 4, 511),
                   Config(4, 16, 4, 65536)})
        EXPECT_EQ(dp_dns_zone_memory_size(&c), 0u);
    auto ok = Config(4, 16, 4, 0);
    size_t n = dp_dns_zone_memory_size(&ok);
    ASSERT_GT(n, 0u);
    std::vector<uint8_t> mem(n);
    EXPECT_EQ(dp_dns_zone_create(mem.data(), n - 1, &ok), nullptr);
    EXPECT_EQ(dp_dns_zone_create(nullptr, n, &ok), nullptr);
    // Any alignment of the block works.
    std::vector<uint8_t> mem2(n + 1);
    dp_dns_zone_t *z = dp_dns_zone_create(mem2.data() + 1, n, &ok);
    ASSERT_NE(z, nullptr);
    dp_dns_zone_stats_t st;
    dp_dns_zone_get_stats(z, &st);
    EXPECT_EQ(st.slots, 8u); // 2 * 4
    EXPECT_EQ(st.names, 0u);
    EXPECT_EQ(st.memory_bytes, n);
}

TEST(DnsZone, SlotCountIsTheSmallestPowerOfTwoAtTwiceTheNames)
{
    const uint32_t want[][2] = {{1, 2}, {2, 4}, {3, 8}, {4, 8}, {5, 16}, {96, 256}, {512, 1024}, {513, 2048}};
    for (const auto &w : want) {
        Zone z(Config(w[0], 16));
        dp_dns_zone_stats_t st;
        dp_dns_zone_get_stats(z.z, &st);
        EXPECT_EQ(st.slots, w[1]) << w[0];
    }
}

TEST(DnsZone, LookupIgnoresAsciiCaseOnly)
{
    Zone z(Config());
    ASSERT_EQ(z.Add("WWW.Example.COM", {0xC0000201, 0xC0000202}, 300), 0);
    for (const char *spelling : {"www.example.com", "wWw.eXaMpLe.CoM", "WWW.EXAMPLE.COM"}) {
        Bytes q = W(spelling);
        dp_dns_rrset_t rr;
        ASSERT_EQ(dp_dns_zone_lookup(z.z, q.data(), q.size(), &rr, nullptr), 0) << spelling;
        EXPECT_EQ(rr.ttl, 300u);
        ASSERT_EQ(rr.count, 2u);
        EXPECT_EQ(rr.addrs[0], 0xC0000201u);
        EXPECT_EQ(rr.addrs[1], 0xC0000202u);
        EXPECT_EQ(rr.bytes_compared, q.size());
    }
    // The same name differing in a byte >= 0x80 is another name.
    ASSERT_EQ(z.Add("caf\xC9.example", {1}, 60), 0);
    Bytes other = W("caf\xE9.example");
    dp_dns_rrset_t rr;
    EXPECT_EQ(dp_dns_zone_lookup(z.z, other.data(), other.size(), &rr, nullptr), DP_DNS_ENOENT);
    EXPECT_EQ(rr.count, 0u);
    EXPECT_EQ(z.Add("caf\xE9.example", {2}, 60), 0);
    EXPECT_EQ(z.Add("CAF\xC9.EXAMPLE", {3}, 60), DP_DNS_EEXIST);
}

TEST(DnsZone, RefusalsChangeNothing)
{
    Zone z(Config(3, 40, 5, 0));
    ASSERT_EQ(z.Add("a.example", {1, 2, 3}, 10), 0);
    dp_dns_zone_stats_t before, after;
    dp_dns_zone_get_stats(z.z, &before);
    EXPECT_EQ(z.Add("A.EXAMPLE", {9}, 10), DP_DNS_EEXIST);
    EXPECT_EQ(z.Add("b.example", {1, 2, 3}, 10), DP_DNS_ENOSPC); // 3 + 3 > 5 records
    EXPECT_EQ(z.Add("a-much-much-longer-name.example", {}, 10), DP_DNS_ENOSPC); // 11 + 33 > 40 name bytes
    uint32_t one = 1;
    Bytes ok = W("b.example");
    EXPECT_EQ(dp_dns_zone_add(z.z, ok.data(), ok.size(), &one, 1, 0x80000000u, nullptr), DP_DNS_EINVAL);
    EXPECT_EQ(dp_dns_zone_add(z.z, ok.data(), ok.size(), nullptr, 1, 10, nullptr), DP_DNS_EINVAL);
    std::vector<uint32_t> many(65536, 1);
    EXPECT_EQ(dp_dns_zone_add(z.z, ok.data(), ok.size(), many.data(), 65536, 10, nullptr), DP_DNS_EINVAL);
    // Wire names the zone refuses: a pointer, a 64-byte label type, no
    // root at the end, bytes after the root, empty, over 255.
    const Bytes bad[] = {{0xC0, 0x0C}, {0x40, 'a', 0}, {1, 'a'}, {1, 'a', 0, 0}, {}, {3, 'a', 'b'}};
    for (const Bytes &b : bad)
        EXPECT_EQ(dp_dns_zone_add(z.z, b.data(), b.size(), &one, 1, 10, nullptr), DP_DNS_EINVAL);
    dp_dns_zone_get_stats(z.z, &after);
    EXPECT_EQ(after.names, before.names);
    EXPECT_EQ(after.name_bytes, before.name_bytes);
    EXPECT_EQ(after.records, before.records);
    // Room left is still usable, up to max_names.
    EXPECT_EQ(z.Add("b.example", {4, 5}, 10), 0);
    EXPECT_EQ(z.Add(".", {}, 10), 0);
    EXPECT_EQ(z.Add("c", {}, 10), DP_DNS_ENOSPC); // 3 names already
    dp_dns_zone_get_stats(z.z, &after);
    EXPECT_EQ(after.names, 3u);
    EXPECT_EQ(after.records, 5u);
    EXPECT_EQ(after.name_bytes, 11u + 11u + 1u);
}

TEST(DnsZone, AgreesWithAMapAndTheDocumentedProbeWalk)
{
    std::mt19937 rng(2024);
    const uint32_t cap = 3000;
    Zone z(Config(cap, cap * 40, cap * 4, 0));
    std::map<std::string, std::pair<uint32_t, std::vector<uint32_t>>> model; // lowercase dotted
    auto random_name = [&]() {
        std::string s;
        unsigned labels = 1 + rng() % 4;
        for (unsigned l = 0; l < labels; l++) {
            if (l)
                s += '.';
            unsigned n = 1 + rng() % 8;
            for (unsigned i = 0; i < n; i++)
                s += "abcXYZ019-"[rng() % 10];
        }
        return s;
    };
    auto random_case = [&](std::string s) {
        for (char &c : s)
            if (std::isalpha(uint8_t(c)) && rng() % 2)
                c = char(c ^ 0x20);
        return s;
    };
    uint32_t added = 0;
    dp_ops_t add_ops;
    dp_ops_reset(&add_ops);
    while (added < cap) {
        std::string name = random_name();
        std::vector<uint32_t> a = Addrs(rng(), rng() % 4);
        uint32_t ttl = rng() % 100000;
        Bytes w = W(name);
        int rc = dp_dns_zone_add(z.z, w.data(), w.size(), a.data(), uint32_t(a.size()), ttl, &add_ops);
        if (model.count(Lower(name))) {
            EXPECT_EQ(rc, DP_DNS_EEXIST);
            continue;
        }
        ASSERT_EQ(rc, 0);
        z.ref->Add(w, a, ttl);
        model[Lower(name)] = {ttl, a};
        added++;
    }
    EXPECT_EQ(z.Add(random_name() + ".new", {}, 1), DP_DNS_ENOSPC);
    dp_ops_t ops;
    dp_ops_reset(&ops);
    uint64_t lookups = 0, probes = 0, lines = 0, hits = 0, hit_probes = 0;
    std::vector<std::string> present;
    for (const auto &kv : model)
        present.push_back(kv.first);
    for (int i = 0; i < 20000; i++) {
        std::string name = i % 2 ? present[rng() % present.size()] : random_name();
        Bytes w = W(random_case(name));
        dp_dns_rrset_t rr;
        int rc = dp_dns_zone_lookup(z.z, w.data(), w.size(), &rr, &ops);
        lookups++;
        auto it = model.find(Lower(name));
        RefZone::Walk walk = z.ref->Find(w);
        probes += walk.probes;
        lines += walk.lines;
        EXPECT_EQ(rr.bytes_compared, walk.compared);
        if (it == model.end()) {
            EXPECT_EQ(rc, DP_DNS_ENOENT);
            continue;
        }
        ASSERT_EQ(rc, 0);
        hits++;
        hit_probes += walk.probes;
        EXPECT_EQ(rr.ttl, it->second.first);
        ASSERT_EQ(rr.count, it->second.second.size());
        for (uint32_t k = 0; k < rr.count; k++)
            EXPECT_EQ(rr.addrs[k], it->second.second[k]);
    }
    EXPECT_EQ(ops.hashes, lookups);
    EXPECT_EQ(ops.table_probes, probes);
    EXPECT_EQ(ops.cache_lines, lines);
    EXPECT_EQ(ops.table_writes + ops.bytes_parsed + ops.bytes_written, 0u);
    // Linear probing at load a (Knuth, TAOCP vol. 3, 6.4): a hit reads
    // (1 + 1/(1-a))/2 slots on average, a miss (1 + 1/(1-a)^2)/2. Here
    // a = 3000/8192: 1.29 and 1.74; the hash must come within 15%.
    dp_dns_zone_stats_t st;
    dp_dns_zone_get_stats(z.z, &st);
    ASSERT_EQ(st.slots, 8192u);
    double a = 3000.0 / 8192.0;
    double hit_mean = double(hit_probes) / double(hits);
    double miss_mean = double(probes - hit_probes) / double(lookups - hits);
    EXPECT_NEAR(hit_mean, (1 + 1 / (1 - a)) / 2, 0.15 * (1 + 1 / (1 - a)) / 2);
    EXPECT_NEAR(miss_mean, (1 + 1 / ((1 - a) * (1 - a))) / 2, 0.15 * (1 + 1 / ((1 - a) * (1 - a))) / 2);
}

TEST(DnsZone, AFullHashCollisionIsSettledByComparingNames)
{
    // Two names of the same length with the same 32-bit hash, found by a
    // birthday search over "c%08x" names (the 781,345th name collides with
    // an earlier one; the search takes seconds, so its result is kept):
    // the stored name is compared up to and including the first differing
    // byte.
    const std::string a = "c0004a0f5", b = "c000bec20";
    ASSERT_EQ(RefHash(W(a)), RefHash(W(b)));
    ASSERT_EQ(RefHash(W(a)), 0xE9819861u);
    size_t diff = 1; // wire offset of the first differing byte (after the length byte)
    while (a[diff - 1] == b[diff - 1])
        diff++;
    Zone z(Config(4, 64, 4, 0));
    ASSERT_EQ(z.Add(a, {1}, 1), 0);
    Bytes wb = W(b);
    dp_dns_rrset_t rr;
    dp_ops_t ops;
    dp_ops_reset(&ops);
    EXPECT_EQ(dp_dns_zone_lookup(z.z, wb.data(), wb.size(), &rr, &ops), DP_DNS_ENOENT);
    EXPECT_EQ(rr.bytes_compared, diff + 1);
    EXPECT_EQ(ops.table_probes, 2u); // the colliding slot, then an empty one
    EXPECT_EQ(ops.cache_lines, z.ref->Find(wb).lines);
    EXPECT_EQ(z.ref->Find(wb).compared, diff + 1);
    ASSERT_EQ(z.Add(b, {2}, 2), 0);
    EXPECT_EQ(dp_dns_zone_lookup(z.z, wb.data(), wb.size(), &rr, nullptr), 0);
    EXPECT_EQ(rr.addrs[0], 2u);
    EXPECT_EQ(rr.bytes_compared, diff + 1 + wb.size());
}

TEST(DnsZone, CollidingNamesProbeOnAndCountEachLine)
{
    // Names whose home slot is the same (found with the reference hash,
    // checked above): each one added walks one slot further.
    Zone z(Config(4, 4096, 64, 0)); // 8 slots, two cache lines
    const uint32_t home = 3;        // the last slot of the first line
    std::vector<std::string> names;
    for (int i = 0; names.size() < 4; i++) {
        std::string n = "n" + std::to_string(i) + ".example";
        if ((RefHash(W(n)) & 7) == home)
            names.push_back(n);
    }
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(z.Add(names[size_t(i)], {uint32_t(i)}, 5), 0);
    for (int i = 0; i < 4; i++) {
        Bytes w = W(names[size_t(i)]);
        dp_dns_rrset_t rr;
        dp_ops_t ops;
        dp_ops_reset(&ops);
        int rc = dp_dns_zone_lookup(z.z, w.data(), w.size(), &rr, &ops);
        EXPECT_EQ(rc, i < 3 ? 0 : DP_DNS_ENOENT);
        EXPECT_EQ(ops.hashes, 1u);
        // Slots 3, 4, 5 (and the empty 6 for the absent fourth name).
        EXPECT_EQ(ops.table_probes, uint64_t(i + 1));
        // Slot 3 is in line 0, slots 4..6 in line 1; the name compared is
        // in the name pool's first line (all three fit in 64 bytes).
        uint64_t slot_lines = i == 0 ? 1 : 2;
        uint64_t name_lines = i < 3 ? 1 : 0;
        EXPECT_EQ(ops.cache_lines, slot_lines + name_lines) << i;
        EXPECT_EQ(rr.bytes_compared, i < 3 ? w.size() : 0u);
    }
}

// ================================================================ answers

class DnsAnswer : public ::testing::Test {
protected:
    Zone zone{Config(64, 8192, 1024, 1232)};
    Zone plain{Config(64, 8192, 1024, 0)}; // EDNS off
    Zone wide{Config(64, 8192, 1024, 1500)}; // a larger EDNS size
    void SetUp() override
    {
        for (Zone *z : {&zone, &plain, &wide}) {
            ASSERT_EQ(z->Add("www.example.com", {0xC0000201, 0xC0000202, 0xC0000203}, 300), 0);
            ASSERT_EQ(z->Add("ns1.example.com", {0xC6336435}, 86400), 0);
            ASSERT_EQ(z->Add("mail.example.com", {}, 600), 0); // a name without A records
            ASSERT_EQ(z->Add("fit.example.com", Addrs(0x0A000000, 29), 60), 0);
            ASSERT_EQ(z->Add("big.example.com", Addrs(0x0A010000, 30), 60), 0);
            ASSERT_EQ(z->Add("e74.example.com", Addrs(0x0A020000, 74), 60), 0);
            ASSERT_EQ(z->Add("e75.example.com", Addrs(0x0A030000, 75), 60), 0);
        }
    }

    // Common checks of a response to a parsed question.
    static Decoded Check(const Answer &a, const Bytes &query, unsigned rcode, bool aa, size_t answers)
    {
        EXPECT_EQ(a.reason, DP_OK);
        Decoded d = Decode(a.resp);
        EXPECT_TRUE(d.ok) << "response does not decode";
        EXPECT_EQ(d.id, Get16(query, 0));
        EXPECT_TRUE(d.qr());
        EXPECT_EQ(d.opcode(), 0u);
        EXPECT_EQ(d.aa(), aa);
        EXPECT_EQ(d.rd(), bool(query[2] & 1));
        EXPECT_FALSE(d.ra());
        EXPECT_EQ(d.z(), 0u);
        EXPECT_EQ(d.rcode(), rcode & 15);
        EXPECT_EQ(d.qd, 1u);
        EXPECT_EQ(d.an, answers);
        EXPECT_EQ(d.ns, 0u);
        // The question comes back byte for byte (RFC 1035 section 4.1.1).
        size_t qlen = 0;
        while (query[12 + qlen])
            qlen += 1 + query[12 + qlen];
        qlen += 1 + 4;
        EXPECT_TRUE(std::equal(query.begin() + 12, query.begin() + 12 + long(qlen), a.resp.begin() + 12));
        EXPECT_EQ(a.res.rcode, rcode);
        EXPECT_EQ(a.res.aa, aa);
        EXPECT_EQ(a.res.answers, answers);
        return d;
    }
};

TEST_F(DnsAnswer, ARecordsMatchTheHandWrittenResponse)
{
    // Query: ID 0xbeef, RD, one question www.example.com IN A.
    const Bytes query = {
        0xbe, 0xef, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 'w', 'w', 'w', 0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'c', 'o', 'm', 0x00,
        0x00, 0x01, 0x00, 0x01,
    };
    // Response: QR AA RD, NOERROR, QD 1 AN 3; the question; three answers
    // whose name is the pointer C00C, TYPE A, CLASS IN, TTL 300, RDLENGTH 4.
    const Bytes want = {
        0xbe, 0xef, 0x85, 0x00, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00,
        0x03, 'w', 'w', 'w', 0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'c', 'o', 'm', 0x00,
        0x00, 0x01, 0x00, 0x01,
        0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04, 192, 0, 2, 1,
        0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04, 192, 0, 2, 2,
        0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04, 192, 0, 2, 3,
    };
    Answer a = Ask(zone, query);
    ASSERT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.resp, want);
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    EXPECT_EQ(a.res.udp_limit, 512u);
    EXPECT_EQ(a.res.bytes_compared, 17u);
    Decoded d = Check(a, query, 0, true, 3);
    for (const Rr &rr : d.answers) {
        EXPECT_EQ(rr.name, "www.example.com");
        EXPECT_EQ(rr.type, 1u);
        EXPECT_EQ(rr.cls, 1u);
        EXPECT_EQ(rr.ttl, 300u);
    }
    // Exact costs (dp_dns.h): header + question parsed, one hash, the walk
    // of the reference model, the RRset's line(s), header + 3 answers
    // written, the question copied.
    RefZone::Walk w = zone.ref->Find(W("www.example.com"));
    const RefZone::Entry &e = zone.ref->entries[size_t(w.entry)];
    EXPECT_EQ(a.ops.packets, 0u);
    EXPECT_EQ(a.ops.bytes_parsed, 12u + 21u);
    EXPECT_EQ(a.ops.hashes, 1u);
    EXPECT_EQ(a.ops.table_probes, w.probes);
    EXPECT_EQ(a.ops.cache_lines, w.lines + zone.ref->RrsetLines(e));
    EXPECT_EQ(a.ops.bytes_written, 12u + 3u * 16u);
    EXPECT_EQ(a.ops.bytes_copied, 21u);
    EXPECT_EQ(a.ops.table_writes + a.ops.checksum_bytes + a.ops.csum_updates, 0u);
}

TEST_F(DnsAnswer, EachRcodeCase)
{
    struct Case {
        const char *what;
        Bytes query;
        dp_dns_status_t status;
        unsigned rcode;
        bool aa;
        size_t answers;
    } cases[] = {
        {"A hit", Query(W("ns1.example.com"), 1), DP_DNS_NOERROR, 0, true, 1},
        {"ANY gets the A records", Query(W("ns1.example.com"), 255), DP_DNS_NOERROR, 0, true, 1},
        {"missing name", Query(W("nope.example.com"), 1), DP_DNS_NXDOMAIN, 3, true, 0},
        {"missing name, AAAA", Query(W("nope.example.com"), 28), DP_DNS_NXDOMAIN, 3, true, 0},
        {"AAAA of a present name", Query(W("www.example.com"), 28), DP_DNS_NODATA, 0, true, 0},
        {"MX of a present name", Query(W("www.example.com"), 15), DP_DNS_NODATA, 0, true, 0},
        {"A of a name without A records", Query(W("mail.example.com"), 1), DP_DNS_NODATA, 0, true, 0},
        {"class CH", Query(W("www.example.com"), 1, 3), DP_DNS_REFUSED_CLASS, 5, false, 0},
        {"class ANY", Query(W("www.example.com"), 1, 255), DP_DNS_REFUSED_CLASS, 5, false, 0},
        {"AXFR", Query(W("example.com"), 252), DP_DNS_NOTIMP_QTYPE, 4, false, 0},
        {"IXFR", Query(W("example.com"), 251), DP_DNS_NOTIMP_QTYPE, 4, false, 0},
        // dig @box version.bind chaos txt: the classic fingerprinting query.
        {"version.bind CH TXT", Query(W("version.bind"), 16, 3, 0x5c1e, 0x0000), DP_DNS_REFUSED_CLASS, 5, false, 0},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        Answer a = Ask(zone, c.query);
        EXPECT_EQ(a.res.status, c.status) << dp_dns_status_name(a.res.status);
        Decoded d = Check(a, c.query, c.rcode, c.aa, c.answers);
        EXPECT_EQ(a.res.qtype, Get16(c.query, c.query.size() - 4));
        EXPECT_EQ(a.res.qclass, Get16(c.query, c.query.size() - 2));
        bool looked_up = c.status == DP_DNS_NOERROR || c.status == DP_DNS_NODATA || c.status == DP_DNS_NXDOMAIN;
        EXPECT_EQ(a.ops.hashes, looked_up ? 1u : 0u);
        EXPECT_EQ(a.ops.bytes_written, 12u + 16u * c.answers);
        EXPECT_EQ(a.ops.bytes_copied, c.query.size() - 12);
    }
}

TEST_F(DnsAnswer, UnknownOpcodesGetHeaderOnlyNotimp)
{
    // IQUERY (1, RFC 3425), STATUS (2), NOTIFY (4, RFC 1996), UPDATE (5,
    // RFC 2136) and an unassigned one: the format of the rest is unknown.
    for (unsigned opcode : {1u, 2u, 4u, 5u, 15u}) {
        Bytes q = Query(W("www.example.com"), 1, 1, 0x0a0b, uint16_t(opcode << 11 | 0x0100));
        Answer a = Ask(zone, q);
        ASSERT_EQ(a.reason, DP_OK);
        EXPECT_EQ(a.res.status, DP_DNS_NOTIMP_OPCODE);
        const Bytes want = {0x0a, 0x0b, uint8_t(0x80 | opcode << 3 | 1), 4, 0, 0, 0, 0, 0, 0, 0, 0};
        EXPECT_EQ(a.resp, want) << opcode;
        EXPECT_EQ(a.ops.bytes_parsed, 12u);
        EXPECT_EQ(a.ops.bytes_written, 12u);
        EXPECT_EQ(a.ops.hashes + a.ops.bytes_copied, 0u);
    }
}

TEST_F(DnsAnswer, QdcountOtherThanOneGetsHeaderOnlyFormerr)
{
    // RFC 9619: QDCOUNT > 1 with OPCODE 0 is FORMERR; QDCOUNT 0 too without
    // DNS cookies. Even a message whose "questions" are garbage.
    Bytes none = Header(0x7777, 0x0100, 0, 0, 0, 0);
    Bytes two = Header(0x7778, 0x0000, 2, 0, 0, 0);
    Append(two, W("www.example.com"));
    Put32(two, 0x00010001);
    Append(two, W("ns1.example.com"));
    Put32(two, 0x00010001);
    Bytes junk = Header(0x7779, 0x0100, 0xFFFF, 0, 0, 0);
    junk.push_back(0xFF);
    for (const Bytes &q : {none, two, junk}) {
        Answer a = Ask(zone, q);
        ASSERT_EQ(a.reason, DP_OK);
        EXPECT_EQ(a.res.status, DP_DNS_FORMERR_QDCOUNT);
        Bytes want = Header(Get16(q, 0), uint16_t(0x8001 | (q[2] & 1) << 8), 0, 0, 0, 0);
        EXPECT_EQ(a.resp, want);
    }
}

TEST_F(DnsAnswer, ResponsesAreNeverAnswered)
{
    Bytes q = Query(W("www.example.com"), 1);
    Answer first = Ask(zone, q);
    ASSERT_EQ(first.reason, DP_OK);
    // Our own response, a response with any rcode or opcode, and a "query"
    // with only QR set in an otherwise empty header.
    Bytes bare = Header(1, 0x8000, 0, 0, 0, 0);
    Bytes notify = first.resp;
    notify[2] |= 4 << 3;
    for (const Bytes &m : {first.resp, notify, bare}) {
        Answer a = Ask(zone, m);
        EXPECT_EQ(a.reason, DP_DROP_DNS_UNSUPPORTED);
        EXPECT_EQ(a.res.status, DP_DNS_QR_SET);
        EXPECT_TRUE(a.resp.empty());
        EXPECT_EQ(a.ops.bytes_parsed, 12u);
        EXPECT_EQ(a.ops.bytes_written + a.ops.hashes, 0u);
    }
}

TEST_F(DnsAnswer, EveryPrefixOfAValidQueryIsMalformed)
{
    // A plain query, one with OPT carrying a cookie option, and one with a
    // 63-byte label: every proper prefix is refused as malformed (exactly
    // sized heap copies: ASan in the sanitizer build sees any overread),
    // and one byte more is refused too.
    Bytes cookie = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    const Bytes queries[] = {
        Query(W("www.example.com"), 1),
        QueryWithOpt(W("www.example.com"), 1, Opt(4096, 0, 0, 0x8000, cookie)),
        Query(W(std::string(63, 'q') + ".example.com"), 28),
    };
    for (const Bytes &full : queries) {
        ASSERT_EQ(Ask(zone, full).reason, DP_OK);
        for (size_t n = 0; n < full.size(); n++) {
            Bytes prefix(full.begin(), full.begin() + long(n));
            Answer a = Ask(zone, prefix);
            EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED) << n;
            EXPECT_EQ(a.res.status, n < 12 ? DP_DNS_SHORT_HEADER : DP_DNS_TRUNCATED) << n;
            EXPECT_TRUE(a.resp.empty());
            EXPECT_EQ(a.ops.bytes_written + a.ops.hashes, 0u);
            // Parsed: the header once present, the question once whole.
            size_t qend = 12 + (full[12] == 63 ? 63 + 1 + 13 : 17) + 4;
            EXPECT_EQ(a.ops.bytes_parsed, n < 12 ? 0u : n < qend ? 12u : qend) << n;
        }
        Bytes longer = full;
        longer.push_back(0);
        Answer a = Ask(zone, longer);
        EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED);
        EXPECT_EQ(a.res.status, DP_DNS_TRAILING_BYTES);
    }
}

TEST_F(DnsAnswer, LabelsOf63AreAcceptedAnd64Refused)
{
    std::string l63(63, 'a');
    Answer a = Ask(zone, Query(W(l63 + ".example.com"), 1));
    EXPECT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.res.status, DP_DNS_NXDOMAIN);
    ASSERT_EQ(zone.Add(l63 + ".example.com", {7}, 1), 0);
    a = Ask(zone, Query(W(l63 + ".EXAMPLE.com"), 1));
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    EXPECT_EQ(a.res.answers, 1u);
    // A length byte of 64 (0x40, the reserved label type 01) and 0x80
    // (type 10): refused whatever follows.
    for (uint8_t len : {uint8_t(0x40), uint8_t(0x7F), uint8_t(0x80), uint8_t(0xBF)}) {
        Bytes name = {len}; // a label of that many bytes, then the root
        name.resize(1 + len, 'b');
        name.push_back(0);
        a = Ask(zone, Query(name, 1));
        EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED);
        EXPECT_EQ(a.res.status, DP_DNS_LABEL_TOO_LONG) << int(len);
    }
}

TEST_F(DnsAnswer, NamesOf255AreAcceptedAnd256Refused)
{
    std::string l63(63, 'x');
    std::string n255 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'y');
    std::string n256 = l63 + "." + l63 + "." + l63 + "." + std::string(62, 'y');
    ASSERT_EQ(W(n255).size(), 255u);
    ASSERT_EQ(W(n256).size(), 256u);
    ASSERT_EQ(zone.Add(n255, {0x01020304}, 9), 0);
    Answer a = Ask(zone, Query(W(n255), 1));
    EXPECT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    Decoded d = Check(a, Query(W(n255), 1), 0, true, 1);
    EXPECT_EQ(d.qname, n255);
    EXPECT_EQ(d.answers.at(0).name, n255);
    a = Ask(zone, Query(W(n256), 1));
    EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED);
    EXPECT_EQ(a.res.status, DP_DNS_NAME_TOO_LONG);
    // 256 bytes of labels where the root would be: too long before the end
    // of the message is even looked for.
    Bytes no_root = W(n256);
    no_root.pop_back();
    a = Ask(zone, Query(no_root, 1));
    EXPECT_EQ(a.res.status, DP_DNS_NAME_TOO_LONG);
    // The zone refuses 256-byte names as well.
    Bytes w = W(n256);
    uint32_t one = 1;
    EXPECT_EQ(dp_dns_zone_add(zone.z, w.data(), w.size(), &one, 1, 1, nullptr), DP_DNS_EINVAL);
}

TEST_F(DnsAnswer, CompressionPointersInTheQuestionAreRefused)
{
    // C0 0C points at the question itself (the name's own offset); www + a
    // pointer back to the header; either way there is no earlier name.
    Bytes self = {0xC0, 0x0C};
    Bytes tail = {3, 'w', 'w', 'w', 0xC0, 0x00};
    for (const Bytes &name : {self, tail}) {
        Answer a = Ask(zone, Query(name, 1));
        EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED);
        EXPECT_EQ(a.res.status, DP_DNS_QNAME_POINTER);
        EXPECT_TRUE(a.resp.empty());
    }
    // Pointers are fine after the question when they point back at it:
    // an additional RR owned by C00C is walked and ignored.
    Bytes q = Query(W("www.example.com"), 1, 1, 0x1234, 0x0100, 1);
    Bytes rr = {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1};
    Append(q, rr);
    Answer a = Ask(zone, q);
    EXPECT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.res.answers, 3u);
    EXPECT_EQ(a.ops.bytes_parsed, 12u + 21u + 2u + 10u);
    // ... but not into the header, at themselves, or forward.
    for (uint16_t target : {uint16_t(0x0000), uint16_t(0x000B), uint16_t(33), uint16_t(40)}) {
        Bytes bad = q;
        bad[33] = uint8_t(0xC0 | target >> 8);
        bad[34] = uint8_t(target);
        a = Ask(zone, bad);
        EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED) << target;
        EXPECT_EQ(a.res.status, DP_DNS_BAD_POINTER) << target;
    }
}

TEST_F(DnsAnswer, CountsMustMatchTheRecordsPresent)
{
    // ARCOUNT 1 with nothing after the question; ANCOUNT 1 with a record
    // whose RDLENGTH runs past the end; and an extra record not counted.
    Bytes q = Query(W("www.example.com"), 1, 1, 1, 0x0100, 1);
    EXPECT_EQ(Ask(zone, q).res.status, DP_DNS_TRUNCATED);
    Bytes an = Header(2, 0x0100, 1, 1, 0, 0);
    Append(an, W("www.example.com"));
    Put32(an, 0x00010001);
    Append(an, {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 1, 2, 3, 4});
    EXPECT_EQ(Ask(zone, an).res.status, DP_DNS_TRUNCATED);
    an[an.size() - 5] = 4; // RDLENGTH 4: now consistent, and the record is ignored
    Answer a = Ask(zone, an);
    EXPECT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    Bytes extra = Query(W("www.example.com"), 1);
    Append(extra, Opt(1232));
    EXPECT_EQ(Ask(zone, extra).res.status, DP_DNS_TRAILING_BYTES);
}

TEST_F(DnsAnswer, TruncatesWhenTheAnswersExceed512Bytes)
{
    // 12 + 21 (question) + 16 n <= 512 holds for n <= 29.
    Answer fit = Ask(zone, Query(W("fit.example.com"), 1));
    ASSERT_EQ(fit.reason, DP_OK);
    EXPECT_EQ(fit.resp.size(), 12u + 21u + 29u * 16u);
    EXPECT_FALSE(Decode(fit.resp).tc());
    EXPECT_EQ(Decode(fit.resp).answers.size(), 29u);
    Bytes q = Query(W("big.example.com"), 1);
    Answer big = Ask(zone, q);
    ASSERT_EQ(big.reason, DP_OK);
    Decoded d = Check(big, q, 0, true, 0);
    EXPECT_TRUE(d.tc());
    EXPECT_TRUE(big.res.truncated);
    EXPECT_EQ(big.resp.size(), 33u);
    EXPECT_EQ(big.res.status, DP_DNS_NOERROR);
    // The RRset left out is not read: only the walk's lines.
    RefZone::Walk w = zone.ref->Find(W("big.example.com"));
    EXPECT_EQ(big.ops.cache_lines, w.lines);
    EXPECT_EQ(big.ops.bytes_written, 12u);
}

TEST_F(DnsAnswer, EdnsRaisesTheLimitToTheSmallerOfBothSizes)
{
    // With OPT: 12 + 21 + 16 n + 11 <= limit.
    struct Case {
        const char *name;
        uint16_t client;
        size_t answers;
        bool tc;
        uint32_t limit;
    } cases[] = {
        {"big.example.com", 4096, 30, false, 1232},  // 524 <= 1232
        {"e74.example.com", 4096, 74, false, 1232},  // 1228 <= 1232
        {"e75.example.com", 4096, 0, true, 1232},    // 1244 > 1232
        {"e75.example.com", 1300, 75, false, 1300},  // the client's size, under ours (1500)
        {"fit.example.com", 100, 29, false, 512},    // below 512 counts as 512: 508
        {"big.example.com", 0, 0, true, 512},        // 524 > 512
        {"big.example.com", 512, 0, true, 512},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(std::string(c.name) + " " + std::to_string(c.client));
        Bytes q = QueryWithOpt(W(c.name), 1, Opt(c.client));
        Answer a = Ask(c.client == 1300 ? wide : zone, q);
        Decoded d = Check(a, q, 0, true, c.answers);
        EXPECT_EQ(d.tc(), c.tc);
        EXPECT_EQ(a.res.udp_limit, c.limit);
        EXPECT_LE(a.resp.size(), c.limit);
        ASSERT_EQ(d.additional.size(), 1u);
        EXPECT_EQ(d.additional[0].type, 41u);
        EXPECT_EQ(a.ops.bytes_written, 12u + 16u * c.answers + 11u);
    }
}

TEST_F(DnsAnswer, OptIsAnsweredWithOursAndOnlyTheDoBitCopied)
{
    // RFC 6891 section 6.1.1: a response to a query with OPT carries one;
    // RFC 3225 section 3: DO is copied; the other flag bits are not.
    for (uint16_t flags : {uint16_t(0x8000), uint16_t(0xFFFF), uint16_t(0x0000), uint16_t(0x7FFF)}) {
        Bytes q = QueryWithOpt(W("www.example.com"), 1, Opt(4096, 0, 0, flags));
        Answer a = Ask(zone, q);
        Decoded d = Check(a, q, 0, true, 3);
        EXPECT_EQ(d.ar, 1u);
        ASSERT_EQ(d.additional.size(), 1u);
        // root, TYPE 41, CLASS 1232 (ours), TTL ext 0 | version 0 | DO, RDLENGTH 0
        const Bytes want = {0, 0, 41, 0x04, 0xd0, 0, 0, uint8_t(flags & 0x8000 ? 0x80 : 0), 0, 0, 0};
        EXPECT_TRUE(std::equal(want.begin(), want.end(), a.resp.end() - 11)) << flags;
        EXPECT_EQ(a.res.opt, 1u);
        EXPECT_EQ(a.ops.bytes_parsed, 12u + 21u + 11u);
        EXPECT_EQ(a.ops.bytes_written, 12u + 48u + 11u);
    }
}

TEST_F(DnsAnswer, UnknownEdnsVersionGetsBadvers)
{
    // RFC 6891 section 6.1.3: BADVERS (16) = header RCODE 0 + OPT extended
    // RCODE 1, our OPT at version 0; no lookup.
    Bytes q = QueryWithOpt(W("www.example.com"), 1, Opt(4096, 0, 1, 0x8000));
    Answer a = Ask(zone, q);
    EXPECT_EQ(a.res.status, DP_DNS_BADVERS);
    Decoded d = Check(a, q, 16, false, 0);
    ASSERT_EQ(d.additional.size(), 1u);
    EXPECT_EQ(d.additional[0].ttl, 0x01008000u);
    EXPECT_EQ(d.additional[0].cls, 1232u);
    EXPECT_EQ(a.ops.hashes, 0u);
    // Without EDNS the version is nobody's business: a normal answer.
    a = Ask(plain, q);
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    EXPECT_EQ(Decode(a.resp).ar, 0u);
}

TEST_F(DnsAnswer, MalformedOptGetsFormerrWithoutOpt)
{
    Bytes two = Query(W("www.example.com"), 1, 1, 0x1234, 0x0100, 2);
    Append(two, Opt(1232));
    Append(two, Opt(4096));
    Bytes owned = QueryWithOpt(W("www.example.com"), 1, Opt(1232, 0, 0, 0, {}, W("example")));
    Bytes misplaced = Header(0x1234, 0x0100, 1, 1, 0, 0);
    Append(misplaced, W("www.example.com"));
    Put32(misplaced, 0x00010001);
    Append(misplaced, Opt(1232));
    for (const Bytes &q : {two, owned, misplaced}) {
        Answer a = Ask(zone, q);
        EXPECT_EQ(a.res.status, DP_DNS_FORMERR_OPT);
        Decoded d = Check(a, q, 1, false, 0);
        EXPECT_EQ(d.ar, 0u);
        EXPECT_EQ(a.ops.hashes, 0u);
        // A pre-EDNS server walks OPT like any RR and answers.
        a = Ask(plain, q);
        EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
        Check(a, q, 0, true, 3);
        EXPECT_EQ(Decode(a.resp).ar, 0u);
        EXPECT_EQ(a.res.udp_limit, 512u);
    }
}

TEST_F(DnsAnswer, EdnsOffKeepsTheClassicLimit)
{
    Bytes q = QueryWithOpt(W("big.example.com"), 1, Opt(4096));
    Answer a = Ask(plain, q);
    Decoded d = Check(a, q, 0, true, 0);
    EXPECT_TRUE(d.tc());
    EXPECT_EQ(d.ar, 0u);
    EXPECT_EQ(a.resp.size(), 33u);
}

TEST_F(DnsAnswer, InPlaceAnswerEqualsTheCopyLessTheQuestionCopy)
{
    std::mt19937 rng(99);
    const char *names[] = {"www.example.com", "NS1.example.com", "mail.example.com", "big.example.com",
                           "nope.example.com", "e75.example.com"};
    for (int i = 0; i < 400; i++) {
        Bytes q = Query(W(names[rng() % 6]), uint16_t(rng() % 3 ? 1 : rng() % 300), rng() % 5 ? 1 : 3,
                        uint16_t(rng()), uint16_t(rng() & 0x0130), rng() % 2);
        if (q[11])
            Append(q, Opt(uint16_t(rng() % 5000), 0, rng() % 4 == 0, uint16_t(rng())));
        Answer copy = Ask(zone, q);
        Bytes buf = q;
        buf.resize(4096 + 64, 0xA5);
        size_t len = 0;
        dp_dns_result_t res;
        dp_ops_t ops;
        dp_ops_reset(&ops);
        dp_drop_reason_t r = dp_dns_answer(zone.z, buf.data(), q.size(), buf.data(), 4096, &len, &res, &ops);
        ASSERT_EQ(r, copy.reason);
        ASSERT_EQ(r, DP_OK);
        EXPECT_EQ(Bytes(buf.begin(), buf.begin() + long(len)), copy.resp);
        EXPECT_EQ(res.status, copy.res.status);
        EXPECT_EQ(ops.bytes_copied, 0u);
        EXPECT_EQ(copy.ops.bytes_copied, q.size() - 12 - (q[11] ? 11 : 0));
        ops.bytes_copied = copy.ops.bytes_copied;
        for (unsigned k = 0; k < DP_OPS_NUM_COUNTERS; k++)
            EXPECT_EQ(dp_ops_counter(&ops, k), dp_ops_counter(&copy.ops, k)) << dp_ops_counter_name(k);
    }
}

TEST_F(DnsAnswer, AnyOverlapOfQueryAndResponseWorks)
{
    // The response written a few bytes before or after the query in one
    // buffer equals the one written elsewhere.
    const Bytes queries[] = {Query(W("www.example.com"), 1), QueryWithOpt(W("big.example.com"), 1, Opt(4096)),
                             Query(W("nope.example.com"), 28), Query(W("a"), 1, 1, 1, 0x2000)};
    for (const Bytes &q : queries) {
        Answer want = Ask(zone, q);
        ASSERT_EQ(want.reason, DP_OK);
        for (int shift : {-40, -13, -1, 1, 5, 12, 40}) {
            Bytes buf(2048, 0);
            size_t qat = 100, rat = size_t(long(qat) + shift), len = 0;
            std::copy(q.begin(), q.end(), buf.begin() + long(qat));
            ASSERT_EQ(dp_dns_answer(zone.z, &buf[qat], q.size(), &buf[rat], 1024, &len, nullptr, nullptr), DP_OK);
            EXPECT_EQ(Bytes(buf.begin() + long(rat), buf.begin() + long(rat + len)), want.resp) << shift;
        }
    }
}

TEST_F(DnsAnswer, ABufferTooSmallGetsNothingWritten)
{
    Bytes q = Query(W("www.example.com"), 1);
    const size_t need = 12 + 21 + 3 * 16;
    Answer a = Ask(zone, q, need - 1);
    EXPECT_EQ(a.reason, DP_DROP_BUFFER_TOO_SMALL);
    EXPECT_EQ(a.res.status, DP_DNS_NO_ROOM);
    EXPECT_STREQ(dp_dns_status_name(a.res.status), "no_room");
    EXPECT_TRUE(a.resp.empty());
    EXPECT_EQ(a.ops.bytes_written + a.ops.bytes_copied, 0u);
    EXPECT_EQ(a.ops.hashes, 1u); // the work before finding out is counted
    EXPECT_EQ(Ask(zone, q, need).resp.size(), need);
    Bytes notify = Query(W("www.example.com"), 1, 1, 1, 0x2000);
    EXPECT_EQ(Ask(zone, notify, 11).reason, DP_DROP_BUFFER_TOO_SMALL);
    EXPECT_EQ(Ask(zone, notify, 12).reason, DP_OK);
    EXPECT_EQ(Ask(zone, q, 0).reason, DP_DROP_BUFFER_TOO_SMALL);
}

TEST_F(DnsAnswer, CapturedStyleQueriesFromCommonClients)
{
    // dig 9.18 "dig @vip www.example.com": RD and AD set, one OPT with
    // UDP size 1232 and a COOKIE option (code 10) with an 8-byte client
    // cookie (bytes typed from a capture's layout, values made up).
    const Bytes dig = {
        0x3b, 0x7a, 0x01, 0x20, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x03, 'w', 'w', 'w', 0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'c', 'o', 'm', 0x00,
        0x00, 0x01, 0x00, 0x01,
        0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c,
        0x00, 0x0a, 0x00, 0x08, 0x5e, 0x1d, 0x27, 0x6b, 0x8a, 0x42, 0x99, 0x0c,
    };
    Answer a = Ask(zone, dig);
    Decoded d = Check(a, dig, 0, true, 3);
    EXPECT_EQ(a.resp[2], 0x85); // QR AA RD; AD not echoed
    EXPECT_EQ(a.resp[3], 0x00);
    ASSERT_EQ(d.additional.size(), 1u);
    EXPECT_EQ(d.additional[0].rdata.size(), 0u); // no server cookie: cookies are not implemented
    EXPECT_EQ(a.resp.size(), 12u + 21u + 48u + 11u);
    EXPECT_EQ(a.ops.bytes_parsed, 12u + 21u + 11u);

    // nslookup: RD, no OPT, ID 2 (it counts from 1 and asked for the
    // server's name first).
    const Bytes nslookup = {
        0x00, 0x02, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 'n', 's', '1', 0x07, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x03, 'c', 'o', 'm', 0x00,
        0x00, 0x01, 0x00, 0x01,
    };
    a = Ask(zone, nslookup);
    d = Check(a, nslookup, 0, true, 1);
    EXPECT_EQ(d.answers[0].ttl, 86400u);
    EXPECT_EQ(d.answers[0].rdata, (Bytes{198, 51, 100, 53}));

    // A resolver using 0x20 case randomisation (draft-vixie-dnsext-dns0x20,
    // unbound's use-caps-for-id): the question comes back in its case and
    // the answers point at it.
    const Bytes caps = {
        0x9a, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 'w', 'W', 'w', 0x07, 'E', 'x', 'A', 'm', 'P', 'l', 'E', 0x03, 'c', 'O', 'M', 0x00,
        0x00, 0x01, 0x00, 0x01,
    };
    a = Ask(zone, caps);
    d = Check(a, caps, 0, true, 3);
    EXPECT_EQ(d.qname, "wWw.ExAmPlE.cOM");
    EXPECT_EQ(d.answers[0].name, "wWw.ExAmPlE.cOM");
    EXPECT_FALSE(d.rd());
}

// The expected outcome of a query, from the documented rules and a map.
struct Expect {
    dp_dns_status_t status;
    unsigned rcode;
    bool aa, opt, tc;
    size_t answers;
    uint32_t limit;
};

TEST_F(DnsAnswer, RandomQueriesRoundTripThroughTheDecoder)
{
    std::mt19937 rng(31337);
    std::map<std::string, std::pair<uint32_t, std::vector<uint32_t>>> model;
    model["www.example.com"] = {300, {0xC0000201, 0xC0000202, 0xC0000203}};
    model["ns1.example.com"] = {86400, {0xC6336435}};
    model["mail.example.com"] = {600, {}};
    model["fit.example.com"] = {60, Addrs(0x0A000000, 29)};
    model["big.example.com"] = {60, Addrs(0x0A010000, 30)};
    model["e74.example.com"] = {60, Addrs(0x0A020000, 74)};
    model["e75.example.com"] = {60, Addrs(0x0A030000, 75)};
    std::vector<std::string> names;
    for (auto &kv : model)
        names.push_back(kv.first);
    names.push_back("absent.example.com");
    names.push_back("example.com");
    names.push_back("www.example.org");
    const uint16_t qtypes[] = {1, 1, 1, 28, 15, 255, 16, 251, 252, 0, 65535};
    const uint16_t qclasses[] = {1, 1, 1, 1, 3, 4, 254, 255};
    for (int i = 0; i < 6000; i++) {
        Zone &z = i % 3 == 0 ? plain : zone;
        std::string name = names[rng() % names.size()];
        std::string spelled = name;
        for (char &c : spelled)
            if (std::isalpha(uint8_t(c)) && rng() % 3 == 0)
                c = char(std::toupper(uint8_t(c)));
        uint16_t qtype = qtypes[rng() % 11], qclass = qclasses[rng() % 8];
        uint16_t flags = uint16_t(rng() & 0x01B0); // RD, Z, AD, CD at random
        bool opt = rng() % 2;
        uint16_t udp = uint16_t(rng() % 3 ? rng() % 4500 : 512);
        uint8_t version = rng() % 8 == 0 ? 1 : 0;
        uint16_t oflags = uint16_t(rng());
        Bytes q = Query(W(spelled), qtype, qclass, uint16_t(rng()), flags, opt);
        if (opt)
            Append(q, Opt(udp, 0, version, oflags));

        // The rules of dp_dns.h, worked out here.
        bool edns = z.cfg.edns_udp_size && opt;
        Expect e{DP_DNS_NOERROR, 0, false, edns, false, 0, 512};
        if (edns)
            e.limit = std::max(512u, std::min<uint32_t>(udp, z.cfg.edns_udp_size));
        auto it = model.find(name);
        if (edns && version) {
            e.status = DP_DNS_BADVERS, e.rcode = 16;
        } else if (qclass != 1) {
            e.status = DP_DNS_REFUSED_CLASS, e.rcode = 5;
        } else if (qtype == 251 || qtype == 252) {
            e.status = DP_DNS_NOTIMP_QTYPE, e.rcode = 4;
        } else if (it == model.end()) {
            e.status = DP_DNS_NXDOMAIN, e.rcode = 3, e.aa = true;
        } else if (it->second.second.empty() || (qtype != 1 && qtype != 255)) {
            e.status = DP_DNS_NODATA, e.aa = true;
        } else {
            e.aa = true;
            e.answers = it->second.second.size();
            if (12 + W(name).size() + 4 + 16 * e.answers + (edns ? 11 : 0) > e.limit)
                e.answers = 0, e.tc = true;
        }

        Answer a = Ask(z, q);
        ASSERT_EQ(a.reason, DP_OK);
        ASSERT_EQ(a.res.status, e.status) << name << " " << qtype << " " << qclass;
        Decoded d = Check(a, q, e.rcode, e.aa, e.answers);
        EXPECT_EQ(d.tc(), e.tc);
        EXPECT_EQ(a.res.udp_limit, e.limit);
        EXPECT_LE(a.resp.size(), e.limit);
        EXPECT_EQ(d.qname, spelled);
        for (size_t k = 0; k < d.answers.size(); k++) {
            const Rr &rr = d.answers[k];
            EXPECT_EQ(rr.name, spelled);
            EXPECT_EQ(rr.type, 1u);
            EXPECT_EQ(rr.cls, 1u);
            EXPECT_EQ(rr.ttl, it->second.first);
            uint32_t want = it->second.second[k];
            EXPECT_EQ(rr.rdata, (Bytes{uint8_t(want >> 24), uint8_t(want >> 16), uint8_t(want >> 8), uint8_t(want)}));
        }
        ASSERT_EQ(d.additional.size(), e.opt ? 1u : 0u);
        if (e.opt) {
            EXPECT_EQ(d.additional[0].type, 41u);
            EXPECT_EQ(d.additional[0].cls, z.cfg.edns_udp_size);
            EXPECT_EQ(d.additional[0].ttl, (e.rcode >> 4) << 24 | (oflags & 0x8000u));
        }
        // Costs.
        bool looked_up = e.status == DP_DNS_NOERROR || e.status == DP_DNS_NODATA || e.status == DP_DNS_NXDOMAIN;
        RefZone::Walk w = z.ref->Find(W(spelled));
        uint64_t rr_lines = e.answers ? z.ref->RrsetLines(z.ref->entries[size_t(w.entry)]) : 0;
        EXPECT_EQ(a.ops.bytes_parsed, 12u + W(name).size() + 4 + (opt ? 11 : 0));
        EXPECT_EQ(a.ops.hashes, looked_up ? 1u : 0u);
        EXPECT_EQ(a.ops.table_probes, looked_up ? w.probes : 0u);
        EXPECT_EQ(a.ops.cache_lines, looked_up ? w.lines + rr_lines : 0u);
        EXPECT_EQ(a.res.bytes_compared, looked_up ? w.compared : 0u);
        EXPECT_EQ(a.ops.bytes_written, 12u + 16u * e.answers + (e.opt ? 11u : 0u));
        EXPECT_EQ(a.ops.bytes_copied, W(name).size() + 4);
    }
}

TEST(DnsStatus, NamesAndDropReasonsAreStable)
{
    const char *want[] = {"noerror", "nodata", "nxdomain", "refused_class", "notimp_opcode", "notimp_qtype",
                          "formerr_qdcount", "formerr_opt", "badvers", "short_header", "qr_set", "truncated",
                          "label_too_long", "name_too_long", "qname_pointer", "bad_pointer", "trailing_bytes",
                          "no_room"};
    ASSERT_EQ(sizeof want / sizeof want[0], size_t(DP_DNS_STATUS__COUNT));
    for (unsigned i = 0; i < DP_DNS_STATUS__COUNT; i++) {
        auto s = dp_dns_status_t(i);
        EXPECT_STREQ(dp_dns_status_name(s), want[i]);
        dp_drop_reason_t r = dp_dns_status_drop(s);
        if (i < DP_DNS_SHORT_HEADER)
            EXPECT_EQ(r, DP_OK);
        else if (s == DP_DNS_QR_SET)
            EXPECT_EQ(r, DP_DROP_DNS_UNSUPPORTED);
        else if (s == DP_DNS_NO_ROOM)
            EXPECT_EQ(r, DP_DROP_BUFFER_TOO_SMALL);
        else
            EXPECT_EQ(r, DP_DROP_DNS_MALFORMED);
    }
    EXPECT_STREQ(dp_dns_status_name(DP_DNS_STATUS__COUNT), "unknown");
}

// ================================================================ frames

uint32_t Sum16(const uint8_t *p, size_t n, uint32_t acc)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        acc += uint32_t(p[i] << 8 | p[i + 1]);
    if (n & 1)
        acc += uint32_t(p[n - 1] << 8);
    while (acc >> 16)
        acc = (acc & 0xFFFF) + (acc >> 16);
    return acc;
}

// Ethernet (optionally tagged) + IPv4 (optionally with option words) +
// UDP 40000 -> 53 carrying dns; the IPv4 checksum is computed here.
Bytes Frame(const Bytes &dns, bool vlan = false, unsigned option_words = 0)
{
    Bytes f = {0x02, 0x00, 0x00, 0x00, 0x00, 0x35, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    if (vlan)
        Append(f, {0x81, 0x00, 0x20, 0x64});
    Append(f, {0x08, 0x00});
    size_t ip = f.size();
    size_t ihl = 20 + 4 * option_words;
    f.push_back(uint8_t(0x40 | ihl / 4));
    f.push_back(0);
    Put16(f, uint32_t(ihl + 8 + dns.size()));
    Put16(f, 0x4d2e);
    Put16(f, 0);
    f.push_back(61);
    f.push_back(17);
    Put16(f, 0);
    Append(f, {10, 1, 2, 3, 10, 0, 0, 53});
    for (unsigned i = 0; i < option_words; i++)
        Append(f, {1, 1, 1, 1}); // NOPs
    uint16_t c = uint16_t(~Sum16(&f[ip], ihl, 0));
    f[ip + 10] = uint8_t(c >> 8);
    f[ip + 11] = uint8_t(c);
    Put16(f, 40000);
    Put16(f, 53);
    Put16(f, uint32_t(8 + dns.size()));
    Put16(f, 0);
    Append(f, dns);
    return f;
}

struct FrameAnswer {
    dp_drop_reason_t reason;
    dp_dns_result_t res;
    dp_ops_t ops;
    Bytes out;
};

FrameAnswer AskFrame(const Zone &zone, const Bytes &frame, size_t cap = 2048)
{
    FrameAnswer a;
    std::unique_ptr<uint8_t[]> in(new uint8_t[frame.size()]);
    std::memcpy(in.get(), frame.data(), frame.size());
    Bytes out(cap + 64, 0xA5);
    size_t len = 0;
    dp_ops_reset(&a.ops);
    a.reason = dp_dns_answer_frame(zone.z, in.get(), frame.size(), out.data(), cap, &len, &a.res, &a.ops);
    size_t written = a.reason == DP_OK ? len : 0;
    for (size_t i = written; i < out.size(); i++)
        if (out[i] != 0xA5) {
            ADD_FAILURE() << "byte " << i << " written beyond the " << written << " sent";
            break;
        }
    a.out.assign(out.begin(), out.begin() + long(written));
    return a;
}

// Checks a response frame against its query frame and the payload-level
// answer dns_resp it must carry.
void CheckFrame(const Bytes &query, const Bytes &resp, const Bytes &dns_resp, bool vlan)
{
    size_t l2 = vlan ? 18 : 14;
    ASSERT_EQ(resp.size(), std::max<size_t>(60, l2 + 28 + dns_resp.size()));
    EXPECT_TRUE(std::equal(query.begin() + 6, query.begin() + 12, resp.begin()));
    EXPECT_TRUE(std::equal(query.begin(), query.begin() + 6, resp.begin() + 6));
    if (vlan)
        EXPECT_TRUE(std::equal(query.begin() + 12, query.begin() + 16, resp.begin() + 12));
    EXPECT_EQ(Get16(resp, l2 - 2), 0x0800u);
    const uint8_t *ip = &resp[l2];
    const Bytes want_ip = {0x45, 0, uint8_t((28 + dns_resp.size()) >> 8), uint8_t(28 + dns_resp.size()), 0, 0,
                           0x40, 0, 64, 17};
    EXPECT_TRUE(std::equal(want_ip.begin(), want_ip.end(), ip));
    EXPECT_EQ(Sum16(ip, 20, 0), 0xFFFFu); // header checksum verifies
    EXPECT_TRUE(std::equal(query.begin() + long(l2) + 16, query.begin() + long(l2) + 20, ip + 12));
    EXPECT_TRUE(std::equal(query.begin() + long(l2) + 12, query.begin() + long(l2) + 16, ip + 16));
    const uint8_t *udp = ip + 20;
    EXPECT_EQ(Get16(resp, l2 + 20), 53u);
    EXPECT_EQ(Get16(resp, l2 + 22), 40000u);
    EXPECT_EQ(Get16(resp, l2 + 24), 8 + dns_resp.size());
    uint32_t pseudo = Sum16(ip + 12, 8, 17 + uint32_t(8 + dns_resp.size()));
    EXPECT_EQ(Sum16(udp, 8 + dns_resp.size(), pseudo), 0xFFFFu); // UDP checksum verifies
    EXPECT_NE(Get16(resp, l2 + 26), 0u);
    EXPECT_TRUE(std::equal(dns_resp.begin(), dns_resp.end(), udp + 8));
    for (size_t i = l2 + 28 + dns_resp.size(); i < resp.size(); i++)
        EXPECT_EQ(resp[i], 0) << "padding byte " << i;
    // And the core's own parser accepts it, checksum verified.
    dp_parsed_t p;
    EXPECT_EQ(dp_parse(resp.data(), resp.size(), nullptr, &p, nullptr), DP_OK);
    EXPECT_EQ(p.dst_port, 40000u);
}

class DnsFrame : public DnsAnswer {};

TEST_F(DnsFrame, AnswerSwapsAddressesPortsAndMacsWithValidChecksums)
{
    Bytes dns = Query(W("www.example.com"), 1);
    Bytes f = Frame(dns);
    FrameAnswer a = AskFrame(zone, f);
    ASSERT_EQ(a.reason, DP_OK);
    Answer payload = Ask(zone, dns);
    CheckFrame(f, a.out, payload.resp, false);
    EXPECT_EQ(a.res.status, DP_DNS_NOERROR);
    EXPECT_EQ(a.res.answers, 3u);
    // dp_parse (1 packet, 14 + 20 + 8 header bytes, 20 checksum bytes),
    // the DNS answer, then 42 header bytes written and 20 + 8 + UDP length
    // summed.
    size_t udp_len = 8 + payload.resp.size();
    EXPECT_EQ(a.ops.packets, 1u);
    EXPECT_EQ(a.ops.bytes_parsed, 42u + payload.ops.bytes_parsed);
    EXPECT_EQ(a.ops.checksum_bytes, 20u + 20u + 8u + udp_len);
    EXPECT_EQ(a.ops.bytes_written, 42u + payload.ops.bytes_written);
    EXPECT_EQ(a.ops.bytes_copied, payload.ops.bytes_copied);
    EXPECT_EQ(a.ops.hashes, 1u);
    EXPECT_EQ(a.ops.table_probes, payload.ops.table_probes);
    EXPECT_EQ(a.ops.cache_lines, payload.ops.cache_lines);
}

TEST_F(DnsFrame, SmallAnswersArePaddedTo60Bytes)
{
    Bytes dns = Query(W("www.example.com"), 1, 1, 0x4242, 0x2100); // NOTIFY: header-only NOTIMP
    Bytes f = Frame(dns);
    FrameAnswer a = AskFrame(zone, f);
    ASSERT_EQ(a.reason, DP_OK);
    EXPECT_EQ(a.out.size(), 60u);
    CheckFrame(f, a.out, Ask(zone, dns).resp, false);
    EXPECT_EQ(a.ops.bytes_written, 42u + 12u + 6u);
}

TEST_F(DnsFrame, VlanTagIsKept)
{
    Bytes dns = QueryWithOpt(W("NS1.example.com"), 1, Opt(1232));
    Bytes f = Frame(dns, true);
    FrameAnswer a = AskFrame(zone, f);
    ASSERT_EQ(a.reason, DP_OK);
    CheckFrame(f, a.out, Ask(zone, dns).resp, true);
    EXPECT_EQ(a.ops.bytes_written, 46u + 12u + 16u + 11u);
}

TEST_F(DnsFrame, InPlaceEqualsTheCopyWithAndWithoutIpOptions)
{
    for (unsigned words : {0u, 1u, 10u}) {
        for (bool vlan : {false, true}) {
            Bytes dns = Query(W("www.example.com"), 1);
            Bytes f = Frame(dns, vlan, words);
            FrameAnswer copy = AskFrame(zone, f);
            ASSERT_EQ(copy.reason, DP_OK);
            Bytes buf = f;
            buf.resize(2048, 0xA5);
            size_t len = 0;
            dp_ops_t ops;
            dp_ops_reset(&ops);
            dp_dns_result_t res;
            ASSERT_EQ(dp_dns_answer_frame(zone.z, buf.data(), f.size(), buf.data(), buf.size(), &len, &res, &ops),
                      DP_OK);
            EXPECT_EQ(Bytes(buf.begin(), buf.begin() + long(len)), copy.out) << words << vlan;
            // In place the question stays where it is, unless the query's
            // IPv4 header had options: then the response's starts earlier.
            EXPECT_EQ(ops.bytes_copied, words ? dns.size() - 12 : 0u);
            EXPECT_EQ(copy.ops.bytes_copied, dns.size() - 12);
        }
    }
}

TEST_F(DnsFrame, RefusesWhatIsNotADnsQueryFrame)
{
    Bytes dns = Query(W("www.example.com"), 1);
    Bytes f = Frame(dns);
    // The same packet as TCP (protocol 6, header checksum recomputed, a
    // 20-byte TCP header in front of the bytes).
    Bytes tcp = f;
    tcp[14 + 9] = 6;
    tcp[14 + 10] = tcp[14 + 11] = 0;
    uint16_t c = uint16_t(~Sum16(&tcp[14], 20, 0));
    tcp[14 + 10] = uint8_t(c >> 8);
    tcp[14 + 11] = uint8_t(c);
    tcp.resize(14 + 20 + 20 + dns.size(), 0);
    tcp[14 + 20 + 12] = 0x50;
    FrameAnswer a = AskFrame(zone, tcp);
    EXPECT_EQ(a.reason, DP_DROP_DNS_UNSUPPORTED);
    EXPECT_EQ(a.res.status, DP_DNS_STATUS__COUNT);
    Bytes bad = f;
    bad[14 + 10] ^= 1;
    EXPECT_EQ(AskFrame(zone, bad).reason, DP_DROP_IP4_BAD_CHECKSUM);
    Bytes cut = Frame(Bytes(dns.begin(), dns.end() - 1));
    a = AskFrame(zone, cut);
    EXPECT_EQ(a.reason, DP_DROP_DNS_MALFORMED);
    EXPECT_EQ(a.res.status, DP_DNS_TRUNCATED);
    Bytes resp_frame = Frame(Ask(zone, dns).resp);
    EXPECT_EQ(AskFrame(zone, resp_frame).reason, DP_DROP_DNS_UNSUPPORTED);
    // The buffer: the whole padded frame or nothing.
    FrameAnswer ok = AskFrame(zone, f);
    ASSERT_EQ(ok.reason, DP_OK);
    EXPECT_EQ(AskFrame(zone, f, ok.out.size()).reason, DP_OK);
    EXPECT_EQ(AskFrame(zone, f, ok.out.size() - 1).reason, DP_DROP_BUFFER_TOO_SMALL);
    Bytes small = Frame(Query(W("www.example.com"), 1, 1, 1, 0x2000));
    EXPECT_EQ(AskFrame(zone, small, 59).reason, DP_DROP_BUFFER_TOO_SMALL);
    EXPECT_EQ(AskFrame(zone, small, 60).reason, DP_OK);
}

} // namespace
