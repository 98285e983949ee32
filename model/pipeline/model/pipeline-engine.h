// PipelineEngine: a multi-core packet-processing pipeline (network processor
// or software router) over compact packet descriptors, with no ns-3 types.
//
// Resources, in the order a packet meets them:
//   input queue (bounded)  -> packet input engine (pps ceiling)
//   -> memory/IO bandwidth (bytes/s) -> work distribution to N cores
//      (SSO-like ORDERED / ATOMIC / UNTAGGED, or per-core RSS queues)
//   -> core service (cycles / clock, optional global lock section)
//   -> per-flow release (ORDERED) -> packet output engine (pps ceiling)
//   -> egress line (Ethernet wire bytes / bit rate) -> fixed pipeline latency.
//
// Instead of an event queue per stage, each packet's start and finish are
// computed from the next-free times of the resources it uses (max-plus
// recurrences), in arrival order; only the egress side is re-ordered, by
// release time, through a small heap (see docs/model.md). Service-rate
// ceilings (input, memory, output) limit throughput but add no latency of
// their own: their per-packet latency belongs to FixedLatency.
//
// Approximations, stated: cores are handed work in arrival order (a later
// packet never overtakes an earlier one for a core, except that ATOMIC picks
// the best-fitting free core); the lock and a flow's section tag are granted
// in dispatch order; the egress side is unbounded (no back-pressure to the
// cores).
//
// Time is integer picoseconds at the interface; internally 1/1024 ps, so
// that pps ceilings such as 104.9 Mpps have no visible rounding.
#ifndef ROUTERTWIN_PIPELINE_ENGINE_H
#define ROUTERTWIN_PIPELINE_ENGINE_H

#include "dp_drop.h"
#include "packet-desc.h"
#include "queue-length-histogram.h"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace routertwin
{

/// How work reaches the cores.
enum class WorkScheduling : uint8_t
{
    kOrdered,  ///< SSO ORDERED tag: any core, parallel; released per flow in order
    kAtomic,   ///< SSO ATOMIC tag: one packet of a flow in service at a time
    kUntagged, ///< SSO UNTAGGED / parallel: any core, no ordering
    kRss,      ///< NIC RSS: flow hash -> one core's FIFO queue
};

/// Parses "ordered", "atomic", "untagged", "rss"; throws std::invalid_argument.
WorkScheduling ParseWorkScheduling(const std::string& name);
const char* WorkSchedulingName(WorkScheduling s);

/// Why the pipeline dropped a packet (VPP style: enum + string table).
enum class PipelineDrop : uint8_t
{
    kNone = 0,
    kInputQueueFull, ///< input queue at InputQueueDepth when the packet arrived
    kCoreQueueFull,  ///< RSS: the flow's core queue at CoreQueueDepth
    kDataPlane,      ///< the data-plane work refused it (reason in PacketDesc::dpDrop)
    kCount
};

/// Stable snake_case name: "input_queue_full", "core_queue_full", "data_plane".
const char* PipelineDropName(PipelineDrop d);

/// Every reason a descriptor through a pipeline can be dropped for, as one
/// list: the engine's own (input_queue_full, core_queue_full), then the data
/// plane's dp_drop names in dp_drop_reason_t order (the work refused it). The
/// reason axis of the drop timeline (LossTimeline) of a pipeline, or of a
/// device built on one.
std::vector<std::string> PipelineDropReasons();
/// The index in PipelineDropReasons() of a dropped descriptor: its dp_drop
/// reason if the work refused it, else its PipelineDrop. Throws
/// std::invalid_argument for a descriptor that was not dropped.
unsigned PipelineDropReasonIndex(const PacketDesc& d);

/// Static configuration. A value of 0 for a ceiling, rate or depth means "none".
struct PipelineConfig
{
    uint32_t numCores = 1;             ///< cores processing packets
    double clockHz = 1e9;              ///< core clock, Hz
    WorkScheduling scheduling = WorkScheduling::kOrdered;
    double inputPpsCeiling = 0;        ///< packet input engine, packets/s, shared
    double outputPpsCeiling = 0;       ///< packet output engine, packets/s, shared
    double memoryBytesPerSecond = 0;   ///< memory/IO bandwidth, bytes/s
    double memoryBytesPerFrameByte = 2;///< memory traffic per frame byte (DMA in + out)
    double memoryBytesPerPacket = 0;   ///< fixed memory traffic per packet (descriptors)
    double egressBitRate = 0;          ///< egress Ethernet port, bit/s
    double copyCyclesPerByte = 0;      ///< extra core cycles per frame byte (copies)
    double cryptoCyclesPerByte = 0;    ///< extra core cycles per frame byte (cipher+MAC)
    double lockHoldCycles = 0;         ///< cycles of each packet's service under a global lock
    /// ORDERED only: the last cycles of each packet's service under its flow's
    /// ATOMIC tag, switched to from ORDERED (an SSO tag switch the core spins
    /// on, cvmx_pow_tag_sw_wait): granted per flow in dispatch order, a core
    /// waiting for the tag stays busy. Not with lockHoldCycles.
    double flowSectionCycles = 0;
    uint64_t fixedLatencyPs = 0;       ///< pipeline depth: input/output engines, DMA, ps
    uint32_t inputQueueDepth = 0;      ///< packets admitted but not yet on a core (RSS: not yet
                                       ///< past the input engine)
    uint32_t coreQueueDepth = 0;       ///< RSS: packets waiting per core

    /// Throws std::invalid_argument naming the first bad field.
    void Validate() const;
};

/// Busy time and utilization of one resource.
struct ResourceUsage
{
    std::string name;   ///< "cores", "ordering", "packet_input", "packet_output",
                        ///< "memory", "line_rate", "lock"
    double busySeconds; ///< total service time the resource gave
    double utilization; ///< busySeconds / (capacity * duration)
};

struct PipelineReport
{
    double durationSeconds = 0;             ///< first arrival to last departure (or arrival)
    std::vector<ResourceUsage> resources;   ///< fixed order, see ResourceUsage::name
    std::vector<double> coreUtilization;    ///< per core
    std::string bottleneck;                 ///< the most utilized shared resource if >= 0.95,
                                            ///< else "cores" if they are more utilized; ""
                                            ///< when that is < 0.95 and nothing was dropped
                                            ///< for lack of room
    double bottleneckUtilization = 0;
};

/// Cumulative counters; read at any time.
struct PipelineCounters
{
    uint64_t offered = 0;   ///< packets given to Process
    uint64_t started = 0;   ///< packets that reached a core
    uint64_t departed = 0;  ///< packets emitted with a departure time
    std::array<uint64_t, static_cast<size_t>(PipelineDrop::kCount)> drops{};
    std::array<uint64_t, DP_DROP__COUNT> dpDrops{};
    double sumWaitSeconds = 0;    ///< sum over started packets of (core start - arrival)
    double sumServiceSeconds = 0; ///< sum of core service (incl. lock wait)
    double sumLatencySeconds = 0; ///< sum over departed of (departPs - arrivalPs)
};

class PipelineEngine
{
  public:
    explicit PipelineEngine(const PipelineConfig& config);

    /// Offers n packets in nondecreasing arrivalPs (also across calls). Reads
    /// arrivalPs, flow, serviceCycles, frameBytes, dpDrop. Appends packets that
    /// are now certain to leave, with departPs set, to `departed` in departure
    /// order, and dropped ones, with `drop` set, to `dropped`. A packet may be
    /// emitted by a later call than the one that offered it.
    void Process(const PacketDesc* in, size_t n, std::vector<PacketDesc>& departed,
                 std::vector<PacketDesc>& dropped);

    /// Emits every packet still held: call when no more packets will arrive.
    void Flush(std::vector<PacketDesc>& departed);

    /// Background work that is not a packet (a session table's aging sweep)
    /// on one core, RSS mode only: it starts when the core is free and no
    /// earlier than readyPs (nondecreasing like arrivals), keeps the core busy
    /// for `cycles`, and delays the packets queued behind it. Counts in the
    /// core's busy time and utilization, not in the packet counters. Returns
    /// the time (ps) it ends. Throws std::logic_error outside RSS mode.
    uint64_t AddCoreWork(uint32_t core, uint64_t readyPs, double cycles);

    const PipelineCounters& Counters() const { return m_counters; }

    /// Time-weighted lengths of the cores' queue (issue 15): packets
    /// admitted and not yet done on a core (waiting in the input, work or
    /// RSS queue, or in service), from the first arrival to the last core
    /// finish. ORDERED, UNTAGGED and ATOMIC feed the cores from one queue,
    /// counted as one; RSS gives each core its own, and the histogram is
    /// theirs added (the time a core's queue spent at each length, summed
    /// over cores). Background work (AddCoreWork) is not a packet and does
    /// not count.
    QueueLengthHistogram CoreQueueLengths() const;
    const PipelineConfig& Config() const { return m_cfg; }

    /// Utilization of every resource over the span from the first arrival to
    /// the last departure seen so far, and the bottleneck.
    PipelineReport Report() const;

    /// Core service time in seconds of a packet with these cycles and size
    /// (per-byte costs included, lock not). Cycles may be a mean over packets.
    double ServiceSeconds(double serviceCycles, double frameBytes) const;

  private:
    using Tick = uint64_t; // 1/1024 ps
    // Packet waiting for its egress turn, ordered by (release, dispatch
    // order). key = order << 24 | slot: comparing keys compares dispatch
    // order (unique), and slot finds the descriptor in m_slots.
    struct Held
    {
        Tick release;
        uint64_t key;
    };
    struct HeldLater // min-heap comparator for std::*_heap
    {
        bool operator()(const Held& a, const Held& b) const
        {
            return a.release > b.release || (a.release == b.release && a.key > b.key);
        }
    };
    struct CoreSlot // FIFO hand-out heap entry: cores ordered by (free, id)
    {
        Tick free;
        uint32_t id;
    };

    uint32_t PickCoreFifo(Tick ready, Tick& start);
    uint32_t PickCoreAtomic(Tick ready, Tick flowFree, Tick& start);
    void SetCoreFree(uint32_t core, Tick t);
    Tick MinCoreFree() const;
    void Egress(Tick release, const PacketDesc& desc, std::vector<PacketDesc>& departed);
    void Drain(Tick lowerBound, std::vector<PacketDesc>& departed);
    void DropAt(const PacketDesc& d, PipelineDrop why, std::vector<PacketDesc>& dropped);
    void GrowFlows(uint32_t flow);

    PipelineConfig m_cfg;
    double m_ticksPerCycle;
    double m_extraCyclesPerByte;
    Tick m_inputOcc, m_outputOcc, m_lockTicks, m_flowSectionTicks, m_fixedLatency;
    double m_memTicksPerByte;
    double m_lineTicksPerByte;

    Tick m_inputFree = 0, m_memFree = 0, m_outputFree = 0, m_lineFree = 0, m_lockFree = 0;
    std::vector<Tick> m_coreFree;
    std::vector<CoreSlot> m_coreHeap;   // FIFO modes: min-heap on (free, id)
    std::vector<Tick> m_flowFree;       // ATOMIC, flow section: tag free time
    std::vector<Tick> m_flowRelease;    // ORDERED: last release per flow
    std::vector<Tick> m_flowBusy;       // ATOMIC, flow section: time each tag was held
    std::vector<Tick> m_inputQueue;     // ATOMIC: min-heap of leave times of queued packets
    std::deque<Tick> m_inputFifo;       // other modes: leave times, which never decrease
    std::vector<std::vector<Tick>> m_coreQueue; // RSS: per-core ring of start times
    std::vector<uint32_t> m_coreQueueHead, m_coreQueueLen;
    // Held packets: those released in dispatch order (the common case) form
    // a sorted run in m_heldRun; the others wait in the heap m_held. Egress
    // takes the smaller head of the two.
    std::deque<Held> m_heldRun;
    std::vector<Held> m_held;           // min-heap on (release, order)
    std::vector<PacketDesc> m_slots;    // descriptors of held packets
    std::vector<uint32_t> m_freeSlots;
    uint64_t m_order = 0;

    // busy-time accounting, in ticks
    Tick m_busyInput = 0, m_busyOutput = 0, m_busyLock = 0, m_busyLine = 0;
    double m_busyMemTicks = 0;
    std::vector<Tick> m_coreBusy;
    bool m_any = false;
    Tick m_firstArrival = 0, m_lastArrival = 0, m_lastDepart = 0;
    PipelineCounters m_counters;
    std::vector<QueueOccupancy> m_coreOccupancy; // one per queue feeding the cores (RSS: per core)
};

} // namespace routertwin

#endif
