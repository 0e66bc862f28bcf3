// When a launch's part between hosts goes through the staging kernel (planNetStage, lib/coll/net_stage_plan.h)
// and in what order the kernel's copies come: rounds built by hand, a communicator with only the fields
// the choice reads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "call_env.h"
#include "comm.h"
#include "net_stage_plan.h"

namespace {

using alloy::NetRound;
using alloy::NetStageLaunch;
using alloy::P2pSegment;
using alloy::StagedCopy;

constexpr const char* kVar = "ALLOY_NET_KERNEL_MAX_BYTES";

// Buffers the copies point into: addresses only, never touched.
char user[4][1 << 17];
char box[4][1 << 17];

NetRound oneRound(size_t sendBytes, size_t recvBytes) {
  NetRound r;
  if (sendBytes > 0) r.stageIn.push_back(StagedCopy{box[0], user[0], sendBytes});
  if (recvBytes > 0) r.stageOut.push_back(StagedCopy{user[1], box[1], recvBytes});
  return r;
}

class NetStagePlan : public ::testing::Test {
 protected:
  void SetUp() override { setVar(nullptr); }
  void TearDown() override { setVar(nullptr); }
  static void setVar(const char* value) {
    if (value == nullptr) unsetenv(kVar);
    else setenv(kVar, value, 1);
    alloy::refreshCallEnvironment();
  }
  alloyComm comm;
  NetStageLaunch launch{};
};

TEST_F(NetStagePlan, OneSmallRoundStagesThenCopiesItsOwnBlocksThenCopiesOut) {
  const std::vector<P2pSegment> self{P2pSegment{user[2], user[3], 8}};
  ASSERT_TRUE(alloy::planNetStage(&comm, {oneRound(8, 16)}, self, &launch));
  ASSERT_EQ(launch.staged, 1);
  ASSERT_EQ(launch.local, 2);
  ASSERT_EQ(launch.count, 3);
  EXPECT_EQ(launch.copies[0].src, user[0]);
  EXPECT_EQ(launch.copies[0].dst, box[0]);
  EXPECT_EQ(launch.copies[0].bytes, 8u);
  EXPECT_EQ(launch.copies[1].src, user[2]);
  EXPECT_EQ(launch.copies[1].dst, user[3]);
  EXPECT_EQ(launch.copies[2].src, box[1]);
  EXPECT_EQ(launch.copies[2].dst, user[1]);
  EXPECT_EQ(launch.copies[2].bytes, 16u);
}

TEST_F(NetStagePlan, ARankThatOnlyReceivesStillRings) {
  ASSERT_TRUE(alloy::planNetStage(&comm, {oneRound(0, 64)}, {}, &launch));
  EXPECT_EQ(launch.staged, 0);
  EXPECT_EQ(launch.local, 0);
  EXPECT_EQ(launch.count, 1);
}

TEST_F(NetStagePlan, UpTo64KiBEachWayByDefaultAndNotBeyond) {
  EXPECT_TRUE(alloy::planNetStage(&comm, {oneRound(64 << 10, 64 << 10)}, {}, &launch));
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound((64 << 10) + 1, 8)}, {}, &launch));
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8, (64 << 10) + 1)}, {}, &launch));
}

TEST_F(NetStagePlan, ALargeBlockToItselfKeepsTheStreamsForm) {
  const std::vector<P2pSegment> small{P2pSegment{user[2], user[3], 64 << 10}};
  const std::vector<P2pSegment> large{P2pSegment{user[2], user[3], (64 << 10) + 1}};
  EXPECT_TRUE(alloy::planNetStage(&comm, {oneRound(8, 8)}, small, &launch));
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8, 8)}, large, &launch));
}

TEST_F(NetStagePlan, SeveralRoundsKeepTheStreamsForm) {
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8, 8), oneRound(8, 8)}, {}, &launch));
  EXPECT_FALSE(alloy::planNetStage(&comm, {}, {}, &launch));
}

TEST_F(NetStagePlan, MoreCopiesThanOneLaunchHoldsKeepTheStreamsForm) {
  NetRound r = oneRound(8, 8);
  while (r.stageIn.size() + r.stageOut.size() < static_cast<size_t>(alloy::kNetStageMostCopies))
    r.stageIn.push_back(StagedCopy{box[2], user[2], 8});
  EXPECT_TRUE(alloy::planNetStage(&comm, {r}, {}, &launch));
  const std::vector<P2pSegment> self{P2pSegment{user[2], user[3], 8}};
  EXPECT_FALSE(alloy::planNetStage(&comm, {r}, self, &launch));
}

TEST_F(NetStagePlan, ASharedGpuKeepsTheStreamsFormUnlessTheVariableIsSet) {
  comm.gpuShared = true;
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8, 8)}, {}, &launch));
  setVar("4096");
  EXPECT_TRUE(alloy::planNetStage(&comm, {oneRound(8, 8)}, {}, &launch));
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8192, 8)}, {}, &launch));
}

TEST_F(NetStagePlan, ZeroTurnsItOff) {
  setVar("0");
  EXPECT_FALSE(alloy::planNetStage(&comm, {oneRound(8, 8)}, {}, &launch));
}

}  // namespace
