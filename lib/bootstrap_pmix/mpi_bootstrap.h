// The bootstrap of alloyCommCreateFromMPI: a private duplicate of the caller's MPI communicator, with
// endpoints exchanged over PMIx (MPI_Allgather where PMIx is unusable: exchange.h). Its collectives, like
// all of Alloy's own MPI traffic, call PMPI_*: a profiling layer (Alloy's own layer of standard calls,
// mpi_layer/, or a tool) sees only the program's calls, and the layer never re-enters itself.
#pragma once

#include <mpi.h>

#include <memory>

#include "bootstrap.h"

namespace alloy {

class MpiBootstrap final : public Bootstrap {
 public:
  // Collective over userComm: duplicates it (Alloy's traffic never mixes with the caller's, and errors
  // return codes instead of invoking the caller's error handler). userComm must be a valid
  // intra-communicator between MPI_Init and MPI_Finalize (the caller checks).
  static alloyResult_t create(MPI_Comm userComm, std::unique_ptr<Bootstrap>* out);
  ~MpiBootstrap() override;

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  alloyResult_t allgather(const void* mine, size_t bytes, std::vector<uint8_t>* all) override;
  alloyResult_t exchangeEndpoints(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                  BootstrapPath* used) override;
  alloyResult_t minimum(int mine, int* lowest) override;
  alloyResult_t barrier(const std::function<void()>& progress, long long timeoutMs) override;
  void enterBarrierAndLeave() override;

 private:
  explicit MpiBootstrap(MPI_Comm comm);
  MPI_Comm comm_;
  // A barrier this rank no longer waits for: one that timed out, or the one an abort entered. MPI allows
  // neither freeing nor cancelling a nonblocking collective's request, nor freeing a communicator before
  // the collectives on it complete everywhere (a late message would reach whatever communicator reuses
  // its context id), so the destructor hands both to the retired list (mpi_retired.h) while it pends.
  MPI_Request unwaited_ = MPI_REQUEST_NULL;
  int rank_ = 0;
  int nranks_ = 0;
};

}  // namespace alloy
