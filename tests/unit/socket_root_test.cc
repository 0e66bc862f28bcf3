// The unique-id bootstrap inside one process, ranks on threads: a root refuses a wrong secret and keeps
// serving, times out when ranks are missing or nobody listens, fails every rank when they disagree, and
// two host-only ranks of one communicator in one process are created and end together.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "bootstrap_test_util.h"
#include "comm.h"
#include "error.h"
#include "root.h"
#include "socket.h"
#include "socket_bootstrap.h"

namespace {

using alloy::kUniqueIdBytes;
using bootstrap_test::Joined;
using bootstrap_test::join;
using bootstrap_test::ShortTimeout;

bool has(const std::string& message, const char* text) { return message.find(text) != std::string::npos; }

// Scoped ALLOY_BOOTSTRAP_IFNAME.
struct Interface {
  explicit Interface(const char* name) { setenv("ALLOY_BOOTSTRAP_IFNAME", name, 1); }
  ~Interface() { unsetenv("ALLOY_BOOTSTRAP_IFNAME"); }
};

TEST(SocketRoot, InterfaceChoice) {
  alloy::SocketAddress address;
  {
    Interface loopback("lo");
    ASSERT_EQ(alloy::chooseBootstrapAddress(&address), alloySuccess) << alloy::lastError();
    EXPECT_EQ(address.describe(), "127.0.0.1:0");
    // A job can live on loopback alone: root and ranks listen there.
    uint8_t id[kUniqueIdBytes];
    ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
    alloy::UniqueIdContents contents;
    ASSERT_EQ(alloy::decodeUniqueId(id, "commId", &contents), alloySuccess);
    EXPECT_EQ(contents.root.describe().rfind("127.0.0.1:", 0), 0u) << contents.root.describe();
    Joined a;
    std::thread other([&] { a = join(id, 2, 1); });
    Joined b = join(id, 2, 0);
    other.join();
    EXPECT_EQ(a.result, alloySuccess) << a.message;
    EXPECT_EQ(b.result, alloySuccess) << b.message;
  }
  {
    Interface missing("nosuchif");
    EXPECT_EQ(alloy::chooseBootstrapAddress(&address), alloyInvalidArgument);
    EXPECT_TRUE(has(alloy::lastError(), "ALLOY_BOOTSTRAP_IFNAME=nosuchif")) << alloy::lastError();
    uint8_t id[kUniqueIdBytes];
    EXPECT_EQ(alloy::startRoot(id), alloyInvalidArgument);
  }
  // Unset: never loopback while another interface is up with an IPv4 address (CI machines have one), which the
  // kernel's own list says here.
  bool otherIpv4 = false;
  ifaddrs* list = nullptr;
  ASSERT_EQ(getifaddrs(&list), 0);
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next)
    otherIpv4 |= ifa->ifa_addr != nullptr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP) &&
                 !(ifa->ifa_flags & IFF_LOOPBACK);
  freeifaddrs(list);
  if (!otherIpv4) GTEST_SKIP() << "this machine has no up interface with IPv4 but loopback";
  ASSERT_EQ(alloy::chooseBootstrapAddress(&address), alloySuccess) << alloy::lastError();
  EXPECT_EQ(address.family(), AF_INET);
  EXPECT_NE(address.describe().rfind("127.", 0), 0u) << address.describe();
}

TEST(SocketRoot, WrongSecretIsRefusedAndTheRootServesTheRightOne) {
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  uint8_t forged[kUniqueIdBytes];
  bootstrap_test::forge(id, 1, forged);
  Joined refused = join(forged, 1, 0);
  EXPECT_EQ(refused.result, alloyInvalidArgument) << refused.message;
  EXPECT_TRUE(has(refused.message, "secret does not match")) << refused.message;

  Joined accepted = join(id, 1, 0);
  ASSERT_EQ(accepted.result, alloySuccess) << accepted.message;
  alloyComm_t comm = nullptr;
  ASSERT_EQ(alloy::commCreate(std::move(accepted.bootstrap), nullptr, &comm), alloySuccess) << alloy::lastError();
  int count = -1;
  EXPECT_EQ(alloyCommCount(comm, &count), alloySuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(alloyCommDestroy(comm), alloySuccess);
}

TEST(SocketRoot, NobodyListeningTimesOutNamingTheVariable) {
  ShortTimeout timeout("300");
  alloy::SocketAddress loopback, bound;
  const uint8_t localhost[4] = {127, 0, 0, 1};
  ASSERT_EQ(alloy::SocketAddress::fromRaw(AF_INET, localhost, 1, "test", &loopback), alloySuccess);
  loopback.setPort(0);
  uint8_t id[kUniqueIdBytes];
  {
    alloy::Socket listener;
    ASSERT_EQ(alloy::listenOn(loopback, &listener, &bound), alloySuccess) << alloy::lastError();
    alloy::UniqueIdContents contents;
    contents.root = bound;
    alloy::encodeUniqueId(contents, id);
  }  // closed: nobody listens on that port any more
  const auto start = std::chrono::steady_clock::now();
  Joined j = join(id, 2, 1);
  EXPECT_EQ(j.result, alloyTimeout) << j.message;
  EXPECT_TRUE(has(j.message, "ALLOY_BOOTSTRAP_TIMEOUT_MS")) << j.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(SocketRoot, MissingRanksTimeOutAtTheRoot) {
  ShortTimeout timeout("300");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  Joined j = join(id, 3, 2);
  EXPECT_EQ(j.result, alloyTimeout) << j.message;
  EXPECT_TRUE(has(j.message, "only 1 of 3 ranks")) << j.message;
}

TEST(SocketRoot, RanksThatDisagreeAllFail) {
  struct Case {
    int nranks[2];
    int rank[2];
    const char* says;
  };
  for (const Case& c : {Case{{2, 3}, {0, 1}, "gave nranks"}, Case{{2, 2}, {1, 1}, "two ranks gave rank 1"}}) {
    uint8_t id[kUniqueIdBytes];
    ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
    Joined a;
    std::thread other([&] { a = join(id, c.nranks[0], c.rank[0]); });
    Joined b = join(id, c.nranks[1], c.rank[1]);
    other.join();
    for (const Joined* j : {&a, &b}) {
      EXPECT_EQ(j->result, alloyInvalidUsage) << j->message;
      EXPECT_TRUE(has(j->message, c.says)) << j->message;
    }
  }
}

// ncclCommInitRankScalable's other ids: their roots, retired, answer no more.
TEST(SocketRoot, RetiredRootAnswersNoMore) {
  ShortTimeout timeout("300");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  alloy::retireRoot(id);
  Joined j = join(id, 2, 0);
  EXPECT_NE(j.result, alloySuccess);
  EXPECT_TRUE(has(j.message, "bootstrap root")) << j.message;
}

// A child forked while a root waits (a data-loader worker) inherits the registry of root threads but not the
// threads: its exit must neither join them (they are not its own) nor destroy them (std::terminate).
TEST(SocketRoot, ForkedChildExitsCleanlyWhileARootWaits) {
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) std::exit(7);  // runs the atexit handlers, as a normal exit does
  int status = 0;
  for (int waited = 0; waited < 100 && waitpid(child, &status, WNOHANG) == 0; ++waited) usleep(50000);
  if (!WIFEXITED(status)) kill(child, SIGKILL);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << "status " << status;
}

// Several ranks of one communicator may share a process (on GPUs of their own; host-only ranks have none to
// share): two ranks on threads are created, know their places, and end together.
TEST(SocketRoot, TwoRanksOfOneCommunicatorInOneProcessAreCreated) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) cudaGetLastError();
  if (devices > 0) GTEST_SKIP() << "host-only ranks only: with a GPU both would take the same device here "
                                   "(nccl_api_test's checkRanksTogether creates them on GPUs of their own)";
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  alloyResult_t results[2] = {alloyInternalError, alloyInternalError};
  alloyResult_t destroyed[2] = {alloyInternalError, alloyInternalError};
  int ranks[2] = {-1, -1}, counts[2] = {-1, -1};
  std::string messages[2];
  auto rank = [&](int r) {
    std::unique_ptr<alloy::Bootstrap> bootstrap;
    alloyComm_t comm = nullptr;
    alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
    config.timeoutMs = 20000;
    results[r] = alloy::SocketBootstrap::join(id, 2, r, &bootstrap);
    if (results[r] == alloySuccess) results[r] = alloy::commCreate(std::move(bootstrap), &config, &comm);
    messages[r] = alloy::lastError();
    if (results[r] != alloySuccess) return;
    alloyCommUserRank(comm, &ranks[r]);
    alloyCommCount(comm, &counts[r]);
    destroyed[r] = alloyCommDestroy(comm);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], alloySuccess) << messages[r];
    EXPECT_EQ(ranks[r], r);
    EXPECT_EQ(counts[r], 2);
    EXPECT_EQ(destroyed[r], alloySuccess);
  }
}

}  // namespace
