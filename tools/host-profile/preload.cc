// libhost-profile.so: where a whole program's main thread spends its host time, with no change to the
// program: preloaded (LD_PRELOAD) with HOST_PROFILE_OUT set, it samples the main thread from start to exit
// (pc_sampler.h) and writes the samples to HOST_PROFILE_OUT.<rank> (the MPI rank from the launcher's
// environment, else the process id), where fold-profile.sh folds them per module and function. Ranks other
// than HOST_PROFILE_RANK (default 0) are not sampled. For the OSU benchmarks through the MPI layer, a
// Python script through the package, or nccl-tests on Alloy's libnccl.so.2: the loop measured should
// dominate the run (many iterations), since set-up is sampled too. The file also counts the main thread's
// page faults over the same span: a fault's time lands in the sample of whatever code touched the page, so
// two runs of the same calls that differ in faults explain functions that differ in samples.
#include <sys/resource.h>
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

// The calling thread's minor and major page faults so far.
struct Faults {
  long minor = 0, major = 0;
};
Faults threadFaults() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return {};
  return {usage.ru_minflt, usage.ru_majflt};
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
    faults_ = threadFaults();
    pid_ = getpid();
  }
  ~WholeProgram() {
    // A child forked without exec inherits this object and would write its copy of the samples over the
    // parent's file (named by the parent's pid) when it exits.
    if (path_.empty() || getpid() != pid_) return;
    sampler_.stop();
    const Faults end = threadFaults();
    std::FILE* file = std::fopen(path_.c_str(), "w");
    if (file == nullptr) {
      std::perror(path_.c_str());
      return;
    }
    std::fprintf(file, "# libhost-profile: the main thread of pid %d, start to exit\n", static_cast<int>(getpid()));
    std::fprintf(file, "# page faults %ld minor, %ld major\n", end.minor - faults_.minor, end.major - faults_.major);
    const size_t samples = sampler_.write(file);
    std::fclose(file);
    std::fprintf(stderr, "libhost-profile: %zu samples in %s\n", samples, path_.c_str());
  }

 private:
  PcSampler sampler_;
  std::string path_;
  Faults faults_;  // at the start
  pid_t pid_ = 0;  // the sampled process
};

WholeProgram wholeProgram;

}  // namespace
