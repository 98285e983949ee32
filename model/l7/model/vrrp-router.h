// VrrpRouter: switch redundancy for the WebSwitch (seed 003 table 6:
// active/backup and active/active, every product) as a VRRPv3 virtual
// router (RFC 5798) on the clients' L2 segment. The seed names no protocol
// and no timer for any product: VRRP's is an assumption, the standard one.
//
// One VrrpRouter per switch and virtual router (VRID): a virtual IPv4
// address (the switch's virtual service) and the virtual MAC
// 00-00-5E-00-01-{VRID} (section 7.3). Section 6.4's state machine:
//   - Master: an ADVERTISEMENT (IPv4 protocol 112 to 224.0.0.18, TTL 255,
//     from the virtual MAC) every Advertisement_Interval; answers ARP for
//     the VIP with the virtual MAC; hands the switch every IPv4 frame sent
//     to the virtual MAC.
//   - Backup: Master_Down_Timer restarted at Master_Down_Interval =
//     3 x Master_Adver_Interval + Skew_Time, Skew_Time = ((256 - Priority)
//     x Master_Adver_Interval) / 256 (section 6.1), by every advertisement
//     of a priority not below its own (or any, without preemption); when it
//     fires the backup becomes master: an advertisement and a gratuitous
//     ARP (the virtual MAC for the VIP, broadcast), so a learning L2 switch
//     moves the virtual MAC to its port (section 6.4.2).
// Each state change tells the switch whether it serves the virtual
// address (WebSwitch::SetVipActive). What connection state the switches
// share is the profile's behaviour.session_sync (WebSwitch::SetSyncPeer):
// without it, connections the old master had bound break (the new master
// has no session for their segments: no_session, an RST).
#ifndef ROUTERTWIN_VRRP_ROUTER_H
#define ROUTERTWIN_VRRP_ROUTER_H

#include "web-switch.h"

#include <ns3/event-id.h>
#include <ns3/ipv4-address.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/traced-callback.h>

#include <cstdint>
#include <map>
#include <string>

namespace routertwin
{

class VrrpRouter : public ns3::Object
{
  public:
    enum State : uint8_t
    {
        Initialize,
        Backup,
        Master,
    };
    static ns3::TypeId GetTypeId();
    VrrpRouter();

    /// The virtual router vrid of switch sw on the segment device dev
    /// (which must support SendFrom), for the switch's virtual address vip;
    /// ownIp is the switch's own address on the segment (advertisements'
    /// source). Throws std::invalid_argument when the switch's profile has
    /// no such redundancy (activeActive: the switch is master of another
    /// VRID too).
    void Attach(ns3::Ptr<WebSwitch> sw, ns3::Ptr<ns3::NetDevice> dev, ns3::Ipv4Address ownIp,
                ns3::Ipv4Address vip, uint8_t vrid, bool activeActive = false);
    /// Startup event (section 6.4.1) at `at`.
    void Start(ns3::Time at);
    /// The switch dies: nothing more is sent or taken (its links are cut by
    /// the caller).
    void Stop();

    State GetState() const { return m_state; }
    ns3::Mac48Address VirtualMac() const { return m_vmac; }
    /// RFC 5798 section 6.1, for this router's priority and the master's interval.
    ns3::Time SkewTime() const;
    ns3::Time MasterDownInterval() const;
    /// RFC 5798 section 6.1 for a Master_Adver_Interval (in whole
    /// centiseconds, as the protocol carries it: finer parts are dropped)
    /// and a priority: Skew_Time = ((256 - priority) x interval) / 256,
    /// kept to the nanosecond (exact for every interval and priority up to
    /// half a nanosecond), and Master_Down_Interval = 3 x interval +
    /// Skew_Time. The router's timers and RunRedundantPair's closed form
    /// both use these.
    static ns3::Time SkewTime(ns3::Time masterAdverInterval, uint8_t priority);
    static ns3::Time MasterDownInterval(ns3::Time masterAdverInterval, uint8_t priority);
    /// Events counted by name (advertisements sent and received,
    /// gratuitous ARPs, ARP replies, frames handed to the switch).
    uint64_t Count(const std::string& what) const;

    /// (vrid, new state, time).
    typedef void (*StateTracedCallback)(uint8_t vrid, uint8_t state, ns3::Time at);

  private:
    bool Receive(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<const ns3::Packet> p, uint16_t proto,
                 const ns3::Address& from, const ns3::Address& to, ns3::NetDevice::PacketType type);
    void Advertisement(ns3::Ptr<const ns3::Packet> p);
    void Arp(ns3::Ptr<const ns3::Packet> p);
    void SendAdvertisement(uint8_t priority);
    void AdvertTimer();
    void MasterDown();
    void BecomeMaster();
    void BecomeBackup();
    void SendGratuitousArp();
    void Set(State s);

    ns3::Ptr<WebSwitch> m_switch;
    ns3::Ptr<ns3::NetDevice> m_dev;
    ns3::Ipv4Address m_ownIp;
    ns3::Ipv4Address m_vip;
    ns3::Mac48Address m_vmac;
    uint8_t m_vrid = 1;
    uint8_t m_priority = 100;
    bool m_preempt = true;
    ns3::Time m_adverInterval;       ///< this router's Advertisement_Interval
    ns3::Time m_masterAdverInterval; ///< the master's, learnt from its advertisements
    State m_state = Initialize;
    bool m_stopped = false;
    uint16_t m_ipId = 1;
    ns3::EventId m_adverTimer;
    ns3::EventId m_masterDownTimer;
    std::map<std::string, uint64_t> m_counts;
    ns3::TracedCallback<uint8_t, uint8_t, ns3::Time> m_stateTrace;
};

} // namespace routertwin

#endif
