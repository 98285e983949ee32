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

#include <algorithm>
#include <cmath>

using namespace routertwin;

namespace
{

constexpr double kDelayS = 5e-3;     // each way, each link
constexpr double kFastBps = 1e9;     // a-r
constexpr double kSlowBps = 10e6;    // r-b
constexpr double kDataIp = 1500;     // the MTU: every data packet is full
constexpr double kSenderStartS = 0.001; // RunTcpPath starts the sender at 1 ms
constexpr double kMinRtoS = 1.0;        // RFC 6298 (2.4): "RTO SHOULD be rounded up to 1 second"

/// IPv4 sizes of the control packets, by whether TCP timestamps are on.
struct Headers
{
    double syn; ///< SYN and SYN-ACK
    double ack; ///< a pure ACK (the confirm is one more byte)
};
// ns-3 3.37's SYN: 20 IPv4 + 20 TCP + window scale (3) and SACK permitted
// (2), timestamps (10) when on, padded to a multiple of 4 (ns-3 sends no
// MSS option): 56 or 48 bytes. An ACK: 20 + 20 + 12 timestamps, or 40.
// (Each size is confirmed by the connected instant and the ACK times in
// ns-3's TcpSocketBase log: a 4-byte error moves a time by 3.2 us.)
constexpr Headers kTimestamps{56, 52};
constexpr Headers kNoTimestamps{48, 40};
// A duplicate ACK with timestamps also carries one SACK block (RFC 2018:
// 2 + 8 bytes); the options (10 + 10) are a multiple of 4 as they are.
constexpr double kDupAckIp = 60;

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
Connected(const Headers& h)
{
    return kSenderStartS + 2 * OneWay(h.syn);
}

/// When data packet k of the first window, none before it dropped, has
/// left r->b: the handshake ACK, then packets 1 .. k back to back from the
/// ACK's end (packet 1 came in while the ACK was in service).
double
BottleneckDone(const Headers& h, int k)
{
    const double ackDone = Connected(h) + Tx(h.ack, kFastBps) + kDelayS + Tx(h.ack, kSlowBps);
    return ackDone + k * Tx(kDataIp, kSlowBps);
}

/// When data packet k of the first window arrives at r (the handshake ACK
/// first on a->r).
double
AtRouter(const Headers& h, int k)
{
    return Connected(h) + Tx(h.ack, kFastBps) + kDelayS + k * Tx(kDataIp, kFastBps);
}

/// From the receiver sending an ACK-sized packet of ipBytes to its arrival at a.
double
Back(double ipBytes)
{
    return OneWay(ipBytes);
}

TcpPathConfig
Bottleneck(uint32_t queuePackets, uint32_t initialWindow, uint32_t segments, uint32_t bins, bool timestamps = true)
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
    c.tcp.timestamps = timestamps;
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

/// The tail-drop run below: one timeout, at timeoutAt, in its bin and no
/// other; no fast recovery; the one drop (packet 8 at r->b's queue, as it
/// arrives at r) in its bin on that port; lossBins bins over [0, end).
void
ExpectTailDrop(const TcpPathConfig& c, const TcpPathResult& r, const Headers& h, double timeoutAt)
{
    ASSERT_TRUE(r.completed);
    // the retransmitted 8, then the receiver's 1-byte confirm carrying the ACK
    const double endAt = timeoutAt + OneWay(kDataIp) + Back(h.ack + 1);
    EXPECT_NEAR(r.simulatedSeconds, endAt, 20e-6) << "the run's end (the confirm at a)";

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

    ASSERT_EQ(r.servers.size(), 4u);
    EXPECT_EQ(r.servers[kBottleneckPort].dropsQueueFull, 1u);
    const unsigned dropBin = BinOf(AtRouter(h, 8), r.simulatedSeconds, c.lossBins, 100e-6);
    ExpectOnlyBin(r.lossTimeline, kBottleneckPort, Reason(r.lossTimeline, "queue_full"), dropBin, 1.0);
    EXPECT_EQ(r.lossTimeline.Total(), 1.0);
}

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
    const double ack7At = BottleneckDone(kTimestamps, 7) + kDelayS + Back(kTimestamps.ack);
    ExpectTailDrop(c, r, kTimestamps, ack7At + kMinRtoS);
}

// The same tail drop with the RTO from RFC 6298's estimator, not its floor
// (min_rto 1 ms). Timestamps off, so ns-3 times each sample itself (Karn:
// from the send of the oldest segment the ACK covers; with timestamps it
// would read a 1 ms TSval clock): the SYN's round trip R0 = connected - 1 ms,
// then the ACKs of 1, 3, 5 and 7, each R = its arrival at a - connected (the
// window left at once). RFC 6298 (2.2): SRTT = R0, RTTVAR = R0 / 2; (2.3)
// for each later R: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8
// SRTT + 1/8 R; RTO = SRTT + max(G, 4 RTTVAR), G = ns-3's 1 ms clock
// granularity. The timer set at 7's ACK expires one RTO later (48.55 ms).
TEST(TcpPathTimeline, TailDropTimesOutAtTheRfc6298RtoOfTheRoundTrips)
{
    TcpPathConfig c = Bottleneck(6, 10, 8, 120, false);
    c.tcp.minRtoS = 1e-3;
    const TcpPathResult r = RunTcpPath(c);

    const Headers& h = kNoTimestamps;
    const double connected = Connected(h);
    double srtt = connected - kSenderStartS;
    double rttvar = srtt / 2;
    double ackAt = 0;
    for (int k : {1, 3, 5, 7})
    {
        ackAt = BottleneckDone(h, k) + kDelayS + Back(h.ack);
        const double sample = ackAt - connected;
        rttvar = 0.75 * rttvar + 0.25 * std::fabs(srtt - sample);
        srtt = 0.875 * srtt + 0.125 * sample;
    }
    const double rto = srtt + std::max(1e-3, 4 * rttvar);
    ASSERT_GT(rto, 2 * c.tcp.minRtoS); // the estimator decides, not the floor
    ExpectTailDrop(c, r, h, ackAt + rto);
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

    const Headers& h = kTimestamps;
    const double dropAt = AtRouter(h, 3);
    const double ack1At = BottleneckDone(h, 1) + kDelayS + Back(h.ack);
    // 5 and 6 leave a at ack1At, behind nothing: 6 leaves r->b after two
    // data packets' times at the bottleneck from 5's arrival at r
    const double sixDone = ack1At + Tx(kDataIp, kFastBps) + kDelayS + 2 * Tx(kDataIp, kSlowBps);
    const double recoveryAt = sixDone + kDelayS + Back(kDupAckIp);
    // the retransmitted 3 fills the gap: an immediate ACK (RFC 5681 4.2),
    // then the confirm behind it on b->r
    const double endAt = recoveryAt + OneWay(kDataIp) + Tx(h.ack, kSlowBps) + Back(h.ack + 1);
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
