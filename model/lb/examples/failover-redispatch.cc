// What a dead server costs while HAProxy's health checks find it: three
// servers behind round robin, checks "inter 2000 fastinter 500 fall 3",
// server 1 refuses connections from 7.3 s. The detection time beside the
// closed-form window (fall failures, fastinter between them, up to one
// inter before the first failing probe), then the requests that fail during
// it with "retries 3" and without and with "option redispatch".
#include "lb-failover.h"

#include <cstdio>

int
main()
{
    using namespace routertwin;
    LbFailoverConfig c;
    c.servers = 3;
    c.interMs = {2000};
    c.fastInterMs = {500};
    c.fall = {3};
    c.killServer = 1;
    c.killAtS = 7.3;
    c.requestRate = 300;
    c.durationS = 14;
    for (bool redispatch : {false, true})
    {
        c.redispatch = redispatch;
        const LbFailoverResult r = RunLbFailover(c);
        std::printf("redispatch %-3s: server 1 DOWN after %.0f ms (closed-form window %.0f..%.0f ms); "
                    "%llu of %llu requests went to it, %llu failed, %llu redispatched\n",
                    redispatch ? "on" : "off", r.detectionMs, r.windowMinMs, r.windowMaxMs,
                    static_cast<unsigned long long>(r.toDeadServer), static_cast<unsigned long long>(r.requests),
                    static_cast<unsigned long long>(r.failed), static_cast<unsigned long long>(r.redispatched));
    }
    return 0;
}
