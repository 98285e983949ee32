// Instructions per request on the L4 path (model/lb's L4Balancer::Process)
// and on the L7 path (model/l7's WebSwitch), for callgrind: the same
// HTTP/1.0 request (a GET of 5,792 response bytes: four 1,448-byte
// segments) on one connection per request, full NAT on both.
//
//   l7-l4-request-bench l4 N   N connections' frames through L4Balancer::Process
//   l7-l4-request-bench l7 N   N requests through the WebSwitch between ns-3 TCP hosts
//
// L4: the frames a balancer sees of one such connection, built with
// dp_build: from the client SYN, the handshake ACK, the request, two ACKs
// (one per two segments, RFC 1122), FIN, the last ACK; from the server
// SYN-ACK, the request's ACK, four data segments, FIN, the last ACK.
// L7: the same request from an HttpClientApp to an HttpServerApp through
// the switch (F5's profile), which sees the same connection on each side
// plus what delayed binding adds.
//
// bench/l7-l4-callgrind.py runs both under callgrind and prints the
// instructions per request (docs/nctu.md "Instructions per request").
#include "dp_pkt.h"
#include "l4-balancer.h"
#include "web-switch-testbed.h"

#include <ns3/simulator.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace routertwin;

constexpr uint8_t kFin = 0x01, kSyn = 0x02, kAck = 0x10, kPsh = 0x08;
constexpr uint16_t kMss = 1448;
constexpr uint32_t kSegments = 4;

struct Frame
{
    std::vector<uint8_t> bytes;
};

std::vector<uint8_t>
Build(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
      uint16_t payload)
{
    dp_build_spec_t s{};
    s.src_ip = src;
    s.dst_ip = dst;
    s.ttl = 64;
    s.ip_proto = DP_IPPROTO_TCP;
    s.src_port = sport;
    s.dst_port = dport;
    s.tcp_seq = seq;
    s.tcp_ack = ack;
    s.tcp_flags = flags;
    s.payload_len = payload;
    s.l4_checksum = 1;
    std::vector<uint8_t> f(dp_build_len(DP_IPPROTO_TCP, payload) + 64, 0);
    size_t n = 0;
    dp_build(&s, f.data(), f.size(), &n, nullptr);
    f.resize(n);
    return f;
}

uint64_t
RunL4(uint32_t requests)
{
    L4BalancerConfig cfg;
    cfg.cores = 1;
    cfg.services = 1;
    cfg.serversPerService = 2;
    L4Balancer lb(cfg);
    const uint32_t vip = 0x0A000001u; // 10.0.0.1: service 0
    const uint16_t request = 80;      // "GET /wbtree/CLASS_5792.htm HTTP/1.0" and its headers
    uint64_t processed = 0;
    std::vector<uint8_t> buf(2048);
    auto process = [&](std::vector<uint8_t> f, dp_parsed_t* out) {
        std::memcpy(buf.data(), f.data(), f.size());
        LbVerdict v = lb.Process(buf.data(), f.size(), buf.size(), 0, processed * 1000);
        ++processed;
        if (out)
            *out = v.out;
        return v;
    };
    for (uint32_t i = 0; i < requests; ++i)
    {
        const uint32_t client = 0xC6120000u | (i & 0xffffu); // 198.18.x.y
        const uint16_t port = static_cast<uint16_t>(10000 + i % 50000);
        const uint32_t c = 1000, s = 5000; // client and server ISNs
        dp_parsed_t out{};
        process(Build(client, port, vip, 80, c, 0, kSyn, 0), &out);
        const uint32_t server = out.dst_ip;
        const uint16_t snatPort = out.src_port;
        process(Build(server, 80, L4Balancer::kSnatIp, snatPort, s, c + 1, kSyn | kAck, 0), nullptr);
        process(Build(client, port, vip, 80, c + 1, s + 1, kAck, 0), nullptr);
        process(Build(client, port, vip, 80, c + 1, s + 1, kAck | kPsh, request), nullptr);
        process(Build(server, 80, L4Balancer::kSnatIp, snatPort, s + 1, c + 1 + request, kAck, 0), nullptr);
        for (uint32_t k = 0; k < kSegments; ++k)
        {
            process(Build(server, 80, L4Balancer::kSnatIp, snatPort, s + 1 + k * kMss, c + 1 + request, kAck, kMss),
                    nullptr);
            if (k % 2 == 1)
                process(Build(client, port, vip, 80, c + 1 + request, s + 1 + (k + 1) * kMss, kAck, 0), nullptr);
        }
        const uint32_t sEnd = s + 1 + kSegments * kMss;
        process(Build(server, 80, L4Balancer::kSnatIp, snatPort, sEnd, c + 1 + request, kFin | kAck, 0), nullptr);
        process(Build(client, port, vip, 80, c + 1 + request, sEnd + 1, kFin | kAck, 0), nullptr);
        process(Build(server, 80, L4Balancer::kSnatIp, snatPort, sEnd + 1, c + 2 + request, kAck, 0), nullptr);
    }
    std::printf("l4: %u requests, %llu frames through L4Balancer::Process, %llu connections left\n", requests,
                static_cast<unsigned long long>(processed), static_cast<unsigned long long>(lb.Connections()));
    return processed;
}

uint64_t
RunL7(uint32_t requests, const std::string& profile)
{
    WebSwitchTestbedConfig c;
    c.profile = LoadWebSwitchProfile(profile);
    std::vector<HttpClientApp::Request> list;
    for (uint32_t i = 0; i < requests; ++i)
        list.push_back(HttpClientApp::Get("/wbtree/CLASS_5792.htm", true));
    c.clients = {list};
    c.stop = ns3::Seconds(60);
    WebSwitchTestbed bed(c);
    bed.Switch()->AddUrlRule(DP_URL_EXT, "gif", 0);
    bed.Switch()->AddUrlRule(DP_URL_EXT, "htm", 1);
    bed.Run();
    const auto& k = bed.Switch()->GetCounters();
    std::printf("l7: %u requests, %zu answered, %llu packets handled by the switch (%.1f per request), "
                "%llu connection sides, %zu client connections left\n",
                requests, bed.Client(0)->Responses().size(), static_cast<unsigned long long>(k.packets),
                double(k.packets) / requests, static_cast<unsigned long long>(k.connectionSides), bed.Switch()->ClientConnections());
    for (const auto& [reason, n] : bed.Switch()->DropCounts())
        std::printf("l7: %llu segments counted as %s\n", static_cast<unsigned long long>(n), reason.c_str());
    const uint64_t packets = k.packets;
    ns3::Simulator::Destroy();
    return packets;
}
} // namespace

int
main(int argc, char** argv)
{
    if (argc < 3 || (std::strcmp(argv[1], "l4") != 0 && std::strcmp(argv[1], "l7") != 0))
    {
        std::fprintf(stderr, "usage: %s l4|l7 REQUESTS [PROFILE.yaml]\n", argv[0]);
        return 2;
    }
    const uint32_t n = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
    if (std::strcmp(argv[1], "l4") == 0)
        RunL4(n);
    else
        RunL7(n, argc > 3 ? argv[3] : ROUTERTWIN_SOURCE_DIR "/scenarios/platforms/nctu-f5-bigip-ha.yaml");
    return 0;
}
