// BeginNs3Run: the state a packet-level run on ns-3 starts from, whatever
// ran before it in the process.
//
// ns-3 keeps state in globals that outlive Simulator::Destroy: attribute
// defaults (Config::SetDefault: a tcp_path run's MinRto, SACK, congestion
// control and buffers), global values (ChecksumEnabled, RngSeed, RngRun),
// the next MAC address (Mac48Address::Allocate) and the next automatic
// random-stream index (RngSeedManager::GetNextStreamIndex, which no API of
// ns-3 3.37 resets). A runner calls BeginNs3Run first, then sets the
// defaults it depends on, builds its topology and assigns every random
// variable a stream from kNs3StreamBase (the helpers' AssignStreams), so
// that the same scenario and seed give the same result in a process that
// ran others before (a `routertwin validate` worker) as in a fresh one.
#ifndef ROUTERTWIN_NS3_RUN_STATE_H
#define ROUTERTWIN_NS3_RUN_STATE_H

#include <cstdint>

namespace routertwin
{

/// The first stream a run assigns explicitly. Streams given by
/// AssignStreams (0 to 2^63 - 1) never meet the automatic ones (from 2^63).
constexpr int64_t kNs3StreamBase = 0;

/// Destroys what a run that threw left in the simulator (events, nodes),
/// puts every attribute default and global value back to ns-3's own
/// (Config::Reset), sets the seed and run 1 and restarts MAC allocation.
void BeginNs3Run(uint32_t seed);

} // namespace routertwin

#endif
