// One TCP transfer over a single gigabit Ethernet link, on ns-3's TCP with
// CentOS 6.9's settings (CUBIC, MSS 1448 with timestamps): the goodput of
// the transfer's second half against the line-rate closed form
// 1e9 x 1448 / (1448 + 52 + gbe.frameOverheadBytes) = 941.48 Mbit/s.
#include "ethernet-framing.h"
#include "tcp-path-scenario.h"

#include <cstdio>

int
main()
{
    using namespace routertwin;
    TcpPathConfig c;
    PathNodeSpec sender, receiver;
    sender.name = "sender";
    receiver.name = "receiver";
    c.nodes = {sender, receiver};
    PathLinkSpec gbe;
    gbe.type = "gbe";
    gbe.rateBps = 1e9;
    // Ethernet header (14), FCS, preamble/SFD and inter-frame gap: 38 bytes
    gbe.frameOverheadBytes = 14 + ethernet::kFcsBytes + ethernet::kOverheadBytes;
    c.links = {gbe};
    // 1 MB of send buffer: the window fills the path but not the 1000-frame
    // queue, so the wire never idles and nothing is lost.
    c.tcp.sndBufBytes = 1 << 20;
    c.fileBytes = 20000000;
    const TcpPathResult r = RunTcpPath(c);
    const double steady = 8.0 * r.halfBytes.back() / r.halfSeconds.back();
    const double closedForm = 1e9 * 1448.0 / (1448 + 52 + gbe.frameOverheadBytes);
    std::printf("record of %llu bytes: %.3f s, %.2f Mbit/s; second half %.2f Mbit/s (closed form %.2f)\n",
                static_cast<unsigned long long>(c.fileBytes), r.recordSeconds.back(),
                8.0 * c.fileBytes / r.recordSeconds.back() / 1e6, steady / 1e6, closedForm / 1e6);
    return 0;
}
