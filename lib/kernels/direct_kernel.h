// The direct engine: reductions of small and medium buffers inside a host in one launch, without rings.
// Every rank stores what a peer needs straight into that peer's staging area (a fixed region after the
// rings, DeviceComm::directOffset); the peer reduces from its own memory. There is no flow control per
// chunk: an operation is one or two steps. Small operations travel as low-latency lines (ll_protocol.cuh:
// every 8 data bytes carry the step's flag), so no fence is on their path; larger ones as bulk stores,
// each step ended by one fence and a flag per block towards every peer (a fence at system scope costs a
// few microseconds on H100, which lines avoid at the price of their flags), or, in the band where they beat
// bulk (ALLOY_DIRECT_LL128_MAX_BYTES and its default: direct_plan.h) and where the links deliver a warp's
// 128-byte store whole, as wide lines (ll128_protocol.cuh: 120 data bytes and a flag per 128).
//
// Reductions by parts larger than one area (two-shot, reduce-scatter, reduce) run in windows within the launch:
// window k carries bytes [k * windowBytes, (k + 1) * windowBytes) of every part through half k % 2 of the
// areas, and while half of each block's threads store window k + 1 into the peers' areas (and copy out
// window k - 1's results), the other half reduce window k: the links keep busy while a window is reduced.
// One flag per block and window orders it all (direct_bulk.cuh has the argument).
//
// Reuse of the staging without acknowledgements: the areas come in two generations, used by operations
// alternately. A rank writes generation g of a peer's area again two operations later, and by then it
// has received something from the peer in the operation in between, which the peer sent only after its
// previous launch, the last reader of generation g, had ended (one communicator's launches run one after
// the other on each rank). Block 0 exchanges data (or, in bulk steps, a flag) with every peer in every
// operation: the plan gives every rank a non-empty part. Every launch has all directBlocks blocks and each
// counts the operations it ran (SignalLayout::directEpoch), so all agree on the generation, the count's
// parity, and on the flags, which grow with the count. Lines have areas of their own, which start zeroed
// and whose readers zero every line they read (both kinds of lines), so a line left from an older
// operation, or bulk data, never shows the current flag.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"
#include "device_comm.h"
#include "kernel_trace.h"

namespace alloy {

enum DirectAlgorithm : int {
  // Every rank's whole buffer to every peer; each rank reduces all of them: one step.
  kDirectOneShot = 0,
  // Part p of every rank's buffer to rank p, which reduces it into its own part and into every peer's
  // result area (step 1); then every rank copies the peers' reduced parts out of its result area (step 2).
  kDirectTwoShot = 1,
  // Step 1 of the two-shot alone: rank p ends with part p reduced (alloyReduceScatter).
  kDirectReduceScatter = 2,
  // Every rank's block (part 0's bytes) to every peer, which copies it into its place (alloyAllGather).
  kDirectAllGather = 3,
  // Reduce to a root (alloyReduce), in bulk or 128-byte lines: the root's part is empty, every other rank
  // p reduces part p (the root's input among the rest) into its slot in the root's result area, and the
  // root copies the reduced parts into place. Every rank sends, and the root receives, the buffer's bytes
  // once.
  kDirectReduce = 4,
  // Block p of every rank's buffer (part 0's bytes each) to rank p, which copies it into its place
  // (alloyAlltoAll): the all-gather with a block per peer. Lines only.
  kDirectAllToAll = 5,
  // The root's buffer (part 0's bytes) to every peer (alloyBroadcast); every other rank sends each peer one
  // token line instead, so that every pair of ranks exchanges lines as the generation rule above asks,
  // and block 0 waits for every peer's. Lines only.
  kDirectBroadcast = 6,
  // Broadcast in two steps from 3 ranks: part p of the root's buffer (no part for the root) to rank p,
  // which passes it on to the other ranks but the root as it arrives; every other rank sends the root a
  // token line. Lines only.
  kDirectBroadcastTwoShot = 7,
};

// How the data of a launch travels (all ranks choose alike: DirectPlan).
enum DirectProtocol : int {
  kDirectBulk = 0,       // bulk stores into the bulk areas, a fence and a flag per block and step
  kDirectLines = 1,      // 16-byte lines of 8 data bytes in the line areas (slots of twice the bytes)
  kDirectWideLines = 2,  // 128-byte lines of 120 data bytes in the line areas (DeviceComm::directWideLines)
};

struct DirectLaunch {
  DeviceComm comm;
  int op;         // alloyRedOp_t
  int algorithm;  // DirectAlgorithm
  int protocol;   // DirectProtocol
  const char* src;  // this rank's input: the whole buffer
  char* dst;        // one-shot, two-shot, all-gather, reduce (root only): the whole output buffer;
                    // reduce-scatter: this rank's part
  // Parts (two-shot, reduce-scatter, reduce, two-step broadcast): part p is bytes
  // [partFirst[p], partFirst[p] + partBytes[p]) of src (and of dst, two-shot). One-shot: part 0 is the
  // whole buffer; all-gather: one rank's block.
  size_t partFirst[kMaxLocalRanks];
  size_t partBytes[kMaxLocalRanks];
  size_t slotStride;  // bytes between two source ranks' slots in an area (a multiple of 16)
  // Two-shot and reduce-scatter: bytes of each part per window (the shares of every window are cut as if
  // it were full, so that a block stores and reads the same bytes of a slot in every window), and the
  // number of windows; with more than one, window k uses the slots of half k % 2 of every area.
  size_t windowBytes;
  int windows;
  int root;  // reduce: the rank that receives the result; broadcasts: the rank that sends
  // Reduce by parts (128-byte lines, bulk): the root's part is empty and it sends no inputs; the owners
  // reduce the other ranks' inputs, and the root folds its own input into each owner's result as it
  // arrives (in lines its block 0 sends each owner a token line instead, for the generation rule; bulk
  // steps exchange flags anyway). DirectPlan::planReduce says when.
  int rootFolds;
#if ALLOY_KERNEL_TRACE
  KernelTraceRecord* trace;  // where block 0 records the launch (kernel_trace.h); nullptr: untraced
#endif
};

// Flags of the bulk steps grow by one per step within an operation and by 2^kDirectStepBits per operation
// (the block's count of operations, SignalLayout::directEpoch): a launch has at most
// kDirectMaxWindows + 1 steps, and 2^44 operations wrap the flags (years of back-to-back launches).
constexpr int kDirectStepBits = 20;
constexpr int kDirectMaxWindows = (1 << kDirectStepBits) - 2;

static_assert(sizeof(DirectLaunch) <= 4096, "DirectLaunch must fit in kernel parameter space");

// Enqueues comm.directBlocks blocks of the kernel for type on stream. type and op must be valid, and
// nranks * slotStride at most comm.directAreaBytes, or comm.directLineAreaBytes for lines, and wide lines
// only where comm.directWideLines (checked by the caller).
cudaError_t launchDirect(const DirectLaunch& launch, alloyDataType_t type, cudaStream_t stream);

// How many blocks one SM of the current device holds at once of the kernel's most demanding datatype.
cudaError_t directKernelBlocksPerSm(int* blocks);

}  // namespace alloy
