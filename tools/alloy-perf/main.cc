// alloy-perf: nccl-tests-style bandwidth and latency sweep of Alloy's collectives, optionally checked
// against a host reference and compared with NCCL on the same buffers. One MPI rank per GPU.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "alloy.h"
#include "backend_alloy.h"
#include "backend_nccl.h"
#include "compute_load.h"
#include "datatypes.h"
#include "fatal.h"
#include "measure.h"
#include "options.h"
#include "results.h"
#include "sweep.h"

using namespace alloyperf;

namespace {

// Rank r on a node uses device (local rank) % (visible devices): with one node this is nccl-tests'
// rank % deviceCount, and across nodes each node's ranks spread over that node's GPUs.
int selectDevice(MPI_Comm comm) {
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int localRank;
  MPI_CHECK(MPI_Comm_rank(node, &localRank));
  MPI_CHECK(MPI_Comm_free(&node));
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    fatal("no CUDA device (%s)", err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
  const int device = localRank % count;
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

std::vector<DeviceInfo> gatherDevices(MPI_Comm comm, int device) {
  struct Packed {
    char host[64];
    char name[sizeof(cudaDeviceProp::name)];
    char pci[32];
    int device;
  } mine{};
  gethostname(mine.host, sizeof mine.host - 1);
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  snprintf(mine.name, sizeof mine.name, "%s", prop.name);
  CUDA_CHECK(cudaDeviceGetPCIBusId(mine.pci, sizeof mine.pci, device));
  mine.device = device;
  int rank, nranks;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &nranks));
  std::vector<Packed> all(nranks);
  MPI_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, comm));
  std::vector<DeviceInfo> out;
  if (rank == 0)
    for (int r = 0; r < nranks; ++r) out.push_back({r, all[r].host, all[r].device, all[r].name, all[r].pci});
  return out;
}

// Largest buffer extent any row of the sweep needs, so that buffers are allocated once.
size_t bufferBytes(const Options& opts, int nranks) {
  size_t most = 0;
  for (Coll c : opts.colls)
    for (alloyDataType_t t : opts.types)
      for (size_t bytes : sweepSizes(opts)) {
        const size_t elt = typeInfo(t).size;
        const Layout l = makeLayout(c, bytes, elt, nranks, 0, opts.uniform);
        most = std::max({most, l.sendElems * elt, l.recvElems * elt});
      }
  return most;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  const MPI_Comm comm = MPI_COMM_WORLD;
  int rank, nranks;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &nranks));
  setMessageRank(rank);

  Options opts;
  int exitCode = 0;
  if (!parseOptions(argc, argv, rank != 0, &opts, &exitCode)) {
    MPI_Finalize();
    return exitCode;
  }
  if (opts.root >= nranks) {
    if (rank == 0) fprintf(stderr, "alloy-perf: root %d is not a rank (%d ranks)\n", opts.root, nranks);
    MPI_Finalize();
    return 2;
  }

  const int device = selectDevice(comm);
  RunInfo info;
  info.nranks = nranks;
  info.devices = gatherDevices(comm, device);
  if (alloyGetVersion(&info.alloyVersion) != alloySuccess) info.alloyVersion = -1;
  long long totalWrong = 0;
  {
    // Alloy first: if it cannot make a communicator here (alloyNotSupported), every row says so, and
    // NCCL's numbers are still worth having. The answer must be the same everywhere.
    std::unique_ptr<Backend> alloy = createAlloyBackend(comm, device, opts.relay, &info.alloyUnavailable);
    int have = alloy != nullptr, haveAll = 0, haveAny = 0;
    MPI_CHECK(MPI_Allreduce(&have, &haveAll, 1, MPI_INT, MPI_MIN, comm));
    MPI_CHECK(MPI_Allreduce(&have, &haveAny, 1, MPI_INT, MPI_MAX, comm));
    if (haveAll != haveAny) fatal("alloyCommCreateFromMPI succeeded on some ranks only");

    std::unique_ptr<Backend> nccl;
    info.ncclRequested = opts.compareNccl;
    if (opts.compareNccl) {
      std::string why, description;
      nccl = createNcclBackend(comm, &why, &description, &info.ncclVersion);
      info.ncclLoaded = nccl != nullptr;
      info.ncclDescription = nccl ? description : why;
    }

    // Calibrated after both communicators exist, on every rank at once, as the rows will run it.
    std::unique_ptr<ComputeLoad> load;
    if (opts.overlapMs > 0) {
      load.reset(new ComputeLoad(opts.overlapMs, opts.overlapKernels, comm));
      info.load = load->shape();
    }
    Runner runner(opts, comm, bufferBytes(opts, nranks));
    totalWrong = runSweep(opts, info, alloy.get(), nccl.get(), load.get(), runner, comm);
  }  // runner's buffers, the load, then the communicators (collective destroys) go before MPI does
  MPI_CHECK(MPI_Finalize());
  // Wrong results are not an error of the tool, but a script running it must be able to see them.
  return totalWrong > 0 ? 3 : 0;
}
