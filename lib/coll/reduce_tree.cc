#include "reduce_tree.h"

#include <algorithm>
#include <vector>

#include "across_hosts.h"
#include "binomial_plan.h"
#include "comm.h"
#include "datatype.h"
#include "error.h"
#include "p2p_plan.h"
#include "schedule_choice.h"
#include "stream_scratch.h"

namespace alloy {

bool reduceTreeApplies(alloyComm_t comm, alloyRedOp_t op, size_t bytes) {
  if (op == alloyAvg || !comm->topology.spansHosts()) return false;
  return fewerRoundsChosen(comm, "ALLOY_REDUCE_TREE", binomialDepth, bytes, bytes);
}

alloyResult_t treeReduce(const char* send, char* recv, size_t count, const Reduction& r, int root, alloyComm_t comm,
                         cudaStream_t stream) {
  const LocalTopology& t = comm->topology;
  const size_t bytes = count * dataTypeSize(r.type);
  const bool alongRails = railsApply(comm);
  const int rootIndex = alongRails ? t.railOf(root) : 0;  // the root's local index: its rail is rails[rootIndex]
  const std::vector<int> members = alongRails ? t.rails[rootIndex] : allRanks(comm->nranks);
  const int n = static_cast<int>(members.size());
  const int me = static_cast<int>(std::find(members.begin(), members.end(), comm->rank) - members.begin());
  const bool member = me < n;  // off the root's rail, a rank only hands its buffer to its host's member
  const bool isRoot = comm->rank == root;
  const int rootMember = static_cast<int>(std::find(members.begin(), members.end(), root) - members.begin());
  const BinomialNode node = member ? binomialNode(n, rootMember, me) : BinomialNode{};

  // Where a member accumulates: the root's recvbuff; elsewhere scratch that waits for the parent (recvbuff
  // is the root's only). A leaf of the tree with nothing to add from its host sends its input as it is.
  StreamScratch partial(comm, stream);
  const bool accumulates = member && (alongRails || !node.children.empty());
  if (accumulates && !isRoot) ALLOY_TRY(partial.allocate(bytes, r.function));
  char* sum = isRoot ? recv : partial.get();

  GroupReduce host(comm, r, stream), children(comm, r, stream);
  P2pPlan handIn(comm, r.operation), toParent(comm, r.operation);
  const char* current = send;  // what this rank holds reduced so far
  if (alongRails && member) {
    // Stage 1, inside the host: this rank reduces its host's buffers, in local order.
    std::vector<Part> parts(t.localSize, Part{0, 0});
    parts[t.localRank] = Part{0, count};
    ALLOY_TRY(host.prepare(t.localPeers, t.localRank, send, parts, sum));
    current = sum;
  } else if (alongRails) {
    handIn.addSend(t.localPeers[rootIndex], send, bytes);
    ALLOY_TRY(handIn.prepare(r.function));
  }
  if (!node.children.empty()) {
    // This rank's partial first, then its children's in the tree's order.
    std::vector<int> group{comm->rank};
    for (int child : node.children) group.push_back(members[child]);
    std::vector<Part> parts(group.size(), Part{0, 0});
    parts[0] = Part{0, count};
    ALLOY_TRY(children.prepare(group, 0, current, parts, sum));
    current = sum;
  }
  if (node.parent >= 0) {
    toParent.addSend(members[node.parent], current, bytes);
    ALLOY_TRY(toParent.prepare(r.function));
  }

  if (alongRails) ALLOY_TRY(member ? host.launch() : handIn.launch(stream, r.function));
  if (!node.children.empty()) ALLOY_TRY(children.launch());
  return node.parent >= 0 ? toParent.launch(stream, r.function) : alloySuccess;
}

}  // namespace alloy
