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

namespace
{

// The counters of dp_ops_t in dp_ops_counter_name order, read in place: the
// pricing runs once per simulated frame, and an out-of-line
// dp_ops_counter call per counter was a third of its cost.
constexpr uint64_t dp_ops_t::*kCounters[DP_OPS_NUM_COUNTERS] = {
    &dp_ops_t::packets,      &dp_ops_t::bytes_parsed,    &dp_ops_t::bytes_written, &dp_ops_t::checksum_bytes,
    &dp_ops_t::csum_updates, &dp_ops_t::table_probes,    &dp_ops_t::cache_lines,   &dp_ops_t::table_writes,
    &dp_ops_t::rules_evaluated, &dp_ops_t::bytes_copied, &dp_ops_t::crypto_bytes,  &dp_ops_t::hashes,
    &dp_ops_t::servers_examined,
};

// Adds the priced counters to `cycles` in counter order. A counter with no
// price is skipped: its term is +0.0, and adding +0.0 to the running sum
// (never -0.0: it starts at +0.0 or a non-negative fixed part) changes no
// bit, so the result is the full sum's exactly.
double
AddCounters(double cycles, const std::array<double, DP_OPS_NUM_COUNTERS>& price, const dp_ops_t& ops)
{
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        if (price[i] != 0)
        {
            cycles += price[i] * static_cast<double>(ops.*kCounters[i]);
        }
    }
    return cycles;
}

} // namespace

double
CycleCost::Cycles(const dp_ops_t& ops, double frameBytes) const
{
    // summed in this order (not via CounterCycles) so that results stay bit-identical
    return AddCounters(fixedCyclesPerPacket + cyclesPerFrameByte * frameBytes, perCounter, ops);
}

double
CycleCost::CounterCycles(const dp_ops_t& ops) const
{
    return AddCounters(0, perCounter, ops);
}

} // namespace routertwin
