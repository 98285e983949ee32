// Cell-based crossbar switch fabric, simulated slot by slot.
//
// Contract:
// - Time is slotted; one slot is one cell time of an output link. In each
//   slot the fabric runs `speedup` matching phases; every phase moves at most
//   one cell out of each input and at most one cell into each output's egress
//   buffer. Then every output whose egress buffer is non-empty sends one cell.
// - Input queueing is one FIFO per input (head-of-line blocking) or one
//   virtual output queue per (input, output) pair.
// - Schedulers: with FIFO queues, each head-of-line cell requests its output
//   and an output chooses among contenders at random or round robin; with
//   VOQs, iSLIP (McKeown 1999) with a configurable number of iterations,
//   pointers updated only by first-iteration matches.
// - Buffers are counted in cells; 0 means unbounded. A cell offered to a full
//   input buffer is refused (Enqueue returns false, counted as a drop named
//   "fabric_input_full"). A full egress buffer takes its output out of the
//   matching (backpressure), so the fabric itself never drops.
// - Same config and seed => identical schedule.
#ifndef ROUTERTWIN_FABRIC_CROSSBAR_H
#define ROUTERTWIN_FABRIC_CROSSBAR_H

#include "latency-histogram.h"
#include "queue-length-histogram.h"
#include "random-stream.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace routertwin
{

enum class FabricQueueing
{
    Fifo,
    Voq
};

enum class FabricScheduler
{
    Islip,          ///< VOQ only
    FifoRandom,     ///< FIFO only: random choice among head-of-line contenders
    FifoRoundRobin, ///< FIFO only: per-output round-robin pointer
};

/// Parses "fifo" / "voq" and "islip" / "fifo_random" / "fifo_rr"; throws
/// std::invalid_argument naming the text otherwise.
FabricQueueing ParseFabricQueueing(const std::string& s);
FabricScheduler ParseFabricScheduler(const std::string& s);

struct FabricConfig
{
    unsigned ports = 16;
    FabricQueueing queueing = FabricQueueing::Voq;
    FabricScheduler scheduler = FabricScheduler::Islip;
    unsigned islipIterations = 1;
    unsigned speedup = 1;           ///< matching phases per slot
    uint32_t inputBufferCells = 0;  ///< per input, all its queues together; 0 = unbounded
    uint32_t egressBufferCells = 0; ///< per output; 0 = unbounded
    uint64_t seed = 1;

    /// Throws std::invalid_argument naming the field when inconsistent.
    void Validate() const;
};

/// A cell as the fabric sees it: where it goes and an opaque caller tag.
struct FabricCell
{
    uint64_t tag = 0;
    uint64_t enqueueSlot = 0;
    uint32_t input = 0;
    uint32_t output = 0;
};

class CrossbarFabric
{
  public:
    explicit CrossbarFabric(const FabricConfig& cfg);

    /// Offers a cell to input `input` for output `output` in the current slot.
    /// False (and a drop counted) when the input buffer is full.
    bool Enqueue(uint32_t input, uint32_t output, uint64_t tag);

    /// Runs one slot; cells leaving outputs in this slot are appended to
    /// `departed`. Advances the slot counter.
    void Step(std::vector<FabricCell>& departed);

    uint64_t InputDrops() const { return m_inputDrops; }
    /// Cells waiting in input queues, all inputs.
    uint64_t InputBacklog() const { return m_inputBacklog; }
    /// Cells in input queue `input`.
    uint32_t InputOccupancy(uint32_t input) const { return m_inputCount[input]; }
    const FabricConfig& Config() const { return m_cfg; }

  private:
    std::deque<FabricCell>& Queue(uint32_t in, uint32_t out);
    void MatchIslip(std::vector<int>& matchOfInput);
    void MatchFifo(std::vector<int>& matchOfInput);
    bool OutputOpen(uint32_t out) const;

    FabricConfig m_cfg;
    RandomStream m_rng;
    uint64_t m_slot = 0;
    std::vector<std::deque<FabricCell>> m_queues; // N (FIFO) or N*N (VOQ)
    std::vector<uint32_t> m_inputCount;
    std::vector<std::deque<FabricCell>> m_egress;
    std::vector<uint32_t> m_grantPtr;  // per output
    std::vector<uint32_t> m_acceptPtr; // per input
    uint64_t m_inputDrops = 0;
    uint64_t m_inputBacklog = 0;
    // Scratch reused every phase.
    std::vector<int> m_matchOfInput;
    std::vector<int> m_matchOfOutput;
    std::vector<int> m_grantTo;
    std::vector<uint32_t> m_bucketStart;
    std::vector<uint32_t> m_bucketPos;
    std::vector<uint32_t> m_bucketInputs;
};

/// Result of a uniform Bernoulli i.i.d. run.
struct UniformRunResult
{
    double offeredLoad = 0;
    double throughput = 0;       ///< cells out per output per slot (measured window)
    double throughputStdErr = 0; ///< batch-means standard error of throughput
    double meanDelaySlots = 0;   ///< enqueue to departure, cells departing in the window
    double backlogStart = 0;     ///< mean input backlog per input, first half of window
    double backlogEnd = 0;       ///< same, second half
    uint64_t inputDrops = 0;
    /// Delays (whole slots, enqueue to departure) of the cells departing in
    /// the window, one entry per cell: QueueLengthHistogram's integer axis
    /// with cells as the weight (its "seconds"), sized to the run's slots
    /// (no delay is longer), so no cell lands in the overflow bin and its
    /// quantiles are exact whole slots at any load, its Max() the longest delay.
    QueueLengthHistogram delaySlots;
    /// Cells refused by a full input buffer in the window, per input (port
    /// axis) and over the window (time axis in slots, not seconds), reason
    /// "fabric_input_full".
    LossTimeline drops;
};

/// Bins of UniformRunResult::drops over the measured window (fewer when the
/// window has fewer slots).
constexpr unsigned kFabricDropBins = 100;

/// Every slot each input receives a cell with probability `load`, for an
/// output drawn uniformly; runs warmup slots, then `measure` slots split into
/// `batches` batches for the standard error.
UniformRunResult RunUniformBernoulli(const FabricConfig& cfg, double load, uint64_t warmup,
                                     uint64_t measure, unsigned batches = 20);

} // namespace routertwin

#endif
