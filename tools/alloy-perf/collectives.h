// The collectives alloy-perf measures, and what nccl-tests defines for each of them: how a swept size
// becomes element counts, which bytes the "size" column shows, and the algorithm and bus byte counts that
// algbw and busbw divide by the time. Also the all-to-all-v count matrix.
#ifndef ALLOY_PERF_COLLECTIVES_H_
#define ALLOY_PERF_COLLECTIVES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace alloyperf {

enum class Coll { allreduce, reduce, broadcast, allgather, reducescatter, alltoall, alltoallv, sendrecv };
constexpr int kNumColls = 8;

const char* collName(Coll c);
bool parseCollName(const std::string& name, Coll* c);
bool collReduces(Coll c);  // takes a reduction operator
bool collRooted(Coll c);   // takes a root

// What one row moves on this rank. Counts and offsets are in elements.
struct Layout {
  size_t count = 0;      // the count argument of the call (nccl-tests' "count" column)
  size_t sendElems = 0;  // elements of the send buffer the call reads
  size_t recvElems = 0;  // elements of the receive buffer the call writes
  size_t sizeBytes = 0;  // the "size" column: max(send, receive) bytes, as nccl-tests prints it
  double algBytes = 0;   // algbw = algBytes / time
  double busBytes = 0;   // busbw = busBytes / time
  // alltoallv only: this rank's per-peer counts and displacements, as alloyAlltoAllv takes them, and
  // whether they are the uniform ones (--uniform) or the matrix's.
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  bool uniformCounts = false;
};

// algbw and busbw: bytes (a Layout's algBytes or busBytes) over timeUs microseconds, in GB/s (10^9
// bytes); 0 where no time was measured.
double gbPerSecond(double bytes, double timeUs);

// Layout of a row of `bytes` swept bytes for elements of eltSize bytes on nranks ranks; alltoallv's
// counts are alltoall's (`base` to every rank) where uniformCounts, else the matrix's.
Layout makeLayout(Coll c, size_t bytes, size_t eltSize, int nranks, int rank, bool uniformCounts);

// Elements rank `from` sends to rank `to` in alltoallv when the uniform all-to-all would send `base`
// to each peer: `base` where uniform, else the matrix's base * 2 * (1 + (from + to) mod n) / (n + 1),
// rounded down. See docs/benchmarks.md.
size_t alltoallvCount(size_t base, int from, int to, int nranks, bool uniform);

}  // namespace alloyperf

#endif  // ALLOY_PERF_COLLECTIVES_H_
