// How many cores does 10 Gbit/s of 64-byte packets need? A multi-core
// forwarding pipeline (each packet runs the C core's parse, route lookup and
// TTL rewrite, priced at 400 cycles on a 1.5 GHz core) is offered 10GbE line
// rate by an RFC 2544 tester, with 1, 2, ... cores. One core serves
// 1.5e9 / 400 = 3.75 Mpps; line rate is 14.88 Mpps, so 4 cores must be the
// first to forward everything.
//
//   ./pipeline-cores-for-line-rate
#include "forwarding-scenario.h"

#include <cstdio>

using namespace routertwin;

int
main()
{
    for (uint32_t cores = 1; cores <= 5; ++cores)
    {
        ForwardingScenarioConfig c;
        c.numCores = cores;
        c.clockHz = 1.5e9;
        c.fixedCyclesPerPacket = 400;
        c.frameBytes = 64;
        c.portBitRate = 10e9;
        c.durationSeconds = 2e-3;
        c.numFlows = 64;
        const ForwardingScenarioResult r = RunForwardingScenario(c);
        std::printf("%u cores: forwarded %6.3f Mpps of %6.3f offered, loss %5.2f%%, bottleneck %s\n",
                    cores, r.forwardedPps / 1e6, r.offeredPps / 1e6, r.lossPct,
                    r.bottleneck.empty() ? "none" : r.bottleneck.c_str());
    }
    return 0;
}
