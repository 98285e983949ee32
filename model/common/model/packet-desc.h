// PacketDesc: the compact packet descriptor that testers and device models
// exchange inside a run, in place of an ns3::Packet per device stage
// (DESIGN.md, "Performance design"). Testers fill the arrival time, flow,
// sequence number and frame size; a device fills in what it did to the
// packet (departure time, drop verdict).
#ifndef ROUTERTWIN_PACKET_DESC_H
#define ROUTERTWIN_PACKET_DESC_H

#include <cstdint>

namespace routertwin
{

/// One packet, 32 bytes.
struct PacketDesc
{
    uint64_t arrivalPs;     ///< last bit received at the device input, ps
    uint64_t departPs;      ///< out: last bit sent on egress + fixed latency, ps
    uint32_t seq;           ///< per-flow sequence number (set by the sender)
    uint32_t flow;          ///< flow id, small dense integer (tag / RSS hash input)
    uint32_t serviceCycles; ///< core cycles of the packet's work (set by the workload)
    uint16_t frameBytes;    ///< Ethernet frame incl. FCS, excl. preamble/IFG
    uint8_t drop;           ///< out: the device's drop verdict, 0 = delivered (the pipeline's PipelineDrop)
    uint8_t dpDrop;         ///< dp_drop_reason_t verdict of the work; != DP_OK drops it
};
static_assert(sizeof(PacketDesc) == 32, "PacketDesc must stay one half cache line");

} // namespace routertwin

#endif
