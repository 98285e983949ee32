// Line rates from first principles: how many frames per second fit on an
// Ethernet port and on an OC-192 POS port, and why. Run it and compare with
// the numbers every RFC 2544 report starts from.
//
//   ./framing-line-rates
#include "ethernet-framing.h"
#include "pos-framing.h"

#include <cstdio>

using namespace routertwin;
using namespace routertwin::ethernet;

int
main()
{
    // Ethernet: a 64-byte frame (FCS included) also costs 8 bytes of
    // preamble/SFD and 12 of inter-frame gap on the wire: 84 bytes.
    std::printf("Ethernet, 10 Gbit/s\n");
    for (uint32_t frame : {64u, 128u, 512u, 1518u})
    {
        std::printf("  %5u-byte frames: %u wire bytes, %.2f pps\n", frame, WireBytes(frame),
                    LineRatePps(10e9, frame));
    }

    // POS: the STS-192c payload (9,584.64 Mbit/s of the 9,953.28 line rate)
    // carries PPP in HDLC-like framing: one shared flag, address, control,
    // protocol and a 32-bit FCS, 9 octets per packet before byte stuffing.
    PppHdlcConfig ppp; // FCS-32, shared flag (RFC 2615 on OC-192)
    const double payload = SonetPayloadBps(192);
    std::printf("POS OC-192c, payload %.2f Mbit/s, %u octets of framing per packet\n",
                payload / 1e6, ppp.OverheadBytes());
    for (unsigned ip : {40u, 42u, 1500u})
    {
        std::printf("  %4u-byte IP packets: %.1f pps per port\n", ip, TheoreticalPps(payload, ppp, ip));
    }
    return 0;
}
