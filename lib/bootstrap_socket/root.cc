#include "root.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "env.h"
#include "error.h"
#include "hello_gate.h"
#include "log.h"
#include "socket.h"
#include "wire.h"

namespace alloy {
namespace {

// How long a reply to one connection may take (a few hundred bytes: the socket's buffer takes them).
constexpr long long kReplyWaitMs = 5000;
// More ranks than this in one hello is a damaged message, not a job: the root keeps a socket and an
// address per rank (about 32 MB at this bound). docs/nccl-compat.md.
constexpr int kMaxRanks = 1 << 20;

RootReply replyOf(alloyResult_t status, const std::string& message) {
  RootReply reply;
  std::memset(&reply, 0, sizeof(reply));
  reply.magic = kWireMagic;
  reply.status = status;
  std::snprintf(reply.message, sizeof(reply.message), "%s", message.c_str());
  return reply;
}

class Root {
 public:
  Root(Socket listener, SocketAddress address, uint64_t secret, long long timeoutMs)
      : listener_(std::move(listener)), address_(address), secret_(secret), timeoutMs_(timeoutMs) {}

  // Until every rank has its table, the ranks fail, or stop() is called; then the listener closes, so that
  // a rank that comes later hears at once that nobody serves the id. Where the ranks were failed, the
  // listener first answers late ranks with the same verdict for one more timeout.
  void serve() {
    if (gather()) {
      sendTables();
    } else if (failed_) {
      tellLateRanks();
    }
    listener_ = Socket();
  }

  // Takes connections side by side (HelloGate) until every rank has registered: true, or false once the
  // ranks were failed or the root stops. The deadline moves only when a rank registers: connections
  // without the id's secret can neither hold the root up nor keep it alive.
  bool gather() {
    HelloGate gate(listener_, sizeof(RootHello), "bootstrap root " + address_.describe());
    Deadline deadline = deadlineAfterMs(timeoutMs_);
    while (nranks_ < 0 || arrived_ < nranks_) {
      HelloGate::Arrival arrival;
      const alloyResult_t got = gate.next(deadline, [this] { return stopping_.load(); }, &arrival);
      if (got == alloyInProgress) {
        // Ranks waiting are told why; an id nobody used ends silently with the process.
        if (arrived_ > 0) failAll(alloyRemoteError, "the process that holds the root is exiting");
        return false;
      }
      if (got != alloySuccess) {
        failAll(alloyTimeout, nranks_ < 0 ? "no rank" : "only " + std::to_string(arrived_) + " of " +
                                                            std::to_string(nranks_) + " ranks");
        return false;
      }
      RootHello hello;
      std::memcpy(&hello, arrival.hello.data(), sizeof(hello));
      if (admit(std::move(arrival.socket), arrival.from, hello, &gate)) deadline = deadlineAfterMs(timeoutMs_);
      if (failed_) return false;
    }
    return true;
  }

  // A rank that comes after the job failed (its launch was slow, or it is the one the others timed out
  // waiting for) hears why at once instead of waiting out its own timeout connecting to a root that is
  // gone. Strangers are turned away as before; nothing here moves the deadline.
  void tellLateRanks() {
    HelloGate gate(listener_, sizeof(RootHello), "bootstrap root " + address_.describe());
    const Deadline deadline = deadlineAfterMs(timeoutMs_);
    HelloGate::Arrival arrival;
    while (gate.next(deadline, [this] { return stopping_.load(); }, &arrival) == alloySuccess) {
      RootHello hello;
      std::memcpy(&hello, arrival.hello.data(), sizeof(hello));
      if (!presents(hello.header, secret_)) {
        turnAway(arrival.socket, arrival.from, &gate);
        continue;
      }
      sendAll(arrival.socket, &verdict_, sizeof(verdict_), deadlineAfterMs(kReplyWaitMs), "failure");
    }
  }

  void sendTables() {
    const RootReply ok = replyOf(alloySuccess, "");
    for (int r = 0; r < nranks_; ++r) {
      const Deadline sendDeadline = deadlineAfterMs(timeoutMs_);
      if (sendAll(ranks_[r], &ok, sizeof(ok), sendDeadline, "bootstrap root: reply") != alloySuccess ||
          sendAll(ranks_[r], addresses_.data(), addresses_.size() * sizeof(WireAddress), sendDeadline,
                  "bootstrap root: address table") != alloySuccess)
        logWarn("bootstrap root %s: could not send rank %d the address table: %s", address_.describe().c_str(), r,
                lastError());
    }
    logTrace("bootstrap root %s: %d ranks gathered", address_.describe().c_str(), nranks_);
  }

  // The thread's body: serve, then say so for RootThreads.
  void run() {
    serve();
    finished_ = true;
  }
  void stop() { stopping_ = true; }
  bool finished() const { return finished_; }
  bool serves(const UniqueIdContents& id) const {
    return id.secret == secret_ && id.root.describe() == address_.describe();
  }

 private:
  // Takes one connection's complete hello; true when it registered a new rank.
  bool admit(Socket connection, const SocketAddress& from, const RootHello& hello, HelloGate* gate) {
    if (!presents(hello.header, secret_)) {
      turnAway(connection, from, gate);
      return false;
    }
    std::string problem;
    if (nranks_ < 0 && (hello.nranks < 1 || hello.nranks > kMaxRanks)) {
      problem = "rank " + std::to_string(hello.rank) + " gave nranks " + std::to_string(hello.nranks);
    } else if (nranks_ >= 0 && hello.nranks != nranks_) {
      problem = "rank " + std::to_string(hello.rank) + " gave nranks " + std::to_string(hello.nranks) +
                ", an earlier rank gave " + std::to_string(nranks_);
    } else if (hello.rank < 0 || hello.rank >= hello.nranks) {
      problem = "a rank gave rank " + std::to_string(hello.rank) + " of " + std::to_string(hello.nranks);
    } else if (nranks_ >= 0 && ranks_[hello.rank].valid()) {
      problem = "two ranks gave rank " + std::to_string(hello.rank);
    }
    if (nranks_ < 0 && problem.empty()) {
      nranks_ = hello.nranks;
      ranks_.resize(nranks_);
      addresses_.resize(nranks_);
    }
    if (!problem.empty()) {
      ranks_.push_back(std::move(connection));  // it hears the verdict too
      failAll(alloyInvalidUsage, problem);
      return false;
    }
    const RootReply registered = replyOf(alloyInProgress, "");
    if (sendAll(connection, &registered, sizeof(registered), deadlineAfterMs(kReplyWaitMs), "acknowledgement") !=
        alloySuccess) {
      logWarn("bootstrap root %s: rank %d left before its registration was acknowledged: %s",
              address_.describe().c_str(), hello.rank, lastError());
      return false;
    }
    ranks_[hello.rank] = std::move(connection);
    addresses_[hello.rank] = hello.listening;
    ++arrived_;
    return true;
  }

  // A connection without the id's secret: logged (HelloGate bounds the lines) and told why.
  void turnAway(const Socket& connection, const SocketAddress& from, HelloGate* gate) {
    gate->turnedAway(from, "it did not present this unique id's secret");
    const RootReply refusal = replyOf(
        alloyInvalidArgument, "commId: the root at " + address_.describe() +
                                  " refused this unique id: its secret does not match the root's (an id copied "
                                  "wrongly, or one of another job)");
    sendAll(connection, &refusal, sizeof(refusal), deadlineAfterMs(kReplyWaitMs), "refusal");
  }

  void failAll(alloyResult_t status, const std::string& problem) {
    failed_ = true;
    std::string message;
    if (status == alloyRemoteError)
      message = "bootstrap root " + address_.describe() + ": " + problem;
    else if (status == alloyTimeout)
      message = "bootstrap root " + address_.describe() + ": " + problem + " arrived within " +
                std::to_string(timeoutMs_) + " ms of the previous one (ALLOY_BOOTSTRAP_TIMEOUT_MS)";
    else
      message = "bootstrap root " + address_.describe() + ": the ranks disagree: " + problem +
                "; every rank must pass the same nranks and a distinct rank in [0, nranks)";
    logWarn("%s", message.c_str());
    verdict_ = replyOf(status, message);
    for (Socket& rank : ranks_)
      if (rank.valid()) sendAll(rank, &verdict_, sizeof(verdict_), deadlineAfterMs(kReplyWaitMs), "failure");
  }

  Socket listener_;
  SocketAddress address_;
  uint64_t secret_;
  long long timeoutMs_;
  int nranks_ = -1;
  int arrived_ = 0;
  bool failed_ = false;
  RootReply verdict_{};  // what failAll told the ranks, for those that come later
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::vector<Socket> ranks_;
  std::vector<WireAddress> addresses_;
};

// Every root thread of the process. Roots end by themselves and are joined by the next start; at exit, the
// process that started them stops the ones still waiting (an id never used, ranks still missing) and joins them,
// so that no root runs while the process's statics are destroyed. The registry itself is never destroyed: a
// child forked after a root started (a data-loader worker) inherits it but not the threads, and must neither
// join nor destroy them.
class RootThreads {
 public:
  static RootThreads& instance() {
    static RootThreads* const threads = [] {
      auto* created = new RootThreads();
      std::atexit([] { instance().stopAll(); });
      return created;
    }();
    return *threads;
  }

  alloyResult_t start(std::shared_ptr<Root> root) {
    std::lock_guard<std::mutex> lock(mutex_);
    reapFinished();
    try {
      running_.push_back(Running{root, std::thread([root] { root->run(); })});
    } catch (const std::system_error& e) {
      return fail(alloySystemError, "could not start the bootstrap root's thread: %s", e.what());
    }
    return alloySuccess;
  }

  void retire(const UniqueIdContents& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Running& r : running_)
      if (r.root->serves(id)) r.root->stop();
  }

  void stopAll() {
    if (getpid() != owner_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (Running& r : running_) r.root->stop();
    for (Running& r : running_) r.thread.join();
    running_.clear();
  }

 private:
  struct Running {
    std::shared_ptr<Root> root;
    std::thread thread;
  };

  void reapFinished() {
    for (auto r = running_.begin(); r != running_.end();) {
      if (!r->root->finished()) {
        ++r;
        continue;
      }
      r->thread.join();
      r = running_.erase(r);
    }
  }

  const pid_t owner_ = getpid();
  std::mutex mutex_;
  std::vector<Running> running_;
};

}  // namespace

long long bootstrapTimeoutMs() { return envInt("ALLOY_BOOTSTRAP_TIMEOUT_MS", 300000, 1, 1000000000000ll); }

alloyResult_t startRoot(uint8_t out[kUniqueIdBytes]) {
  SocketAddress address;
  ALLOY_TRY(chooseBootstrapAddress(&address));
  UniqueIdContents contents;
  ALLOY_TRY(randomSecret(&contents.secret));
  Socket listener;
  ALLOY_TRY(listenOn(address, &listener, &contents.root));
  ALLOY_TRY(RootThreads::instance().start(
      std::make_shared<Root>(std::move(listener), contents.root, contents.secret, bootstrapTimeoutMs())));
  encodeUniqueId(contents, out);
  logInfo("bootstrap: root listening on %s", contents.root.describe().c_str());
  return alloySuccess;
}

void retireRoot(const uint8_t id[kUniqueIdBytes]) {
  UniqueIdContents contents;
  if (decodeUniqueId(id, "commId", &contents) == alloySuccess) RootThreads::instance().retire(contents);
}

}  // namespace alloy
