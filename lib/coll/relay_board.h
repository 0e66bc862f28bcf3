// The count exchange of alltoallv's rail relay (alltoallv_relay.h): a page of shared memory among the
// ranks of one host of a communicator, where each rank posts the bytes it sends to every rank and reads
// what the host's other ranks posted. A rank that relays for its rail must know what its host's ranks
// send along it, and MPI's alltoallv gives each rank only its own counts: this is the exchange that
// fills the gap, among the ranks of one host only (no count matrix of the whole communicator).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "comm.h"  // RelayBoardPtr, the communicator's hold on its board

namespace alloy {

class RelayBoard {
 public:
  // Collective over the ranks of this rank's host: every one opens the board of this communicator's
  // host in the same call. The first local rank creates it; the last to open it removes its name, so
  // that nothing is left in /dev/shm once all have it mapped (a rank that dies before opening leaves it).
  static alloyResult_t open(alloyComm_t comm, const char* function, RelayBoardPtr* out);
  // The board's name in /dev/shm: the communicator (orderKey differs between live GPU communicators) and
  // the host (virtual hosts of one machine each have their own).
  static std::string name(alloyComm_t comm);
  ~RelayBoard();
  RelayBoard(const RelayBoard&) = delete;
  RelayBoard& operator=(const RelayBoard&) = delete;

  // Posts `mine` (one byte count per communicator rank) as this rank's row of its next exchange and
  // waits until every rank of the host posted its row of the same exchange, at most timeoutMs (then
  // alloyTimeout naming the ranks that did not come). The rows read by sent() stay valid until
  // this rank's next exchange: a rank cannot post the exchange after next before this one posted next.
  alloyResult_t exchange(const std::vector<uint64_t>& mine, const char* function);
  // What local rank `localIndex` posted for `rank` in the last exchange.
  uint64_t sent(int localIndex, int rank) const;

 private:
  RelayBoard(void* base, size_t bytes, std::vector<int> localPeers, int localRank, int nranks, long long timeoutMs);
  uint64_t* row(uint64_t exchange, int localIndex) const;

  void* base_;
  size_t bytes_;
  std::vector<int> localPeers_;  // the host's ranks, by local index
  int localSize_, localRank_, nranks_;
  long long timeoutMs_;
  size_t rowBytes_;
  uint64_t exchanges_ = 0;  // this rank's exchanges so far
};

}  // namespace alloy
