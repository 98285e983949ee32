// The octets a router tester puts on the wire in the T640 test, so that POS
// byte stuffing (pos-framing.h) is computed from actual packets.
//
// Contract: BuildTesterPacket() writes one IPv4 packet of cfg.ipBytes octets
// for packet number `seq` of a stream sent at time txTicks. Layout (an
// ASSUMPTION: the seed does not describe the Agilent RouterTester signature):
//   IPv4 header, 20 octets: 0x45, TOS 0, total length, ID = seq mod 2^16,
//   no fragmentation, TTL 64, protocol 253 (RFC 3692 experimental), header
//   checksum, source = stream address, destination = the seq-th address of
//   the destination list (cycled);
//   payload: sequence number (4 octets), transmit timestamp in tester ticks
//   (4 octets), stream id (4 octets), then zero fill.
// The fields that change packet to packet (ID, checksum, sequence, timestamp,
// destination, and the FCS computed over all of them) are what makes the
// escape count vary; the constant fields matter only through their values.
//
// MeasureTesterLine() frames `packets` consecutive packets of one stream at
// full line rate and returns the mean escapes per frame and the resulting
// transmit rate, which is what "100% load" yields on a POS link.
#ifndef ROUTERTWIN_T640_TESTER_TRAFFIC_H
#define ROUTERTWIN_T640_TESTER_TRAFFIC_H

#include "pos-framing.h"

#include <cstdint>
#include <vector>

namespace routertwin
{

struct TesterStreamConfig
{
    unsigned ipBytes = 40;             ///< IP packet length (>= 32: header + signature)
    uint32_t srcIp = 0x0A000001;       ///< stream source address
    std::vector<uint32_t> dstIps;      ///< destinations, cycled packet by packet
    uint32_t streamId = 1;             ///< tester stream identifier
    double tickSeconds = 10e-9;        ///< timestamp resolution (ASSUMPTION: 10 ns)
};

/// Writes the seq-th packet into out (resized to cfg.ipBytes), to
/// dstIps[seq mod n], or to dstIps[dstIndex mod n] when a popularity picks
/// it (dstIndex != kCycleDestinations). Throws std::invalid_argument when
/// ipBytes < 32 or dstIps is empty.
constexpr uint64_t kCycleDestinations = UINT64_MAX;
void BuildTesterPacket(const TesterStreamConfig& cfg, uint64_t seq, double txSeconds,
                       std::vector<uint8_t>& out, uint64_t dstIndex = kCycleDestinations);

struct TesterLineStats
{
    uint64_t frames = 0;
    double meanEscapes = 0;      ///< mean escapes per frame over the run
    double meanWireBytes = 0;    ///< nominal frame bytes + meanEscapes
    double pps = 0;              ///< frames/s at full line rate with these escapes
    double pctOfTheoretical = 0; ///< 100 * pps / TheoreticalPps
};

/// Frames `packets` packets of the stream back to back on a POS link of
/// payloadBps and reports what full line rate achieves. Timestamps follow the
/// frames' own transmit times, so they advance as the real ones would.
TesterLineStats MeasureTesterLine(const TesterStreamConfig& cfg, const PppHdlcConfig& ppp,
                                  double payloadBps, uint64_t packets);

/// Destination addresses for `routes` routes advertised as consecutive /24s
/// from `firstPrefix` (host part .1). ASSUMPTION: the seed gives the route
/// counts (15,625 per peer) but not the prefixes.
std::vector<uint32_t> RouteDestinations(uint32_t firstPrefix, uint32_t routes);

} // namespace routertwin

#endif
