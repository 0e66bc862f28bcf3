// Communicator creation over any bootstrap (commCreate) and its MPI entry point, alloyCommCreateFromMPI:
// argument checks agreed by every rank, endpoint exchange, topology, the intra-node transport and the
// network channel. The assembly layer: it alone names the concrete bootstraps and transports, which
// lib/core and lib/coll reach through interfaces (docs/architecture.md, "Layers", and the data flow).
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_env.h"
#include "comm.h"
#include "device_guard.h"
#include "device_select.h"
#include "env.h"
#include "error.h"
#include "local_transport.h"
#include "launch_order.h"
#include "log.h"
#include "mpi_bootstrap.h"
#include "net_channel.h"
#include "net_setup.h"

namespace alloy {
namespace {

constexpr long long kDefaultTimeoutMs = 300000;
// Kernels wait in nanoseconds held in 64 bits; 10^12 ms (about 31 years) keeps that far from overflow.
constexpr long long kMaxTimeoutMs = 1000000000000ll;

// The sizes of alloyConfig_t that some release has shipped; a caller compiled against any of them is
// served. There is one so far.
bool knownConfigSize(size_t size) { return size == sizeof(alloyConfig_t); }

alloyResult_t checkLocalArguments(const alloyConfig_t* config, alloyComm_t* comm,
                                  alloyConfig_t* effective) {
  if (comm == nullptr) return fail(alloyInvalidArgument, "comm: expected a non-NULL alloyComm_t* to receive the communicator");
  *effective = ALLOY_CONFIG_INITIALIZER;
  if (config != nullptr) {
    if (!knownConfigSize(config->size))
      return fail(alloyInvalidArgument,
                  "config->size: %zu is not a size of alloyConfig_t this library knows (expected %zu); "
                  "initialise the structure with ALLOY_CONFIG_INITIALIZER",
                  config->size, sizeof(alloyConfig_t));
    if (config->magic != ALLOY_CONFIG_MAGIC)
      return fail(alloyInvalidArgument,
                  "config->magic: 0x%x is not ALLOY_CONFIG_MAGIC; initialise the structure with "
                  "ALLOY_CONFIG_INITIALIZER", config->magic);
    if (config->timeoutMs < 0)
      return fail(alloyInvalidArgument, "config->timeoutMs: %d is negative; expected 0 (default) or milliseconds",
                  config->timeoutMs);
    std::memcpy(effective, config, sizeof(alloyConfig_t));
  }
  return selectCudaDevice(effective->cudaDevice, &effective->cudaDevice);
}

// FNV-1a: a stable hash of plain bytes, computed alike on every rank.
uint64_t hashBytes(const void* data, size_t bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return hash;
}

alloyResult_t fillGpuIdentity(int device, EndpointBlob* blob) {
  blob->cudaDevice = device;
  if (device < 0) return alloySuccess;
  cudaDeviceProp prop;
  ALLOY_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  static_assert(sizeof(prop.uuid.bytes) == sizeof(blob->gpuUuid), "CUDA UUID size");
  std::memcpy(blob->gpuUuid, prop.uuid.bytes, sizeof(blob->gpuUuid));
  return alloySuccess;
}

// Sets up the GPU engine among the ranks of this host. A failure here leaves a working host-side
// communicator whose GPU operations report the reason; every rank agrees so that no rank launches kernels
// that wait for a peer that can't.
bool connectGpu(alloyComm* comm, std::unique_ptr<LocalTransport> prepared, alloyResult_t prepareResult,
                std::string reason) {
  alloyResult_t result = prepareResult;
  std::unique_ptr<LaunchOrder> order;
  if (result == alloySuccess) {
    std::vector<EndpointBlob> local;
    for (int r : comm->topology.localPeers) local.push_back(comm->blobs[r]);
    result = prepared->connect(local, comm->topology.localRank);
  }
  if (result == alloySuccess) result = LaunchOrder::create(&order);
  // The direct engine's wide lines need links that carry them between every pair of the host's ranks:
  // every rank says what it sees (every rank takes part, whatever its result so far).
  std::vector<uint32_t> wideLines;
  const uint32_t mine = result == alloySuccess && prepared->linksCarryWideLines() ? 1 : 0;
  const alloyResult_t exchanged = allgatherValues(*comm->bootstrap, mine, &wideLines);
  if (result == alloySuccess) result = exchanged;
  if (result != alloySuccess && reason.empty()) reason = lastError();
  result = agree(*comm->bootstrap, result, "GPU transport set-up");
  if (result == alloySuccess) {
    bool everywhere = true;
    for (int r : comm->topology.localPeers) everywhere = everywhere && wideLines[r] != 0;
    prepared->enableWideLines(everywhere);
    comm->local = std::move(prepared);
    comm->launchOrder = std::move(order);
    return true;
  }
  comm->gpuUnavailableReason = reason.empty() ? lastError() : reason;
  // Expected on a machine without a GPU; worth a warning only where a GPU is present.
  (comm->cudaDevice < 0 ? logInfo : logWarn)("rank %d: GPU operations disabled on this communicator: %s",
                                            comm->rank, comm->gpuUnavailableReason.c_str());
  clearLastError();
  return false;
}

// Connects the channel prepared before the exchange to every rank on another host. Unlike the GPU
// engine's set-up, a failure fails the creation on every rank: a peer the job cannot reach is an error
// in the job, not a reason to run without the ranks of other hosts.
alloyResult_t connectHosts(alloyComm* comm, const std::vector<uint64_t>& hostOf, NetSetup setup) {
  alloyResult_t result = alloySuccess;
  if (setup.channel) result = connectNet(setup.channel.get(), comm->blobs, hostOf, comm->rank);
  ALLOY_TRY(agree(*comm->bootstrap, result, "connections between hosts"));
  comm->netUnavailableReason = setup.unavailable;
  if (!setup.channel) return alloySuccess;
  comm->net = std::move(setup.channel);
  // Before the proxy thread takes the channel: describe() reads what that thread changes.
  logInfo("rank %d: %d of %d ranks on other hosts, reached over %s", comm->rank, comm->nranks - comm->topology.localSize,
          comm->nranks, comm->net->describe().c_str());
  comm->net->serveInBackground(true);
  return alloySuccess;
}

// Every rank's host identity, before the endpoint exchange: the GPU engine is sized for the ranks of
// this host, and the network channel for the others.
alloyResult_t gatherHosts(Bootstrap& bootstrap, uint64_t mine, std::vector<uint64_t>* hostOf) {
  return agree(bootstrap, allgatherValues(bootstrap, mine, hostOf), "the exchange of host identities");
}

void fillEngineSettings(int nranks, EndpointBlob* blob) {
  const EngineGeometry g = engineGeometry(nranks);
  blob->engineChannels = static_cast<uint32_t>(g.channels);
  blob->engineSlots = static_cast<uint32_t>(g.slots);
  blob->engineSlotBytes = g.slotBytes;
  blob->engineLowLatencyMaxBytes = g.lowLatencyMaxBytes;
  blob->engineDirectAreaBytes = g.directAreaBytes;
  blob->engineDirectBlocks = static_cast<uint32_t>(g.directBlocks);
  blob->engineDirectWideLinesBytes = g.directWideLinesBytes;
  const net::NetGeometry n = net::netGeometry();
  blob->netSlots = static_cast<uint32_t>(n.slots);
  blob->netSlotBytes = n.slotBytes;
  blob->netStagingBytes = net::netStagingBudget();
  blob->netEagerBytes = n.eagerBytes;
}

// Every rank holds every blob, so every rank reaches the same verdict without another collective step.
// Only ranks of one host share the GPU engine, so its settings are compared within each host; the
// network's rounds are cut alike by every pair of ranks, so those are compared across the job.
alloyResult_t checkEngineSettingsAgree(const std::vector<EndpointBlob>& blobs) {
  struct Setting {
    const char* variable;
    bool wholeJob;
    uint64_t (*of)(const EndpointBlob&);
  };
  static const Setting settings[] = {
      {"ALLOY_CHANNELS", false, [](const EndpointBlob& b) -> uint64_t { return b.engineChannels; }},
      {"ALLOY_SLOTS", false, [](const EndpointBlob& b) -> uint64_t { return b.engineSlots; }},
      {"ALLOY_SLOT_BYTES", false, [](const EndpointBlob& b) -> uint64_t { return b.engineSlotBytes; }},
      {"ALLOY_LL_MAX_BYTES", false, [](const EndpointBlob& b) -> uint64_t { return b.engineLowLatencyMaxBytes; }},
      {"ALLOY_DIRECT_BYTES", false, [](const EndpointBlob& b) -> uint64_t { return b.engineDirectAreaBytes; }},
      {"ALLOY_DIRECT_BLOCKS", false, [](const EndpointBlob& b) -> uint64_t { return b.engineDirectBlocks; }},
      {"ALLOY_DIRECT_LL128_MAX_BYTES", false,
       [](const EndpointBlob& b) -> uint64_t { return b.engineDirectWideLinesBytes; }},
      {"ALLOY_NET_SLOTS", true, [](const EndpointBlob& b) -> uint64_t { return b.netSlots; }},
      {"ALLOY_NET_SLOT_BYTES", true, [](const EndpointBlob& b) -> uint64_t { return b.netSlotBytes; }},
      {"ALLOY_NET_STAGING_BYTES", true, [](const EndpointBlob& b) -> uint64_t { return b.netStagingBytes; }},
      {"ALLOY_NET_EAGER_BYTES", true, [](const EndpointBlob& b) -> uint64_t { return b.netEagerBytes; }},
  };
  // The first rank of each rank's host, in one pass (a search per rank would be R^2 steps at R ranks).
  std::vector<size_t> firstOfHost(blobs.size());
  {
    std::unordered_map<uint64_t, size_t> first;
    for (size_t r = 0; r < blobs.size(); ++r) firstOfHost[r] = first.emplace(blobs[r].hostHash, r).first->second;
  }
  for (const Setting& s : settings) {
    for (size_t r = 1; r < blobs.size(); ++r) {
      const size_t first = s.wholeJob ? 0 : firstOfHost[r];
      if (s.of(blobs[r]) != s.of(blobs[first]))
        return fail(alloyInvalidUsage,
                    "%s differs between ranks: rank %zu uses %llu, rank %zu uses %llu; variables that shape the "
                    "engines must be equal on every rank (docs/environment.md)",
                    s.variable, first, static_cast<unsigned long long>(s.of(blobs[first])), r,
                    static_cast<unsigned long long>(s.of(blobs[r])));
    }
  }
  return alloySuccess;
}

// Several ranks of one communicator may live in one process (ncclCommInitAll, ranks created in one group
// or on threads), each on a GPU of its own: the GPU engine maps a peer of the same process directly
// (IpcTransport::connect). Two ranks of one process on one GPU are refused, as NCCL refuses them, on every
// rank alike (every rank holds every blob). Equal host identity and pid means one process; the host
// identity keeps two machines' equal pids apart.
alloyResult_t checkOneGpuPerRankOfAProcess(const std::vector<EndpointBlob>& blobs) {
  std::map<std::tuple<uint64_t, int, std::string>, size_t> firstOnGpu;
  for (size_t r = 0; r < blobs.size(); ++r) {
    if (blobs[r].cudaDevice < 0) continue;  // host-only: no GPU to share
    const std::string gpu(reinterpret_cast<const char*>(blobs[r].gpuUuid), sizeof(blobs[r].gpuUuid));
    const auto [at, inserted] = firstOnGpu.emplace(std::make_tuple(blobs[r].hostHash, blobs[r].pid, gpu), r);
    // The host name came from a peer: at most its field, terminated or not.
    const int nameBytes = static_cast<int>(strnlen(blobs[r].hostName, kHostNameBytes));
    if (!inserted)
      return fail(alloyInvalidUsage,
                  "ranks %zu and %zu of the communicator are in one process (pid %d on %.*s) and on one GPU (device "
                  "%d); each rank of a process needs a GPU of its own", at->second, r, blobs[r].pid, nameBytes,
                  blobs[r].hostName, blobs[r].cudaDevice);
  }
  return alloySuccess;
}

// The pool of the operations' scratch (lib/core/scratch_pool.h), made now: not while a stream is captured.
alloyResult_t makeScratchPool(alloyComm* comm) {
  const cudaError_t err = comm->scratchPool.create(comm->cudaDevice);
  if (err == cudaSuccess) return alloySuccess;
  cudaGetLastError();
  return fail(alloyCudaError, "cannot make the communicator's scratch memory pool on device %d (cudaMemPoolCreate: %s)",
              comm->cudaDevice, cudaGetErrorString(err));
}

// Whether another rank's blob names this rank's GPU (by UUID; host-only ranks name none).
bool sharesGpuWithAnotherRank(const std::vector<EndpointBlob>& blobs, int rank) {
  if (blobs[rank].cudaDevice < 0) return false;
  for (size_t r = 0; r < blobs.size(); ++r) {
    if (static_cast<int>(r) != rank && blobs[r].cudaDevice >= 0 &&
        std::memcmp(blobs[r].gpuUuid, blobs[rank].gpuUuid, sizeof(blobs[r].gpuUuid)) == 0)
      return true;
  }
  return false;
}

alloyResult_t build(alloyComm* comm, const alloyConfig_t& config) {
  comm->cudaDevice = config.cudaDevice;
  comm->timeoutMs = config.timeoutMs > 0 ? config.timeoutMs : envInt("ALLOY_TIMEOUT_MS", kDefaultTimeoutMs, 1, kMaxTimeoutMs);

  EndpointBlob mine;
  fillHostIdentity(&mine);
  std::vector<uint64_t> hostOf;
  ALLOY_TRY(gatherHosts(*comm->bootstrap, mine.hostHash, &hostOf));
  comm->topology = computeLocalTopology(hostOf, comm->rank);
  fillEngineSettings(comm->topology.localSize, &mine);
  std::unique_ptr<LocalTransport> transport;
  alloyResult_t prepared = alloyInvalidUsage;
  std::string unpreparedReason = "this rank has no CUDA device (host-only communicator)";
  NetSetup netSetup;
  if (comm->cudaDevice >= 0) {
    DeviceGuard guard(comm->cudaDevice);
    alloyResult_t identified = fillGpuIdentity(comm->cudaDevice, &mine);
    if (identified == alloySuccess) identified = makeScratchPool(comm);
    ALLOY_TRY(agree(*comm->bootstrap, identified, "GPU identification"));
    prepared = prepareLocalTransport(comm->cudaDevice, comm->topology.localSize, comm->timeoutMs, &mine, &transport);
    unpreparedReason = prepared == alloySuccess ? "" : lastError();
    if (comm->topology.spansHosts()) netSetup = prepareNet(comm->rank, hostOf, comm->cudaDevice, comm->timeoutMs, &mine);
  } else {
    ALLOY_TRY(agree(*comm->bootstrap, alloySuccess, "GPU identification"));
  }
  if (comm->topology.spansHosts()) ALLOY_TRY(agree(*comm->bootstrap, netSetup.result, "the transport between hosts"));

  std::vector<uint8_t> all;
  ALLOY_TRY(comm->bootstrap->exchangeEndpoints(&mine, sizeof(mine), &all, &comm->bootstrapPath));
  comm->blobs.resize(comm->nranks);
  std::memcpy(comm->blobs.data(), all.data(), all.size());
  for (int r = 0; r < comm->nranks; ++r) {
    if (comm->blobs[r].magic != kEndpointMagic || comm->blobs[r].version != kEndpointVersion)
      return fail(alloyRemoteError, "rank %d sent an endpoint blob of another Alloy version", r);
  }
  ALLOY_TRY(checkOneGpuPerRankOfAProcess(comm->blobs));
  ALLOY_TRY(checkEngineSettingsAgree(comm->blobs));
  comm->orderKey = hashBytes(&comm->blobs[0], sizeof(EndpointBlob));
  comm->gpuShared = sharesGpuWithAnotherRank(comm->blobs, comm->rank);
  logInfo("rank %d/%d: endpoints exchanged over %s; local rank %d of %d; CUDA device %d", comm->rank,
          comm->nranks, bootstrapPathName(comm->bootstrapPath), comm->topology.localRank,
          comm->topology.localSize, comm->cudaDevice);

  DeviceGuard guard(comm->cudaDevice);
  if (!connectGpu(comm, std::move(transport), prepared, unpreparedReason) || !comm->topology.spansHosts())
    return alloySuccess;
  return connectHosts(comm, hostOf, std::move(netSetup));
}

}  // namespace

alloyResult_t commCreate(std::unique_ptr<Bootstrap> bootstrap, const alloyConfig_t* config, alloyComm_t* comm) {
  refreshCallEnvironment();  // the per-call variables as they are now (call_env.h)
  auto created = std::make_unique<alloyComm>();
  created->rank = bootstrap->rank();
  created->nranks = bootstrap->nranks();
  created->bootstrap = std::move(bootstrap);
  alloyConfig_t effective;
  alloyResult_t result = checkLocalArguments(config, comm, &effective);
  result = agree(*created->bootstrap, result, "argument checks");
  if (result == alloySuccess) result = build(created.get(), effective);
  if (result != alloySuccess) return result;  // ~alloyComm frees whatever was built
  *comm = created.release();
  return alloySuccess;
}

}  // namespace alloy

namespace {

// MPI is running and mpiComm is an intra-communicator: what every creation from MPI needs.
alloyResult_t checkMpiCommunicator(MPI_Comm mpiComm, const char* function) {
  using namespace alloy;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return fail(alloyInvalidUsage, "MPI is %s: %s needs MPI between MPI_Init and MPI_Finalize",
                finalized ? "already finalized" : "not initialised", function);
  if (mpiComm == MPI_COMM_NULL)
    return fail(alloyInvalidArgument, "mpiComm: MPI_COMM_NULL; expected an intra-communicator");
  int inter = 0;
  if (MPI_Comm_test_inter(mpiComm, &inter) != MPI_SUCCESS)
    return fail(alloyInvalidArgument, "mpiComm: not a valid MPI communicator");
  if (inter)
    return fail(alloyInvalidArgument, "mpiComm: an inter-communicator; expected an intra-communicator");
  return alloySuccess;
}

}  // namespace

extern "C" ALLOY_API alloyResult_t alloyCommCreateFromMPI(MPI_Comm mpiComm, const alloyConfig_t* config,
                                                          alloyComm_t* comm) {
  using namespace alloy;
  clearLastError();
  ALLOY_TRY(checkMpiCommunicator(mpiComm, "alloyCommCreateFromMPI"));
  std::unique_ptr<Bootstrap> bootstrap;
  ALLOY_TRY(MpiBootstrap::create(mpiComm, &bootstrap));
  return commCreate(std::move(bootstrap), config, comm);
}

// Every MPI process contributes its count ranks, numbered by MPI rank, then in order: the unique id of MPI
// rank 0's root travels over the MPI communicator, and every process creates its ranks with it. The counts
// and rank 0's id travel with a verdict, so that a process whose arguments or root failed makes every
// process fail alike instead of leaving them waiting for its ranks.
extern "C" ALLOY_API alloyResult_t alloyCommCreateFromMPIRanks(MPI_Comm mpiComm, int count, const int devices[],
                                                               const alloyConfig_t* config, alloyComm_t comms[]) {
  using namespace alloy;
  clearLastError();
  const char* fn = "alloyCommCreateFromMPIRanks";
  ALLOY_TRY(checkMpiCommunicator(mpiComm, fn));
  alloyResult_t mine = alloySuccess;
  if (count < 1) mine = fail(alloyInvalidArgument, "%s: count is %d; expected at least 1", fn, count);
  else if (comms == nullptr) mine = fail(alloyInvalidArgument, "%s: comms is NULL; expected room for count communicators", fn);
  int rank = 0, size = 0;
  PMPI_Comm_rank(mpiComm, &rank);
  PMPI_Comm_size(mpiComm, &size);
  const int myCount = mine == alloySuccess ? count : 0;  // 0: this process failed its arguments
  std::vector<int> counts(size, 0);
  if (PMPI_Allgather(&myCount, 1, MPI_INT, counts.data(), 1, MPI_INT, mpiComm) != MPI_SUCCESS)
    return fail(alloyInternalError, "%s: MPI_Allgather of the ranks' counts failed", fn);
  for (int r = 0; r < size && mine == alloySuccess; ++r)
    if (counts[r] == 0) mine = fail(alloyInvalidArgument, "%s: MPI rank %d passed bad arguments (see its error)", fn, r);
  if (mine != alloySuccess) return mine;
  struct {
    int32_t result;
    alloyUniqueId id;
  } root{};
  if (rank == 0) {
    root.result = alloyGetUniqueId(&root.id);
    if (root.result != alloySuccess) logWarn("%s: %s", fn, lastError());
  }
  if (PMPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, mpiComm) != MPI_SUCCESS)
    return fail(alloyInternalError, "%s: MPI_Bcast of the unique id failed", fn);
  if (root.result != alloySuccess)
    return fail(static_cast<alloyResult_t>(root.result), "%s: MPI rank 0 could not start the bootstrap's root", fn);
  int first = 0, total = 0;
  for (int r = 0; r < size; ++r) {
    if (r < rank) first += counts[r];
    total += counts[r];
  }
  std::vector<int> ranks(count);
  for (int i = 0; i < count; ++i) ranks[i] = first + i;
  return alloyCommInitRanks(&root.id, total, count, ranks.data(), devices, config, comms);
}

