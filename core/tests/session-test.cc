// L4 session table, checked against independent truth: a std::unordered_map
// reference model of the contract in dp_session.h (capacity per shard,
// refusal when full, two sessions per connection, aging per state), a TCP
// transition table written here from RFC 793 and IPVS's semantics, and the
// closed-form memory bound of the ADX 8000 configuration.
#include "dp_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace {

constexpr uint8_t FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10;

class SessTable {
public:
    explicit SessTable(uint32_t shards, uint32_t per_shard, uint32_t ticks_per_second = 1000)
    {
        dp_sess_config_init(&cfg_, shards, per_shard, ticks_per_second);
        mem_.resize(dp_sess_memory_size(&cfg_));
        t_ = dp_sess_create(mem_.data(), mem_.size(), &cfg_);
    }
    SessTable(const dp_sess_config_t &cfg) : cfg_(cfg)
    {
        mem_.resize(dp_sess_memory_size(&cfg_));
        t_ = dp_sess_create(mem_.data(), mem_.size(), &cfg_);
    }
    dp_sess_table_t *get() const { return t_; }
    const dp_sess_config_t &cfg() const { return cfg_; }
    dp_sess_shard_stats_t stats(uint32_t shard) const
    {
        dp_sess_shard_stats_t st;
        dp_sess_get_shard_stats(t_, shard, &st);
        return st;
    }

private:
    dp_sess_config_t cfg_{};
    std::vector<uint8_t> mem_;
    dp_sess_table_t *t_ = nullptr;
};

// The documented shard function, computed here from dp_flow_hash.
uint32_t ShardOf(const dp_flow_key_t &k, uint32_t shards)
{
    return uint32_t((uint64_t(dp_flow_hash(&k)) * shards) >> 32);
}

dp_flow_key_t MakeKey(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint8_t proto)
{
    dp_flow_key_t k{};
    k.src_ip = s;
    k.dst_ip = d;
    k.src_port = sp;
    k.dst_port = dp;
    k.proto = proto;
    return k;
}

// A client -> VIP key and the matching server -> SNAT key steered (by the
// SNAT port) into the in key's shard.
struct KeyPair {
    dp_flow_key_t in, out;
};

KeyPair Pair(const dp_sess_table_t *t, uint32_t shards, std::mt19937 &rng, uint8_t proto = 6)
{
    KeyPair p;
    p.in = MakeKey(rng(), 0xC6336401u, uint16_t(1024 + rng() % 60000), 80, proto);
    p.out = MakeKey(0x0A000000u | (rng() & 0xFFFF), 0x0A640001u, 8080, 0, proto);
    uint16_t start = uint16_t(1024 + rng() % 60000);
    EXPECT_EQ(dp_sess_steer_port(t, &p.out, ShardOf(p.in, shards), 1024, 65535, start, nullptr), 0);
    return p;
}

using Tuple = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint8_t>;
Tuple AsTuple(const dp_flow_key_t &k) { return {k.src_ip, k.dst_ip, k.src_port, k.dst_port, k.proto}; }
struct TupleHash {
    size_t operator()(const Tuple &t) const
    {
        return std::hash<uint64_t>()((uint64_t(std::get<0>(t)) << 32 | std::get<1>(t)) ^
                                     (uint64_t(std::get<2>(t)) << 24 | uint64_t(std::get<3>(t)) << 8 |
                                      std::get<4>(t)) * 0x9E3779B97F4A7C15ull);
    }
};

// ---- the TCP transition table, written here --------------------------------
//
// From RFC 793's connection life (SYN, SYN-ACK, ACK; FIN from either side,
// then the other's FIN; RST aborts) as a balancer between client and server
// sees it, with IPVS's naming and its choices (ip_vs_proto_tcp.c): the
// state is named from the server's side (client FIN first = CLOSE_WAIT,
// server FIN first = FIN_WAIT, both = TIME_WAIT); the deciding flag is RST,
// else SYN, else FIN, else ACK; no flag at all closes. Written row by row
// per state (IPVS writes its table per flag), so a transcription slip in
// one would not repeat in the other.
enum S : int {
    NO = DP_SESS_NONE,
    SS = DP_SESS_SYN_SENT,
    SR = DP_SESS_SYN_RECV,
    ES = DP_SESS_ESTABLISHED,
    FW = DP_SESS_FIN_WAIT,
    CW = DP_SESS_CLOSE_WAIT,
    TW = DP_SESS_TIME_WAIT,
    CL = DP_SESS_CLOSED,
};
struct Row {
    S from;
    // next state for client->server {syn, fin, ack, rst}, server->client {syn, fin, ack, rst},
    // and client->server when the replies are never seen (one-session connections)
    S in[4], out[4], in_only[4];
};
const Row kTcpRows[] = {
    // NONE: a client SYN starts the handshake; a server SYN is a server-side open; a
    // client segment that is not a SYN cannot start a connection (closes); a server ACK
    // before anything from the client means a connection already established.
    {NO, {SR, CL, CL, CL}, {SS, TW, ES, CL}, {SR, CL, CL, CL}},
    // SYN_SENT: only the client's SYN (simultaneous open) or its RST moves it.
    {SS, {ES, SS, SS, CL}, {SS, SS, SS, SS}, {ES, SS, SS, CL}},
    // SYN_RECV: retransmitted SYN stays; the client's ACK completes; a client RST is
    // ignored (anti-spoofing: the half-open connection ages out); the server's RST
    // refuses the connection; FIN during the handshake goes to TIME_WAIT.
    {SR, {SR, TW, ES, SR}, {SR, TW, ES, CL}, {SR, TW, ES, SR}},
    // ESTABLISHED: duplicate SYNs change nothing; client FIN -> CLOSE_WAIT, server FIN ->
    // FIN_WAIT (with replies unseen, a client FIN is all there is: FIN_WAIT); RST closes.
    {ES, {ES, CW, ES, CL}, {ES, FW, ES, CL}, {ES, FW, ES, CL}},
    // FIN_WAIT (server closed first): the client's FIN completes the close; a new client
    // SYN reopens; a server SYN is a server-side open.
    {FW, {SR, TW, FW, CL}, {SS, FW, FW, CL}, {SR, FW, FW, CL}},
    // CLOSE_WAIT (client closed first): the server's FIN completes the close.
    {CW, {SR, CW, CW, CL}, {SS, TW, CW, CL}, {SR, CW, CW, CL}},
    // TIME_WAIT: client SYN reuses the ports (reopen); a server RST is ignored.
    {TW, {SR, TW, TW, CL}, {SS, TW, TW, TW}, {SR, TW, TW, CL}},
    // CLOSED: only a new SYN reopens.
    {CL, {SR, CL, CL, CL}, {SS, CL, CL, CL}, {SR, CL, CL, CL}},
};
const uint8_t kFlagOf[4] = {SYN, FIN, ACK, RST};

TEST(SessionTcp, EveryTransitionMatchesTheTableWrittenHere)
{
    for (const Row &r : kTcpRows) {
        for (int f = 0; f < 4; f++) {
            auto st = dp_sess_state_t(r.from);
            EXPECT_EQ(dp_sess_tcp_next(st, DP_SESS_DIR_IN, 0, kFlagOf[f]), dp_sess_state_t(r.in[f]))
                << dp_sess_state_name(st) << " in flag " << f;
            EXPECT_EQ(dp_sess_tcp_next(st, DP_SESS_DIR_OUT, 0, kFlagOf[f]), dp_sess_state_t(r.out[f]))
                << dp_sess_state_name(st) << " out flag " << f;
            EXPECT_EQ(dp_sess_tcp_next(st, DP_SESS_DIR_IN, 1, kFlagOf[f]), dp_sess_state_t(r.in_only[f]))
                << dp_sess_state_name(st) << " in-only flag " << f;
            // The output table does not depend on input_only.
            EXPECT_EQ(dp_sess_tcp_next(st, DP_SESS_DIR_OUT, 1, kFlagOf[f]), dp_sess_state_t(r.out[f]));
        }
    }
}

TEST(SessionTcp, FlagPriorityIsRstSynFinAckAndNoFlagCloses)
{
    for (const Row &r : kTcpRows) {
        auto st = dp_sess_state_t(r.from);
        for (int dir = 0; dir < 2; dir++) {
            const S *row = dir ? r.out : r.in;
            auto d = dp_sess_dir_t(dir);
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, RST | SYN | FIN | ACK), dp_sess_state_t(row[3]));
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, SYN | ACK), dp_sess_state_t(row[0]));
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, SYN | FIN), dp_sess_state_t(row[0]));
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, FIN | ACK | PSH), dp_sess_state_t(row[1]));
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, ACK | PSH), dp_sess_state_t(row[2]));
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, PSH), DP_SESS_CLOSED);
            EXPECT_EQ(dp_sess_tcp_next(st, d, 0, 0), DP_SESS_CLOSED);
        }
    }
    EXPECT_EQ(dp_sess_tcp_next(DP_SESS_UDP, DP_SESS_DIR_IN, 0, RST), DP_SESS_UDP);
}

// Drives one connection through a packet sequence and returns the states.
struct Pkt {
    dp_sess_dir_t dir;
    uint8_t flags;
};
std::vector<int> Drive(const std::vector<Pkt> &pkts, bool one_session = false, uint8_t proto = 6)
{
    SessTable t(1, 16);
    std::mt19937 rng(7);
    KeyPair p = Pair(t.get(), 1, rng, proto);
    dp_sess_conn_t c;
    EXPECT_EQ(dp_sess_open(t.get(), &p.in, one_session ? nullptr : &p.out, 3, 0, &c, nullptr), 0);
    std::vector<int> states;
    uint32_t now = 0;
    for (const Pkt &k : pkts) {
        // Every packet finds its connection by its own key, as the model would.
        dp_sess_hit_t hit;
        EXPECT_EQ(dp_sess_lookup(t.get(), k.dir == DP_SESS_DIR_IN ? &p.in : &p.out, &hit, nullptr), 0);
        EXPECT_EQ(hit.dir, k.dir);
        int st = dp_sess_track(t.get(), hit.conn, k.dir, k.flags, ++now, nullptr);
        states.push_back(st);
        // The state is the connection's: both sessions report it.
        EXPECT_EQ(dp_sess_lookup(t.get(), &p.in, &hit, nullptr), 0);
        EXPECT_EQ(hit.state, st);
        if (!one_session) {
            EXPECT_EQ(dp_sess_lookup(t.get(), &p.out, &hit, nullptr), 0);
            EXPECT_EQ(hit.state, st);
        }
        // The per-state count follows.
        EXPECT_EQ(t.stats(0).by_state[st], 1u);
    }
    return states;
}

constexpr auto IN = DP_SESS_DIR_IN;
constexpr auto OUT = DP_SESS_DIR_OUT;

TEST(SessionTcp, ThreeWayHandshakeAndDataEstablish)
{
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {IN, ACK | PSH}, {OUT, ACK | PSH}}),
              (std::vector<int>{SR, SR, ES, ES, ES}));
}

TEST(SessionTcp, ClientClosesFirstThenServer)
{
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {IN, FIN | ACK}, {OUT, ACK}, {OUT, FIN | ACK},
                     {IN, ACK}}),
              (std::vector<int>{SR, SR, ES, CW, CW, TW, TW}));
}

TEST(SessionTcp, ServerClosesFirstThenClient)
{
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {OUT, FIN | ACK}, {IN, ACK}, {IN, FIN | ACK},
                     {OUT, ACK}}),
              (std::vector<int>{SR, SR, ES, FW, FW, TW, TW}));
}

TEST(SessionTcp, SimultaneousCloseReachesTimeWaitInEitherOrder)
{
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {IN, FIN | ACK}, {OUT, FIN | ACK}, {IN, ACK},
                     {OUT, ACK}}),
              (std::vector<int>{SR, SR, ES, CW, TW, TW, TW}));
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {OUT, FIN | ACK}, {IN, FIN | ACK}, {OUT, ACK},
                     {IN, ACK}}),
              (std::vector<int>{SR, SR, ES, FW, TW, TW, TW}));
}

TEST(SessionTcp, ResetClosesFromEitherSideButNotAHalfOpenFromTheClient)
{
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {IN, RST}}), (std::vector<int>{SR, SR, ES, CL}));
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, SYN | ACK}, {IN, ACK}, {OUT, RST | ACK}}),
              (std::vector<int>{SR, SR, ES, CL}));
    // Server refuses the connection (port closed): RST answers the SYN.
    EXPECT_EQ(Drive({{IN, SYN}, {OUT, RST | ACK}}), (std::vector<int>{SR, CL}));
    // A client RST during the handshake is ignored (IPVS): it could be spoofed.
    EXPECT_EQ(Drive({{IN, SYN}, {IN, RST}}), (std::vector<int>{SR, SR}));
}

TEST(SessionTcp, RetransmittedSynKeepsStateAndNewSynReopensAfterClose)
{
    EXPECT_EQ(Drive({{IN, SYN}, {IN, SYN}, {OUT, SYN | ACK}, {OUT, SYN | ACK}, {IN, ACK}, {IN, SYN}}),
              (std::vector<int>{SR, SR, SR, SR, ES, ES}));
    EXPECT_EQ(Drive({{IN, SYN}, {IN, ACK}, {IN, RST}, {IN, SYN}}), (std::vector<int>{SR, ES, CL, SR}));
    EXPECT_EQ(Drive({{IN, SYN}, {IN, ACK}, {IN, FIN}, {OUT, FIN}, {IN, SYN}}),
              (std::vector<int>{SR, ES, CW, TW, SR}));
}

TEST(SessionTcp, OneSessionConnectionUsesTheInputOnlyTable)
{
    // Direct server return: only the client's packets are seen.
    EXPECT_EQ(Drive({{IN, SYN}, {IN, ACK}, {IN, ACK | PSH}, {IN, FIN | ACK}, {IN, FIN | ACK}, {IN, RST}}, true),
              (std::vector<int>{SR, ES, ES, FW, FW, CL}));
}

TEST(SessionTcp, NonTcpConnectionsStayUdp)
{
    EXPECT_EQ(Drive({{IN, 0}, {OUT, RST}, {IN, SYN | FIN}}, false, 17),
              (std::vector<int>{DP_SESS_UDP, DP_SESS_UDP, DP_SESS_UDP}));
}

TEST(SessionTcp, StateNamesAreStable)
{
    const char *want[] = {"none", "syn_sent", "syn_recv", "established", "fin_wait", "close_wait",
                          "time_wait", "closed", "udp"};
    for (unsigned i = 0; i < DP_SESS_STATE_COUNT; i++)
        EXPECT_STREQ(dp_sess_state_name(dp_sess_state_t(i)), want[i]);
    EXPECT_STREQ(dp_sess_state_name(DP_SESS_STATE_COUNT), "unknown");
}

// ---- memory --------------------------------------------------------------------

TEST(SessionTable, AdxConfigurationFitsEightGiB)
{
    // ServerIron ADX 8000: 32 application cores x 8M sessions (128M connections).
    dp_sess_config_t cfg;
    dp_sess_config_init(&cfg, 32, 8u << 20, 1000);
    size_t bytes = dp_sess_memory_size(&cfg);
    // The header's closed form, evaluated here.
    uint64_t buckets = (uint64_t(8u << 20) * 6 + 24) / 25;
    EXPECT_EQ(uint64_t(bytes), 127u + 128u + 32u * (256u + 128u * buckets));
    EXPECT_LE(uint64_t(bytes), uint64_t(8) << 30);
    double per_session = double(bytes) / (32.0 * double(8u << 20));
    EXPECT_LE(per_session, 32.0);
    std::printf("ADX config: %zu bytes, %.3f bytes per session\n", bytes, per_session);
    // Every capacity keeps the per-session bound once the fixed per-shard
    // header (256 B) is amortized: at most 32 B + 256/capacity.
    for (uint32_t cap : {2u, 3u, 24u, 25u, 1000u, 12345u, 1u << 20}) {
        dp_sess_config_init(&cfg, 1, cap, 1000);
        double b = double(dp_sess_memory_size(&cfg) - 255 - 256) / cap;
        EXPECT_LE(b, 32.0 + 128.0 / cap) << cap;
    }
}

TEST(SessionTable, CreateRefusesTooLittleMemoryAndBadConfigs)
{
    dp_sess_config_t cfg;
    dp_sess_config_init(&cfg, 2, 100, 1000);
    size_t need = dp_sess_memory_size(&cfg);
    std::vector<uint8_t> mem(need);
    EXPECT_EQ(dp_sess_create(mem.data(), need - 1, &cfg), nullptr);
    EXPECT_NE(dp_sess_create(mem.data(), need, &cfg), nullptr);
    dp_sess_config_t bad = cfg;
    bad.shards = 0;
    EXPECT_EQ(dp_sess_memory_size(&bad), 0u);
    bad = cfg;
    bad.sessions_per_shard = 1;
    EXPECT_EQ(dp_sess_memory_size(&bad), 0u);
    bad = cfg;
    bad.timeout[DP_SESS_ESTABLISHED] = 0;
    EXPECT_EQ(dp_sess_memory_size(&bad), 0u);
    bad = cfg;
    bad.timeout[DP_SESS_UDP] = 0x80000000u;
    EXPECT_EQ(dp_sess_memory_size(&bad), 0u);
    EXPECT_EQ(dp_sess_create(mem.data(), need, &bad), nullptr);
}

TEST(SessionTable, DefaultTimeoutsAreIpvsInTicks)
{
    dp_sess_config_t cfg;
    dp_sess_config_init(&cfg, 1, 2, 1000);
    // ip_vs_proto_tcp.c tcp_timeouts and ip_vs_proto_udp.c udp_timeouts, in seconds.
    const uint32_t s[] = {2, 120, 60, 15 * 60, 2 * 60, 60, 2 * 60, 10, 5 * 60};
    for (unsigned i = 0; i < DP_SESS_STATE_COUNT; i++)
        EXPECT_EQ(cfg.timeout[i], s[i] * 1000u) << dp_sess_state_name(dp_sess_state_t(i));
}

// ---- capacity ----------------------------------------------------------------------

TEST(SessionTable, FullShardRefusesAndCounts)
{
    SessTable t(1, 11);
    std::mt19937 rng(1);
    std::vector<KeyPair> held;
    for (int i = 0; i < 5; i++) {
        held.push_back(Pair(t.get(), 1, rng));
        ASSERT_EQ(dp_sess_open(t.get(), &held[i].in, &held[i].out, uint32_t(i), 0, nullptr, nullptr), 0);
    }
    // 10 of 11 sessions used: a two-session connection does not fit, one session does.
    KeyPair extra = Pair(t.get(), 1, rng);
    dp_ops_t ops{};
    EXPECT_EQ(dp_sess_open(t.get(), &extra.in, &extra.out, 9, 0, nullptr, &ops), DP_SESS_EFULL);
    EXPECT_EQ(t.stats(0).refused_full, 1u);
    EXPECT_EQ(t.stats(0).entries, 10u);
    EXPECT_EQ(ops.table_writes, 0u); // nothing written
    EXPECT_EQ(dp_sess_lookup(t.get(), &extra.in, nullptr, nullptr), DP_SESS_ENOENT);
    dp_sess_conn_t single;
    EXPECT_EQ(dp_sess_open(t.get(), &extra.in, nullptr, 9, 0, &single, nullptr), 0);
    KeyPair more = Pair(t.get(), 1, rng);
    EXPECT_EQ(dp_sess_open(t.get(), &more.in, nullptr, 9, 0, nullptr, nullptr), DP_SESS_EFULL);
    EXPECT_EQ(t.stats(0).refused_full, 2u);
    // Nothing evicted: every held connection is still there, intact.
    for (int i = 0; i < 5; i++) {
        dp_sess_hit_t hit;
        ASSERT_EQ(dp_sess_lookup(t.get(), &held[i].out, &hit, nullptr), 0);
        EXPECT_EQ(hit.server, i);
        EXPECT_EQ(hit.dir, DP_SESS_DIR_OUT);
    }
    auto st = t.stats(0);
    EXPECT_EQ(st.entries, 11u);
    EXPECT_EQ(st.connections, 6u);
    EXPECT_EQ(st.inserts, 6u);
    // A close makes room again.
    EXPECT_EQ(dp_sess_close(t.get(), single, nullptr), 0);
    EXPECT_EQ(dp_sess_open(t.get(), &more.in, nullptr, 9, 0, nullptr, nullptr), 0);
    EXPECT_EQ(t.stats(0).deletes, 1u);
}

TEST(SessionTable, ShardsAreIndependent)
{
    SessTable t(4, 6);
    std::mt19937 rng(2);
    int opened[4] = {}, refused[4] = {};
    for (int i = 0; i < 200; i++) {
        KeyPair p = Pair(t.get(), 4, rng);
        uint32_t s = ShardOf(p.in, 4);
        int rc = dp_sess_open(t.get(), &p.in, &p.out, 1, 0, nullptr, nullptr);
        if (opened[s] < 3) {
            ASSERT_EQ(rc, 0);
            opened[s]++;
        } else {
            ASSERT_EQ(rc, DP_SESS_EFULL);
            refused[s]++;
        }
    }
    for (uint32_t s = 0; s < 4; s++) {
        EXPECT_EQ(t.stats(s).connections, 3u);
        EXPECT_EQ(t.stats(s).refused_full, uint64_t(refused[s]));
    }
}

TEST(SessionTable, OutKeyMustBeSteeredIntoTheOwnersShard)
{
    SessTable t(8, 64);
    std::mt19937 rng(3);
    int refused = 0;
    for (int i = 0; i < 200; i++) {
        KeyPair p = Pair(t.get(), 8, rng);
        EXPECT_EQ(ShardOf(p.out, 8), ShardOf(p.in, 8));
        dp_flow_key_t other = p.out;
        other.dst_port = uint16_t(other.dst_port + 1);
        if (ShardOf(other, 8) != ShardOf(p.in, 8)) {
            dp_ops_t ops{};
            EXPECT_EQ(dp_sess_open(t.get(), &p.in, &other, 1, 0, nullptr, &ops), DP_SESS_ESHARD);
            EXPECT_EQ(ops.table_writes, 0u);
            refused++;
        }
    }
    EXPECT_GT(refused, 100);
    for (uint32_t s = 0; s < 8; s++)
        EXPECT_EQ(t.stats(s).entries, 0u);
    // Steering: the port chosen is the first from start on (wrapping) whose key
    // lands in the shard, and each try is one hash.
    dp_flow_key_t k = MakeKey(0x0A000005u, 0x0A640001u, 8080, 0, 6);
    dp_ops_t ops{};
    ASSERT_EQ(dp_sess_steer_port(t.get(), &k, 5, 40000, 40100, 40090, &ops), 0);
    uint32_t tries = 0;
    for (uint32_t p = 40090;; p = p == 40100 ? 40000 : p + 1) {
        dp_flow_key_t c = k;
        c.dst_port = uint16_t(p);
        tries++;
        if (ShardOf(c, 8) == 5) {
            EXPECT_EQ(k.dst_port, p);
            break;
        }
    }
    EXPECT_EQ(ops.hashes, tries);
    // A one-port range that misses the shard leaves the key alone.
    dp_flow_key_t before = k;
    uint32_t wrong = (ShardOf(k, 8) + 1) % 8;
    EXPECT_EQ(dp_sess_steer_port(t.get(), &k, wrong, k.dst_port, k.dst_port, k.dst_port, nullptr),
              DP_SESS_ENOENT);
    EXPECT_EQ(AsTuple(k), AsTuple(before));
    EXPECT_EQ(dp_sess_steer_port(t.get(), &k, 1, 10, 5, 7, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_steer_port(t.get(), &k, 8, 10, 50, 17, nullptr), DP_SESS_EINVAL);
}

TEST(SessionTable, DuplicatesAndBadArgumentsAreRefusedWithoutChange)
{
    SessTable t(1, 10);
    std::mt19937 rng(4);
    KeyPair p = Pair(t.get(), 1, rng), q = Pair(t.get(), 1, rng);
    dp_sess_conn_t c;
    ASSERT_EQ(dp_sess_open(t.get(), &p.in, &p.out, 1, 0, &c, nullptr), 0);
    EXPECT_EQ(dp_sess_open(t.get(), &p.in, &q.out, 1, 0, nullptr, nullptr), DP_SESS_EEXIST);
    EXPECT_EQ(dp_sess_open(t.get(), &q.in, &p.out, 1, 0, nullptr, nullptr), DP_SESS_EEXIST);
    EXPECT_EQ(dp_sess_open(t.get(), &p.out, nullptr, 1, 0, nullptr, nullptr), DP_SESS_EEXIST);
    EXPECT_EQ(dp_sess_open(t.get(), &q.in, &q.in, 1, 0, nullptr, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_open(t.get(), &q.in, &q.out, DP_SESS_MAX_SERVER + 1, 0, nullptr, nullptr),
              DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_open(nullptr, &q.in, &q.out, 1, 0, nullptr, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(t.stats(0).entries, 2u);
    EXPECT_EQ(t.stats(0).refused_full, 0u);
    // Handles: out of range, swapped, or stale after close.
    dp_sess_conn_t bad = c;
    bad.shard = 1;
    EXPECT_EQ(dp_sess_track(t.get(), bad, IN, ACK, 1, nullptr), DP_SESS_EINVAL);
    bad = c;
    std::swap(bad.slot[0], bad.slot[1]);
    EXPECT_EQ(dp_sess_track(t.get(), bad, IN, ACK, 1, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_server(t.get(), bad), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_track(t.get(), c, dp_sess_dir_t(2), ACK, 1, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_server(t.get(), c), 1);
    EXPECT_EQ(dp_sess_close(t.get(), c, nullptr), 0);
    EXPECT_EQ(dp_sess_close(t.get(), c, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(dp_sess_track(t.get(), c, IN, ACK, 1, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(t.stats(0).entries, 0u);
    EXPECT_EQ(t.stats(0).connections, 0u);
    // A one-session connection has no OUT direction.
    ASSERT_EQ(dp_sess_open(t.get(), &q.in, nullptr, 2, 0, &c, nullptr), 0);
    EXPECT_EQ(dp_sess_track(t.get(), c, OUT, ACK, 1, nullptr), DP_SESS_EINVAL);
    EXPECT_EQ(c.slot[0], c.slot[1]);
}

// ---- aging -------------------------------------------------------------------------------

// Flags that take a fresh TCP connection (two sessions) to each state.
std::vector<Pkt> PathTo(int st)
{
    switch (st) {
    case NO: return {};
    case SS: return {{OUT, SYN}};
    case SR: return {{IN, SYN}};
    case ES: return {{IN, SYN}, {IN, ACK}};
    case FW: return {{IN, SYN}, {IN, ACK}, {OUT, FIN}};
    case CW: return {{IN, SYN}, {IN, ACK}, {IN, FIN}};
    case TW: return {{IN, SYN}, {IN, ACK}, {IN, FIN}, {OUT, FIN}};
    case CL: return {{IN, SYN}, {IN, ACK}, {IN, RST}};
    default: return {};
    }
}

TEST(SessionAging, EachStateExpiresExactlyAtItsTimeoutAcrossTickWrap)
{
    for (int st = 0; st < int(DP_SESS_STATE_COUNT); st++) {
        SessTable t(1, 8, 1000);
        std::mt19937 rng(uint32_t(10 + st));
        KeyPair p = Pair(t.get(), 1, rng, st == DP_SESS_UDP ? 17 : 6);
        // Opened just before the 32-bit tick wraps; the last packet (or the
        // open, for NONE and UDP) is at t0.
        uint32_t t0 = 0xFFFFFFFFu - 5000u;
        std::vector<Pkt> path = PathTo(st);
        dp_sess_conn_t c;
        ASSERT_EQ(dp_sess_open(t.get(), &p.in, &p.out, 1, path.empty() ? t0 : t0 - 50, &c, nullptr), 0);
        for (size_t i = 0; i < path.size(); i++)
            dp_sess_track(t.get(), c, path[i].dir, path[i].flags, t0 - uint32_t(path.size() - 1 - i), nullptr);
        ASSERT_EQ(t.stats(0).by_state[st], 1u) << st;
        uint32_t timeout = t.cfg().timeout[st];
        // Not a tick early (now has wrapped past zero for most states).
        EXPECT_EQ(dp_sess_expire(t.get(), 0, t0 + timeout - 1, 0, nullptr), 0u) << st;
        EXPECT_EQ(dp_sess_lookup(t.get(), &p.in, nullptr, nullptr), 0);
        EXPECT_EQ(dp_sess_expire(t.get(), 0, t0 + timeout, 0, nullptr), 1u) << st;
        EXPECT_EQ(dp_sess_lookup(t.get(), &p.in, nullptr, nullptr), DP_SESS_ENOENT);
        EXPECT_EQ(dp_sess_lookup(t.get(), &p.out, nullptr, nullptr), DP_SESS_ENOENT);
        auto s = t.stats(0);
        EXPECT_EQ(s.entries, 0u);
        EXPECT_EQ(s.connections, 0u);
        EXPECT_EQ(s.expired, 1u);
        EXPECT_EQ(s.expired_by_state[st], 1u);
        EXPECT_EQ(s.by_state[st], 0u);
    }
}

TEST(SessionAging, EitherDirectionKeepsTheConnectionAliveAndTheFutureIsNotIdle)
{
    SessTable t(1, 8, 1);
    std::mt19937 rng(20);
    KeyPair p = Pair(t.get(), 1, rng);
    dp_sess_conn_t c;
    ASSERT_EQ(dp_sess_open(t.get(), &p.in, &p.out, 1, 100, &c, nullptr), 0);
    dp_sess_track(t.get(), c, IN, SYN, 100, nullptr);
    dp_sess_track(t.get(), c, IN, ACK, 100, nullptr); // ESTABLISHED, 900 ticks
    dp_sess_track(t.get(), c, OUT, ACK, 700, nullptr); // only the server talks later
    EXPECT_EQ(dp_sess_expire(t.get(), 0, 1599, 0, nullptr), 0u);
    EXPECT_EQ(dp_sess_expire(t.get(), 0, 1600, 0, nullptr), 1u);
    // A last-seen "after" now (clock fed out of order) is not idle, even
    // 2^31 - 1 ticks "later" (it reads as 1 tick in the future).
    ASSERT_EQ(dp_sess_open(t.get(), &p.in, &p.out, 1, 100, &c, nullptr), 0);
    EXPECT_EQ(dp_sess_expire(t.get(), 0, 99, 0, nullptr), 0u);
    EXPECT_EQ(dp_sess_expire(t.get(), 0, 100u + 0x80000000u, 0, nullptr), 0u);
    EXPECT_EQ(dp_sess_expire(t.get(), 0, 100u + 0x7FFFFFFFu, 0, nullptr), 1u);
}

TEST(SessionAging, BudgetedScansResumeWhereTheyStopped)
{
    SessTable t(1, 200, 1);
    std::mt19937 rng(21);
    std::vector<KeyPair> keys;
    for (int i = 0; i < 100; i++) {
        keys.push_back(Pair(t.get(), 1, rng, 17));
        ASSERT_EQ(dp_sess_open(t.get(), &keys[i].in, &keys[i].out, 1, uint32_t(i % 2 ? 0 : 1000), nullptr,
                               nullptr),
                  0);
    }
    uint32_t nb = t.stats(0).buckets, removed = 0;
    ASSERT_EQ(nb, 48u); // ceil(200 * 6 / 25)
    // UDP: 300 ticks. At now = 600 the 50 connections opened at 0 are idle.
    for (uint32_t part = 0; part < 4; part++) {
        dp_ops_t ops{};
        removed += dp_sess_expire(t.get(), 0, 600, nb / 4, &ops);
        // Each scanned bucket is read whole (2 lines), plus peers.
        EXPECT_GE(ops.cache_lines, uint64_t(2 * (nb / 4)));
    }
    EXPECT_EQ(removed, 50u);
    for (int i = 0; i < 100; i++)
        EXPECT_EQ(dp_sess_lookup(t.get(), &keys[i].in, nullptr, nullptr), i % 2 ? DP_SESS_ENOENT : 0);
    EXPECT_EQ(t.stats(0).expired_by_state[DP_SESS_UDP], 50u);
}

TEST(SessionAging, ReportNamesEveryRemovedConnectionAndCostsNothingMore)
{
    // Reference: the keys opened, their server, when, and the state tracked
    // into; with 1 tick = 1 s (NONE 2, ESTABLISHED 900) a connection is idle
    // at tick 501 exactly when it is in NONE and was opened at 0 (not 500). Three identical tables: expired with a small report
    // array (stops early, resumes), with a large one, and without a report.
    SessTable a(1, 400, 1), b(1, 400, 1), c(1, 400, 1);
    std::mt19937 rng(5);
    struct Ref {
        KeyPair k;
        uint16_t server;
        int state;
        bool idle;
    };
    std::vector<Ref> ref;
    for (int i = 0; i < 150; i++) {
        Ref r{Pair(a.get(), 1, rng, 6), uint16_t(i % 7), DP_SESS_NONE, false};
        const uint32_t opened = i % 3 ? 0u : 500u;
        for (SessTable *t : {&a, &b, &c}) {
            dp_sess_conn_t conn;
            ASSERT_EQ(dp_sess_open(t->get(), &r.k.in, &r.k.out, r.server, opened, &conn, nullptr), 0);
            if (i % 2) { // SYN, SYN-ACK, ACK: ESTABLISHED
                dp_sess_track(t->get(), conn, DP_SESS_DIR_IN, DP_SESS_TCP_SYN, opened, nullptr);
                dp_sess_track(t->get(), conn, DP_SESS_DIR_OUT, DP_SESS_TCP_SYN | DP_SESS_TCP_ACK, opened,
                              nullptr);
                r.state = dp_sess_track(t->get(), conn, DP_SESS_DIR_IN, DP_SESS_TCP_ACK, opened, nullptr);
            }
        }
        r.idle = r.state == DP_SESS_NONE && opened == 0;
        ref.push_back(r);
    }
    ASSERT_EQ(ref[1].state, DP_SESS_ESTABLISHED);
    std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>, Ref> want;
    for (const Ref &r : ref)
        if (r.idle)
            want[{r.k.in.src_ip, r.k.in.dst_ip, r.k.in.src_port, r.k.in.dst_port}] = r;
    ASSERT_EQ(want.size(), 50u); // i odd: ESTABLISHED; i % 3 == 0: opened at 500

    // a: 7 entries per call, so a call stops once 3 or more are reported
    std::vector<dp_sess_expired_t> got;
    uint32_t calls = 0, buckets = 0;
    while (got.size() < want.size() && calls++ < 100) {
        dp_sess_expired_t out[7];
        uint32_t n = 99;
        uint32_t scanned = 0;
        EXPECT_EQ(dp_sess_expire_report(a.get(), 0, 501, 0, out, 7, &n, &scanned, nullptr), n);
        EXPECT_LE(scanned, a.stats(0).buckets);
        buckets += scanned;
        EXPECT_LE(n, 7u);
        got.insert(got.end(), out, out + n);
    }
    EXPECT_GT(calls, 7u); // it did stop early and resume
    EXPECT_LE(buckets, 2 * a.stats(0).buckets); // resumed where it stopped, not from the start
    ASSERT_EQ(got.size(), want.size());
    for (const dp_sess_expired_t &e : got) {
        auto it = want.find({e.in_key.src_ip, e.in_key.dst_ip, e.in_key.src_port, e.in_key.dst_port});
        ASSERT_NE(it, want.end()) << "reported twice or never idle";
        EXPECT_EQ(e.in_key.proto, 6);
        EXPECT_EQ(e.server, it->second.server);
        EXPECT_EQ(e.state, DP_SESS_NONE);
        EXPECT_EQ(dp_sess_lookup(a.get(), &e.in_key, nullptr, nullptr), DP_SESS_ENOENT);
        want.erase(it);
    }
    EXPECT_EQ(a.stats(0).expired, 50u);

    // b with room for all vs c without a report: the same removals, the same ops
    std::vector<dp_sess_expired_t> all(200);
    dp_ops_t opsB{}, opsC{};
    uint32_t nb = 0;
    EXPECT_EQ(dp_sess_expire_report(b.get(), 0, 501, 0, all.data(), 200, &nb, nullptr, &opsB), 50u);
    EXPECT_EQ(nb, 50u);
    EXPECT_EQ(dp_sess_expire(c.get(), 0, 501, 0, &opsC), 50u);
    EXPECT_EQ(std::memcmp(&opsB, &opsC, sizeof opsB), 0);

    dp_sess_expired_t tiny[4];
    uint32_t n = 7;
    uint32_t scanned = 9;
    EXPECT_EQ(dp_sess_expire_report(b.get(), 0, 501, 0, tiny, 4, &n, &scanned, nullptr), 0u); // < 5: no scan
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(scanned, 0u);
}

// ---- operation counts -------------------------------------------------------------------

TEST(SessionOps, FirstSessionOfAnEmptyShardCostsWhatTheHeaderSays)
{
    SessTable t(1, 100);
    std::mt19937 rng(30);
    KeyPair p = Pair(t.get(), 1, rng);
    dp_ops_t ops{};
    dp_sess_hit_t hit;
    EXPECT_EQ(dp_sess_lookup(t.get(), &p.in, &hit, &ops), DP_SESS_ENOENT);
    EXPECT_EQ(ops.hashes, 1u);
    EXPECT_EQ(ops.table_probes, 1u); // the empty home bucket's header
    EXPECT_EQ(ops.cache_lines, 1u);
    // One-session connection into an empty table: 1 hash, a miss (1 probe,
    // 1 line), then the home bucket's header (1 probe, 1 line), record and
    // header written (2 writes); slot 0 shares the header's line.
    ops = dp_ops_t{};
    dp_sess_conn_t c;
    ASSERT_EQ(dp_sess_open(t.get(), &p.in, nullptr, 4, 0, &c, &ops), 0);
    EXPECT_EQ(ops.hashes, 1u);
    EXPECT_EQ(ops.table_probes, 2u);
    EXPECT_EQ(ops.cache_lines, 2u);
    EXPECT_EQ(ops.table_writes, 2u);
    EXPECT_EQ(c.slot[0] % 5, 0u);
    ops = dp_ops_t{};
    ASSERT_EQ(dp_sess_lookup(t.get(), &p.in, &hit, &ops), 0);
    EXPECT_EQ(ops.hashes, 1u);
    EXPECT_EQ(ops.table_probes, 2u); // header + the matching record
    EXPECT_EQ(ops.cache_lines, 1u);  // slot 0 is in the header's line
    ops = dp_ops_t{};
    EXPECT_EQ(dp_sess_track(t.get(), hit.conn, IN, SYN, 1, &ops), SR);
    EXPECT_EQ(ops.table_probes, 1u);
    EXPECT_EQ(ops.table_writes, 1u); // one record, no peer
    EXPECT_EQ(ops.cache_lines, 0u);
    ops = dp_ops_t{};
    EXPECT_EQ(dp_sess_close(t.get(), hit.conn, &ops), 0);
    EXPECT_EQ(ops.hashes, 1u);
    EXPECT_EQ(ops.table_probes, 1u);
    EXPECT_EQ(ops.table_writes, 1u);
}

TEST(SessionOps, BulkLookupEqualsSingleLookupsIncludingCounts)
{
    SessTable t(4, 400);
    std::mt19937 rng(31);
    std::vector<dp_flow_key_t> keys;
    for (int i = 0; i < 300; i++) {
        KeyPair p = Pair(t.get(), 4, rng, i % 3 ? 6 : 17);
        if (dp_sess_open(t.get(), &p.in, &p.out, uint32_t(i), 0, nullptr, nullptr) == 0) {
            keys.push_back(p.in);
            keys.push_back(p.out);
        }
        keys.push_back(Pair(t.get(), 4, rng).in); // absent
    }
    std::vector<dp_sess_hit_t> bulk(keys.size());
    dp_ops_t single_ops{}, bulk_ops{};
    unsigned found = dp_sess_lookup_bulk(t.get(), keys.data(), unsigned(keys.size()), bulk.data(), &bulk_ops);
    unsigned want_found = 0;
    for (size_t i = 0; i < keys.size(); i++) {
        dp_sess_hit_t h;
        int rc = dp_sess_lookup(t.get(), &keys[i], &h, &single_ops);
        if (rc == 0) {
            want_found++;
            EXPECT_EQ(bulk[i].dir, h.dir);
            EXPECT_EQ(bulk[i].server, h.server);
            EXPECT_EQ(bulk[i].state, h.state);
            EXPECT_EQ(bulk[i].conn.shard, h.conn.shard);
            EXPECT_EQ(bulk[i].conn.slot[0], h.conn.slot[0]);
            EXPECT_EQ(bulk[i].conn.slot[1], h.conn.slot[1]);
        } else {
            EXPECT_EQ(bulk[i].dir, DP_SESS_DIR_NONE);
        }
    }
    EXPECT_EQ(found, want_found);
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; i++)
        EXPECT_EQ(dp_ops_counter(&bulk_ops, i), dp_ops_counter(&single_ops, i)) << dp_ops_counter_name(i);
}

// Every burst size the bulk pipeline treats differently (none; fewer keys
// than a group; group and pipeline boundaries; many groups with a partial
// last one), a full shard (so 15% of keys lie past their home bucket and
// walks are taken), misses, and a key repeated inside one burst, next to
// itself and a group apart: each result and the batch's ops must be what
// dp_sess_lookup says key by key.
TEST(SessionOps, BulkLookupOfAnyBurstEqualsSingleLookups)
{
    SessTable t(1, 2000);
    std::mt19937 rng(77);
    std::vector<dp_flow_key_t> held;
    while (t.stats(0).entries < t.stats(0).capacity) {
        KeyPair p = Pair(t.get(), 1, rng);
        if (dp_sess_open(t.get(), &p.in, &p.out, uint32_t(held.size() % 1000), 0, nullptr, nullptr) == 0) {
            held.push_back(p.in);
            held.push_back(p.out);
        }
    }
    ASSERT_EQ(t.stats(0).refused_full, 0u);
    for (unsigned n : {0u, 1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 23u, 24u, 25u, 64u, 255u, 256u, 1000u, 4099u}) {
        std::vector<dp_flow_key_t> keys;
        for (unsigned i = 0; i < n; i++) {
            const unsigned pick = rng() % 8;
            if (pick == 0)
                keys.push_back(Pair(t.get(), 1, rng).in); // absent (a miss)
            else if (pick == 1 && i > 0)
                keys.push_back(keys[i - 1]); // the previous key again
            else if (pick == 2 && i >= 9)
                keys.push_back(keys[i - 9]); // a key of the previous group again
            else
                keys.push_back(held[rng() % held.size()]);
        }
        std::vector<dp_sess_hit_t> bulk(n + 1);
        bulk[n].server = 0xBEEF; // one past the burst: must stay untouched
        dp_ops_t bulk_ops{}, single_ops{};
        const unsigned found = dp_sess_lookup_bulk(t.get(), keys.data(), n, bulk.data(), &bulk_ops);
        unsigned want_found = 0;
        for (unsigned i = 0; i < n; i++) {
            dp_sess_hit_t h;
            if (dp_sess_lookup(t.get(), &keys[i], &h, &single_ops) == 0) {
                want_found++;
                EXPECT_EQ(bulk[i].dir, h.dir) << "n " << n << " key " << i;
                EXPECT_EQ(bulk[i].state, h.state);
                EXPECT_EQ(bulk[i].server, h.server);
                EXPECT_EQ(bulk[i].conn.shard, h.conn.shard);
                EXPECT_EQ(bulk[i].conn.slot[0], h.conn.slot[0]);
                EXPECT_EQ(bulk[i].conn.slot[1], h.conn.slot[1]);
            } else {
                EXPECT_EQ(bulk[i].dir, DP_SESS_DIR_NONE) << "n " << n << " key " << i;
            }
        }
        EXPECT_EQ(found, want_found) << "n " << n;
        EXPECT_EQ(bulk[n].server, 0xBEEF) << "n " << n;
        for (unsigned c = 0; c < DP_OPS_NUM_COUNTERS; c++)
            EXPECT_EQ(dp_ops_counter(&bulk_ops, c), dp_ops_counter(&single_ops, c))
                << "n " << n << " " << dp_ops_counter_name(c);
        EXPECT_EQ(bulk_ops.hashes, n);
    }
    // A burst of one key repeated throughout: every copy finds the same record.
    std::vector<dp_flow_key_t> same(40, held[5]);
    std::vector<dp_sess_hit_t> hits(40);
    EXPECT_EQ(dp_sess_lookup_bulk(t.get(), same.data(), 40, hits.data(), nullptr), 40u);
    for (const dp_sess_hit_t &h : hits)
        EXPECT_EQ(h.conn.slot[h.dir], hits[0].conn.slot[hits[0].dir]);
    // Bad arguments find nothing and write nothing.
    EXPECT_EQ(dp_sess_lookup_bulk(nullptr, same.data(), 40, hits.data(), nullptr), 0u);
    EXPECT_EQ(dp_sess_lookup_bulk(t.get(), nullptr, 40, hits.data(), nullptr), 0u);
    EXPECT_EQ(dp_sess_lookup_bulk(t.get(), same.data(), 40, nullptr, nullptr), 0u);
}

// ---- random operations against a reference model ---------------------------------

struct RefConn {
    dp_flow_key_t in{}, out{};
    bool has_out = false;
    uint16_t server = 0;
    int state = 0;
    uint32_t last[2] = {0, 0};
    uint32_t shard = 0;
    dp_sess_conn_t handle{};
};

struct RefShard {
    uint64_t inserts = 0, refused = 0, expired = 0, deletes = 0;
    uint64_t expired_by_state[DP_SESS_STATE_COUNT] = {};
};

int RefNext(int st, int dir, bool input_only, uint8_t flags)
{
    int f = (flags & RST) ? 3 : (flags & SYN) ? 0 : (flags & FIN) ? 1 : (flags & ACK) ? 2 : -1;
    if (f < 0)
        return CL;
    for (const Row &r : kTcpRows)
        if (r.from == st)
            return dir ? r.out[f] : (input_only ? r.in_only[f] : r.in[f]);
    ADD_FAILURE() << "no row for state " << st;
    return st;
}

void CheckAgainstModel(const SessTable &t, const std::map<int, RefConn> &conns,
                       const std::vector<RefShard> &ref, uint32_t shards)
{
    std::vector<uint32_t> entries(shards), nconn(shards);
    std::vector<std::vector<uint32_t>> by_state(shards, std::vector<uint32_t>(DP_SESS_STATE_COUNT));
    for (const auto &kv : conns) {
        const RefConn &c = kv.second;
        entries[c.shard] += c.has_out ? 2 : 1;
        nconn[c.shard]++;
        by_state[c.shard][c.state]++;
        for (int d = 0; d < (c.has_out ? 2 : 1); d++) {
            dp_sess_hit_t hit;
            ASSERT_EQ(dp_sess_lookup(t.get(), d ? &c.out : &c.in, &hit, nullptr), 0);
            EXPECT_EQ(hit.dir, d);
            EXPECT_EQ(hit.state, c.state);
            EXPECT_EQ(hit.server, c.server);
            EXPECT_EQ(hit.conn.shard, c.handle.shard);
            EXPECT_EQ(hit.conn.slot[0], c.handle.slot[0]);
            EXPECT_EQ(hit.conn.slot[1], c.handle.slot[1]);
        }
        dp_sess_info_t info;
        ASSERT_EQ(dp_sess_get(t.get(), c.handle, &info, nullptr), 0);
        EXPECT_EQ(AsTuple(info.in_key), AsTuple(c.in));
        EXPECT_EQ(info.has_out, c.has_out ? 1 : 0);
        if (c.has_out) {
            EXPECT_EQ(AsTuple(info.out_key), AsTuple(c.out));
            EXPECT_EQ(info.last_seen[1], c.last[1]);
        }
        EXPECT_EQ(info.last_seen[0], c.last[0]);
    }
    for (uint32_t s = 0; s < shards; s++) {
        auto st = t.stats(s);
        EXPECT_EQ(st.entries, entries[s]);
        EXPECT_EQ(st.connections, nconn[s]);
        EXPECT_EQ(st.inserts, ref[s].inserts);
        EXPECT_EQ(st.refused_full, ref[s].refused);
        EXPECT_EQ(st.expired, ref[s].expired);
        EXPECT_EQ(st.deletes, ref[s].deletes);
        for (unsigned k = 0; k < DP_SESS_STATE_COUNT; k++) {
            EXPECT_EQ(st.by_state[k], by_state[s][k]);
            EXPECT_EQ(st.expired_by_state[k], ref[s].expired_by_state[k]);
        }
    }
}

TEST(SessionTable, RandomOperationsMatchTheReferenceModel)
{
    const uint32_t shards = 3, cap = 41;
    for (uint32_t seed = 1; seed <= 6; seed++) {
        SessTable t(shards, cap, 1);
        std::mt19937 rng(seed);
        std::map<int, RefConn> conns;
        std::unordered_map<Tuple, std::pair<int, int>, TupleHash> keys; // key -> (conn, dir)
        std::vector<RefShard> ref(shards);
        std::vector<dp_flow_key_t> seen; // keys ever used, to look up again after removal
        uint32_t now = 0xFFFFF000u - seed * 977u; // crosses the 2^32 wrap
        int next_id = 0;
        auto timeouts = t.cfg().timeout;
        for (int step = 0; step < 2500; step++) {
            now += rng() % 40;
            unsigned op = rng() % 100;
            if (op < 35) { // open
                KeyPair p = Pair(t.get(), shards, rng, rng() % 4 ? 6 : 17);
                if (rng() % 8 == 0 && !seen.empty())
                    p.in = seen[rng() % seen.size()]; // maybe a duplicate
                if (rng() % 10 == 0)
                    p.out.dst_port = uint16_t(p.out.dst_port + 1); // maybe not steered
                bool with_out = rng() % 5 != 0;
                uint32_t sh = ShardOf(p.in, shards);
                uint16_t server = uint16_t(rng() % 1000);
                dp_sess_conn_t h;
                int rc = dp_sess_open(t.get(), &p.in, with_out ? &p.out : nullptr, server, now, &h, nullptr);
                bool dup = keys.count(AsTuple(p.in)) || (with_out && keys.count(AsTuple(p.out)));
                if (with_out && ShardOf(p.out, shards) != sh) {
                    EXPECT_EQ(rc, DP_SESS_ESHARD);
                } else if (dup) {
                    EXPECT_EQ(rc, DP_SESS_EEXIST);
                } else {
                    uint32_t used = 0;
                    for (const auto &kv : conns)
                        if (kv.second.shard == sh)
                            used += kv.second.has_out ? 2 : 1;
                    if (used + (with_out ? 2 : 1) > cap) {
                        EXPECT_EQ(rc, DP_SESS_EFULL);
                        ref[sh].refused++;
                    } else {
                        ASSERT_EQ(rc, 0);
                        RefConn c;
                        c.in = p.in;
                        c.out = p.out;
                        c.has_out = with_out;
                        c.server = server;
                        c.state = p.in.proto == 6 ? int(NO) : int(DP_SESS_UDP);
                        c.last[0] = c.last[1] = now;
                        c.shard = sh;
                        c.handle = h;
                        int id = next_id++;
                        conns[id] = c;
                        keys[AsTuple(p.in)] = {id, 0};
                        if (with_out)
                            keys[AsTuple(p.out)] = {id, 1};
                        ref[sh].inserts++;
                        seen.push_back(p.in);
                        if (with_out)
                            seen.push_back(p.out);
                    }
                }
            } else if (op < 75) { // a packet of a known (maybe gone) key: lookup + track
                if (seen.empty())
                    continue;
                dp_flow_key_t k = seen[rng() % seen.size()];
                dp_sess_hit_t hit;
                int rc = dp_sess_lookup(t.get(), &k, &hit, nullptr);
                auto it = keys.find(AsTuple(k));
                if (it == keys.end()) {
                    EXPECT_EQ(rc, DP_SESS_ENOENT);
                    continue;
                }
                ASSERT_EQ(rc, 0);
                RefConn &c = conns[it->second.first];
                int dir = it->second.second;
                ASSERT_EQ(hit.dir, dir);
                static const uint8_t kFlags[] = {SYN, SYN | ACK, ACK, ACK | PSH, FIN | ACK, RST, RST | ACK, 0};
                uint8_t flags = kFlags[rng() % 8];
                int st = dp_sess_track(t.get(), hit.conn, dp_sess_dir_t(dir), flags, now, nullptr);
                if (c.state != DP_SESS_UDP)
                    c.state = RefNext(c.state, dir, !c.has_out, flags);
                c.last[dir] = now;
                EXPECT_EQ(st, c.state);
            } else if (op < 85) { // close
                if (conns.empty())
                    continue;
                auto it = conns.begin();
                std::advance(it, rng() % conns.size());
                ASSERT_EQ(dp_sess_close(t.get(), it->second.handle, nullptr), 0);
                ref[it->second.shard].deletes++;
                keys.erase(AsTuple(it->second.in));
                if (it->second.has_out)
                    keys.erase(AsTuple(it->second.out));
                conns.erase(it);
            } else if (op < 95) { // expire one shard, whole
                uint32_t s = rng() % shards;
                uint32_t want = 0;
                for (auto it = conns.begin(); it != conns.end();) {
                    const RefConn &c = it->second;
                    uint32_t last = c.last[0];
                    if (c.has_out && int32_t(c.last[1] - c.last[0]) > 0)
                        last = c.last[1];
                    if (c.shard == s && uint32_t(now - last) < 0x80000000u &&
                        uint32_t(now - last) >= timeouts[c.state]) {
                        ref[s].expired++;
                        ref[s].expired_by_state[c.state]++;
                        keys.erase(AsTuple(c.in));
                        if (c.has_out)
                            keys.erase(AsTuple(c.out));
                        it = conns.erase(it);
                        want++;
                    } else {
                        ++it;
                    }
                }
                EXPECT_EQ(dp_sess_expire(t.get(), s, now, 0, nullptr), want);
            } else { // time jumps (long idle periods)
                now += rng() % 1000;
            }
            CheckAgainstModel(t, conns, ref, shards);
            if (HasFailure())
                FAIL() << "seed " << seed << " step " << step;
        }
    }
}

// ---- scale -----------------------------------------------------------------------------

// One shard of the ADX configuration, filled: 4M connections = 8M sessions
// (the shard's whole capacity), then every key found and one more refused.
TEST(SessionTable, HoldsEightMillionSessionsInOneShard)
{
    const uint32_t cap = 8u << 20;
    SessTable t(1, cap);
    ASSERT_NE(t.get(), nullptr);
    dp_ops_t ops{};
    for (uint32_t i = 0; i < cap / 2; i++) {
        dp_flow_key_t in = MakeKey(0x0B000000u + i, 0xC6336401u, uint16_t(1024 + (i & 0x3FFF)), 80, 6);
        dp_flow_key_t out = MakeKey(0x0A000000u + (i >> 14), 0x0A640001u, 8080, uint16_t(i & 0x3FFF), 6);
        ASSERT_EQ(dp_sess_open(t.get(), &in, &out, i & 0xFFFF, i, nullptr, &ops), 0) << i;
    }
    auto st = t.stats(0);
    EXPECT_EQ(st.entries, cap);
    dp_flow_key_t extra = MakeKey(1, 2, 3, 4, 6);
    EXPECT_EQ(dp_sess_open(t.get(), &extra, nullptr, 0, 0, nullptr, nullptr), DP_SESS_EFULL);
    ops = dp_ops_t{};
    uint32_t found = 0;
    for (uint32_t i = 0; i < cap / 2; i += 7) {
        dp_flow_key_t in = MakeKey(0x0B000000u + i, 0xC6336401u, uint16_t(1024 + (i & 0x3FFF)), 80, 6);
        dp_sess_hit_t hit;
        found += dp_sess_lookup(t.get(), &in, &hit, &ops) == 0 && hit.server == (i & 0xFFFF);
    }
    uint32_t looked = (cap / 2 + 6) / 7;
    EXPECT_EQ(found, looked);
    std::printf("8M sessions in one shard: %zu bytes (%.2f per session); full-load lookups: %.3f probes, "
                "%.3f cache lines each\n",
                dp_sess_memory_size(&t.cfg()), double(dp_sess_memory_size(&t.cfg())) / cap,
                double(ops.table_probes) / looked, double(ops.cache_lines) / looked);
}

} // namespace
