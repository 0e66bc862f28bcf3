#include "across_hosts.h"

#include <algorithm>
#include <vector>

#include "algorithm.h"
#include "allreduce_doubling.h"
#include "call_env.h"
#include "comm.h"
#include "datatype.h"
#include "device_guard.h"
#include "doubling_plan.h"
#include "error.h"
#include "group_reduce.h"
#include "p2p_plan.h"
#include "rail_order.h"
#include "reduce_tree.h"
#include "schedule_choice.h"
#include "stream_scratch.h"

namespace alloy {
namespace {

// The most scratch memory a one-shot reduction between hosts takes (a slot of the whole buffer per
// rank): beyond it the two-step schedule runs, whose slots hold one part per rank.
constexpr size_t kOneShotScratchMaxBytes = size_t{64} << 20;

// The flat reduction: every rank of the communicator in one group, then `then` (checked before anything
// is launched).
alloyResult_t reduceParts(alloyComm_t comm, const char* send, const std::vector<Part>& parts, char* dst,
                          const Reduction& r, cudaStream_t stream, P2pPlan* then) {
  GroupReduce step(comm, r, stream);
  ALLOY_TRY(step.prepare(allRanks(comm->nranks), comm->rank, send, parts, dst));
  if (then != nullptr) ALLOY_TRY(then->prepare(r.function));
  ALLOY_TRY(step.launch());
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

// Whether the hierarchical schedule applies: several hosts of several ranks each, every host the same
// size (a rail on every host). With one rank per host it would be the flat schedule with extra steps.
// Not for avg: its two steps would each divide (by L, then by the number of hosts), which for integers
// truncates twice and does not give the flat schedule's bits. ALLOY_ALLREDUCE_HIERARCHY=0 keeps the flat
// schedule (for comparison).
bool hierarchical(alloyComm_t comm, alloyRedOp_t op) { return op != alloyAvg && railsApply(comm); }

// The hierarchical reduce-scatter of a count-element buffer that allreduce and reduce start with. The
// buffer is split into one part per local index (localParts), each part into one piece per host of its
// rail (railPieces, relative to the part). Step 1, inside the host (CUDA IPC): the rank of local index i
// reduces part i of its host's ranks, in local order, into scratch. Step 2, along the rail (the network):
// it reduces piece h of those host partials, in host order, into `dst` + the piece's place in the
// buffer. The bytes that cross hosts are 1/L of the flat schedule's (L ranks per host), and every
// element is still reduced once, by one rank, in one order: identical bits on every rank.
class HostThenRail {
 public:
  HostThenRail(alloyComm_t comm, const Reduction& r, cudaStream_t stream, size_t count)
      : comm_(comm), es_(dataTypeSize(r.type)), partial_(comm, stream), local_(comm, r, stream), rail_(comm, r, stream) {
    const LocalTopology& t = comm->topology;
    localParts_ = evenParts(count, es_, t.localSize);
    railPieces_ = evenParts(localParts_[t.localRank].count, es_, static_cast<int>(t.railPeers().size()));
    railIndex_ = static_cast<int>(std::find(t.railPeers().begin(), t.railPeers().end(), comm->rank) - t.railPeers().begin());
  }

  // The part local index q reduces; this rank's part and, inside it, its piece: what it holds reduced
  // after launch().
  Part localPart(int q) const { return localParts_[q]; }
  Part part() const { return localParts_[comm_->topology.localRank]; }
  Part piece(int railIndex) const { return railPieces_[railIndex]; }
  // Where the rank at rail index h of rail q holds its reduced piece, in elements of the buffer.
  Part pieceOf(int q, int h) const {
    const Part p = partOf(localParts_[q].count, es_, static_cast<int>(railPieces_.size()), h);
    return Part{localParts_[q].first + p.first, p.count};
  }
  int railIndex() const { return railIndex_; }

  // pieceDst: where this rank's reduced piece goes.
  alloyResult_t prepare(const char* send, char* pieceDst, const char* function) {
    const LocalTopology& t = comm_->topology;
    ALLOY_TRY(partial_.allocate(part().count * es_, function));
    ALLOY_TRY(local_.prepare(t.localPeers, t.localRank, send, localParts_, partial_.get()));
    return rail_.prepare(t.railPeers(), railIndex_, partial_.get(), railPieces_, pieceDst);
  }
  alloyResult_t launch() {
    ALLOY_TRY(local_.launch());
    return rail_.launch();
  }

 private:
  alloyComm_t comm_;
  size_t es_;
  std::vector<Part> localParts_, railPieces_;
  int railIndex_ = 0;
  StreamScratch partial_;  // this host's reduction of part `localRank`
  GroupReduce local_, rail_;
};

// allreduce after HostThenRail: the pieces travel along the rail (every rank of the rail ends with the
// whole part), then the parts inside the host.
alloyResult_t hierarchicalAllReduce(const char* send, char* recv, size_t count, const Reduction& r, alloyComm_t comm,
                                    cudaStream_t stream) {
  const LocalTopology& t = comm->topology;
  const size_t es = dataTypeSize(r.type);
  HostThenRail reduce(comm, r, stream, count);
  const Part part = reduce.part();
  P2pPlan railGather(comm, r.operation), hostGather(comm, r.operation);
  const Part mine = reduce.piece(reduce.railIndex());
  for (int h = 0; h < static_cast<int>(t.railPeers().size()); ++h) {
    if (h == reduce.railIndex()) continue;
    const Part theirs = reduce.piece(h);
    if (mine.count > 0) railGather.addSend(t.railPeers()[h], recv + (part.first + mine.first) * es, mine.count * es);
    if (theirs.count > 0) railGather.addRecv(t.railPeers()[h], recv + (part.first + theirs.first) * es, theirs.count * es);
  }
  for (int q = 0; q < t.localSize; ++q) {
    if (q == t.localRank) continue;
    const Part theirs = reduce.localPart(q);
    if (part.count > 0) hostGather.addSend(t.localPeers[q], recv + part.first * es, part.count * es);
    if (theirs.count > 0) hostGather.addRecv(t.localPeers[q], recv + theirs.first * es, theirs.count * es);
  }
  ALLOY_TRY(reduce.prepare(send, recv + (part.first + mine.first) * es, r.function));
  ALLOY_TRY(railGather.prepare(r.function));
  ALLOY_TRY(hostGather.prepare(r.function));
  ALLOY_TRY(reduce.launch());
  ALLOY_TRY(railGather.launch(stream, r.function));
  return hostGather.launch(stream, r.function);
}

// reduce after HostThenRail: every rank sends its reduced piece to the root, which places each at the
// piece's place in recvbuff (it knows every rank's piece from the rails).
alloyResult_t hierarchicalReduce(const char* send, char* recv, size_t count, const Reduction& r, int root,
                                 alloyComm_t comm, cudaStream_t stream) {
  const LocalTopology& t = comm->topology;
  const size_t es = dataTypeSize(r.type);
  HostThenRail reduce(comm, r, stream, count);
  const Part mine = reduce.pieceOf(t.localRank, reduce.railIndex());
  const bool isRoot = comm->rank == root;
  // Off the root the reduced piece waits in scratch memory for the gather (recvbuff is the root's only).
  StreamScratch held(comm, stream);
  if (!isRoot) ALLOY_TRY(held.allocate(mine.count * es, r.function));
  char* reduced = isRoot ? recv + mine.first * es : held.get();
  P2pPlan gather(comm, kOpReduce);
  if (isRoot) {
    for (int q = 0; q < t.localSize; ++q)
      for (int h = 0; h < static_cast<int>(t.rails[q].size()); ++h) {
        const Part theirs = reduce.pieceOf(q, h);
        if (t.rails[q][h] != root && theirs.count > 0)
          gather.addRecv(t.rails[q][h], recv + theirs.first * es, theirs.count * es);
      }
  } else if (mine.count > 0) {
    gather.addSend(root, reduced, mine.count * es);
  }
  ALLOY_TRY(reduce.prepare(send, reduced, r.function));
  ALLOY_TRY(gather.prepare(r.function));
  ALLOY_TRY(reduce.launch());
  return gather.launch(stream, r.function);
}

// reduce-scatter where every host holds the same L > 1 ranks. The input is first copied into rail order
// (copyByRail). Step 1, inside the host (CUDA IPC): the rank of local index q reduces, over its host's
// ranks in local order, the blocks of rail q's ranks (one per host, in rail order) into scratch. Step 2,
// along the rail (the network): the rank at rail index h reduces block h of those host partials, in host
// order, into its recvbuff. Between hosts a rank sends (hosts - 1) blocks where the flat schedule sends
// (nranks - L): 1/L of the bytes. Each element is reduced by one rank in one order, so the result is the
// same on every run.
alloyResult_t hierarchicalReduceScatter(const char* send, char* recv, size_t recvcount, const Reduction& r,
                                        alloyComm_t comm, cudaStream_t stream) {
  const LocalTopology& t = comm->topology;
  const size_t es = dataTypeSize(r.type);
  const std::vector<int>& rail = t.railPeers();
  const int hosts = static_cast<int>(rail.size());
  std::vector<Part> railParts(t.localSize), railBlocks(hosts);
  for (int q = 0; q < t.localSize; ++q) railParts[q] = Part{q * hosts * recvcount, hosts * recvcount};
  for (int h = 0; h < hosts; ++h) railBlocks[h] = Part{h * recvcount, recvcount};
  const int railIndex = static_cast<int>(std::find(rail.begin(), rail.end(), comm->rank) - rail.begin());
  StreamScratch packed(comm, stream), partial(comm, stream);
  ALLOY_TRY(packed.allocate(comm->nranks * recvcount * es, r.function));
  ALLOY_TRY(partial.allocate(hosts * recvcount * es, r.function));
  GroupReduce host(comm, r, stream), along(comm, r, stream);
  ALLOY_TRY(host.prepare(t.localPeers, t.localRank, packed.get(), railParts, partial.get()));
  ALLOY_TRY(along.prepare(rail, railIndex, partial.get(), railBlocks, recv));
  {
    DeviceGuard guard(comm->cudaDevice);
    ALLOY_TRY(copyByRail(t, RailCopy::kIntoRailOrder, send, packed.get(), recvcount * es, stream, r.function));
  }
  ALLOY_TRY(host.launch());
  return along.launch();
}

}  // namespace

bool railsApply(alloyComm_t comm) {
  const LocalTopology& t = comm->topology;
  return t.localSize > 1 && t.railPeers().size() > 1 && callEnvInt("ALLOY_ALLREDUCE_HIERARCHY", 1, 0, 1) == 1;
}

alloyResult_t reduceScatterAcrossHosts(const void* sendbuff, void* recvbuff, size_t recvcount, alloyDataType_t type,
                                       alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function) {
  const Reduction r{type, op, kOpReduceScatter, function};
  const char* send = static_cast<const char*>(sendbuff);
  char* recv = static_cast<char*>(recvbuff);
  const size_t part = recvcount * dataTypeSize(type), whole = comm->nranks * part;
  // Small buffers between many hosts: the whole buffer reduced by recursive doubling (an allreduce into
  // scratch), then this rank's part copied out; the rounds pass the whole buffer, so the rule weighs
  // them against the flat round's parts (round_cost.h).
  if (whole <= allreduceOneShotMaxBytes(comm->nranks) && op != alloyAvg &&
      fewerRoundsChosen(comm, "ALLOY_REDUCE_SCATTER_DOUBLING", doublingDepth, part, whole)) {
    StreamScratch reduced(comm, stream);
    ALLOY_TRY(reduced.allocate(whole, function));
    ALLOY_TRY(doublingAllReduce(send, reduced.get(), comm->nranks * recvcount, r, comm, stream));
    DeviceGuard guard(comm->cudaDevice);
    ALLOY_CUDA_TRY(cudaMemcpyAsync(recv, reduced.get() + comm->rank * part, part, cudaMemcpyDeviceToDevice, stream));
    return alloySuccess;
  }
  // Above the size where allreduce stops sending whole buffers, the saving in bytes between hosts is
  // worth the second launch.
  if (!oneShot(comm, whole) && hierarchical(comm, op))
    return hierarchicalReduceScatter(send, recv, recvcount, r, comm, stream);
  std::vector<Part> parts(comm->nranks);
  for (int p = 0; p < comm->nranks; ++p) parts[p] = Part{p * recvcount, recvcount};
  return reduceParts(comm, send, parts, recv, r, stream, nullptr);
}

alloyResult_t allReduceAcrossHosts(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t type,
                                   alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function) {
  const size_t es = dataTypeSize(type);
  const Reduction r{type, op, kOpAllReduce, function};
  const char* send = static_cast<const char*>(sendbuff);
  char* recv = static_cast<char*>(recvbuff);
  // Small buffers between many hosts: rounds of one partner each instead of one round of every rank
  // (allreduce_doubling.h), whose scratch is two copies of the buffer rather than one per rank, so the
  // scratch cap of oneShot() does not apply.
  if (count * es <= allreduceOneShotMaxBytes(comm->nranks) && allReduceDoublingApplies(comm, op, count * es))
    return doublingAllReduce(send, recv, count, r, comm, stream);
  if (oneShot(comm, count * es))
    return reduceParts(comm, send, std::vector<Part>(comm->nranks, Part{0, count}), recv, r, stream, nullptr);
  if (hierarchical(comm, op)) return hierarchicalAllReduce(send, recv, count, r, comm, stream);
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
  // Small buffers between many hosts: up a tree instead of every rank to the root (reduce_tree.h).
  if (count * es <= allreduceOneShotMaxBytes(comm->nranks) && reduceTreeApplies(comm, op, count * es))
    return treeReduce(send, recv, count, r, root, comm, stream);
  if (oneShot(comm, count * es)) {
    std::vector<Part> parts(comm->nranks, Part{0, 0});
    parts[root] = Part{0, count};
    return reduceParts(comm, send, parts, recv, r, stream, nullptr);
  }
  if (hierarchical(comm, op)) return hierarchicalReduce(send, recv, count, r, root, comm, stream);
  const std::vector<Part> parts = evenParts(count, es, comm->nranks);
  const Part mine = parts[comm->rank];
  // Off the root the reduced part waits in scratch memory for the gather (recvbuff is the root's only).
  StreamScratch partial(comm, stream);
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
