#include "dispatch.h"

#include <vector>

#include "datatypes.h"

namespace alloyperf {

namespace {

// One send or receive of a point-to-point pattern; offsets and counts in elements.
struct P2p {
  bool isSend;
  int peer;
  size_t offset;
  size_t count;
};

// sendrecv is nccl-tests' ring shift: send to the next rank, receive from the previous one.
// alltoall and alltoallv exchange one chunk with every rank, this one included.
std::vector<P2p> p2pPattern(const CollCall& c) {
  const Layout& l = *c.layout;
  std::vector<P2p> ops;
  if (c.coll == Coll::sendrecv) {
    ops.push_back({true, (c.rank + 1) % c.nranks, 0, l.count});
    ops.push_back({false, (c.rank + c.nranks - 1) % c.nranks, 0, l.count});
    return ops;
  }
  for (int p = 0; p < c.nranks; ++p) {
    const bool v = c.coll == Coll::alltoallv;
    ops.push_back({true, p, v ? l.sendDispls[p] : p * l.count, v ? l.sendCounts[p] : l.count});
    ops.push_back({false, p, v ? l.recvDispls[p] : p * l.count, v ? l.recvCounts[p] : l.count});
  }
  return ops;
}

Status launchP2p(Backend& b, const CollCall& c, cudaStream_t stream) {
  const size_t elt = typeInfo(c.type).size;
  Status s = b.groupStart();
  if (s != Status::ok) return s;
  for (const P2p& op : p2pPattern(c)) {
    s = op.isSend ? b.send(static_cast<const char*>(c.send) + op.offset * elt, op.count, c.type, op.peer, stream)
                  : b.recv(static_cast<char*>(c.recv) + op.offset * elt, op.count, c.type, op.peer, stream);
    if (s != Status::ok) break;
  }
  // The group is closed even after a failure, to keep the library's group depth balanced; the status
  // returned is the first failure's (lastError may then hold what groupEnd said about it).
  const Status end = b.groupEnd();
  return s != Status::ok ? s : end;
}

}  // namespace

Status launch(Backend& b, const CollCall& c, cudaStream_t stream) {
  const Layout& l = *c.layout;
  switch (c.coll) {
    case Coll::allreduce: return b.allReduce(c.send, c.recv, l.count, c.type, c.redop, stream);
    case Coll::reduce: return b.reduce(c.send, c.recv, l.count, c.type, c.redop, c.root, stream);
    case Coll::broadcast: return b.broadcast(c.send, c.recv, l.count, c.type, c.root, stream);
    case Coll::allgather: return b.allGather(c.send, c.recv, l.count, c.type, stream);
    case Coll::reducescatter: return b.reduceScatter(c.send, c.recv, l.count, c.type, c.redop, stream);
    case Coll::alltoall:
      if (b.hasAlltoall()) return b.alltoAll(c.send, c.recv, l.count, c.type, stream);
      return launchP2p(b, c, stream);
    case Coll::alltoallv:
      if (b.hasAlltoall())
        return b.alltoAllv(c.send, l.sendCounts.data(), l.sendDispls.data(), c.recv, l.recvCounts.data(),
                           l.recvDispls.data(), c.type, stream);
      return launchP2p(b, c, stream);
    case Coll::sendrecv: return launchP2p(b, c, stream);
  }
  return Status::failed;
}

}  // namespace alloyperf
