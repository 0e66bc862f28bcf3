// Unique ids and communicator creation: ncclGetUniqueId, ncclCommInitRank(Config), ncclCommInitAll,
// ncclCommInitRankScalable, ncclCommSplit. Creation completes before the call returns, also for a
// non-blocking config (which then never sees ncclInProgress).
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "comm.h"
#include "comm_ranks.h"
#include "device_select.h"
#include "error.h"
#include "nccl_comm.h"
#include "root.h"
#include "siblings.h"

static_assert(sizeof(ncclUniqueId) == alloy::kUniqueIdBytes, "an ncclUniqueId holds the bootstrap's id");

namespace alloy {
namespace nccl {
namespace {

constexpr unsigned int kConfigMagic = 0xcafebeef;  // what NCCL_CONFIG_INITIALIZER writes

}  // namespace

// NCCL's rule is the current device; Alloy's (device_select.h) is the same for a thread that has used
// CUDA, which every NCCL program has by cudaSetDevice, and picks by local rank where NCCL would take
// device 0 for every rank. No device: a host-only communicator, not an error.
alloyResult_t currentDevice(int* device) { return deviceByRule(true, device); }

alloyResult_t readConfig(const ncclConfig_t* config, const char* function, bool* blocking) {
  if (config == nullptr) return alloySuccess;
  if (config->magic != kConfigMagic)
    return fail(alloyInvalidArgument, "%s: config->magic is 0x%x; initialise the structure with NCCL_CONFIG_INITIALIZER",
                function, config->magic);
  if (config->size < offsetof(ncclConfig_t, blocking) + sizeof(int))
    return fail(alloyInvalidArgument, "%s: config->size %zu is too small for an ncclConfig_t", function, config->size);
  if (config->blocking != NCCL_CONFIG_UNDEF_INT) {
    if (config->blocking != 0 && config->blocking != 1)
      return fail(alloyInvalidArgument, "%s: config->blocking is %d; expected 0 or 1", function, config->blocking);
    *blocking = config->blocking == 1;
  }
  return alloySuccess;
}

alloyResult_t checkInitArguments(const ncclComm_t* out, int nranks, int rank, const char* function) {
  if (out == nullptr) return fail(alloyInvalidArgument, "%s: comm is NULL; expected a pointer to receive the communicator", function);
  if (nranks < 1) return fail(alloyInvalidArgument, "%s: nranks is %d; expected at least 1", function, nranks);
  if (rank < 0 || rank >= nranks)
    return fail(alloyInvalidArgument, "%s: rank is %d; expected 0 <= rank < nranks (%d)", function, rank, nranks);
  return alloySuccess;
}

alloyResult_t createFromId(const uint8_t* id, int nranks, int rank, bool blocking, int device, ncclComm_t* out) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.cudaDevice = device;
  auto comm = std::make_unique<ncclComm>();
  comm->blocking = blocking;
  ALLOY_TRY(createRankFromId(id, nranks, rank, config, &comm->alloy));
  *out = comm.release();
  return alloySuccess;
}

namespace {

ncclResult_t initRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                      const char* function) {
  clearLastError();
  bool blocking = true;
  alloyResult_t result = checkInitArguments(comm, nranks, rank, function);
  if (result == alloySuccess) result = readConfig(config, function, &blocking);
  int device = -1;
  if (result == alloySuccess) result = currentDevice(&device);
  if (result != alloySuccess) return toNccl(result);
  if (deferInit(comm, nranks, id, rank, blocking, device)) return ncclSuccess;
  return toNccl(createFromId(reinterpret_cast<const uint8_t*>(id.internal), nranks, rank, blocking, device, comm));
}

// One rank's part of a split, as every rank of the parent learns it.
struct SplitVote {
  int32_t color;
  int32_t key;
};

// The members of color, ordered as the new communicator ranks them: by key, then by parent rank.
std::vector<int> membersOf(const std::vector<SplitVote>& votes, int color) {
  std::vector<int> members;
  for (int r = 0; r < static_cast<int>(votes.size()); ++r)
    if (votes[r].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return votes[a].key < votes[b].key; });
  return members;
}

// Collective over the parent: every rank votes (color, key); the lowest parent rank of each color starts
// a root for it, and the roots' ids travel over the parent; every member then joins its color's id.
alloyResult_t split(ncclComm_t parent, int color, int key, bool blocking, ncclComm_t* out) {
  Bootstrap& bootstrap = *parent->alloy->bootstrap;
  std::vector<SplitVote> votes;
  alloyResult_t result = allgatherValues(bootstrap, SplitVote{color, key}, &votes);
  ALLOY_TRY(agree(bootstrap, result, "ncclCommSplit's exchange of colors"));
  const std::vector<int> members = color == NCCL_SPLIT_NOCOLOR ? std::vector<int>() : membersOf(votes, color);
  const bool leader = !members.empty() && *std::min_element(members.begin(), members.end()) == bootstrap.rank();
  ncclUniqueId mine;
  std::memset(&mine, 0, sizeof(mine));
  result = leader ? startRoot(reinterpret_cast<uint8_t*>(mine.internal)) : alloySuccess;
  std::vector<ncclUniqueId> ids;
  if (result == alloySuccess) result = allgatherValues(bootstrap, mine, &ids);
  ALLOY_TRY(agree(bootstrap, result, "ncclCommSplit's start of the new communicators' roots"));
  if (members.empty()) {
    *out = nullptr;
    return alloySuccess;
  }
  const int newRank = static_cast<int>(std::find(members.begin(), members.end(), bootstrap.rank()) - members.begin());
  const int leaderRank = *std::min_element(members.begin(), members.end());
  // The child's device is the parent's, as in NCCL, whatever the thread's current device is now.
  return createFromId(reinterpret_cast<const uint8_t*>(ids[leaderRank].internal), static_cast<int>(members.size()),
                      newRank, blocking, parent->alloy->cudaDevice, out);
}

// A split whose local checks are done: every rank of the parent learns whether all passed, then splits.
// *out receives the child (NULL for NCCL_SPLIT_NOCOLOR); out may be NULL only where the checks failed.
alloyResult_t splitChecked(const SplitRequest& request, ncclComm_t* out) {
  if (request.checks != alloySuccess) fail(request.checks, "%s", request.checksMessage.c_str());
  ALLOY_TRY(agree(*request.parent->alloy->bootstrap, request.checks, "ncclCommSplit's argument checks"));
  return split(request.parent, request.color, request.key, request.blocking, out);
}

}  // namespace

alloyResult_t splitTogether(const std::vector<SplitRequest>& requests) {
  std::vector<ncclComm_t> children(requests.size(), nullptr);
  std::vector<alloyResult_t> results(requests.size(), alloyInternalError);
  std::vector<std::string> messages(requests.size());
  const bool ran = onThreads(requests.size(), [&](size_t i) {
    results[i] = splitChecked(requests[i], &children[i]);
    if (results[i] != alloySuccess) messages[i] = lastError();
  });
  if (!ran) return fail(alloyInternalError, "ncclGroupEnd: the threads that split the group's communicators could not be started");
  // Children of one sibling set split to one color are ranks of one new communicator, all in this process.
  std::map<std::pair<const SiblingSet*, int>, std::vector<ncclComm_t>> newSets;
  for (size_t i = 0; i < requests.size(); ++i)
    if (children[i] != nullptr && requests[i].parent->siblings)
      newSets[{requests[i].parent->siblings.get(), requests[i].color}].push_back(children[i]);
  for (const auto& entry : newSets)
    if (entry.second.size() > 1) formSiblings(entry.second);
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].out != nullptr) *requests[i].out = children[i];
  for (size_t i = 0; i < requests.size(); ++i)
    if (results[i] != alloySuccess) return fail(results[i], "%s", messages[i].c_str());
  return alloySuccess;
}

}  // namespace nccl
}  // namespace alloy

using namespace alloy::nccl;

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  alloy::clearLastError();
  if (uniqueId == nullptr)
    return toNccl(alloy::fail(alloyInvalidArgument, "ncclGetUniqueId: uniqueId is NULL; expected a pointer"));
  return toNccl(alloy::startRoot(reinterpret_cast<uint8_t*>(uniqueId->internal)));
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return initRank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  alloy::clearLastError();
  if (nId < 1) return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitRankScalable: nId is %d; expected at least 1", nId));
  if (commIds == nullptr)
    return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitRankScalable: commIds is NULL; expected nId ids"));
  // Several ids spread NCCL's bootstrap over several roots; one root gathers every rank here, the first id's
  // (every rank passes the same ids in the same order), and the process holding another id's root stops it.
  for (int i = 1; i < nId; ++i) alloy::retireRoot(reinterpret_cast<const uint8_t*>(commIds[i].internal));
  return initRank(newcomm, nranks, commIds[0], myrank, config, "ncclCommInitRankScalable");
}

// One communicator of ndev ranks, all in this process: rank i on devlist[i] (NULL: device i), created at
// once on a thread each (siblings.h). Without a visible device, host-only ranks (as every creation has them).
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  alloy::clearLastError();
  if (comm == nullptr) return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitAll: comm is NULL; expected an array of ndev"));
  if (ndev < 1) return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitAll: ndev is %d; expected at least 1", ndev));
  const int count = alloy::visibleDevices();
  if (devlist == nullptr && count > 0 && ndev > count)
    return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitAll: ndev is %d but this process sees %d CUDA "
                              "device%s (a NULL devlist takes devices 0 .. ndev - 1)", ndev, count, count == 1 ? "" : "s"));
  std::vector<RankToCreate> ranks;
  for (int i = 0; i < ndev; ++i) {
    const int device = devlist != nullptr ? devlist[i] : count > 0 ? i : -1;
    if (devlist != nullptr && (device < 0 || device >= count))
      return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitAll: devlist[%d] is %d; this process sees %d CUDA "
                                "device%s", i, device, count, count == 1 ? "" : "s"));
    for (const RankToCreate& earlier : ranks)
      if (device >= 0 && earlier.device == device)
        return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommInitAll: devlist[%d] and devlist[%d] are both device "
                                  "%d; each rank needs a GPU of its own", earlier.rank, i, device));
    ranks.push_back(RankToCreate{i, device, &comm[i]});
  }
  ncclUniqueId id;
  const ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess) return result;
  return toNccl(createTogether(reinterpret_cast<const uint8_t*>(id.internal), ndev, ranks, true));
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  alloy::clearLastError();
  ALLOY_NCCL_TRY(checkComm(comm, "ncclCommSplit"));
  SplitRequest request{comm, color, key, comm->blocking, newcomm, alloySuccess, ""};
  if (newcomm == nullptr)
    request.checks = alloy::fail(alloyInvalidArgument, "ncclCommSplit: newcomm is NULL; expected a pointer to receive the communicator");
  if (request.checks == alloySuccess && color < 0 && color != NCCL_SPLIT_NOCOLOR)
    request.checks = alloy::fail(alloyInvalidArgument, "ncclCommSplit: color is %d; expected a color >= 0 or NCCL_SPLIT_NOCOLOR",
                                 color);
  if (request.checks == alloySuccess) request.checks = readConfig(config, "ncclCommSplit", &request.blocking);
  if (request.checks != alloySuccess) request.checksMessage = alloy::lastError();
  // Inside a group the split waits for the group's end, a failed one too: its failure is returned now, and
  // agreed with the parent's other ranks then, so that none of them waits for this one.
  if (deferSplit(request)) return toNccl(request.checks);
  return toNccl(splitChecked(request, newcomm));
}

ncclResult_t ncclCommShrink(ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int) {
  return refuse("ncclCommShrink", "the excluded ranks do not take part, and Alloy's creation needs every rank of the "
                "parent; use ncclCommSplit with NCCL_SPLIT_NOCOLOR on the ranks to leave out");
}

ncclResult_t ncclCommRevoke(ncclComm_t, int) {
  return refuse("ncclCommRevoke", "Alloy cannot stop a communicator's operations and keep it; use ncclCommAbort");
}

}  // extern "C"
