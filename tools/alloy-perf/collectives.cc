#include "collectives.h"

namespace alloyperf {

namespace {

const char* const kNames[kNumColls] = {"allreduce",     "reduce",   "broadcast", "allgather",
                                       "reducescatter", "alltoall", "alltoallv", "sendrecv"};

// nccl-tests gives each rank of allgather, reducescatter and alltoall a share rounded down to 16 bytes,
// so that every rank's chunk starts aligned; the same rounding keeps our sizes equal to theirs.
size_t alignedShare(size_t count, size_t eltSize, int nranks) {
  const size_t perRank = count / static_cast<size_t>(nranks);
  const size_t align = eltSize < 16 ? 16 / eltSize : 1;
  return perRank / align * align;
}

}  // namespace

const char* collName(Coll c) { return kNames[static_cast<int>(c)]; }

double gbPerSecond(double bytes, double timeUs) { return timeUs > 0 ? bytes / (timeUs * 1e-6) / 1e9 : 0; }

bool parseCollName(const std::string& name, Coll* c) {
  for (int i = 0; i < kNumColls; ++i) {
    if (name == kNames[i]) {
      *c = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

bool collReduces(Coll c) {
  return c == Coll::allreduce || c == Coll::reduce || c == Coll::reducescatter;
}

bool collRooted(Coll c) { return c == Coll::reduce || c == Coll::broadcast; }

size_t alltoallvCount(size_t base, int from, int to, int nranks, bool uniform) {
  if (uniform) return base;
  const size_t weight = 1 + static_cast<size_t>((from + to) % nranks);
  return base * 2 * weight / static_cast<size_t>(nranks + 1);
}

Layout makeLayout(Coll c, size_t bytes, size_t eltSize, int nranks, int rank, bool uniformCounts) {
  Layout l;
  const size_t count = bytes / eltSize;
  const size_t n = static_cast<size_t>(nranks);
  // nccl-tests' bus bandwidth factors: what each rank's link must carry relative to the algorithm bytes
  // for an optimal ring (allreduce sends and receives 2(n-1)/n of the buffer, gathers and scatters
  // (n-1)/n, rooted operations and point-to-point the buffer once).
  double busFactor = 1.0;
  switch (c) {
    case Coll::allreduce:
      l.count = l.sendElems = l.recvElems = count;
      busFactor = 2.0 * (n - 1) / n;
      break;
    case Coll::reduce:
    case Coll::broadcast:
    case Coll::sendrecv:
      l.count = l.sendElems = l.recvElems = count;
      break;
    case Coll::allgather:
      l.count = l.sendElems = alignedShare(count, eltSize, nranks);
      l.recvElems = l.count * n;
      busFactor = static_cast<double>(n - 1) / n;
      break;
    case Coll::reducescatter:
      l.count = l.recvElems = alignedShare(count, eltSize, nranks);
      l.sendElems = l.count * n;
      busFactor = static_cast<double>(n - 1) / n;
      break;
    case Coll::alltoall:
      l.count = alignedShare(count, eltSize, nranks);
      l.sendElems = l.recvElems = l.count * n;
      busFactor = static_cast<double>(n - 1) / n;
      break;
    case Coll::alltoallv: {
      l.count = alignedShare(count, eltSize, nranks);
      l.uniformCounts = uniformCounts;
      l.sendCounts.resize(n);
      l.sendDispls.resize(n);
      l.recvCounts.resize(n);
      l.recvDispls.resize(n);
      for (int p = 0; p < nranks; ++p) {
        l.sendCounts[p] = alltoallvCount(l.count, rank, p, nranks, uniformCounts);
        l.recvCounts[p] = alltoallvCount(l.count, p, rank, nranks, uniformCounts);
        l.sendDispls[p] = p == 0 ? 0 : l.sendDispls[p - 1] + l.sendCounts[p - 1];
        l.recvDispls[p] = p == 0 ? 0 : l.recvDispls[p - 1] + l.recvCounts[p - 1];
      }
      l.sendElems = l.sendDispls[n - 1] + l.sendCounts[n - 1];
      l.recvElems = l.recvDispls[n - 1] + l.recvCounts[n - 1];
      // Every rank sends and receives the same total (each row and column of the matrix holds every
      // weight once), but what a rank keeps for itself differs, so the bytes that cross between ranks
      // are averaged over ranks: with uniform counts this is exactly alltoall's (n-1)/n.
      double crossing = 0;
      for (int s = 0; s < nranks; ++s) crossing += static_cast<double>(l.sendElems - alltoallvCount(l.count, s, s, nranks, uniformCounts));
      l.sizeBytes = l.sendElems * eltSize;
      l.algBytes = static_cast<double>(l.sizeBytes);
      l.busBytes = crossing / n * eltSize;
      return l;
    }
  }
  l.sizeBytes = (l.sendElems > l.recvElems ? l.sendElems : l.recvElems) * eltSize;
  l.algBytes = static_cast<double>(l.sizeBytes);
  l.busBytes = l.algBytes * busFactor;
  return l;
}

}  // namespace alloyperf
