// The bootstraps' barrier, which alloyCommDestroy waits in, ends at its timeout when a rank never comes (it
// died, or aborted where its bootstrap cannot enter the barrier): alloyTimeout with a message that says why, after
// about the timeout, on every rank that came; and the MPI bootstrap's late rank still gets through, since
// the others' barrier stays posted. An aborting rank enters the MPI bootstrap's barrier without waiting.
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "alloy.h"
#include "bootstrap.h"
#include "mpi_bootstrap.h"
#include "mpi_test_util.h"

namespace {

double secondsOf(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(BootstrapBarrier, MpiBarrierEndsAtItsTimeoutWhenARankNeverComes) {
  if (worldSize() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::unique_ptr<alloy::Bootstrap> bootstrap;
  ASSERT_ALLOY(alloySuccess, alloy::MpiBootstrap::create(MPI_COMM_WORLD, &bootstrap));
  if (worldRank() != 0) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(bootstrap->barrier(nullptr, 500), alloyTimeout);
    const double waited = secondsOf(start);
    EXPECT_GE(waited, 0.5);
    EXPECT_LT(waited, 30.0);
    const std::string message = alloyGetLastError(nullptr);
    EXPECT_NE(message.find("did not all reach the barrier within 500 ms"), std::string::npos) << message;
    // While the barrier is still open, the bootstrap refuses another one instead of stacking it.
    EXPECT_EQ(bootstrap->barrier(nullptr, 500), alloyTimeout);
    EXPECT_NE(std::string(alloyGetLastError(nullptr)).find("an earlier barrier"), std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the late rank comes only now
  if (worldRank() == 0) EXPECT_EQ(bootstrap->barrier(nullptr, 60000), alloySuccess) << alloyGetLastError(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
  // The others' abandoned barrier has completed with rank 0's: their bootstrap works again.
  ASSERT_ALLOY(alloySuccess, bootstrap->barrier(nullptr, 60000));
}

TEST(BootstrapBarrier, MpiBarrierPassesWhenEveryRankComes) {
  std::unique_ptr<alloy::Bootstrap> bootstrap;
  ASSERT_ALLOY(alloySuccess, alloy::MpiBootstrap::create(MPI_COMM_WORLD, &bootstrap));
  int calls = 0;
  if (worldRank() == 0) usleep(200000);  // the others wait, and progress, in the barrier meanwhile
  ASSERT_ALLOY(alloySuccess, bootstrap->barrier([&calls] { ++calls; }, 60000));
  if (worldRank() != 0) EXPECT_GT(calls, 0);
}

// An abort enters the barrier without waiting (MpiBootstrap::enterBarrierAndLeave), so ranks that destroy
// instead pass it at once; the aborting rank's duplicate stays retired until that barrier completes, and MPI
// keeps working on every rank: communicators created afterwards get context ids no late message can hit.
TEST(BootstrapBarrier, AnAbortingRankEntersTheMpiBarrierWithoutWaiting) {
  if (worldSize() < 2) GTEST_SKIP() << "needs 2 ranks";
  {
    std::unique_ptr<alloy::Bootstrap> bootstrap;
    ASSERT_ALLOY(alloySuccess, alloy::MpiBootstrap::create(MPI_COMM_WORLD, &bootstrap));
    if (worldRank() == 0) {
      usleep(200000);  // the others wait in the barrier first
      bootstrap->enterBarrierAndLeave();
    } else {
      const auto start = std::chrono::steady_clock::now();
      EXPECT_ALLOY(alloySuccess, bootstrap->barrier(nullptr, 20000));
      EXPECT_LT(secondsOf(start), 10.0) << "the barrier waited for its timeout, not for the aborting rank";
    }
  }
  MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  const int colour = worldRank() % 2;
  ASSERT_EQ(MPI_SUCCESS, MPI_Comm_split(MPI_COMM_WORLD, colour, worldRank(), &local));
  ASSERT_EQ(MPI_SUCCESS, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, colour == 0 ? 1 : 0, 11, &inter));
  EXPECT_EQ(MPI_SUCCESS, MPI_Barrier(inter));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

}  // namespace
