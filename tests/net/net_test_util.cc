#include "net_test_util.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "ucx_transport.h"

namespace nettest {
namespace {

uint64_t runSeed() {
  static bool agreed = false;
  static uint64_t seed = 0;
  if (agreed) return seed;
  if (worldRank() == 0) {
    const char* fixed = std::getenv("ALLOY_TEST_SEED");
    if (fixed != nullptr && fixed[0] != '\0') {
      seed = std::strtoull(fixed, nullptr, 0);
    } else {
      std::random_device device;
      seed = mix64((static_cast<uint64_t>(device()) << 32 ^ device()) ^
                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    }
    std::printf("net: seed 0x%llx (replay with ALLOY_TEST_SEED=0x%llx)\n", static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed));
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  agreed = true;
  return seed;
}

}  // namespace

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t testSeed() {
  uint64_t seed = runSeed();
  for (const char* c = ::testing::UnitTest::GetInstance()->current_test_info()->name(); *c != '\0'; ++c)
    seed = mix64(seed ^ static_cast<uint8_t>(*c));
  return seed;
}

std::vector<uint8_t> messageBytes(uint64_t seed, int source, int target, uint64_t index, size_t bytes) {
  std::mt19937_64 generator(mix64(seed ^ mix64((static_cast<uint64_t>(source) << 40) ^
                                               (static_cast<uint64_t>(target) << 20) ^ index)));
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; i += 8) {
    const uint64_t word = generator();
    std::memcpy(data.data() + i, &word, std::min<size_t>(8, bytes - i));
  }
  return data;
}

void NetTest::SetUp() {
  rank = worldRank();
  nranks = worldSize();
  seed = testSeed();
  alloy::net::UcxOptions options;
  options.maxOutstanding = maxOutstanding();
  ASSERT_ALLOY(alloySuccess, alloy::net::createUcxTransport(options, &transport));

  std::vector<uint8_t> mine;
  ASSERT_ALLOY(alloySuccess, transport->localAddress(&mine));
  ASSERT_LE(mine.size(), options.maxAddressBytes);
  // Fixed-size records: the size first, as the endpoint blob will carry it.
  addressBytes = sizeof(uint32_t) + options.maxAddressBytes;
  std::vector<uint8_t> record(addressBytes, 0);
  const uint32_t size = static_cast<uint32_t>(mine.size());
  std::memcpy(record.data(), &size, sizeof(size));
  std::memcpy(record.data() + sizeof(size), mine.data(), mine.size());
  addresses.resize(addressBytes * nranks);
  MPI_Allgather(record.data(), static_cast<int>(addressBytes), MPI_BYTE, addresses.data(),
                static_cast<int>(addressBytes), MPI_BYTE, MPI_COMM_WORLD);

  connections.assign(nranks, nullptr);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    uint32_t peerSize = 0;
    std::memcpy(&peerSize, &addresses[addressBytes * peer], sizeof(peerSize));
    const uint8_t* peerAddress = &addresses[addressBytes * peer + sizeof(peerSize)];
    // The interface lets connect() ask to be called again after progress().
    alloyResult_t result = alloySuccess;
    ASSERT_TRUE(waitUntil([&] {
      result = transport->connect(peer, peerAddress, peerSize, &connections[peer]);
      return result != alloySuccess || connections[peer] != nullptr;
    }, "connect"));
    ASSERT_ALLOY(alloySuccess, result) << "peer " << peer;
    ASSERT_NE(connections[peer], nullptr);
  }

  regionStart_ = (8 * static_cast<size_t>(nranks) + 63) / 64 * 64;
  const size_t windowBytes = regionStart_ + kRegionBytes * nranks;
  window_.assign(windowBytes / 8 + 1, 0);
  std::memset(region(0), kPoison, kRegionBytes * nranks);
  alloy::net::Registration* windowReg = nullptr;
  std::vector<uint8_t> packedKey;
  ASSERT_ALLOY(alloySuccess, transport->registerMemory(window_.data(), windowBytes, &windowReg, &packedKey));
  exchangeKeys(packedKey);
  if (::testing::Test::HasFatalFailure()) return;
  reportTransports();
  barrier();
}

void NetTest::exchangeKeys(const std::vector<uint8_t>& packedKey) {
  const int mySize = static_cast<int>(packedKey.size());
  std::vector<int> sizes(nranks), displacements(nranks, 0);
  MPI_Allgather(&mySize, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int p = 1; p < nranks; ++p) displacements[p] = displacements[p - 1] + sizes[p - 1];
  std::vector<uint8_t> all(displacements[nranks - 1] + sizes[nranks - 1]);
  MPI_Allgatherv(packedKey.data(), mySize, MPI_BYTE, all.data(), sizes.data(), displacements.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  keys.assign(nranks, nullptr);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    ASSERT_ALLOY(alloySuccess, transport->importKey(connections[peer], &all[displacements[peer]], sizes[peer],
                                                    &keys[peer]));
  }
}

// A first operation completes UCX's set-up of each connection; then rank 0 names what carries them, so
// that the test output says which UCX transports were used.
void NetTest::reportTransports() {
  flushAll();
  if (rank != 0) return;
  const char* tls = std::getenv("UCX_TLS");
  for (int peer = 1; peer < nranks; ++peer)
    std::printf("net: UCX_TLS=%s: rank 0 -> %d over %s\n", tls != nullptr ? tls : "(unset)", peer,
                transport->describe(connections[peer]).c_str());
}

void NetTest::TearDown() {
  if (transport != nullptr && !connections.empty()) flushAll();
  // No rank closes its endpoints while another may still write into its window.
  barrier();
  transport.reset();
}

alloyResult_t NetTest::retry(const std::function<alloyResult_t()>& call) {
  alloyResult_t result = call();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
  while (result == alloyInProgress && std::chrono::steady_clock::now() < deadline) {
    transport->progressAll();
    result = call();
  }
  return result;
}

bool NetTest::waitUntil(const std::function<bool()>& cond, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "rank " << rank << ": " << what << " did not happen within " << kWaitSeconds << " s";
      return false;
    }
    transport->progressAll();
  }
  return true;
}

alloyResult_t NetTest::wait(Request* req) {
  alloyResult_t result = alloySuccess;
  bool done = false;
  waitUntil([&] {
    result = transport->test(req, &done);
    return done || result != alloySuccess;
  }, "a request's completion");
  return result;
}

void NetTest::barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0; !done; MPI_Test(&request, &done, MPI_STATUS_IGNORE)) {
    if (transport != nullptr) transport->progressAll();
  }
}

void NetTest::flushTo(int peer) {
  Request req;
  EXPECT_ALLOY(alloySuccess, retry([&] { return transport->flush(connections[peer], &req); }));
  EXPECT_ALLOY(alloySuccess, wait(&req)) << "flush to peer " << peer;
}

void NetTest::flushAll() {
  for (int peer = 0; peer < nranks; ++peer)
    if (connections[peer] != nullptr) flushTo(peer);
}

void NetTest::expectBytes(int source, size_t offset, const std::vector<uint8_t>& expected, const char* what) {
  const uint8_t* got = region(source) + offset;
  if (std::memcmp(got, expected.data(), expected.size()) == 0) return;
  size_t first = 0, wrong = 0;
  for (size_t i = expected.size(); i-- > 0;) {
    if (got[i] != expected[i]) {
      first = i;
      ++wrong;
    }
  }
  ADD_FAILURE() << "rank " << rank << ": " << what << " from rank " << source << " (" << expected.size()
                << " bytes at region offset " << offset << "): " << wrong << " bytes differ, first at " << first
                << " (got 0x" << std::hex << int(got[first]) << ", expected 0x" << int(expected[first]) << std::dec
                << "); seed 0x" << std::hex << seed;
}

void NetTest::expectUntouched(int source) {
  const std::vector<uint8_t> poison(kRegionBytes, kPoison);
  expectBytes(source, 0, poison, "the untouched region");
}

}  // namespace nettest
