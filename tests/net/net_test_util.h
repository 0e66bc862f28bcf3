// A world of transports for the net tests: every rank creates one, exchanges its address with
// MPI_Allgather, connects to every other rank, registers a receive window and imports every peer's key.
//
// Window layout on every rank: one 8-byte counter per source rank (zero at start), then one region of
// kRegionBytes per source rank, poisoned with kPoison. A source writes only its own counter and region.
// Data is fresh each run: the run's seed comes from rank 0 (random, or ALLOY_TEST_SEED to replay) and is
// printed; a message's bytes and offset derive from (seed, test, source, target, index), so that the
// receiver computes what it expects on its own, not from the sender's buffers.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "mpi_test_util.h"
#include "transport.h"

namespace nettest {

using alloy::net::Connection;
using alloy::net::RemoteKey;
using alloy::net::Request;
using alloy::net::Transport;

constexpr size_t kRegionBytes = (2u << 20) + (64u << 10);
constexpr uint8_t kPoison = 0xa5;
// How long a rank waits for anything (a counter, a request) before the test fails instead of hanging.
constexpr double kWaitSeconds = 30.0;

// The run's seed, agreed by all ranks on the first call (collective then), mixed with the running test's name.
uint64_t testSeed();
uint64_t mix64(uint64_t x);
// Bytes of message `index` from source to target in the current test.
std::vector<uint8_t> messageBytes(uint64_t seed, int source, int target, uint64_t index, size_t bytes);

class NetTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // The back-pressure bound the fixture's transport is created with.
  virtual int maxOutstanding() const { return 64; }

  // Byte offsets in a window of rank `source`'s counter and region.
  size_t counterOffset(int source) const { return 8 * static_cast<size_t>(source); }
  size_t regionOffset(int source) const { return regionStart_ + kRegionBytes * static_cast<size_t>(source); }
  uint8_t* region(int source) { return reinterpret_cast<uint8_t*>(window_.data()) + regionOffset(source); }
  uint64_t counter(int source) const { return __atomic_load_n(&window_[source], __ATOMIC_ACQUIRE); }

  // Retries call while it returns alloyInProgress (progressing in between) and returns its final result.
  alloyResult_t retry(const std::function<alloyResult_t()>& call);
  // Progresses until cond holds; false (and a test failure naming what) after kWaitSeconds.
  bool waitUntil(const std::function<bool()>& cond, const char* what);
  // Tests req until done; its result.
  alloyResult_t wait(Request* req);
  // MPI_Barrier that keeps progressing the transport: UCX emulates RMA with active messages over tcp and
  // shared memory, so a peer's puts land (and its flushes complete) only while this rank progresses.
  void barrier();
  // Flushes the connection to peer and waits for it: what orders a later signal after earlier puts.
  void flushTo(int peer);
  // Flushes every connection and waits for it.
  void flushAll();
  // Checks that region(source)[offset, offset + expected.size()) holds expected; reports the first
  // differing byte.
  void expectBytes(int source, size_t offset, const std::vector<uint8_t>& expected, const char* what);
  // Checks that the region of source still holds only poison.
  void expectUntouched(int source);

  int rank = 0;
  int nranks = 1;
  uint64_t seed = 0;
  std::unique_ptr<Transport> transport;
  std::vector<Connection*> connections;  // [peer], nullptr for this rank
  std::vector<RemoteKey*> keys;          // [peer]: the peer's window
  std::vector<uint8_t> addresses;        // every rank's address, addressBytes each
  size_t addressBytes = 0;

 private:
  void exchangeKeys(const std::vector<uint8_t>& packedKey);
  void reportTransports();

  std::vector<uint64_t> window_;  // uint64_t: the counters are 8-byte aligned
  size_t regionStart_ = 0;
};

// The fixture with a back-pressure bound of 4.
class NetBackPressureTest : public NetTest {
 protected:
  int maxOutstanding() const override { return 4; }
};

}  // namespace nettest
