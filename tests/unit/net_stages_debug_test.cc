// alloyDebugNetStages's argument checks, which need no communicator (the stages themselves are checked
// against a live channel in tests/net: NetChannelTest.StagesOfEveryOperationInOrder).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "remote_channel.h"

TEST(NetStagesDebug, NullArgumentsAreRefusedByName) {
  size_t count = 7;
  std::vector<alloy::NetStages> stages(4);
  for (int missing = 0; missing < 3; ++missing) {
    alloyComm_t comm = missing == 0 ? nullptr : reinterpret_cast<alloyComm_t>(&count);  // never read: refused first
    EXPECT_EQ(alloyDebugNetStages(comm, missing == 1 ? nullptr : stages.data(), stages.size(),
                                  missing == 2 ? nullptr : &count),
              alloyInvalidArgument);
    EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("comm, out and count must not be NULL"), std::string::npos)
        << alloyGetLastError(nullptr);
  }
}
