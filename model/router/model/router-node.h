// The router model as an ns-3 Object: Attributes configure it, TraceSources
// report every drop (with its reason name) and every delivered packet.
//
// Contract: SetConfig() sets the whole RouterConfig; the Attributes below read
// and write the same fields (one source of truth). Start() builds the engine
// and schedules one event per BatchInterval from Simulator::Now(); events stop
// once the tester has finished (Duration) and nothing is in flight, so
// Simulator::Run() returns by itself. GetResult() is valid after the run.
#ifndef ROUTERTWIN_ROUTER_NODE_H
#define ROUTERTWIN_ROUTER_NODE_H

#include "router-model.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <memory>
#include <string>

namespace routertwin
{

class RouterNode : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    RouterNode();
    ~RouterNode() override;

    void SetConfig(const RouterConfig& cfg) { m_cfg = cfg; }
    const RouterConfig& GetConfig() const { return m_cfg; }

    /// Builds the engine from the configuration and schedules the batches.
    void Start();
    RouterResult GetResult() const;
    /// Batch events executed so far.
    uint64_t GetBatches() const { return m_batches; }

    /// Drop trace signature: reason name (RouterDropName), tester port.
    typedef void (*DropTracedCallback)(std::string reason, uint32_t port);
    /// Rx trace signature: tester port the packet came from, latency.
    typedef void (*RxTracedCallback)(uint32_t port, ns3::Time latency);

  protected:
    void DoDispose() override;

  private:
    void Batch();

    // Attribute accessors over m_cfg.
    void SetDuration(ns3::Time t) { m_cfg.durationSeconds = t.GetSeconds(); }
    ns3::Time GetDuration() const { return ns3::Seconds(m_cfg.durationSeconds); }
    void SetBatch(ns3::Time t) { m_cfg.batchSeconds = t.GetSeconds(); }
    ns3::Time GetBatch() const { return ns3::Seconds(m_cfg.batchSeconds); }
    void SetFixedLatency(ns3::Time t) { m_cfg.fixedLatencySeconds = t.GetSeconds(); }
    ns3::Time GetFixedLatency() const { return ns3::Seconds(m_cfg.fixedLatencySeconds); }
    void SetIpBytes(uint32_t v) { m_cfg.ipBytes = v; }
    uint32_t GetIpBytes() const { return m_cfg.ipBytes; }
    void SetRoutes(uint32_t v) { m_cfg.routes = v; }
    uint32_t GetRoutes() const { return m_cfg.routes; }
    void SetLoad(double v) { m_cfg.offeredLoad = v; }
    double GetLoad() const { return m_cfg.offeredLoad; }
    void SetFabricBps(double v) { m_cfg.fabricBpsPerPfe = v; }
    double GetFabricBps() const { return m_cfg.fabricBpsPerPfe; }
    void SetIslip(uint32_t v) { m_cfg.islipIterations = v; }
    uint32_t GetIslip() const { return m_cfg.islipIterations; }
    void SetSeed(uint64_t v) { m_cfg.seed = v; }
    uint64_t GetSeed() const { return m_cfg.seed; }

    RouterConfig m_cfg;
    std::unique_ptr<RouterEngine> m_engine;
    uint64_t m_batches = 0;
    double m_limit = 0;
    ns3::TracedCallback<std::string, uint32_t> m_dropTrace;
    ns3::TracedCallback<uint32_t, ns3::Time> m_rxTrace;
};

} // namespace routertwin

#endif
