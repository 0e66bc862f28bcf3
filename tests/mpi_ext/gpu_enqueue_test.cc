// MPIX calls that enqueue and return (docs/mpi-extension.md, "Enqueue-only calls"): after the first
// agreed call with GPU memory a communicator's calls run without any host exchange; a late peer does
// not hold the caller up; a rank that rejects its arguments stops the operation on every rank (each case
// below, with what every rank sees); host memory is refused on such a communicator without a hang;
// CUDA graphs replay the handshake; and the host cost per call against the native API is printed.
// With ALLOY_MPIX_AGREE=1 (the safe mode, its own ctest) the same cases check the per-call agreement.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "alloy.h"
#include "comm.h"
#include "gpu_mpix_util.h"

namespace mpixtest {
namespace {

using Clock = std::chrono::steady_clock;

bool safeMode() {
  const char* v = std::getenv("ALLOY_MPIX_AGREE");
  return v != nullptr && std::string(v) == "1";
}

class MpixEnqueue : public MpixGpu {
 protected:
  static constexpr int kCount = 64;  // ints per peer

  void SetUp() override {
    MpixGpu::SetUp();
    sendHost = alloytest::genVector(alloytest::streamOf(seed, 1, rank), sizeof(int) * kCount * n);
    dsend = upload(sendHost);
    drecv = upload(poison());
    // The first call with GPU memory is agreed; it makes the communicator enqueue-only.
    ASSERT_EQ(alltoall(dsend, drecv), MPI_SUCCESS);
    expectAlltoallResult(drecv, "the first (agreed) call");
    // The agreement stays where the program asked for it, and across hosts (the handshake runs over CUDA
    // IPC): there the cases below check the agreement's semantics instead.
    const alloy_mpix::Context* c = alloy_mpix::existingContext(comm);
    ASSERT_TRUE(c != nullptr && c->gpu != nullptr);
    ASSERT_EQ(enqueueOnly(), !safeMode() && !c->gpu->topology.spansHosts());
  }

  std::vector<uint8_t> poison() const { return std::vector<uint8_t>(sizeof(int) * kCount * n, alloytest::kPoison); }
  int alltoall(const void* s, void* r) { return MPIX_Alltoall_cuda(s, kCount, MPI_INT, r, kCount, MPI_INT, comm, stream); }
  // What rank `rank` receives from every peer p in the alltoall of sendHost: p's block `rank`.
  void expectAlltoallResult(const void* d, const std::string& what) {
    const std::vector<uint8_t> got = download(d, sizeof(int) * kCount * n);
    std::vector<uint8_t> expected(got.size());
    const size_t block = sizeof(int) * kCount;
    for (int p = 0; p < n; ++p) {
      const std::vector<uint8_t> theirs = alloytest::genVector(alloytest::streamOf(seed, 1, p), block * n);
      std::memcpy(expected.data() + p * block, theirs.data() + rank * block, block);
    }
    EXPECT_TRUE(alloytest::bytesEqual(expected.data(), got.data(), got.size(), what));
  }

  std::vector<uint8_t> sendHost;
  void* dsend = nullptr;
  void* drecv = nullptr;
};

// The MPIX call beside the native call it wraps, on a native communicator of the same ranks.
class MpixEnqueueTimed : public MpixEnqueue {
 protected:
  void SetUp() override {
    MpixEnqueue::SetUp();
    if (HasFatalFailure()) return;
    MPI_Comm_dup(comm, &nativeDup);
    alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
    ASSERT_EQ(cudaGetDevice(&config.cudaDevice), cudaSuccess);
    ASSERT_EQ(alloyCommCreateFromMPI(nativeDup, &config, &native), alloySuccess);
  }
  void TearDown() override {
    if (native != nullptr) {
      EXPECT_EQ(alloyCommDestroy(native), alloySuccess);
    }
    if (nativeDup != MPI_COMM_NULL) MPI_Comm_free(&nativeDup);
    MpixEnqueue::TearDown();
  }
  // The alltoall of dsend into out: api 0 through MPIX_Alltoall_cuda, 1 through alloyAlltoAll.
  int call(int api, void* out) {
    if (api == 0) return alltoall(dsend, out);
    return alloyAlltoAll(dsend, out, sizeof(int) * kCount, alloyUint8, native, stream) == alloySuccess ? MPI_SUCCESS
                                                                                                       : MPI_ERR_OTHER;
  }

  MPI_Comm nativeDup = MPI_COMM_NULL;
  alloyComm_t native = nullptr;
};

// Rank 1 reaches the call 300 ms after rank 0: rank 0's MPIX call returns as soon as its own work is
// enqueued, as the native call does (printed side by side; the bar is 2x the native time). An
// agreed call (ALLOY_MPIX_AGREE=1, or across hosts) waits for the late peer, which is checked too.
TEST_F(MpixEnqueueTimed, ReturnsWithoutWaitingForALatePeer) {
  constexpr auto kLate = std::chrono::milliseconds(300);
  constexpr int kRounds = 5;  // after one warm-up round; the median counts (one call takes tens of us)
  std::vector<double> times[2];
  for (int round = 0; round <= kRounds; ++round) {
    for (int api = 0; api < 2; ++api) {
      void* out = upload(poison());
      MPI_Barrier(comm);
      if (rank == 1) std::this_thread::sleep_for(kLate);
      const auto start = Clock::now();
      const int code = call(api, out);
      const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (round > 0) times[api].push_back(elapsed);
      EXPECT_EQ(code, MPI_SUCCESS);
      expectAlltoallResult(out, api == 0 ? "MPIX with a late peer" : "native with a late peer");
    }
  }
  double ms[2];
  for (int api = 0; api < 2; ++api) {
    std::sort(times[api].begin(), times[api].end());
    ms[api] = times[api][kRounds / 2];
  }
  if (rank == 0) {
    std::printf("mpix late peer: np %d, %s: rank 1 300 ms late: MPIX_Alltoall_cuda returned after %.3f ms, "
                "alloyAlltoAll after %.3f ms (%.2fx; medians of 5)\n", n, enqueueOnly() ? "enqueue-only" : "agreed",
                ms[0], ms[1], ms[0] / ms[1]);
    if (enqueueOnly()) EXPECT_LT(ms[0], 30.0) << "the MPIX call waited for the late peer";
    else EXPECT_GT(ms[0], 250.0) << "an agreed call returned before the late peer reached it";
  }
}

// One bad argument on one rank. `bad` makes the rejecting rank's call, `good` every other rank's; both
// write into `out` (poisoned), which must stay untouched everywhere.
struct Case {
  const char* name;
  int errorClass;
  const char* needle;  // in the rejecting rank's message
  std::function<int(void* out)> bad;
};

class MpixRejection : public MpixEnqueue {
 protected:
  // Runs `c` with rank `who` rejecting, checks what every rank sees, then checks that the next call
  // works everywhere (the communicator stays usable).
  void run(const Case& c, int who) {
    SCOPED_TRACE(std::string(c.name) + ", rejected by rank " + std::to_string(who));
    void* out = upload(poison());
    const int code = rank == who ? c.bad(out) : alltoall(dsend, out);
    if (rank == who) {
      EXPECT_MPIX_ERROR(code, c.errorClass, c.needle);
    } else if (enqueueOnly()) {
      EXPECT_EQ(code, MPI_SUCCESS) << errorString(code);
    } else {
      EXPECT_MPIX_ERROR(code, MPI_ERR_OTHER, "rank " + std::to_string(who) + " rejected its arguments");
    }
    EXPECT_EQ(download(out, poison().size()), poison()) << "a skipped operation wrote its receive buffer";
    const std::pair<int, int> pending = pendingRejection();
    if (rank != who && enqueueOnly()) {
      EXPECT_EQ(pending, std::make_pair(c.errorClass, who));
    } else {
      EXPECT_EQ(pending, std::make_pair(static_cast<int>(MPI_SUCCESS), static_cast<int>(MPI_PROC_NULL)));
    }
    EXPECT_EQ(pendingRejection(), std::make_pair(static_cast<int>(MPI_SUCCESS), static_cast<int>(MPI_PROC_NULL)))
        << "reported once";
    void* next = upload(poison());
    ASSERT_EQ(alltoall(dsend, next), MPI_SUCCESS) << "the call after the rejected one";
    expectAlltoallResult(next, "the call after the rejected one");
  }
};

TEST_F(MpixRejection, EveryCaseStopsEveryRank) {
  MPI_Datatype vector = MPI_DATATYPE_NULL;
  MPI_Type_vector(kCount, 1, 2, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  std::vector<uint8_t> hostOut(poison().size(), 0);
  const std::vector<Case> cases = {
      {"negative count", MPI_ERR_COUNT, "is negative",
       [this](void* out) { return MPIX_Alltoall_cuda(dsend, -1, MPI_INT, out, kCount, MPI_INT, comm, stream); }},
      {"NULL send buffer", MPI_ERR_BUFFER, "sendbuf is NULL",
       [this](void* out) { return MPIX_Alltoall_cuda(nullptr, kCount, MPI_INT, out, kCount, MPI_INT, comm, stream); }},
      {"MPI_DATATYPE_NULL", MPI_ERR_TYPE, "MPI_DATATYPE_NULL",
       [this](void* out) { return MPIX_Alltoall_cuda(dsend, kCount, MPI_DATATYPE_NULL, out, kCount, MPI_INT, comm, stream); }},
      {"non-contiguous type", MPI_ERR_TYPE, "is not contiguous",
       [this, vector](void* out) { return MPIX_Alltoall_cuda(dsend, 1, vector, out, 1, vector, comm, stream); }},
      {"unequal send and receive bytes", MPI_ERR_TYPE, "bytes expected",
       [this](void* out) { return MPIX_Alltoall_cuda(dsend, kCount, MPI_INT, out, kCount / 2, MPI_INT, comm, stream); }},
      {"overlapping buffers", MPI_ERR_BUFFER, "overlap",
       [this](void*) { return MPIX_Alltoall_cuda(dsend, kCount, MPI_INT, dsend, kCount, MPI_INT, comm, stream); }},
      {"host memory on an enqueue-only communicator", MPI_ERR_BUFFER, "host memory",
       [this, &hostOut](void*) { return MPIX_Alltoall_cuda(dsend, kCount, MPI_INT, hostOut.data(), kCount, MPI_INT, comm, stream); }},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    // Host memory on an agreed communicator is the mixed-memory refusal of gpu_alltoallv_test.cc.
    if (!enqueueOnly() && std::string(c.needle) == "host memory") continue;
    run(c, static_cast<int>(k) % n);
    if (HasFatalFailure()) break;
  }
  MPI_Type_free(&vector);
}

// Reductions and broadcast go through the same handshake (the reduce kernel reads the same verdict).
TEST_F(MpixRejection, ReductionAndBroadcastCases) {
  int* dints = static_cast<int*>(upload(std::vector<uint8_t>(sizeof(int) * kCount, 1)));
  const std::vector<Case> cases = {
      {"unsupported reduction operation", MPI_ERR_OP, "MPI_SUM",
       [this, dints](void* out) { return MPIX_Allreduce_cuda(dints, out, kCount, MPI_INT, MPI_BAND, comm, stream); }},
      {"root outside the communicator", MPI_ERR_ROOT, "is not a rank of the communicator",
       [this](void* out) { return MPIX_Bcast_cuda(out, kCount, MPI_INT, n + 3, comm, stream); }},
  };
  // The good ranks run the same kind of operation with valid arguments; the outputs they would write are
  // poisoned and must stay so.
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const int who = (static_cast<int>(k) + 1) % n;
    SCOPED_TRACE(std::string(c.name) + ", rejected by rank " + std::to_string(who));
    // The broadcast's root holds other bytes than the poison, which a skipped broadcast leaves everywhere.
    const int root = who == 0 ? 1 : 0;
    const bool bcastRoot = k == 1 && rank == root;
    const std::vector<uint8_t> initial = bcastRoot ? pattern(poison().size(), static_cast<uint32_t>(seed)) : poison();
    void* out = upload(initial);
    int code = MPI_SUCCESS;
    if (rank == who) code = c.bad(out);
    else if (k == 0) code = MPIX_Allreduce_cuda(dints, out, kCount, MPI_INT, MPI_SUM, comm, stream);
    else code = MPIX_Bcast_cuda(out, kCount, MPI_INT, root, comm, stream);
    if (rank == who) EXPECT_MPIX_ERROR(code, c.errorClass, c.needle);
    else if (enqueueOnly()) EXPECT_EQ(code, MPI_SUCCESS) << errorString(code);
    else EXPECT_MPIX_ERROR(code, MPI_ERR_OTHER, "rejected its arguments");
    EXPECT_EQ(download(out, poison().size()), initial) << "a skipped operation wrote its buffer";
    const std::pair<int, int> pending = pendingRejection();
    if (rank != who && enqueueOnly()) EXPECT_EQ(pending, std::make_pair(c.errorClass, who));
    else EXPECT_EQ(pending.first, MPI_SUCCESS);
  }
  void* next = upload(poison());
  ASSERT_EQ(alltoall(dsend, next), MPI_SUCCESS);
  expectAlltoallResult(next, "the call after the rejected ones");
}

// Without the query, the next call on the communicator reports the rejection, after enqueueing its own
// operation, which runs.
TEST_F(MpixRejection, NextCallReportsIt) {
  if (!enqueueOnly()) GTEST_SKIP() << "an agreed call reports a rejection from the call itself";
  const int who = n - 1;
  void* out = upload(poison());
  const int code = rank == who ? MPIX_Alltoall_cuda(dsend, -1, MPI_INT, out, kCount, MPI_INT, comm, stream)
                               : alltoall(dsend, out);
  EXPECT_EQ(errorClass(code), rank == who ? MPI_ERR_COUNT : MPI_SUCCESS);
  EXPECT_EQ(download(out, poison().size()), poison());
  void* next = upload(poison());
  const int reported = alltoall(dsend, next);
  if (rank == who) EXPECT_EQ(reported, MPI_SUCCESS) << errorString(reported);
  else EXPECT_MPIX_ERROR(reported, MPI_ERR_COUNT, "rank " + std::to_string(who) + " rejected its arguments");
  expectAlltoallResult(next, "the call that reported the rejection");
  EXPECT_EQ(pendingRejection().first, MPI_SUCCESS) << "reported once";
}

// A rejection that neither a call nor the query reported is not silent: freeing the communicator
// (which destroys its GPU communicator after the device finished) warns on every rank that skipped.
TEST_F(MpixRejection, UnreportedIsWarnedAtFree) {
  if (!enqueueOnly()) GTEST_SKIP() << "an agreed call reports a rejection from the call itself";
  const int who = 0;
  void* out = upload(poison());
  const int code = rank == who ? MPIX_Alltoall_cuda(dsend, kCount, MPI_INT, out, kCount, MPI_DOUBLE, comm, stream)
                               : alltoall(dsend, out);
  EXPECT_EQ(errorClass(code), rank == who ? MPI_ERR_TYPE : MPI_SUCCESS);
  ::testing::internal::CaptureStderr();
  MPI_Comm_free(&comm);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  if (rank == who) {
    EXPECT_EQ(warned.find("skipped on every rank"), std::string::npos) << warned;
  } else {
    EXPECT_NE(warned.find("1 operation(s) on this communicator were skipped on every rank"), std::string::npos) << warned;
    EXPECT_NE(warned.find("rank 0, mark " + std::to_string(MPI_ERR_TYPE)), std::string::npos) << warned;
  }
}

// ALLOY_MPIX_AGREE set on some ranks only: the first GPU call, which would make the communicator
// enqueue-only on some ranks and not on others, fails on every rank instead, and moves nothing.
using MpixAgreeSetting = MpixGpu;
TEST_F(MpixAgreeSetting, MustBeAlikeOnEveryRank) {
  const char* given = std::getenv("ALLOY_MPIX_AGREE");
  const std::string original = given != nullptr ? given : "";
  ASSERT_EQ(setenv("ALLOY_MPIX_AGREE", rank == 0 ? "1" : "0", 1), 0);
  const std::vector<uint8_t> send = alloytest::genVector(alloytest::streamOf(seed, 2, rank), sizeof(int) * n);
  const std::vector<uint8_t> poison(sizeof(int) * n, alloytest::kPoison);
  void* out = upload(poison);
  const int code = MPIX_Alltoall_cuda(upload(send), 1, MPI_INT, out, 1, MPI_INT, comm, stream);
  if (given != nullptr) setenv("ALLOY_MPIX_AGREE", original.c_str(), 1);
  else unsetenv("ALLOY_MPIX_AGREE");
  EXPECT_MPIX_ERROR(code, MPI_ERR_OTHER, "ALLOY_MPIX_AGREE is 1 on some ranks and not on others");
  EXPECT_EQ(download(out, poison.size()), poison);
  EXPECT_FALSE(enqueueOnly());
}

// A captured call replays its handshake with fresh counts: 50 replays, new data before each.
TEST_F(MpixEnqueue, GraphReplaysTheHandshake) {
  void* out = upload(poison());
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const int code = alltoall(dsend, out);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(code, MPI_SUCCESS) << errorString(code);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 50; ++replay) {
    sendHost = alloytest::genVector(alloytest::streamOf(seed, 100 + replay, rank), sendHost.size());
    ASSERT_EQ(cudaMemcpyAsync(dsend, sendHost.data(), sendHost.size(), cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(out, alloytest::kPoison, poison().size(), stream), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    const std::vector<uint8_t> got = download(out, poison().size());
    const size_t block = sizeof(int) * kCount;
    for (int p = 0; p < n; ++p) {
      const std::vector<uint8_t> theirs = alloytest::genVector(alloytest::streamOf(seed, 100 + replay, p), block * n);
      ASSERT_TRUE(alloytest::bytesEqual(theirs.data() + rank * block, got.data() + p * block, block,
                                        "replay " + std::to_string(replay) + ", from rank " + std::to_string(p)));
    }
    MPI_Barrier(comm);  // the next replay's new data must not reach a peer still reading this one's
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// Host time of 100 calls enqueued back to back (alltoall of 256 B per peer), MPIX against native, printed
// for docs/benchmarks.md. The results of the last call are checked.
TEST_F(MpixEnqueueTimed, PerCallHostCost) {
  constexpr int kCalls = 100;
  double us[2] = {0, 0};
  for (int round = 0; round < 3; ++round) {  // the last of three rounds: the first ones warm up
    for (int api = 0; api < 2; ++api) {
      void* out = upload(poison());
      MPI_Barrier(comm);
      const auto start = Clock::now();
      for (int k = 0; k < kCalls; ++k) ASSERT_EQ(call(api, out), MPI_SUCCESS) << (api == 0 ? "MPIX" : "native");
      us[api] = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kCalls;
      expectAlltoallResult(out, api == 0 ? "MPIX, last of 100" : "native, last of 100");
    }
  }
  double worst[2] = {0, 0};
  MPI_Reduce(us, worst, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank == 0)
    std::printf("mpix per-call host cost: np %d, %s: MPIX_Alltoall_cuda %.1f us, alloyAlltoAll %.1f us per call "
                "(slowest rank; %.2fx)\n", n, safeMode() ? "ALLOY_MPIX_AGREE=1" : "enqueue-only", worst[0], worst[1],
                worst[0] / worst[1]);
}

}  // namespace
}  // namespace mpixtest
