// alloyGetUniqueId, alloyCommInitRanks and alloyCommDestroyAll (alloy.h): ranks of one communicator made and
// ended by one thread, a process's ranks beside another thread's, and every refused argument naming itself.
// Ranks take GPUs 0 and 1 where the process sees two or more, and are host-only where it sees none.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "alloy.h"
#include "device_select.h"

namespace {

bool has(const char* text, const char* part) { return std::string(text).find(part) != std::string::npos; }

void expectPlace(alloyComm_t comm, int rank, int count, int device) {
  int value = -7;
  EXPECT_EQ(alloyCommUserRank(comm, &value), alloySuccess);
  EXPECT_EQ(value, rank);
  EXPECT_EQ(alloyCommCount(comm, &value), alloySuccess);
  EXPECT_EQ(value, count);
  EXPECT_EQ(alloyCommCuDevice(comm, &value), alloySuccess);
  EXPECT_EQ(value, device);
}

TEST(CommRanks, OneThreadMakesAndEndsTwoRanks) {
  const int visible = alloy::visibleDevices();
  if (visible == 1) GTEST_SKIP() << "the two ranks of this process would share the one GPU";
  alloyUniqueId id;
  ASSERT_EQ(alloyGetUniqueId(&id), alloySuccess) << alloyGetLastError(nullptr);
  const int ranks[2] = {1, 0};  // any order
  const int gpus[2] = {1, 0};
  alloyComm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(alloyCommInitRanks(&id, 2, 2, ranks, visible >= 2 ? gpus : nullptr, nullptr, comms), alloySuccess)
      << alloyGetLastError(nullptr);
  for (int i = 0; i < 2; ++i) expectPlace(comms[i], ranks[i], 2, visible >= 2 ? gpus[i] : -1);
  EXPECT_EQ(alloyCommDestroyAll(comms, 2), alloySuccess) << alloyGetLastError(nullptr);
}

// Three ranks: this thread makes ranks 0 and 2, another thread rank 1 (as another process would).
TEST(CommRanks, TwoRanksOfAThreadBesideAnotherThreadsRank) {
  if (alloy::visibleDevices() > 0) GTEST_SKIP() << "host-only ranks only: the device rule would give ranks one GPU";
  alloyUniqueId id;
  ASSERT_EQ(alloyGetUniqueId(&id), alloySuccess) << alloyGetLastError(nullptr);
  alloyResult_t otherMade = alloyInternalError, otherEnded = alloyInternalError;
  int otherRank = -1;
  std::thread other([&] {
    const int rank = 1;
    alloyComm_t comm = nullptr;
    otherMade = alloyCommInitRanks(&id, 3, 1, &rank, nullptr, nullptr, &comm);
    if (otherMade != alloySuccess) return;
    alloyCommUserRank(comm, &otherRank);
    otherEnded = alloyCommDestroyAll(&comm, 1);
  });
  const int ranks[2] = {0, 2};
  alloyComm_t comms[2] = {nullptr, nullptr};
  const alloyResult_t made = alloyCommInitRanks(&id, 3, 2, ranks, nullptr, nullptr, comms);
  const std::string message = alloyGetLastError(nullptr);
  alloyResult_t ended = alloyInternalError;
  if (made == alloySuccess) {
    expectPlace(comms[0], 0, 3, -1);
    expectPlace(comms[1], 2, 3, -1);
    ended = alloyCommDestroyAll(comms, 2);
  }
  other.join();
  EXPECT_EQ(made, alloySuccess) << message;
  EXPECT_EQ(ended, alloySuccess);
  EXPECT_EQ(otherMade, alloySuccess);
  EXPECT_EQ(otherRank, 1);
  EXPECT_EQ(otherEnded, alloySuccess);
}

TEST(CommRanks, RefusedArgumentsNameTheArgumentAndWriteNothing) {
  alloyUniqueId id;
  ASSERT_EQ(alloyGetUniqueId(&id), alloySuccess) << alloyGetLastError(nullptr);
  alloyComm_t comms[2] = {reinterpret_cast<alloyComm_t>(0x1), reinterpret_cast<alloyComm_t>(0x1)};
  const int one[1] = {0}, twice[2] = {0, 0}, beyond[1] = {2}, pair[2] = {0, 1};
  auto refused = [&](alloyResult_t result, const char* part) {
    EXPECT_EQ(result, alloyInvalidArgument) << part;
    EXPECT_TRUE(has(alloyGetLastError(nullptr), part)) << alloyGetLastError(nullptr);
  };
  refused(alloyGetUniqueId(nullptr), "alloyGetUniqueId: id is NULL");
  refused(alloyCommInitRanks(nullptr, 2, 1, one, nullptr, nullptr, comms), "id is NULL");
  refused(alloyCommInitRanks(&id, 0, 1, one, nullptr, nullptr, comms), "nranks is 0");
  refused(alloyCommInitRanks(&id, 2, 3, one, nullptr, nullptr, comms), "count is 3; expected 1 to nranks (2)");
  refused(alloyCommInitRanks(&id, 2, 1, nullptr, nullptr, nullptr, comms), "ranks is NULL");
  refused(alloyCommInitRanks(&id, 2, 1, one, nullptr, nullptr, nullptr), "comms is NULL");
  refused(alloyCommInitRanks(&id, 2, 1, beyond, nullptr, nullptr, comms), "ranks[0] is 2");
  refused(alloyCommInitRanks(&id, 2, 2, twice, nullptr, nullptr, comms), "rank 0 is listed twice");
  refused(alloyCommInitRanks(&id, 2, 2, pair, twice, nullptr, comms), "device 0 is listed twice");
  EXPECT_EQ(comms[0], reinterpret_cast<alloyComm_t>(0x1));
  EXPECT_EQ(comms[1], reinterpret_cast<alloyComm_t>(0x1));
  refused(alloyCommDestroyAll(nullptr, 1), "alloyCommDestroyAll: comms is NULL");
  refused(alloyCommDestroyAll(comms, 0), "count is 0");
  alloyComm_t none[1] = {nullptr};
  refused(alloyCommDestroyAll(none, 1), "comms[0] is NULL");
}

}  // namespace
