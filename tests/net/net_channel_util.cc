#include "net_channel_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "mpi_test_util.h"
#include "proxy_thread.h"
#include "ucx_transport.h"

namespace nettest {

using alloy::net::NetChannel;
using alloy::net::ProxyThread;
using Clock = std::chrono::steady_clock;

std::vector<std::vector<uint8_t>> allgatherOn(MPI_Comm comm, const std::vector<uint8_t>& mine) {
  int nranks = 0;
  MPI_Comm_size(comm, &nranks);
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(nranks), starts(nranks, 0);
  MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm);
  for (int r = 1; r < nranks; ++r) starts[r] = starts[r - 1] + sizes[r - 1];
  std::vector<uint8_t> all(starts.back() + sizes.back());
  MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), starts.data(), MPI_BYTE, comm);
  std::vector<std::vector<uint8_t>> byRank(nranks);
  for (int r = 0; r < nranks; ++r) byRank[r].assign(all.begin() + starts[r], all.begin() + starts[r] + sizes[r]);
  return byRank;
}

size_t residentBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  size_t kib = 0;
  while (std::fgets(line, sizeof(line), status) != nullptr)
    if (std::sscanf(line, "VmRSS: %zu kB", &kib) == 1) break;
  std::fclose(status);
  return kib << 10;
}

void openChannel(MPI_Comm comm, alloy::net::NetGeometry geometry, long long timeoutMs,
                 const std::vector<uint64_t>& hostOf, std::unique_ptr<NetChannel>* out, size_t* connectGrowth) {
  int rank = 0, nranks = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const alloy::net::NetChannelConfig config{rank, nranks, hostOf, -1, timeoutMs, geometry};
  std::unique_ptr<alloy::net::Transport> transport;
  alloy::net::UcxOptions options;
  options.inboundWorker = ProxyThread::inboundRequested();
  alloyResult_t prepared = alloy::net::createUcxTransport(options, &transport);
  std::vector<uint8_t> address, key;
  if (prepared == alloySuccess) prepared = NetChannel::prepare(config, std::move(transport), &address, &key, out);
  std::vector<std::vector<uint8_t>> addresses = allgatherOn(comm, address), keys = allgatherOn(comm, key);
  for (int r = 0; r < nranks; ++r)
    if (hostOf[r] == hostOf[rank]) addresses[r].clear(), keys[r].clear();
  ASSERT_ALLOY(alloySuccess, prepared);
  ASSERT_EQ(geometry.capacity(), (*out)->capacity());
  const size_t before = residentBytes();
  ASSERT_ALLOY(alloySuccess, (*out)->connect(addresses, keys));
  const size_t after = residentBytes();
  if (connectGrowth != nullptr) *connectGrowth = after > before ? after - before : 0;
  ProxyThread::add(out->get());
}

void closeChannel(MPI_Comm comm, std::unique_ptr<NetChannel>* channel, const char* reportAs) {
  ProxyThread::remove(channel->get());
  static bool reported = false;
  if (reportAs != nullptr && !reported && worldRank() == 0 && (*channel)->error() == alloySuccess) {
    const char* tls = std::getenv("UCX_TLS");
    std::printf("%s: UCX_TLS=%s: rank 0's connections run over %s\n", reportAs, tls != nullptr ? tls : "(unset)",
                (*channel)->describe().c_str());
    reported = true;
  }
  // A healthy channel flushes its connections; a failed one returns at once, its error reported already.
  EXPECT_ALLOY(alloySuccess, (*channel)->drain()) << " (rank " << worldRank() << ")";
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  for (int done = 0; !done; MPI_Test(&barrier, &done, MPI_STATUS_IGNORE)) {
    (*channel)->progress();
    (*channel)->progressInbound();
  }
  channel->reset();
}

void ring(NetChannel& channel, int box, uint32_t id) {
  uint32_t* word = const_cast<uint32_t*>(channel.doorbell(box));
  EXPECT_EQ(0u, __atomic_load_n(word, __ATOMIC_ACQUIRE)) << "rank " << worldRank() << ": rang over an operation in hand";
  __atomic_store_n(word, id + 1, __ATOMIC_RELEASE);
}

bool waitReleased(NetChannel& channel, int box, uint32_t id, double seconds) {
  uint32_t* word = const_cast<uint32_t*>(channel.doorbell(box));
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  bool late = false;
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != 0) {
    if (!late && Clock::now() > deadline) {
      ADD_FAILURE() << "rank " << worldRank() << ": operation " << id << " in box " << box << " was not released within "
                    << seconds << " s; aborting the channel";
      channel.abort();
      late = true;
    } else if (late && Clock::now() > deadline + std::chrono::seconds(10)) {
      // The proxy thread did not even see the abort: it is stuck inside a call, and removing the channel
      // would wait for it forever. End the job rather than hang it.
      std::fprintf(stderr, "FAILED: rank %d: abort() did not release the doorbell within 10 s: the proxy thread is "
                   "stuck in a call; aborting the job\n", worldRank());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return !late;
}

}  // namespace nettest
