#include "counts.h"

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "env.h"

namespace alloy_layer {
namespace {

constexpr int kCalls = static_cast<int>(Call::kCount);
const char* const kNames[kCalls] = {"MPI_Allreduce", "MPI_Reduce",    "MPI_Bcast",     "MPI_Allgather",
                                    "MPI_Allgatherv", "MPI_Reduce_scatter_block", "MPI_Reduce_scatter",
                                    "MPI_Alltoall",  "MPI_Alltoallv", "MPI_Iallreduce", "MPI_Ialltoallv"};
std::atomic<long long> passed[kCalls], diverted[kCalls];

// The report, printed by the delete callback of an attribute on MPI_COMM_SELF: MPI_Finalize runs those
// first, whichever language's binding the program finalizes through, while MPI still works.
int printReport(MPI_Comm, int keyval, void*, void*) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int c = 0; c < kCalls; ++c)
    if (passed[c] + diverted[c] > 0)
      std::fprintf(stderr, "alloy mpi layer: rank %d: %s: %lld passed, %lld diverted\n", rank, kNames[c],
                   passed[c].load(), diverted[c].load());
  std::fflush(stderr);
  MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

void scheduleReport() {
  if (alloy::envInt("ALLOY_MPI_LAYER_REPORT", 0, 0, 1) != 1) return;
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, printReport, &keyval, nullptr) == MPI_SUCCESS)
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
}

}  // namespace

const char* callName(Call call) { return kNames[static_cast<int>(call)]; }

void tallyCall(Call call, bool toGpu) {
  // The attribute can only be set while MPI runs; a call outside that time is the MPI library's to refuse.
  // Once the report is scheduled (or found not asked for), no call asks MPI whether it runs.
  static std::once_flag reportOnce;
  static std::atomic<bool> reportDecided{false};
  if (!reportDecided.load(std::memory_order_acquire)) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
      std::call_once(reportOnce, scheduleReport);
      reportDecided.store(true, std::memory_order_release);
    }
  }
  (toGpu ? diverted : passed)[static_cast<int>(call)]++;
}

Tally tallyOf(Call call) {
  const int c = static_cast<int>(call);
  return Tally{passed[c].load(), diverted[c].load()};
}

}  // namespace alloy_layer
