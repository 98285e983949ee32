#include "t640-tester-traffic.h"

#include "dp_csum.h"

#include <cmath>
#include <stdexcept>

namespace routertwin
{

namespace
{
void
Put32(uint8_t* p, uint32_t v)
{
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}
} // namespace

void
BuildTesterPacket(const TesterStreamConfig& cfg, uint64_t seq, double txSeconds,
                  std::vector<uint8_t>& out, uint64_t dstIndex)
{
    if (cfg.ipBytes < 32)
    {
        throw std::invalid_argument("tester packets need at least 32 octets (20 IP + 12 signature)");
    }
    if (cfg.dstIps.empty())
    {
        throw std::invalid_argument("tester stream has no destination address");
    }
    out.assign(cfg.ipBytes, 0);
    uint8_t* h = out.data();
    h[0] = 0x45;
    h[2] = static_cast<uint8_t>(cfg.ipBytes >> 8);
    h[3] = static_cast<uint8_t>(cfg.ipBytes);
    h[4] = static_cast<uint8_t>(seq >> 8);
    h[5] = static_cast<uint8_t>(seq);
    h[8] = 64;
    h[9] = 253;
    Put32(h + 12, cfg.srcIp);
    Put32(h + 16, cfg.dstIps[(dstIndex == kCycleDestinations ? seq : dstIndex) % cfg.dstIps.size()]);
    uint16_t csum = dp_csum(h, 20, nullptr);
    h[10] = static_cast<uint8_t>(csum >> 8);
    h[11] = static_cast<uint8_t>(csum);
    uint8_t* sig = h + 20;
    Put32(sig, static_cast<uint32_t>(seq));
    // Timestamps wrap at 32 bits like a free-running tester counter.
    auto ticks = static_cast<uint64_t>(std::floor(txSeconds / cfg.tickSeconds));
    Put32(sig + 4, static_cast<uint32_t>(ticks));
    Put32(sig + 8, cfg.streamId);
}

TesterLineStats
MeasureTesterLine(const TesterStreamConfig& cfg, const PppHdlcConfig& ppp, double payloadBps,
                  uint64_t packets)
{
    PosEncoder enc(ppp);
    std::vector<uint8_t> pkt;
    double t = 0;
    uint64_t escapes = 0;
    uint64_t bytes = 0;
    const double secondsPerByte = 8.0 / payloadBps;
    for (uint64_t k = 0; k < packets; ++k)
    {
        BuildTesterPacket(cfg, k, t, pkt);
        PosFrameInfo f = enc.Frame(pkt.data(), pkt.size());
        escapes += f.escapes;
        bytes += f.WireBytes();
        t += f.WireBytes() * secondsPerByte;
    }
    TesterLineStats s;
    s.frames = packets;
    if (packets == 0)
    {
        return s;
    }
    s.meanEscapes = static_cast<double>(escapes) / packets;
    s.meanWireBytes = static_cast<double>(bytes) / packets;
    s.pps = payloadBps / (8.0 * s.meanWireBytes);
    s.pctOfTheoretical = 100.0 * s.pps / TheoreticalPps(payloadBps, ppp, cfg.ipBytes);
    return s;
}

std::vector<uint32_t>
RouteDestinations(uint32_t firstPrefix, uint32_t routes)
{
    std::vector<uint32_t> d(routes);
    for (uint32_t i = 0; i < routes; ++i)
    {
        d[i] = (firstPrefix & 0xFFFFFF00u) + (i << 8) + 1;
    }
    return d;
}

} // namespace routertwin
