// LbScenario: wires an LbTester (the Tolly report's generators) to an
// L4BalancerDevice, runs ns3::Simulator in batches until every packet is
// back or dropped, and returns what a Tolly load step reports: offered and
// completed rate, CPU per core, cycles per unit, drops by reason, the
// bottleneck. Or, for workload "fill", inserts connections into one core's
// session-table shard until it refuses one (the concurrency test).
//
// The configuration arrives from Python as a dict (routertwin._core.run_lb);
// LbScenarioConfig::FromKeys maps the keys below onto the struct and rejects
// any other key with std::invalid_argument naming it (ValueError in Python).
//
// Keys (units, default):
//   seed                   int, 1            Poisson starts and flood sources
//   num_cores              int, 32           application cores (= table shards)
//   clock_hz               float Hz, 1e9     core clock
//   sessions_per_core      int, 65536        session-table capacity per core
//   services               int, 96           virtual services (HTTP and DNS each)
//   servers_per_service    int, 4            real servers per service
//   scheduler              str, "rr"         dp_sched algorithm name
//   forwarding             str, "fullnat"    fullnat | dr | tunnel
//   syn_cookies            bool, false       answer every SYN with a cookie
//   rate_limit_cps         int, 0            new connections/s per service; 0 = none
//   fixed_cycles_per_packet float cycles, 0  CycleCost fixed part
//   cycles_per_frame_byte  float, 0          CycleCost per frame byte
//   counter_prices         dict str->float   cycles per dp_ops counter unit
//   connection_setup_cycles float cycles, 0  per new connection, beyond the counted work
//   ports                  int, 16           10GbE ports (ingress line-rate check)
//   port_bit_rate          float bit/s, 10e9 per port
//   core_queue_depth       int pkts, 1024    RSS queue per core; 0 = unbounded
//   input_pps_ceiling      float pps, 0      packet input ceiling; 0 = none
//   workload               str, "http11"     http11 | http10 | dns | synflood | fill
//   rate                   float 1/s, 1e5    units/s (transactions, connections,
//                                            queries; synflood: attack SYNs/s)
//   legit_rate             float 1/s, 0      synflood: HTTP/1.0 connections/s beside it
//   flood_ports            int, 8            synflood: ports carrying the attack
//   users                  int, 96           http11 users
//   conns_per_user         int, 20           http11 persistent connections per user
//   request_bytes          int B, 64         HTTP request payload (fixed sizes)
//   response_bytes         int B, 64         HTTP response payload (fixed sizes)
//   request_sizes          str, "fixed"      fixed | table | pareto | lognormal: each http unit draws its
//   response_sizes         str, "fixed"        request / response bytes (lb-testers.h: segmented by mss)
//   request_table          dict B->weight    table: bytes and share of units (sets request_sizes table)
//   response_table         dict B->weight
//   request_pareto_alpha   float, 1.5        pareto: P(X > x) = (xm / x)^alpha, bytes ceil(X); > 1
//   request_pareto_min_bytes float, 1000     pareto: xm
//   request_lognormal_mu   float, 8          lognormal: mean of ln X (X in bytes)
//   request_lognormal_sigma float, 1         lognormal: sd of ln X
//   response_pareto_alpha, response_pareto_min_bytes, response_lognormal_mu, response_lognormal_sigma: the same
//   mss                    int B, 1460       TCP payload per segment, 1..8960 (above 1460: jumbo
//                                            frames, a 9000-byte IP MTU)
//   flow_popularity        str, "round_robin" round_robin | uniform | zipf: which connection carries an
//                                            http11 transaction, which service an http10 connection or
//                                            a DNS query asks for (lb-testers.h)
//   zipf_exponent          float, 1          zipf: rank k has weight k^-s
//   tcp_windows            bool, false       responses sent under TCP windows (lb-testers.h): slow
//                                            start from tcp_initial_window, capped by the receive window
//   tcp_initial_window     int segs, 10      RFC 6928
//   tcp_receive_window_bytes int B, 65535    >= 2 x mss
//   tcp_rtt_s              float s, 1e-5     client-server round trip that clocks the ACKs
//   trace_file             str, ""           http10: connections (SYN instants, bytes each way) from a
//                                            pcap/pcapng of TCP flows (lb-testers.h)
//   trace_rescale          bool, true        trace: connections start at `rate` a second; false: as captured
//   step_gap_s             float s, 1e-5     between the packets of one unit
//   arrivals               str, "constant"   constant | poisson | onoff | mmpp (unit starts;
//                                            traffic-profile.h's ArrivalProcess at the rate)
//   burst_mean_units       float, 16         onoff: mean units per burst (geometric)
//   burst_peak_ratio       float, 4          onoff: rate inside a burst / rate
//   mmpp_rate_ratio        float, 4          mmpp: high-state rate / low-state rate
//   mmpp_high_fraction     float, 0.2        mmpp: share of time in the high state
//   mmpp_cycle_s           float s, 1e-3     mmpp: mean high + low sojourn
//   duration_s             float s, 0.002    offered traffic duration
//   warmup_s               float s, -1       start of the measured window; -1 = duration/10
//   batch_interval_s       float s, 1e-5     tester time slice per ns-3 event
//   loss_bins              int, 100          time bins of the drop timeline over duration_s
//   fill_limit             int, 0            fill: stop after this many connections (0 = until refused)
//   fill_validate          bool, false       fill: then send a data segment on every connection held and
//                                            count those the balancer forwards (RFC 3511 5.2's validation)
//   time_wait_s            float s, 0        TIME_WAIT linger: 0 = a full-NAT connection is removed at its
//                                            last ACK; more = it stays that long (IPVS: 120 s), aged out
//   fin_wait_s             float s, 120      FIN_WAIT timeout (IPVS): where DR/tunnel connections end
//   aging_sweep_s          float s, 0        idle aging scans every shard completely once per this time;
//                                            0 = a tenth of the shortest timeout in force (TIME_WAIT when
//                                            kept, FIN_WAIT, IPVS's 2 s for NONE)
//   occupancy_sample_s     float s, 0        sample the connections held every this often; 0 = never
//   level                  str, "descriptor" descriptor | packet: real ns3::Packets between a tester node and
//                                            the balancer node over `ports` Ethernet cables (every workload;
//                                            synflood: flood_ports <= ports / 2; lb-packet-level.h)
//   link_delay_s           float s, 0        packet level: propagation delay of each cable
#ifndef ROUTERTWIN_LB_SCENARIO_H
#define ROUTERTWIN_LB_SCENARIO_H

#include "config-keys.h"
#include "latency-histogram.h"
#include "queue-length-histogram.h"
#include "traffic-profile.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

struct LbScenarioConfig
{
    uint64_t seed = 1;
    uint32_t numCores = 32;
    double clockHz = 1e9;
    uint32_t sessionsPerCore = 65536;
    uint32_t services = 96;
    uint32_t serversPerService = 4;
    std::string scheduler = "rr";
    std::string forwarding = "fullnat";
    bool synCookies = false;
    uint32_t rateLimitCps = 0;
    double fixedCyclesPerPacket = 0;
    double cyclesPerFrameByte = 0;
    std::map<std::string, double> counterPrices;
    double connectionSetupCycles = 0;
    uint32_t ports = 16;
    double portBitRate = 10e9;
    uint32_t coreQueueDepth = 1024;
    double inputPpsCeiling = 0;
    std::string workload = "http11";
    double rate = 1e5;
    double legitRate = 0;
    uint32_t floodPorts = 8;
    uint32_t users = 96;
    uint32_t connsPerUser = 20;
    uint32_t requestBytes = 64;
    uint32_t responseBytes = 64;
    /// A request's or response's size distribution (lb-testers.h PayloadSizes).
    struct PayloadKeys
    {
        std::string sizes = "fixed"; ///< fixed | table | pareto | lognormal
        std::map<uint32_t, double> table;
        double paretoAlpha = 1.5, paretoMinBytes = 1000;
        double lognormalMu = 8, lognormalSigma = 1;
    };
    PayloadKeys requestSizes, responseSizes;
    uint32_t mss = 1460;
    FlowPopularity flowPopularity = FlowPopularity::kRoundRobin;
    double zipfExponent = 1.0;
    bool tcpWindows = false;
    uint32_t tcpInitialWindow = 10;
    uint32_t tcpReceiveWindowBytes = 65535;
    double tcpRttSeconds = 1e-5;
    std::string traceFile;
    bool traceRescale = true;
    double stepGapSeconds = 1e-5;
    std::string arrivals = "constant";
    double burstMeanUnits = 16;
    double burstPeakRatio = 4;
    double mmppRateRatio = 4;
    double mmppHighFraction = 0.2;
    double mmppCycleSeconds = 1e-3;
    double durationSeconds = 0.002;
    double warmupSeconds = -1;
    double batchIntervalSeconds = 1e-5;
    uint32_t lossBins = 100;
    uint64_t fillLimit = 0;
    bool fillValidate = false;
    double timeWaitSeconds = 0;
    double finWaitSeconds = 120;
    double agingSweepSeconds = 0;
    double occupancySampleSeconds = 0;
    std::string level = "descriptor";
    double linkDelaySeconds = 0;

    /// Defaults overridden by `keys`; throws std::invalid_argument "key 'K': ...".
    static LbScenarioConfig FromKeys(const std::map<std::string, ConfigValue>& keys);
    /// Every key FromKeys accepts, in documentation order.
    static std::vector<std::string> KeyNames();
    double EffectiveWarmupSeconds() const;
};

struct LbScenarioResult
{
    double offeredRate = 0;       ///< units/s started in the window
    double completedRate = 0;     ///< units/s completed in the window (last packet out in it)
    uint64_t unitsStarted = 0, unitsCompleted = 0; ///< in the window
    double packetsPerUnit = 0;    ///< frames through the balancer per unit
    double cyclesPerUnit = 0;     ///< priced cycles per unit (all frames of the run / units)
    double cyclesPerPacket = 0;
    double deliveredPps = 0;      ///< frames that left the device / device span (first arrival..last departure)
    double deliveredBitRate = 0;  ///< frame bits (FCS incl.) that left in the window / window
    std::map<std::string, double> opsPerUnit; ///< dp_ops counters per unit
    /// CPU as Tolly read it, per core over the measured window: the cycles
    /// of the frames that left the core in [warmup, duration), / (clock x
    /// window). Frames lost in a full queue cost nothing.
    double cpuMeanPct = 0;        ///< mean over the application cores, %
    double cpuMaxPct = 0;         ///< busiest core, %
    /// Of cpuMeanPct, the idle-aging sweeps' share: each shard's sweep work
    /// (dp_sess_expire's counters, priced) runs on the core owning the
    /// shard and counts when it ends, as a frame's cycles do.
    double agingCpuMeanPct = 0;
    double agingCycles = 0;       ///< priced cycles of every aging sweep of the run
    std::vector<double> coreUtilizationPct;
    /// The engine's time model: busy time / (first arrival .. last departure), per core.
    double cpuSpanMeanPct = 0;
    double cpuClosedFormPct = 0;  ///< offered units/s x cycles per unit / (cores x clock), %
    std::string bottleneck;
    std::map<std::string, uint64_t> drops;
    double legitOfferedRate = 0;  ///< synflood: legitimate connections/s started in the window
    double legitCompletedRate = 0;
    uint64_t cookiesSent = 0, cookiesValid = 0;
    /// tunnel: ICMP fragmentation-needed messages the balancer sent, and
    /// those the clients acted on (lowered their send mss: RFC 1191 PMTUD)
    uint64_t icmpFragNeeded = 0, icmpFragNeededUsed = 0;
    uint64_t unitsFailed = 0;     ///< units started in the window with a packet refused or lost
    uint64_t framesToServers = 0; ///< client packets forwarded to a server (the run's, not the setup's)
    uint64_t deliveryErrors = 0;  ///< of those (and the setup's), not as the forwarding method requires
    /// trace_file: its IPv6 TCP connections and packets, not replayed (the
    /// balancer's session table keys IPv4 5-tuples)
    uint64_t traceIpv6Connections = 0, traceIpv6Packets = 0;
    uint64_t expired = 0;         ///< connections removed by idle aging
    uint64_t timeWaitEnd = 0;     ///< connections in TIME_WAIT at the end
    /// occupancy_sample_s > 0: time (s) and connections held, TIME_WAIT ones, at each sample
    std::vector<double> occupancyTimes;
    std::vector<uint64_t> occupancyConnections, occupancyTimeWait;
    uint64_t connectionsEnd = 0;  ///< connections in the tables at the end
    uint64_t refusedFull = 0;     ///< connections refused for lack of room
    uint64_t fillConnectionsPerCore = 0; ///< fill: connections one shard held when it refused
    uint64_t maxConcurrent = 0;   ///< fill: that x num_cores
    uint64_t fillValidated = 0;   ///< fill_validate: connections whose data segment was forwarded
    double bytesPerConnection = 0; ///< fill: session-table bytes of the shard / connections it held
    double fillCyclesPerConnection = 0; ///< fill: priced cycles of a connection's SYN, SYN-ACK, ACK
    uint64_t simEvents = 0;
    std::string level;            ///< "descriptor" or "packet"
    /// Frames through the balancer that reached their destination, and
    /// their mean latency: descriptor level, tester send (= arrival at the
    /// device) to the last bit on the aggregate egress line; packet level,
    /// tester send to the last bit received by the tester (two ports'
    /// serialisation, two cables, the balancer).
    uint64_t framesMeasured = 0;
    double meanLatencySeconds = 0;
    /// Those frames' latencies (issue 15: percentiles, plots).
    LatencyHistogram latency;
    /// The same frames' latencies by the port they entered the balancer
    /// on (descriptor level: LbPortMap::IngressPort, the loss timeline's
    /// rule; packet level: the tester port the frame was sent on, by the
    /// same rule), one histogram and latency sum (s) per port; they add up
    /// to `latency`.
    std::vector<LatencyHistogram> portLatency;
    std::vector<double> portLatencySumSeconds;
    /// Response time of the units (transactions, connections, queries) of
    /// the workload's stream that completed in the window: from a unit's
    /// first packet sent to its last delivered (the step gaps between its
    /// packets included; lb-testers.h UnitLatency).
    LatencyHistogram unitLatency;
    /// Time-weighted lengths of the application cores' RSS queues, each
    /// core's own, added (PipelineEngine::CoreQueueLengths).
    QueueLengthHistogram coreQueue;
    /// Every packet the balancer refused or lost in its cores' queues, on
    /// the port it entered on (LbPortMap), at its arrival, by reason
    /// (PipelineDropReasons): loss per port and over time (issue 15). Not
    /// the packet level's tx_queue_full drops at the Ethernet ports.
    LossTimeline lossTimeline;
    /// The application cores' mean queueing wait and service per frame.
    double meanCoreWaitSeconds = 0, meanCoreServiceSeconds = 0;
    /// Packet level: mean time a frame waited in the transmit queues of the
    /// two ports it crossed.
    double meanPortWaitSeconds = 0;
};

/// Buckets of each shard the idle-aging sweep scans per slice
/// (batch_interval_s), so that it covers the shard once per aging_sweep_s.
struct AgingPacer
{
    AgingPacer(const LbScenarioConfig& c, uint32_t bucketsPerShard);
    /// This slice's budget (0: none this slice); the fraction carries over.
    uint32_t Next();
    double bucketsPerSlice = 0;
    double carry = 0;
};

/// Runs one scenario; throws std::invalid_argument for a bad configuration.
/// Uses the process-wide ns3::Simulator (one run at a time).
LbScenarioResult RunLbScenario(const LbScenarioConfig& config);

} // namespace routertwin

#endif
