// The smallest RFC 2544 trial: an Rfc2544Tester whose transmit port is wired
// straight back to its receive port, configured through ns-3 Attributes and
// run by the ns-3 simulator. With nothing in between, every frame comes back
// (zero loss) and the forwarded rate is the offered rate: the tester's own
// baseline before a device is put in the loop.
//
//   ./testers-loopback
#include "rfc2544-tester.h"

#include <ns3/core-module.h>

#include <cstdio>
#include <vector>

using namespace ns3;
using routertwin::PacketDesc;
using routertwin::Rfc2544Tester;

namespace
{
Ptr<Rfc2544Tester> g_tester;

// A zero-length cable: a frame is back the instant its last bit left.
void
Wire(std::vector<PacketDesc>& batch)
{
    for (PacketDesc& d : batch)
    {
        d.departPs = d.arrivalPs;
    }
    g_tester->Receive(batch);
}
} // namespace

int
main()
{
    g_tester = CreateObject<Rfc2544Tester>();
    g_tester->SetAttribute("FrameBytes", UintegerValue(64));
    g_tester->SetAttribute("OfferedPps", DoubleValue(1e6));
    g_tester->SetAttribute("Duration", TimeValue(MilliSeconds(10)));
    g_tester->SetTransmitCallback(MakeCallback(&Wire));
    Simulator::Schedule(Seconds(0), &Rfc2544Tester::Start, g_tester);
    Simulator::Run();

    const routertwin::TesterResults r = g_tester->Results();
    std::printf("tx %llu rx %llu lost %llu, forwarded %.0f pps of %.0f offered\n",
                static_cast<unsigned long long>(r.txPackets), static_cast<unsigned long long>(r.rxPackets),
                static_cast<unsigned long long>(r.lostPackets), r.forwardedPps, r.offeredPps);
    g_tester = nullptr;
    Simulator::Destroy();
    return 0;
}
