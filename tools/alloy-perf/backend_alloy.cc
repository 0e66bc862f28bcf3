#include "backend_alloy.h"

#include <algorithm>

#include "datatypes.h"
#include "fatal.h"

namespace alloyperf {

namespace {

class AlloyBackend : public Backend {
 public:
  AlloyBackend(alloyComm_t comm, bool relay) : comm_(comm), relay_(relay) {}
  ~AlloyBackend() override {
    if (relayBuffer_ != nullptr) cudaFree(relayBuffer_);
    // Destroy is collective; every rank reaches here on the normal path. A failure to tear down after
    // the measurements are complete is reported but does not change the results.
    const alloyResult_t r = alloyCommDestroy(comm_);
    if (r != alloySuccess)
      fprintf(stderr, "alloy-perf: alloyCommDestroy: %s: %s\n", alloyGetErrorString(r), alloyGetLastError(comm_));
  }

  const char* name() const override { return "alloy"; }

  Status allReduce(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op,
                   cudaStream_t st) override {
    return wrap(alloyAllReduce(s, r, n, t, op, comm_, st));
  }
  Status reduce(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op, int root,
                cudaStream_t st) override {
    return wrap(alloyReduce(s, r, n, t, op, root, comm_, st));
  }
  Status broadcast(const void* s, void* r, size_t n, alloyDataType_t t, int root, cudaStream_t st) override {
    return wrap(alloyBroadcast(s, r, n, t, root, comm_, st));
  }
  Status allGather(const void* s, void* r, size_t n, alloyDataType_t t, cudaStream_t st) override {
    return wrap(alloyAllGather(s, r, n, t, comm_, st));
  }
  Status reduceScatter(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op,
                       cudaStream_t st) override {
    return wrap(alloyReduceScatter(s, r, n, t, op, comm_, st));
  }
  Status send(const void* b, size_t n, alloyDataType_t t, int peer, cudaStream_t st) override {
    return wrap(alloySend(b, n, t, peer, comm_, st));
  }
  Status recv(void* b, size_t n, alloyDataType_t t, int peer, cudaStream_t st) override {
    return wrap(alloyRecv(b, n, t, peer, comm_, st));
  }
  Status groupStart() override { return wrap(alloyGroupStart()); }
  Status groupEnd() override { return wrap(alloyGroupEnd()); }

  bool hasAlltoall() const override { return true; }
  Status alltoAll(const void* s, void* r, size_t n, alloyDataType_t t, cudaStream_t st) override {
    return wrap(alloyAlltoAll(s, r, n, t, comm_, st));
  }
  Status alltoAllv(const void* s, const size_t* sc, const size_t* sd, void* r, const size_t* rc,
                   const size_t* rd, alloyDataType_t t, cudaStream_t st) override {
    // Without --relay no relay buffer: NULL always works, and the tool measures the library's default path.
    void* relay = nullptr;
    if (relay_) {
      size_t extent = 0;
      int nranks = 0;
      const alloyResult_t counted = alloyCommCount(comm_, &nranks);
      if (counted != alloySuccess) return wrap(counted);
      for (int p = 0; p < nranks; ++p) extent = std::max(extent, (sd[p] + sc[p]) * typeInfo(t).size);
      // Grown during the warm-up iterations, outside the timed ones.
      if (extent > relayBytes_) {
        if (relayBuffer_ != nullptr) cudaFree(relayBuffer_);
        relayBuffer_ = nullptr;
        relayBytes_ = 0;
        if (cudaMalloc(&relayBuffer_, extent) != cudaSuccess) {
          lastError_ = "cudaMalloc of the relay buffer failed";
          return Status::failed;
        }
        relayBytes_ = extent;
      }
      relay = relayBuffer_;
    }
    return wrap(alloyAlltoAllv(s, sc, sd, r, rc, rd, relay, t, comm_, st));
  }

  Status asyncError() override {
    alloyResult_t async = alloySuccess;
    const Status s = wrap(alloyCommGetAsyncError(comm_, &async));
    return s != Status::ok ? s : wrap(async);
  }

  std::string lastError() const override { return lastError_; }

 private:
  Status wrap(alloyResult_t r) {
    if (r == alloySuccess) return Status::ok;
    lastError_ = std::string(alloyGetErrorString(r)) + ": " + alloyGetLastError(comm_);
    return r == alloyNotSupported ? Status::notSupported : Status::failed;
  }

  alloyComm_t comm_;
  bool relay_;
  void* relayBuffer_ = nullptr;
  size_t relayBytes_ = 0;
  std::string lastError_;
};

}  // namespace

std::unique_ptr<Backend> createAlloyBackend(MPI_Comm comm, int device, bool relay, std::string* why) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.cudaDevice = device;
  alloyComm_t alloyComm = nullptr;
  const alloyResult_t r = alloyCommCreateFromMPI(comm, &config, &alloyComm);
  if (r == alloyNotSupported) {
    *why = std::string("alloyCommCreateFromMPI: ") + alloyGetLastError(nullptr);
    return nullptr;
  }
  if (r != alloySuccess)
    fatal("alloyCommCreateFromMPI: %s: %s", alloyGetErrorString(r), alloyGetLastError(nullptr));
  return std::unique_ptr<Backend>(new AlloyBackend(alloyComm, relay));
}

}  // namespace alloyperf
