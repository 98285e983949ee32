// Delayed binding, step by step: a client's request, written in three
// pieces, reaches the web switch, which answers the handshake itself,
// reads the request, picks the server by URL (.gif to server 0, .htm to
// server 1), opens its own connection to it and splices the two. Run with
// a profile file; a third argument writes the pcaps (docs/nctu.md).
#include "web-switch-testbed.h"

#include <ns3/simulator.h>

#include <cstdio>

int
main(int argc, char** argv)
{
    using namespace routertwin;
    if (argc < 2)
    {
        std::fprintf(stderr, "usage: %s PROFILE.yaml [PCAP-PREFIX]\n", argv[0]);
        return 2;
    }
    WebSwitchTestbedConfig c;
    c.profile = LoadWebSwitchProfile(argv[1]);
    if (argc > 2)
        c.pcapPrefix = argv[2];
    HttpClientApp::Request gif = HttpClientApp::Get("/wbtree/CLASS_223.gif");
    gif.pieces = {10, 20}; // "GET /wbtre", "e/CLASS_223.gif HTTP/", the rest
    c.clients = {{gif, HttpClientApp::Get("/wbtree/CLASS_4096.htm")}};
    WebSwitchTestbed bed(c);
    bed.Switch()->AddUrlRule(DP_URL_EXT, "gif", 0);
    bed.Switch()->AddUrlRule(DP_URL_EXT, "htm", 1);
    bed.Run();
    uint64_t body = 0;
    bool right = true;
    for (const auto& r : bed.Client(0)->Responses())
    {
        body += r.bodyBytes;
        right = right && r.bodyMatches && r.status == 200;
    }
    for (const auto& b : bed.Switch()->Bindings())
        std::printf("bound client port %u at seq %u to server %u: D_c = %u, D_s = %u\n", b.clientPort, b.reqSeq,
                    b.server, b.clientOffset, b.serverOffset);
    std::printf("%zu responses, %llu body bytes, %s; server 0 got %s, server 1 got %s\n",
                bed.Client(0)->Responses().size(), static_cast<unsigned long long>(body),
                right ? "all bytes right" : "WRONG BYTES",
                bed.Server(0)->Paths().empty() ? "-" : bed.Server(0)->Paths()[0].c_str(),
                bed.Server(1)->Paths().empty() ? "-" : bed.Server(1)->Paths()[0].c_str());
    ns3::Simulator::Destroy();
    return 0;
}
