// tcp_path's drop and retransmission timelines (TcpPathResult lossTimeline
// and retransmissionTimeline) against times worked out by hand: a path whose
// bottleneck queue drops exactly one known data segment, so the sender's
// loss response comes at a time RFC 5681 / RFC 6675 (fast retransmit when
// three segments above the hole are acknowledged) or RFC 6298 (the
// retransmission timer) fixes from the path's serialization times and
// delays. Every time below is exact to the nanosecond in ns-3 (seen in
// TcpSocketBase's log); the bins are chosen so that each hand time is more
// than 100 us from a bin edge.
//
// The path: sender "a", router "r", receiver "b"; a-r at 1 Gbit/s, r-b at
// 10 Mbit/s (the bottleneck), 5 ms each way on each link, no framing
// overhead, no box CPU, timestamps on (1500-byte data packets of 1448
// payload bytes, 52-byte ACKs). The sender's handshake ACK and its first
// window leave together (ns-3 sends the ACK, then the data, at the SYN-ACK's
// instant), so at the router the ACK is in service on r->b (41.6 us) while
// the first data packets come in 12 us apart (at 12.4, 24.4, 36.4 us, ...)
// and wait in the r->b queue (QueueLimit packets waiting, the one in service
// not counted); from 42.0 us on, with packet 1 in service, packet k finds
// packets 2 .. k-1 waiting.
#include "tcp-path-scenario.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace routertwin;

namespace
{

constexpr double kDelayS = 5e-3;     // each way, each link
constexpr double kFastBps = 1e9;     // a-r
constexpr double kSlowBps = 10e6;    // r-b
constexpr double kDataIp = 1500;     // MTU: 1448 payload + 20 IPv4 + 20 TCP + 12 timestamps
constexpr double kAckIp = 52;        // 20 IPv4 + 20 TCP + 12 timestamps
// a duplicate ACK also carries one SACK block (RFC 2018: 2 + 8 bytes), the
// options (10 + 10) a multiple of 4 as they are: 60 bytes
constexpr double kDupAckIp = 60;
// ns-3 3.37's SYN and SYN-ACK: 20 IPv4 + 20 TCP + window scale (3), SACK
// permitted (2) and timestamps (10), padded to 16: 56 bytes (ns-3 sends no
// MSS option). A 4-byte error here moves every time below by 3.2 us.
constexpr double kSynIp = 56;
constexpr double kSenderStartS = 0.001; // RunTcpPath starts the sender at 1 ms
constexpr double kMinRtoS = 1.0;        // RFC 6298 (2.4): "RTO SHOULD be rounded up to 1 second"

double
Tx(double ipBytes, double bps)
{
    return ipBytes * 8.0 / bps;
}

/// One way a -> b or b -> a for a packet of ipBytes, the queues empty.
double
OneWay(double ipBytes)
{
    return Tx(ipBytes, kFastBps) + kDelayS + Tx(ipBytes, kSlowBps) + kDelayS;
}

/// The sender's connected instant: SYN there, SYN-ACK back.
double
Connected()
{
    return kSenderStartS + 2 * OneWay(kSynIp);
}

/// When data packet k of the first window, none before it dropped, has
/// left r->b: the handshake ACK, then packets 1 .. k back to back from the
/// ACK's end (packet 1 came in while the ACK was in service).
double
BottleneckDone(double connected, int k)
{
    const double ackDone = connected + Tx(kAckIp, kFastBps) + kDelayS + Tx(kAckIp, kSlowBps);
    return ackDone + k * Tx(kDataIp, kSlowBps);
}

/// From the receiver sending an ACK-sized packet of ipBytes to its arrival at a.
double
Back(double ipBytes)
{
    return OneWay(ipBytes);
}

TcpPathConfig
Bottleneck(uint32_t queuePackets, uint32_t initialWindow, uint32_t segments, uint32_t bins)
{
    TcpPathConfig c;
    for (const char* name : {"a", "r", "b"})
    {
        PathNodeSpec n;
        n.name = name;
        n.type = "host";
        c.nodes.push_back(n);
    }
    PathLinkSpec fast;
    fast.type = "fast";
    fast.rateBps = kFastBps;
    fast.delayS = kDelayS;
    PathLinkSpec slow = fast;
    slow.type = "slow";
    slow.rateBps = kSlowBps;
    slow.queuePackets = queuePackets;
    c.links = {fast, slow};
    c.tcp.initialCwndSegments = initialWindow;
    c.tcp.minRtoS = kMinRtoS;
    c.fileBytes = uint64_t(segments) * c.tcp.SegmentBytes();
    c.lossBins = bins;
    return c;
}

/// The bin of t in a timeline of `bins` bins over [0, span); the test only
/// trusts t when it is at least `margin` from either edge of that bin.
unsigned
BinOf(double t, double span, unsigned bins, double margin)
{
    const double width = span / bins;
    const double at = t / width;
    const double inside = (at - std::floor(at)) * width;
    EXPECT_GT(inside, margin) << "the hand time " << t << " s is too near a bin edge: choose other bins";
    EXPECT_LT(inside, width - margin) << "the hand time " << t << " s is too near a bin edge: choose other bins";
    return static_cast<unsigned>(std::floor(at));
}

/// Every bin of `timeline` (port 0, reason r) is zero but bin `only`, which holds n.
void
ExpectOnlyBin(const LossTimeline& timeline, unsigned port, unsigned reason, unsigned only, double n)
{
    double sum = 0;
    for (unsigned b = 0; b < timeline.Bins(); ++b)
    {
        const double v = timeline.At(port, b, reason);
        sum += v;
        EXPECT_EQ(v, b == only ? n : 0.0) << "bin " << b << " of " << timeline.Reasons()[reason];
    }
    EXPECT_EQ(sum, n);
}

unsigned
Reason(const LossTimeline& t, const std::string& name)
{
    for (unsigned r = 0; r < t.Reasons().size(); ++r)
    {
        if (t.Reasons()[r] == name)
        {
            return r;
        }
    }
    ADD_FAILURE() << "no reason " << name;
    return 0;
}

// Servers in RunTcpPath's order (no box costs anything, so no CPU server):
// a->r, r->a, r->b, b->r.
constexpr unsigned kBottleneckPort = 2;

} // namespace

// A tail drop: an 8-segment file in the first window (10 segments), 6
// packets may wait at r->b, so packet 8 finds packets 2 .. 7 waiting and is
// dropped; 1 .. 7 arrive and no duplicate ACK ever comes. ns-3 3.37's
// receiver ACKs the first data segment at once and then every second one
// (1, 3, 5, 7: its log shows it), so 7's ACK leaves at once. RFC 6298
// (5.3): that ACK, of new data, restarts the timer with RTO = max(min_rto,
// SRTT + 4 RTTVAR) (2.2, 2.3, 2.4); every RTT sample is under 35 ms, so
// SRTT + 4 RTTVAR < 5 x 35 ms < 1 s and RTO = min_rto = 1 s. The timer
// expires 1 s after 7's ACK reaches a: one timeout (CA_LOSS), no fast
// recovery; the retransmitted 8 completes the file and the receiver's
// 1-byte confirm (a 53-byte packet carrying the ACK) ends the run.
TEST(TcpPathTimeline, TailDropTimesOutOneRtoAfterTheLastNewAck)
{
    const TcpPathConfig c = Bottleneck(6, 10, 8, 330);
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);

    const double connected = Connected();
    const double dropAt = connected + Tx(kAckIp, kFastBps) + kDelayS + 8 * Tx(kDataIp, kFastBps);
    const double ack7At = BottleneckDone(connected, 7) + kDelayS + Back(kAckIp);
    const double timeoutAt = ack7At + kMinRtoS;
    const double endAt = timeoutAt + OneWay(kDataIp) + Back(kAckIp + 1);
    EXPECT_NEAR(r.simulatedSeconds, endAt, 20e-6) << "the run's end (the confirm at a)";

    // bins follow from the run: lossBins of equal width over [0, end)
    ASSERT_EQ(r.retransmissionTimeline.Bins(), c.lossBins);
    EXPECT_DOUBLE_EQ(r.retransmissionTimeline.BinSeconds(), r.simulatedSeconds / c.lossBins);
    ASSERT_EQ(r.lossTimeline.Bins(), c.lossBins);
    EXPECT_DOUBLE_EQ(r.lossTimeline.BinSeconds(), r.simulatedSeconds / c.lossBins);

    EXPECT_EQ(r.timeouts, 1u);
    EXPECT_EQ(r.recoveries, 0u);
    const LossTimeline& rt = r.retransmissionTimeline;
    const unsigned timeoutBin = BinOf(timeoutAt, r.simulatedSeconds, c.lossBins, 100e-6);
    ExpectOnlyBin(rt, 0, Reason(rt, "timeout"), timeoutBin, static_cast<double>(r.timeouts));
    ExpectOnlyBin(rt, 0, Reason(rt, "fast_recovery"), c.lossBins, static_cast<double>(r.recoveries));
    EXPECT_EQ(rt.Total(), static_cast<double>(r.timeouts + r.recoveries));

    // the one drop: packet 8 at r->b's queue, as it arrives at r
    ASSERT_EQ(r.servers.size(), 4u);
    EXPECT_EQ(r.servers[kBottleneckPort].dropsQueueFull, 1u);
    const unsigned dropBin = BinOf(dropAt, r.simulatedSeconds, c.lossBins, 100e-6);
    ExpectOnlyBin(r.lossTimeline, kBottleneckPort, Reason(r.lossTimeline, "queue_full"), dropBin, 1.0);
    EXPECT_EQ(r.lossTimeline.Total(), 1.0);
}

// A drop in the middle: a 6-segment file, a first window of 4, 2 packets
// may wait at r->b. Packets 1 and 2 wait behind the handshake ACK, so
// packet 3 (at 36.4 us, the ACK ends at 42.0 us) finds 2 waiting and is
// dropped; packet 4 (48.4 us) finds only 2 waiting behind 1 and passes.
// The receiver ACKs 1 at once (as above), which lets 5 and 6 go (slow
// start: cwnd 4 -> 5 with 2, 3, 4 in flight); 4, out of order, draws an
// immediate ACK (RFC 5681 4.2) that also acknowledges the held 2 and SACKs
// 4; 5 and 6 draw duplicates. With 6's, three segments above the hole are
// SACKed: RFC 6675's IsLost (DupThresh 3) starts fast retransmit and
// recovery there, as three duplicate ACKs would (RFC 5681 3.2). The
// retransmitted 3 completes the file: one fast recovery, no timeout
// (min_rto 1 s).
TEST(TcpPathTimeline, MidWindowDropRecoversOnTheThirdDuplicateAck)
{
    const TcpPathConfig c = Bottleneck(2, 4, 6, 100);
    const TcpPathResult r = RunTcpPath(c);
    ASSERT_TRUE(r.completed);

    const double connected = Connected();
    const double dropAt = connected + Tx(kAckIp, kFastBps) + kDelayS + 3 * Tx(kDataIp, kFastBps);
    const double ack1At = BottleneckDone(connected, 1) + kDelayS + Back(kAckIp);
    // 5 and 6 leave a at ack1At, behind nothing: 6 leaves r->b after two
    // data packets' times at the bottleneck from 5's arrival at r
    const double sixDone = ack1At + Tx(kDataIp, kFastBps) + kDelayS + 2 * Tx(kDataIp, kSlowBps);
    const double recoveryAt = sixDone + kDelayS + Back(kDupAckIp);
    // the retransmitted 3 fills the gap: an immediate ACK (RFC 5681 4.2),
    // then the confirm behind it on b->r
    const double endAt = recoveryAt + OneWay(kDataIp) + Tx(kAckIp, kSlowBps) + Back(kAckIp + 1);
    EXPECT_NEAR(r.simulatedSeconds, endAt, 20e-6) << "the run's end (the confirm at a)";
    ASSERT_EQ(r.retransmissionTimeline.Bins(), c.lossBins);
    EXPECT_DOUBLE_EQ(r.retransmissionTimeline.BinSeconds(), r.simulatedSeconds / c.lossBins);

    EXPECT_EQ(r.recoveries, 1u);
    EXPECT_EQ(r.timeouts, 0u);
    const LossTimeline& rt = r.retransmissionTimeline;
    const unsigned recoveryBin = BinOf(recoveryAt, r.simulatedSeconds, c.lossBins, 100e-6);
    ExpectOnlyBin(rt, 0, Reason(rt, "fast_recovery"), recoveryBin, static_cast<double>(r.recoveries));
    ExpectOnlyBin(rt, 0, Reason(rt, "timeout"), c.lossBins, static_cast<double>(r.timeouts));
    EXPECT_EQ(rt.Total(), static_cast<double>(r.timeouts + r.recoveries));

    EXPECT_EQ(r.servers[kBottleneckPort].dropsQueueFull, 1u);
    const unsigned dropBin = BinOf(dropAt, r.simulatedSeconds, c.lossBins, 100e-6);
    ExpectOnlyBin(r.lossTimeline, kBottleneckPort, Reason(r.lossTimeline, "queue_full"), dropBin, 1.0);
    EXPECT_EQ(r.lossTimeline.Total(), 1.0);
}
