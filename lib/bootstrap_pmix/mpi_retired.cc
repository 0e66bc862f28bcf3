#include "mpi_retired.h"

#include <mutex>
#include <vector>

namespace alloy {
namespace {

struct Retired {
  MPI_Comm comm;
  MPI_Request pending;
};

std::mutex retiredMutex;
std::vector<Retired> retired;

// Frees the communicator if its barrier has completed; true when it did.
bool freedIfCompleted(Retired* r) {
  int completed = 1;
  if (r->pending != MPI_REQUEST_NULL) PMPI_Test(&r->pending, &completed, MPI_STATUS_IGNORE);
  if (completed) PMPI_Comm_free(&r->comm);
  return completed != 0;
}

}  // namespace

void retire(MPI_Comm comm, MPI_Request pending) {
  Retired r{comm, pending};
  if (freedIfCompleted(&r)) return;
  std::lock_guard<std::mutex> lock(retiredMutex);
  retired.push_back(r);
}

void freeRetiredThatCompleted() {
  std::lock_guard<std::mutex> lock(retiredMutex);
  std::vector<Retired> left;
  for (Retired& r : retired)
    if (!freedIfCompleted(&r)) left.push_back(r);
  retired.swap(left);
}

}  // namespace alloy
