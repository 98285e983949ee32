// L4BalancerDevice: the ns-3 face of an L4 load balancer. Frames arrive in
// batches (PacketDesc timing + the frame bytes); each runs through the
// L4Balancer (the real C core: sessions, scheduler, NAT, SYN cookies, rate
// limit, DNS) and then, as a descriptor carrying its priced cycles, through a
// PipelineEngine of NumCores application cores fed by RSS: the descriptor's
// flow is chosen so that the engine's RSS hash sends it to the core that owns
// its session-table shard (the NIC hashes the 5-tuple as the table does;
// replies come back to the same core through the SNAT port choice).
//
// Configuration by Attributes (GetTypeId); the counter prices by
// SetCounterPrice; Build() makes the balancer and the engine. TraceSources:
// "Drop" (every refused or lost packet with its reason name), "Connection"
// (opened +1 / closed -1).
#ifndef ROUTERTWIN_L4_BALANCER_DEVICE_H
#define ROUTERTWIN_L4_BALANCER_DEVICE_H

#include "l4-balancer.h"
#include "pipeline-engine.h"

#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/traced-callback.h>

#include <memory>
#include <string>
#include <vector>

namespace routertwin
{

class L4BalancerDevice : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    L4BalancerDevice();
    ~L4BalancerDevice() override;

    void SetCounterPrice(const std::string& counter, double cycles);
    /// Builds balancer and engine from the Attributes; throws std::invalid_argument.
    void Build();

    /// Runs one frame through the balancer at arrivalPs and appends its
    /// descriptor (not yet timed by the cores) to `batch`. Returns the verdict.
    /// headroom: bytes before frame the caller owns (>= 20 for the tunnel mode).
    LbVerdict Offer(uint8_t* frame, size_t len, size_t cap, size_t headroom, uint64_t arrivalPs, uint32_t tag,
                    std::vector<PacketDesc>& batch, uint8_t** outFrame, size_t* outLen);
    /// Times a batch on the cores: departed / dropped descriptors appended.
    void Run(const std::vector<PacketDesc>& batch, std::vector<PacketDesc>& departed,
             std::vector<PacketDesc>& dropped);
    void Flush(std::vector<PacketDesc>& departed);
    /// Idle aging at nowPs (L4Balancer::Age with `budget` buckets per shard);
    /// each shard's sweep work, priced by the counter prices alone, is put on
    /// the core that owns the shard (PipelineEngine::AddCoreWork) after what
    /// is queued there. Appends (core, end ps, cycles) per core that did work.
    /// Returns the connections removed.
    struct AgingWork
    {
        uint32_t core;
        uint64_t endPs;
        double cycles;
    };
    uint64_t Age(uint64_t nowPs, uint32_t budget, std::vector<AgingWork>& work);
    /// Priced cycles of every aging sweep so far.
    double AgingCycles() const { return m_agingCycles; }

    L4Balancer& Balancer() { return *m_lb; }
    /// The core a descriptor this device offered was sent to (from its flow id).
    uint32_t CoreOfDesc(const PacketDesc& d) const { return m_flowCore.at(d.flow); }
    const PipelineEngine& Engine() const { return *m_engine; }
    /// Counters of every frame offered.
    const dp_ops_t& Ops() const { return m_ops; }
    double SumCycles() const { return m_sumCycles; }
    uint64_t Frames() const { return m_frames; }

    typedef void (*DropTracedCallback)(const PacketDesc& packet, const char* reason);
    typedef void (*ConnectionTracedCallback)(int32_t delta);

  protected:
    void DoDispose() override;

  private:
    uint32_t m_numCores;
    double m_clockHz;
    uint32_t m_sessionsPerCore;
    uint32_t m_services;
    uint32_t m_serversPerService;
    std::string m_scheduler;
    std::string m_forwarding;
    bool m_synCookies;
    uint32_t m_rateLimitCps;
    double m_fixedCyclesPerPacket;
    double m_cyclesPerFrameByte;
    double m_connectionSetupCycles;
    ns3::Time m_timeWait;
    ns3::Time m_finWait;
    uint16_t m_ipMtu = 1500;
    uint32_t m_coreQueueDepth;
    double m_inputPpsCeiling;
    double m_egressBitRate;
    CycleCost m_cost;

    std::unique_ptr<L4Balancer> m_lb;
    std::unique_ptr<PipelineEngine> m_engine;
    std::vector<uint32_t> m_coreFlow; // a flow id the engine's RSS sends to each core
    std::vector<uint32_t> m_flowCore; // its inverse, indexed by those flow ids
    dp_ops_t m_ops{};
    double m_sumCycles = 0;
    double m_agingCycles = 0;
    uint64_t m_frames = 0;
    ns3::TracedCallback<const PacketDesc&, const char*> m_dropTrace;
    ns3::TracedCallback<int32_t> m_connTrace;
};

} // namespace routertwin

#endif
