// The count exchange of alltoallv's rail relay (lib/coll/relay_board.h) between the MPI ranks of each
// host, real processes sharing /dev/shm: every rank reads, exchange after exchange, exactly what each
// rank of its host posted, with ranks skewed so that a fast rank posts its next exchange while a slow one
// still reads the last; the board's name is gone once all have it mapped; a rank that never comes fails
// the others' exchange with alloyTimeout naming it.
#include <sys/mman.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "comm.h"
#include "mpi_test_util.h"
#include "relay_board.h"

namespace {

// What rank `source` posts for `target` in exchange `n`: fresh for every test run.
uint64_t posted(uint64_t seed, int n, int source, int target) {
  std::seed_seq s{seed, static_cast<uint64_t>(n), static_cast<uint64_t>(source), static_cast<uint64_t>(target)};
  std::mt19937_64 g(s);
  return g();
}

uint64_t sharedSeed() {
  uint64_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

alloyComm_t makeComm(int timeoutMs) {
  alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  alloyComm_t comm = nullptr;
  EXPECT_ALLOY(alloySuccess, alloyCommCreateFromMPI(MPI_COMM_WORLD, &config, &comm));
  return comm;
}

}  // namespace

TEST(RelayBoard, EveryRankReadsWhatItsHostPosted) {
  alloyComm_t comm = makeComm(30000);
  ASSERT_NE(comm, nullptr);
  const uint64_t seed = sharedSeed();
  alloy::RelayBoardPtr board{nullptr, nullptr};
  ASSERT_ALLOY(alloySuccess, alloy::RelayBoard::open(comm, "test", &board));
  MPI_Barrier(MPI_COMM_WORLD);
  const int fd = shm_open(alloy::RelayBoard::name(comm).c_str(), O_RDONLY, 0);
  EXPECT_LT(fd, 0) << alloy::RelayBoard::name(comm) << " is still in /dev/shm after every rank of the host opened it";
  if (fd >= 0) close(fd);
  const alloy::LocalTopology& t = comm->topology;
  std::mt19937_64 skew(seed + static_cast<uint64_t>(comm->rank));
  for (int n = 1; n <= 40; ++n) {
    std::vector<uint64_t> mine(comm->nranks);
    for (int d = 0; d < comm->nranks; ++d) mine[d] = posted(seed, n, comm->rank, d);
    // The last rank of the host is often late, so that the others post their next exchange early.
    if (t.localRank == t.localSize - 1 && skew() % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_ALLOY(alloySuccess, board->exchange(mine, "test"));
    for (int q = 0; q < t.localSize; ++q)
      for (int d = 0; d < comm->nranks; ++d)
        ASSERT_EQ(board->sent(q, d), posted(seed, n, t.localPeers[q], d))
            << "exchange " << n << ": rank " << t.localPeers[q] << "'s count for rank " << d << " read by rank "
            << comm->rank;
  }
  board.reset();
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}

TEST(RelayBoard, ARankThatNeverComesFailsTheOthersNamingIt) {
  alloyComm_t comm = makeComm(500);
  ASSERT_NE(comm, nullptr);
  const alloy::LocalTopology& t = comm->topology;
  alloy::RelayBoardPtr board{nullptr, nullptr};
  ASSERT_ALLOY(alloySuccess, alloy::RelayBoard::open(comm, "test", &board));
  if (t.localSize < 2) {
    board.reset();
    ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
    GTEST_SKIP() << "needs two ranks on a host";
  }
  const int absent = t.localPeers[t.localSize - 1];
  if (comm->rank != absent) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_ALLOY(alloyTimeout, board->exchange(std::vector<uint64_t>(comm->nranks, 1), "test"));
    const std::string message = alloyGetLastError(nullptr);
    EXPECT_NE(message.find("for rank(s) " + std::to_string(absent) + " of its host"), std::string::npos) << message;
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  board.reset();
  ASSERT_ALLOY(alloySuccess, alloyCommDestroy(comm));
}
