#include "relay_board.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "comm.h"
#include "error.h"

namespace alloy {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kReady = 0xa1103b0a2d00b0a2ull;  // the creator's mark that the board is sized and zeroed
constexpr size_t kHeaderBytes = 64;                 // the mark, then the count of ranks that opened it
constexpr size_t kLine = 64;

uint64_t* word(void* base, size_t offset) { return reinterpret_cast<uint64_t*>(static_cast<char*>(base) + offset); }

}  // namespace

std::string RelayBoard::name(alloyComm_t comm) {
  char text[64];
  std::snprintf(text, sizeof(text), "/alloy-relay-%016llx-%016llx", static_cast<unsigned long long>(comm->orderKey),
                static_cast<unsigned long long>(comm->blobs[comm->rank].hostHash));
  return text;
}

RelayBoard::RelayBoard(void* base, size_t bytes, std::vector<int> localPeers, int localRank, int nranks,
                       long long timeoutMs)
    : base_(base),
      bytes_(bytes),
      localPeers_(std::move(localPeers)),
      localSize_(static_cast<int>(localPeers_.size())),
      localRank_(localRank),
      nranks_(nranks),
      timeoutMs_(timeoutMs),
      rowBytes_((sizeof(uint64_t) * (1 + static_cast<size_t>(nranks)) + kLine - 1) / kLine * kLine) {}

RelayBoard::~RelayBoard() { munmap(base_, bytes_); }

alloyResult_t RelayBoard::open(alloyComm_t comm, const char* function, RelayBoardPtr* out) {
  const LocalTopology& t = comm->topology;
  const size_t rowBytes = (sizeof(uint64_t) * (1 + static_cast<size_t>(comm->nranks)) + kLine - 1) / kLine * kLine;
  const size_t bytes = kHeaderBytes + 2 * static_cast<size_t>(t.localSize) * rowBytes;  // two exchanges' rows
  const std::string path = name(comm);
  const bool creator = t.localRank == 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(comm->timeoutMs);
  int fd = -1;
  while (true) {
    fd = creator ? shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600) : shm_open(path.c_str(), O_RDWR, 0);
    if (fd >= 0) break;
    if (creator && errno == EEXIST) {
      // Left by a job that died before every rank opened it, under the same (per-process) key: reuse the name.
      shm_unlink(path.c_str());
      continue;
    }
    if (creator || errno != ENOENT)
      return fail(alloyInternalError, "%s: cannot %s the relay's shared memory %s: %s", function,
                  creator ? "create" : "open", path.c_str(), std::strerror(errno));
    if (Clock::now() > deadline)
      return fail(alloyTimeout, "%s: rank %d waited %lld ms for the first rank of its host (rank %d) to create %s",
                  function, comm->rank, comm->timeoutMs, t.localPeers[0], path.c_str());
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (creator && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    shm_unlink(path.c_str());
    return fail(alloyInternalError, "%s: cannot size the relay's shared memory %s: %s", function, path.c_str(),
                std::strerror(err));
  }
  // An opener may come before the creator sized it: wait for the size, then for the mark.
  struct stat st {};
  while (!creator && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) < bytes && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int mapErr = errno;
  close(fd);
  if (base == MAP_FAILED || (!creator && static_cast<size_t>(st.st_size) < bytes)) {
    if (base != MAP_FAILED) munmap(base, bytes);
    return fail(alloyInternalError, "%s: cannot map the relay's shared memory %s (%zu bytes): %s", function,
                path.c_str(), bytes, base == MAP_FAILED ? std::strerror(mapErr) : "it was never sized");
  }
  std::unique_ptr<RelayBoard> board(
      new RelayBoard(base, bytes, t.localPeers, t.localRank, comm->nranks, comm->timeoutMs));
  if (creator) __atomic_store_n(word(base, 0), kReady, __ATOMIC_RELEASE);
  while (__atomic_load_n(word(base, 0), __ATOMIC_ACQUIRE) != kReady) {
    if (Clock::now() > deadline)
      return fail(alloyTimeout, "%s: rank %d waited %lld ms for %s to be made ready", function, comm->rank,
                  comm->timeoutMs, path.c_str());
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (__atomic_add_fetch(word(base, sizeof(uint64_t)), 1, __ATOMIC_ACQ_REL) == static_cast<uint64_t>(t.localSize))
    shm_unlink(path.c_str());
  *out = RelayBoardPtr(board.release(), [](RelayBoard* b) { delete b; });
  return alloySuccess;
}

uint64_t* RelayBoard::row(uint64_t exchange, int localIndex) const {
  const size_t index = static_cast<size_t>(exchange % 2) * localSize_ + localIndex;
  return word(base_, kHeaderBytes + index * rowBytes_);
}

alloyResult_t RelayBoard::exchange(const std::vector<uint64_t>& mine, const char* function) {
  const uint64_t n = ++exchanges_;
  uint64_t* own = row(n, localRank_);
  std::memcpy(own + 1, mine.data(), sizeof(uint64_t) * static_cast<size_t>(nranks_));
  __atomic_store_n(own, n, __ATOMIC_RELEASE);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs_);
  auto arrived = [&](int q) { return __atomic_load_n(row(n, q), __ATOMIC_ACQUIRE) == n; };
  for (int spins = 0;; ++spins) {
    int waiting = 0;
    for (int q = 0; q < localSize_; ++q) waiting += arrived(q) ? 0 : 1;
    if (waiting == 0) return alloySuccess;
    if (Clock::now() > deadline) {
      std::string missing;
      for (int q = 0; q < localSize_; ++q)
        if (!arrived(q)) missing += (missing.empty() ? "" : ", ") + std::to_string(localPeers_[q]);
      return fail(alloyTimeout, "%s: rank %d waited %lld ms at the relay's count exchange %llu for rank(s) %s of its host",
                  function, localPeers_[localRank_], timeoutMs_, static_cast<unsigned long long>(n), missing.c_str());
    }
    if (spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

uint64_t RelayBoard::sent(int localIndex, int rank) const { return row(exchanges_, localIndex)[1 + rank]; }

}  // namespace alloy
