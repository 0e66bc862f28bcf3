// Host reference of check mode: what each collective must leave in this rank's receive buffer, computed
// from CheckData, and the count of elements that differ from it.
#ifndef ALLOY_PERF_VERIFY_H_
#define ALLOY_PERF_VERIFY_H_

#include <cstddef>

#include "check_data.h"
#include "dispatch.h"

namespace alloyperf {

// Bytes past the end of each receive buffer that are poisoned too and must come back untouched: a write
// past the end counts as wrong elements.
constexpr size_t kGuardBytes = 256;

// Number of wrong elements in `received`, this rank's receive buffer copied to the host (recvElems
// elements followed by kGuardBytes guard bytes). Integers, data movement, and float reductions whose
// check data guarantee an exact answer compare exactly; other float reductions (averages over a
// number of ranks that is not a power of two, sums over more ranks than the type can add exactly)
// within the type's epsilon times (nranks + 1) times the magnitude of what was reduced. Ranks whose
// receive buffer holds nothing defined (reduce off the root) return 0.
size_t countWrong(const CheckData& data, const CollCall& call, const unsigned char* received);

}  // namespace alloyperf

#endif  // ALLOY_PERF_VERIFY_H_
