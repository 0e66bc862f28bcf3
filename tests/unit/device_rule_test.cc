// The device rule (lib/core/device_select.h) that every door follows where the caller names no device:
// its choice from what it looks at, and what it does on a machine without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <thread>

#include "device_select.h"

namespace {

using alloy::chooseDevice;

TEST(DeviceRule, AThreadThatUsedCudaKeepsItsCurrentDevice) {
  EXPECT_EQ(chooseDevice(4, true, 2, 0), 2);
  EXPECT_EQ(chooseDevice(4, true, 0, 3), 0);  // NCCL's rule, whatever the local rank
}

TEST(DeviceRule, AFreshThreadTakesItsLocalRankModuloTheVisibleDevices) {
  EXPECT_EQ(chooseDevice(4, false, 0, 0), 0);
  EXPECT_EQ(chooseDevice(4, false, 0, 3), 3);
  EXPECT_EQ(chooseDevice(4, false, 0, 6), 2);
  EXPECT_EQ(chooseDevice(1, false, 0, 5), 0);
  EXPECT_EQ(chooseDevice(2, false, 0, -1), 0);  // no launcher variable
}

TEST(DeviceRule, NoVisibleDeviceMeansHostOnly) {
  EXPECT_EQ(chooseDevice(0, false, 0, 3), -1);
  EXPECT_EQ(chooseDevice(0, true, 1, 3), -1);
}

// On a thread of its own, which has not used CUDA: the local rank's device, which becomes the thread's
// current one (on the CPU machine: -1, host-only).
TEST(DeviceRule, AFreshThreadGetsItsLocalRanksDeviceMadeCurrent) {
  const int count = alloy::visibleDevices();
  int device = -2, current = -2;
  alloyResult_t result = alloyInternalError;
  std::thread fresh([&] {
    result = alloy::deviceByRule(true, &device);
    if (count > 0 && cudaGetDevice(&current) != cudaSuccess) current = -3;
  });
  fresh.join();
  ASSERT_EQ(result, alloySuccess);
  if (count == 0) {
    EXPECT_EQ(device, -1);
    return;
  }
  EXPECT_EQ(device, alloy::launcherLocalRank() % count);
  EXPECT_EQ(current, device);
}

// A thread that chose its device first keeps it, whatever the local rank says.
TEST(DeviceRule, AThreadThatSetItsDeviceKeepsIt) {
  const int count = alloy::visibleDevices();
  if (count == 0) GTEST_SKIP() << "skipped: no CUDA device";
  const int chosen = (alloy::launcherLocalRank() + 1) % count;
  int device = -2;
  std::thread set([&] {
    if (cudaSetDevice(chosen) == cudaSuccess) alloy::deviceByRule(true, &device);
  });
  set.join();
  EXPECT_EQ(device, chosen);
}

}  // namespace
