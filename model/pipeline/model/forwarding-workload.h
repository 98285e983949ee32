// ForwardingWorkload: what an IPv4 forwarder does to each packet, run on the
// real data-plane core, and what that costs in core cycles.
//
// Per packet: dp_parse (IPv4 header checksum verified), dp_lpm_lookup of the
// destination in a DIR-24-8 table, dp_ip4_decrement_ttl (RFC 1624 checksum
// update). The dp_ops counters that work produced, priced by CycleCost, are
// the packet's service cycles; the core's verdict (DP_OK or a drop reason)
// is its fate.
//
// Flow f is a UDP flow 198.18.x.y -> 198.19.x.y (RFC 2544's benchmark
// range, x.y = f), ports 1024+f -> 7, TTL 64. The table routes 198.19.0.0/16
// plus `extraRoutes` /24 filler prefixes inside 10.0.0.0/8. Flows numbered
// >= firstUnroutedFlow go to 203.0.113.0/24 (TEST-NET-3), which has no
// route: the core drops them as no_route.
//
// The core is deterministic, so by default it runs once per distinct
// (flow, frame size) and later packets of that template reuse its counters
// and verdict (counted as if run); runCorePerPacket runs it on every packet.
// Templates are kept per flow in one way per size of a frame-size mix
// (frameSizes), or in `ways` ways chosen by frame size mod ways (traces:
// any size); a size that finds its way taken by another replaces it.
#ifndef ROUTERTWIN_FORWARDING_WORKLOAD_H
#define ROUTERTWIN_FORWARDING_WORKLOAD_H

#include "cycle-cost.h"
#include "dp.h"
#include "pipeline-engine.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace routertwin
{

struct ForwardingWorkloadConfig
{
    CycleCost cost;                          ///< prices of the dp_ops counters
    uint32_t extraRoutes = 0;                ///< filler /24 routes (table size), <= 65536
    uint32_t firstUnroutedFlow = UINT32_MAX; ///< flows from here on have no route
    bool runCorePerPacket = false;           ///< run the core on every packet
    std::vector<uint32_t> frameSizes;        ///< the sizes of a mix: one template way each
    uint32_t ways = 1;                       ///< without frameSizes: ways per flow (size mod ways)
    /// Fixed cycles per packet by frame size, in place of cost.fixedCyclesPerPacket
    /// (paths whose per-size cost is not the C core's counters, e.g. L2).
    std::map<uint32_t, double> fixedCyclesBySize;
};

class ForwardingWorkload
{
  public:
    /// Builds the routing table, or reuses the one the last workload of this
    /// process built for the same extraRoutes (the ~64 MiB DIR-24-8 table
    /// takes longer to clear than a short run takes to simulate; lookups
    /// never modify it). Throws std::invalid_argument on a bad config.
    explicit ForwardingWorkload(const ForwardingWorkloadConfig& config);

    /// Sets serviceCycles and dpDrop of each descriptor from its flow and
    /// frameBytes (64..9216, incl. FCS).
    void Apply(PacketDesc* descs, size_t n);

    /// Counters summed over every packet applied.
    dp_ops_t Ops() const;
    /// Packets applied, and how many times the core actually ran.
    uint64_t Packets() const { return m_packets; }
    uint64_t CoreRuns() const { return m_coreRuns; }
    /// Sum of service cycles over the packets applied.
    double SumCycles() const { return m_sumCycles; }

    /// The frame (no FCS) the workload sends for a flow and frame size.
    std::vector<uint8_t> BuildFrame(uint32_t flow, uint32_t frameBytes) const;

  private:
    struct Template
    {
        uint32_t frameBytes = 0; // 0: empty slot
        uint32_t cycles = 0;
        uint8_t verdict = DP_OK;
        dp_ops_t ops{};
        uint64_t uses = 0; // memoized packets not yet folded into m_ops
    };

    size_t Slot(uint32_t flow, uint32_t frameBytes) const;
    Template& Lookup(uint32_t flow, uint32_t frameBytes, size_t& slot);
    void Fold(Template& t);
    void RunCore(const std::vector<uint8_t>& frame, dp_ops_t& ops, uint8_t& verdict);
    double PriceCycles(const dp_ops_t& ops, uint32_t frameBytes) const;

    struct Fib; // a built routing table, shared read-only between workloads
    static std::shared_ptr<const Fib> SharedFib(uint32_t extraRoutes);

    ForwardingWorkloadConfig m_cfg;
    std::shared_ptr<const Fib> m_fib;
    const dp_lpm_t* m_lpm = nullptr;
    uint32_t m_ways = 1;
    std::vector<uint8_t> m_wayOfSize;   // frame bytes -> way, with frameSizes
    std::vector<Template> m_templates;  // flow * m_ways + way
    std::vector<std::vector<uint8_t>> m_frames; // runCorePerPacket: each template's frame
    std::vector<uint8_t> m_scratch;
    dp_ops_t m_ops{}; // packets run through the core, and folded templates
    uint64_t m_packets = 0, m_coreRuns = 0;
    double m_sumCycles = 0;
};

} // namespace routertwin

#endif
