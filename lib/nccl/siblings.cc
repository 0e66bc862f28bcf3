#include "siblings.h"

#include <memory>
#include <string>
#include <system_error>
#include <thread>

#include "comm.h"
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

// Runs work(i) for i in [0, count) on a thread each and joins them; false (nothing run) where the threads
// could not be started.
template <typename Work>
bool onThreads(size_t count, Work work) {
  std::vector<std::thread> threads;
  try {
    for (size_t i = 0; i < count; ++i) threads.emplace_back(work, i);
  } catch (const std::system_error&) {
    for (std::thread& t : threads) t.join();
    return false;
  }
  for (std::thread& t : threads) t.join();
  return true;
}

// Each member's finalize, all at once (each waits for every rank of the communicator). Called with the
// set's mutex held.
void finalizeAll(SiblingSet* set) {
  std::vector<ncclComm_t>& members = set->members;
  const bool ran = onThreads(members.size(), [&members](size_t i) {
    ncclComm_t m = members[i];
    m->finalizeResult = commFinalize(m->alloy);
    if (m->finalizeResult != alloySuccess) m->finalizeMessage = lastError();
  });
  for (ncclComm_t m : members) {
    if (!ran) {
      m->finalizeResult = alloyInternalError;
      m->finalizeMessage = "the threads that finalize a process's ranks of one communicator could not be started";
    }
    m->finalized = true;
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

void freeAll(const std::vector<ncclComm_t>& comms, ncclComm_t except) {
  for (ncclComm_t m : comms) {
    if (m == except) continue;
    delete m->alloy;
    delete m;
  }
}

}  // namespace

alloyResult_t createTogether(const uint8_t* id, int nranks, const std::vector<RankToCreate>& ranks, bool blocking) {
  std::vector<ncclComm_t> made(ranks.size(), nullptr);
  std::vector<alloyResult_t> results(ranks.size(), alloyInternalError);
  std::vector<std::string> messages(ranks.size());
  const bool ran = onThreads(ranks.size(), [&](size_t i) {
    results[i] = createFromId(id, nranks, ranks[i].rank, blocking, ranks[i].device, &made[i]);
    if (results[i] != alloySuccess) messages[i] = lastError();
  });
  if (!ran) return fail(alloyInternalError, "the threads that create a process's ranks of one communicator could not be started");
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (results[i] == alloySuccess) continue;
    // Creation agrees on failures, so every rank failed; a rank that did not is let go without its peers.
    for (ncclComm_t m : made) {
      if (m == nullptr) continue;
      alloyCommAbort(m->alloy);
      delete m;
    }
    return fail(results[i], "%s", messages[i].c_str());
  }
  if (ranks.size() > 1) {
    auto set = std::make_shared<SiblingSet>();
    set->members = made;
    for (ncclComm_t m : made) m->siblings = set;
  }
  for (size_t i = 0; i < ranks.size(); ++i) *ranks[i].out = made[i];
  return alloySuccess;
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
  freeAll(freed, nullptr);  // comm among them where its destroy was asked and its finalize has run
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
  freeAll(freed, comm);
}

}  // namespace nccl
}  // namespace alloy
