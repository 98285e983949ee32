// libFuzzer harness for the trace readers (pcap-trace.h): classic pcap and
// pcapng, in either byte order, on arbitrary bytes.
//
// The input is the file. It is written to a scratch file (PcapTrace streams
// from a path) and read to its end, twice: Scan() and then Next() after the
// rewind. Besides crashes and sanitizer reports, the harness aborts when the
// reader breaks what pcap-trace.h promises:
//   - a refusal is a TraceError whose message starts with the file's name
//     (no other exception type escapes);
//   - every packet has a frame of 64..9216 bytes and a flow below the cap;
//   - the packet index counts the packets returned;
//   - a rewind replays exactly the same packets (times, sizes, flows,
//     addresses, ports, TCP flags and payload) as the first pass, the
//     second with the payload kept (KeepPayload), and Scan() counts and
//     sums what Next() returns;
//   - a kept payload is no longer than the segment's payload, empty on
//     anything but TCP, and nothing is kept unless asked for;
//   - addresses only on IPv4 packets, flags and payload only on TCP ones;
//   - the reader never reads beyond the file (ASan on its buffer).
#include "pcap-trace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{
constexpr uint32_t kMaxFlows = 8;

#define CHECK(cond)                                                                                       \
    do                                                                                                    \
    {                                                                                                     \
        if (!(cond))                                                                                      \
        {                                                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                 \
            std::abort();                                                                                 \
        }                                                                                                 \
    } while (0)

std::string g_path;

void
RemoveScratch()
{
    if (!g_path.empty())
    {
        unlink(g_path.c_str());
    }
}

const std::string&
ScratchPath()
{
    if (g_path.empty())
    {
        char name[] = "/tmp/fuzz_pcap_trace.XXXXXX";
        const int fd = mkstemp(name);
        CHECK(fd >= 0);
        close(fd);
        g_path = name;
        std::atexit(RemoveScratch);
    }
    return g_path;
}

struct Pass
{
    std::vector<routertwin::TracePacket> packets;
    std::string error; // "" when the file read to its end
};

Pass
ReadAll(routertwin::PcapTrace& t, const std::string& path, bool kept)
{
    Pass pass;
    try
    {
        routertwin::TracePacket p;
        while (t.Next(p))
        {
            CHECK(p.frameBytes >= 64 && p.frameBytes <= 9216);
            CHECK(p.flow < kMaxFlows);
            CHECK(t.Payload().size() <= p.tcpPayload);
            CHECK((kept && p.tcp) || t.Payload().empty());
            pass.packets.push_back(p);
            CHECK(t.PacketIndex() == pass.packets.size());
        }
    }
    catch (const routertwin::TraceError& e)
    {
        pass.error = e.what();
        CHECK(pass.error.rfind(path + ": ", 0) == 0);
    }
    return pass;
}
} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string& path = ScratchPath();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    CHECK(f);
    CHECK(std::fwrite(data, 1, size, f) == size);
    CHECK(std::fclose(f) == 0);

    try
    {
        routertwin::PcapTrace t(path, kMaxFlows);
        const Pass first = ReadAll(t, path, false);
        t.Rewind();
        t.KeepPayload(true);
        const Pass second = ReadAll(t, path, true);
        t.KeepPayload(false);
        CHECK(first.error == second.error);
        CHECK(first.packets.size() == second.packets.size());
        for (size_t i = 0; i < first.packets.size(); ++i)
        {
            CHECK(first.packets[i].ns == second.packets[i].ns);
            CHECK(first.packets[i].frameBytes == second.packets[i].frameBytes);
            CHECK(first.packets[i].flow == second.packets[i].flow);
            const routertwin::TracePacket& a = first.packets[i];
            const routertwin::TracePacket& b = second.packets[i];
            CHECK(a.ipv4 == b.ipv4 && a.ipv4Src == b.ipv4Src && a.ipv4Dst == b.ipv4Dst);
            CHECK(a.srcPort == b.srcPort && a.dstPort == b.dstPort);
            CHECK(a.tcp == b.tcp && a.tcpFlags == b.tcpFlags && a.tcpPayload == b.tcpPayload);
            CHECK(a.ipv4 || (a.ipv4Src == 0 && a.ipv4Dst == 0));
            CHECK(a.tcp || (a.tcpFlags == 0 && a.tcpPayload == 0));
            CHECK(a.tcpPayload <= 65535); // from the IP header's 16-bit length
        }
        if (first.error.empty())
        {
            const routertwin::PcapTrace::Summary s = t.Scan();
            CHECK(s.packets == first.packets.size());
            uint64_t counted = 0;
            for (const auto& [bytes, n] : s.frameSizes)
            {
                CHECK(bytes >= 64 && bytes <= 9216);
                counted += n;
            }
            CHECK(counted == s.packets);
            if (s.packets)
            {
                CHECK(s.firstNs == first.packets.front().ns && s.lastNs == first.packets.back().ns);
            }
        }
    }
    catch (const routertwin::TraceError& e)
    {
        // Refused on opening (file header, first section header).
        CHECK(std::string(e.what()).rfind(path + ": ", 0) == 0);
    }
    return 0;
}
