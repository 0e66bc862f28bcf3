#include "net_geometry.h"

#include <algorithm>
#include <unordered_map>

#include "env.h"
#include "log.h"
#include "net_channel.h"

namespace alloy {
namespace net {
namespace {

// Staging copies per peer: an inbox and an outbox in each box.
constexpr size_t kCopiesPerPeer = 2 * NetChannel::kBoxes;

}  // namespace

NetGeometry netGeometry() {
  NetGeometry g;
  // 4 MiB per peer and direction: a transfer long enough that the per-operation round trip (doorbell,
  // ready, header) costs little next to the wire time over tcp or shared memory; larger transfers take
  // several operations. The staging budget shrinks it for jobs with many ranks on other hosts.
  g.slots = static_cast<int>(envInt("ALLOY_NET_SLOTS", 4, 1, 64));
  g.slotBytes = static_cast<size_t>(envInt("ALLOY_NET_SLOT_BYTES", 1 << 20, kNetPageBytes, 1 << 26)) &
                ~(kNetPageBytes - 1);
  g.eagerBytes = static_cast<size_t>(envInt("ALLOY_NET_EAGER_BYTES", kNetDefaultEagerBytes, 0, 1 << 30));
  return g;
}

size_t netStagingBudget() {
  return static_cast<size_t>(envInt("ALLOY_NET_STAGING_BYTES", kNetDefaultStagingBytes, 1 << 20, 1ll << 40));
}

size_t mostRemoteRanks(const std::vector<uint64_t>& hostOf) {
  // The ranks of the host with the fewest ranks have the most elsewhere.
  std::unordered_map<uint64_t, size_t> ranksOn;
  for (uint64_t host : hostOf) ++ranksOn[host];
  size_t fewest = hostOf.size();
  for (const auto& entry : ranksOn) fewest = std::min(fewest, entry.second);
  return hostOf.size() - fewest;
}

size_t netBoxBytes(size_t remote, NetGeometry geometry) { return kCopiesPerPeer * remote * geometry.capacity(); }

NetGeometry fitNetGeometry(const std::vector<uint64_t>& hostOf, NetGeometry most, size_t budgetBytes) {
  const size_t remote = mostRemoteRanks(hostOf);
  if (netBoxBytes(remote, most) <= budgetBytes) return most;
  const size_t fits = budgetBytes / (kCopiesPerPeer * remote) / kNetPageBytes * kNetPageBytes;
  // fits < most.capacity() here, which least never exceeds either.
  const size_t least = std::min(most.capacity(), kNetFloorBytes), capacity = std::max(fits, least);
  // As few chunks (puts) as the capacity takes, none larger than asked for, in whole pages: rounded down
  // to stay within the budget (less than a page per chunk goes unused), but up where that would fall
  // below the floor.
  const size_t slots = (capacity + most.slotBytes - 1) / most.slotBytes, pages = capacity / kNetPageBytes;
  size_t chunkPages = pages / slots;
  if (slots * chunkPages * kNetPageBytes < least) chunkPages = (pages + slots - 1) / slots;
  return NetGeometry{static_cast<int>(slots), chunkPages * kNetPageBytes, most.eagerBytes};
}

NetGeometry netGeometry(const std::vector<uint64_t>& hostOf, bool log) {
  const NetGeometry most = netGeometry();
  const size_t budget = netStagingBudget();
  const NetGeometry g = fitNetGeometry(hostOf, most, budget);
  if (!log) return g;
  const size_t remote = mostRemoteRanks(hostOf), bytes = netBoxBytes(remote, g);
  if (bytes > budget)
    logWarn("net: the staging of a rank with %zu ranks on other hosts takes %zu bytes at %zu bytes per peer and "
            "round, the least a round is cut to, above ALLOY_NET_STAGING_BYTES=%zu (docs/architecture.md, \"Memory "
            "per rank\")", remote, bytes, g.capacity(), budget);
  else if (g.capacity() < most.capacity())
    logInfo("net: %zu bytes per peer and round instead of %zu (ALLOY_NET_SLOTS x ALLOY_NET_SLOT_BYTES), so that the "
            "staging of a rank with %zu ranks on other hosts, %zu bytes, fits in ALLOY_NET_STAGING_BYTES=%zu; larger "
            "transfers take more rounds", g.capacity(), most.capacity(), remote, bytes, budget);
  return g;
}

}  // namespace net
}  // namespace alloy
