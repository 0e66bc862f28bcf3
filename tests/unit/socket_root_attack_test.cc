// The unique-id bootstrap under attack from whoever can reach the root's port (ranks on threads of this
// process): connections that say nothing, a flood of them, a trickle that keeps coming, garbage, a wrong
// secret, a holder of the secret declaring a huge job. The job must still form at once where its ranks all
// come, and fail within one timeout, on every rank and with the reason, where they do not.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_test_util.h"
#include "error.h"
#include "root.h"
#include "socket.h"
#include "wire.h"

namespace {

using alloy::kUniqueIdBytes;
using bootstrap_test::Joined;
using bootstrap_test::join;
using Timeout = bootstrap_test::ShortTimeout;
using Clock = std::chrono::steady_clock;

// Ranks 0 .. ranksThatCome - 1 of an nranks job join, each on a thread of its own; the results by rank.
std::vector<Joined> joinAll(const uint8_t* id, int nranks, int ranksThatCome) {
  std::vector<Joined> joined(ranksThatCome);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranksThatCome; ++r) threads.emplace_back([&, r] { joined[r] = join(id, nranks, r); });
  for (std::thread& t : threads) t.join();
  return joined;
}

alloy::SocketAddress rootOf(const uint8_t* id) {
  alloy::UniqueIdContents contents;
  EXPECT_EQ(alloy::decodeUniqueId(id, "commId", &contents), alloySuccess);
  return contents.root;
}

// A connection to the root that sends `bytes` of junk (none: it says nothing) and stays open.
alloy::Socket stranger(const alloy::SocketAddress& root, size_t bytes) {
  alloy::Socket s;
  EXPECT_EQ(alloy::connectTo(root, alloy::deadlineAfterMs(5000), "the root", &s), alloySuccess) << alloy::lastError();
  if (bytes > 0) {
    const std::vector<unsigned char> junk(bytes, 0xA5);
    EXPECT_EQ(alloy::sendAll(s, junk.data(), junk.size(), alloy::deadlineAfterMs(5000), "junk"), alloySuccess);
  }
  return s;
}

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void expectFormed(const std::vector<Joined>& joined) {
  for (size_t r = 0; r < joined.size(); ++r)
    EXPECT_EQ(joined[r].result, alloySuccess) << "rank " << r << ": " << joined[r].message;
}

// Silent connections, a flood of 200 of them, garbage (partial and whole hellos) opened before the ranks
// come: the job forms at once (one silent connection used to cost every rank behind it 5 s).
TEST(SocketRootAttack, StrangersBeforeTheRanksHoldUpNobody) {
  Timeout timeout("20000");
  for (const size_t strangers : {size_t{3}, size_t{200}}) {
    uint8_t id[kUniqueIdBytes];
    ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
    const alloy::SocketAddress root = rootOf(id);
    std::vector<alloy::Socket> held;
    // Silent, a few bytes of a hello, a whole hello's worth of garbage, in turn.
    for (size_t k = 0; k < strangers; ++k)
      held.push_back(stranger(root, k % 3 == 1 ? 7 : k % 3 == 2 ? sizeof(alloy::RootHello) : 0));
    const auto start = Clock::now();
    expectFormed(joinAll(id, 3, 3));
    EXPECT_LT(secondsSince(start), 4.0) << strangers << " strangers held the job up";
  }
}

// A stranger that presents a wrong secret while the ranks register is told so, and the job forms. It
// comes while a rank is still missing: one that came as the last rank registered could find the root
// done and its connection reset by the listener's closing (as CI once saw), which is not a refusal.
TEST(SocketRootAttack, WrongSecretBesideTheRanks) {
  Timeout timeout("20000");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  uint8_t forged[kUniqueIdBytes];
  bootstrap_test::forge(id, 0x5555, forged);
  std::vector<Joined> joined(3);
  std::vector<std::thread> firstTwo;
  for (int r = 0; r < 2; ++r) firstTwo.emplace_back([&, r] { joined[r] = join(id, 3, r); });
  const Joined refused = join(forged, 3, 0);  // rank 2 has not come: the root is still gathering
  joined[2] = join(id, 3, 2);
  for (std::thread& t : firstTwo) t.join();
  expectFormed(joined);
  EXPECT_EQ(refused.result, alloyInvalidArgument) << refused.message;
  EXPECT_NE(refused.message.find("secret does not match"), std::string::npos) << refused.message;
}

// Silent connections that keep coming, one every 20 ms, while a rank of two waits for the other: the root
// still fails the job at its timeout, naming the missing rank, instead of waiting for the trickle to stop.
TEST(SocketRootAttack, ATrickleCannotExtendTheTimeout) {
  Timeout timeout("1500");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  const alloy::SocketAddress root = rootOf(id);
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    std::vector<alloy::Socket> held;
    for (int k = 0; k < 300 && !done; ++k) {
      alloy::Socket s;
      if (alloy::connectTo(root, alloy::deadlineAfterMs(200), "the root", &s) == alloySuccess)
        held.push_back(std::move(s));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const auto start = Clock::now();
  const std::vector<Joined> joined = joinAll(id, 2, 1);
  const double waited = secondsSince(start);
  done = true;
  trickle.join();
  EXPECT_EQ(joined[0].result, alloyTimeout) << joined[0].message;
  EXPECT_NE(joined[0].message.find("only 1 of 2 ranks"), std::string::npos) << joined[0].message;
  EXPECT_LT(waited, 4.0);
}

// A holder of the secret that declares more ranks than any job (the root would have allocated for all of
// them): refused at once with the reason, and so is the real rank beside it.
TEST(SocketRootAttack, AHugeDeclaredJobIsRefused) {
  Timeout timeout("20000");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  const Joined huge = join(id, (1 << 20) + 1, 0);
  EXPECT_EQ(huge.result, alloyInvalidUsage) << huge.message;
  EXPECT_NE(huge.message.find("gave nranks 1048577"), std::string::npos) << huge.message;
}

// A rank that comes after the root failed the job (here the one the others timed out waiting for) hears
// the same verdict at once, instead of waiting out its own timeout connecting to a root that is gone; a
// stranger meanwhile is still turned away.
TEST(SocketRootAttack, ALateRankHearsWhyTheJobFailed) {
  Timeout timeout("1500");
  uint8_t id[kUniqueIdBytes];
  ASSERT_EQ(alloy::startRoot(id), alloySuccess) << alloy::lastError();
  const Joined early = join(id, 2, 0);
  EXPECT_EQ(early.result, alloyTimeout) << early.message;
  alloy::Socket lingering = stranger(rootOf(id), 0);  // says nothing: holds up nobody
  const auto start = Clock::now();
  const Joined late = join(id, 2, 1);
  EXPECT_LT(secondsSince(start), 1.0);  // the timeout is 1.5 s
  EXPECT_EQ(late.result, alloyTimeout) << late.message;
  EXPECT_NE(late.message.find("only 1 of 2 ranks"), std::string::npos) << late.message;
}

}  // namespace
