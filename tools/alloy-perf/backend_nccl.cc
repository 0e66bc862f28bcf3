#include "backend_nccl.h"

#include <cstdlib>
#include <cstring>

#include "fatal.h"
#include "nccl_api.h"

namespace alloyperf {

namespace {

class NcclBackend : public Backend {
 public:
  NcclBackend(const NcclApi& api, ncclComm_t comm) : api_(api), comm_(comm) {}
  ~NcclBackend() override {
    const ncclResult_t r = api_.commDestroy(comm_);
    if (r != kNcclSuccess) fprintf(stderr, "alloy-perf: ncclCommDestroy: %s\n", api_.getErrorString(r));
  }

  const char* name() const override { return "nccl"; }

  Status allReduce(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op,
                   cudaStream_t st) override {
    return wrap(api_.allReduce(s, r, n, t, op, comm_, st));
  }
  Status reduce(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op, int root,
                cudaStream_t st) override {
    return wrap(api_.reduce(s, r, n, t, op, root, comm_, st));
  }
  Status broadcast(const void* s, void* r, size_t n, alloyDataType_t t, int root, cudaStream_t st) override {
    return wrap(api_.broadcast(s, r, n, t, root, comm_, st));
  }
  Status allGather(const void* s, void* r, size_t n, alloyDataType_t t, cudaStream_t st) override {
    return wrap(api_.allGather(s, r, n, t, comm_, st));
  }
  Status reduceScatter(const void* s, void* r, size_t n, alloyDataType_t t, alloyRedOp_t op,
                       cudaStream_t st) override {
    return wrap(api_.reduceScatter(s, r, n, t, op, comm_, st));
  }
  Status send(const void* b, size_t n, alloyDataType_t t, int peer, cudaStream_t st) override {
    return wrap(api_.send(b, n, t, peer, comm_, st));
  }
  Status recv(void* b, size_t n, alloyDataType_t t, int peer, cudaStream_t st) override {
    return wrap(api_.recv(b, n, t, peer, comm_, st));
  }
  Status groupStart() override { return wrap(api_.groupStart()); }
  Status groupEnd() override { return wrap(api_.groupEnd()); }

  std::string lastError() const override { return lastError_; }

 private:
  // An argument NCCL rejects (fp8 on an NCCL older than 2.24, say) is a request this NCCL cannot serve:
  // the row shows NCCL's message instead of numbers and the sweep goes on, as it does for Alloy.
  Status wrap(ncclResult_t r) {
    if (r == kNcclSuccess) return Status::ok;
    lastError_ = std::string("NCCL: ") + api_.getErrorString(r);
    return r == kNcclInvalidArgument || r == kNcclInvalidUsage ? Status::notSupported : Status::failed;
  }

  NcclApi api_;
  ncclComm_t comm_;
  std::string lastError_;
};

// NVLink multicast (NVLS) can take down GPUs shared with others on the machines this runs on, so it is
// never left to NCCL's default: unset means 0, and any other value is overridden with a warning.
void disableNvls(int rank) {
  const char* v = getenv("NCCL_NVLS_ENABLE");
  if (v && strcmp(v, "0") != 0 && rank == 0)
    fprintf(stderr, "alloy-perf: NCCL_NVLS_ENABLE=%s overridden to 0: NVLink multicast stays off\n", v);
  if (!v || strcmp(v, "0") != 0) setenv("NCCL_NVLS_ENABLE", "0", 1);
}

}  // namespace

std::unique_ptr<Backend> createNcclBackend(MPI_Comm comm, std::string* why, std::string* description,
                                           int* version) {
  int rank, nranks;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &nranks));

  NcclApi api{};
  int loaded = loadNccl(&api, why) ? 1 : 0, loadedEverywhere = 0;
  // A rank that could not load NCCL must not leave the others waiting in ncclCommInitRank.
  MPI_CHECK(MPI_Allreduce(&loaded, &loadedEverywhere, 1, MPI_INT, MPI_MIN, comm));
  if (!loadedEverywhere) {
    if (loaded) *why = "NCCL could not be loaded on every rank";
    return nullptr;
  }

  disableNvls(rank);
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  if (rank == 0) {
    const ncclResult_t r = api.getUniqueId(&id);
    if (r != kNcclSuccess) fatal("ncclGetUniqueId: %s", api.getErrorString(r));
  }
  MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
  ncclComm_t ncclComm = nullptr;
  const ncclResult_t r = api.commInitRank(&ncclComm, nranks, id, rank);
  if (r != kNcclSuccess) fatal("ncclCommInitRank: %s", api.getErrorString(r));

  *version = 0;
  if (api.getVersion) api.getVersion(version);
  *description = api.path;
  if (*version) {
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    *description += " (NCCL " + std::to_string(*version / 10000) + "." + std::to_string(*version / 100 % 100) +
                    "." + std::to_string(*version % 100) + ")";
  }
  return std::unique_ptr<Backend>(new NcclBackend(api, ncclComm));
}

}  // namespace alloyperf
