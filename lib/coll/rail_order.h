// Rail order: the rank-sized blocks of a buffer laid out rail by rail (rail 0's ranks in rail order,
// then rail 1's, ...: LocalTopology::rails), so that what one local index handles along its rail lies in
// one range. The hierarchical reduce-scatter packs its input into it, the hierarchical allgather gathers
// in it and unpacks into rank order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "topology.h"

namespace alloy {

enum class RailCopy {
  kIntoRailOrder,  // src in rank order (rank p's block at p * blockBytes), dst in rail order
  kIntoRankOrder,  // the reverse
};

// Copies every rank's block of blockBytes between rank order and rail order, on the stream's copy
// engine (no SM; capture records the copies as graph nodes). A rail whose ranks are evenly spaced (hosts
// of consecutive ranks, or interleaved ones) is one strided copy; another takes a copy per block. The
// caller has made the device current.
alloyResult_t copyByRail(const LocalTopology& t, RailCopy direction, const char* src, char* dst, size_t blockBytes,
                         cudaStream_t stream, const char* function);

// Whether rail order is rank order already (rail q holds ranks q * hosts ... q * hosts + hosts - 1, as when
// the ranks of a rail are consecutive), so that no copy is needed.
bool railOrderIsRankOrder(const LocalTopology& t);

}  // namespace alloy
