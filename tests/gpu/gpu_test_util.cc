#include "gpu_test_util.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "call_env.h"
#include "device_comm.h"  // kLlChunkBytes

namespace alloytest {

namespace {
uint64_t gBaseSeed = 0;

uint64_t word(uint64_t stream, uint64_t index) { return mix64(stream + index * 0xd1b54a32d192ed03ull); }

uint64_t hashName(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

std::string byteHex(uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02x", b);
  return text;
}
}  // namespace

uint64_t baseSeed() { return gBaseSeed; }
void setBaseSeed(uint64_t seed) { gBaseSeed = seed; }

std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, v);
  return text;
}

std::string alloyFailure(const char* call, alloyResult_t result) {
  std::ostringstream os;
  os << call << " returned " << static_cast<int>(result) << " (" << alloyGetErrorString(result)
     << "): " << alloyGetLastError(nullptr);
  return os.str();
}

void genBytes(uint64_t stream, size_t offset, size_t n, uint8_t* out) {
  size_t i = 0;
  uint64_t w = offset / 8;
  size_t inWord = offset % 8;
  if (inWord != 0 && n > 0) {
    uint64_t v = word(stream, w++);
    uint8_t bytes[8];
    std::memcpy(bytes, &v, 8);
    for (; inWord < 8 && i < n; ++inWord, ++i) out[i] = bytes[inWord];
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t v = word(stream, w++);
    std::memcpy(out + i, &v, 8);
  }
  if (i < n) {
    uint64_t v = word(stream, w);
    std::memcpy(out + i, &v, n - i);
  }
}

std::vector<uint8_t> genVector(uint64_t stream, size_t n, size_t offset) {
  std::vector<uint8_t> v(n);
  genBytes(stream, offset, n, v.data());
  return v;
}

std::vector<uint8_t> uint32SumOfRanks(uint64_t seed, uint64_t tag, int n, size_t count) {
  std::vector<uint32_t> sum(count, 0);
  for (int p = 0; p < n; ++p) {
    const std::vector<uint8_t> in = genVector(streamOf(seed, tag, p), count * 4);
    for (size_t e = 0; e < count; ++e) {
      uint32_t v;
      std::memcpy(&v, in.data() + 4 * e, 4);
      sum[e] += v;
    }
  }
  std::vector<uint8_t> bytes(count * 4);
  std::memcpy(bytes.data(), sum.data(), bytes.size());
  return bytes;
}

::testing::AssertionResult bytesEqual(const uint8_t* expected, const uint8_t* actual, size_t n,
                                      const std::string& what) {
  size_t bad = 0, first = 0, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (expected[i] != actual[i]) {
      if (bad == 0) first = i;
      last = i;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure();
  r << what << ": " << bad << " of " << n << " bytes differ; first at offset " << first << " (expected "
    << byteHex(expected[first]) << ", got " << byteHex(actual[first]) << ")";
  if (last != first)
    r << ", last at offset " << last << " (expected " << byteHex(expected[last]) << ", got "
      << byteHex(actual[last]) << ")";
  if (actual[first] == kPoison) r << " [got the poison byte: nothing was written there?]";
  return r;
}

::testing::AssertionResult allPoison(const uint8_t* actual, size_t n, const std::string& what) {
  std::vector<uint8_t> expected(n, kPoison);
  return bytesEqual(expected.data(), actual, n, what + " (must keep the poison)");
}

namespace {
// A decimal environment variable as the library reads it, or fallback when unset or not a number.
size_t envBytes(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  return end != text && *end == '\0' ? static_cast<size_t>(v) : fallback;
}
}  // namespace

EngineSizes engineSizes() {
  EngineSizes e;
  e.llMaxBytes = envBytes("ALLOY_LL_MAX_BYTES", 256 << 10);
  e.llChunkBytes = alloy::kLlChunkBytes;
  e.slotBytes = std::max<size_t>(envBytes("ALLOY_SLOT_BYTES", 512 << 10) / 4096 * 4096, 4096);
  return e;
}

std::vector<size_t> boundarySizes(size_t unit) {
  const EngineSizes e = engineSizes();
  std::vector<size_t> boundaries = {4096, 3 * 4096, e.llChunkBytes, 2 * e.llChunkBytes, e.slotBytes};
  if (e.llMaxBytes > 0) boundaries.push_back(e.llMaxBytes);
  std::vector<size_t> sizes;
  for (size_t b : boundaries) {
    b = b / unit * unit;
    for (size_t s : {b - unit, b, b + unit})
      if (s > 0) sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

size_t typeSize(alloyDataType_t type) {
  switch (type) {
    case alloyInt8: case alloyUint8: case alloyFloat8e4m3: case alloyFloat8e5m2: return 1;
    case alloyFloat16: case alloyBfloat16: return 2;
    case alloyInt32: case alloyUint32: case alloyFloat32: return 4;
    case alloyInt64: case alloyUint64: case alloyFloat64: return 8;
    default: return 0;
  }
}

const char* typeName(alloyDataType_t type) {
  static const char* const names[] = {"int8",    "uint8",   "int32",    "uint32",     "int64",     "uint64",
                                      "float16", "float32", "float64",  "bfloat16",   "float8e4m3", "float8e5m2"};
  return type >= 0 && type < alloyNumTypes ? names[type] : "invalid";
}

// ---------------------------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) {
    cudaGetLastError();
    ADD_FAILURE() << "cudaMalloc(" << bytes << ") failed";
    bytes_ = 0;
    return;
  }
  ptr_ = static_cast<uint8_t*>(p);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::poison(cudaStream_t stream) const {
  if (ptr_ == nullptr) return;
  CUDA_EXPECT_OK(cudaMemsetAsync(ptr_, kPoison, bytes_, stream));
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
}

std::vector<uint8_t> DeviceBuffer::download(cudaStream_t stream) const {
  std::vector<uint8_t> host(bytes_);
  if (ptr_ == nullptr) return host;
  // On the test's stream, after everything enqueued before; complete when this returns.
  CUDA_EXPECT_OK(cudaMemcpyAsync(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost, stream));
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
  return host;
}

void DeviceBuffer::upload(const std::vector<uint8_t>& host, size_t offset, cudaStream_t stream) const {
  if (ptr_ == nullptr || host.empty()) return;
  EXPECT_LE(offset + host.size(), bytes_) << "upload past the end of a DeviceBuffer";
  if (offset + host.size() > bytes_) return;
  // cudaMemcpy from pageable memory may return before the data reach the device: copy on the stream
  // and wait for it.
  CUDA_EXPECT_OK(cudaMemcpyAsync(ptr_ + offset, host.data(), host.size(), cudaMemcpyHostToDevice, stream));
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) {
    cudaGetLastError();
    ADD_FAILURE() << "cudaMallocHost(" << bytes << ") failed";
    bytes_ = 0;
    return;
  }
  ptr_ = static_cast<uint8_t*>(p);
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
}

// ---------------------------------------------------------------------------------------------------

void CommTest::SetUp() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  seed = mix64(baseSeed() ^ hashName(std::string(info->test_suite_name()) + "." + info->name()));
  std::ostringstream os;
  os << "rank " << rank << " of " << nranks << "; test seed " << hex(seed) << " (replay with ALLOY_TEST_SEED="
     << hex(baseSeed()) << " --gtest_filter=" << info->test_suite_name() << "." << info->name() << ")";
  trace_ = std::make_unique<::testing::ScopedTrace>(__FILE__, __LINE__, os.str());

  ALLOY_ASSERT_OK(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm));
  ALLOY_ASSERT_OK(alloyCommCuDevice(comm, &device));
  ASSERT_GE(device, 0) << "a GPU communicator was expected";
  CUDA_ASSERT_OK(cudaSetDevice(device));
  CUDA_ASSERT_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
}

void CommTest::TearDown() {
  if (stream != nullptr) {
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    CUDA_EXPECT_OK(cudaStreamDestroy(stream));
    stream = nullptr;
  }
  if (comm != nullptr) {
    alloyResult_t asyncError = alloySuccess;
    ALLOY_EXPECT_OK(alloyCommGetAsyncError(comm, &asyncError));
    EXPECT_EQ(asyncError, alloySuccess) << "the communicator recorded an asynchronous error: "
                                        << alloyGetErrorString(asyncError);
    ALLOY_EXPECT_OK(alloyCommDestroy(comm));
    comm = nullptr;
  }
  // Rank 0's report names the test as failed when any rank failed it.
  const int failed = HasFailure() ? 1 : 0;
  std::vector<int> all(nranks, 0);
  MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rank == 0) {
    std::ostringstream others;
    for (int r = 1; r < nranks; ++r)
      if (all[r]) others << " " << r;
    if (!others.str().empty())
      ADD_FAILURE() << kOtherRanksFailed << others.str() << " (their messages follow the test summary)";
  }
  trace_.reset();
}

alloyResult_t CommTest::createCommWithTimeout(long long timeoutMs, alloyComm_t* c) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  return alloyCommCreateFromMPI(MPI_COMM_WORLD, &config, c);
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  setenv(name, value.c_str(), 1);
  alloy::refreshCallEnvironment();
}

ScopedEnv::~ScopedEnv() {
  unsetenv(name_);
  alloy::refreshCallEnvironment();
}

void CommTest::withSmallDirectAreas(size_t areaBytes, const std::function<void()>& body) {
  alloyComm_t small = nullptr;
  {
    ScopedEnv areas("ALLOY_DIRECT_BYTES", areaBytes);
    ALLOY_ASSERT_OK(createCommWithTimeout(120000, &small));
  }
  std::swap(comm, small);
  {
    ScopedEnv anyWindow("ALLOY_DIRECT_WINDOW_MIN_BYTES", 0);  // windows this small lose to the rings
    body();
  }
  std::swap(comm, small);
  ALLOY_EXPECT_OK(alloyCommDestroy(small));
}

double CommTest::secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string CommTest::expectTimedOut(alloyComm_t c, double waited) {
  alloyResult_t asyncError = alloySuccess;
  ALLOY_EXPECT_OK(alloyCommGetAsyncError(c, &asyncError));
  EXPECT_EQ(asyncError, alloyTimeout);
  const std::string message = alloyGetLastError(c);
  std::printf("[ fault     ] after %.2f s: %s\n", waited, message.c_str());
  return message;
}

bool CommTest::allRanksOk(bool ok) const {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

std::vector<uint8_t> CommTest::alltoallExpected(uint64_t tag, int me, int n, size_t blockBytes) const {
  std::vector<uint8_t> expected(static_cast<size_t>(n) * blockBytes);
  for (int p = 0; p < n; ++p)
    genBytes(streamOf(seed, tag, p), static_cast<size_t>(me) * blockBytes, blockBytes,
             expected.data() + static_cast<size_t>(p) * blockBytes);
  return expected;
}

void CommTest::alltoallRoundTrip(size_t count, alloyDataType_t type, uint64_t tag, size_t sendOffset,
                                 size_t recvOffset) {
  alltoallRoundTripOn(comm, rank, nranks, count, type, tag, sendOffset, recvOffset);
}

void CommTest::alltoallRoundTripOn(alloyComm_t c, int crank, int cnranks, size_t count, alloyDataType_t type,
                                   uint64_t tag, size_t sendOffset, size_t recvOffset) {
  SCOPED_TRACE("alltoall of " + std::to_string(count) + " x " + typeName(type) + ", sendbuff +" +
               std::to_string(sendOffset) + " B, recvbuff +" + std::to_string(recvOffset) + " B");
  const size_t block = count * typeSize(type);
  const size_t total = block * cnranks;
  DeviceBuffer send(sendOffset + total);
  DeviceBuffer recv(recvOffset + total + kGuard);
  const bool ready = send.ok() && recv.ok();
  if (ready) {
    send.upload(genVector(streamOf(seed, tag, crank), total), sendOffset, stream);
    recv.poison(stream);
  }
  const alloyResult_t r =
      ready ? alloyAlltoAll(send.get() + sendOffset, recv.get() + recvOffset, count, type, c, stream)
            : alloyInternalError;
  EXPECT_EQ(r, alloySuccess) << alloyFailure("alloyAlltoAll", r);
  if (!ready) return;
  const std::vector<uint8_t> got = recv.download(stream);
  const std::vector<uint8_t> expected = alltoallExpected(tag, crank, cnranks, block);
  EXPECT_TRUE(allPoison(got.data(), recvOffset, "bytes before recvbuff"));
  EXPECT_TRUE(bytesEqual(expected.data(), got.data() + recvOffset, total, "recvbuff"));
  EXPECT_TRUE(allPoison(got.data() + recvOffset + total, kGuard, "guard bytes after recvbuff"));
}

}  // namespace alloytest
