// Built only where libibverbs was found: the probe must agree with libibverbs itself. On a machine
// with rdma-core but no RDMA hardware (CI) both see 0 devices.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include "net_probe.h"

TEST(VerbsProbe, CountsTheDevicesLibibverbsLists) {
  int expected = 0;
  ibv_device** list = ibv_get_device_list(&expected);
  if (list == nullptr) expected = 0;  // where the kernel lacks RDMA support the call fails instead
  else ibv_free_device_list(list);

  alloy::NetProbe probe = alloy::probeVerbs();
  std::printf("verbs probe: built=%d usable=%d devices=%d detail=\"%s\"\n", probe.built, probe.usable,
              probe.devices, probe.detail.c_str());
  EXPECT_TRUE(probe.built);
  EXPECT_EQ(probe.devices, expected);
  EXPECT_NE(probe.detail.find(std::to_string(expected) + " RDMA device"), std::string::npos) << probe.detail;
  if (expected == 0) EXPECT_FALSE(probe.usable);
}
