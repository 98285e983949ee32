#include "pipeline-engine.h"

#include "ethernet-framing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace routertwin
{

namespace
{
constexpr double kTicksPerSecond = 1024e12;
constexpr int kTickShift = 10; // ticks per ps = 2^10
// Utilization from which a resource counts as binding (busy-time accounting
// over a finite run with a ramp-up and a drain tail never reaches 1 exactly).
constexpr double kSaturated = 0.95;

uint64_t
RoundTicks(double ticks)
{
    return static_cast<uint64_t>(ticks + 0.5);
}

// Murmur3 finaliser: RSS spreads flows over cores by a hash of the flow, as a
// NIC's Toeplitz hash does; collisions (two flows on one core) are real.
uint32_t
FlowHash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6BU;
    x ^= x >> 13;
    x *= 0xC2B2AE35U;
    x ^= x >> 16;
    return x;
}

// One shared server taking work in the order it is offered (an I/O engine,
// the memory bus, the egress line, the global lock): work ready at `at`
// starts when the server is free and holds it for `occ`. Returns the start;
// adds occ to the server's busy time (ticks, or a double where the caller
// keeps one). All times in ticks.
template <class Busy>
inline uint64_t
Occupy(uint64_t at, uint64_t occ, uint64_t& freeAt, Busy& busy)
{
    const uint64_t start = std::max(at, freeAt);
    freeAt = start + occ;
    busy += occ;
    return start;
}

const char* const kDropNames[] = {"none", "input_queue_full", "core_queue_full", "data_plane"};
static_assert(sizeof(kDropNames) / sizeof(kDropNames[0]) == static_cast<size_t>(PipelineDrop::kCount),
              "one name per PipelineDrop");

const char* const kSchedulingNames[] = {"ordered", "atomic", "untagged", "rss"};

void
Require(bool ok, const char* field, const char* what)
{
    if (!ok)
    {
        throw std::invalid_argument(std::string("pipeline config: ") + field + " " + what);
    }
}
} // namespace

WorkScheduling
ParseWorkScheduling(const std::string& name)
{
    for (unsigned i = 0; i < 4; ++i)
    {
        if (name == kSchedulingNames[i])
        {
            return static_cast<WorkScheduling>(i);
        }
    }
    throw std::invalid_argument("unknown scheduling '" + name +
                                "' (expected ordered, atomic, untagged or rss)");
}

const char*
WorkSchedulingName(WorkScheduling s)
{
    return kSchedulingNames[static_cast<unsigned>(s)];
}

const char*
PipelineDropName(PipelineDrop d)
{
    auto i = static_cast<size_t>(d);
    return i < static_cast<size_t>(PipelineDrop::kCount) ? kDropNames[i] : "unknown";
}

std::vector<std::string>
PipelineDropReasons()
{
    std::vector<std::string> names;
    for (size_t i = 1; i < static_cast<size_t>(PipelineDrop::kDataPlane); ++i)
    {
        names.emplace_back(kDropNames[i]);
    }
    for (int i = 1; i < DP_DROP__COUNT; ++i)
    {
        names.emplace_back(dp_drop_reason_name(static_cast<dp_drop_reason_t>(i)));
    }
    return names;
}

unsigned
PipelineDropReasonIndex(const PacketDesc& d)
{
    constexpr unsigned kEngineReasons = static_cast<unsigned>(PipelineDrop::kDataPlane) - 1;
    if (d.dpDrop != DP_OK && d.dpDrop < DP_DROP__COUNT)
    {
        return kEngineReasons + d.dpDrop - 1u;
    }
    if (d.drop > static_cast<uint8_t>(PipelineDrop::kNone) && d.drop < static_cast<uint8_t>(PipelineDrop::kDataPlane))
    {
        return d.drop - 1u;
    }
    throw std::invalid_argument("PipelineDropReasonIndex: the descriptor was not dropped");
}

void
PipelineConfig::Validate() const
{
    auto finiteNonNeg = [](double v) { return std::isfinite(v) && v >= 0; };
    Require(numCores >= 1 && numCores <= 4096, "numCores", "must be 1..4096");
    Require(std::isfinite(clockHz) && clockHz > 0, "clockHz", "must be > 0");
    Require(finiteNonNeg(inputPpsCeiling), "inputPpsCeiling", "must be >= 0");
    Require(finiteNonNeg(outputPpsCeiling), "outputPpsCeiling", "must be >= 0");
    Require(finiteNonNeg(memoryBytesPerSecond), "memoryBytesPerSecond", "must be >= 0");
    Require(finiteNonNeg(memoryBytesPerFrameByte), "memoryBytesPerFrameByte", "must be >= 0");
    Require(finiteNonNeg(memoryBytesPerPacket), "memoryBytesPerPacket", "must be >= 0");
    Require(finiteNonNeg(egressBitRate), "egressBitRate", "must be >= 0");
    Require(finiteNonNeg(copyCyclesPerByte), "copyCyclesPerByte", "must be >= 0");
    Require(finiteNonNeg(cryptoCyclesPerByte), "cryptoCyclesPerByte", "must be >= 0");
    Require(finiteNonNeg(lockHoldCycles), "lockHoldCycles", "must be >= 0");
    Require(finiteNonNeg(flowSectionCycles), "flowSectionCycles", "must be >= 0");
    Require(flowSectionCycles == 0 || scheduling == WorkScheduling::kOrdered, "flowSectionCycles",
            "needs ordered scheduling (a switch from an ORDERED tag)");
    Require(flowSectionCycles == 0 || lockHoldCycles == 0, "flowSectionCycles",
            "and lockHoldCycles cannot both be set (one serialized section per packet)");
    Require(fixedLatencyPs < (uint64_t{1} << 50), "fixedLatencyPs", "must be < 2^50 ps");
    Require(static_cast<unsigned>(scheduling) < 4, "scheduling", "is not a WorkScheduling");
}

PipelineEngine::PipelineEngine(const PipelineConfig& config)
    : m_cfg(config)
{
    m_cfg.Validate();
    m_ticksPerCycle = kTicksPerSecond / m_cfg.clockHz;
    m_extraCyclesPerByte = m_cfg.copyCyclesPerByte + m_cfg.cryptoCyclesPerByte;
    m_inputOcc = m_cfg.inputPpsCeiling > 0 ? RoundTicks(kTicksPerSecond / m_cfg.inputPpsCeiling) : 0;
    m_outputOcc =
        m_cfg.outputPpsCeiling > 0 ? RoundTicks(kTicksPerSecond / m_cfg.outputPpsCeiling) : 0;
    m_lockTicks = RoundTicks(m_cfg.lockHoldCycles * m_ticksPerCycle);
    m_flowSectionTicks = RoundTicks(m_cfg.flowSectionCycles * m_ticksPerCycle);
    m_fixedLatency = m_cfg.fixedLatencyPs << kTickShift;
    m_memTicksPerByte =
        m_cfg.memoryBytesPerSecond > 0 ? kTicksPerSecond / m_cfg.memoryBytesPerSecond : 0;
    m_lineTicksPerByte = m_cfg.egressBitRate > 0 ? 8.0 * kTicksPerSecond / m_cfg.egressBitRate : 0;

    const uint32_t n = m_cfg.numCores;
    m_coreFree.assign(n, 0);
    m_coreBusy.assign(n, 0);
    m_coreHeap.resize(n);
    for (uint32_t c = 0; c < n; ++c)
    {
        m_coreHeap[c] = CoreSlot{0, c}; // all free at 0: ordered by id, a valid heap
    }
    m_coreOccupancy.resize(m_cfg.scheduling == WorkScheduling::kRss ? n : 1);
    if (m_cfg.scheduling == WorkScheduling::kRss && m_cfg.coreQueueDepth > 0)
    {
        m_coreQueue.assign(n, std::vector<Tick>(m_cfg.coreQueueDepth));
        m_coreQueueHead.assign(n, 0);
        m_coreQueueLen.assign(n, 0);
    }
}

double
PipelineEngine::ServiceSeconds(double serviceCycles, double frameBytes) const
{
    return (serviceCycles + frameBytes * m_extraCyclesPerByte) / m_cfg.clockHz;
}

inline void
PipelineEngine::GrowFlows(uint32_t flow)
{
    if (flow >= m_flowFree.size())
    {
        size_t n = std::max<size_t>(flow + 1, 2 * m_flowFree.size());
        m_flowFree.resize(n, 0);
        m_flowRelease.resize(n, 0);
        m_flowBusy.resize(n, 0);
    }
}

// FIFO hand-out (ORDERED, UNTAGGED): the core that frees up first takes the
// next packet, as an SSO gives work to whichever core asks first. The heap
// root is that core.
inline uint32_t
PipelineEngine::PickCoreFifo(Tick ready, Tick& start)
{
    start = std::max(ready, m_coreHeap[0].free);
    return m_coreHeap[0].id;
}

// ATOMIC: the packet cannot start before its flow's previous packet finished.
// Among the cores free by then it takes the one that freed last (best fit),
// leaving earlier-free cores to packets of other flows; if none is free by
// then, the one that frees first.
inline uint32_t
PipelineEngine::PickCoreAtomic(Tick ready, Tick flowFree, Tick& start)
{
    const Tick t0 = std::max(ready, flowFree);
    uint32_t best = UINT32_MAX, first = 0;
    Tick bestFree = 0;
    for (uint32_t c = 0; c < m_cfg.numCores; ++c)
    {
        const Tick f = m_coreFree[c];
        if (f <= t0 && (best == UINT32_MAX || f > bestFree))
        {
            best = c;
            bestFree = f;
        }
        if (f < m_coreFree[first])
        {
            first = c;
        }
    }
    const uint32_t core = best != UINT32_MAX ? best : first;
    start = std::max(t0, m_coreFree[core]);
    return core;
}

inline void
PipelineEngine::SetCoreFree(uint32_t core, Tick t)
{
    m_coreFree[core] = t;
    if (m_cfg.scheduling != WorkScheduling::kOrdered && m_cfg.scheduling != WorkScheduling::kUntagged)
    {
        return;
    }
    // `core` is the heap root (PickCoreFifo took it): sift it down on (free, id).
    auto less = [](const CoreSlot& a, const CoreSlot& b) {
        return a.free < b.free || (a.free == b.free && a.id < b.id);
    };
    const size_t n = m_coreHeap.size();
    const CoreSlot moving{t, core};
    size_t i = 0;
    for (;;)
    {
        size_t l = 2 * i + 1, m = l;
        if (l >= n)
        {
            break;
        }
        if (l + 1 < n && less(m_coreHeap[l + 1], m_coreHeap[l]))
        {
            m = l + 1;
        }
        if (!less(m_coreHeap[m], moving))
        {
            break;
        }
        m_coreHeap[i] = m_coreHeap[m];
        i = m;
    }
    m_coreHeap[i] = moving;
}

inline PipelineEngine::Tick
PipelineEngine::MinCoreFree() const
{
    return m_coreHeap[0].free;
}

inline void
PipelineEngine::DropAt(const PacketDesc& d, PipelineDrop why, std::vector<PacketDesc>& dropped)
{
    ++m_counters.drops[static_cast<size_t>(why)];
    if (why == PipelineDrop::kDataPlane && d.dpDrop < DP_DROP__COUNT)
    {
        ++m_counters.dpDrops[d.dpDrop];
    }
    dropped.push_back(d);
    dropped.back().drop = static_cast<uint8_t>(why);
}

inline void
PipelineEngine::Egress(Tick release, const PacketDesc& desc, std::vector<PacketDesc>& departed)
{
    Tick t = release;
    if (m_outputOcc)
    {
        t = Occupy(t, m_outputOcc, m_outputFree, m_busyOutput);
    }
    if (m_lineTicksPerByte > 0)
    {
        const Tick ser = RoundTicks(ethernet::WireBytes(desc.frameBytes) * m_lineTicksPerByte);
        t = Occupy(t, ser, m_lineFree, m_busyLine) + ser; // last bit out
    }
    t += m_fixedLatency;
    m_lastDepart = std::max(m_lastDepart, t);
    departed.push_back(desc);
    PacketDesc& d = departed.back();
    d.departPs = (t + (1u << (kTickShift - 1))) >> kTickShift;
    ++m_counters.departed;
    m_counters.sumLatencySeconds += static_cast<double>(d.departPs - d.arrivalPs) * 1e-12;
}

inline void
PipelineEngine::Drain(Tick lowerBound, std::vector<PacketDesc>& departed)
{
    const HeldLater later;
    for (;;)
    {
        Held h;
        const bool fromRun =
            !m_heldRun.empty() && (m_held.empty() || later(m_held.front(), m_heldRun.front()));
        if (fromRun)
        {
            h = m_heldRun.front();
            if (h.release > lowerBound)
            {
                return;
            }
            m_heldRun.pop_front();
        }
        else
        {
            if (m_held.empty() || m_held.front().release > lowerBound)
            {
                return;
            }
            std::pop_heap(m_held.begin(), m_held.end(), later);
            h = m_held.back();
            m_held.pop_back();
        }
        const uint32_t slot = static_cast<uint32_t>(h.key & 0xFFFFFFu);
        Egress(h.release, m_slots[slot], departed);
        m_freeSlots.push_back(slot);
    }
}

void
PipelineEngine::Flush(std::vector<PacketDesc>& departed)
{
    Drain(~Tick{0}, departed);
}

uint64_t
PipelineEngine::AddCoreWork(uint32_t core, uint64_t readyPs, double cycles)
{
    // Only RSS names the core a piece of work belongs to; in the FIFO modes
    // any core would take it and the work would be a packet.
    if (m_cfg.scheduling != WorkScheduling::kRss || core >= m_cfg.numCores)
    {
        throw std::logic_error("PipelineEngine::AddCoreWork: RSS mode and a valid core only");
    }
    const Tick ready = readyPs << kTickShift;
    const Tick start = std::max(ready, m_coreFree[core]);
    const Tick finish = start + RoundTicks(cycles * m_ticksPerCycle);
    SetCoreFree(core, finish);
    m_coreBusy[core] += finish - start;
    return (finish + (1u << (kTickShift - 1))) >> kTickShift;
}

void
PipelineEngine::Process(const PacketDesc* in, size_t n, std::vector<PacketDesc>& departed,
                        std::vector<PacketDesc>& dropped)
{
    const WorkScheduling mode = m_cfg.scheduling;
    const bool fifo = mode == WorkScheduling::kOrdered || mode == WorkScheduling::kUntagged;
    for (size_t i = 0; i < n; ++i)
    {
        const PacketDesc& d = in[i];
        const Tick t = d.arrivalPs << kTickShift;
        if (!m_any)
        {
            m_any = true;
            m_firstArrival = t;
        }
        else if (t < m_lastArrival)
        {
            throw std::invalid_argument("PipelineEngine::Process: arrivals out of time order");
        }
        m_lastArrival = t;
        ++m_counters.offered;

        // Admission to the input queue: packets whose leave time has passed
        // are gone; the rest occupy it.
        if (m_cfg.inputQueueDepth)
        {
            size_t queued;
            if (mode == WorkScheduling::kAtomic)
            {
                while (!m_inputQueue.empty() && m_inputQueue.front() <= t)
                {
                    std::pop_heap(m_inputQueue.begin(), m_inputQueue.end(), std::greater<Tick>());
                    m_inputQueue.pop_back();
                }
                queued = m_inputQueue.size();
            }
            else
            {
                while (!m_inputFifo.empty() && m_inputFifo.front() <= t)
                {
                    m_inputFifo.pop_front();
                }
                queued = m_inputFifo.size();
            }
            if (queued >= m_cfg.inputQueueDepth)
            {
                DropAt(d, PipelineDrop::kInputQueueFull, dropped);
                continue;
            }
        }

        // Shared ceilings: input engine, then memory/IO bandwidth.
        Tick ready = t;
        if (m_inputOcc)
        {
            ready = Occupy(ready, m_inputOcc, m_inputFree, m_busyInput);
        }
        if (m_memTicksPerByte > 0)
        {
            const double bytes =
                m_cfg.memoryBytesPerFrameByte * d.frameBytes + m_cfg.memoryBytesPerPacket;
            ready = Occupy(ready, RoundTicks(bytes * m_memTicksPerByte), m_memFree, m_busyMemTicks);
        }

        // Work distribution.
        Tick start;
        uint32_t core;
        if (fifo)
        {
            core = PickCoreFifo(ready, start);
        }
        else if (mode == WorkScheduling::kAtomic)
        {
            GrowFlows(d.flow);
            core = PickCoreAtomic(ready, m_flowFree[d.flow], start);
        }
        else
        {
            core = FlowHash(d.flow) % m_cfg.numCores;
            if (m_cfg.inputQueueDepth)
            {
                m_inputFifo.push_back(ready); // RSS: leaves the input queue at the NIC
            }
            start = std::max(ready, m_coreFree[core]); // per-core FIFO
            if (m_cfg.coreQueueDepth)
            {
                std::vector<Tick>& ring = m_coreQueue[core];
                uint32_t& head = m_coreQueueHead[core];
                uint32_t& len = m_coreQueueLen[core];
                while (len && ring[head] <= ready)
                {
                    head = head + 1 == ring.size() ? 0 : head + 1;
                    --len;
                }
                if (len >= ring.size())
                {
                    DropAt(d, PipelineDrop::kCoreQueueFull, dropped);
                    continue;
                }
                size_t tail = head + len;
                ring[tail >= ring.size() ? tail - ring.size() : tail] = start;
                ++len;
            }
        }
        // SSO: a packet waits in the work queue until a core takes it. FIFO
        // hand-out starts packets in arrival order; ATOMIC may not.
        if (m_cfg.inputQueueDepth && fifo)
        {
            m_inputFifo.push_back(start);
        }
        else if (m_cfg.inputQueueDepth && mode == WorkScheduling::kAtomic)
        {
            m_inputQueue.push_back(start);
            std::push_heap(m_inputQueue.begin(), m_inputQueue.end(), std::greater<Tick>());
        }

        // Core service; the last lockHold of it under the global lock, which
        // is granted in dispatch order (a ticket lock). A core spinning on the
        // lock stays busy.
        const Tick svc = RoundTicks((d.serviceCycles + d.frameBytes * m_extraCyclesPerByte) *
                                    m_ticksPerCycle);
        Tick finish;
        if (m_lockTicks)
        {
            const Tick unlocked = svc > m_lockTicks ? svc - m_lockTicks : 0;
            finish = Occupy(start + unlocked, m_lockTicks, m_lockFree, m_busyLock) + m_lockTicks;
        }
        else if (m_flowSectionTicks)
        {
            // The tag switch completes when the flow's previous packet has
            // left its section (work moved from an ORDERED to an ATOMIC
            // context keeps its ingress order); the core spins until then.
            GrowFlows(d.flow);
            const Tick section = std::min(svc, m_flowSectionTicks);
            finish = Occupy(start + (svc - section), section, m_flowFree[d.flow], m_flowBusy[d.flow]) +
                     section;
        }
        else
        {
            finish = start + svc;
        }
        SetCoreFree(core, finish);
        m_coreBusy[core] += finish - start;
        m_coreOccupancy[mode == WorkScheduling::kRss ? core : 0].Enter(static_cast<double>(t) / kTicksPerSecond,
                                                                        static_cast<double>(finish) / kTicksPerSecond);
        ++m_counters.started;
        m_counters.sumWaitSeconds += static_cast<double>(start - t) / kTicksPerSecond;
        m_counters.sumServiceSeconds += static_cast<double>(finish - start) / kTicksPerSecond;

        Tick release = finish;
        if (mode == WorkScheduling::kAtomic)
        {
            m_flowFree[d.flow] = finish;
            m_flowBusy[d.flow] += finish - start;
        }
        if (d.dpDrop != DP_OK)
        {
            DropAt(d, PipelineDrop::kDataPlane, dropped);
            continue;
        }
        if (mode == WorkScheduling::kOrdered)
        {
            GrowFlows(d.flow);
            release = std::max(finish, m_flowRelease[d.flow]);
            m_flowRelease[d.flow] = release;
        }
        uint32_t slot;
        if (!m_freeSlots.empty())
        {
            slot = m_freeSlots.back();
            m_freeSlots.pop_back();
        }
        else
        {
            if (m_slots.size() > 0xFFFFFFu)
            {
                throw std::length_error("PipelineEngine: more than 2^24 packets in flight");
            }
            slot = static_cast<uint32_t>(m_slots.size());
            m_slots.emplace_back();
        }
        m_slots[slot] = d;
        const Held h{release, (m_order++ << 24) | slot};
        if (m_heldRun.empty() || m_heldRun.back().release <= release)
        {
            m_heldRun.push_back(h); // keys increase, so the run stays sorted
        }
        else
        {
            m_held.push_back(h);
            std::push_heap(m_held.begin(), m_held.end(), HeldLater());
        }

        // No later packet can be released before it is ready, nor (FIFO
        // hand-out) before some core is free: everything released by then
        // may take its egress turn.
        Drain(fifo ? std::max(ready, MinCoreFree()) : ready, departed);
    }
}

QueueLengthHistogram
PipelineEngine::CoreQueueLengths() const
{
    QueueLengthHistogram all;
    for (QueueOccupancy q : m_coreOccupancy) // a copy: Finish counts the packets still inside
    {
        q.Finish();
        all += q.Histogram();
    }
    return all;
}

PipelineReport
PipelineEngine::Report() const
{
    PipelineReport r;
    Tick end = std::max(m_lastArrival, m_lastDepart > m_fixedLatency ? m_lastDepart - m_fixedLatency : 0);
    for (Tick f : m_coreFree)
    {
        end = std::max(end, f);
    }
    const double dur = m_any && end > m_firstArrival ? static_cast<double>(end - m_firstArrival) : 0;
    r.durationSeconds = dur / kTicksPerSecond;
    auto util = [dur](double busyTicks) { return dur > 0 ? busyTicks / dur : 0.0; };

    double coreSum = 0, coreMax = 0;
    for (Tick b : m_coreBusy)
    {
        r.coreUtilization.push_back(util(static_cast<double>(b)));
        coreSum += static_cast<double>(b);
        coreMax = std::max(coreMax, static_cast<double>(b));
    }
    // A pool of cores fed by a scheduler binds as a whole; RSS binds at the
    // hottest core, since its queue cannot spill to the others.
    const double coreUtil = m_cfg.scheduling == WorkScheduling::kRss
                                ? util(coreMax)
                                : util(coreSum / m_cfg.numCores);
    Tick flowMax = 0;
    if (m_cfg.scheduling == WorkScheduling::kAtomic || m_flowSectionTicks)
    {
        for (Tick b : m_flowBusy)
        {
            flowMax = std::max(flowMax, b);
        }
    }
    auto add = [&](const char* name, double busyTicks, double u) {
        r.resources.push_back(ResourceUsage{name, busyTicks / kTicksPerSecond, u});
    };
    add("cores", coreSum, coreUtil);
    add("ordering", static_cast<double>(flowMax), util(static_cast<double>(flowMax)));
    add("packet_input", static_cast<double>(m_busyInput), util(static_cast<double>(m_busyInput)));
    add("packet_output", static_cast<double>(m_busyOutput), util(static_cast<double>(m_busyOutput)));
    add("memory", m_busyMemTicks, util(m_busyMemTicks));
    add("line_rate", static_cast<double>(m_busyLine), util(static_cast<double>(m_busyLine)));
    add("lock", static_cast<double>(m_busyLock), util(static_cast<double>(m_busyLock)));

    // A saturated shared resource is named before the cores: cores spinning
    // on the lock or idling behind it are its consequence, not its cause.
    const ResourceUsage* top = nullptr;
    for (size_t i = 1; i < r.resources.size(); ++i)
    {
        if (!top || r.resources[i].utilization > top->utilization)
        {
            top = &r.resources[i];
        }
    }
    if (top->utilization < kSaturated && r.resources[0].utilization > top->utilization)
    {
        top = &r.resources[0];
    }
    const bool roomDrops = m_counters.drops[static_cast<size_t>(PipelineDrop::kInputQueueFull)] +
                               m_counters.drops[static_cast<size_t>(PipelineDrop::kCoreQueueFull)] >
                           0;
    r.bottleneckUtilization = top->utilization;
    if (top->utilization >= kSaturated || (roomDrops && top->utilization > 0))
    {
        r.bottleneck = top->name;
    }
    return r;
}

} // namespace routertwin
