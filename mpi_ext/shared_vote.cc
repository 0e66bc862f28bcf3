#include "shared_vote.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "env.h"

namespace alloy_mpix {
namespace {

// Polls of a peer's slot between calls into MPI's progress (a large message of a peer's may need one progress
// call per fragment from this rank), and before a rank that shares its core with other ranks yields it.
constexpr int kSpinsPerProgress = 64;

// Whether the communicator's ranks (all on this node) outnumber the cores they run on: then a waiting rank
// yields its core to the peer it waits for. Otherwise it keeps polling, as MPI's own waits do: yielding
// to an unrelated busy process costs its whole time slice (1.6 ms per vote at 2 ranks beside two busy
// processes on 2 cores, against 0.2 us polling). The cores are those this process may run on (a
// container's share of the node), or the node's where it is bound to one core: ranks bound to a core
// each do not share them.
bool ranksOutnumberCores(int ranks) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  long cores = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
  if (cores <= 1) cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && ranks > cores;
}

// Whether every rank of comm runs on this rank's node, alike on every rank (collective).
bool allOnOneNode(MPI_Comm comm, int size) {
  MPI_Comm local = MPI_COMM_NULL;
  int localSize = 0;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    PMPI_Comm_size(local, &localSize);
    PMPI_Comm_free(&local);
  }
  return localSize == size;
}

// The page's name: rank 0's process and a count of the pages it made, so that the communicators of one
// job and the jobs of one node never meet.
void pageName(char* name, size_t length) {
  static std::atomic<unsigned> made{0};
  std::snprintf(name, length, "/alloy-vote-%ld-%u", static_cast<long>(getpid()), made.fetch_add(1));
}

}  // namespace

std::unique_ptr<SharedVote> SharedVote::create(MPI_Comm comm) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  // allOnOneNode is collective: every rank calls it, whatever its own setting says.
  const bool onOneNode = allOnOneNode(comm, size);
  int usable = alloy::envInt("ALLOY_MPIX_SHARED_VOTE", 1, 0, 1) == 1 && size > 1 && onOneNode;
  int allUsable = 0;
  if (PMPI_Allreduce(&usable, &allUsable, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !allUsable) return nullptr;

  const size_t pageBytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (2 * size * sizeof(Slot) + pageBytes - 1) / pageBytes * pageBytes;
  char name[64] = {0};
  int fd = -1;
  if (rank == 0) {
    pageName(name, sizeof name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      close(fd);
      fd = -1;
      shm_unlink(name);
    }
    if (fd < 0) name[0] = '\0';  // tells the others there is nothing to open
  }
  if (PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm) != MPI_SUCCESS) name[0] = '\0';
  if (rank != 0 && name[0] != '\0') fd = shm_open(name, O_RDWR, 0);
  void* page = MAP_FAILED;
  if (fd >= 0) {
    page = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
  }
  int mapped = page != MAP_FAILED, allMapped = 0;
  const int agreed = PMPI_Allreduce(&mapped, &allMapped, 1, MPI_INT, MPI_MIN, comm);
  // Every rank has opened the page or given up by now: its name can go (the mappings keep it).
  if (rank == 0 && name[0] != '\0') shm_unlink(name);
  if (agreed != MPI_SUCCESS || !allMapped) {
    if (mapped) munmap(page, bytes);
    return nullptr;
  }
  return std::unique_ptr<SharedVote>(new SharedVote(comm, static_cast<Slot*>(page), bytes, rank, size));
}

SharedVote::SharedVote(MPI_Comm comm, Slot* slots, size_t bytes, int rank, int size)
    : comm_(comm), slots_(slots), bytes_(bytes), rank_(rank), size_(size), yield_(ranksOutnumberCores(size)) {}

SharedVote::~SharedVote() { munmap(slots_, bytes_); }

void SharedVote::awaitVote(const Slot& slot, uint64_t vote) const {
  for (int spins = 1; __atomic_load_n(&slot.vote, __ATOMIC_ACQUIRE) < vote; ++spins) {
    if (spins % kSpinsPerProgress != 0) continue;
    if (yield_) sched_yield();
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);  // MPI's progress
  }
}

void SharedVote::maxOf(const int* ballot, int* all, int count) {
  const uint64_t vote = ++votes_;
  Slot* set = slots_ + (vote & 1) * size_;
  Slot& mine = set[rank_];
  for (int i = 0; i < count; ++i) {
    mine.ballot[i] = ballot[i];
    all[i] = ballot[i];
  }
  __atomic_store_n(&mine.vote, vote, __ATOMIC_RELEASE);
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    awaitVote(set[q], vote);
    for (int i = 0; i < count; ++i) all[i] = set[q].ballot[i] > all[i] ? set[q].ballot[i] : all[i];
  }
}

}  // namespace alloy_mpix
