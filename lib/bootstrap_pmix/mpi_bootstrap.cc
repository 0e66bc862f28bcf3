#include "mpi_bootstrap.h"

#include <chrono>
#include <thread>

#include "error.h"
#include "exchange.h"
#include "mpi_retired.h"

namespace alloy {

alloyResult_t MpiBootstrap::create(MPI_Comm userComm, std::unique_ptr<Bootstrap>* out) {
  MPI_Comm dup = MPI_COMM_NULL;
  if (MPI_Comm_dup(userComm, &dup) != MPI_SUCCESS) return fail(alloyInternalError, "MPI_Comm_dup of mpiComm failed");
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  freeRetiredThatCompleted();
  out->reset(new MpiBootstrap(dup));
  return alloySuccess;
}

MpiBootstrap::MpiBootstrap(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &nranks_);
}

MpiBootstrap::~MpiBootstrap() {
  // A communicator destroyed after MPI_Finalize (at exit, say) has nothing left to free on the MPI side.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  retire(comm_, unwaited_);
  freeRetiredThatCompleted();
}

alloyResult_t MpiBootstrap::allgather(const void* mine, size_t bytes, std::vector<uint8_t>* all) {
  return exchangeOverMpi(comm_, mine, bytes, all);
}

alloyResult_t MpiBootstrap::exchangeEndpoints(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                              BootstrapPath* used) {
  return alloy::exchangeEndpoints(comm_, mine, bytes, all, used);
}

alloyResult_t MpiBootstrap::minimum(int mine, int* lowest) {
  if (PMPI_Allreduce(&mine, lowest, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS)
    return fail(alloyInternalError, "MPI_Allreduce failed");
  return alloySuccess;
}

alloyResult_t MpiBootstrap::barrier(const std::function<void()>& progress, long long timeoutMs) {
  // Nonblocking, so that a peer that never comes (it aborted, or died without taking the job down) ends
  // the wait at timeoutMs instead of hanging the destroy that called it.
  if (unwaited_ != MPI_REQUEST_NULL) {
    int completed = 0;
    PMPI_Test(&unwaited_, &completed, MPI_STATUS_IGNORE);
    if (!completed)
      return fail(alloyTimeout, "rank %d: an earlier barrier of this communicator still waits for ranks that "
                  "never came", rank_);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (PMPI_Ibarrier(comm_, &request) != MPI_SUCCESS) return fail(alloyInternalError, "MPI_Ibarrier failed");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    int done = 0;
    if (PMPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return fail(alloyInternalError, "MPI_Test of the barrier failed");
    if (done) return alloySuccess;
    if (std::chrono::steady_clock::now() > deadline) {
      unwaited_ = request;
      return fail(alloyTimeout, "rank %d: the other ranks did not all reach the barrier within %lld ms (the "
                  "communicator's timeout): a rank that died, or waits outside Alloy, never will", rank_, timeoutMs);
    }
    if (progress) {
      progress();
    } else {
      std::this_thread::yield();
    }
  }
}

void MpiBootstrap::enterBarrierAndLeave() {
  // An earlier barrier that timed out still pends: the ranks are out of step already, and a second
  // barrier could only pair with the wrong one.
  if (unwaited_ != MPI_REQUEST_NULL) return;
  // An abort may come from a watchdog thread (PyTorch's does): MPI may be entered from there only where
  // the program asked for MPI_THREAD_MULTIPLE.
  int provided = MPI_THREAD_SINGLE, isMain = 0;
  PMPI_Query_thread(&provided);
  PMPI_Is_thread_main(&isMain);
  if (!isMain && provided != MPI_THREAD_MULTIPLE) return;
  // Posted and left: MPI completes it as this process makes its next MPI calls, the retired list's sweeps
  // among them.
  if (PMPI_Ibarrier(comm_, &unwaited_) != MPI_SUCCESS) unwaited_ = MPI_REQUEST_NULL;
}

}  // namespace alloy
