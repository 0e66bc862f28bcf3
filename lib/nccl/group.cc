// ncclGroupStart/End: Alloy's groups fuse the sends and receives; creations inside a group wait for its
// end (nccl-tests creates its communicator that way), where the communicators are created one after the
// other, in the order of their ids, so that every process creates the communicators they share in the same
// order; several ranks of one communicator in the group (nccl-tests -g, JAX) are created at once, a thread
// each (siblings.h). Splits inside a group wait for its end too, and then run at once, a thread each.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "error.h"
#include "nccl_comm.h"
#include "siblings.h"

namespace alloy {
namespace nccl {
namespace {

struct PendingInit {
  ncclComm_t* out;
  int nranks;
  ncclUniqueId id;
  int rank;
  bool blocking;
  int device;  // current when the creation was called: nccl-tests sets each rank's device before its call
};

struct InitGroup {
  int depth = 0;
  std::vector<PendingInit> pending;
  std::vector<SplitRequest> splits;
};

thread_local InitGroup group;

bool sameId(const PendingInit& a, const PendingInit& b) { return std::memcmp(&a.id, &b.id, sizeof(a.id)) == 0; }

// The ranks of one id in the group must agree on the communicator's size and be different ranks on
// different GPUs.
alloyResult_t checkSameCommunicator(const std::vector<PendingInit>& inits, size_t first, size_t end) {
  for (size_t i = first + 1; i < end; ++i) {
    for (size_t j = first; j < i; ++j) {
      const PendingInit &a = inits[j], &b = inits[i];
      if (a.nranks != b.nranks)
        return fail(alloyInvalidArgument, "ncclGroupEnd: ranks %d and %d of one communicator (one id) were created "
                    "with nranks %d and %d", a.rank, b.rank, a.nranks, b.nranks);
      if (a.rank == b.rank)
        return fail(alloyInvalidArgument, "ncclGroupEnd: rank %d of one communicator was created twice in the group",
                    a.rank);
      if (a.device >= 0 && a.device == b.device)
        return fail(alloyInvalidUsage, "ncclGroupEnd: ranks %d and %d of one communicator were both created on device "
                    "%d; each rank of a process needs a GPU of its own (cudaSetDevice before each creation)",
                    a.rank, b.rank, a.device);
    }
  }
  return alloySuccess;
}

alloyResult_t runPendingInits(std::vector<PendingInit> inits) {
  std::stable_sort(inits.begin(), inits.end(),
                   [](const PendingInit& a, const PendingInit& b) { return std::memcmp(&a.id, &b.id, sizeof(a.id)) < 0; });
  // Every communicator's ranks are checked before any is created.
  for (size_t first = 0, end = 0; first < inits.size(); first = end) {
    for (end = first + 1; end < inits.size() && sameId(inits[first], inits[end]);) ++end;
    ALLOY_TRY(checkSameCommunicator(inits, first, end));
  }
  for (size_t first = 0, end = 0; first < inits.size(); first = end) {
    std::vector<RankToCreate> ranks;
    for (end = first; end < inits.size() && sameId(inits[first], inits[end]); ++end)
      ranks.push_back(RankToCreate{inits[end].rank, inits[end].device, inits[end].out});
    const PendingInit& init = inits[first];
    ALLOY_TRY(createTogether(reinterpret_cast<const uint8_t*>(init.id.internal), init.nranks, ranks, init.blocking));
  }
  return alloySuccess;
}

}  // namespace

bool deferSplit(const SplitRequest& request) {
  if (group.depth == 0) return false;
  if (request.out != nullptr) *request.out = nullptr;  // set at ncclGroupEnd
  group.splits.push_back(request);
  return true;
}

bool deferInit(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, bool blocking, int device) {
  if (group.depth == 0) return false;
  *out = nullptr;  // set at ncclGroupEnd
  group.pending.push_back(PendingInit{out, nranks, id, rank, blocking, device});
  return true;
}

}  // namespace nccl
}  // namespace alloy

using namespace alloy::nccl;

extern "C" {

ncclResult_t ncclGroupStart() {
  alloy::clearLastError();
  ++group.depth;
  return toNccl(alloyGroupStart());
}

ncclResult_t ncclGroupEnd() {
  alloy::clearLastError();
  if (group.depth == 0)
    return toNccl(alloy::fail(alloyInvalidUsage, "ncclGroupEnd: no group is open on this thread (call ncclGroupStart first)"));
  alloyResult_t inits = alloySuccess, splits = alloySuccess;
  if (--group.depth == 0 && !group.pending.empty()) {
    std::vector<PendingInit> pending;
    pending.swap(group.pending);
    inits = runPendingInits(std::move(pending));
  }
  std::string initsMessage = inits != alloySuccess ? alloy::lastError() : "";
  if (group.depth == 0 && !group.splits.empty()) {
    std::vector<SplitRequest> requests;
    requests.swap(group.splits);
    splits = splitTogether(requests);
  }
  const alloyResult_t operations = alloyGroupEnd();
  if (inits != alloySuccess) return toNccl(alloy::fail(inits, "%s", initsMessage.c_str()));
  return toNccl(splits != alloySuccess ? splits : operations);
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t*) {
  return refuse("ncclGroupSimulateEnd", "Alloy has no cost model to simulate a group with");
}

}  // extern "C"
