#include "proxy_thread.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "env.h"
#include "log.h"
#include "net_channel.h"

namespace alloy {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;

// ALLOY_NET_INBOUND_THREAD=auto starts the inbound thread where the process may run on this many CPUs:
// one each for the caller's, the proxy's, the inbound and UCX's progress threads. With fewer, the
// thread only takes turns with the proxy on the same cores (docs/environment.md).
constexpr int kInboundMinCpus = 4;

class Proxy {
 public:
  static Proxy& instance() {
    static Proxy proxy;
    return proxy;
  }

  void add(NetChannel* channel) {
    waiting_.fetch_add(1);
    std::scoped_lock lock(mutex_, inboundMutex_);
    waiting_.fetch_sub(1);
    channels_.push_back(channel);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    if (!inboundThread_.joinable() && channel->separateInbound())
      inboundThread_ = std::thread([this] { runInbound(); });
    wake_.notify_one();
    inboundWake_.notify_one();
  }

  void remove(NetChannel* channel) {
    // Each thread holds its mutex for a whole sweep, so once this holds both, both threads are outside
    // every channel; waiting_ makes them step back between sweeps instead of taking the mutex again.
    waiting_.fetch_add(1);
    std::scoped_lock lock(mutex_, inboundMutex_);
    waiting_.fetch_sub(1);
    channels_.erase(std::remove(channels_.begin(), channels_.end(), channel), channels_.end());
  }

  ~Proxy() {
    {
      std::scoped_lock lock(mutex_, inboundMutex_);
      stop_ = true;
      wake_.notify_one();
      inboundWake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    if (inboundThread_.joinable()) inboundThread_.join();
  }

 private:
  // A thread's pause between sweeps: none while it has work, a yield for ALLOY_PROXY_SPIN_US after its
  // last work, then sleeps that double up to ALLOY_PROXY_SLEEP_US.
  struct Pause {
    Clock::time_point lastBusy = Clock::now();
    std::chrono::microseconds sleep{1};
    // Whether to sleep now, and for how long (the next sleep doubles).
    bool due(bool busy, bool keepSpinning, std::chrono::microseconds spin, std::chrono::microseconds maxSleep,
             std::chrono::microseconds* length) {
      const auto now = Clock::now();
      if (busy) {
        lastBusy = now;
        sleep = std::chrono::microseconds(1);
      }
      if (busy || keepSpinning || now - lastBusy < spin) return false;
      *length = sleep;
      sleep = std::min(sleep * 2, maxSleep);
      return true;
    }
  };

  // A sweep (every channel's progress, which calls into the transport) should take microseconds to
  // milliseconds. One that took a second or more means a call blocked: logged, so that a peer's timeout
  // elsewhere can be traced to this thread.
  static void reportLongSweep(const char* thread, Clock::time_point began) {
    const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
    if (seconds >= 1.0) logWarn("net: a sweep of the %s thread took %.1f s (blocked in a call, or not scheduled)", thread, seconds);
  }

  Proxy()
      : spin_(std::chrono::microseconds(envInt("ALLOY_PROXY_SPIN_US", 2000, 0, 10000000))),
        maxSleep_(std::chrono::microseconds(envInt("ALLOY_PROXY_SLEEP_US", 100, 1, 1000000))) {}

  // The proxy thread: every channel's protocol and its own operations (NetChannel::progress).
  void run() {
    Pause pause;
    while (true) {
      bool busy = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !channels_.empty(); });
        if (stop_) return;
        const auto began = Clock::now();
        for (NetChannel* channel : channels_) busy = channel->progress() || busy;
        reportLongSweep("proxy", began);
      }
      // While an operation is in hand, peers' data and signals for it are due: the inbound thread must not
      // be asleep. A notification that races with its going to sleep is lost, which costs that sleep.
      if (busy && !operationInHand_.exchange(true)) inboundWake_.notify_one();
      if (!busy) operationInHand_.store(false);
      stepBack();
      std::chrono::microseconds length{0};
      // Yielding costs a system call per sweep and lets ranks that share cores (CI, oversubscribed
      // nodes) run their own proxies.
      if (!pause.due(busy, waiting_.load() > 0, spin_, maxSleep_, &length))
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(length);
    }
  }

  // The inbound thread: what peers do to this process's staging (NetChannel::progressInbound).
  void runInbound() {
    Pause pause;
    while (true) {
      bool moved = false;
      std::unique_lock<std::mutex> lock(inboundMutex_);
      inboundWake_.wait(lock, [this] { return stop_ || !channels_.empty(); });
      if (stop_) return;
      const auto began = Clock::now();
      for (NetChannel* channel : channels_) moved = channel->progressInbound() || moved;
      reportLongSweep("inbound", began);
      std::chrono::microseconds length{0};
      if (!pause.due(moved, operationInHand_.load() || waiting_.load() > 0, spin_, maxSleep_, &length)) {
        lock.unlock();
        stepBack();
        std::this_thread::yield();
      } else {
        inboundWake_.wait_for(lock, length, [this] { return stop_ || operationInHand_.load(); });
      }
    }
  }

  // Between sweeps, outside its mutex: while add() or remove() waits for the mutexes, a thread stays out
  // until it has them. A yield alone lets a thread that sweeps without pause take its mutex again before the
  // waiter runs (glibc's mutexes are not fair), which on an oversubscribed machine can hold communicator
  // creation for as long as the sweeps go on (the suspected cause of a CI hang of 2026-11-25: in the
  // three-communicator test at 3 ranks over tcp one rank never served its channels, and printed nothing).
  // It sleeps rather than yields there: with many ranks on few cores (32 on CI's 2), yielding threads of
  // every process kept the waiters from running (the 32-rank scale test took 66 s instead of 6).
  void stepBack() const {
    while (waiting_.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }

  const std::chrono::microseconds spin_;
  const std::chrono::microseconds maxSleep_;
  // channels_ changes only under both mutexes; each thread reads it under its own.
  std::mutex mutex_;
  std::mutex inboundMutex_;
  std::condition_variable wake_;
  std::condition_variable inboundWake_;
  std::vector<NetChannel*> channels_;
  std::atomic<int> waiting_{0};
  std::atomic<bool> operationInHand_{false};  // the proxy's last sweep found work
  bool stop_ = false;
  std::thread thread_;
  std::thread inboundThread_;
};

}  // namespace

void ProxyThread::add(NetChannel* channel) { Proxy::instance().add(channel); }
void ProxyThread::remove(NetChannel* channel) { Proxy::instance().remove(channel); }
bool ProxyThread::inboundRequested() {
  const std::string mode = envChoice("ALLOY_NET_INBOUND_THREAD", "auto", {"auto", "0", "1"});
  if (mode != "auto") return mode == "1";
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return false;
  return CPU_COUNT(&cpus) >= kInboundMinCpus;
}

}  // namespace net
}  // namespace alloy
