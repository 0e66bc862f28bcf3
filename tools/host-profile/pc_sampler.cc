#include "pc_sampler.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

// The samples: a fixed array the handler fills without allocating (it runs inside a signal).
constexpr size_t kMaxSamples = size_t{1} << 21;
void* gSamples[kMaxSamples];
std::atomic<size_t> gCount{0};

void onSample(int, siginfo_t*, void* context) {
  const size_t slot = gCount.fetch_add(1, std::memory_order_relaxed);
  if (slot < kMaxSamples)
    gSamples[slot] = reinterpret_cast<void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
}

}  // namespace

bool PcSampler::start(unsigned intervalUs) {
  if (running_ || intervalUs == 0) {
    errno = EINVAL;
    return false;
  }
  gCount.store(0, std::memory_order_relaxed);
  struct sigaction action {};
  action.sa_sigaction = onSample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGPROF, &action, nullptr) != 0) return false;
  // Delivered to this thread only (Linux's SIGEV_THREAD_ID): other threads' time is not this path's.
  struct sigevent event {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGPROF;
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &event, &timer_) != 0) return false;
  struct itimerspec every {};
  every.it_interval.tv_nsec = static_cast<long>(intervalUs) * 1000;
  every.it_value = every.it_interval;
  if (timer_settime(timer_, 0, &every, nullptr) != 0) {
    timer_delete(timer_);
    return false;
  }
  running_ = true;
  return true;
}

void PcSampler::stop() {
  if (!running_) return;
  timer_delete(timer_);
  signal(SIGPROF, SIG_IGN);  // a signal already on its way finds nothing to run
  running_ = false;
}

size_t PcSampler::write(std::FILE* out) const {
  const size_t count = std::min(gCount.load(std::memory_order_relaxed), kMaxSamples);
  std::map<std::pair<std::string, uintptr_t>, size_t> counts;
  for (size_t i = 0; i < count; ++i) {
    Dl_info info{};
    const uintptr_t pc = reinterpret_cast<uintptr_t>(gSamples[i]);
    if (dladdr(gSamples[i], &info) != 0 && info.dli_fname != nullptr)
      ++counts[{info.dli_fname, pc - reinterpret_cast<uintptr_t>(info.dli_fbase)}];
    else
      ++counts[{"?", pc}];
  }
  std::vector<std::pair<size_t, std::pair<std::string, uintptr_t>>> rows;
  for (const auto& entry : counts) rows.push_back({entry.second, entry.first});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& row : rows)
    std::fprintf(out, "%zu %s 0x%zx\n", row.first, row.second.first.c_str(), static_cast<size_t>(row.second.second));
  std::fprintf(out, "# samples %zu\n", count);
  return count;
}
