#include "net_stage_plan.h"

#include "call_env.h"

namespace alloy {
namespace {

// The default: a small operation's worth. Beyond it the kernel would hold an SM for as long as the wire
// takes (64 KiB over tcp: about 20 us), and the copy engines move the bytes as fast.
constexpr long long kDefaultMaxBytes = 64 << 10;

// Staged copies and this rank's own blocks alike.
template <typename Copy>
size_t bytesOf(const std::vector<Copy>& copies) {
  size_t bytes = 0;
  for (const Copy& c : copies) bytes += c.bytes;
  return bytes;
}

void append(NetStageLaunch* launch, const void* src, void* dst, size_t bytes) {
  launch->copies[launch->count++] = P2pSegment{static_cast<const char*>(src), static_cast<char*>(dst), bytes};
}

}  // namespace

bool planNetStage(alloyComm_t comm, const std::vector<NetRound>& rounds, const std::vector<P2pSegment>& selfCopies,
                  NetStageLaunch* launch) {
  if (rounds.size() != 1) return false;
  const NetRound& round = rounds[0];
  // Ranks sharing a GPU would spin through each other's time slices: the stream's form waits without an
  // SM there. A value set in the environment applies everywhere (the tests on one GPU use it).
  const long long most = callEnvInt("ALLOY_NET_KERNEL_MAX_BYTES", comm->gpuShared ? 0 : kDefaultMaxBytes, 0, 1 << 30);
  // This rank's own blocks too: one block of threads copies them, where the copy engine would take a large
  // one (an alltoallv's block to itself) many times faster.
  const size_t limit = static_cast<size_t>(most);
  if (bytesOf(round.stageIn) > limit || bytesOf(round.stageOut) > limit || bytesOf(selfCopies) > limit) return false;
  if (round.stageIn.size() + selfCopies.size() + round.stageOut.size() > static_cast<size_t>(kNetStageMostCopies))
    return false;
  launch->count = 0;
  for (const StagedCopy& c : round.stageIn) append(launch, c.src, c.dst, c.bytes);
  launch->staged = launch->count;
  for (const P2pSegment& s : selfCopies) launch->copies[launch->count++] = s;
  launch->local = launch->count;
  for (const StagedCopy& c : round.stageOut) append(launch, c.src, c.dst, c.bytes);
  return true;
}

bool sendsEndAtRing() { return callEnvInt("ALLOY_NET_SENDS_END_AT_RING", 1, 0, 1) == 1; }

}  // namespace alloy
