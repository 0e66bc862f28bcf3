// Holds in every build, whichever of the transport probes are compiled in.
#include <gtest/gtest.h>

#include "net_probe.h"

namespace {

void expectConsistent(const alloy::NetProbe& probe) {
  EXPECT_FALSE(probe.detail.empty());
  EXPECT_GE(probe.devices, 0);
  if (!probe.built) {
    // The "absent" variant: nothing found, and it says why.
    EXPECT_FALSE(probe.usable);
    EXPECT_EQ(probe.devices, 0);
    EXPECT_NE(probe.detail.find("not built"), std::string::npos) << probe.detail;
  }
}

}  // namespace

TEST(NetProbe, EachProbeIsConsistentWithWhetherItWasBuilt) {
  expectConsistent(alloy::probeVerbs());
  expectConsistent(alloy::probeUcx());
}

TEST(NetProbe, SummaryNamesBothProbes) {
  const std::string& reason = alloy::netProbeSummary();
  EXPECT_NE(reason.find(alloy::probeVerbs().detail), std::string::npos) << reason;
  // The UCX detail is not compared whole: its device list may differ between two probes if an
  // interface changes; its version prefix does not.
  EXPECT_NE(reason.find("UCX"), std::string::npos) << reason;
  EXPECT_NE(reason.find("verbs"), std::string::npos) << reason;
}
