#include "fabric-crossbar.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace routertwin
{

FabricQueueing
ParseFabricQueueing(const std::string& s)
{
    if (s == "fifo")
    {
        return FabricQueueing::Fifo;
    }
    if (s == "voq")
    {
        return FabricQueueing::Voq;
    }
    throw std::invalid_argument("input queueing '" + s + "' is not one of fifo, voq");
}

FabricScheduler
ParseFabricScheduler(const std::string& s)
{
    if (s == "islip")
    {
        return FabricScheduler::Islip;
    }
    if (s == "fifo_random")
    {
        return FabricScheduler::FifoRandom;
    }
    if (s == "fifo_rr")
    {
        return FabricScheduler::FifoRoundRobin;
    }
    throw std::invalid_argument("scheduler '" + s + "' is not one of islip, fifo_random, fifo_rr");
}

void
FabricConfig::Validate() const
{
    if (ports < 1)
    {
        throw std::invalid_argument("fabric ports must be at least 1");
    }
    if (speedup < 1)
    {
        throw std::invalid_argument("fabric speedup must be at least 1");
    }
    if (queueing == FabricQueueing::Voq && scheduler != FabricScheduler::Islip)
    {
        throw std::invalid_argument("VOQ input queueing needs the islip scheduler");
    }
    if (queueing == FabricQueueing::Fifo && scheduler == FabricScheduler::Islip)
    {
        throw std::invalid_argument("FIFO input queueing needs fifo_random or fifo_rr");
    }
    if (scheduler == FabricScheduler::Islip && islipIterations < 1)
    {
        throw std::invalid_argument("islip iterations must be at least 1");
    }
}

CrossbarFabric::CrossbarFabric(const FabricConfig& cfg)
    : m_cfg(cfg),
      m_rng(cfg.seed)
{
    m_cfg.Validate();
    const unsigned n = m_cfg.ports;
    m_queues.resize(m_cfg.queueing == FabricQueueing::Voq ? size_t(n) * n : n);
    m_inputCount.assign(n, 0);
    m_egress.resize(n);
    m_grantPtr.assign(n, 0);
    m_acceptPtr.assign(n, 0);
    m_matchOfOutput.assign(n, -1);
    m_grantTo.assign(n, -1);
    m_matchOfInput.assign(n, -1);
    m_bucketStart.assign(n + 1, 0);
    m_bucketPos.assign(n, 0);
    m_bucketInputs.assign(n, 0);
}

std::deque<FabricCell>&
CrossbarFabric::Queue(uint32_t in, uint32_t out)
{
    return m_cfg.queueing == FabricQueueing::Voq ? m_queues[size_t(in) * m_cfg.ports + out]
                                                 : m_queues[in];
}

bool
CrossbarFabric::Enqueue(uint32_t input, uint32_t output, uint64_t tag)
{
    if (input >= m_cfg.ports || output >= m_cfg.ports)
    {
        throw std::out_of_range("fabric port out of range");
    }
    if (m_cfg.inputBufferCells != 0 && m_inputCount[input] >= m_cfg.inputBufferCells)
    {
        ++m_inputDrops;
        return false;
    }
    Queue(input, output).push_back(FabricCell{tag, m_slot, input, output});
    ++m_inputCount[input];
    ++m_inputBacklog;
    return true;
}

bool
CrossbarFabric::OutputOpen(uint32_t out) const
{
    return m_cfg.egressBufferCells == 0 || m_egress[out].size() < m_cfg.egressBufferCells;
}

void
CrossbarFabric::MatchIslip(std::vector<int>& matchOfInput)
{
    const unsigned n = m_cfg.ports;
    std::fill(m_matchOfOutput.begin(), m_matchOfOutput.end(), -1);
    for (unsigned it = 0; it < m_cfg.islipIterations; ++it)
    {
        // Grant: each free output picks, from its pointer on, the first free
        // input that has a cell for it (that is, that requests it).
        bool anyGrant = false;
        for (unsigned j = 0; j < n; ++j)
        {
            m_grantTo[j] = -1;
            if (m_matchOfOutput[j] >= 0 || !OutputOpen(j))
            {
                continue;
            }
            for (unsigned k = 0; k < n; ++k)
            {
                unsigned i = (m_grantPtr[j] + k) % n;
                if (matchOfInput[i] < 0 && !m_queues[size_t(i) * n + j].empty())
                {
                    m_grantTo[j] = static_cast<int>(i);
                    anyGrant = true;
                    break;
                }
            }
        }
        if (!anyGrant)
        {
            break;
        }
        // Accept: each input picks, from its pointer on, the first output
        // that granted it. Pointers move only on first-iteration accepts,
        // which is what desynchronises them (McKeown 1999, section III).
        for (unsigned i = 0; i < n; ++i)
        {
            if (matchOfInput[i] >= 0)
            {
                continue;
            }
            for (unsigned k = 0; k < n; ++k)
            {
                unsigned j = (m_acceptPtr[i] + k) % n;
                if (m_grantTo[j] == static_cast<int>(i))
                {
                    matchOfInput[i] = static_cast<int>(j);
                    m_matchOfOutput[j] = static_cast<int>(i);
                    if (it == 0)
                    {
                        m_grantPtr[j] = (i + 1) % n;
                        m_acceptPtr[i] = (j + 1) % n;
                    }
                    break;
                }
            }
        }
    }
}

void
CrossbarFabric::MatchFifo(std::vector<int>& matchOfInput)
{
    const unsigned n = m_cfg.ports;
    // Bucket the inputs by the output of their head-of-line cell (counting
    // sort, inputs in increasing order inside a bucket).
    std::fill(m_bucketStart.begin(), m_bucketStart.end(), 0);
    for (unsigned i = 0; i < n; ++i)
    {
        if (!m_queues[i].empty())
        {
            ++m_bucketStart[m_queues[i].front().output + 1];
        }
    }
    for (unsigned j = 0; j < n; ++j)
    {
        m_bucketStart[j + 1] += m_bucketStart[j];
    }
    std::vector<uint32_t>& fill = m_bucketInputs;
    std::copy(m_bucketStart.begin(), m_bucketStart.end() - 1, m_bucketPos.begin());
    for (unsigned i = 0; i < n; ++i)
    {
        if (!m_queues[i].empty())
        {
            fill[m_bucketPos[m_queues[i].front().output]++] = i;
        }
    }
    for (unsigned j = 0; j < n; ++j)
    {
        uint32_t begin = m_bucketStart[j];
        uint32_t count = m_bucketStart[j + 1] - begin;
        if (count == 0 || !OutputOpen(j))
        {
            continue;
        }
        uint32_t winner;
        if (m_cfg.scheduler == FabricScheduler::FifoRandom)
        {
            winner = fill[begin + m_rng.UniformInt(count)];
        }
        else
        {
            // First contender at or after the pointer, circularly; the bucket
            // is sorted, so that is the first one >= pointer, else the first.
            winner = fill[begin];
            for (uint32_t k = 0; k < count; ++k)
            {
                if (fill[begin + k] >= m_grantPtr[j])
                {
                    winner = fill[begin + k];
                    break;
                }
            }
            m_grantPtr[j] = (winner + 1) % n;
        }
        matchOfInput[winner] = static_cast<int>(j);
    }
}

void
CrossbarFabric::Step(std::vector<FabricCell>& departed)
{
    const unsigned n = m_cfg.ports;
    std::vector<int>& matchOfInput = m_matchOfInput;
    for (unsigned phase = 0; phase < m_cfg.speedup; ++phase)
    {
        std::fill(matchOfInput.begin(), matchOfInput.end(), -1);
        if (m_cfg.queueing == FabricQueueing::Voq)
        {
            MatchIslip(matchOfInput);
        }
        else
        {
            MatchFifo(matchOfInput);
        }
        for (unsigned i = 0; i < n; ++i)
        {
            if (matchOfInput[i] < 0)
            {
                continue;
            }
            auto& q = Queue(i, static_cast<uint32_t>(matchOfInput[i]));
            m_egress[matchOfInput[i]].push_back(q.front());
            q.pop_front();
            --m_inputCount[i];
            --m_inputBacklog;
        }
    }
    for (unsigned j = 0; j < n; ++j)
    {
        if (!m_egress[j].empty())
        {
            departed.push_back(m_egress[j].front());
            m_egress[j].pop_front();
        }
    }
    ++m_slot;
}

UniformRunResult
RunUniformBernoulli(const FabricConfig& cfg, double load, uint64_t warmup, uint64_t measure,
                    unsigned batches)
{
    if (batches < 2 || measure < batches)
    {
        throw std::invalid_argument("need at least 2 batches and one slot per batch");
    }
    CrossbarFabric fabric(cfg);
    // Traffic has its own stream so that changing the scheduler does not
    // change the arrivals (common random numbers across schedulers).
    RandomStream traffic(cfg.seed, 0x5DEECE66Dull);
    const unsigned n = cfg.ports;
    std::vector<FabricCell> departed;
    UniformRunResult r;
    r.offeredLoad = load;
    const uint64_t perBatch = measure / batches;
    const uint64_t total = warmup + perBatch * batches;
    const uint64_t window = perBatch * batches;
    // A delay is at most the run's slots (a cell enters at slot 0 or later
    // and leaves by slot total - 1): an axis that long never overflows, so
    // every quantile is a delay some cell had, at any load.
    if (total >= static_cast<uint64_t>(std::numeric_limits<int>::max()))
    {
        throw std::invalid_argument("warmup + measure must be below 2^31 - 1 slots");
    }
    r.delaySlots = QueueLengthHistogram(static_cast<unsigned>(total));
    r.drops = LossTimeline(n, static_cast<unsigned>(std::min<uint64_t>(kFabricDropBins, window)),
                           static_cast<double>(window), {"fabric_input_full"});
    std::vector<double> batchThroughput(batches, 0.0);
    double backlogA = 0;
    double backlogB = 0;
    uint64_t dropsAtWarmup = 0;
    for (uint64_t s = 0; s < total; ++s)
    {
        if (s == warmup)
        {
            dropsAtWarmup = fabric.InputDrops();
        }
        for (unsigned i = 0; i < n; ++i)
        {
            if (traffic.Bernoulli(load) && !fabric.Enqueue(i, traffic.UniformInt(n), s) && s >= warmup)
            {
                // the slot's middle: a drop in slot m counts in the bin holding m
                r.drops.Add(i, static_cast<double>(s - warmup) + 0.5);
            }
        }
        departed.clear();
        fabric.Step(departed);
        if (s < warmup)
        {
            continue;
        }
        uint64_t m = s - warmup;
        batchThroughput[m / perBatch] += static_cast<double>(departed.size());
        for (const FabricCell& c : departed)
        {
            r.delaySlots.Add(static_cast<unsigned>(s - c.enqueueSlot), 1.0);
        }
        double backlogPerInput = static_cast<double>(fabric.InputBacklog()) / n;
        if (m < perBatch * batches / 2)
        {
            backlogA += backlogPerInput;
        }
        else
        {
            backlogB += backlogPerInput;
        }
    }
    double mean = 0;
    for (double& b : batchThroughput)
    {
        b /= static_cast<double>(perBatch) * n;
        mean += b;
    }
    mean /= batches;
    double var = 0;
    for (double b : batchThroughput)
    {
        var += (b - mean) * (b - mean);
    }
    var /= (batches - 1);
    r.throughput = mean;
    r.throughputStdErr = std::sqrt(var / batches);
    r.meanDelaySlots = r.delaySlots.Mean();
    double half = static_cast<double>(perBatch * batches) / 2.0;
    r.backlogStart = backlogA / half;
    r.backlogEnd = backlogB / half;
    r.inputDrops = fabric.InputDrops() - dropsAtWarmup;
    return r;
}

} // namespace routertwin
