// Hops of a virtual L3 path as FIFO servers (seed 004, docs/zstack.md).
//
// A real path between two VMs is a chain of servers: a vhost thread copying
// frames, a host CPU bridging them, a NIC serializing them at 1 Gbit/s, a
// switch ASIC, a NAT's conntrack. Each is modelled as one PathServer: a FIFO
// queue of at most QueueLimit packets in front of one server whose time per
// packet is PerPacket + (IP bytes + OverheadBytes) x PerByte, followed by a
// pipelined Delay (propagation, an ASIC's latency). What a server costs
// becomes throughput loss only when its time per packet exceeds the
// bottleneck's (it then limits packets/s); below that it only adds delay,
// which matters to TCP only when the window, not a server, limits it.
//
// A PathNetDevice is one end of a point-to-point link: what it sends goes
// through its transmit server (the link's direction) to the peer device; what
// arrives goes through the node's CPU server, if it has one, and then up to
// IPv4. Servers are shared by giving the same object to several devices: two
// traversals of one physical wire (a hairpin through a host's NIC) share its
// two direction servers, two appearances of one host share its CPU.
#ifndef ROUTERTWIN_PATH_LINK_H
#define ROUTERTWIN_PATH_LINK_H

#include "random-stream.h"

#include "ns3/channel.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace routertwin
{

class PathNetDevice;

/// Why a path server dropped a packet (VPP-style named reasons).
enum class PathDrop
{
    kQueueFull = 0, ///< the queue in front of the server held QueueLimit packets
    kRandomLoss,    ///< the link's LossRate
    kNat,           ///< the NAT hook refused it (no conntrack entry, not TCP/IPv4)
    kCount
};

/// Name of a drop reason ("queue_full", "random_loss", "nat").
const char* PathDropName(PathDrop reason);

/// One FIFO server of a path: a link direction's transmitter or a box's CPU.
class PathServer : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    PathServer();

    /// Runs on each packet when its service starts (a NAT rewriting headers):
    /// returns the extra service time, or a negative time to drop it.
    using ServiceHook = std::function<ns3::Time(ns3::Ptr<ns3::Packet>)>;
    void SetServiceHook(ServiceHook hook);
    /// Seeds the random loss (LossRate); each server draws from its own stream.
    void SetLossStream(uint64_t seed, uint64_t stream);

    /// Queues packet; once served and after Delay, `to->Arrive(packet,
    /// protocol, asCpu)`. False (and a named drop) when the queue is full.
    bool Enqueue(ns3::Ptr<ns3::Packet> packet, uint16_t protocol, ns3::Ptr<PathNetDevice> to, bool asCpu);

    /// Time the server was busy since the last ResetBusy.
    ns3::Time BusyTime() const;
    void ResetBusy();
    uint64_t Served() const { return m_served; }
    uint64_t Drops(PathDrop reason) const { return m_drops[static_cast<int>(reason)]; }
    uint32_t MaxQueue() const { return m_maxQueue; }
    /// The service time of a packet of ipBytes without hook work.
    ns3::Time ServiceTime(uint32_t ipBytes) const;

  protected:
    void DoDispose() override;

  private:
    struct Item
    {
        ns3::Ptr<ns3::Packet> packet;
        uint16_t protocol;
        ns3::Ptr<PathNetDevice> to;
        bool asCpu;
    };
    void StartNext();
    void Finish();
    void Drop(const ns3::Ptr<ns3::Packet>& p, PathDrop reason);

    ns3::Time m_perPacket;
    double m_perByteSeconds = 0;
    uint32_t m_overheadBytes = 0;
    uint32_t m_queueLimit = 1000;
    ns3::Time m_delay;
    double m_lossRate = 0;
    std::unique_ptr<RandomStream> m_loss;
    ServiceHook m_hook;

    std::deque<Item> m_queue;
    bool m_busy = false;
    Item m_inService;
    ns3::Time m_busySince;
    ns3::Time m_busyAccum;
    uint64_t m_served = 0;
    uint64_t m_drops[static_cast<int>(PathDrop::kCount)] = {};
    uint32_t m_maxQueue = 0;
    ns3::TracedCallback<ns3::Ptr<const ns3::Packet>, std::string> m_dropTrace;
};

/// The channel of one point-to-point path link: two PathNetDevices.
class PathChannel : public ns3::Channel
{
  public:
    static ns3::TypeId GetTypeId();
    void Attach(ns3::Ptr<PathNetDevice> a, ns3::Ptr<PathNetDevice> b);
    std::size_t GetNDevices() const override;
    ns3::Ptr<ns3::NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    ns3::Ptr<PathNetDevice> m_dev[2];
};

/// One end of a path link (point-to-point, no ARP).
class PathNetDevice : public ns3::NetDevice
{
  public:
    static ns3::TypeId GetTypeId();

    /// Wires this end: frames it sends go through `transmit` to `peer`;
    /// frames it receives through `cpu` (may be null) to the node.
    void Configure(ns3::Ptr<PathChannel> channel, ns3::Ptr<PathNetDevice> peer, ns3::Ptr<PathServer> transmit,
                   ns3::Ptr<PathServer> cpu);
    /// A packet at this device: from the wire (asCpu false: then through the
    /// node's CPU) or out of the CPU (up to IPv4).
    void Arrive(ns3::Ptr<ns3::Packet> packet, uint16_t protocol, bool asCpu);

    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    ns3::Ptr<ns3::Channel> GetChannel() const override;
    void SetAddress(ns3::Address address) override;
    ns3::Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(ns3::Callback<void> callback) override;
    bool IsBroadcast() const override;
    ns3::Address GetBroadcast() const override;
    bool IsMulticast() const override;
    ns3::Address GetMulticast(ns3::Ipv4Address multicastGroup) const override;
    ns3::Address GetMulticast(ns3::Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source, const ns3::Address& dest,
                  uint16_t protocolNumber) override;
    ns3::Ptr<ns3::Node> GetNode() const override;
    void SetNode(ns3::Ptr<ns3::Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(ns3::NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;

  private:
    ns3::Ptr<ns3::Node> m_node;
    ns3::Ptr<PathChannel> m_channel;
    ns3::Ptr<PathNetDevice> m_peer;
    ns3::Ptr<PathServer> m_transmit;
    ns3::Ptr<PathServer> m_cpu;
    ns3::Mac48Address m_address;
    uint32_t m_ifIndex = 0;
    uint16_t m_mtu = 1500;
    ns3::NetDevice::ReceiveCallback m_rx;
};

} // namespace routertwin

#endif
