#include "rejections.h"

#include "alloy_mpix.h"
#include "errors.h"
#include "handshake.h"

namespace alloy_mpix {

alloy::Rejections earlierRejections(Context* context) {
  alloy::Rejections seen;
  if (context->gpu != nullptr) alloy::unreportedRejection(context->gpu, &seen);
  return seen;
}

int reportRejections(const char* function, MPI_Comm comm, Context* context, const alloy::Rejections& seen) {
  if (seen.count == 0) return MPI_SUCCESS;
  alloy::markRejectionsTaken(context->gpu, seen);
  return report(comm, problem(seen.mark,
                              "%s: an earlier MPIX call on this communicator moved no data on any rank: rank %d "
                              "rejected its arguments (error class %d) at the communicator's GPU operation %llu%s. "
                              "This call was enqueued as usual",
                              function, seen.rank, seen.mark, seen.handshake,
                              seen.count > 1 ? " (the latest of several since the last report)" : ""));
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Cuda_rejection(MPI_Comm comm, int* errorclass, int* rank) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return MPI_ERR_OTHER;
  if (comm == MPI_COMM_NULL)
    return alloy_mpix::report(MPI_COMM_NULL,
                              alloy_mpix::problem(MPI_ERR_COMM, "MPIX_Cuda_rejection: comm is MPI_COMM_NULL"));
  if (errorclass == nullptr || rank == nullptr)
    return alloy_mpix::report(comm, alloy_mpix::problem(MPI_ERR_ARG, "MPIX_Cuda_rejection: %s is NULL",
                                                        errorclass == nullptr ? "errorclass" : "rank"));
  alloy::Rejections seen;
  const alloy_mpix::Context* context = alloy_mpix::existingContext(comm);
  if (context != nullptr && context->gpu != nullptr && alloy::takeUnreportedRejection(context->gpu, &seen)) {
    *errorclass = seen.mark;
    *rank = seen.rank;
  } else {
    *errorclass = MPI_SUCCESS;
    *rank = MPI_PROC_NULL;
  }
  return MPI_SUCCESS;
}
