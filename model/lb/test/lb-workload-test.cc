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
