// A four-port slice of the Juniper T640 test (seed 001): OC-192c POS ports
// paired 0<->2 and 1<->3, 40-byte IP packets at 100% of the theoretical rate
// for 100 us, 10,000 routes in the forwarding engines' LPM, cells over a VOQ
// fabric. The RouterNode runs under the ns-3 scheduler, one event per batch.
// At 40 bytes each packet occupies 49 octets plus its byte stuffing on the
// 9,584.64 Mbit/s payload: at most 9,584.64e6 / (8 x 49) = 24.45 Mpps per
// port, 97.802 Mpps for four; stuffing escapes take the rest (the report's
// 99.7% of theoretical).
//
//   ./router-t640-four-ports
#include "router-scenario.h"

#include <cstdio>

using namespace routertwin;

int
main()
{
    RouterConfig c;
    c.ports = 4;
    c.ipBytes = 40;
    c.offeredLoad = 1.0;
    c.routes = 10000;
    c.durationSeconds = 100e-6;
    const RouterScenarioResult s = RunRouterScenario(c);
    const RouterResult& r = s.result;
    std::printf("theoretical %.3f Mpps, sent %.3f Mpps (%.3f%%), received %.3f%%\n",
                r.theoreticalPps / 1e6, r.txPps / 1e6, r.txPctOfTheoretical, r.rxPctOfTheoretical);
    std::printf("latency min/avg/max %.2f/%.2f/%.2f us, bottleneck %s, %llu ns-3 events\n",
                r.latencyMin * 1e6, r.latencyAvg * 1e6, r.latencyMax * 1e6,
                r.bottleneck.empty() ? "none" : r.bottleneck.c_str(),
                static_cast<unsigned long long>(s.events));
    return 0;
}
