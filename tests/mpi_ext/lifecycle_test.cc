// The cached state of a communicator: created on the first MPIX call, one per communicator (a duplicate
// gets its own), released by MPI_Comm_free; 200 dup/use/free cycles leave nothing behind.
#include "context.h"
#include "mpix_test_util.h"

namespace mpixtest {
namespace {

int useOnce(MPI_Comm comm) {
  int in = rankOf(comm) + 1, out = 0;
  const int code = MPIX_Allreduce_cuda(&in, &out, 1, MPI_INT, MPI_SUM, comm, nullptr);
  const int n = sizeOf(comm);
  EXPECT_EQ(out, n * (n + 1) / 2);
  return code;
}

TEST(Lifecycle, CreatedOnFirstUseAndOnePerCommunicator) {
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  const int base = alloy_mpix::liveContexts();
  ASSERT_EQ(useOnce(a), MPI_SUCCESS);
  EXPECT_EQ(alloy_mpix::liveContexts(), base + 1);
  ASSERT_EQ(useOnce(a), MPI_SUCCESS);
  EXPECT_EQ(alloy_mpix::liveContexts(), base + 1) << "a second call must reuse the cached context";
  MPI_Comm_dup(a, &b);  // the copy callback does not hand the context to the duplicate
  EXPECT_EQ(alloy_mpix::liveContexts(), base + 1);
  ASSERT_EQ(useOnce(b), MPI_SUCCESS);
  EXPECT_EQ(alloy_mpix::liveContexts(), base + 2);
  MPI_Comm_free(&a);
  EXPECT_EQ(alloy_mpix::liveContexts(), base + 1);
  ASSERT_EQ(useOnce(b), MPI_SUCCESS) << "the duplicate works after its parent is freed";
  MPI_Comm_free(&b);
  EXPECT_EQ(alloy_mpix::liveContexts(), base);
}

TEST(Lifecycle, TwoHundredDupUseFreeCyclesLeakNothing) {
  const int base = alloy_mpix::liveContexts();
  const int baseGpu = alloy_mpix::liveGpuComms();
  for (int cycle = 0; cycle < 200; ++cycle) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    ASSERT_EQ(useOnce(c), MPI_SUCCESS) << "cycle " << cycle;
    MPI_Comm_free(&c);
    ASSERT_EQ(alloy_mpix::liveContexts(), base) << "cycle " << cycle;
  }
  EXPECT_EQ(alloy_mpix::liveGpuComms(), baseGpu);
}

// MPI_COMM_WORLD keeps its context to the end: MPI_Finalize releases it (the run exits cleanly).
TEST(Lifecycle, WorldKeepsItsContextUntilFinalize) {
  ASSERT_EQ(useOnce(MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_GE(alloy_mpix::liveContexts(), 1);
}

}  // namespace
}  // namespace mpixtest
