// Built only where libibverbs was found: the probe must agree with libibverbs itself (this test links
// it; liballoy loads it with dlopen). On a machine with rdma-core but no RDMA hardware (CI) both see 0
// devices.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdlib>
#include <string>

#include "net_probe.h"
#include "verbs_library.h"

namespace {

constexpr const char* kMissing = "/nonexistent/libibverbs.so.1";

bool startsWith(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

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

TEST(VerbsProbe, SaysWhenLibibverbsCannotBeLoaded) {
  setenv("ALLOY_IBVERBS_PATH", kMissing, 1);
  const alloy::NetProbe probe = alloy::probeVerbs();
  unsetenv("ALLOY_IBVERBS_PATH");
  EXPECT_TRUE(probe.built);
  EXPECT_FALSE(probe.usable);
  EXPECT_EQ(probe.devices, 0);
  // dlerror's wording is the C library's; the path it names and the frame around it are ours.
  const std::string prefix = std::string("verbs: ") + kMissing + " could not be loaded (" + kMissing + ": ";
  EXPECT_TRUE(startsWith(probe.detail, prefix)) << probe.detail;
  EXPECT_GT(probe.detail.size(), prefix.size() + 1) << probe.detail;
  EXPECT_EQ(probe.detail.back(), ')') << probe.detail;

  // The variable is read at each probe: without it the real library is found again.
  const alloy::NetProbe again = alloy::probeVerbs();
  EXPECT_EQ(again.detail.find("could not be loaded"), std::string::npos) << again.detail;
}

TEST(VerbsLibrary, LoadsTheDefaultLibrary) {
  unsetenv("ALLOY_IBVERBS_PATH");
  const alloy::verbs::VerbsLibrary lib;
  ASSERT_TRUE(lib.loaded()) << lib.error();
  EXPECT_EQ(lib.name(), "libibverbs.so.1");
  EXPECT_EQ(lib.error(), "");
  EXPECT_NE(lib.getDeviceList, nullptr);
  EXPECT_NE(lib.freeDeviceList, nullptr);
  EXPECT_NE(lib.getDeviceName, nullptr);
  EXPECT_NE(lib.openDevice, nullptr);
  EXPECT_NE(lib.closeDevice, nullptr);
  EXPECT_NE(lib.queryDevice, nullptr);
  // What the transport needs beyond the probe: each resolves to the very function this test links.
  EXPECT_EQ(lib.queryGid, &::ibv_query_gid);
  EXPECT_EQ(lib.allocPd, &::ibv_alloc_pd);
  EXPECT_EQ(lib.deallocPd, &::ibv_dealloc_pd);
  EXPECT_EQ(lib.regMr, &::ibv_reg_mr);
  EXPECT_EQ(lib.deregMr, &::ibv_dereg_mr);
  EXPECT_EQ(lib.createCq, &::ibv_create_cq);
  EXPECT_EQ(lib.destroyCq, &::ibv_destroy_cq);
  EXPECT_EQ(lib.createQp, &::ibv_create_qp);
  EXPECT_EQ(lib.modifyQp, &::ibv_modify_qp);
  EXPECT_EQ(lib.destroyQp, &::ibv_destroy_qp);
  EXPECT_EQ(lib.createAh, &::ibv_create_ah);
  EXPECT_EQ(lib.destroyAh, &::ibv_destroy_ah);
  ASSERT_EQ(lib.wcStatusStr, &::ibv_wc_status_str);
  EXPECT_STREQ(lib.wcStatusStr(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded");
}

TEST(VerbsLibrary, TheVariableNamesTheLibrary) {
  setenv("ALLOY_IBVERBS_PATH", kMissing, 1);
  const alloy::verbs::VerbsLibrary lib;
  unsetenv("ALLOY_IBVERBS_PATH");
  EXPECT_FALSE(lib.loaded());
  EXPECT_EQ(lib.name(), kMissing);
  EXPECT_TRUE(startsWith(lib.error(), std::string(kMissing) + ": ")) << lib.error();
  EXPECT_EQ(lib.getDeviceList, nullptr);
}

TEST(VerbsLibrary, ALibraryWithoutTheFunctionsIsNotUsed) {
  // The C library loads, but has no ibv_* function: nothing of it may be half-used.
  const alloy::verbs::VerbsLibrary lib("libc.so.6");
  EXPECT_FALSE(lib.loaded());
  EXPECT_TRUE(startsWith(lib.error(), "symbol ibv_get_device_list not found: ")) << lib.error();
  EXPECT_EQ(lib.getDeviceList, nullptr);
  EXPECT_EQ(lib.queryDevice, nullptr);
  EXPECT_EQ(lib.regMr, nullptr);
  EXPECT_EQ(lib.wcStatusStr, nullptr);
}
