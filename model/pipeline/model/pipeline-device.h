// PipelineDevice: an ns-3 model of a multi-core packet-processing device
// (network processor, software router) forwarding IPv4.
//
// It wraps a PipelineEngine (cores, work ordering, shared ceilings, queues)
// and a ForwardingWorkload (the real data-plane core run on each packet's
// frame; its dp_ops counters priced by CycleCost give the service cycles).
// Packets enter and leave as PacketDesc batches, never as ns3::Packet: a
// sender calls Receive() with the packets that arrived up to Now(), and the
// device schedules ONE event per batch of departures, at the time the last
// of them leaves, to hand them to the DeliverCallback. Each descriptor
// carries its own departure time, so batching loses no timing.
//
// Configuration is by Attributes (see GetTypeId); the workload's counter
// prices by SetCounterPrice. The engine is built from the Attributes at the
// first Receive(); changing Attributes after that has no effect.
#ifndef ROUTERTWIN_PIPELINE_DEVICE_H
#define ROUTERTWIN_PIPELINE_DEVICE_H

#include "forwarding-workload.h"
#include "pipeline-engine.h"

#include <ns3/callback.h>
#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/traced-callback.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace routertwin
{

class PipelineDevice : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    PipelineDevice();
    ~PipelineDevice() override;

    /// Receives departed packets (departPs set, departure order), once per batch.
    using DeliverCallback = ns3::Callback<void, const std::vector<PacketDesc>&>;
    void SetDeliverCallback(DeliverCallback cb);

    /// Price of one dp_ops counter (dp_ops_counter_name), cycles per unit;
    /// throws std::invalid_argument for an unknown name.
    void SetCounterPrice(const std::string& counter, double cycles);

    /// Frame sizes the device will see (a mix: one workload template per
    /// size and flow), or none with `ways` templates per flow (traces).
    /// Fixed cycles per packet by frame size replace FixedCyclesPerPacket
    /// for those sizes. Before Build().
    void SetFrameSizes(const std::vector<uint32_t>& sizes, uint32_t ways,
                       const std::map<uint32_t, double>& fixedCyclesBySize);

    /// Packets that arrived (arrivalPs <= Now, nondecreasing across calls).
    /// Fills serviceCycles/dpDrop by running the workload. May throw
    /// std::invalid_argument for a bad configuration.
    void Receive(std::vector<PacketDesc>& batch);

    /// No more packets will arrive: schedule everything still inside.
    void Flush();

    /// Engine and workload, for reports; null before the first Receive().
    const PipelineEngine* Engine() const { return m_engine.get(); }
    const ForwardingWorkload* Workload() const { return m_workload.get(); }

    /// Builds the engine and workload from the Attributes now (Receive does
    /// it on first use).
    void Build();

    typedef void (*PacketTracedCallback)(const PacketDesc& packet);
    typedef void (*DropTracedCallback)(const PacketDesc& packet, const char* reason);

  protected:
    void DoDispose() override;

  private:
    void ScheduleDepartures();
    void DeliverNext();

    // Attributes
    uint32_t m_numCores;
    double m_clockHz;
    int m_scheduling; // WorkScheduling
    double m_inputPps, m_outputPps;
    double m_memBytesPerSec, m_memBytesPerFrameByte, m_memBytesPerPacket;
    double m_egressBitRate;
    double m_copyCyclesPerByte, m_cryptoCyclesPerByte, m_lockHoldCycles, m_flowSectionCycles;
    ns3::Time m_fixedLatency;
    uint32_t m_inputQueueDepth, m_coreQueueDepth;
    double m_fixedCycles, m_cyclesPerFrameByte;
    uint32_t m_extraRoutes, m_firstUnroutedFlow;
    bool m_runCorePerPacket;

    CycleCost m_cost;
    std::unique_ptr<PipelineEngine> m_engine;
    std::unique_ptr<ForwardingWorkload> m_workload;
    std::vector<uint32_t> m_frameSizes;
    uint32_t m_templateWays = 1;
    std::map<uint32_t, double> m_fixedCyclesBySize;
    DeliverCallback m_deliver;
    std::vector<PacketDesc> m_departed, m_dropped;
    std::deque<std::vector<PacketDesc>> m_pending; // batches with a delivery event scheduled

    ns3::TracedCallback<const PacketDesc&> m_rxTrace;
    ns3::TracedCallback<const PacketDesc&> m_txTrace;
    ns3::TracedCallback<const PacketDesc&, const char*> m_dropTrace;
};

} // namespace routertwin

#endif
