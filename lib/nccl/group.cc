// ncclGroupStart/End: Alloy's groups fuse the sends and receives; creations inside a group wait for its
// end (nccl-tests creates its communicator that way), where they run one after the other, in the order of
// their ids, so that every process creates the communicators they share in the same order. Two ranks of one
// communicator in one group (several GPUs per process) are refused: Alloy runs one rank per process.
#include <algorithm>
#include <cstring>
#include <vector>

#include "error.h"
#include "nccl_comm.h"

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
};

thread_local InitGroup group;

bool sameId(const PendingInit& a, const PendingInit& b) { return std::memcmp(&a.id, &b.id, sizeof(a.id)) == 0; }

alloyResult_t runPendingInits(std::vector<PendingInit> inits) {
  std::stable_sort(inits.begin(), inits.end(),
                   [](const PendingInit& a, const PendingInit& b) { return std::memcmp(&a.id, &b.id, sizeof(a.id)) < 0; });
  for (size_t i = 1; i < inits.size(); ++i)
    if (sameId(inits[i - 1], inits[i]))
      return fail(alloyInvalidUsage,
                  "ncclGroupEnd: ranks %d and %d of one communicator were created in one group of one thread; "
                  "Alloy's libnccl.so.2 runs one rank per process (one GPU per process: start a process per GPU, "
                  "e.g. nccl-tests with -g 1 under mpirun); no communicator of the group was created",
                  inits[i - 1].rank, inits[i].rank);
  for (const PendingInit& init : inits)
    ALLOY_TRY(createFromId(reinterpret_cast<const uint8_t*>(init.id.internal), init.nranks, init.rank, init.blocking,
                           init.device, init.out));
  return alloySuccess;
}

}  // namespace

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
  alloyResult_t inits = alloySuccess;
  if (--group.depth == 0 && !group.pending.empty()) {
    std::vector<PendingInit> pending;
    pending.swap(group.pending);
    inits = runPendingInits(std::move(pending));
  }
  const alloyResult_t operations = alloyGroupEnd();
  return toNccl(inits != alloySuccess ? inits : operations);
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t*) {
  return refuse("ncclGroupSimulateEnd", "Alloy has no cost model to simulate a group with");
}

}  // extern "C"
