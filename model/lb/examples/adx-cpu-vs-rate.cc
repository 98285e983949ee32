// The Tolly load-step method in miniature: HTTP/1.1 transactions (IxLoad's
// 96 users x 20 persistent connections to 96 virtual services) offered to a
// 32-core L4 balancer at 1M..4M transactions/s; at each step the mean
// application-core CPU read over the window (and the engine's busy time), beside the closed form
// CPU = rate x cycles per transaction / (cores x clock).
// Prices: 1,000 cycles per packet, the counted core work free, so a
// transaction (2 packets) costs exactly 2,000 cycles.
#include "lb-scenario.h"

#include <cstdio>

int
main()
{
    using namespace routertwin;
    for (double tps : {1e6, 2e6, 3e6, 4e6})
    {
        LbScenarioConfig c;
        c.workload = "http11";
        c.rate = tps;
        c.fixedCyclesPerPacket = 1000;
        c.durationSeconds = 0.01;
        const LbScenarioResult r = RunLbScenario(c);
        std::printf("%.0f TPS: CPU %.2f %% (closed form %.2f %%), busiest core %.2f %%, engine busy time "
                    "%.2f %%, %.0f cycles/transaction, completed %.0f TPS\n",
                    tps, r.cpuMeanPct, r.cpuClosedFormPct, r.cpuMaxPct, r.cpuSpanMeanPct, r.cyclesPerUnit,
                    r.completedRate);
    }
    return 0;
}
