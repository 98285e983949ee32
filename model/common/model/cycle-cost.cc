#include "cycle-cost.h"

#include <cstring>
#include <stdexcept>

namespace routertwin
{

void
CycleCost::SetCounterPrice(const std::string& name, double cycles)
{
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        if (name == dp_ops_counter_name(i))
        {
            perCounter[i] = cycles;
            return;
        }
    }
    throw std::invalid_argument("unknown operation counter '" + name + "'");
}

double
CycleCost::Cycles(const dp_ops_t& ops, double frameBytes) const
{
    // summed in this order (not via CounterCycles) so that results stay bit-identical
    double cycles = fixedCyclesPerPacket + cyclesPerFrameByte * frameBytes;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        cycles += perCounter[i] * static_cast<double>(dp_ops_counter(&ops, i));
    }
    return cycles;
}

double
CycleCost::CounterCycles(const dp_ops_t& ops) const
{
    double cycles = 0;
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        cycles += perCounter[i] * static_cast<double>(dp_ops_counter(&ops, i));
    }
    return cycles;
}

} // namespace routertwin
