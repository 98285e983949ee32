// What realistic workloads (issue 16) cost the packet path: the twin's
// 48-core CN78xx-like pipeline of ns3-vs-twin-bench.cc offered one frame
// size (constant or Poisson arrivals), a frame-size mix (simple IMIX,
// drawn per frame), bursty MMPP arrivals with Zipf flows over 1000 flows,
// flow-level traffic (Pareto flow sizes, flows starting and ending), or a
// pcap or pcapng trace replayed (written here first: simple IMIX sizes,
// 1000 flows, looped and rescaled).
//
// Usage: workload_bench [--workload single|poisson|mix|bursty|flows|trace|pcapng|pcapng-binary|pcapng-offset|pcapng-pico|pcapng-simple] [--packets N]
//   Prints packets, ns-3 events and wall seconds. Instructions per
//   packet-hop, the figure bench/README and docs/workloads.md quote:
//     valgrind --tool=callgrind --toggle-collect='ns3::Simulator::Run()' \
//       workload_bench --workload mix --packets 1000000
//   and divide "I refs" by the packets printed (every packet is one hop).
//   The trace is scanned once before Simulator::Run (its summary: rate and
//   span), outside the collected function; reading it again inside Run is
//   counted. The trace file is written to the current folder.
// Measured (300,000 packets, instructions per packet-hop; every row includes
// the tester's latency histogram, ~100 a packet): single 806, poisson 945,
// mix 894 (1.11x single), bursty 1105 (1.37x; 1.17x poisson), flows 1112
// (1.38x; 985 marginal from 300,000 to 900,000 packets, 1.22x), trace 1114
// (1.38x; 1082 before the trace's addresses, ports and TCP fields were
// read), pcapng 1128 (1.40x; 1183, 1.47x, before its fast path),
// pcapng-binary 1139 (1.41x), pcapng-offset 1128, pcapng-simple 1105
// (1.37x), pcapng-pico 1132 (1.40x; 1346, 1.67x, on the general block loop):
// docs/workloads.md. PcapTrace::KeepPayload (the web switch's HTTP trace
// replay; off on this path) costs its flag and an offset: trace 1300 -> 1308
// (+0.6 %), pcapng 1315 -> 1317 (+0.2 %), the binaries before and after it
// measured in one session (300,000 packets; both above the figures here,
// which were taken on another build).
#include "forwarding-scenario.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

// The UDP frame of packet i of the bench traces: simple IMIX sizes in a
// 7:4:1 rotation, 1000 flows (source address and port). Returns its length.
uint32_t
TraceFrame(uint32_t i, std::vector<uint8_t>& frame)
{
    const uint32_t sizes[12] = {60, 590, 60, 60, 590, 60, 1514, 60, 590, 60, 60, 590};
    const uint32_t len = sizes[i % 12], flow = (i * 7919u) % 1000u;
    frame.assign(1516, 0); // the largest frame padded to 32 bits (pcapng)
    frame[12] = 0x08;
    frame[13] = 0x00;
    frame[14] = 0x45;
    frame[23] = 17;
    frame[26] = 198, frame[27] = 18, frame[28] = static_cast<uint8_t>(flow >> 8),
    frame[29] = static_cast<uint8_t>(flow);
    frame[30] = 198, frame[31] = 19, frame[32] = 0, frame[33] = 1;
    frame[34] = static_cast<uint8_t>((1024 + flow) >> 8), frame[35] = static_cast<uint8_t>(1024 + flow);
    return len;
}

// How a pcapng file of the bench's packets records them: if_tsresol 10^-9
// (the fast path's common case), 2^-30 s (a binary unit), 10^-9 with an
// if_tsoffset, 10^-12 s (finer than a ns: a division per timestamp), or
// Simple Packet Blocks (no timestamp: each takes the
// previous packet's instant; every tenth packet is an Enhanced Packet Block,
// so the trace has a span: bursts of ten at 10 us).
enum class PcapngForm
{
    kNanos,
    kBinary,
    kOffset,
    kPico,
    kSimple,
};

// The same packets as pcapng (host byte order, which the section's
// byte-order magic records): a section header, one Ethernet interface,
// blocks 1 us apart (Simple Packet Blocks: see PcapngForm).
void
WritePcapng(const std::string& path, uint32_t n, PcapngForm form)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
    {
        std::perror(path.c_str());
        std::exit(1);
    }
    auto u32 = [&](uint32_t v) { std::fwrite(&v, 4, 1, f); };
    auto u16 = [&](uint16_t v) { std::fwrite(&v, 2, 1, f); };
    u32(0x0A0D0D0Au); // section header: magic, version 1.0, unknown length
    u32(28);
    u32(0x1A2B3C4Du);
    u16(1);
    u16(0);
    u32(0xFFFFFFFFu);
    u32(0xFFFFFFFFu);
    u32(28);
    // interface: Ethernet, no snaplen, if_tsresol (10^-9 or 2^-30), and
    // for kOffset an if_tsoffset of 1,700,000,000 s; end of options
    const bool offset = form == PcapngForm::kOffset;
    u32(1);
    u32(offset ? 44 : 32);
    u16(1);
    u16(0);
    u32(0);
    u16(9);
    u16(1);
    u32(form == PcapngForm::kBinary ? 0x80 | 30 : form == PcapngForm::kPico ? 12 : 9);
    if (offset)
    {
        u16(14);
        u16(8);
        const uint64_t seconds = 1700000000;
        std::fwrite(&seconds, 8, 1, f);
    }
    u32(0);
    u32(offset ? 44 : 32);
    std::vector<uint8_t> frame;
    for (uint32_t i = 0; i < n; ++i)
    {
        const uint32_t len = TraceFrame(i, frame), padded = (len + 3) / 4 * 4;
        if (form == PcapngForm::kSimple && i % 10 != 0)
        {
            u32(3); // simple packet block: original length, the frame
            u32(16 + padded);
            u32(len);
            std::fwrite(frame.data(), 1, padded, f);
            u32(16 + padded);
            continue;
        }
        // i us, in the interface's unit (2^-30 s: i x 2^30 / 10^6, rounded)
        const uint64_t ts = form == PcapngForm::kBinary ? (uint64_t(i) * (1ull << 30) + 500000) / 1000000
                            : form == PcapngForm::kPico ? uint64_t(i) * 1000000
                                                        : uint64_t(i) * 1000;
        u32(6);
        u32(32 + padded);
        u32(0);
        u32(static_cast<uint32_t>(ts >> 32));
        u32(static_cast<uint32_t>(ts));
        u32(len);
        u32(len);
        std::fwrite(frame.data(), 1, padded, f); // the frame's zero tail pads it
        u32(32 + padded);
    }
    std::fclose(f);
}

// A pcap of `n` UDP packets (TraceFrame), 1 us apart.
void
WriteTrace(const std::string& path, uint32_t n)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
    {
        std::perror(path.c_str());
        std::exit(1);
    }
    auto u32 = [&](uint32_t v) { std::fwrite(&v, 4, 1, f); }; // host order: the magic says which
    auto u16 = [&](uint16_t v) { std::fwrite(&v, 2, 1, f); };
    u32(0xA1B2C3D4u);
    u16(2);
    u16(4);
    u32(0);
    u32(0);
    u32(65535);
    u32(1);
    std::vector<uint8_t> frame;
    for (uint32_t i = 0; i < n; ++i)
    {
        const uint32_t len = TraceFrame(i, frame);
        u32(i / 1000000u);
        u32(i % 1000000u);
        u32(len);
        u32(len);
        std::fwrite(frame.data(), 1, len, f);
    }
    std::fclose(f);
}

} // namespace

int
main(int argc, char** argv)
{
    std::string workload = "single";
    uint64_t packets = 1000000;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (i + 1 < argc && a == "--workload")
        {
            workload = argv[++i];
        }
        else if (i + 1 < argc && a == "--packets")
        {
            packets = std::strtoull(argv[++i], nullptr, 10);
        }
        else
        {
            std::fprintf(stderr, "usage: workload_bench [--workload single|poisson|mix|bursty|flows|trace|pcapng|pcapng-binary|pcapng-offset|pcapng-pico|pcapng-simple] [--packets N]\n");
            return 2;
        }
    }
    routertwin::ForwardingScenarioConfig c;
    c.numCores = 48;
    c.clockHz = 1.8e9;
    c.scheduling = "ordered";
    c.numFlows = 4;
    c.portBitRate = 100e9;
    c.inputPpsCeiling = 104.9e6;
    c.fixedCyclesPerPacket = 460;
    c.counterPrices["cache_lines"] = 40;
    c.fixedLatencySeconds = 1.27e-6;
    c.inputQueueDepth = 4096;
    // The same offered rate for every workload (below the IMIX line rate,
    // 32.7 Mpps on 100G), so the engine does the same work per packet.
    c.offeredPps = 30e6;
    if (workload == "single" || workload == "poisson")
    {
        c.frameBytes = 64;
        if (workload == "poisson")
        {
            c.arrivals = "poisson"; // the baseline of the bursty arrivals: same draws per frame
        }
    }
    else if (workload == "mix" || workload == "bursty")
    {
        c.frameMix = routertwin::FrameSizeMix::Named("simple_imix");
        if (workload == "bursty")
        {
            c.arrivals = "mmpp";
            c.flowPopularity = "zipf";
            c.numFlows = 1000;
        }
    }
    else if (workload == "flows")
    {
        // Flow-level traffic: Poisson flow starts, Pareto(1.2) packets per
        // flow (mean E[ceil X] = 6.6), about 1000 flows active at once.
        c.frameMix = routertwin::FrameSizeMix::Named("simple_imix");
        c.arrivals = "poisson";
        c.flowSizes.kind = routertwin::FlowSizeKind::kPareto;
        c.flowSizes.paretoAlpha = 1.2;
        c.flowSizes.paretoMinPackets = 1;
        c.numFlows = 1000;
    }
    else if (workload == "trace")
    {
        c.traceFile = "workload-bench-trace.pcap";
        WriteTrace(c.traceFile, 100000);
        c.traceRescale = true;
        c.traceLoop = true;
    }
    else if (workload == "pcapng" || workload == "pcapng-binary" || workload == "pcapng-offset" ||
             workload == "pcapng-pico" || workload == "pcapng-simple")
    {
        const PcapngForm form = workload == "pcapng"          ? PcapngForm::kNanos
                                : workload == "pcapng-binary" ? PcapngForm::kBinary
                                : workload == "pcapng-offset" ? PcapngForm::kOffset
                                : workload == "pcapng-pico"   ? PcapngForm::kPico
                                                              : PcapngForm::kSimple;
        c.traceFile = "workload-bench-trace-" + workload + ".pcapng";
        WritePcapng(c.traceFile, 100000, form);
        c.traceRescale = true;
        c.traceLoop = true;
    }
    else
    {
        std::fprintf(stderr, "workload_bench: --workload must be single, poisson, mix, bursty, flows, trace, pcapng, pcapng-binary, pcapng-offset, pcapng-pico or pcapng-simple\n");
        return 2;
    }
    c.durationSeconds = static_cast<double>(packets) / c.offeredPps;
    const auto t0 = std::chrono::steady_clock::now();
    const routertwin::ForwardingScenarioResult r = routertwin::RunForwardingScenario(c);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("workload %s: %llu packets (rx %llu, mean frame %.1f B), %llu ns-3 events, %.3f s wall, "
                "%.2f M packet-hops/s\n",
                workload.c_str(), static_cast<unsigned long long>(r.txPackets),
                static_cast<unsigned long long>(r.rxPackets), r.meanFrameBytes,
                static_cast<unsigned long long>(r.simEvents), wall, r.txPackets / wall / 1e6);
    return 0;
}
