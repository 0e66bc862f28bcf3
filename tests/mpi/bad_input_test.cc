// Bad input to alloyCommCreateFromMPI: each case returns its own result code and a message naming the
// argument, creates nothing, leaks nothing, and leaves the caller's MPI communicator as it was.
#include <cstring>

#include "mpi_test_util.h"

namespace {

// Runs create with the given arguments and checks the result, the message, and that *out is untouched.
void expectRejected(MPI_Comm mpiComm, const alloyConfig_t* config, alloyResult_t expected, const char* mentions,
                    bool passOutput = true) {
  alloyComm_t sentinel = reinterpret_cast<alloyComm_t>(0x5a5a);
  alloyComm_t out = sentinel;
  EXPECT_ALLOY(expected, alloyCommCreateFromMPI(mpiComm, config, passOutput ? &out : nullptr));
  EXPECT_TRUE(lastErrorMentions(mentions)) << "message: " << alloyGetLastError(nullptr) << "; expected mention of "
                                           << mentions;
  EXPECT_EQ(out, sentinel) << "the output must be untouched on failure";
}

// The caller's communicator still works and keeps its error handler.
void expectCommunicatorUntouched(MPI_Comm comm, MPI_Errhandler before) {
  MPI_Errhandler after;
  MPI_Comm_get_errhandler(comm, &after);
  EXPECT_EQ(before, after);
  MPI_Errhandler_free(&after);
  int one = 1, sum = 0, nranks = 0;
  MPI_Comm_size(comm, &nranks);
  ASSERT_EQ(MPI_SUCCESS, MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
  EXPECT_EQ(sum, nranks);
}

}  // namespace

TEST(BadInput, NullCommunicator) { expectRejected(MPI_COMM_NULL, nullptr, alloyInvalidArgument, "mpiComm"); }

TEST(BadInput, InterCommunicator) {
  if (worldSize() < 2) GTEST_SKIP() << "an inter-communicator needs two groups";
  MPI_Comm local, inter;
  const int colour = worldRank() % 2;
  MPI_Comm_split(MPI_COMM_WORLD, colour, worldRank(), &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, colour == 0 ? 1 : 0, 7, &inter);
  expectRejected(inter, nullptr, alloyInvalidArgument, "inter-communicator");
  EXPECT_EQ(MPI_SUCCESS, MPI_Barrier(inter)) << "the inter-communicator must still work";
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

TEST(BadInput, NullOutputOnEveryRank) {
  MPI_Errhandler handler;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
  expectRejected(MPI_COMM_WORLD, nullptr, alloyInvalidArgument, "comm:", false);
  expectCommunicatorUntouched(MPI_COMM_WORLD, handler);
  MPI_Errhandler_free(&handler);
}

TEST(BadInput, NullOutputOnOneRankFailsEveryRankWithoutHanging) {
  if (worldRank() == 0) {
    expectRejected(MPI_COMM_WORLD, nullptr, alloyInvalidArgument, "comm:", false);
  } else {
    expectRejected(MPI_COMM_WORLD, nullptr, alloyRemoteError, "rank 0 failed during argument checks");
  }
}

TEST(BadInput, ConfigOfUnknownSize) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.size = sizeof(alloyConfig_t) + 8;
  expectRejected(MPI_COMM_WORLD, &config, alloyInvalidArgument, "config->size");
}

TEST(BadInput, ConfigNotInitialised) {
  alloyConfig_t config;
  std::memset(&config, 0, sizeof(config));
  config.size = sizeof(config);
  expectRejected(MPI_COMM_WORLD, &config, alloyInvalidArgument, "config->magic");
}

TEST(BadInput, NegativeTimeout) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.timeoutMs = -5;
  expectRejected(MPI_COMM_WORLD, &config, alloyInvalidArgument, "config->timeoutMs");
}

TEST(BadInput, CudaDeviceThatDoesNotExist) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.cudaDevice = 1000;
  expectRejected(MPI_COMM_WORLD, &config, alloyInvalidArgument, "config->cudaDevice");
  config.cudaDevice = -7;
  expectRejected(MPI_COMM_WORLD, &config, alloyInvalidArgument, "config->cudaDevice");
}
