// Which backend ALLOY_NET (auto, ucx, verbs, none) selects for the path between hosts, and how the
// blob bytes it produces are checked when ranks connect (lib/assembly/net_setup.h). One process and no MPI:
// the ranks of a three-rank communicator spread over two hosts are prepared side by side here, with host
// memory (cudaDevice -1). envChoice reads the variable on every call (nothing cached), so each test sets
// ALLOY_NET itself; the fixture puts back what the environment held before.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "endpoint.h"
#include "error.h"
#include "log.h"
#include "net_channel.h"
#include "net_probe.h"
#include "net_setup.h"

namespace {

using alloy::EndpointBlob;
using alloy::NetSetup;

constexpr long long kTimeoutMs = 20000;
// Ranks 0 and 1 share a host; rank 2 is on another.
const std::vector<uint64_t> kHostOf = {0x1111, 0x1111, 0x2222};

// Sets (value != nullptr) or unsets a variable, and restores its earlier state when destroyed.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    hadValue_ = old != nullptr;
    if (hadValue_) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(hadValue_ ? old_.c_str() : nullptr); }
  void set(const char* value) {
    if (value != nullptr) setenv(name_, value, 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool hadValue_ = false;
  std::string old_;
};

::testing::AssertionResult lastErrorSays(const char* text) {
  const std::string message = alloy::lastError();
  if (message.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the last error \"" << message << "\" does not mention \"" << text << "\"";
}

::testing::AssertionResult mentions(const std::string& text, const char* part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not mention \"" << part << "\"";
}

class NetSetupTest : public ::testing::Test {
 protected:
  // prepareNet for `rank` of kHostOf under ALLOY_NET=choice (nullptr: unset), from a clean last error
  // so that any message read afterwards comes from this call.
  NetSetup prepare(const char* choice, int rank) {
    alloyNet_.set(choice);
    alloy::clearLastError();
    return alloy::prepareNet(rank, kHostOf, -1, kTimeoutMs, &blobs_[rank]);
  }

  // A backend was chosen and started: a channel, no reason for its absence, and the blob carries an
  // address and a key that fit their fields.
  void expectChannel(const NetSetup& setup, int rank) {
    ASSERT_EQ(setup.result, alloySuccess) << alloy::lastError();
    EXPECT_NE(setup.channel, nullptr);
    EXPECT_EQ(setup.unavailable, "");
    const EndpointBlob& b = blobs_[rank];
    EXPECT_GT(b.netAddressBytes, 0u);
    EXPECT_LE(b.netAddressBytes, static_cast<uint32_t>(alloy::kNetAddressBytes));
    EXPECT_GT(b.netKeyBytes, 0u);
    EXPECT_LE(b.netKeyBytes, static_cast<uint32_t>(alloy::kNetKeyBytes));
  }

  void expectNoBytes(int rank) {
    EXPECT_EQ(blobs_[rank].netAddressBytes, 0u);
    EXPECT_EQ(blobs_[rank].netKeyBytes, 0u);
  }

  // Every rank of kHostOf under `choice`; then each connects to its peers on the other host from their
  // blobs, which shows that the bytes are a usable address and key, not just a size.
  void expectWorkingBackend(const char* choice) {
    std::vector<NetSetup> setups;
    for (int rank = 0; rank < static_cast<int>(kHostOf.size()); ++rank) {
      setups.push_back(prepare(choice, rank));
      expectChannel(setups.back(), rank);
      if (HasFatalFailure() || setups.back().channel == nullptr) return;
    }
    for (int rank = 0; rank < static_cast<int>(kHostOf.size()); ++rank)
      EXPECT_EQ(alloy::connectNet(setups[rank].channel.get(), blobs_, kHostOf, rank), alloySuccess)
          << "rank " << rank << ": " << alloy::lastError();
  }

  std::vector<EndpointBlob> blobs_ = std::vector<EndpointBlob>(kHostOf.size(), EndpointBlob{});
  ScopedEnv alloyNet_{"ALLOY_NET", nullptr};
};

// Without a usable RDMA device (no machine of this project has one) verbs fails, with what the probe found.
TEST_F(NetSetupTest, VerbsWithoutADeviceIsRefused) {
  const alloy::NetProbe probe = alloy::probeVerbs();
  if (probe.usable) GTEST_SKIP() << "this machine has a usable RDMA device: " << probe.detail;
  const NetSetup setup = prepare("verbs", 0);
  EXPECT_EQ(setup.result, alloyNotSupported);
  EXPECT_EQ(setup.channel, nullptr);
  // A backend that was asked for and cannot start is a failure, not an absent path.
  EXPECT_EQ(setup.unavailable, "");
  EXPECT_TRUE(lastErrorSays("ALLOY_NET=verbs: no RDMA device with an active port was found ("));
  EXPECT_TRUE(lastErrorSays(probe.detail.c_str()));
  EXPECT_TRUE(lastErrorSays("; use ALLOY_NET=ucx or auto"));
  // The C API reports the same message.
  EXPECT_STREQ(alloyGetLastError(nullptr), alloy::lastError());
  expectNoBytes(0);
}

TEST_F(NetSetupTest, NoneTurnsThePathOff) {
  const NetSetup setup = prepare("none", 0);
  EXPECT_EQ(setup.result, alloySuccess);
  EXPECT_EQ(setup.channel, nullptr);
  EXPECT_TRUE(mentions(setup.unavailable, "ALLOY_NET=none"));
  EXPECT_TRUE(mentions(setup.unavailable, "off"));
  EXPECT_STREQ(alloy::lastError(), "");
  expectNoBytes(0);
}

TEST_F(NetSetupTest, UcxGivesAChannel) { expectWorkingBackend("ucx"); }

TEST_F(NetSetupTest, AutoGivesAChannelWhereUcxWorks) { expectWorkingBackend("auto"); }

TEST_F(NetSetupTest, UnsetMeansAuto) { expectWorkingBackend(nullptr); }

// Where UCX cannot start (no transport it knows of), auto goes without a path between hosts and says
// why, while ucx, asked for by name, fails.
TEST_F(NetSetupTest, AutoFallsBackWhereUcxCannotStartButUcxFails) {
  const ScopedEnv tls("UCX_TLS", "no_such_transport");
  const NetSetup automatic = prepare("auto", 0);
  EXPECT_EQ(automatic.result, alloySuccess) << alloy::lastError();
  EXPECT_EQ(automatic.channel, nullptr);
  EXPECT_TRUE(mentions(automatic.unavailable, "ALLOY_NET=auto found no transport between hosts: UCX transport"));
  EXPECT_STREQ(alloy::lastError(), "") << "auto's fallback left its cause as the last error";
  expectNoBytes(0);

  const NetSetup ucx = prepare("ucx", 1);
  EXPECT_EQ(ucx.result, alloyNotSupported);
  EXPECT_EQ(ucx.channel, nullptr);
  EXPECT_EQ(ucx.unavailable, "");
  EXPECT_TRUE(lastErrorSays("UCX transport"));
  expectNoBytes(1);
}

// A value that is none of the words fails, naming the variable, the value and the words: a misspelt
// transport must not quietly become another one (or none). Case matters: "UCX" is not "ucx".
TEST_F(NetSetupTest, UnknownValueFailsNamingTheChoices) {
  for (const char* value : {"infiniband", "verb", "UCX"}) {
    const NetSetup setup = prepare(value, 0);
    EXPECT_EQ(setup.result, alloyInvalidArgument) << "ALLOY_NET=" << value;
    EXPECT_EQ(setup.channel, nullptr);
    EXPECT_TRUE(lastErrorSays((std::string("ALLOY_NET=") + value + ": expected auto, ucx, verbs or none").c_str()))
        << alloy::lastError();
    expectNoBytes(0);
  }
}

// A rank on the other host that prepared under ALLOY_NET=none publishes no address: connecting to it
// fails naming it. Rank 1, on this rank's host, is never connected to, so its empty blob is no error.
TEST_F(NetSetupTest, ConnectRefusesARemoteRankWithoutAddress) {
  const NetSetup mine = prepare("ucx", 0);
  expectChannel(mine, 0);
  ASSERT_NE(mine.channel, nullptr);
  const NetSetup remote = prepare("none", 2);
  ASSERT_EQ(remote.result, alloySuccess);
  ASSERT_EQ(blobs_[2].netAddressBytes, 0u);

  alloy::clearLastError();
  EXPECT_EQ(alloy::connectNet(mine.channel.get(), blobs_, kHostOf, 0), alloyRemoteError);
  EXPECT_TRUE(lastErrorSays("rank 2 on another host offers no transport between hosts"));
  EXPECT_TRUE(lastErrorSays("rank 0 cannot reach it"));
  EXPECT_STREQ(alloyGetLastError(nullptr), alloy::lastError());

  // The same blob with a working backend behind it connects: the refusal came from the empty address.
  const NetSetup fixed = prepare("ucx", 2);
  expectChannel(fixed, 2);
  EXPECT_EQ(blobs_[1].netAddressBytes, 0u);
  EXPECT_EQ(alloy::connectNet(mine.channel.get(), blobs_, kHostOf, 0), alloySuccess) << alloy::lastError();
}

// Only the address gone (the key still there) is refused as well.
TEST_F(NetSetupTest, ConnectRefusesAnAddressOfZeroBytes) {
  const NetSetup mine = prepare("ucx", 0);
  const NetSetup remote = prepare("ucx", 2);
  expectChannel(mine, 0);
  expectChannel(remote, 2);
  ASSERT_NE(mine.channel, nullptr);
  blobs_[2].netAddressBytes = 0;
  alloy::clearLastError();
  EXPECT_EQ(alloy::connectNet(mine.channel.get(), blobs_, kHostOf, 0), alloyRemoteError);
  EXPECT_TRUE(lastErrorSays("rank 2 on another host offers no transport between hosts"));
}

}  // namespace
