// The endpoint blob: what one rank tells every peer about itself when a communicator is created.
// It is plain bytes with a fixed layout (no pointers), so that it can travel through PMIx or MPI
// unchanged and be compared byte for byte.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace alloy {

constexpr uint32_t kEndpointMagic = 0xa1103b10u;
constexpr uint32_t kEndpointVersion = 7;
constexpr int kHostNameBytes = 64;
constexpr int kNetAddressBytes = 1024;
constexpr int kNetKeyBytes = 512;

struct EndpointBlob {
  uint32_t magic;
  uint32_t version;
  // Host identity: ranks with equal hostHash share a machine (and so can use CUDA IPC).
  uint64_t hostHash;
  char hostName[kHostNameBytes];
  int32_t pid;
  // -1 on a host-only communicator (no CUDA device on this machine).
  int32_t cudaDevice;
  uint8_t gpuUuid[16];
  // Intra-node transport: the workspace peers write into and the signal words they synchronise on.
  int32_t hasIpc;
  // Thread blocks of the engine's kernels this rank's GPU holds at once (SMs x blocks per SM): every
  // block of a launch must be resident, since blocks wait for peers' blocks (channel clamp, IpcTransport).
  int32_t residentBlocks;
  uint64_t workspaceBytes;
  cudaIpcMemHandle_t workspaceHandle;
  cudaIpcMemHandle_t signalHandle;
  // The same two allocations' device addresses, which only a rank of the same process may use (CUDA IPC
  // refuses to map a process's own memory; such a peer reaches it through peer access instead).
  uint64_t workspaceAddress;
  uint64_t signalAddress;
  // The GPU engine's settings as this rank read them from the environment (ALLOY_CHANNELS, ALLOY_SLOTS,
  // ALLOY_SLOT_BYTES, ALLOY_LL_MAX_BYTES, ALLOY_DIRECT_BYTES, ALLOY_DIRECT_BLOCKS, ALLOY_DIRECT_LL128_MAX_BYTES):
  // sender and receiver must cut and flag chunks alike and place them at the same offsets, so every
  // rank must hold the same values; creation compares them (all ranks, host-only ones too).
  uint32_t engineChannels;
  uint32_t engineSlots;
  uint64_t engineSlotBytes;
  uint64_t engineLowLatencyMaxBytes;
  uint64_t engineDirectAreaBytes;
  uint32_t engineDirectBlocks;
  uint64_t engineDirectWideLinesBytes;
  // The network's staging geometry (ALLOY_NET_SLOTS, ALLOY_NET_SLOT_BYTES, ALLOY_NET_EAGER_BYTES) and
  // budget (ALLOY_NET_STAGING_BYTES), compared across all ranks: they decide the capacity and the eager
  // slots every rank must agree on.
  uint32_t netSlots;
  uint64_t netSlotBytes;
  uint64_t netStagingBytes;
  uint64_t netEagerBytes;
  // Between hosts (communicators that span hosts, GPU ranks only; 0 bytes otherwise): the transport's
  // address and the packed key of this rank's staging region (lib/net/net_channel.h), both opaque here.
  uint32_t netAddressBytes;
  uint32_t netKeyBytes;
  uint8_t netAddress[kNetAddressBytes];
  uint8_t netKey[kNetKeyBytes];
};

// Fills the host identity fields (magic, version, hostHash, hostName, pid) and zeroes the rest.
void fillHostIdentity(EndpointBlob* blob);

}  // namespace alloy
