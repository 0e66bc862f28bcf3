// The interface through which the tool drives a collective library: Alloy, or NCCL loaded at run time.
// Each backend maps these primitives one to one onto its library's calls; dispatch.cc turns a row of the
// sweep into primitive calls, so the two backends share every other line of the tool.
#ifndef ALLOY_PERF_BACKEND_H_
#define ALLOY_PERF_BACKEND_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "alloy.h"

namespace alloyperf {

enum class Status {
  ok,
  notSupported,  // the library cannot serve this request; the row is reported and the sweep goes on
  failed,        // anything else: the tool stops (see lastError)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  virtual Status allReduce(const void* send, void* recv, size_t count, alloyDataType_t type,
                           alloyRedOp_t op, cudaStream_t stream) = 0;
  virtual Status reduce(const void* send, void* recv, size_t count, alloyDataType_t type,
                        alloyRedOp_t op, int root, cudaStream_t stream) = 0;
  virtual Status broadcast(const void* send, void* recv, size_t count, alloyDataType_t type, int root,
                           cudaStream_t stream) = 0;
  virtual Status allGather(const void* send, void* recv, size_t sendCount, alloyDataType_t type,
                           cudaStream_t stream) = 0;
  virtual Status reduceScatter(const void* send, void* recv, size_t recvCount, alloyDataType_t type,
                               alloyRedOp_t op, cudaStream_t stream) = 0;
  virtual Status send(const void* buf, size_t count, alloyDataType_t type, int peer, cudaStream_t stream) = 0;
  virtual Status recv(void* buf, size_t count, alloyDataType_t type, int peer, cudaStream_t stream) = 0;
  virtual Status groupStart() = 0;
  virtual Status groupEnd() = 0;

  // Native all-to-all. A backend without one (NCCL) returns false from hasAlltoall and dispatch
  // expresses all-to-all as grouped send/receive pairs instead.
  virtual bool hasAlltoall() const { return false; }
  virtual Status alltoAll(const void*, void*, size_t, alloyDataType_t, cudaStream_t) {
    return Status::notSupported;
  }
  virtual Status alltoAllv(const void*, const size_t*, const size_t*, void*, const size_t*, const size_t*,
                           alloyDataType_t, cudaStream_t) {
    return Status::notSupported;
  }

  // An error that kernels or peers reported after the calls returned (checked after synchronising).
  virtual Status asyncError() { return Status::ok; }

  // What the last call that did not return ok said, for the user.
  virtual std::string lastError() const = 0;
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_BACKEND_H_
