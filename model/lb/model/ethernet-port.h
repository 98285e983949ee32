// EthernetPortDevice and EthernetLink: a full-duplex Ethernet port and the
// cable between two of them, for the packet-level path of the L4 balancer
// (real ns3::Packets between ns-3 nodes; docs/adx.md section 8).
//
// What travels is the L2 frame as dp_build writes it (destination MAC
// through the payload, no FCS) in an ns3::Packet; the port adds nothing to
// its bytes but times it as IEEE 802.3 does, with the framing model's
// arithmetic (ethernet-framing.h): the frame occupies the transmitter for
// WireBytes(frame + FCS) = preamble/SFD + padded frame + inter-frame gap,
// and its last bit reaches the peer (8 + padded frame) byte times after its
// first, plus the link's propagation Delay. Frames wait in a FIFO transmit
// queue of TxQueueFrames (0: unbounded); a frame that finds it full is
// dropped and reported by the "Drop" TraceSource as "tx_queue_full".
//
// Received frames go up through the node (Node::RegisterProtocolHandler,
// protocol = the frame's EtherType) like any ns-3 device's.
#ifndef ROUTERTWIN_ETHERNET_PORT_H
#define ROUTERTWIN_ETHERNET_PORT_H

#include <ns3/channel.h>
#include <ns3/data-rate.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>
#include <ns3/traced-callback.h>

#include <deque>

namespace routertwin
{

class EthernetLink;

class EthernetPortDevice : public ns3::NetDevice
{
  public:
    static ns3::TypeId GetTypeId();
    EthernetPortDevice();

    /// Connects the port to one end of link.
    void Attach(ns3::Ptr<EthernetLink> link);
    /// Called by the link when a frame's last bit has arrived.
    void Deliver(ns3::Ptr<ns3::Packet> frame);

    /// Seconds the frame (L2 bytes, no FCS) keeps the transmitter busy, and
    /// from its first bit sent to its last bit received without the Delay.
    double OccupancySeconds(uint32_t l2Bytes) const;
    double LastBitSeconds(uint32_t l2Bytes) const;

    /// Frames sent and received, the time frames waited in the transmit
    /// queue (sum), frames dropped.
    uint64_t TxFrames() const { return m_txFrames; }
    uint64_t RxFrames() const { return m_rxFrames; }
    ns3::Time TxQueueWait() const { return m_txWait; }
    uint64_t TxDrops() const { return m_txDrops; }

    // ns3::NetDevice
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
    /// Sends packet as a whole L2 frame (its own header says where to);
    /// dest and protocolNumber are not written into it.
    bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source, const ns3::Address& dest,
                  uint16_t protocolNumber) override;
    ns3::Ptr<ns3::Node> GetNode() const override;
    void SetNode(ns3::Ptr<ns3::Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(ns3::NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

    typedef void (*DropTracedCallback)(ns3::Ptr<const ns3::Packet> frame, const char* reason);

  protected:
    void DoDispose() override;

  private:
    void StartNext();

    ns3::DataRate m_rate;
    uint32_t m_queueLimit;
    ns3::Ptr<EthernetLink> m_link;
    ns3::Ptr<ns3::Node> m_node;
    uint32_t m_ifIndex = 0;
    ns3::Mac48Address m_address;
    uint16_t m_mtu = 9000;
    ns3::NetDevice::ReceiveCallback m_rx;
    ns3::NetDevice::PromiscReceiveCallback m_promiscRx;
    struct Queued
    {
        ns3::Ptr<ns3::Packet> frame;
        ns3::Time enqueued;
    };
    std::deque<Queued> m_queue;
    bool m_busy = false;
    uint64_t m_txFrames = 0, m_rxFrames = 0, m_txDrops = 0;
    ns3::Time m_txWait;
    ns3::TracedCallback<ns3::Ptr<const ns3::Packet>, const char*> m_dropTrace;
};

/// A full-duplex cable between two EthernetPortDevices.
class EthernetLink : public ns3::Channel
{
  public:
    static ns3::TypeId GetTypeId();
    EthernetLink();

    void Connect(ns3::Ptr<EthernetPortDevice> end);
    /// The frame whose last bit leaves `from` in lastBitSeconds reaches the
    /// other end that much later plus the Delay.
    void Carry(ns3::Ptr<EthernetPortDevice> from, ns3::Ptr<ns3::Packet> frame, ns3::Time lastBit);
    ns3::Time Delay() const { return m_delay; }

    std::size_t GetNDevices() const override;
    ns3::Ptr<ns3::NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    ns3::Time m_delay;
    ns3::Ptr<EthernetPortDevice> m_end[2];
};

} // namespace routertwin

#endif
