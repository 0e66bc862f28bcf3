// The verbs transport's operations without the NIC: which work requests each data call posts, and the
// table that bounds a connection's operations in flight (the back-pressure of transport.h). No ibverbs
// header: the transport maps these onto ibv_send_wr, and the unit tests check the decisions.
//
// Work requests of one call go to the connection's one RC queue pair as one chained ibv_post_send, so the
// responder executes them in the order listed (InfiniBand RC executes a queue pair's requests in order).
// Every work request is signalled: a completion per request keeps the send queue's accounting exact (a
// send-queue entry is free once its own completion was polled) and names the failing operation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace alloy {
namespace verbs {

enum class WorkOpcode { Write, Read };  // IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ
enum class LocalBytes {
  Source,       // the caller's src (an lkey from a registration)
  Value,        // the signal's 8-byte value, inline in the work request (copied when posted)
  FlushLanding  // an 8-byte word of the transport where a flush's read lands (contents unused)
};
enum class RemoteBytes {
  Key,       // the memory behind the caller's remote key, at remoteOffset
  FlushWord  // the word the peer published in its address for flushes
};

struct WorkItem {
  WorkOpcode opcode;
  LocalBytes local;
  RemoteBytes remote;
  uint64_t remoteOffset;
  size_t bytes;
};

struct WorkPlan {
  std::array<WorkItem, 2> items;
  int count = 0;
};

constexpr size_t kSignalBytes = 8;
// The most work requests one call posts (putSignal's data and signal).
constexpr int kMaxWorkPerOperation = 2;

// put: one RDMA WRITE of the source.
WorkPlan planPut(uint64_t dstOffset, size_t bytes);
// signal: one 8-byte RDMA WRITE of the value. A single aligned 8-byte write is one PCIe transaction at the
// target, so a reader sees the old or the new value, whole.
WorkPlan planSignal(uint64_t dstOffset);
// putSignal: the data's WRITE, then the value's WRITE, on the same queue pair: the target's HCA places
// the second after the first. Memory is registered without IBV_ACCESS_RELAXED_ORDERING, so the PCIe
// writes into host memory stay in that order too.
WorkPlan planPutSignal(uint64_t dstOffset, size_t bytes, uint64_t signalOffset);
// flush: an 8-byte RDMA READ of the peer's flush word. The responder answers a READ only after executing
// every earlier request of the queue pair, and its DMA read of memory cannot pass the writes before it,
// so the read's completion means earlier writes are visible at the target, even where a NIC wrote them
// with relaxed ordering.
WorkPlan planFlush();

// A connection's operations: at most `capacity` that have not completed or, when observed (posted with a
// Request), not been tested done. A slot's ticket carries a generation, so that a stale Request reaches
// neither a reused slot nor a free one.
class OpTable {
 public:
  explicit OpTable(int capacity);

  // A free slot for an operation of `workRequests` work requests, or -1 when all are taken.
  int acquire(const char* what, bool observed, int workRequests);
  // Frees a slot whose work requests were never posted (ibv_post_send refused them).
  void abandon(int slot);
  // One work request of `slot` completed with `status` (0: success; the first failure is kept). True when
  // it was the operation's last: an unobserved operation is then freed, an observed one waits for test().
  bool completeWork(int slot, int status);

  // What a Request holds: never 0.
  uint64_t ticket(int slot) const;
  enum class Tested { Unknown, InFlight, Done };
  // Done: *status and *what describe the operation, and its slot is free again.
  Tested test(uint64_t ticket, int* status, const char** what);

  int capacity() const { return static_cast<int>(ops_.size()); }
  // Operations with work requests still at the NIC (they may read sources and use keys).
  int inFlight() const { return inFlight_; }
  // Slots taken: in flight, or done and not yet tested.
  int held() const { return capacity() - static_cast<int>(free_.size()); }

 private:
  struct Op {
    bool taken = false;
    bool observed = false;
    int pendingWork = 0;
    int status = 0;
    uint32_t generation = 0;
    const char* what = "";
  };
  void release(int slot);

  std::vector<Op> ops_;
  std::vector<int> free_;
  int inFlight_ = 0;
};

}  // namespace verbs
}  // namespace alloy
