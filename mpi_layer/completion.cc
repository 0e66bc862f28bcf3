#include "completion.h"

#include <dlfcn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace alloy_layer {
namespace {

using ProgressCallback = int (*)();
using RegisterProgress = int (*)(ProgressCallback);

struct Pending {
  Poller poll;
  MPI_Request request = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;
};
// The list below and MPI each hold a reference (MPI's is the request's extra state): MPI-3.1 12.2 calls
// the free callback at the later of completion and MPI_Request_free, but Open MPI 4.1 calls it within
// MPI_Request_free, also on a request still pending, which must go on being polled and completed.
using PendingRef = std::shared_ptr<Pending>;

std::mutex pendingMutex;
std::vector<PendingRef> pending;
std::atomic<int> pendingCount{0};

RegisterProgress progressRegistrar() {
  static const auto registrar = reinterpret_cast<RegisterProgress>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  return registrar;
}

// Open MPI calls this on every turn of its progress loop (in MPI_Wait's spin, once per MPI_Test, and in
// every other call that progresses), so it returns at once when nothing is pending. What it completes it
// counts in its result: MPI_Test looks at the request again only when progress reports events.
int progress() {
  if (pendingCount.load(std::memory_order_acquire) == 0) return 0;
  std::vector<PendingRef> done;
  {
    std::unique_lock<std::mutex> lock(pendingMutex, std::try_to_lock);
    if (!lock.owns_lock()) return 0;  // another thread is polling them now
    std::vector<PendingRef> waiting;
    for (const PendingRef& p : pending) {
      const PollResult result = p->poll();
      p->error = result.error;
      (result.done ? done : waiting).push_back(p);
    }
    pending.swap(waiting);
    pendingCount.store(static_cast<int>(pending.size()), std::memory_order_release);
  }
  // Outside the lock: completing a request the program already freed runs freeRequest at once.
  for (const PendingRef& p : done) PMPI_Grequest_complete(p->request);
  return static_cast<int>(done.size());
}

int queryRequest(void* state, MPI_Status* status) {
  const int error = (*static_cast<PendingRef*>(state))->error;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = error;
  return error;
}

int freeRequest(void* state) {
  delete static_cast<PendingRef*>(state);
  return MPI_SUCCESS;
}

int cancelRequest(void*, int) { return MPI_SUCCESS; }  // work on the GPU cannot be called back

}  // namespace

bool completionAvailable() { return progressRegistrar() != nullptr; }

int startPolledRequest(Poller poll, MPI_Request* request) {
  static std::once_flag registered;
  std::call_once(registered, [] { progressRegistrar()(progress); });
  auto p = std::make_shared<Pending>();
  p->poll = std::move(poll);
  auto* mpiRef = new PendingRef(p);
  const int code = PMPI_Grequest_start(queryRequest, freeRequest, cancelRequest, mpiRef, &p->request);
  if (code != MPI_SUCCESS) {
    delete mpiRef;
    return code;
  }
  *request = p->request;
  std::lock_guard<std::mutex> lock(pendingMutex);
  pending.push_back(p);
  pendingCount.store(static_cast<int>(pending.size()), std::memory_order_release);
  return MPI_SUCCESS;
}

int pendingRequests() { return pendingCount.load(std::memory_order_acquire); }

}  // namespace alloy_layer
