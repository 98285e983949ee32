// Runs a RouterConfig under the ns-3 scheduler: one event per batch of
// simulated time (RouterConfig::batchSeconds), each advancing the
// packet-level engine to the event's time. Inside a batch packets are
// compact descriptors; ns-3 sees only the batch boundaries.
//
// The result equals RunRouterPacketLevel() for the same config (same seed,
// same batches); `wallSeconds` reports the wall time of the run.
#ifndef ROUTERTWIN_ROUTER_SCENARIO_H
#define ROUTERTWIN_ROUTER_SCENARIO_H

#include "router-model.h"

namespace routertwin
{

struct RouterScenarioResult
{
    RouterResult result;
    double wallSeconds = 0;
    uint64_t events = 0; ///< ns-3 events executed
};

/// Runs under ns3::Simulator and destroys the simulator afterwards.
RouterScenarioResult RunRouterScenario(const RouterConfig& cfg);

} // namespace routertwin

#endif
