// Shared helpers of the GPU test suite (alloy_gpu_tests): deterministic random data that any rank can
// regenerate for any peer, poison, byte-exact comparison, device buffers, and the fixture that gives
// each test one alloyComm_t built from MPI_COMM_WORLD.
//
// Rules every test follows:
//  - data is fresh each run: the run's base seed comes from rank 0 (random, or ALLOY_TEST_SEED to
//    replay a failure) and is mixed with the test's name; every failure message carries the seed;
//  - every output buffer is poisoned (kPoison bytes) before the call, and compared byte for byte,
//    guard bytes and gaps included, against a reference computed on the host;
//  - every rank makes the same sequence of collective calls whatever its own results, so that one
//    rank's failure shows as a failure, not as a hang (EXPECT rather than ASSERT once peers are involved).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloy.h"

namespace alloytest {

// ---------------------------------------------------------------------------------------------------
// Result checks. The message names the call, the result and alloyGetLastError().

std::string alloyFailure(const char* call, alloyResult_t result);

#define ALLOY_ASSERT_OK(call)                                                                   \
  do {                                                                                          \
    const alloyResult_t alloy_test_r_ = (call);                                                 \
    ASSERT_EQ(alloy_test_r_, alloySuccess) << ::alloytest::alloyFailure(#call, alloy_test_r_);  \
  } while (0)

#define ALLOY_EXPECT_OK(call)                                                                   \
  do {                                                                                          \
    const alloyResult_t alloy_test_r_ = (call);                                                 \
    EXPECT_EQ(alloy_test_r_, alloySuccess) << ::alloytest::alloyFailure(#call, alloy_test_r_);  \
  } while (0)

// Expects `call` to return exactly `code` with a last-error message that contains `needle`.
#define ALLOY_EXPECT_ERROR(call, code, needle)                                                  \
  do {                                                                                          \
    const alloyResult_t alloy_test_r_ = (call);                                                 \
    EXPECT_EQ(alloy_test_r_, (code)) << #call << " returned " << alloyGetErrorString(alloy_test_r_) \
                                     << ": " << alloyGetLastError(nullptr);                     \
    EXPECT_NE(std::string(alloyGetLastError(nullptr)).find(needle), std::string::npos)          \
        << #call << ": the message should name \"" << (needle) << "\", got: \""                  \
        << alloyGetLastError(nullptr) << "\"";                                                  \
  } while (0)

#define CUDA_ASSERT_OK(call)                                                                    \
  do {                                                                                          \
    const cudaError_t cuda_test_e_ = (call);                                                    \
    ASSERT_EQ(cuda_test_e_, cudaSuccess) << #call << ": " << cudaGetErrorString(cuda_test_e_);  \
  } while (0)

#define CUDA_EXPECT_OK(call)                                                                    \
  do {                                                                                          \
    const cudaError_t cuda_test_e_ = (call);                                                    \
    EXPECT_EQ(cuda_test_e_, cudaSuccess) << #call << ": " << cudaGetErrorString(cuda_test_e_);  \
  } while (0)

// ---------------------------------------------------------------------------------------------------
// Deterministic, position-addressable random bytes: byte i of stream s depends only on (s, i), so a
// rank rebuilds any slice of any peer's send buffer without generating the rest.

inline uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A stream identifier from a seed and up to three labels (tag, rank, peer, version, ...).
inline uint64_t streamOf(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return mix64(mix64(mix64(seed ^ 0x616c6c6f79ull) ^ a) ^ (b * 0x100000001b3ull + 7)) ^ mix64(c + 0x1234567ull);
}

// out[0..n) = bytes [offset, offset + n) of stream.
void genBytes(uint64_t stream, size_t offset, size_t n, uint8_t* out);
std::vector<uint8_t> genVector(uint64_t stream, size_t n, size_t offset = 0);
// The bytes of an allreduce (uint32, sum, wrapping) of count elements over n ranks whose inputs are
// genVector(streamOf(seed, tag, rank), 4 * count).
std::vector<uint8_t> uint32SumOfRanks(uint64_t seed, uint64_t tag, int n, size_t count);

// A small sequential generator for shapes (counts, displacements, schedules), seeded per purpose.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix64(state_++ * 0x9e3779b97f4a7c15ull + 0x5851f42d4c957f2dull); }
  // uniform in [lo, hi]
  size_t range(size_t lo, size_t hi) { return lo + static_cast<size_t>(next() % (hi - lo + 1)); }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

// ---------------------------------------------------------------------------------------------------
// Poison and comparison.

constexpr uint8_t kPoison = 0xA5;
// Sets one of Alloy's variables on this rank for a scope (every rank does the same), taking a new snapshot
// of the per-call settings (call_env.h) on the way in and out, as creating a communicator would.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, size_t value) : ScopedEnv(name, std::to_string(value)) {}
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

constexpr size_t kGuard = 512;  // poisoned bytes around every destination region

// Byte-exact comparison: on failure, how many bytes differ, the first and last offending offsets and
// their expected/actual values.
::testing::AssertionResult bytesEqual(const uint8_t* expected, const uint8_t* actual, size_t n,
                                      const std::string& what);
::testing::AssertionResult allPoison(const uint8_t* actual, size_t n, const std::string& what);

// ---------------------------------------------------------------------------------------------------
// Datatypes of alloy.h: size and name, for the sweep over all of them.

constexpr alloyDataType_t kAllTypes[] = {alloyInt8,    alloyUint8,   alloyInt32,      alloyUint32,
                                         alloyInt64,   alloyUint64,  alloyFloat16,    alloyFloat32,
                                         alloyFloat64, alloyBfloat16, alloyFloat8e4m3, alloyFloat8e5m2};
static_assert(sizeof(kAllTypes) / sizeof(kAllTypes[0]) == alloyNumTypes, "every datatype of alloy.h");
size_t typeSize(alloyDataType_t type);
const char* typeName(alloyDataType_t type);

// ---------------------------------------------------------------------------------------------------
// The GPU engine's protocol boundaries as this run configures them (docs/environment.md,
// lib/kernels/device_comm.h): per peer, tasks of up to llMaxBytes use the low-latency protocol, cut into
// chunks of llChunkBytes; larger ones the bulk protocol, in chunks of up to slotBytes.

struct EngineSizes {
  size_t llMaxBytes;    // ALLOY_LL_MAX_BYTES (default 256 KiB; 0: no low-latency protocol)
  size_t llChunkBytes;  // the low-latency chunk (32 KiB)
  size_t slotBytes;     // ALLOY_SLOT_BYTES rounded down to 4 KiB (default 512 KiB)
};
EngineSizes engineSizes();

// Byte counts per peer around every boundary: for each of one page (4096), three pages, one and two
// low-latency chunks, the low-latency limit and one slot, that boundary minus `unit`, the boundary, and
// plus `unit` (unit: the element size). Ascending, without repeats.
std::vector<size_t> boundarySizes(size_t unit);

// ---------------------------------------------------------------------------------------------------
// Device memory of the current device, freed on scope exit.

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  bool ok() const { return ptr_ != nullptr; }
  uint8_t* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // Whole-buffer helpers, issued on `stream` (the stream the test's operations use, so that they are
  // ordered with them) and synchronous: they synchronise it before returning. Never set up device data
  // with cudaMemcpy/cudaMemset on the legacy stream: a non-blocking stream does not wait for it.
  void poison(cudaStream_t stream) const;
  std::vector<uint8_t> download(cudaStream_t stream) const;
  void upload(const std::vector<uint8_t>& host, size_t offset, cudaStream_t stream) const;

 private:
  uint8_t* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Pinned host memory, for copies issued without a host synchronisation in between.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  uint8_t* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  uint8_t* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// Run-wide state set by gpu_main.cc.

uint64_t baseSeed();
// Rank 0's TearDown reports other ranks' failures of a test under this prefix (gpu_main.cc tells them
// from rank 0's own failures by it).
constexpr const char kOtherRanksFailed[] = "failed on rank(s)";
void setBaseSeed(uint64_t seed);
std::string hex(uint64_t v);

// ---------------------------------------------------------------------------------------------------
// The fixture: one communicator from MPI_COMM_WORLD, a non-blocking stream on its device, and the test's
// seed (shared by all ranks; per-rank data mixes in the rank). TearDown destroys both, checks that no
// asynchronous error was recorded, and lets rank 0 report any rank's failure of the test.

class CommTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Fault tests: a second communicator over MPI_COMM_WORLD whose waits give up after timeoutMs
  // (collective), the seconds since t0, and the check that c failed with alloyTimeout: it prints c's
  // message with the seconds waited and returns the message for the test's own checks.
  static alloyResult_t createCommWithTimeout(long long timeoutMs, alloyComm_t* c);
  static double secondsSince(std::chrono::steady_clock::time_point t0);
  static std::string expectTimedOut(alloyComm_t c, double waited);

  // Runs body with the fixture's communicator swapped for a new one over MPI_COMM_WORLD whose direct engine
  // has areas of areaBytes each (ALLOY_DIRECT_BYTES at creation), windows of any size allowed
  // (ALLOY_DIRECT_WINDOW_MIN_BYTES=0): a few MB then take many windows (direct_kernel.h). Collective.
  void withSmallDirectAreas(size_t areaBytes, const std::function<void()>& body);

  // true on every rank when ok is true on every rank: for agreement before steps that involve peers.
  bool allRanksOk(bool ok) const;

  // One alltoall of `count` elements of `type` with fresh data (labelled tag), sendbuff at sendOffset
  // bytes and recvbuff at recvOffset bytes into their allocations; checks every byte of the destination
  // allocation (the block, the poisoned bytes before it and kGuard bytes after it).
  // c, crank, cnranks: the communicator to use (default: the fixture's) and this rank's place in it.
  void alltoallRoundTrip(size_t count, alloyDataType_t type, uint64_t tag, size_t sendOffset = 0,
                         size_t recvOffset = 0);
  void alltoallRoundTripOn(alloyComm_t c, int crank, int cnranks, size_t count, alloyDataType_t type,
                           uint64_t tag, size_t sendOffset, size_t recvOffset);

  // Expected alltoall destination for rank `me` of `n`: block p = bytes [me * block, (me + 1) * block)
  // of rank p's send data, stream streamOf(seed, tag, p).
  std::vector<uint8_t> alltoallExpected(uint64_t tag, int me, int n, size_t blockBytes) const;

  alloyComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int nranks = 1;
  int device = -1;
  uint64_t seed = 0;

 private:
  std::unique_ptr<::testing::ScopedTrace> trace_;
};

}  // namespace alloytest
