// The bootstrap of communicators created from a unique id (the NCCL API), with no MPI: each rank
// registers with the id's root (root.h), learns every rank's listening address, then connects to the
// next rank and accepts the previous one, presenting and checking the id's secret. The ring carries
// the all-gathers and barriers of creation and destruction for the communicator's life.
#pragma once

#include <memory>

#include "bootstrap.h"
#include "socket.h"
#include "unique_id.h"

namespace alloy {

class SocketBootstrap final : public Bootstrap {
 public:
  // Collective over the nranks ranks that pass id. Checks nothing of nranks and rank beyond what the
  // root reports (the caller validates its arguments first).
  static alloyResult_t join(const uint8_t id[kUniqueIdBytes], int nranks, int rank, std::unique_ptr<Bootstrap>* out);

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  alloyResult_t allgather(const void* mine, size_t bytes, std::vector<uint8_t>* all) override;
  alloyResult_t exchangeEndpoints(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                  BootstrapPath* used) override;
  alloyResult_t minimum(int mine, int* lowest) override;
  alloyResult_t barrier(const std::function<void()>& progress, long long timeoutMs) override;

 private:
  SocketBootstrap(int rank, int nranks, long long timeoutMs) : rank_(rank), nranks_(nranks), timeoutMs_(timeoutMs) {}
  alloyResult_t ringAllgather(const void* mine, size_t bytes, std::vector<uint8_t>* all, Deadline deadline,
                              const std::function<void()>& progress);

  int rank_;
  int nranks_;
  long long timeoutMs_;
  Socket next_;      // to rank + 1
  Socket previous_;  // from rank - 1
};

}  // namespace alloy
