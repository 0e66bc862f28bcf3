// main() of alloy_gpu_tests, run under mpirun with one process per rank.
//
// Without a CUDA device every rank prints "skipped: no CUDA device" and exits 77 (ctest's
// SKIP_RETURN_CODE). Otherwise GoogleTest runs on every rank in the same order; only rank 0 prints
// (the other ranks' failure messages are gathered and printed by rank 0 at the end, or printed
// directly with ALLOY_TEST_VERBOSE=1), and the exit code is 1 when any rank failed anything.
// The MPI extension's GPU suite (alloy_mpix_gpu_tests) uses this main() too.
//
// Seeds and repetitions:
//   ALLOY_TEST_SEED=X        base seed of the run (default: random, drawn by rank 0 and broadcast).
//   ALLOY_TEST_REPEAT=N      run the selected tests N times (GoogleTest's --gtest_repeat), each
//                            iteration on fresh data: iteration k's seed is derived from the base seed
//                            and k (iteration 0 uses the base seed itself), the same on every rank.
//   ALLOY_TEST_ITERATION=K   number the iterations from K: iteration k of such a run uses the seed of
//                            iteration k of the original run.
// Rank 0 prints "[alloy] iteration k seed X: PASSED" (or FAILED) after every iteration; a failed one
// replays with ALLOY_TEST_SEED=X (alone, or with --gtest_filter), or with ALLOY_TEST_SEED=<base seed>
// ALLOY_TEST_ITERATION=k.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

namespace {

// The seed of iteration k of a run with base seed `base`: iteration 0 uses the base seed itself, so
// ALLOY_TEST_SEED=<the seed printed for any iteration> replays that iteration as iteration 0 of a new run.
uint64_t iterationSeed(uint64_t base, long long k) {
  if (k == 0) return base;
  return alloytest::mix64(base ^ alloytest::mix64(0x697465726174ull + static_cast<uint64_t>(k)));
}

// An integer of at least `least` from the environment, or fallback when unset or empty (a bad value is
// reported on rank 0 and ignored).
long long envCount(const char* name, long long least, long long fallback, int rank) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < least) {
    if (rank == 0) std::printf("alloy_gpu_tests: ignoring %s=%s (not an integer >= %lld)\n", name, text, least);
    return fallback;
  }
  return v;
}

// Sets the base seed of every iteration before its first test (every rank computes the same seed), and
// after it agrees with the other ranks on whether the iteration failed anywhere; rank 0 prints one line
// per iteration: "[alloy] iteration k seed X: PASSED" or "FAILED (replay: ALLOY_TEST_SEED=X)".
class IterationSeeds : public ::testing::EmptyTestEventListener {
 public:
  IterationSeeds(uint64_t base, long long first, int rank) : base_(base), first_(first), rank_(rank) {}

  void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
    number_ = first_ + iteration;
    seed_ = iterationSeed(base_, number_);
    alloytest::setBaseSeed(seed_);
    if (rank_ == 0) {
      std::printf("[alloy] iteration %lld seed %s\n", number_, alloytest::hex(seed_).c_str());
      std::fflush(stdout);
    }
  }

  // Collective: every rank ends every iteration, in the same order.
  void OnTestIterationEnd(const ::testing::UnitTest& unit, int) override {
    int mine = unit.failed_test_count() > 0 || unit.ad_hoc_test_result().Failed() ? 1 : 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ++iterations_;
    if (any) failed_.emplace_back(number_, seed_);
    if (rank_ == 0) {
      if (any)
        std::printf("[alloy] iteration %lld seed %s: FAILED (replay: ALLOY_TEST_SEED=%s)\n", number_,
                    alloytest::hex(seed_).c_str(), alloytest::hex(seed_).c_str());
      else
        std::printf("[alloy] iteration %lld seed %s: PASSED\n", number_, alloytest::hex(seed_).c_str());
      std::fflush(stdout);
    }
  }

  long long iteration() const { return number_; }
  int iterations() const { return iterations_; }
  const std::vector<std::pair<long long, uint64_t>>& failed() const { return failed_; }

 private:
  uint64_t base_;
  long long first_;
  int rank_;
  long long number_ = 0;
  uint64_t seed_ = 0;
  int iterations_ = 0;
  std::vector<std::pair<long long, uint64_t>> failed_;  // (iteration, seed)
};

// Collects this rank's failed assertions, for rank 0 to print after the run.
class FailureCollector : public ::testing::EmptyTestEventListener {
 public:
  explicit FailureCollector(const IterationSeeds* seeds, bool repeating) : seeds_(seeds), repeating_(repeating) {}
  // GoogleTest calls OnTestPartResult under its own lock: asking UnitTest for the current test there
  // would deadlock, so the name is noted when the test starts.
  void OnTestStart(const ::testing::TestInfo& info) override {
    test_ = std::string(info.test_suite_name()) + "." + info.name();
    if (repeating_) test_ = "iteration " + std::to_string(seeds_->iteration()) + ": " + test_;
  }
  void OnTestEnd(const ::testing::TestInfo&) override { test_ = "(outside a test)"; }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    const std::string message = result.message();
    if (message.compare(0, sizeof(alloytest::kOtherRanksFailed) - 1, alloytest::kOtherRanksFailed) != 0) ownFailures_ = true;
    std::ostringstream os;
    os << test_ << " at " << (result.file_name() != nullptr ? result.file_name() : "?") << ":" << result.line_number()
       << "\n" << result.message() << "\n";
    log_ += os.str();
  }
  const std::string& log() const { return log_; }
  // Whether this rank failed anything itself (rank 0 also fails a test on behalf of other ranks).
  bool ownFailures() const { return ownFailures_; }

 private:
  const IterationSeeds* seeds_;
  bool repeating_;
  std::string log_;
  std::string test_ = "(outside a test)";
  bool ownFailures_ = false;
};

uint64_t drawBaseSeed() {
  if (const char* fixed = std::getenv("ALLOY_TEST_SEED")) {
    if (fixed[0] != '\0') return std::strtoull(fixed, nullptr, 0);
  }
  std::random_device device;
  const uint64_t clock = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return alloytest::mix64((static_cast<uint64_t>(device()) << 32 ^ device()) ^ clock);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    devices = 0;
  }
  int fewest = 0;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  ::testing::InitGoogleTest(&argc, argv);
  // --gtest_list_tests works without a device too (scripts/gpu-check.sh checks its filters with it).
  if (fewest == 0 && !GTEST_FLAG_GET(list_tests)) {
    std::printf("skipped: no CUDA device\n");
    std::fflush(stdout);
    MPI_Finalize();
    return 77;
  }

  // One base seed for the run, from rank 0: the tests' data are fresh each run, equal in shape on all
  // ranks, and a failure can be replayed with ALLOY_TEST_SEED. Each iteration of a repeated run derives
  // its own seed from it (IterationSeeds).
  uint64_t seed = rank == 0 ? drawBaseSeed() : 0;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  alloytest::setBaseSeed(seed);
  // Repetitions: ALLOY_TEST_REPEAT overrides --gtest_repeat; rank 0's values hold for every rank.
  long long counts[2] = {envCount("ALLOY_TEST_REPEAT", 1, GTEST_FLAG_GET(repeat), rank),
                         envCount("ALLOY_TEST_ITERATION", 0, 0, rank)};
  MPI_Bcast(counts, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (counts[0] > 0x7fffffff) counts[0] = 0x7fffffff;
  GTEST_FLAG_SET(repeat, static_cast<int>(counts[0]));
  const bool repeating = GTEST_FLAG_GET(repeat) != 1;
  // Every rank must run the tests in the same order, also under --gtest_shuffle.
  int shuffleSeed = GTEST_FLAG_GET(random_seed);
  if (shuffleSeed == 0) shuffleSeed = static_cast<int>(seed % 99999) + 1;  // GoogleTest's range is 1..99999
  MPI_Bcast(&shuffleSeed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  GTEST_FLAG_SET(random_seed, shuffleSeed);

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  auto* seeds = new IterationSeeds(seed, counts[1], rank);
  listeners.Append(seeds);  // owned by GoogleTest
  auto* collector = new FailureCollector(seeds, repeating);
  listeners.Append(collector);  // owned by GoogleTest
  const char* verbose = std::getenv("ALLOY_TEST_VERBOSE");
  const bool allPrint = verbose != nullptr && verbose[0] != '\0' && verbose[0] != '0';
  if (rank != 0 && !allPrint) delete listeners.Release(listeners.default_result_printer());
  if (rank == 0 && !GTEST_FLAG_GET(list_tests)) {
    std::printf("alloy_gpu_tests: %d rank(s), %d CUDA device(s) visible, base seed %s", nranks, devices,
                alloytest::hex(seed).c_str());
    if (repeating || counts[1] != 0)
      std::printf(", %d iteration(s) from iteration %lld", GTEST_FLAG_GET(repeat), counts[1]);
    std::printf("\n");
    std::fflush(stdout);
  }

  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;

  // Rank 0 prints the other ranks' failures.
  std::string log = rank == 0 || allPrint ? std::string() : collector->log();
  int length = static_cast<int>(log.size());
  std::vector<int> lengths(nranks, 0), offsets(nranks, 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < nranks; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> all(rank == 0 ? total + 1 : 1, '\0');
  MPI_Gatherv(log.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);

  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const int ownFailed = collector->ownFailures() ? 1 : 0;
  std::vector<int> whoFailed(nranks, 0);
  MPI_Gather(&ownFailed, 1, MPI_INT, whoFailed.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 1; r < nranks; ++r) {
      if (lengths[r] == 0) continue;
      std::printf("\n[rank %d] failures:\n%.*s", r, lengths[r], all.data() + offsets[r]);
    }
    if (anyFailed) {
      std::printf("\nalloy_gpu_tests FAILED on rank(s):");
      for (int r = 0; r < nranks; ++r)
        if (whoFailed[r]) std::printf(" %d", r);
      if (seeds->failed().empty()) {  // failed outside the iterations' tests
        std::printf(" (base seed %s: rerun with ALLOY_TEST_SEED=%s)\n", alloytest::hex(seed).c_str(),
                    alloytest::hex(seed).c_str());
      } else if (seeds->iterations() == 1) {
        const uint64_t only = seeds->failed()[0].second;
        std::printf(" (seed %s: rerun with ALLOY_TEST_SEED=%s)\n", alloytest::hex(only).c_str(),
                    alloytest::hex(only).c_str());
      } else {
        std::printf("; %zu of %d iteration(s) failed (base seed %s):\n", seeds->failed().size(),
                    seeds->iterations(), alloytest::hex(seed).c_str());
        for (const auto& [iteration, iterSeed] : seeds->failed())
          std::printf("  iteration %lld: rerun with ALLOY_TEST_SEED=%s\n", iteration, alloytest::hex(iterSeed).c_str());
      }
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return anyFailed ? 1 : 0;
}
