// What a kernel knows about its communicator: plain pointers into this rank's and its peers' memory,
// passed by value as a kernel argument. Shared by host code (which fills it) and device code.
#pragma once

#include <cstddef>
#include <cstdint>

// Functions both host code (g++) and device code (nvcc) call.
#ifdef __CUDACC__
#define ALLOY_HOST_DEVICE __host__ __device__
#else
#define ALLOY_HOST_DEVICE
#endif

namespace alloy {

constexpr int kMaxLocalRanks = 16;  // ranks of one host served by the IPC engine
constexpr int kMaxChannels = 32;    // parallel streams of chunks between one pair of ranks
constexpr int kMaxDirectBlocks = 64;  // blocks of a launch of the direct engine (direct_kernel.h)

// Layout of a rank's signal area (64-bit words). posted and consumed are written by peers over
// NVLink/PCIe and each sits on its own 64-byte line; sent and recvd are this rank's own counters.
// All four only grow, so kernels compare against values they read from this memory, never against
// values frozen into a captured CUDA graph.
struct SignalLayout {
  static constexpr size_t kLine = 8;  // words per 64-byte line
  static constexpr size_t kPairs = static_cast<size_t>(kMaxLocalRanks) * kMaxChannels;
  // chunks the peer src has posted into this rank's workspace on channel ch
  ALLOY_HOST_DEVICE static constexpr size_t posted(int src, int ch) { return (src * kMaxChannels + ch) * kLine; }
  // chunks of this rank's that the peer dst has consumed on channel ch
  ALLOY_HOST_DEVICE static constexpr size_t consumed(int dst, int ch) { return (kPairs + dst * kMaxChannels + ch) * kLine; }
  // chunks this rank has sent to dst / received from src on channel ch
  ALLOY_HOST_DEVICE static constexpr size_t sent(int dst, int ch) { return 2 * kPairs * kLine + dst * kMaxChannels + ch; }
  ALLOY_HOST_DEVICE static constexpr size_t recvd(int src, int ch) { return 2 * kPairs * kLine + kPairs + src * kMaxChannels + ch; }
  // The operation handshake (handshake_kernel.h): the mark the peer src wrote for this rank's handshake
  // of a given parity (two, so that a peer one handshake ahead never overwrites a mark still being read),
  // each on its own line; then this rank's own handshake count and the verdict of its latest handshake.
  ALLOY_HOST_DEVICE static constexpr size_t mark(int src, int parity) {
    return (2 * kPairs * kLine + 2 * kPairs) + (src * 2 + parity) * kLine;
  }
  static constexpr size_t kHandshakeBase = 2 * kPairs * kLine + 2 * kPairs + 2 * kMaxLocalRanks * kLine;
  ALLOY_HOST_DEVICE static constexpr size_t handshakes() { return kHandshakeBase; }
  ALLOY_HOST_DEVICE static constexpr size_t verdict() { return kHandshakeBase + 1; }
  // The direct engine (direct_kernel.h): the step that block b of the peer src last finished towards
  // this rank, each on its own line; then the operations block b of this rank has run.
  static constexpr size_t kDirectBase = kHandshakeBase + kLine;
  ALLOY_HOST_DEVICE static constexpr size_t directArrived(int src, int block) {
    return kDirectBase + (static_cast<size_t>(src) * kMaxDirectBlocks + block) * kLine;
  }
  ALLOY_HOST_DEVICE static constexpr size_t directEpoch(int block) {
    return kDirectBase + static_cast<size_t>(kMaxLocalRanks) * kMaxDirectBlocks * kLine + block;
  }
  static constexpr size_t kWords = kDirectBase + static_cast<size_t>(kMaxLocalRanks) * kMaxDirectBlocks * kLine +
                                   kMaxDirectBlocks;
  static constexpr size_t kBytes = kWords * sizeof(uint64_t);
};

// The largest mark of the operation handshake (handshake_kernel.h): marks are 16 bits wide.
constexpr int kMaxHandshakeMark = 0xffff;

// Why this rank's kernels gave up, in host-mapped memory: the host reads it to report a failure
// (alloyCommGetAsyncError, the next call on the communicator) and writes abortFlag to stop the kernels.
struct FaultRecord {
  int abortFlag;                // set by alloyCommAbort, or by a kernel whose wait timed out
  int errorCode;                // the first alloyResult_t a kernel recorded
  int operation;                // the Operation of the launch that recorded errorCode
  unsigned int peerMask;        // bit r: a wait for rank r was cut short (kMaxLocalRanks <= 32)
  unsigned long long waitedNs;  // the longest of those waits
  // Operations skipped because another rank rejected its arguments (the handshake's error mark): how
  // many, and of the latest one the lowest rejecting rank (local index), its mark (an MPI error class
  // for the MPIX functions) and the handshake's number on this communicator (1, 2, ...).
  int rejections;
  int rejectedBy;
  int rejectedMark;
  unsigned long long rejectedHandshake;
};
static_assert(kMaxLocalRanks <= 32, "FaultRecord::peerMask holds one bit per local rank");

// What a launch serves, for fault reports.
enum Operation : int {
  kOpUnknown = 0,
  kOpAllReduce,
  kOpBroadcast,
  kOpReduce,
  kOpAllGather,
  kOpReduceScatter,
  kOpAlltoAll,
  kOpAlltoAllv,
  kOpSendRecv,
  kNumOperations
};

// The API function of an Operation, as users know it.
inline const char* operationName(int op) {
  static const char* const names[kNumOperations] = {
      "an operation",  "alloyAllReduce",     "alloyBroadcast", "alloyReduce",       "alloyAllGather",
      "alloyReduceScatter", "alloyAlltoAll", "alloyAlltoAllv", "alloySend/alloyRecv"};
  return op > kOpUnknown && op < kNumOperations ? names[op] : names[kOpUnknown];
}

struct DeviceComm {
  int rank;
  int nranks;
  int channels;            // channels per ordered pair of ranks
  int slots;               // ring slots per channel
  size_t slotBytes;        // bytes per slot
  unsigned long long timeoutNs;
  int operation;           // Operation of this launch (set per launch by the plan)
  int handshake;           // 1: every operation begins with a handshake, whose verdict may skip it
  int earlyLaunch;         // host's: 1 where the engines' launches overlap the previous kernel (launch_overlap.cuh)
  int scFences;            // host's: 1 where ALLOY_FENCE=sc asks for the old publishing fences (sync_primitives.cuh)
  char* workspace[kMaxLocalRanks];    // rank r's workspace, mapped into this process
  uint64_t* signals[kMaxLocalRanks];  // rank r's signal area, mapped into this process
  FaultRecord* fault;                 // host-mapped, device address
  int* abortWord;                     // device memory, this rank's: the abort as kernels see it on entry
  // The direct engine's staging (direct_kernel.h), after the rings in every rank's workspace: two
  // generations of an input area and a result area for bulk stores, of directAreaBytes each (0: no
  // direct engine), then the same four for lines, of directLineAreaBytes each; the blocks every launch
  // of it has; and whether it may use wide lines (1: every rank of the host reaches every peer over links
  // that deliver a warp's 128-byte store whole, agreed at creation: ll128_protocol.cuh).
  size_t directOffset;
  size_t directAreaBytes;
  size_t directLineAreaBytes;
  int directBlocks;
  int directWideLines;
};

// A rank's workspace holds, for every source rank and channel, a ring of `slots` bulk slots of
// slotBytes, then the same rings again for the low-latency protocol, whose slots hold kLlChunkBytes of
// data as twice as many bytes of flagged lines (see ll_protocol.cuh).
constexpr size_t kLlChunkBytes = 32 << 10;
constexpr size_t kLlDataPerLine = 8;  // data bytes of a 16-byte low-latency line
constexpr size_t kLl128Bytes = 128;    // a wide line (ll128_protocol.cuh)
constexpr size_t kLl128DataBytes = 120;  // and its data bytes

// The largest operation (bytes as the direct engine counts them: direct_plan.h) that goes in 128-byte
// lines where ALLOY_DIRECT_LL128_MAX_BYTES is not set, by the host's rank count: 4 MiB at 3 and 4 ranks,
// where the lines beat bulk stores up to there on 4 x H200 and lost at 8 MB; none at 2 ranks, where they
// lost, and none from 5 ranks on, where they have not been measured (docs/benchmarks.md, "Session 23").
// The line areas are sized to hold it (ipc_transport.h); which operations take it: direct_plan.cc.
ALLOY_HOST_DEVICE inline size_t directWideLinesDefaultTop(int nranks) {
  return nranks == 3 || nranks == 4 ? size_t{4} << 20 : 0;
}

// The largest reduce by parts that goes in 128-byte lines where ALLOY_DIRECT_LL128_MAX_BYTES is not set: 8 MiB
// at 3 and 4 ranks, where on 4 x H200 the lines took 21 % less time than the flat form at 4 MB and 12 % less
// than the bulk windows at 8 MB; none elsewhere (docs/benchmarks.md, "Session 25").
ALLOY_HOST_DEVICE inline size_t directWideReduceDefaultTop(int nranks) {
  return nranks == 3 || nranks == 4 ? size_t{8} << 20 : 0;
}

// What the line areas hold as 128-byte lines where ALLOY_DIRECT_LL128_MAX_BYTES is not set: the two-shot's
// band, or the reduce's, whose nranks - 1 parts take nranks slots (about 11.4 MiB per area at 4 ranks, 12.8
// at 3).
ALLOY_HOST_DEVICE inline size_t directWideLinesAreaDefault(int nranks) {
  const size_t reduce = nranks > 1 ? directWideReduceDefaultTop(nranks) / (nranks - 1) * nranks : 0;
  const size_t twoShot = directWideLinesDefaultTop(nranks);
  return reduce > twoShot ? reduce : twoShot;
}
constexpr size_t kLlSlotBytes = 2 * kLlChunkBytes;

// The flag a low-latency chunk's lines carry: 1 .. 2^32 - 1 from its sequence number, never the zero of
// a cleared line (ll_protocol.cuh says why).
ALLOY_HOST_DEVICE inline uint32_t llFlag(uint64_t seq) { return static_cast<uint32_t>(seq % 0xffffffffull) + 1; }

ALLOY_HOST_DEVICE inline size_t workspaceBulkBytes(int nranks, int channels, int slots, size_t slotBytes) {
  return static_cast<size_t>(nranks) * channels * slots * slotBytes;
}

ALLOY_HOST_DEVICE inline size_t workspaceBytes(int nranks, int channels, int slots, size_t slotBytes) {
  return workspaceBulkBytes(nranks, channels, slots, slotBytes) +
         static_cast<size_t>(nranks) * channels * slots * kLlSlotBytes;
}

// Each of the direct engine's four line areas for bulk areas of areaBytes: half of them, at most 4 MiB. Lines
// carry operations of at most ALLOY_DIRECT_LL_MAX_BYTES (1 MiB by default), whose slots at twice the data
// fit 4 MiB at up to 8 ranks (a one-shot of 256 KB, a two-shot of 1 MB); a larger operation that would not
// fit goes in bulk.
ALLOY_HOST_DEVICE inline size_t directLineAreaBytes(size_t areaBytes) {
  const size_t half = areaBytes / 2 & ~static_cast<size_t>(4095);
  return half < (size_t{4} << 20) ? half : size_t{4} << 20;
}

// Offset in a rank's workspace of one of the direct engine's areas: for bulk stores or for lines (areas
// of their own, so that a line only ever holds zeros or a line: bulk data left where lines go could show
// a step's flag), inputs (0) or results (1), of a generation.
ALLOY_HOST_DEVICE inline size_t directAreaOffset(const DeviceComm& c, bool lines, int generation, int area) {
  const size_t index = static_cast<size_t>(generation) * 2 + area;
  return lines ? c.directOffset + 4 * c.directAreaBytes + index * c.directLineAreaBytes
               : c.directOffset + index * c.directAreaBytes;
}

// Offset of bulk slot `slot` of channel ch of the ring that rank src fills in a rank's workspace.
ALLOY_HOST_DEVICE inline size_t workspaceSlotOffset(const DeviceComm& c, int src, int ch, int slot) {
  return ((static_cast<size_t>(src) * c.channels + ch) * c.slots + slot) * c.slotBytes;
}

// Offset of low-latency slot `slot` of channel ch of the ring that rank src fills.
ALLOY_HOST_DEVICE inline size_t workspaceLlSlotOffset(const DeviceComm& c, int src, int ch, int slot) {
  return workspaceBulkBytes(c.nranks, c.channels, c.slots, c.slotBytes) +
         ((static_cast<size_t>(src) * c.channels + ch) * c.slots + slot) * kLlSlotBytes;
}

// How a message of `bytes` is cut into chunks; sender and receiver compute it alike. Chunks are spread
// over all channels, page-sized at least (small messages use few channels) and at most one slot. (More
// and smaller chunks per channel, for overlap within a channel, were slower on 4 x H100: four per channel
// halved allreduce's bus bandwidth at 2 MB, 72 -> 41 GB/s; each chunk pays a flag round trip.)
ALLOY_HOST_DEVICE inline size_t chunkBytesFor(size_t bytes, int channels, size_t slotBytes) {
  size_t perChannel = (bytes + channels - 1) / channels;
  perChannel = (perChannel + 4095) & ~static_cast<size_t>(4095);
  return perChannel < slotBytes ? perChannel : slotBytes;
}

// Walks the chunks that channel ch carries for a list of segments: for every segment in order, chunks
// ch, ch + channels, ... of it. Sender and receiver run the same walk, so the k-th chunk of a channel
// is the same bytes on both sides. bytesOf(s) gives segment s's size; visit(s, offset, length, sequence)
// returns false to stop early (abort). On completion *end is the channel's next sequence number.
template <typename BytesOf, typename Visit>
ALLOY_HOST_DEVICE bool forEachChunk(int numSegments, BytesOf bytesOf, int channels, size_t slotBytes, int ch,
                                    uint64_t sequence, uint64_t* end, Visit visit) {
  for (int s = 0; s < numSegments; ++s) {
    const size_t bytes = bytesOf(s);
    const size_t chunk = chunkBytesFor(bytes, channels, slotBytes);
    if (chunk == 0) continue;
    for (size_t offset = static_cast<size_t>(ch) * chunk; offset < bytes;
         offset += static_cast<size_t>(channels) * chunk) {
      const size_t length = bytes - offset < chunk ? bytes - offset : chunk;
      if (!visit(s, offset, length, sequence)) return false;
      ++sequence;
    }
  }
  *end = sequence;
  return true;
}

}  // namespace alloy
