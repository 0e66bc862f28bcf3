// ALLOY_NET=verbs and auto on a machine without a usable RDMA device, under mpirun with the ranks split
// into virtual hosts (ALLOY_HOSTID), so that every rank has peers on another host and takes the path
// between hosts. verbs must fail on every rank alike, with alloyNotSupported and the probe's finding in
// the message (a rank that failed while its peers went on would leave them waiting); auto must take UCX
// and say at INFO level why not verbs. Where the machine has a usable device the tests skip: there verbs
// is expected to start (scripts/gpu-check.sh hosts with ALLOY_NET=verbs checks it end to end).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "comm.h"
#include "endpoint.h"
#include "error.h"
#include "log.h"
#include "mpi_test_util.h"
#include "net_channel.h"
#include "net_probe.h"
#include "net_setup.h"

namespace {

constexpr long long kTimeoutMs = 20000;
constexpr int kMessageBytes = 512;

// Every rank's host identity as communicator creation computes it (ALLOY_HOSTID included).
std::vector<uint64_t> gatherHosts() {
  alloy::EndpointBlob mine;
  alloy::fillHostIdentity(&mine);
  std::vector<uint64_t> hostOf(worldSize());
  MPI_Allgather(&mine.hostHash, 1, MPI_UINT64_T, hostOf.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  return hostOf;
}

// Checks on rank 0 that every rank returned `expected` and recorded exactly `text`.
void expectEveryRank(alloyResult_t mine, const std::string& myText, alloyResult_t expected, const std::string& text,
                     const char* step) {
  const int n = worldSize();
  std::vector<int> results(n);
  const int result = mine;
  MPI_Allgather(&result, 1, MPI_INT, results.data(), 1, MPI_INT, MPI_COMM_WORLD);
  char buffer[kMessageBytes] = {};
  std::snprintf(buffer, sizeof buffer, "%s", myText.c_str());
  std::vector<char> texts(static_cast<size_t>(n) * kMessageBytes);
  MPI_Allgather(buffer, kMessageBytes, MPI_CHAR, texts.data(), kMessageBytes, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[r], expected) << step << ": rank " << r;
    EXPECT_EQ(std::string(&texts[static_cast<size_t>(r) * kMessageBytes]), text) << step << ": rank " << r;
  }
}

// Sets ALLOY_NET for one test and unsets it afterwards.
class VerbsSelection : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = alloy::probeVerbs();
    if (probe_.usable) GTEST_SKIP() << "this machine has a usable RDMA device: " << probe_.detail;
    hostOf_ = gatherHosts();
    bool spans = false;
    for (uint64_t h : hostOf_) spans = spans || h != hostOf_[0];
    ASSERT_TRUE(spans) << "the ranks share one host: run with ALLOY_HOSTID set per rank";
  }
  void TearDown() override { unsetenv("ALLOY_NET"); }

  // What the message says where no device is usable: the probe's finding, or that verbs is not built.
  std::string noVerbs() const {
    return probe_.built ? "no RDMA device with an active port was found (" + probe_.detail + ")" : probe_.detail;
  }

  alloy::NetProbe probe_;
  std::vector<uint64_t> hostOf_;
};

TEST_F(VerbsSelection, VerbsWithoutADeviceFailsOnEveryRankSayingWhy) {
  setenv("ALLOY_NET", "verbs", 1);
  const std::string expected = "ALLOY_NET=verbs: " + noVerbs() + "; use ALLOY_NET=ucx or auto";
  if (worldRank() == 0) std::printf("ALLOY_NET=verbs fails with: %s\n", expected.c_str());

  // The network's set-up as creation runs it on a GPU rank (prepareNet), here with host memory.
  alloy::EndpointBlob blob{};
  alloy::clearLastError();
  const alloy::NetSetup setup = alloy::prepareNet(worldRank(), hostOf_, -1, kTimeoutMs, &blob);
  EXPECT_EQ(setup.channel, nullptr);
  EXPECT_EQ(setup.unavailable, "") << "a backend asked for by name that cannot start is a failure";
  EXPECT_EQ(blob.netAddressBytes, 0u);
  expectEveryRank(setup.result, alloy::lastError(), alloyNotSupported, expected, "prepareNet");

  // The whole creation. On GPU ranks it prepares the network as above, and every rank votes on the result
  // before any rank goes on (comm_create.cc, agree): all fail alike, each with its own message. A rank
  // without a GPU makes a host-only communicator, which has no path between hosts to set up: creation
  // succeeds there, and the communicator has no network channel.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  alloyComm_t comm = nullptr;
  const alloyResult_t created = alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm);
  if (devices > 0) {
    expectEveryRank(created, alloyGetLastError(nullptr), alloyNotSupported, expected, "alloyCommCreateFromMPI");
    EXPECT_EQ(comm, nullptr);
  } else {
    expectEveryRank(created, alloyGetLastError(nullptr), alloySuccess, "", "alloyCommCreateFromMPI (host-only)");
    ASSERT_NE(comm, nullptr);
    EXPECT_EQ(comm->net, nullptr);
  }
  if (comm != nullptr) EXPECT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}

// What stderr receives while `run` runs.
template <typename Run>
std::string captureStderr(Run run) {
  char path[] = "/tmp/alloy-verbs-selection-XXXXXX";
  const int file = mkstemp(path);
  if (file < 0) return "(mkstemp failed)";
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(file, 2);
  run();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

TEST_F(VerbsSelection, AutoSaysAtInfoWhyNotVerbs) {
  ASSERT_GE(alloy::logLevel(), alloy::LogLevel::Info) << "run with ALLOY_DEBUG=INFO";
  setenv("ALLOY_NET", "auto", 1);
  alloy::EndpointBlob blob{};
  alloy::NetSetup setup;
  const std::string log = captureStderr([&] { setup = alloy::prepareNet(worldRank(), hostOf_, -1, kTimeoutMs, &blob); });
  ASSERT_EQ(setup.result, alloySuccess) << alloy::lastError();
  if (setup.channel != nullptr) {
    const std::string line = "INFO ALLOY_NET=auto: UCX carries the traffic between hosts, not verbs: " + noVerbs() + "\n";
    EXPECT_NE(log.find(line), std::string::npos) << "expected \"" << line << "\" in the log:\n" << log;
    if (worldRank() == 0) std::printf("ALLOY_NET=auto logs: %s", line.c_str());
  } else {
    // No UCX either: the path between hosts is off, and the reason names both.
    EXPECT_NE(setup.unavailable.find("; not verbs: " + noVerbs()), std::string::npos) << setup.unavailable;
  }
  EXPECT_EQ(log.find("ALLOY_NET=verbs"), std::string::npos) << "auto must not fail as verbs does:\n" << log;
}

}  // namespace
