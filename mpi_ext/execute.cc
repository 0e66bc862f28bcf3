#include "execute.h"

#include "context.h"
#include "env.h"
#include "errors.h"
#include "gpu_launch.h"
#include "handshake.h"
#include "local_check.h"
#include "rejections.h"

namespace alloy_mpix {
namespace {

// Everything this rank can find wrong on its own, and the kinds of memory it passed. Runs before the
// ranks agree (or before the handshake), so that a problem on any rank stops every rank. Ordinary host
// memory is a problem on a communicator whose calls run enqueue-only on the GPU engine.
Problem checkLocally(const char* function, Request* request, Context* context, cudaStream_t stream, int* kinds) {
  BufferKinds buffers;
  const Problem mine = checkArguments(function, *request, context, &buffers);
  *kinds = mine ? kNoData : buffers.all();
  if (mine) return mine;
  if ((*kinds & kGpuMemory) && request->gpuProblem) return request->gpuProblem;
  if (*kinds & kHostMemory) {
    if (context->enqueueOnly)
      return problem(MPI_ERR_BUFFER, "%s: %s is ordinary host memory, but this communicator's MPIX calls run on the "
                     "GPU engine since its first call with GPU memory; pass GPU-accessible memory, or use another "
                     "communicator for host memory (docs/mpi-extension.md)", function,
                     (buffers.send & kHostMemory) ? request->sendName : request->recvName);
    if (request->hostProblem) return request->hostProblem;
    // MPI reads and writes host memory at once: work the caller enqueued before this call, which may
    // produce the send data or still read the receive buffer, must be finished first.
    if (processHasCudaDevice()) {
      const cudaError_t err = cudaStreamSynchronize(stream);
      if (err != cudaSuccess) {
        cudaGetLastError();
        return problem(MPI_ERR_OTHER, "%s: cudaStreamSynchronize(stream) before the host-memory path failed: %s",
                       function, cudaGetErrorString(err));
      }
    }
  }
  return {};
}

// A call on a communicator whose calls run enqueue-only: no host exchange. This rank checks what it can
// and calls the engine, which puts the operation's handshake (mark 0) ahead of its first kernel; where
// this rank or the engine rejected the call, or the operation launched nothing here, the handshake is
// enqueued on its own, marked with the problem. The handshake lets every rank's kernels skip the
// operation when any rank marked it (lib/core/handshake.h).
int runEnqueueOnly(const char* function, MPI_Comm comm, Request* request, Context* context, cudaStream_t stream) {
  const alloy::Rejections earlier = earlierRejections(context);
  int kinds = kNoData;
  const Problem mine =
      enqueueOperation(function, request, context, stream, checkLocally(function, request, context, stream, &kinds));
  if (mine) return report(comm, mine);
  return reportRejections(function, comm, context, earlier);
}

// After an agreed call that chose the GPU engine, later calls run enqueue-only, unless the program asked
// for the agreement on every call or the handshake cannot reach every rank (a communicator that spans
// hosts). Every rank passes here at the same call and decides alike (ALLOY_MPIX_AGREE was agreed on).
void enterEnqueueOnly(Context* context, bool agreeEveryCall) {
  if (context->gpu == nullptr || agreeEveryCall) return;
  context->enqueueOnly = alloy::enableHandshake(context->gpu) == alloySuccess;
}

}  // namespace

int execute(const char* function, MPI_Comm comm, cudaStream_t stream, Prepare prepare, ViaMpi viaMpi) {
  Problem fromBinding = takeBindingProblem();  // taken on every path, so it never outlives this call
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return MPI_ERR_OTHER;  // no error handler may be called outside MPI
  if (comm == MPI_COMM_NULL)
    return report(MPI_COMM_NULL, problem(MPI_ERR_COMM, "%s: comm is MPI_COMM_NULL", function));
  // A communicator with a context is an intracommunicator, whose shape the context holds: only a call
  // that finds none (the first on comm, or one MPI cannot read: contextOf reports it) asks MPI about it.
  Context* context = nullptr;
  if (!findContext(comm, &context) || context == nullptr) {
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
      return report(comm, problem(MPI_ERR_COMM, "%s: comm is an inter-communicator; MPIX functions take "
                                                "intra-communicators", function));
    if (Problem p = contextOf(comm, function, &context)) return report(comm, p);
  }
  const CommShape& shape = context->shape;

  Request request;
  request.reject(std::move(fromBinding));  // first, so that it is the problem reported
  prepare(shape, &request);
  if (context->enqueueOnly) return runEnqueueOnly(function, comm, &request, context, stream);
  int kinds = kNoData;
  const Problem mine = checkLocally(function, &request, context, stream, &kinds);

  // The agreement, on the private duplicate: which kinds of memory the ranks passed, and the highest
  // rank that found a problem. A rank that moves no data (zero counts, NULL buffers) cannot tell
  // the engine from its own arguments, and no rank may go on into a collective that a peer skipped.
  // The last two carry ALLOY_MPIX_AGREE: the ranks must leave the agreement at the same call or not at all.
  const bool agreeEveryCall = alloy::envInt("ALLOY_MPIX_AGREE", 0, 0, 1) == 1;
  const int vote[5] = {(kinds & kHostMemory) ? 1 : 0, (kinds & kGpuMemory) ? 1 : 0, mine ? shape.rank + 1 : 0,
                       agreeEveryCall ? 1 : 0, agreeEveryCall ? 0 : 1};
  int all[5] = {0, 0, 0, 0, 0};
  if (!agreeMax(context, vote, all, 5))
    return report(comm, problem(MPI_ERR_OTHER, "%s: the ranks could not agree on the call (MPI_Allreduce failed)",
                                function));
  if (mine) return report(comm, mine);
  if (all[2] != 0)
    return report(comm, problem(MPI_ERR_OTHER, "%s: rank %d rejected its arguments, so no rank did anything",
                                function, all[2] - 1));
  if (all[0] && all[1])
    return report(comm, problem(MPI_ERR_BUFFER,
                                "%s: %s; all ranks must pass GPU-accessible memory, or all ordinary host memory",
                                function, kinds == (kHostMemory | kGpuMemory)
                                              ? "this rank passed host memory and GPU memory"
                                              : "some ranks passed host memory and others GPU memory"));
  if (all[1] && all[3] && all[4])
    return report(comm, problem(MPI_ERR_OTHER, "%s: ALLOY_MPIX_AGREE is 1 on some ranks and not on others (here: "
                                "%d); set it alike on every rank (docs/environment.md)", function, agreeEveryCall ? 1 : 0));
  if (all[1]) {
    const int code = runAgreedOnGpu(function, comm, &request, context, stream);
    enterEnqueueOnly(context, agreeEveryCall);
    return code;
  }
  if (all[0]) return viaMpi();
  return MPI_SUCCESS;  // no rank moves any data
}

}  // namespace alloy_mpix
