// libhost-profile.so: where a whole program's main thread spends its host time, with no change to the
// program: preloaded (LD_PRELOAD) with HOST_PROFILE_OUT set, it samples the main thread from start to exit
// (pc_sampler.h) and writes the samples to HOST_PROFILE_OUT.<rank> (the MPI rank from the launcher's
// environment, else the process id), where fold-profile.sh folds them per module and function. Ranks other
// than HOST_PROFILE_RANK (default 0) are not sampled. For the OSU benchmarks through the MPI layer, a
// Python script through the package, or nccl-tests on Alloy's libnccl.so.2: the loop measured should
// dominate the run (many iterations), since set-up is sampled too.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "pc_sampler.h"

namespace {

// The launcher's rank of this process, or -1.
int launcherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return -1;
}

class WholeProgram {
 public:
  WholeProgram() {
    const char* out = std::getenv("HOST_PROFILE_OUT");
    if (out == nullptr || out[0] == '\0') return;
    const int rank = launcherRank();
    const char* wanted = std::getenv("HOST_PROFILE_RANK");
    if (rank >= 0 && rank != (wanted != nullptr ? std::atoi(wanted) : 0)) return;
    path_ = std::string(out) + "." + std::to_string(rank >= 0 ? rank : static_cast<int>(getpid()));
    const char* interval = std::getenv("HOST_PROFILE_INTERVAL_US");
    if (!sampler_.start(interval != nullptr ? static_cast<unsigned>(std::atoi(interval)) : 50)) {
      std::perror("libhost-profile: the sampler did not start");
      path_.clear();
    }
  }
  ~WholeProgram() {
    if (path_.empty()) return;
    sampler_.stop();
    std::FILE* file = std::fopen(path_.c_str(), "w");
    if (file == nullptr) {
      std::perror(path_.c_str());
      return;
    }
    std::fprintf(file, "# libhost-profile: the main thread of pid %d, start to exit\n", static_cast<int>(getpid()));
    const size_t samples = sampler_.write(file);
    std::fclose(file);
    std::fprintf(stderr, "libhost-profile: %zu samples in %s\n", samples, path_.c_str());
  }

 private:
  PcSampler sampler_;
  std::string path_;
};

WholeProgram wholeProgram;

}  // namespace
