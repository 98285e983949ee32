#include "router-scenario.h"

#include "router-node.h"

#include "ns3/simulator.h"

#include <chrono>

namespace routertwin
{

RouterScenarioResult
RunRouterScenario(const RouterConfig& cfg)
{
    auto t0 = std::chrono::steady_clock::now();
    ns3::Ptr<RouterNode> node = ns3::CreateObject<RouterNode>();
    node->SetConfig(cfg);
    node->Start();
    ns3::Simulator::Run();
    RouterScenarioResult r;
    r.result = node->GetResult();
    r.events = node->GetBatches();
    node->Dispose();
    ns3::Simulator::Destroy();
    r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace routertwin
