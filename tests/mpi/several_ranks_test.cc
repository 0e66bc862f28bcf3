// alloyCommCreateFromMPIRanks: every MPI process creates two ranks of one communicator; each rank knows its
// place (MPI rank r holds ranks 2r and 2r + 1 of 2 x size), every process's ranks end together, and a
// process with bad arguments makes every process fail alike instead of leaving them waiting. Ranks take two
// GPUs of their own where the process sees two or more, and are host-only where it sees none.
#include "device_select.h"
#include "mpi_test_util.h"

namespace {

TEST(SeveralRanks, EveryProcessCreatesTwoRanksInMpiRankOrder) {
  const int visible = alloy::visibleDevices();
  if (visible == 1) GTEST_SKIP() << "the two ranks of a process would share the one GPU";
  // Processes of one machine take different GPU pairs where there are four.
  const int local = worldRank() % 2;
  const int gpus[2] = {visible > 0 ? (2 * local) % visible : -1, visible > 0 ? (2 * local + 1) % visible : -1};
  alloyComm_t comms[2] = {nullptr, nullptr};
  ASSERT_ALLOY(alloySuccess, alloyCommCreateFromMPIRanks(MPI_COMM_WORLD, 2, visible > 0 ? gpus : nullptr, nullptr, comms));
  for (int i = 0; i < 2; ++i) {
    int rank = -1, count = -1, device = -7;
    EXPECT_ALLOY(alloySuccess, alloyCommUserRank(comms[i], &rank));
    EXPECT_ALLOY(alloySuccess, alloyCommCount(comms[i], &count));
    EXPECT_ALLOY(alloySuccess, alloyCommCuDevice(comms[i], &device));
    EXPECT_EQ(rank, 2 * worldRank() + i);
    EXPECT_EQ(count, 2 * worldSize());
    EXPECT_EQ(device, visible > 0 ? gpus[i] : -1);
  }
  EXPECT_ALLOY(alloySuccess, alloyCommDestroyAll(comms, 2));
}

TEST(SeveralRanks, OneProcessesBadCountFailsEveryProcess) {
  alloyComm_t comms[2] = {reinterpret_cast<alloyComm_t>(0x1), reinterpret_cast<alloyComm_t>(0x1)};
  const int count = worldRank() == worldSize() - 1 ? 0 : 1;
  EXPECT_ALLOY(alloyInvalidArgument, alloyCommCreateFromMPIRanks(MPI_COMM_WORLD, count, nullptr, nullptr, comms));
  if (worldRank() == worldSize() - 1) {
    EXPECT_TRUE(lastErrorMentions("count is 0; expected at least 1")) << alloyGetLastError(nullptr);
  } else {
    EXPECT_TRUE(lastErrorMentions("passed bad arguments")) << alloyGetLastError(nullptr);
  }
  EXPECT_EQ(comms[0], reinterpret_cast<alloyComm_t>(0x1));
}

TEST(SeveralRanks, RefusesNullComms) {
  EXPECT_ALLOY(alloyInvalidArgument, alloyCommCreateFromMPIRanks(MPI_COMM_WORLD, 1, nullptr, nullptr, nullptr));
  EXPECT_TRUE(lastErrorMentions("comms is NULL")) << alloyGetLastError(nullptr);
  EXPECT_ALLOY(alloyInvalidArgument, alloyCommCreateFromMPIRanks(MPI_COMM_NULL, 1, nullptr, nullptr, nullptr));
  EXPECT_TRUE(lastErrorMentions("MPI_COMM_NULL")) << alloyGetLastError(nullptr);
}

}  // namespace
