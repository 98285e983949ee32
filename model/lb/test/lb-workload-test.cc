// Request/response sizes and flow-level bytes of the lb tester (issue 16)
// against closed forms: segments and ACKs of a unit from its sizes, the mean
// packets of a drawn size from the distribution's survival function,
// throughput = rate x bits per unit, and the egress line's ceiling.
#include "ethernet-framing.h"
#include "lb-scenario.h"
#include "lb-testers.h"
#include "traffic-profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace routertwin;

namespace
{
// TCP over IPv4 over Ethernet without options: 14 + 20 + 20 octets.
constexpr uint32_t kHeaders = 54;
constexpr uint32_t kMss = 1460;

LbScenarioConfig
Http10(double rate, double seconds)
{
    LbScenarioConfig c;
    c.workload = "http10";
    c.rate = rate;
    c.durationSeconds = seconds;
    c.warmupSeconds = seconds / 4;
    c.fixedCyclesPerPacket = 100;
    c.numCores = 32;
    return c;
}

// Frame bits (FCS included, padded) of one http10 connection with a
// request and response of these bytes, written out frame by frame.
double
Http10BitsPerUnit(uint64_t request, uint64_t response)
{
    auto frame = [](uint64_t payload) { return 8.0 * ethernet::FrameBytesFromL2(kHeaders + payload); };
    double bits = 6 * frame(0); // SYN, SYN-ACK, ACK, server FIN, client FIN, last ACK
    const uint64_t reqSegs = request <= kMss ? 1 : (request + kMss - 1) / kMss;
    const uint64_t rspSegs = response <= kMss ? 1 : (response + kMss - 1) / kMss;
    bits += (reqSegs - 1) * frame(kMss) + frame(request - (reqSegs - 1) * kMss);
    bits += (rspSegs - 1) * frame(kMss) + frame(response - (rspSegs - 1) * kMss);
    bits += static_cast<double>((rspSegs - 1) / 2) * frame(0); // the client's ACKs
    return bits;
}
} // namespace

TEST(LbWorkload, LongFlowIsSegmentedAndCostsByItsBytes)
{
    // A 100,000-byte response: 69 segments (68 x 1460 + 720), the client's
    // ACK of every second one but the last (34), so 6 + 1 + 69 + 34 = 110
    // frames through a full-NAT balancer; delivered bits = rate x bits a unit.
    LbScenarioConfig c = Http10(2e4, 0.01);
    c.responseBytes = 100000;
    const LbScenarioResult r = RunLbScenario(c);
    EXPECT_EQ(r.packetsPerUnit, 110.0);
    EXPECT_EQ(r.unitsFailed, 0u);
    EXPECT_EQ(r.deliveryErrors, 0u);
    const double bits = Http10BitsPerUnit(64, 100000);
    // the window holds 150 connection starts; a connection lasts 1.1 ms
    // (110 packets 10 us apart), well inside the 2.5 ms warmup
    EXPECT_NEAR(r.deliveredBitRate, c.rate * bits, 0.005 * c.rate * bits);
    // a short flow of one segment each way is the report's 8-packet script
    c.responseBytes = 1460;
    EXPECT_EQ(RunLbScenario(c).packetsPerUnit, 8.0);
}

TEST(LbWorkload, EgressLineCapsTheBytesOfLongFlows)
{
    // One 1 Gbit/s port: 2,000 connections/s of 100 kB responses offer
    // 1.76 Gbit/s of frames; what leaves is the line's share of frame bits,
    // rate x frame / (frame + 20 octets of preamble and gap) over the mix.
    LbScenarioConfig c = Http10(2e3, 0.02);
    c.responseBytes = 100000;
    c.ports = 1;
    c.portBitRate = 1e9;
    c.coreQueueDepth = 0;
    const LbScenarioResult r = RunLbScenario(c);
    const double frameBits = Http10BitsPerUnit(64, 100000);
    ASSERT_GT(c.rate * frameBits, 1.5e9);
    const double frames = 110;
    const double wireBits = frameBits + frames * 8 * 20;
    EXPECT_NEAR(r.deliveredBitRate, 1e9 * frameBits / wireBits, 0.01 * 1e9);
}

TEST(LbWorkload, PortLatencyHoldsEveryTimedFrameOnceWhateverThePortCount)
{
    // Each frame the run times is in the histogram of the one port it came
    // in on: the ports' counts and latency sums add up to the run's, with
    // one port (both sides on it) as with 16 (clients and servers apart).
    for (const uint32_t ports : {1u, 16u})
    {
        LbScenarioConfig c = Http10(2e4, 0.002);
        c.ports = ports;
        const LbScenarioResult r = RunLbScenario(c);
        ASSERT_EQ(r.portLatency.size(), ports);
        double frames = 0, sum = 0;
        for (uint32_t p = 0; p < ports; ++p)
        {
            frames += r.portLatency[p].Count();
            sum += r.portLatencySumSeconds[p];
        }
        EXPECT_GT(r.framesMeasured, 100u);
        EXPECT_EQ(frames, static_cast<double>(r.framesMeasured)) << ports;
        EXPECT_NEAR(sum / frames, r.meanLatencySeconds, 1e-12 * r.meanLatencySeconds) << ports;
    }
}

TEST(LbWorkload, DrawnResponseSizesGiveTheDistributionsMeanPackets)
{
    // Pareto(alpha 2.5, xm 2000 bytes) responses: S = ceil(X / mss)
    // segments and floor((S - 1) / 2) ACKs, so E[packets] = 7 + sum over
    // j >= 0 of P(X > j mss) + sum over m >= 1 of P(X > 2 m mss).
    LbScenarioConfig c = Http10(1e6, 0.02);
    c.responseSizes.sizes = "pareto";
    c.responseSizes.paretoAlpha = 2.5;
    c.responseSizes.paretoMinBytes = 2000;
    const LbScenarioResult r = RunLbScenario(c);
    FlowSizeDistribution x;
    x.kind = FlowSizeKind::kPareto;
    x.paretoAlpha = 2.5;
    x.paretoMinPackets = 2000;
    double mean = 7;
    for (uint64_t j = 0; j < 200000; ++j)
    {
        mean += x.Survival(double(j) * kMss) + (j >= 1 ? x.Survival(2.0 * double(j) * kMss) : 0.0);
    }
    // packets ~ 1.5 X / mss + 1: sd at most 1.5 sd(X) / mss + 1, sd(X) =
    // xm sqrt(alpha / ((alpha - 1)^2 (alpha - 2)))
    const double sdX = 2000 * std::sqrt(2.5 / (1.5 * 1.5 * 0.5));
    const double units = c.rate * c.durationSeconds;
    EXPECT_NEAR(r.packetsPerUnit, mean, 4 * (1.5 * sdX / kMss + 1) / std::sqrt(units)) << mean;

    // an empirical table: the exact mean of its packets
    LbScenarioConfig t = Http10(1e6, 0.02);
    t.responseSizes.sizes = "table";
    t.responseSizes.table = {{500, 1}, {3000, 1}, {10000, 2}}; // 1, 3 (+1 ACK), 7 (+3 ACKs) segments
    const LbScenarioResult rt = RunLbScenario(t);
    const double tableMean = 7 + (1 + 4 + 2 * 10) / 4.0;
    // per unit: 1, 4 or 10 packets with p 1/4, 1/4, 1/2: sd 3.9
    EXPECT_NEAR(rt.packetsPerUnit, tableMean, 4 * 3.9 / std::sqrt(t.rate * t.durationSeconds));
    // same seed, same run
    const LbScenarioResult again = RunLbScenario(t);
    EXPECT_EQ(again.packetsPerUnit, rt.packetsPerUnit);
    EXPECT_EQ(again.deliveredBitRate, rt.deliveredBitRate);
    EXPECT_EQ(again.cyclesPerUnit, rt.cyclesPerUnit);
}

TEST(LbWorkload, SizeKeysAreCheckedByName)
{
    auto refused = [](const std::map<std::string, ConfigValue>& keys, const std::string& what) {
        try
        {
            LbScenarioConfig c = LbScenarioConfig::FromKeys(keys);
            RunLbScenario(c);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what()).find(what) != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(refused({{"response_sizes", std::string("weibull")}}, "key 'response_sizes'"));
    EXPECT_TRUE(refused({{"response_sizes", std::string("table")}, {"duration_s", 1e-4}}, "response_table"));
    EXPECT_TRUE(refused({{"request_table", std::map<std::string, double>{{"12x", 1.0}}}}, "key 'request_table'"));
    EXPECT_TRUE(refused({{"response_sizes", std::string("pareto")}, {"response_pareto_alpha", 0.9},
                         {"duration_s", 1e-4}},
                        "response_sizes"));
}

namespace
{
// A classic pcap (microseconds, Ethernet) written from the format: TCP
// segments (flags, payload bytes; only the headers are captured).
class PcapWriter
{
  public:
    PcapWriter()
    {
        U32(0xA1B2C3D4u);
        U16(2), U16(4), U32(0), U32(0), U32(65535), U32(1);
    }
    void Segment(uint64_t us, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint8_t flags,
                 uint32_t payload)
    {
        std::vector<uint8_t> f(54, 0);
        f[12] = 0x08; // IPv4
        f[14] = 0x45;
        const uint32_t total = 40 + payload;
        f[16] = static_cast<uint8_t>(total >> 8), f[17] = static_cast<uint8_t>(total);
        f[22] = 64, f[23] = 6;
        for (int i = 0; i < 4; ++i)
        {
            f[26 + i] = static_cast<uint8_t>(src >> (24 - 8 * i));
            f[30 + i] = static_cast<uint8_t>(dst >> (24 - 8 * i));
        }
        f[34] = static_cast<uint8_t>(sport >> 8), f[35] = static_cast<uint8_t>(sport);
        f[36] = static_cast<uint8_t>(dport >> 8), f[37] = static_cast<uint8_t>(dport);
        f[46] = 0x50; // data offset 5 words
        f[47] = flags;
        U32(static_cast<uint32_t>(us / 1000000)), U32(static_cast<uint32_t>(us % 1000000));
        U32(54), U32(54 + payload);
        m_bytes.insert(m_bytes.end(), f.begin(), f.end());
    }
    // The same over IPv6 (EtherType 0x86DD, a 40-byte header, next header
    // TCP): addresses 2001:db8::<src> and 2001:db8::<dst>.
    void Segment6(uint64_t us, uint16_t src, uint16_t sport, uint16_t dst, uint16_t dport, uint8_t flags,
                  uint32_t payload)
    {
        std::vector<uint8_t> f(74, 0);
        f[12] = 0x86, f[13] = 0xDD;
        f[14] = 0x60;
        const uint32_t length = 20 + payload;
        f[18] = static_cast<uint8_t>(length >> 8), f[19] = static_cast<uint8_t>(length);
        f[20] = 6, f[21] = 64;
        for (const auto& [at, host] : {std::pair<int, uint16_t>{22, src}, {38, dst}})
        {
            f[at] = 0x20, f[at + 1] = 0x01, f[at + 2] = 0x0d, f[at + 3] = 0xb8;
            f[at + 14] = static_cast<uint8_t>(host >> 8), f[at + 15] = static_cast<uint8_t>(host);
        }
        f[54] = static_cast<uint8_t>(sport >> 8), f[55] = static_cast<uint8_t>(sport);
        f[56] = static_cast<uint8_t>(dport >> 8), f[57] = static_cast<uint8_t>(dport);
        f[66] = 0x50;
        f[67] = flags;
        U32(static_cast<uint32_t>(us / 1000000)), U32(static_cast<uint32_t>(us % 1000000));
        U32(74), U32(74 + payload);
        m_bytes.insert(m_bytes.end(), f.begin(), f.end());
    }
    std::string Write(const std::string& name) const
    {
        const std::string path = ::testing::TempDir() + name;
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(m_bytes.data()), static_cast<std::streamsize>(m_bytes.size()));
        return path;
    }

  private:
    void U32(uint32_t v)
    {
        for (int i = 0; i < 4; ++i)
        {
            m_bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    }
    void U16(uint16_t v) { m_bytes.push_back(static_cast<uint8_t>(v)), m_bytes.push_back(static_cast<uint8_t>(v >> 8)); }
    std::vector<uint8_t> m_bytes;
};

struct WrittenConnection
{
    uint64_t synUs, request, response;
};

// 40 HTTP/1.0-like connections: SYN every 100 us plus a stagger, requests
// and responses in segments of at most 1460 bytes, the server's FIN, the
// client's, the last ACK; and a connection whose SYN the capture missed.
std::vector<WrittenConnection>
WriteConnections(const std::string& name, std::string& path)
{
    constexpr uint8_t kFinF = 0x01, kSynF = 0x02, kPshF = 0x08, kAckF = 0x10;
    PcapWriter w;
    std::vector<WrittenConnection> conns;
    const uint32_t server = 0xC6130001u; // 198.19.0.1
    // 9 s since the epoch: a capture's absolute time is not replayed
    w.Segment(9000000, 0xC61200FEu, 999, server, 80, kAckF | kPshF, 300); // mid-connection
    for (uint32_t k = 0; k < 40; ++k)
    {
        const WrittenConnection c{9000010 + 100 * k + (k * 37) % 50, 100 + 97 * k, 500 + 1000 * k * k % 40000};
        conns.push_back(c);
        const uint32_t client = 0xC6120001u + k;
        const uint16_t port = static_cast<uint16_t>(40000 + k);
        uint64_t t = c.synUs;
        w.Segment(t, client, port, server, 80, kSynF, 0);
        w.Segment(++t, server, 80, client, port, kSynF | kAckF, 0);
        w.Segment(++t, client, port, server, 80, kAckF, 0);
        for (uint64_t sent = 0; sent < c.request; sent += kMss)
        {
            w.Segment(++t, client, port, server, 80, kAckF | kPshF, static_cast<uint32_t>(std::min<uint64_t>(kMss, c.request - sent)));
        }
        for (uint64_t sent = 0; sent < c.response; sent += kMss)
        {
            w.Segment(++t, server, 80, client, port, kAckF | kPshF, static_cast<uint32_t>(std::min<uint64_t>(kMss, c.response - sent)));
        }
        w.Segment(++t, server, 80, client, port, kFinF | kAckF, 0);
        w.Segment(++t, client, port, server, 80, kFinF | kAckF, 0);
        w.Segment(++t, server, 80, client, port, kAckF, 0);
    }
    path = w.Write(name);
    return conns;
}

double
Http10Packets(uint64_t request, uint64_t response)
{
    const uint64_t req = request <= kMss ? 1 : (request + kMss - 1) / kMss;
    const uint64_t rsp = response <= kMss ? 1 : (response + kMss - 1) / kMss;
    return static_cast<double>(6 + req + rsp + (rsp - 1) / 2);
}
} // namespace

TEST(LbWorkload, TraceConnectionsCarryTheirSynInstantsAndBytes)
{
    std::string path;
    const std::vector<WrittenConnection> written = WriteConnections("lb-conns.pcap", path);
    const TraceConnections read = ReadTraceConnections(path);
    ASSERT_EQ(read.connections.size(), written.size());
    for (size_t k = 0; k < written.size(); ++k)
    {
        EXPECT_EQ(read.connections[k].synNs, written[k].synUs * 1000) << k;
        EXPECT_EQ(read.connections[k].requestBytes, written[k].request) << k;
        EXPECT_EQ(read.connections[k].responseBytes, written[k].response) << k;
    }
    // the segment whose SYN is missing, and each connection's last ACK
    // (after both FINs)
    EXPECT_EQ(read.segmentsUnmatched, 1u + written.size());

    // As captured: the span (3,900 us + the last stagger) and one mean gap
    // a pass; the units started in the window are the SYNs that fall in it,
    // counted here from the written instants over the passes.
    LbScenarioConfig c = Http10(1e4, 0.01);
    c.traceFile = path;
    c.traceRescale = false;
    const LbScenarioResult r = RunLbScenario(c);
    const double first = double(written.front().synUs), span = double(written.back().synUs) - first;
    const double pass = span + span / double(written.size() - 1);
    uint64_t inWindow = 0, started = 0;
    double packets = 0;
    for (uint64_t p = 0; p * pass * 1e-6 < c.durationSeconds; ++p)
    {
        for (const WrittenConnection& w : written)
        {
            const double t = (p * pass + double(w.synUs) - first) * 1e-6;
            if (t < c.durationSeconds)
            {
                ++started;
                packets += Http10Packets(w.request, w.response);
                inWindow += t >= c.warmupSeconds;
            }
        }
    }
    EXPECT_EQ(r.unitsStarted, inWindow);
    EXPECT_NEAR(r.packetsPerUnit, packets / double(started), 1e-9);
    EXPECT_EQ(r.unitsFailed, 0u);
    // Rescaled to 2e4 connections a second: that rate over whole passes.
    c.traceRescale = true;
    c.rate = 2e4;
    const LbScenarioResult fast = RunLbScenario(c);
    const double window = c.durationSeconds - c.warmupSeconds;
    EXPECT_NEAR(fast.offeredRate, c.rate, 2.0 / window);
    // http11 units are transactions, not a trace's connections
    c.workload = "http11";
    EXPECT_THROW(RunLbScenario(c), std::invalid_argument);
}

namespace
{
// One http10 connection (SYN, SYN-ACK, ACK, a 64-byte request, the response
// from step 4, the FINs and the last ACK) under TCP windows: every packet
// the tester emits, by step.
std::map<uint32_t, uint64_t>
WindowedConnection(LbTesterConfig tc)
{
    tc.workload = LbWorkload::kHttp10;
    tc.rate = 1e3; // one unit: the next would start at 1 ms, after the end
    tc.window.enabled = true;
    LbTester tester(tc, 1);
    tester.SetEnd(1);
    std::vector<LbTxPacket> pkts;
    tester.Emit(UINT64_MAX, pkts);
    std::map<uint32_t, uint64_t> at;
    uint64_t previous = 0;
    for (const LbTxPacket& p : pkts)
    {
        EXPECT_EQ(p.unit, 0u);
        EXPECT_GE(p.timePs, previous); // handed out in time order
        previous = p.timePs;
        EXPECT_TRUE(at.emplace(p.step, p.timePs).second) << p.step;
    }
    return at;
}

// Response segment i and the client's ACK j (of segments 2j, 2j + 1) as
// steps of the script: in threes from step `first`.
uint32_t SegmentStep(uint32_t first, uint64_t i) { return first + 3 * uint32_t(i / 2) + uint32_t(i % 2); }
uint32_t AckStep(uint32_t first, uint64_t j) { return first + 3 * uint32_t(j) + 2; }

// A full-size segment's time on a 10 Gbit/s port: 1514 + 4 (FCS) + 20
// (preamble, SFD, gap) octets.
constexpr uint64_t kTxPs = (1514 + 4 + 20) * 8 * 100;
constexpr uint64_t kGapPs = 10'000'000; // the default step gap, 10 us
constexpr uint64_t kRttPs = 1'000'000'000; // 1 ms
// SYN; the SYN-ACK a step gap later; the client's ACK one RTT after it;
// the request a step gap later; the response's first segment a step gap
// after that
constexpr uint64_t kRespT0 = 3 * kGapPs + kRttPs;
} // namespace

TEST(LbWorkload, SlowStartTakesTheClosedFormsRoundTrips)
{
    // IW 10 and the window doubling each round trip (an ACK every second
    // segment, each opening it by the 2 it acknowledges): S segments take
    // R = ceil(log2(S / 10 + 1)) rounds. Round k starts k (RTT + 2 tx)
    // after the first segment (its first ACK leaves when the round before's
    // second segment has, and crosses one RTT), and its segments go back to
    // back at the port's rate, as long as a flight fits a round trip (640
    // segments x 1.23 us < 1 ms here).
    LbTesterConfig tc;
    tc.window.rttSeconds = 1e-3;
    tc.window.receiveWindowBytes = 1u << 24; // never binding
    const uint64_t rttPs = 1'000'000'000;
    for (uint64_t segs : {2, 9, 10, 11, 29, 30, 31, 69, 70, 71, 150, 151, 640, 1000, 1270})
    {
        tc.responseBytes = static_cast<uint32_t>(segs * kMss);
        const std::map<uint32_t, uint64_t> at = WindowedConnection(tc);
        const uint32_t rounds = static_cast<uint32_t>(std::ceil(std::log2(double(segs) / 10 + 1) - 1e-12));
        ASSERT_EQ(at.size(), 6 + 1 + segs + (segs - 1) / 2) << segs;
        uint32_t lastRound = 0;
        for (uint64_t i = 0; i < segs; ++i)
        {
            // segment i is in round k when 10 (2^k - 1) <= i < 10 (2^(k+1) - 1)
            uint32_t k = 0;
            while (10 * ((uint64_t{2} << k) - 1) <= i)
            {
                ++k;
            }
            const uint64_t pos = i - 10 * ((uint64_t{1} << k) - 1);
            EXPECT_EQ(at.at(SegmentStep(4, i)), kRespT0 + k * (rttPs + 2 * kTxPs) + pos * kTxPs) << segs << " " << i;
            lastRound = k;
        }
        EXPECT_EQ(lastRound + 1, rounds) << segs;
        for (uint64_t j = 0; j < (segs - 1) / 2; ++j)
        {
            EXPECT_EQ(at.at(AckStep(4, j)), at.at(SegmentStep(4, 2 * j + 1)) + kTxPs + rttPs) << segs << " " << j;
        }
        // the server's FIN a step gap after its last segment, the client's
        // FIN one RTT after that, the server's last ACK a step gap later
        const uint32_t fin = 4 + static_cast<uint32_t>(segs + (segs - 1) / 2);
        EXPECT_EQ(at.at(fin), at.at(SegmentStep(4, segs - 1)) + kGapPs) << segs;
        EXPECT_EQ(at.at(fin + 1), at.at(fin) + rttPs) << segs;
        EXPECT_EQ(at.at(fin + 2), at.at(fin + 1) + kGapPs) << segs;
        EXPECT_EQ(at.at(1), kGapPs);
        EXPECT_EQ(at.at(2), kGapPs + rttPs);
    }
}

TEST(LbWorkload, ReceiveWindowCapsALongFlowAtWindowPerRoundTrip)
{
    // rwnd 65,535 bytes = 44 segments: past slow start (10, 20, 40, then
    // capped) the flow sends 44 segments per RTT + 2 tx, so it moves
    // 44 x 1460 x 8 / (RTT + 2 tx) bit/s, whatever the port could carry.
    LbTesterConfig tc;
    tc.window.rttSeconds = 1e-3;
    const uint64_t segs = 2000, rttPs = 1'000'000'000;
    tc.responseBytes = static_cast<uint32_t>(segs * kMss);
    const std::map<uint32_t, uint64_t> at = WindowedConnection(tc);
    for (uint64_t i = 200; i + 44 < segs; ++i)
    {
        ASSERT_EQ(at.at(SegmentStep(4, i + 44)) - at.at(SegmentStep(4, i)), rttPs + 2 * kTxPs) << i;
    }
    // over 40 whole windows: 44 x 1460 x 8 bits every RTT + 2 tx
    const double seconds = double(at.at(SegmentStep(4, 220 + 40 * 44)) - at.at(SegmentStep(4, 220))) * 1e-12;
    const double goodput = 40.0 * 44 * kMss * 8 / seconds;
    const double closedForm = 44.0 * kMss * 8 / ((rttPs + 2 * kTxPs) * 1e-12);
    EXPECT_NEAR(goodput, closedForm, 1e-9 * closedForm);
    EXPECT_LT(goodput, 0.1 * 10e9); // 0.51 Gbit/s on a 10 Gbit/s port
}

TEST(LbWorkload, LongFlowMovesAtLineRateWhenTheWindowCoversTheRoundTrip)
{
    // RTT 5 us: a round trip is 4 frames' time, below IW: the window never
    // waits, and segment i leaves i frame times after the first (line rate).
    LbTesterConfig tc;
    tc.window.rttSeconds = 5e-6;
    tc.window.receiveWindowBytes = 1u << 24;
    const uint64_t segs = 3000;
    tc.responseBytes = static_cast<uint32_t>(segs * kMss);
    const std::map<uint32_t, uint64_t> at = WindowedConnection(tc);
    const uint64_t t0 = 3 * kGapPs + 5'000'000;
    for (uint64_t i = 0; i < segs; ++i)
    {
        ASSERT_EQ(at.at(SegmentStep(4, i)), t0 + i * kTxPs) << i;
    }
    // the goodput is the port's rate x mss / wire octets of a segment
    const double seconds = double(at.at(SegmentStep(4, segs - 1)) + kTxPs - t0) * 1e-12;
    EXPECT_NEAR(double(segs) * kMss * 8 / seconds, 10e9 * 1460 / 1538, 1.0);
}

TEST(LbWorkload, JumboMssSendsJumboFrames)
{
    // mss 8960: a 100,000-byte response is 12 segments (11 x 8960 + 1440)
    // and 5 ACKs: 24 frames a connection, the full ones 9014 + 4 octets.
    LbScenarioConfig c = Http10(2e4, 0.01);
    c.responseBytes = 100000;
    c.mss = 8960;
    const LbScenarioResult r = RunLbScenario(c);
    EXPECT_EQ(r.packetsPerUnit, 24.0);
    EXPECT_EQ(r.unitsFailed, 0u);
    EXPECT_EQ(r.deliveryErrors, 0u);
    auto frame = [](uint64_t payload) { return 8.0 * ethernet::FrameBytesFromL2(kHeaders + payload); };
    EXPECT_EQ(frame(8960), 8.0 * 9018);
    const double bits = 6 * frame(0) + frame(64) + 11 * frame(8960) + frame(1440) + 5 * frame(0);
    EXPECT_NEAR(r.deliveredBitRate, c.rate * bits, 0.005 * c.rate * bits);
    // the same bytes in 1460-byte segments: 69 + 34 + 7 frames
    c.mss = 1460;
    EXPECT_EQ(RunLbScenario(c).packetsPerUnit, 110.0);
    EXPECT_THROW(LbScenarioConfig::FromKeys({{"mss", int64_t{8961}}}), std::invalid_argument);
}

TEST(LbWorkload, ConnectionResponseTimeCountsSlowStartRounds)
{
    // At 2,000 connections/s (no queueing to speak of), each connection's
    // response time is the tester's schedule plus the device's small
    // latency: 69 segments (100 kB) take 3 rounds of a 1 ms RTT (the last,
    // 68, at position 38 of round 2); then the server's FIN (a step gap),
    // the client's FIN (an RTT) and the server's last ACK (a step gap).
    LbScenarioConfig c = Http10(2e3, 0.02);
    c.responseBytes = 100000;
    c.tcpWindows = true;
    c.tcpRttSeconds = 1e-3;
    c.warmupSeconds = 0.004;
    const LbScenarioResult r = RunLbScenario(c);
    ASSERT_GT(r.unitLatency.Count(), 0) << r.unitsStarted << " " << r.unitsCompleted << " " << r.unitsFailed << " "
                                        << r.packetsPerUnit;
    EXPECT_EQ(r.unitsFailed, 0u);
    const uint64_t s68 = kRespT0 + 2 * (kRttPs + 2 * kTxPs) + (68 - 30) * kTxPs;
    const double lastAck = double(s68 + 2 * kGapPs + kRttPs) * 1e-12;
    EXPECT_NEAR(r.unitLatency.Min(), lastAck, 5e-6);
    EXPECT_NEAR(r.unitLatency.Max(), lastAck, 5e-6);
    // without windows the same connection takes its 110 step gaps
    c.tcpWindows = false;
    const LbScenarioResult paced = RunLbScenario(c);
    EXPECT_NEAR(paced.unitLatency.Min(), 109 * 10e-6, 5e-6);
}

TEST(LbWorkload, WindowKeysAreChecked)
{
    EXPECT_THROW(LbScenarioConfig::FromKeys({{"tcp_initial_window", int64_t{0}}}), std::invalid_argument);
    EXPECT_THROW(LbScenarioConfig::FromKeys({{"tcp_rtt_s", 0.0}}), std::invalid_argument);
    // a receive window below two segments would wait for a delayed-ACK timer
    LbScenarioConfig c = Http10(1e3, 0.001);
    c.tcpWindows = true;
    c.tcpReceiveWindowBytes = 2000;
    try
    {
        RunLbScenario(c);
        ADD_FAILURE() << "a 2000-byte receive window was accepted";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("receive_window_bytes"), std::string::npos) << e.what();
    }
}

namespace
{
struct KeepAliveConnection
{
    uint64_t synUs;
    std::vector<TraceExchange> exchanges;
};

// HTTP/1.1 keep-alive connections: each sends its requests one after the
// other on one connection, each answered before the next (segments of at
// most 1460 bytes), then the FINs; and IPv6 connections between them.
PcapWriter
WriteKeepAlive(const std::vector<KeepAliveConnection>& conns, uint32_t ipv6Conns, uint64_t& ipv6Packets)
{
    constexpr uint8_t kFinF = 0x01, kSynF = 0x02, kPshF = 0x08, kAckF = 0x10;
    PcapWriter w;
    const uint32_t server = 0xC6130001u;
    for (size_t k = 0; k < conns.size(); ++k)
    {
        const uint32_t client = 0xC6120001u + static_cast<uint32_t>(k);
        const uint16_t port = static_cast<uint16_t>(40000 + k);
        uint64_t t = conns[k].synUs;
        w.Segment(t, client, port, server, 80, kSynF, 0);
        w.Segment(++t, server, 80, client, port, kSynF | kAckF, 0);
        w.Segment(++t, client, port, server, 80, kAckF, 0);
        for (const TraceExchange& e : conns[k].exchanges)
        {
            // the user thinks 50 us between reading a response and the next request
            t += &e == &conns[k].exchanges.front() ? 0 : 50;
            for (uint64_t sent = 0; sent < e.requestBytes; sent += kMss)
            {
                w.Segment(++t, client, port, server, 80, kAckF | kPshF,
                          static_cast<uint32_t>(std::min<uint64_t>(kMss, e.requestBytes - sent)));
            }
            for (uint64_t sent = 0; sent < e.responseBytes; sent += kMss)
            {
                w.Segment(++t, server, 80, client, port, kAckF | kPshF,
                          static_cast<uint32_t>(std::min<uint64_t>(kMss, e.responseBytes - sent)));
            }
            w.Segment(++t, client, port, server, 80, kAckF, 0); // the client's ACK: no payload, no new exchange
        }
        w.Segment(++t, server, 80, client, port, kFinF | kAckF, 0);
        w.Segment(++t, client, port, server, 80, kFinF | kAckF, 0);
        w.Segment(++t, server, 80, client, port, kAckF, 0);
        if (k < ipv6Conns)
        {
            const uint16_t p6 = static_cast<uint16_t>(50000 + k);
            w.Segment6(++t, 0x10, p6, 0x80, 80, kSynF, 0);
            w.Segment6(++t, 0x80, 80, 0x10, p6, kSynF | kAckF, 0);
            w.Segment6(++t, 0x10, p6, 0x80, 80, kAckF | kPshF, 200);
            w.Segment6(++t, 0x80, 80, 0x10, p6, kAckF | kPshF | kFinF, 900);
            ipv6Packets += 4;
        }
    }
    return w;
}

double
Packets(const std::vector<TraceExchange>& exchanges)
{
    double n = 6; // SYN, SYN-ACK, ACK, the FINs and the last ACK
    for (const TraceExchange& e : exchanges)
    {
        const uint64_t req = e.requestBytes <= kMss ? 1 : (e.requestBytes + kMss - 1) / kMss;
        const uint64_t rsp = e.responseBytes <= kMss ? 1 : (e.responseBytes + kMss - 1) / kMss;
        n += double(req + rsp + (rsp - 1) / 2);
    }
    return n;
}
} // namespace

TEST(LbWorkload, KeepAliveTraceConnectionsCarryEachRequest)
{
    // 24 connections of 1 to 4 requests each; 3 IPv6 connections between them
    std::vector<KeepAliveConnection> conns;
    for (uint32_t k = 0; k < 24; ++k)
    {
        KeepAliveConnection c{1000 + 150 * uint64_t(k), {}};
        for (uint32_t e = 0; e <= k % 4; ++e)
        {
            c.exchanges.push_back({120 + 31 * uint64_t(e + k), 300 + 1700 * uint64_t((e * 7 + k) % 9)});
        }
        conns.push_back(c);
    }
    uint64_t ipv6Packets = 0;
    const std::string path = WriteKeepAlive(conns, 3, ipv6Packets).Write("lb-keepalive.pcap");
    const TraceConnections read = ReadTraceConnections(path);
    ASSERT_EQ(read.connections.size(), conns.size());
    for (size_t k = 0; k < conns.size(); ++k)
    {
        const std::vector<TraceExchange>& got = read.connections[k].exchanges;
        ASSERT_EQ(got.size(), conns[k].exchanges.size()) << k;
        for (size_t e = 0; e < got.size(); ++e)
        {
            EXPECT_EQ(got[e].requestBytes, conns[k].exchanges[e].requestBytes) << k << " " << e;
            EXPECT_EQ(got[e].responseBytes, conns[k].exchanges[e].responseBytes) << k << " " << e;
            // from the last response segment: the client's ACK (1 us), 50 us, the request (1 us)
            EXPECT_EQ(got[e].thinkNs, e == 0 ? 0u : 52000u) << k << " " << e;
        }
    }
    EXPECT_EQ(read.ipv6Connections, 3u);
    EXPECT_EQ(read.ipv6Packets, ipv6Packets);

    // As captured, 6 ms: passes of 24 SYNs 150 us apart (3.6 ms a pass); the
    // units started are counted from the written instants.
    LbScenarioConfig c = Http10(1e4, 0.006);
    c.traceFile = path;
    c.traceRescale = false;
    const LbScenarioResult r = RunLbScenario(c);
    const double pass = 24 * 150e-6;
    double packets = 0;
    uint64_t started = 0;
    for (uint64_t p = 0; p * pass < c.durationSeconds; ++p)
    {
        for (const KeepAliveConnection& k : conns)
        {
            if (p * pass + double(k.synUs - 1000) * 1e-6 < c.durationSeconds)
            {
                ++started;
                packets += Packets(k.exchanges);
            }
        }
    }
    EXPECT_NEAR(r.packetsPerUnit, packets / double(started), 1e-9);
    EXPECT_EQ(r.unitsFailed, 0u);
    EXPECT_EQ(r.deliveryErrors, 0u);
    EXPECT_EQ(r.traceIpv6Connections, 3u);
    EXPECT_EQ(r.traceIpv6Packets, ipv6Packets);
}

TEST(LbWorkload, TraceOfIpv6ConnectionsOnlyIsRefusedByName)
{
    uint64_t ipv6Packets = 0;
    PcapWriter w;
    for (uint16_t k = 0; k < 5; ++k)
    {
        w.Segment6(100 * k, 0x10, static_cast<uint16_t>(50000 + k), 0x80, 80, 0x02, 0);
        ++ipv6Packets;
    }
    LbScenarioConfig c = Http10(1e4, 0.001);
    c.traceFile = w.Write("lb-ipv6.pcap");
    try
    {
        RunLbScenario(c);
        ADD_FAILURE() << "an IPv6-only trace was accepted";
    }
    catch (const std::invalid_argument& e)
    {
        const std::string what = e.what();
        EXPECT_NE(what.find("its 5 IPv6 connections are not replayed"), std::string::npos) << what;
        EXPECT_NE(what.find("lb-ipv6.pcap"), std::string::npos) << what;
    }
}

TEST(LbWorkload, WindowCarriesOverToTheNextResponseOfAConnection)
{
    // A keep-alive connection: 30 segments, then 38. The first response
    // takes 2 rounds (10, 20) and leaves the window at 10 + 2 x 14 = 38
    // (each ACK but the last's, which rides on the next request), so the
    // second goes in one flight, back to back; a fresh connection would
    // need ceil(log2(38 / 10 + 1)) = 3 rounds for it.
    std::vector<KeepAliveConnection> conns = {{1000, {{64, 30 * kMss}, {64, 38 * kMss}}}, {2000, {{64, 64}}}};
    uint64_t none = 0;
    LbTesterConfig tc;
    tc.traceFile = WriteKeepAlive(conns, 0, none).Write("lb-keepalive-window.pcap");
    tc.traceRescale = false;
    tc.window.rttSeconds = 1e-3;
    tc.window.receiveWindowBytes = 1u << 24;
    const std::map<uint32_t, uint64_t> at = WindowedConnection(tc);
    const uint32_t first1 = 4, request2 = first1 + 30 + 14, first2 = request2 + 1;
    ASSERT_EQ(at.size(), 3 + 1 + 44 + 1 + 38 + 18 + 3);
    // the next request: a round trip after the response's last segment and
    // the think time captured (52 us, as captured: rescale off)
    EXPECT_EQ(at.at(request2), at.at(SegmentStep(first1, 29)) + kTxPs + kRttPs + 52'000'000);
    for (uint64_t i = 0; i < 38; ++i)
    {
        EXPECT_EQ(at.at(SegmentStep(first2, i)), at.at(request2) + kGapPs + i * kTxPs) << i;
    }
    // Paced (no windows): every step a step gap after the one before, and
    // the think time before the second request.
    tc.window.enabled = false;
    tc.workload = LbWorkload::kHttp10;
    tc.rate = 1e3;
    LbTester paced(tc, 1);
    paced.SetEnd(1);
    std::vector<LbTxPacket> pkts;
    paced.Emit(UINT64_MAX, pkts);
    ASSERT_EQ(pkts.size(), at.size());
    for (const LbTxPacket& p : pkts)
    {
        EXPECT_EQ(p.timePs, p.step * kGapPs + (p.step >= request2 ? 52'000'000 : 0)) << p.step;
    }
}

TEST(LbWorkload, ZipfPopularityPicksConnectionsAndServicesByThePmf)
{
    // http11: 1920 persistent connections, Zipf(1.1): the top 20 ranks'
    // shares of 200,000 transactions each within 4 binomial sd of k^-s / H.
    const double s = 1.1;
    auto pmf = [s](uint32_t rank, uint32_t n) {
        double h = 0;
        for (uint32_t k = 1; k <= n; ++k)
        {
            h += std::pow(double(k), -s);
        }
        return std::pow(double(rank), -s) / h;
    };
    for (const std::string workload : {"http11", "http10"})
    {
        LbTesterConfig tc;
        tc.workload = ParseLbWorkload(workload);
        tc.rate = 1e8;
        tc.popularity = FlowPopularity::kZipf;
        tc.zipfExponent = s;
        const uint32_t services = 96;
        LbTester tester(tc, services);
        L4BalancerConfig lc;
        lc.services = services;
        L4Balancer lb(lc);
        tester.Setup(lb);
        tester.SetEnd(2'000'000'000); // 2 ms: 200,000 units
        std::vector<LbTxPacket> pkts;
        tester.Emit(2'000'000'000, pkts);
        const uint32_t n = workload == "http11" ? 96 * 20 : services;
        std::vector<uint64_t> count(n, 0);
        const uint64_t units = 200000;
        for (uint64_t u = 0; u < units; ++u)
        {
            ++count[workload == "http11" ? tester.ConnectionOf(0, u) : tester.ServiceOf(0, u)];
        }
        for (uint32_t k = 1; k <= 20; ++k)
        {
            const double p = pmf(k, n);
            EXPECT_NEAR(double(count[k - 1]), units * p, 4 * std::sqrt(units * p * (1 - p))) << workload << " " << k;
        }
    }
}

TEST(LbWorkload, UploadTakesTheSameRoundsWithTheServersAcksAtOnce)
{
    // A 150-segment request (an upload) under windows: the client's
    // segments cross the balancer in ceil(log2(150 / 10 + 1)) = 4 rounds,
    // round k at k (RTT + 2 tx) after the first, as a response's; the
    // server's ACK of segments 2j and 2j + 1 crosses as soon as 2j + 1 has
    // arrived (tx later); the last segment's ACK rides on the response, a
    // step gap after it. A connection is 6 + 150 + 74 + 1 packets.
    LbTesterConfig tc;
    tc.window.rttSeconds = 1e-3;
    tc.window.receiveWindowBytes = 1u << 24;
    tc.requestBytes = 150 * kMss;
    const std::map<uint32_t, uint64_t> at = WindowedConnection(tc);
    ASSERT_EQ(at.size(), 6u + 150 + 74 + 1);
    const uint64_t t0 = 2 * kGapPs + kRttPs; // SYN, SYN-ACK, the client's ACK (an RTT), the request
    for (uint64_t i = 0; i < 150; ++i)
    {
        uint32_t k = 0;
        while (10 * ((uint64_t{2} << k) - 1) <= i)
        {
            ++k;
        }
        const uint64_t pos = i - 10 * ((uint64_t{1} << k) - 1);
        EXPECT_EQ(at.at(SegmentStep(3, i)), t0 + k * (kRttPs + 2 * kTxPs) + pos * kTxPs) << i;
    }
    for (uint64_t j = 0; j < 74; ++j)
    {
        EXPECT_EQ(at.at(AckStep(3, j)), at.at(SegmentStep(3, 2 * j + 1)) + kTxPs) << j;
    }
    const uint32_t response = 3 + 150 + 74;
    EXPECT_EQ(at.at(response), at.at(SegmentStep(3, 149)) + kGapPs);
}
