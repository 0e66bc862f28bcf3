#include <gtest/gtest.h>

#include <set>
#include <string>

#include "alloy.h"
#include "arguments.h"
#include "datatype.h"

TEST(Errors, EveryResultHasItsOwnString) {
  std::set<std::string> seen;
  for (int code = 0; code < alloyNumResults; ++code) {
    std::string text = alloyGetErrorString(static_cast<alloyResult_t>(code));
    EXPECT_FALSE(text.empty()) << code;
    EXPECT_TRUE(seen.insert(text).second) << "duplicate string for code " << code << ": " << text;
  }
  EXPECT_STREQ(alloyGetErrorString(static_cast<alloyResult_t>(999)), "unknown result code");
}

TEST(Errors, VersionMatchesHeader) {
  int version = -1;
  ASSERT_EQ(alloyGetVersion(&version), alloySuccess);
  EXPECT_EQ(version, ALLOY_VERSION_CODE);
  EXPECT_EQ(alloyGetVersion(nullptr), alloyInvalidArgument);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("version"), std::string::npos);
}

TEST(Errors, QueriesRejectNullCommunicator) {
  int value = 0;
  EXPECT_EQ(alloyCommCount(nullptr, &value), alloyInvalidArgument);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("comm is NULL"), std::string::npos);
  EXPECT_EQ(alloyCommUserRank(nullptr, &value), alloyInvalidArgument);
  EXPECT_EQ(alloyCommCuDevice(nullptr, &value), alloyInvalidArgument);
  EXPECT_EQ(alloyCommDestroy(nullptr), alloyInvalidArgument);
  EXPECT_EQ(alloyCommAbort(nullptr), alloyInvalidArgument);
  alloyResult_t async;
  EXPECT_EQ(alloyCommGetAsyncError(nullptr, &async), alloyInvalidArgument);
  EXPECT_EQ(alloyAlltoAll(nullptr, nullptr, 1, alloyInt8, nullptr, nullptr), alloyInvalidArgument);
}

TEST(Errors, GroupEndWithoutStartIsInvalidUsage) {
  EXPECT_EQ(alloyGroupEnd(), alloyInvalidUsage);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("alloyGroupStart"), std::string::npos);
  ASSERT_EQ(alloyGroupStart(), alloySuccess);
  ASSERT_EQ(alloyGroupStart(), alloySuccess);
  EXPECT_EQ(alloyGroupEnd(), alloySuccess);
  EXPECT_EQ(alloyGroupEnd(), alloySuccess);
  EXPECT_EQ(alloyGroupEnd(), alloyInvalidUsage);
}

TEST(DataTypes, SizesFollowNcclNumbering) {
  const size_t expected[alloyNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int t = 0; t < alloyNumTypes; ++t)
    EXPECT_EQ(alloy::dataTypeSize(static_cast<alloyDataType_t>(t)), expected[t]) << t;
  EXPECT_EQ(alloy::dataTypeSize(static_cast<alloyDataType_t>(alloyNumTypes)), 0u);
  EXPECT_EQ(alloy::checkDataType(static_cast<alloyDataType_t>(-1), "f"), alloyInvalidArgument);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("datatype"), std::string::npos);
}

TEST(Arguments, ReductionBuffersMustBeElementAligned) {
  alignas(16) static char storage[64];
  EXPECT_EQ(alloy::checkElementAligned(storage + 4, 4, "alloyAllReduce", "sendbuff"), alloySuccess);
  EXPECT_EQ(alloy::checkElementAligned(storage + 3, 1, "alloyAllReduce", "sendbuff"), alloySuccess);
  EXPECT_EQ(alloy::checkElementAligned(nullptr, 8, "alloyAllReduce", "sendbuff"), alloySuccess);
  EXPECT_EQ(alloy::checkElementAligned(storage + 2, 4, "alloyAllReduce", "recvbuff"), alloyInvalidArgument);
  const std::string message = alloyGetLastError(nullptr);
  EXPECT_NE(message.find("alloyAllReduce: recvbuff="), std::string::npos) << message;
  EXPECT_NE(message.find("not aligned to its 4-byte elements"), std::string::npos) << message;
  EXPECT_EQ(alloy::checkElementAligned(storage + 4, 8, "alloyReduce", "sendbuff"), alloyInvalidArgument);
}
