#include "forwarding-workload.h"

#include "ethernet-framing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace routertwin
{

namespace
{
constexpr uint32_t kSrcNet = 0xC6120000u;       // 198.18.0.0
constexpr uint32_t kDstNet = 0xC6130000u;       // 198.19.0.0/16, routed
constexpr uint32_t kUnroutedNet = 0xCB007100u;  // 203.0.113.0/24, not routed
constexpr uint32_t kFillerNet = 0x0A000000u;    // 10.0.0.0/8
constexpr uint32_t kMaxExtraRoutes = 65536;     // 10.x.y.0/24 for x.y < 65536

// dp_ops_t fields in dp_ops_counter_name order (dp_ops.h), so that counter
// i can be added to by index.
constexpr uint64_t dp_ops_t::*kCounterFields[] = {
    &dp_ops_t::packets,       &dp_ops_t::bytes_parsed,    &dp_ops_t::bytes_written,
    &dp_ops_t::checksum_bytes, &dp_ops_t::csum_updates,   &dp_ops_t::table_probes,
    &dp_ops_t::cache_lines,   &dp_ops_t::table_writes,    &dp_ops_t::rules_evaluated,
    &dp_ops_t::bytes_copied,  &dp_ops_t::crypto_bytes,
    &dp_ops_t::hashes,        &dp_ops_t::servers_examined};
static_assert(sizeof(kCounterFields) / sizeof(kCounterFields[0]) == DP_OPS_NUM_COUNTERS,
              "one field per dp_ops counter");

void
AddCounter(dp_ops_t& ops, unsigned i, uint64_t v)
{
    ops.*kCounterFields[i] += v;
}
} // namespace

struct ForwardingWorkload::Fib
{
    std::unique_ptr<uint8_t[]> mem; // uninitialised: dp_lpm_create clears what it uses
    dp_lpm_t* lpm = nullptr;
    uint32_t extraRoutes = 0;
};

std::shared_ptr<const ForwardingWorkload::Fib>
ForwardingWorkload::SharedFib(uint32_t extraRoutes)
{
    static std::mutex mutex;
    static std::shared_ptr<const Fib> last;
    std::lock_guard<std::mutex> lock(mutex);
    if (last && last->extraRoutes == extraRoutes)
    {
        return last;
    }
    auto fib = std::make_shared<Fib>();
    fib->extraRoutes = extraRoutes;
    dp_lpm_config_t lc{};
    lc.max_rules = extraRoutes + 16;
    lc.tbl8_groups = 16;
    const size_t bytes = dp_lpm_memory_size(&lc);
    fib->mem.reset(new uint8_t[bytes]);
    fib->lpm = dp_lpm_create(fib->mem.get(), bytes, &lc);
    if (!fib->lpm)
    {
        throw std::runtime_error("forwarding workload: dp_lpm_create failed");
    }
    // Route setup is control-plane work: its counters are not packet costs.
    dp_ops_t setup{};
    int rc = dp_lpm_add(fib->lpm, kDstNet, 16, 1, &setup);
    for (uint32_t i = 0; rc == 0 && i < extraRoutes; ++i)
    {
        rc = dp_lpm_add(fib->lpm, kFillerNet | (i << 8), 24, 2 + (i % 64), &setup);
    }
    if (rc != 0)
    {
        throw std::runtime_error("forwarding workload: dp_lpm_add failed (" + std::to_string(rc) + ")");
    }
    last = fib;
    return last;
}

ForwardingWorkload::ForwardingWorkload(const ForwardingWorkloadConfig& config)
    : m_cfg(config),
      m_scratch(ethernet::kMaxFrameBytes)
{
    if (m_cfg.extraRoutes > kMaxExtraRoutes)
    {
        throw std::invalid_argument("forwarding workload: extraRoutes must be <= 65536");
    }
    m_fib = SharedFib(m_cfg.extraRoutes);
    m_lpm = m_fib->lpm;
    if (!m_cfg.frameSizes.empty())
    {
        if (m_cfg.frameSizes.size() > 255)
        {
            throw std::invalid_argument("forwarding workload: at most 255 sizes in a mix");
        }
        m_ways = static_cast<uint32_t>(m_cfg.frameSizes.size());
        m_wayOfSize.assign(ethernet::kMaxFrameBytes + 1, 0);
        for (uint32_t w = 0; w < m_ways; ++w)
        {
            const uint32_t b = m_cfg.frameSizes[w];
            if (b < ethernet::kMinFrameBytes || b > ethernet::kMaxFrameBytes)
            {
                throw std::invalid_argument("forwarding workload: frame size " + std::to_string(b) +
                                            " outside 64..9216");
            }
            m_wayOfSize[b] = static_cast<uint8_t>(w);
        }
    }
    else
    {
        m_ways = std::max<uint32_t>(1, m_cfg.ways);
    }
}

std::vector<uint8_t>
ForwardingWorkload::BuildFrame(uint32_t flow, uint32_t frameBytes) const
{
    if (frameBytes < ethernet::kMinFrameBytes || frameBytes > ethernet::kMaxFrameBytes)
    {
        throw std::invalid_argument("forwarding workload: frame size " + std::to_string(frameBytes) +
                                    " outside 64..9216");
    }
    const uint32_t l2 = frameBytes - ethernet::kFcsBytes;
    dp_build_spec_t s{};
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x01}, src[6] = {0x02, 0, 0, 0, 0, 0x02};
    std::memcpy(s.dst_mac, dst, 6);
    std::memcpy(s.src_mac, src, 6);
    s.src_ip = kSrcNet | (flow & 0xFFFFu);
    s.dst_ip = flow >= m_cfg.firstUnroutedFlow ? kUnroutedNet | (flow & 0xFFu) : kDstNet | (flow & 0xFFFFu);
    s.ttl = 64;
    s.ip_proto = DP_IPPROTO_UDP;
    s.src_port = static_cast<uint16_t>(1024 + (flow & 0x7FFFu));
    s.dst_port = 7;
    const size_t headers = dp_build_len(DP_IPPROTO_UDP, 0);
    s.payload_len = static_cast<uint16_t>(l2 - headers);
    s.l4_checksum = 1;
    std::vector<uint8_t> frame(l2); // exactly the frame: templates are built per (flow, size)
    size_t len = 0;
    dp_ops_t tester{}; // building is the tester's work, not the forwarder's
    const dp_drop_reason_t r = dp_build(&s, frame.data(), frame.size(), &len, &tester);
    if (r != DP_OK || len != l2)
    {
        throw std::runtime_error(std::string("forwarding workload: dp_build failed: ") +
                                 dp_drop_reason_name(r));
    }
    return frame;
}

void
ForwardingWorkload::RunCore(const std::vector<uint8_t>& frame, dp_ops_t& ops, uint8_t& verdict)
{
    // The forwarder rewrites the frame in place, so it works on a copy.
    const size_t len = frame.size();
    std::memcpy(m_scratch.data(), frame.data(), len);
    dp_ops_reset(&ops);
    dp_parsed_t p;
    dp_drop_reason_t r = dp_parse(m_scratch.data(), len, nullptr, &p, &ops);
    if (r == DP_OK)
    {
        uint32_t nextHop = 0;
        if (dp_lpm_lookup(m_lpm, p.dst_ip, &nextHop, &ops) != 0)
        {
            r = DP_DROP_NO_ROUTE;
        }
    }
    if (r == DP_OK)
    {
        r = dp_ip4_decrement_ttl(m_scratch.data() + p.l3_offset, len - p.l3_offset, &ops);
    }
    verdict = static_cast<uint8_t>(r);
    ++m_coreRuns;
}

double
ForwardingWorkload::PriceCycles(const dp_ops_t& ops, uint32_t frameBytes) const
{
    auto it = m_cfg.fixedCyclesBySize.find(frameBytes);
    if (it == m_cfg.fixedCyclesBySize.end())
    {
        return m_cfg.cost.Cycles(ops, frameBytes);
    }
    CycleCost cost = m_cfg.cost;
    cost.fixedCyclesPerPacket = it->second;
    return cost.Cycles(ops, frameBytes);
}

size_t
ForwardingWorkload::Slot(uint32_t flow, uint32_t frameBytes) const
{
    const uint32_t way = m_wayOfSize.empty() ? frameBytes % m_ways : m_wayOfSize[frameBytes];
    return static_cast<size_t>(flow) * m_ways + way;
}

ForwardingWorkload::Template&
ForwardingWorkload::Lookup(uint32_t flow, uint32_t frameBytes, size_t& slot)
{
    slot = Slot(flow, frameBytes);
    if (slot >= m_templates.size())
    {
        m_templates.resize((static_cast<size_t>(flow) + 1) * m_ways);
        if (m_cfg.runCorePerPacket)
        {
            m_frames.resize(m_templates.size());
        }
    }
    Template& t = m_templates[slot];
    if (t.frameBytes != frameBytes)
    {
        Fold(t);
        std::vector<uint8_t> frame = BuildFrame(flow, frameBytes);
        t.frameBytes = frameBytes;
        RunCore(frame, t.ops, t.verdict);
        const double c = std::round(PriceCycles(t.ops, frameBytes));
        if (!(c >= 0 && c < 4e9))
        {
            throw std::invalid_argument("forwarding workload: priced cycles out of range");
        }
        t.cycles = static_cast<uint32_t>(c);
        if (m_cfg.runCorePerPacket)
        {
            m_frames[slot] = std::move(frame);
        }
    }
    return t;
}

// Adds a template's memoized packets to the totals: uses x its counters.
void
ForwardingWorkload::Fold(Template& t)
{
    for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
    {
        AddCounter(m_ops, i, t.uses * dp_ops_counter(&t.ops, i));
    }
    t.uses = 0;
}

dp_ops_t
ForwardingWorkload::Ops() const
{
    dp_ops_t total = m_ops;
    for (const Template& t : m_templates)
    {
        for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
        {
            AddCounter(total, i, t.uses * dp_ops_counter(&t.ops, i));
        }
    }
    return total;
}

void
ForwardingWorkload::Apply(PacketDesc* descs, size_t n)
{
    for (size_t i = 0; i < n; ++i)
    {
        PacketDesc& d = descs[i];
        size_t slot;
        Template& t = Lookup(d.flow, d.frameBytes, slot);
        if (m_cfg.runCorePerPacket)
        {
            dp_ops_t ops;
            uint8_t verdict;
            RunCore(m_frames[slot], ops, verdict);
            d.serviceCycles = static_cast<uint32_t>(std::round(PriceCycles(ops, d.frameBytes)));
            d.dpDrop = verdict;
            dp_ops_add(&m_ops, &ops);
        }
        else
        {
            d.serviceCycles = t.cycles;
            d.dpDrop = t.verdict;
            ++t.uses;
        }
        m_sumCycles += d.serviceCycles;
    }
    m_packets += n;
}

} // namespace routertwin
