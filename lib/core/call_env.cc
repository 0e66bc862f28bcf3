#include "call_env.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "env.h"

extern char** environ;

namespace alloy {
namespace {

// The ALLOY_ entries of the environment at one moment, as (name, value).
using Snapshot = std::vector<std::pair<std::string, std::string>>;

constexpr char kPrefix[] = "ALLOY_";

Snapshot readEnvironment() {
  Snapshot entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, kPrefix, sizeof(kPrefix) - 1) != 0) continue;
    const char* equals = std::strchr(*entry, '=');
    if (equals != nullptr)
      entries.emplace_back(std::string(*entry, static_cast<size_t>(equals - *entry)), std::string(equals + 1));
  }
  return entries;
}

// Every snapshot taken stays alive for the process (readers hold plain pointers, with no count to wait
// for), but only once per distinct content: a program or test that switches variables back and forth
// keeps as many snapshots as environments it went through.
class Snapshots {
 public:
  void refresh() {
    Snapshot fresh = readEnvironment();
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<const Snapshot>& kept : kept_) {
      if (*kept == fresh) {
        current_.store(kept.get(), std::memory_order_release);
        return;
      }
    }
    kept_.push_back(std::make_unique<const Snapshot>(std::move(fresh)));
    current_.store(kept_.back().get(), std::memory_order_release);
  }

  const Snapshot& current() {
    const Snapshot* snapshot = current_.load(std::memory_order_acquire);
    if (snapshot == nullptr) {
      refresh();
      snapshot = current_.load(std::memory_order_acquire);
    }
    return *snapshot;
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<const Snapshot>> kept_;
  std::atomic<const Snapshot*> current_{nullptr};
};

Snapshots& snapshots() {
  static Snapshots instance;
  return instance;
}

// The snapshot's value of name, or nullptr where it was unset.
const char* lookup(const char* name) {
  for (const auto& [key, value] : snapshots().current())
    if (key == name) return value.c_str();
  return nullptr;
}

}  // namespace

void refreshCallEnvironment() { snapshots().refresh(); }

long long callEnvInt(const char* name, long long fallback, long long min, long long max) {
  return parseEnvInt(name, lookup(name), fallback, min, max);
}

const char* callEnvChoice(const char* name, const char* fallback, std::initializer_list<const char*> choices) {
  return chooseEnv(name, lookup(name), fallback, choices);
}

}  // namespace alloy
