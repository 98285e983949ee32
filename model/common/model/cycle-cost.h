// Cycle cost model: turns the data-plane core's operation counters into
// cycles on a given platform. A platform profile (scenarios/platforms/*.yaml)
// supplies the prices; the core supplies the counts.
#ifndef ROUTERTWIN_CYCLE_COST_H
#define ROUTERTWIN_CYCLE_COST_H

#include "dp_ops.h"

#include <array>
#include <string>

namespace routertwin
{

/// Prices of a workload on one core of a platform.
struct CycleCost
{
    double clockHz = 1e9;            ///< core clock
    double fixedCyclesPerPacket = 0; ///< dispatch, descriptor handling, work fetch
    double cyclesPerFrameByte = 0;   ///< per byte of the frame (copies, DMA touch)
    /// Cycles per unit of each dp_ops_t counter, in dp_ops_counter_name order.
    std::array<double, DP_OPS_NUM_COUNTERS> perCounter{};

    /// Sets the price of the counter named `name`; throws std::invalid_argument
    /// naming the counter when it does not exist.
    void SetCounterPrice(const std::string& name, double cycles);

    /// Cycles for one packet of frameBytes whose work produced `ops`.
    double Cycles(const dp_ops_t& ops, double frameBytes) const;
    /// Cycles of the counted work alone, for work that is not a packet (an
    /// aging sweep): the counters priced, no fixed or per-byte part.
    double CounterCycles(const dp_ops_t& ops) const;

    /// Service time in seconds for the same packet.
    double Seconds(const dp_ops_t& ops, double frameBytes) const
    {
        return Cycles(ops, frameBytes) / clockHz;
    }
};

} // namespace routertwin

#endif
