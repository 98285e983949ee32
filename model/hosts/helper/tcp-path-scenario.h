// One TCP transfer over a virtual L3 path (routertwin._core.run_tcp_path;
// the Python kind tcp_path, docs/zstack.md).
//
// The path is a chain of nodes, nodes[0] the sender (IxChariot endpoint 1),
// nodes.back() the receiver (endpoint 2); links[i] joins nodes[i] and
// nodes[i+1]. Nodes with the same name are one box: they share one CPU
// server. Links with the same wire name (default: links between the same
// pair of box names) are one wire: its two direction servers are shared by
// every link that crosses it (a hairpin through a host's NIC puts data and
// ACKs in both directions of it). At most
// one box does DNAT: the sender connects to its EIP.
//
// Keys (the binding's dict; units in the names):
//   seed                        random streams (link loss)
//   nodes[] = {name, type, cpu_per_packet_s, cpu_per_byte_s, cpu_queue_packets,
//              latency_s, nat ("none"|"dnat"), nat_prices_ns {dp_ops counter: ns}}
//   links[] = {type, wire, rate_bps (0: none), frame_overhead_bytes, per_frame_s,
//              delay_s, queue_packets, loss_rate}
//   tcp = {congestion "cubic"|"newreno", mtu, timestamps, sack, window_scaling,
//          snd_buf_bytes, rcv_buf_bytes, initial_cwnd_segments,
//          ack_every_segments, delayed_ack_s, min_rto_s}
//   file_bytes, records         what each record sends (simulated), how many
//   duration_s                  > 0: one unbounded send for this long instead
//   loss_bins                   time bins of the drop and retransmission timelines (default 100) over the whole run
#ifndef ROUTERTWIN_TCP_PATH_SCENARIO_H
#define ROUTERTWIN_TCP_PATH_SCENARIO_H

#include "latency-histogram.h"
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct PathNodeSpec
{
    std::string name;
    std::string type;
    double cpuPerPacketS = 0;
    double cpuPerByteS = 0;
    uint32_t cpuQueuePackets = 1000;
    double latencyS = 0;
    bool dnat = false;
    std::map<std::string, double> natPricesNs; ///< dp_ops counter name -> ns per unit
};

struct PathLinkSpec
{
    std::string type;
    std::string wire; ///< links with one wire name share its servers; "" = the pair of box names
    double rateBps = 0; ///< 0: no per-byte time
    uint32_t frameOverheadBytes = 0;
    double perFrameS = 0;
    double delayS = 0;
    uint32_t queuePackets = 1000;
    double lossRate = 0;
};

struct HostTcpSpec
{
    std::string congestion = "cubic";
    uint32_t mtu = 1500;
    bool timestamps = true;
    bool sack = true;
    bool windowScaling = true;
    uint32_t sndBufBytes = 4194304;
    uint32_t rcvBufBytes = 4194304;
    uint32_t initialCwndSegments = 10;
    uint32_t ackEverySegments = 2;
    double delayedAckS = 0.04;
    double minRtoS = 0.2;

    /// TCP payload bytes per full segment: MTU - 20 (IPv4) - 20 (TCP) - 12
    /// (timestamps option, RFC 7323, padded to 4 bytes) when timestamps are on.
    uint32_t SegmentBytes() const { return mtu - 40 - (timestamps ? 12 : 0); }
};

struct TcpPathConfig
{
    uint64_t seed = 1;
    std::vector<PathNodeSpec> nodes;
    std::vector<PathLinkSpec> links;
    HostTcpSpec tcp;
    uint64_t fileBytes = 999999999;
    uint32_t records = 1;
    double durationS = 0;
    uint32_t lossBins = 100;

    /// Throws std::invalid_argument naming the key ("nodes[2].nat", ...).
    void Validate() const;
};

/// One server's share of the work (a wire direction or a box's CPU).
struct PathServerStat
{
    std::string name;    ///< "wire A->B (type)" or "cpu A (type)"
    double utilization;  ///< busy time / elapsed over the last record (or the duration)
    uint64_t served;
    uint64_t dropsQueueFull;
    uint64_t dropsRandomLoss;
    uint64_t dropsNat;
    uint32_t maxQueue;
    double serviceSecondsFull; ///< time to serve one full-size data packet (excl. NAT work)
};

struct TcpPathResult
{
    std::vector<double> recordSeconds;  ///< response time of each record
    std::vector<double> halfSeconds;    ///< time from the half mark to the last byte
    std::vector<double> halfBytes;      ///< bytes delivered in that time
    double durationGoodputBps = 0;      ///< duration mode: bytes delivered x 8 / duration
    bool completed = false;
    std::vector<PathServerStat> servers;
    uint64_t recoveries = 0;            ///< fast-recovery episodes (CA_RECOVERY entered)
    uint64_t timeouts = 0;              ///< RTOs (CA_LOSS entered)
    double rttMeanS = 0;                ///< mean RTT sample over the last record
    double rttMinS = 0;
    /// Every RTT sample of the last record (the sender's "RTT" trace), for
    /// its percentiles: queueing on the path shows as the spread above rttMinS.
    LatencyHistogram rtt;
    /// Every drop of the run on the server that dropped it (servers' order:
    /// the timeline's ports), at its time, by reason (PathDropName), over
    /// loss_bins bins of the whole run (0 .. simulatedSeconds): loss over
    /// time (issue 15). Its totals are the servers' drop counters.
    LossTimeline lossTimeline;
    /// The sender's loss responses at their times, in the loss timeline's
    /// bins (one port, the sender): "fast_recovery" (CA_RECOVERY entered)
    /// and "timeout" (CA_LOSS entered: ns-3 3.37's ReTxTimeout sets it on
    /// every RTO, so a backed-off RTO of the same episode is not another),
    /// ns-3's "CongState" trace, so its totals are recoveries and timeouts
    LossTimeline retransmissionTimeline;
    uint32_t segmentBytes = 0;
    uint64_t natConnections = 0;
    uint64_t natTranslated = 0;
    double natNsPerPacket = 0;          ///< priced C-core work per translated packet
    std::map<std::string, double> natOpsPerPacket; ///< dp_ops counts per translated packet
    double simulatedSeconds = 0;
};

TcpPathResult RunTcpPath(const TcpPathConfig& config);

} // namespace routertwin

#endif
