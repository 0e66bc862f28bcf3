// Built only where UCX was found. ucp_init needs no network hardware (shared memory and TCP serve), so
// the probe must succeed on any machine, CI included, and report the library's own version.
#include <gtest/gtest.h>
#include <ucp/api/ucp.h>

#include "net_probe.h"

TEST(UcxProbe, InitialisesAndReportsTheLibraryVersion) {
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  const std::string version =
      "UCX " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release) + ":";

  alloy::NetProbe probe = alloy::probeUcx();
  std::printf("UCX probe: built=%d usable=%d devices=%d detail=\"%s\"\n", probe.built, probe.usable,
              probe.devices, probe.detail.c_str());
  EXPECT_TRUE(probe.built);
  EXPECT_TRUE(probe.usable) << probe.detail;
  EXPECT_EQ(probe.detail.rfind(version, 0), 0u) << probe.detail;
  EXPECT_NE(probe.detail.find("ucp_init succeeded, " + std::to_string(probe.devices) + " network device"),
            std::string::npos) << probe.detail;
}
