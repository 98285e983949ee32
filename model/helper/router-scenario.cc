#include "router-scenario.h"

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <chrono>

namespace routertwin
{

namespace
{
struct Driver
{
    RouterEngine* engine;
    const RouterConfig* cfg;
    double limit;
    uint64_t events = 0;

    void Batch()
    {
        ++events;
        double t = ns3::Simulator::Now().GetSeconds();
        engine->Advance(t);
        if ((t >= cfg->durationSeconds && engine->Drained()) || t >= limit)
        {
            ns3::Simulator::Stop();
            return;
        }
        ns3::Simulator::Schedule(ns3::Seconds(cfg->batchSeconds), &Driver::Batch, this);
    }
};
} // namespace

RouterScenarioResult
RunRouterScenario(const RouterConfig& cfg)
{
    auto t0 = std::chrono::steady_clock::now();
    RouterEngine engine(cfg);
    Driver d{&engine, &cfg,
             cfg.durationSeconds + cfg.ingressBufferSeconds + cfg.egressBufferSeconds +
                 cfg.lookupQueueSeconds + 1e-3};
    ns3::Simulator::Schedule(ns3::Seconds(cfg.batchSeconds), &Driver::Batch, &d);
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
    RouterScenarioResult r;
    r.result = engine.Result();
    r.events = d.events;
    r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace routertwin
