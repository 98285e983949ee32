#include "ns3-run-state.h"

#include <ns3/config.h>
#include <ns3/mac48-address.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>

namespace routertwin
{

void
BeginNs3Run(uint32_t seed)
{
    ns3::Simulator::Destroy();
    ns3::Config::Reset();
    // after Config::Reset, which puts RngSeed and RngRun back too; random
    // variables read them when their stream is set (AssignStreams)
    ns3::RngSeedManager::SetSeed(seed);
    ns3::RngSeedManager::SetRun(1);
    ns3::Mac48Address::ResetAllocationIndex();
}

} // namespace routertwin
