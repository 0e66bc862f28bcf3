// The communicator object behind alloyComm_t.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "bootstrap.h"
#include "device_comm.h"
#include "endpoint.h"
#include "scratch_pool.h"
#include "topology.h"

namespace alloy {
class LocalTransport;
class LaunchOrder;
class RelayBoard;
class RemoteChannel;
// Owned by the communicator, made and freed by lib/coll, which alone knows the type: the deleter comes with
// the pointer, so lib/core needs no lib/coll header to free it.
using RelayBoardPtr = std::unique_ptr<RelayBoard, void (*)(RelayBoard*)>;
}

struct alloyComm {
  // How the ranks reach each other outside the GPU engine (creation, destroy's barrier); declared first
  // so that it is freed last.
  std::unique_ptr<alloy::Bootstrap> bootstrap;
  int rank = 0;
  int nranks = 0;
  int cudaDevice = -1;               // -1: host-only communicator (no CUDA device on this machine)
  long long timeoutMs = 0;
  alloy::BootstrapPath bootstrapPath = alloy::BootstrapPath::Mpi;
  std::vector<alloy::EndpointBlob> blobs;  // every rank's endpoint blob, by communicator rank
  // Equal on every rank of this communicator and different between live GPU communicators (a hash of
  // rank 0's blob, which holds its workspace's IPC handle): a group spanning several communicators
  // launches them in this order on every rank, so two ranks never queue them in opposite orders.
  uint64_t orderKey = 0;
  alloy::LocalTopology topology;
  // The GPU engine's transport among the ranks of this host; null on a host-only communicator, or when
  // the GPUs cannot reach each other (gpuUnavailableReason then says why).
  std::unique_ptr<alloy::LocalTransport> local;
  // Orders the communicator's launches across streams; set together with local.
  std::unique_ptr<alloy::LaunchOrder> launchOrder;
  std::string gpuUnavailableReason;
  // Every operation begins with the handshake of lib/core/handshake.h (the MPIX functions' communicators).
  bool handshake = false;
  int rejectionsReported = 0;  // of the handshakes' rejections recorded (takeUnreportedRejection)
  // Between hosts: set on a GPU communicator that spans hosts when a transport connects them (served
  // by the process's proxy thread); otherwise null, and netUnavailableReason says why.
  std::unique_ptr<alloy::RemoteChannel> net;
  std::string netUnavailableReason;
  // The last launch that rang a doorbell of net ended without waiting for its release (a small operation
  // that only sends: lib/coll/p2p_plan.cc): the next launch that stages into that box waits for it first.
  bool netReleaseUnwaited = false;
  // alltoallv's count exchange among the ranks of this host, opened by the first alltoallv through the
  // rails (lib/coll/relay_board.h).
  alloy::RelayBoardPtr relayBoard{nullptr, nullptr};
  // Another rank of this communicator runs on this rank's GPU (equal GPU UUIDs: ranks sharing one GPU,
  // virtual hosts among them). Kernels that spin while the network works then take the other ranks'
  // time slices, so the small operations between hosts keep the stream's form there (p2p_plan.cc).
  bool gpuShared = false;
  // Where the operations' stream-ordered scratch comes from (lib/core/scratch_pool.h).
  alloy::ScratchPool scratchPool;

  alloyComm();
  ~alloyComm();
  alloyComm(const alloyComm&) = delete;
  alloyComm& operator=(const alloyComm&) = delete;
};

namespace alloy {

// Collective over bootstrap's ranks: the creation shared by every way of making a communicator. config
// may be NULL; on failure *comm is untouched and every rank returns an error.
alloyResult_t commCreate(std::unique_ptr<Bootstrap> bootstrap, const alloyConfig_t* config, alloyComm_t* comm);

// The collective half of alloyCommDestroy: waits for this rank's device work on comm, then for every
// rank's, so that no peer still writes into memory about to be freed. After it, deleting comm is local.
alloyResult_t commFinalize(alloyComm_t comm);

// Checks the common arguments of a GPU operation (comm valid, GPU engine usable, stream) and makes the
// communicator's device current. name is the API function, for messages.
alloyResult_t checkGpuComm(alloyComm_t comm, const char* name);
// checkGpuComm for the collectives, which involve every rank: on a communicator that spans hosts without a
// transport between them, alloyNotSupported on every rank alike (naming the reason), even on a rank whose
// own peers in the operation all share its host, which would otherwise wait for peers that failed.
alloyResult_t checkGpuCollective(alloyComm_t comm, const char* name);

// What the kernels of one operation on comm get: the transport's view of this host's ranks, the
// operation (for fault reports), and whether a handshake verdict applies (lib/core/handshake.h).
DeviceComm operationDeviceComm(alloyComm_t comm, Operation operation);

// The first error of the communicator's GPU work (kernels or the network channel), or alloySuccess.
alloyResult_t commAsyncError(alloyComm_t comm);

// What went wrong when the communicator's kernels gave up (asyncError not alloySuccess): the operation,
// this rank, the peers it waited for and for how long.
std::string describeAsyncError(alloyComm_t comm, alloyResult_t asyncError);

// Host identity, the CUDA device choice, and the peers' blobs, for tests that verify the exchange.
const alloy::EndpointBlob& commPeerBlob(alloyComm_t comm, int peer);
BootstrapPath commBootstrapPath(alloyComm_t comm);

}  // namespace alloy
