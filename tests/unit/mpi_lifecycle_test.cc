// alloyCommCreateFromMPI outside the MPI lifetime: before MPI_Init and after MPI_Finalize it must report
// alloyInvalidUsage and touch nothing. Its own main, because MPI can be initialised once per process.
#include <gtest/gtest.h>

#include <string>

#include "alloy.h"

TEST(MpiLifecycle, CreateBeforeInitAndAfterFinalize) {
  alloyComm_t comm = reinterpret_cast<alloyComm_t>(0x1);
  ASSERT_EQ(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm), alloyInvalidUsage);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("not initialised"), std::string::npos)
      << alloyGetLastError(nullptr);
  EXPECT_EQ(comm, reinterpret_cast<alloyComm_t>(0x1)) << "the output must be untouched on failure";

  int argc = 0;
  char** argv = nullptr;
  ASSERT_EQ(MPI_Init(&argc, &argv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Finalize(), MPI_SUCCESS);
  ASSERT_EQ(alloyCommCreateFromMPI(MPI_COMM_WORLD, nullptr, &comm), alloyInvalidUsage);
  EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("already finalized"), std::string::npos)
      << alloyGetLastError(nullptr);
  EXPECT_EQ(comm, reinterpret_cast<alloyComm_t>(0x1));
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
