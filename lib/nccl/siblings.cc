#include "siblings.h"

#include <memory>
#include <string>

#include "comm.h"  // alloyComm is deleted here: its destructor must be known
#include "comm_ranks.h"
#include "error.h"
#include "nccl_comm.h"

namespace alloy {
namespace nccl {

struct SiblingSet {
  std::mutex mutex;
  std::vector<ncclComm_t> members;  // not yet freed nor aborted
  bool finalized = false;           // every member's finalize has run
};

namespace {

// Each member's finalize, all at once (each waits for every rank of the communicator). Called with the
// set's mutex held.
void finalizeAll(SiblingSet* set) {
  std::vector<alloyComm_t> comms;
  for (ncclComm_t m : set->members) comms.push_back(m->alloy);
  std::vector<alloyResult_t> results;
  std::vector<std::string> messages;
  finalizeTogether(comms, &results, &messages);
  for (size_t i = 0; i < set->members.size(); ++i) {
    set->members[i]->finalizeResult = results[i];
    set->members[i]->finalizeMessage = messages[i];
    set->members[i]->finalized = true;
  }
  set->finalized = true;
}

// Once every member asked for its finalize: runs them, then takes out of the set every member whose
// destroy was asked, for the caller to free after releasing the mutex.
std::vector<ncclComm_t> settle(SiblingSet* set) {
  std::vector<ncclComm_t> freed;
  if (!set->finalized) {
    for (ncclComm_t m : set->members)
      if (!m->finalizeAsked) return freed;
    finalizeAll(set);
  }
  std::vector<ncclComm_t> kept;
  for (ncclComm_t m : set->members) (m->destroyAsked ? freed : kept).push_back(m);
  set->members.swap(kept);
  return freed;
}

void freeAll(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t m : comms) {
    delete m->alloy;
    delete m;
  }
}

}  // namespace

alloyResult_t createTogether(const uint8_t* id, int nranks, const std::vector<RankToCreate>& ranks, bool blocking) {
  std::vector<RankOfId> wanted;
  for (const RankToCreate& r : ranks) {
    RankOfId w{r.rank, ALLOY_CONFIG_INITIALIZER};
    w.config.cudaDevice = r.device;
    wanted.push_back(w);
  }
  std::vector<alloyComm_t> made;
  ALLOY_TRY(createRanksTogether(id, nranks, wanted, &made));
  std::vector<ncclComm_t> wrapped;
  for (alloyComm_t m : made) {
    ncclComm_t comm = new ncclComm();
    comm->alloy = m;
    comm->blocking = blocking;
    wrapped.push_back(comm);
  }
  if (ranks.size() > 1) formSiblings(wrapped);
  for (size_t i = 0; i < ranks.size(); ++i) *ranks[i].out = wrapped[i];
  return alloySuccess;
}

void formSiblings(const std::vector<ncclComm_t>& comms) {
  auto set = std::make_shared<SiblingSet>();
  set->members = comms;
  for (ncclComm_t m : comms) m->siblings = set;
}

alloyResult_t endSibling(ncclComm_t comm, bool destroy) {
  const std::shared_ptr<SiblingSet> set = comm->siblings;
  std::vector<ncclComm_t> freed;
  alloyResult_t result = alloySuccess;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(set->mutex);
    comm->finalizeAsked = true;
    comm->destroyAsked = comm->destroyAsked || destroy;
    freed = settle(set.get());
    if (comm->finalized) {
      result = comm->finalizeResult;
      message = comm->finalizeMessage;
    }
  }
  freeAll(freed);  // comm among them where its destroy was asked and its finalize has run
  return result == alloySuccess ? alloySuccess : fail(result, "%s", message.c_str());
}

void leaveSiblings(ncclComm_t comm) {
  const std::shared_ptr<SiblingSet> set = comm->siblings;
  std::vector<ncclComm_t> freed;
  {
    std::lock_guard<std::mutex> lock(set->mutex);
    std::vector<ncclComm_t> kept;
    for (ncclComm_t m : set->members)
      if (m != comm) kept.push_back(m);
    set->members.swap(kept);
    if (!set->members.empty()) freed = settle(set.get());
  }
  freeAll(freed);  // comm left the set first: its caller frees it
}

}  // namespace nccl
}  // namespace alloy
