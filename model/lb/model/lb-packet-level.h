// The L4 balancer at packet level: real ns3::Packets between ns-3 nodes.
//
// Topology (the Tolly test bed): a tester node and a balancer node, joined
// port to port by `ports` full-duplex Ethernet cables (EthernetPortDevice,
// EthernetLink). The first half of the ports carry the clients' side, the
// second half the servers' side, as a tester emulating both does
// (LbPortMap). Every frame is an ns3::Packet holding the L2 frame the
// C core parses; it is serialised on the tester's port, crosses the cable,
// arrives at the balancer's port, runs through the same L4BalancerDevice as
// at descriptor level (the C core, then its application core's queue: the
// PipelineEngine in RSS mode), leaves as a new ns3::Packet with the
// rewritten bytes on the port towards its destination, crosses back and is
// received by the tester. What differs from descriptor level is what a
// packet adds: serialisation on two 10GbE ports instead of one aggregate
// egress line, the cables' delay, and queueing at the ports.
//
// LbTesterApp drives the same LbTester (the report's generators) as the
// descriptor level: it emits each packet at its time on its port and
// tells the tester what came back. It learns nothing from the balancer
// directly: what the balancer refused or lost never arrives and counts as
// lost when the run ends (a tester's timeout). Workloads: all four. What the
// tester learns at run time (the server and SNAT port a connection's SYN
// reached, for http10's server packets; the SYN cookie, for the client's
// ACK) it learns from the frames that arrive, and a packet due before what
// it answers has arrived (LbTester::CanSend) is sent when that arrives, as
// a real endpoint answers; a packet whose predecessor never arrives counts
// as lost at the end. A SYN flood's SYNs go round robin over the flood's
// ports, each at its share of the flood rate.
#ifndef ROUTERTWIN_LB_PACKET_LEVEL_H
#define ROUTERTWIN_LB_PACKET_LEVEL_H

#include "ethernet-port.h"
#include "l4-balancer-device.h"
#include "latency-histogram.h"
#include "lb-testers.h"

#include <ns3/application.h>
#include <ns3/node.h>
#include <ns3/tag.h>

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace routertwin
{

/// Which of `ports` port pairs a frame to or from an address uses: client
/// addresses on the first half (((ip >> 8) + (ip & 255)) mod half, so
/// consecutive addresses go round the ports), servers
/// (10.1.0.0/16), the balancer's SNAT address and the VIPs (a DR frame to a
/// server keeps the VIP) on the second half.
struct LbPortMap
{
    uint32_t ports = 16;
    uint32_t PortOf(uint32_t ip) const;
    /// The port a tester packet enters the balancer on: a SYN flood's SYNs
    /// round robin over the first floodPorts ports (0: no flood), every
    /// other frame by its source address; with one port, that port.
    uint32_t IngressPort(const LbTester& tester, const LbTxPacket& pkt, uint32_t floodPorts) const;
};

/// Identifies a tester packet across the balancer (an ns-3 packet tag).
class LbFrameTag : public ns3::Tag
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(ns3::TagBuffer i) const override;
    void Deserialize(ns3::TagBuffer i) override;
    void Print(std::ostream& os) const override;
    uint32_t id = 0;
};

/// The balancer node's data path: frames from its ports through an
/// L4BalancerDevice (built with EgressBitRate 0: the ports serialise) and
/// out of the port towards their destination at their departure time; idle
/// aging every `agingInterval` as at descriptor level.
class L4BalancerPorts : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();

    void Install(ns3::Ptr<ns3::Node> node, ns3::Ptr<L4BalancerDevice> device,
                 const std::vector<ns3::Ptr<EthernetPortDevice>>& ports, LbPortMap map);
    /// Aging sweeps every intervalPs from 0 until endPs, the pacer's budget
    /// of buckets per shard each time (lb-scenario.h).
    void StartAging(uint64_t intervalPs, uint64_t endPs, std::function<uint32_t()> budget);
    /// Per core: the cycles of the frames that left it, and of the aging
    /// work that ended, in [fromPs, toPs).
    void SetWindow(uint64_t fromPs, uint64_t toPs);
    const std::vector<double>& WindowCycles() const { return m_windowCycles; }
    double WindowAgingCycles() const { return m_windowAging; }
    uint64_t Received() const { return m_received; }
    /// Records every frame the device drops, on the port it came in on, at
    /// its arrival, by reason (PipelineDropReasons), over `bins` bins of spanSeconds.
    void SetLossTimeline(uint32_t bins, double spanSeconds);
    const LossTimeline& Loss() const { return m_loss; }

  protected:
    void DoDispose() override;

  private:
    void Receive(ns3::Ptr<ns3::NetDevice> port, ns3::Ptr<const ns3::Packet> packet, uint16_t protocol,
                 const ns3::Address& from, const ns3::Address& to, ns3::NetDevice::PacketType type);
    void Transmit(ns3::Ptr<ns3::Packet> frame, uint32_t port);
    void Age();

    ns3::Ptr<L4BalancerDevice> m_device;
    std::vector<ns3::Ptr<EthernetPortDevice>> m_ports;
    LbPortMap m_map;
    uint64_t m_agingIntervalPs = 0, m_agingEndPs = 0;
    std::function<uint32_t()> m_agingBudget;
    uint64_t m_fromPs = 0, m_toPs = UINT64_MAX;
    std::vector<double> m_windowCycles;
    double m_windowAging = 0;
    uint64_t m_received = 0;
    LossTimeline m_loss;
    std::vector<PacketDesc> m_batch, m_departed, m_dropped;
    std::vector<L4BalancerDevice::AgingWork> m_work;
    // frames inside the balancer, by descriptor tag: the rewritten bytes
    std::unordered_map<uint32_t, std::pair<ns3::Ptr<ns3::Packet>, uint32_t>> m_inside;
    uint32_t m_nextTag = 0;
};

/// The tester node's application: LbTester's packets on the tester's ports.
class LbTesterApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();

    /// tester must outlive the app; ports[i] is cabled to the balancer's port i.
    /// floodPorts > 0: a SYN flood's spoofed SYNs go round robin over the
    /// first floodPorts ports (each at its share of the flood rate, as
    /// IxExplorer drives each port at line rate), not by their source address.
    void Configure(LbTester* tester, const std::vector<ns3::Ptr<EthernetPortDevice>>& ports, LbPortMap map,
                   uint64_t endPs, uint64_t slicePs, uint32_t floodPorts = 0);
    /// Every packet sent and never received, or never sent because what it
    /// answers never arrived, counts as lost (call after the run).
    void Finish();

    /// Frames sent, received; sum of (received - sent) over received frames.
    uint64_t Sent() const { return m_sent; }
    uint64_t Received() const { return m_received; }
    double SumLatencySeconds() const { return m_sumLatency; }
    /// The received frames' latencies (received - sent).
    const LatencyHistogram& Latency() const { return m_latency; }
    /// The same by the port each frame was sent on (= entered the balancer
    /// on), and their sums (s); they add up to Latency().
    const std::vector<LatencyHistogram>& PortLatency() const { return m_portLatency; }
    const std::vector<double>& PortLatencySumSeconds() const { return m_portSum; }

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Slice(uint64_t fromPs);
    void SendOne(LbTxPacket pkt);
    void Receive(ns3::Ptr<ns3::NetDevice> port, ns3::Ptr<const ns3::Packet> packet, uint16_t protocol,
                 const ns3::Address& from, const ns3::Address& to, ns3::NetDevice::PacketType type);

    LbTester* m_tester = nullptr;
    std::vector<ns3::Ptr<EthernetPortDevice>> m_ports;
    LbPortMap m_map;
    uint64_t m_endPs = 0, m_slicePs = 0;
    uint32_t m_floodPorts = 0;
    struct Outstanding
    {
        LbTxPacket pkt;
        uint64_t sentPs;
        uint32_t srcIp; ///< the frame's source address as sent
        uint32_t port;  ///< the tester port it was sent on
    };
    std::unordered_map<uint32_t, Outstanding> m_outstanding;
    /// Packets due before what they answer arrived, by unit (UnitKey).
    std::unordered_map<uint64_t, std::vector<LbTxPacket>> m_parked;
    static uint64_t UnitKey(const LbTxPacket& pkt);
    uint32_t m_nextId = 0;
    uint64_t m_sent = 0, m_received = 0;
    double m_sumLatency = 0;
    LatencyHistogram m_latency;
    std::vector<LatencyHistogram> m_portLatency;
    std::vector<double> m_portSum;
    std::vector<LbTxPacket> m_emit;
};

} // namespace routertwin

#endif
