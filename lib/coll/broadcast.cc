// alloyBroadcast: the root sends its buffer to every peer through the point-to-point engine, over IPC or
// the network channel (and copies it into its own recvbuff unless in place). sendbuff matters on the
// root only, as in NCCL. Between hosts, larger buffers go in parts (broadcastInParts): over every rail at
// once where the hosts hold the same L > 1 ranks, else scattered to every rank and gathered; small buffers
// between many hosts go down a binomial tree (broadcastStaged). Inside one host, buffers whose parts exceed
// the low-latency limit are scattered and forwarded (broadcastScattered): the root's link carries the
// buffer once instead of once per peer; small ones go through the direct engine's lines
// (DirectPlan::planBroadcast), and from 3 ranks medium ones scattered and forwarded in those lines
// (planBroadcastTwoShot).
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "across_hosts.h"
#include "algorithm.h"
#include "arguments.h"
#include "binomial_plan.h"
#include "broadcast_parts_plan.h"
#include "call_env.h"
#include "comm.h"
#include "datatype.h"
#include "direct_plan.h"
#include "error.h"
#include "group_reduce.h"
#include "local_transport.h"
#include "p2p_plan.h"
#include "schedule_choice.h"

using namespace alloy;

namespace {

// The broadcast in stages (one host, or between hosts). Stage 1 runs among `members`: with alongRails
// (every host holds the same L > 1 ranks: railsApply) the root's rail, the ranks of its local index, one
// per host; else every rank. Flat, the
// root sends to every member in one launch; as a tree, each member receives from its parent in one
// launch and sends to its children in the next (binomial_plan.h: ceil(log2 members) levels, the root
// serving log2 of them instead of all). Stage 2, where the rails were used: on every host the member of
// the root's rail sends the buffer to the other ranks of the host, over CUDA IPC. Along the rails the
// root's bytes between hosts are (hosts - 1) copies instead of one per rank on another host: 1/L of the
// flat schedule's.
alloyResult_t broadcastStaged(const void* sendbuff, void* recvbuff, size_t bytes, int root, bool tree,
                              bool alongRails, alloyComm_t comm, cudaStream_t stream, const char* fn) {
  const LocalTopology& t = comm->topology;
  const int rootIndex = alongRails ? t.railOf(root) : 0;  // the root's local index: its rail is rails[rootIndex]
  const std::vector<int> members = alongRails ? t.rails[rootIndex] : allRanks(comm->nranks);
  const int n = static_cast<int>(members.size());
  const int me = static_cast<int>(std::find(members.begin(), members.end(), comm->rank) - members.begin());
  const int rootMember = static_cast<int>(std::find(members.begin(), members.end(), root) - members.begin());
  const bool isRoot = comm->rank == root;
  const void* source = isRoot ? sendbuff : recvbuff;
  P2pPlan receive(comm, kOpBroadcast), send(comm, kOpBroadcast), host(comm, kOpBroadcast);
  bool receiving = false, sending = false;
  if (me < n && tree) {
    const BinomialNode node = binomialNode(n, rootMember, me);
    if (node.parent >= 0) receive.addRecv(members[node.parent], recvbuff, bytes);
    receiving = node.parent >= 0;
    for (int child : node.children) send.addSend(members[child], source, bytes);
    sending = !node.children.empty();
  } else if (me < n) {
    for (int m = 0; m < n && isRoot; ++m)
      if (m != me) send.addSend(members[m], sendbuff, bytes);
    if (!isRoot) send.addRecv(root, recvbuff, bytes);
    sending = n > 1;
  }
  if (isRoot && sendbuff != recvbuff) {
    send.addSend(root, sendbuff, bytes);
    send.addRecv(root, recvbuff, bytes);
    sending = true;
  }
  if (alongRails) {
    const int hostSource = t.localPeers[rootIndex];  // the rank of this host on the root's rail
    if (comm->rank == hostSource) {
      for (int peer : t.localPeers)
        if (peer != comm->rank) host.addSend(peer, source, bytes);
    } else {
      host.addRecv(hostSource, recvbuff, bytes);
    }
  }
  if (receiving) ALLOY_TRY(receive.prepare(fn));
  if (sending) ALLOY_TRY(send.prepare(fn));
  if (alongRails) ALLOY_TRY(host.prepare(fn));
  if (receiving) ALLOY_TRY(receive.launch(stream, fn));
  if (sending) ALLOY_TRY(send.launch(stream, fn));
  return alongRails ? host.launch(stream, fn) : alloySuccess;
}

// A large broadcast between hosts in parts (broadcast_parts_plan.h): over every rail where the hosts hold the
// same L > 1 ranks, scattered and gathered elsewhere. Every connection between hosts then carries a share
// of the buffer, where the root's carried all of it (to each host of its rail, or to every rank).
alloyResult_t broadcastInParts(const void* sendbuff, void* recvbuff, size_t bytes, int root, alloyComm_t comm,
                               cudaStream_t stream, const char* fn) {
  const PartLaunches messages = railsApply(comm) ? planBroadcastOverRails(comm->topology, comm->rank, root, bytes)
                                                 : planBroadcastScatterGather(comm->nranks, comm->rank, root, bytes);
  const bool isRoot = comm->rank == root;
  const char* source = static_cast<const char*>(isRoot ? sendbuff : recvbuff);
  char* recv = static_cast<char*>(recvbuff);
  std::vector<P2pPlan> launches;
  for (const std::vector<PartMessage>& list : messages) {
    launches.emplace_back(comm, kOpBroadcast);
    for (const PartMessage& m : list) {
      if (m.isSend) launches.back().addSend(m.peer, source + m.offset, m.bytes);
      else launches.back().addRecv(m.peer, recv + m.offset, m.bytes);
    }
  }
  if (isRoot && sendbuff != recvbuff) {
    launches.front().addSend(root, sendbuff, bytes);
    launches.front().addRecv(root, recvbuff, bytes);
  }
  for (P2pPlan& plan : launches) ALLOY_TRY(plan.prepare(fn));
  for (P2pPlan& plan : launches) ALLOY_TRY(plan.launch(stream, fn));
  return alloySuccess;
}

// Whether a broadcast of `bytes` (up to allreduce's one-shot limit) between hosts goes down a binomial
// tree: ALLOY_BROADCAST_TREE=1 always, 0 never, auto (default) where round_cost.h expects the tree's
// levels to finish before the root's one round to every peer. The same on every rank.
bool broadcastTreeApplies(alloyComm_t comm, size_t bytes) {
  return fewerRoundsChosen(comm, "ALLOY_BROADCAST_TREE", binomialDepth, bytes, bytes);
}

// Part j of a broadcast of `bytes` scattered over the nranks - 1 ranks that are not the root.
Part scatteredPart(size_t bytes, int nranks, int j) { return partOf(bytes, 1, nranks - 1, j); }

std::string_view forwardMode() { return callEnvChoice("ALLOY_BROADCAST_FORWARD", "auto", {"auto", "0", "1"}); }

// ALLOY_BROADCAST_FORWARD=1: the rings' scatter and forward wherever it can run, over the direct engine's
// two-step lines as well (which take the sizes whose parts fit their slots under auto).
bool forwardForced() { return forwardMode() == "1"; }

// Whether a broadcast of `bytes` inside one host is scattered and forwarded over the rings:
// ALLOY_BROADCAST_FORWARD=1 or auto (default) from 3 ranks on where every part exceeds the low-latency
// limit, which forwarding needs; 0 never. The same on every rank.
bool forwardApplies(alloyComm_t comm, size_t bytes) {
  if (forwardMode() == "0" || comm->nranks < 3 || comm->topology.spansHosts()) return false;
  const size_t limit = comm->local->lowLatencyMaxBytes();
  for (int j = 0; j < comm->nranks - 1; ++j)
    if (scatteredPart(bytes, comm->nranks, j).count <= limit) return false;
  return true;
}

// Scatter and forward inside one host: the buffer is cut into nranks - 1 parts, the root sends part j to
// the j-th other rank, which writes it into its recvbuff and passes it on to every other non-root rank
// as it arrives (P2pPlan::addForward), all in one launch. The root sends the buffer once and every rank
// receives it once (the root's part from the root, the others from their forwarders), where the flat push
// sent it nranks - 1 times out of the root's link: on 4 x H100 that capped the flat broadcast at about
// 120 GB/s, a third of the link. Each part is forwarded by the rank that received it, so the chunks stay
// in the order the engine's rings need.
alloyResult_t broadcastScattered(const void* sendbuff, void* recvbuff, size_t bytes, int root, alloyComm_t comm,
                                 cudaStream_t stream, const char* fn) {
  std::vector<int> others;  // the ranks that are not the root, in rank order: rank others[j] gets part j
  for (int r = 0; r < comm->nranks; ++r)
    if (r != root) others.push_back(r);
  const int parts = static_cast<int>(others.size());
  char* recv = static_cast<char*>(recvbuff);
  P2pPlan plan(comm, kOpBroadcast);
  if (comm->rank == root) {
    const char* send = static_cast<const char*>(sendbuff);
    for (int j = 0; j < parts; ++j) {
      const Part p = scatteredPart(bytes, comm->nranks, j);
      plan.addSend(others[j], send + p.first, p.count);
    }
    if (sendbuff != recvbuff) {
      plan.addSend(root, sendbuff, bytes);
      plan.addRecv(root, recvbuff, bytes);
    }
    return plan.launch(stream, fn);
  }
  const int mine = static_cast<int>(std::find(others.begin(), others.end(), comm->rank) - others.begin());
  std::vector<int> onward;
  for (int j = 0; j < parts; ++j) {
    const Part p = scatteredPart(bytes, comm->nranks, j);
    if (j != mine) {
      plan.addRecv(others[j], recv + p.first, p.count);
      onward.push_back(others[j]);
    }
  }
  const Part p = scatteredPart(bytes, comm->nranks, mine);
  plan.addForward(root, recv + p.first, p.count, onward);
  return plan.launch(stream, fn);
}

}  // namespace

extern "C" ALLOY_API alloyResult_t alloyBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                                  alloyDataType_t datatype, int root, alloyComm_t comm,
                                                  cudaStream_t stream) {
  const char* fn = "alloyBroadcast";
  ALLOY_TRY(checkGpuCollective(comm, fn));
  ALLOY_TRY(checkDataType(datatype, fn));
  ALLOY_TRY(checkPeer(comm, root, fn, "root"));
  size_t bytes = 0;
  ALLOY_TRY(checkedBytes(count, dataTypeSize(datatype), fn, "count", &bytes));
  const bool isRoot = comm->rank == root;
  if (isRoot) {
    ALLOY_TRY(checkDeviceBuffer(comm, sendbuff, bytes, fn, "sendbuff"));
    ALLOY_TRY(checkInPlaceOrDisjoint(sendbuff, bytes, recvbuff, bytes, recvbuff, fn));
  }
  ALLOY_TRY(checkDeviceBuffer(comm, recvbuff, bytes, fn, "recvbuff"));
  if (bytes == 0) return alloySuccess;
  const void* source = isRoot ? sendbuff : recvbuff;
  // Small ones inside a host as the direct engine's lines, as alltoall's: one launch with a 656-byte
  // argument block, no rings' counters, tokens from the other ranks in place of acknowledgements
  // (direct_kernel.h). Up to where the root's stores to all its peers stay within allreduce's one-shot
  // limit, and never past the low-latency limit of the point-to-point engine it replaces.
  const bool oneShot = bytes <= comm->local->lowLatencyMaxBytes() &&
                       bytes * comm->nranks <= allreduceOneShotMaxBytes(comm->nranks);
  if (!comm->topology.spansHosts() && oneShot) {
    DirectPlan direct(comm, alloyUint8, alloySum, kOpBroadcast);
    if (direct.planBroadcast(source, recvbuff, bytes, root)) return direct.launch(stream, fn);
  }
  // Past that, from 3 ranks, scattered and passed on in the same lines while a part fits a slot (up to
  // ALLOY_DIRECT_LL_MAX_BYTES): the scatter-and-forward below in one launch without the rings' flow control.
  if (!comm->topology.spansHosts() && !oneShot && !forwardForced()) {
    DirectPlan direct(comm, alloyUint8, alloySum, kOpBroadcast);
    if (direct.planBroadcastTwoShot(source, recvbuff, bytes, root)) return direct.launch(stream, fn);
  }
  if (forwardApplies(comm, bytes)) return broadcastScattered(sendbuff, recvbuff, bytes, root, comm, stream, fn);
  bool tree = false, alongRails = false;
  if (comm->topology.spansHosts()) {
    // Above the size where allreduce stops sending whole buffers, the bytes saved between hosts are worth
    // the extra launches; below it, between many hosts, the tree's levels cost less than the root's peers.
    const bool small = bytes <= allreduceOneShotMaxBytes(comm->nranks);
    // In parts from 3 ranks on: between two ranks the scattered form would send the same bytes in two launches.
    if (!small && comm->nranks > 2 && callEnvInt("ALLOY_BROADCAST_PARTS", 1, 0, 1) == 1)
      return broadcastInParts(sendbuff, recvbuff, bytes, root, comm, stream, fn);
    tree = small && broadcastTreeApplies(comm, bytes);
    alongRails = (tree || !small) && railsApply(comm);
  }
  return broadcastStaged(sendbuff, recvbuff, bytes, root, tree, alongRails, comm, stream, fn);
}
