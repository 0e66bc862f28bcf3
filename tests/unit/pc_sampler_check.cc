// The program-counter sampler (tools/host-profile/pc_sampler.h) against a known split of time: the thread
// spends three parts in spin<3> and one in spin<1> (one loop, instantiated twice), under the sampler; the
// samples go to the file named by the argument, which pc_sampler_check.sh folds with fold-profile.sh and
// checks. The loops call nothing, so every sample of them falls inside them.
#include <cstdio>

#include "pc_sampler.h"

namespace {

volatile unsigned long long sink;

template <int Parts>
__attribute__((noinline)) void spin(unsigned long long n) {
  unsigned long long x = sink;
  for (unsigned long long i = 0; i < Parts * n; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  sink = x;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pc_sampler_check FILE\n");
    return 2;
  }
  PcSampler sampler;
  if (!sampler.start(50)) {
    std::perror("pc_sampler_check: start");
    return 1;
  }
  constexpr unsigned long long kIterations = 100000000;  // about 0.1 s per part
  spin<3>(kIterations);
  spin<1>(kIterations);
  sampler.stop();
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  const size_t samples = sampler.write(out);
  std::fclose(out);
  std::printf("pc_sampler_check: %zu samples in %s\n", samples, argv[1]);
  return samples > 0 ? 0 : 1;
}
