// What communicator creation needs from the processes' runtime, and nothing more: who I am, how many we
// are, an all-gather of fixed-size bytes, and a barrier that keeps the caller's transport moving. The MPI
// runtime (MpiBootstrap: alloyCommCreateFromMPI) and the unique-id sockets (SocketBootstrap: the NCCL
// API) each implement it, so the core never calls MPI itself and runs in processes that never call
// MPI_Init. A communicator owns its bootstrap for its whole life (destroy barriers through it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "alloy.h"

namespace alloy {

enum class BootstrapPath { Pmix, Mpi, Socket };

const char* bootstrapPathName(BootstrapPath path);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // Collective: *all receives nranks * bytes bytes, rank r's at offset r * bytes. Every rank passes the
  // same bytes. A failure is this rank's; callers agree on it afterwards when peers must know.
  virtual alloyResult_t allgather(const void* mine, size_t bytes, std::vector<uint8_t>* all) = 0;
  // Collective: the endpoint blobs, over whatever path suits this runtime best (PMIx for MPI jobs);
  // *used names it for logs and tests. Every rank returns the same result code.
  virtual alloyResult_t exchangeEndpoints(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                          BootstrapPath* used) = 0;
  // Collective: the lowest of every rank's value, so that all ranks learn together whether one failed.
  virtual alloyResult_t minimum(int mine, int* lowest) = 0;
  // Collective: returns once every rank has entered, calling progress (when set) while it waits, so that
  // a transport whose peers need this rank's help to finish keeps moving. alloyTimeout when the others
  // have not all entered within timeoutMs (a rank that died never will, nor one that aborted where
  // enterBarrierAndLeave cannot enter); the bootstrap then serves nothing more.
  virtual alloyResult_t barrier(const std::function<void()>& progress, long long timeoutMs) = 0;
  // alloyCommAbort: enters the barrier that the destroy of the other ranks waits in, without waiting for
  // them, so that ranks which destroy while this one aborts are not held to their timeout. A bootstrap
  // that cannot enter without staying (the unique-id ring, where every rank forwards the others' tokens)
  // does nothing, and the others' barrier ends at its timeout.
  virtual void enterBarrierAndLeave() {}
};

// Collective: every rank's value of a plain type, by rank.
template <typename T>
alloyResult_t allgatherValues(Bootstrap& bootstrap, const T& mine, std::vector<T>* all) {
  static_assert(std::is_trivially_copyable<T>::value, "the bootstrap carries plain bytes");
  std::vector<uint8_t> bytes;
  const alloyResult_t result = bootstrap.allgather(&mine, sizeof(T), &bytes);
  if (result != alloySuccess) return result;
  all->resize(bootstrap.nranks());
  std::memcpy(all->data(), bytes.data(), bytes.size());
  return alloySuccess;
}

// Every rank learns whether all ranks succeeded at step. A failing rank keeps its own code and message;
// the others return alloyRemoteError naming the lowest failing rank, so no rank goes on into a
// collective step that a peer skipped.
alloyResult_t agree(Bootstrap& bootstrap, alloyResult_t mine, const char* step);

}  // namespace alloy
