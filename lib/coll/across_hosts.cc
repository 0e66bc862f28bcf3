#include "across_hosts.h"

#include <vector>

#include "algorithm.h"
#include "comm.h"
#include "datatype.h"
#include "device_guard.h"
#include "error.h"
#include "launch_order.h"
#include "p2p_plan.h"
#include "slot_reduce_kernel.h"

namespace alloy {
namespace {

// The most scratch memory a one-shot reduction between hosts takes (a slot of the whole buffer per
// rank): beyond it the two-step schedule runs, whose slots hold one part per rank.
constexpr size_t kOneShotScratchMaxBytes = size_t{64} << 20;

// Stream-ordered scratch memory of one operation: allocated on the stream before the operation's first
// step and freed on it after the last, so that it is that operation's alone even when operations run
// at once on several streams or replay from graphs (capture turns both calls into graph nodes).
class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  ~StreamScratch() {
    if (base_ != nullptr) cudaFreeAsync(base_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  alloyResult_t allocate(size_t bytes, const char* function) {
    if (bytes == 0) return alloySuccess;
    const cudaError_t err = cudaMallocAsync(reinterpret_cast<void**>(&base_), bytes, stream_);
    if (err != cudaSuccess) {
      cudaGetLastError();
      base_ = nullptr;
      return fail(alloyCudaError, "%s: cannot allocate %zu bytes of scratch memory on the stream (cudaMallocAsync: %s)",
                  function, bytes, cudaGetErrorString(err));
    }
    return alloySuccess;
  }
  char* get() const { return base_; }

 private:
  cudaStream_t stream_;
  char* base_ = nullptr;
};

struct Reduction {
  alloyDataType_t type;
  alloyRedOp_t op;
  Operation operation;
  const char* function;
};

// Rank p reduces elements [parts[p].first, parts[p].first + parts[p].count) of every rank's input `send`
// into its `dst`: an exchange brings every other rank's copy of that range into a slot of scratch
// memory, then the slots and this rank's own range are reduced in rank order. `then`, when given, is
// checked together with the exchange, before anything is launched, and launched after the reduction.
alloyResult_t reduceParts(alloyComm_t comm, const char* send, const std::vector<Part>& parts, char* dst,
                          const Reduction& r, cudaStream_t stream, P2pPlan* then) {
  const size_t es = dataTypeSize(r.type);
  const int me = comm->rank, n = comm->nranks;
  const size_t mineBytes = parts[me].count * es;
  StreamScratch slots(stream);
  ALLOY_TRY(slots.allocate(mineBytes * n, r.function));  // slot `me` stays unused: the input is read instead
  P2pPlan exchange(comm, r.operation);
  for (int peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    if (parts[peer].count > 0) exchange.addSend(peer, send + parts[peer].first * es, parts[peer].count * es);
    if (mineBytes > 0) exchange.addRecv(peer, slots.get() + peer * mineBytes, mineBytes);
  }
  ALLOY_TRY(exchange.prepare(r.function));
  if (then != nullptr) ALLOY_TRY(then->prepare(r.function));
  ALLOY_TRY(exchange.launch(stream, r.function));
  const SlotReduce reduce{slots.get(), mineBytes, send + parts[me].first * es, me, n, dst, parts[me].count, r.op};
  {
    DeviceGuard guard(comm->cudaDevice);
    ALLOY_TRY(kernelLaunched(launchSlotReduce(reduce, r.type, stream), r.function));
  }
  return then != nullptr ? then->launch(stream, r.function) : alloySuccess;
}

// One-shot (every rank's whole buffer to the ranks that reduce it) while the buffer is small and its
// copies fit the scratch cap; two steps otherwise.
bool oneShot(alloyComm_t comm, size_t bytes) {
  return bytes <= allreduceOneShotMaxBytes(comm->nranks) && bytes <= kOneShotScratchMaxBytes / comm->nranks;
}

std::vector<Part> evenParts(size_t count, size_t es, int n) {
  std::vector<Part> parts(n);
  for (int p = 0; p < n; ++p) parts[p] = partOf(count, es, n, p);
  return parts;
}

}  // namespace

alloyResult_t reduceScatterAcrossHosts(const void* sendbuff, void* recvbuff, size_t recvcount, alloyDataType_t type,
                                       alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function) {
  std::vector<Part> parts(comm->nranks);
  for (int p = 0; p < comm->nranks; ++p) parts[p] = Part{p * recvcount, recvcount};
  return reduceParts(comm, static_cast<const char*>(sendbuff), parts, static_cast<char*>(recvbuff),
                     Reduction{type, op, kOpReduceScatter, function}, stream, nullptr);
}

alloyResult_t allReduceAcrossHosts(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t type,
                                   alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function) {
  const size_t es = dataTypeSize(type);
  const Reduction r{type, op, kOpAllReduce, function};
  const char* send = static_cast<const char*>(sendbuff);
  char* recv = static_cast<char*>(recvbuff);
  if (oneShot(comm, count * es))
    return reduceParts(comm, send, std::vector<Part>(comm->nranks, Part{0, count}), recv, r, stream, nullptr);
  const std::vector<Part> parts = evenParts(count, es, comm->nranks);
  const Part mine = parts[comm->rank];
  P2pPlan gather(comm, kOpAllReduce);
  for (int peer = 0; peer < comm->nranks; ++peer) {
    if (peer == comm->rank) continue;
    if (mine.count > 0) gather.addSend(peer, recv + mine.first * es, mine.count * es);
    if (parts[peer].count > 0) gather.addRecv(peer, recv + parts[peer].first * es, parts[peer].count * es);
  }
  return reduceParts(comm, send, parts, recv + mine.first * es, r, stream, &gather);
}

alloyResult_t reduceAcrossHosts(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t type,
                                alloyRedOp_t op, int root, alloyComm_t comm, cudaStream_t stream, const char* function) {
  const size_t es = dataTypeSize(type);
  const Reduction r{type, op, kOpReduce, function};
  const char* send = static_cast<const char*>(sendbuff);
  char* recv = static_cast<char*>(recvbuff);
  const bool isRoot = comm->rank == root;
  if (oneShot(comm, count * es)) {
    std::vector<Part> parts(comm->nranks, Part{0, 0});
    parts[root] = Part{0, count};
    return reduceParts(comm, send, parts, recv, r, stream, nullptr);
  }
  const std::vector<Part> parts = evenParts(count, es, comm->nranks);
  const Part mine = parts[comm->rank];
  // Off the root the reduced part waits in scratch memory for the gather (recvbuff is the root's only).
  StreamScratch partial(stream);
  if (!isRoot) ALLOY_TRY(partial.allocate(mine.count * es, function));
  char* reduced = isRoot ? recv + mine.first * es : partial.get();
  P2pPlan gather(comm, kOpReduce);
  if (isRoot) {
    for (int peer = 0; peer < comm->nranks; ++peer)
      if (peer != root && parts[peer].count > 0)
        gather.addRecv(peer, recv + parts[peer].first * es, parts[peer].count * es);
  } else if (mine.count > 0) {
    gather.addSend(root, reduced, mine.count * es);
  }
  return reduceParts(comm, send, parts, reduced, r, stream, &gather);
}

}  // namespace alloy
