#include "proxy_thread.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "env.h"
#include "net_channel.h"

namespace alloy {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;

class Proxy {
 public:
  static Proxy& instance() {
    static Proxy proxy;
    return proxy;
  }

  void add(NetChannel* channel) {
    waiting_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.fetch_sub(1);
    channels_.push_back(channel);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_one();
  }

  void remove(NetChannel* channel) {
    // The thread holds the mutex for a whole sweep, so once this holds it the thread is outside every
    // channel; waiting_ makes the thread step back between sweeps instead of taking the mutex again.
    waiting_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.fetch_sub(1);
    channels_.erase(std::remove(channels_.begin(), channels_.end(), channel), channels_.end());
  }

  ~Proxy() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  Proxy()
      : spin_(std::chrono::microseconds(envInt("ALLOY_PROXY_SPIN_US", 2000, 0, 10000000))),
        maxSleep_(std::chrono::microseconds(envInt("ALLOY_PROXY_SLEEP_US", 100, 1, 1000000))) {}

  void run() {
    auto lastBusy = Clock::now();
    auto sleep = std::chrono::microseconds(1);
    while (true) {
      bool busy = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !channels_.empty(); });
        if (stop_) return;
        for (NetChannel* channel : channels_) busy = channel->progress() || busy;
      }
      const auto now = Clock::now();
      if (busy) {
        lastBusy = now;
        sleep = std::chrono::microseconds(1);
      }
      // Yielding costs a system call per sweep and lets ranks that share cores (CI, oversubscribed
      // nodes) run their own proxies.
      if (busy || waiting_.load() > 0 || now - lastBusy < spin_) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, maxSleep_);
      }
    }
  }

  const std::chrono::microseconds spin_;
  const std::chrono::microseconds maxSleep_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<NetChannel*> channels_;
  std::atomic<int> waiting_{0};
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

void ProxyThread::add(NetChannel* channel) { Proxy::instance().add(channel); }
void ProxyThread::remove(NetChannel* channel) { Proxy::instance().remove(channel); }

}  // namespace net
}  // namespace alloy
