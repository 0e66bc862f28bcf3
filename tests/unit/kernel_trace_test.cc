// alloyDebugKernelTrace's answers that need no GPU: its argument checks, and in a build without the trace
// (the default, and CI's) the refusal that says how to get one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_trace.h"

TEST(KernelTrace, NullArgumentsAreRefusedByName) {
  size_t count = 7;
  std::vector<alloy::KernelTraceRecord> records(4);
  EXPECT_EQ(alloyDebugKernelTrace(nullptr, 4, &count), alloyInvalidArgument);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("out and count must not be NULL"), std::string::npos)
      << alloyGetLastError(nullptr);
  EXPECT_EQ(alloyDebugKernelTrace(records.data(), records.size(), nullptr), alloyInvalidArgument);
}

#if !ALLOY_KERNEL_TRACE
TEST(KernelTrace, BuildsWithoutTheTraceSayHowToGetOne) {
  size_t count = 7;
  std::vector<alloy::KernelTraceRecord> records(4);
  EXPECT_EQ(alloyDebugKernelTrace(records.data(), records.size(), &count), alloyNotSupported);
  EXPECT_EQ(count, 0u);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("-DALLOY_KERNEL_TRACE=ON"), std::string::npos)
      << alloyGetLastError(nullptr);
}
#endif
