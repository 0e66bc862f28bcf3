// One side of a call with a count and a displacement per rank (alltoallv, and allgatherv in the layer of
// standard calls), turned into the bytes the GPU engine moves: a count and a displacement in bytes per
// rank, relative to the lowest byte used, since the engine takes unsigned displacements and MPI allows
// negative ones.
#pragma once

#include <algorithm>
#include <climits>
#include <vector>

#include "arguments.h"

namespace alloy_mpix {

struct ByteLayout {
  Region region;
  std::vector<size_t> counts, displs;
};

// countsName and displsName name the arrays in messages. False, with the problem recorded in r, where
// an array is NULL, a count is negative or a displacement overflows.
template <typename Count, typename Displ>
bool byteLayout(Request* r, const char* function, const char* countsName, const char* displsName, const void* buffer,
                const Count counts[], const Displ displs[], const TypeInfo& type, int nranks, ByteLayout* out) {
  if (counts == nullptr || displs == nullptr) {
    r->reject(problem(MPI_ERR_ARG, "%s: %s is NULL; expected an array of %d entries", function,
                      counts == nullptr ? countsName : displsName, nranks));
    return false;
  }
  // Two passes: the first checks the values and finds the span, the second places each rank's bytes in it.
  // Each computes the displacement's product, so that the layout allocates its two arrays and nothing else.
  out->counts.assign(nranks, 0);
  long long lowest = LLONG_MAX, highest = 0;
  for (int p = 0; p < nranks; ++p) {
    long long offset = 0;
    if (!checkCountAt(r, function, countsName, p, counts[p], type.size, &out->counts[p])) return false;
    if (__builtin_mul_overflow(static_cast<long long>(displs[p]), static_cast<long long>(type.extent), &offset) ||
        offset > LLONG_MAX - static_cast<long long>(out->counts[p])) {
      r->reject(problem(MPI_ERR_ARG, "%s: %s[%d]=%lld overflows", function, displsName, p,
                        static_cast<long long>(displs[p])));
      return false;
    }
    if (out->counts[p] == 0) continue;
    lowest = std::min(lowest, offset);
    highest = std::max(highest, offset + static_cast<long long>(out->counts[p]));
  }
  out->displs.assign(nranks, 0);
  if (lowest == LLONG_MAX) return true;  // this side moves nothing
  for (int p = 0; p < nranks; ++p)
    if (out->counts[p] > 0)  // the product did not overflow in the first pass
      out->displs[p] = static_cast<size_t>(static_cast<long long>(displs[p]) * type.extent - lowest);
  out->region = Region{static_cast<const char*>(buffer) + lowest, static_cast<size_t>(highest - lowest)};
  return true;
}

}  // namespace alloy_mpix
