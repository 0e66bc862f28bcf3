// Turns one row of the sweep into calls on a backend. The only place that knows how each collective
// maps onto the library API, so Alloy and NCCL run exactly the same requests.
#ifndef ALLOY_PERF_DISPATCH_H_
#define ALLOY_PERF_DISPATCH_H_

#include <cuda_runtime.h>

#include "alloy.h"
#include "backend.h"
#include "collectives.h"

namespace alloyperf {

struct CollCall {
  Coll coll;
  const void* send;
  void* recv;
  const Layout* layout;
  alloyDataType_t type;
  alloyRedOp_t redop;  // reducing collectives only
  int root;            // rooted collectives only
  int rank;
  int nranks;
};

// Enqueues the call on stream. Point-to-point patterns (sendrecv; all-to-all on a backend without one)
// are one group, which is always closed again even when a call inside it fails.
Status launch(Backend& backend, const CollCall& call, cudaStream_t stream);

}  // namespace alloyperf

#endif  // ALLOY_PERF_DISPATCH_H_
