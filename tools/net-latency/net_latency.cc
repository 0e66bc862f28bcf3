// net-latency: the network channel's own latency between two ranks on different (virtual) hosts, with host
// staging and no GPU (issue #36): a ping-pong of transfers, each rank's thread ringing a doorbell and
// waiting for its release as a GPU stream would, over whatever UCX_TLS gives. It prints half the round trip
// and, from both ends' stamps on this machine's steady clock (stage_split.h, splitTransfers), where one
// transfer's time goes. Set beside `ucx_perftest -t ucp_am_lat` on the same machine, the difference is
// what the channel's threads add to UCX's own latency:
//   mpirun -np 2 net-latency [-n ITERATIONS] [-b BYTES]... [--yield] [--exchange]
// --yield makes the waiting thread yield between polls (machines with fewer cores than the ranks' threads).
// --exchange makes every operation a send and a receive on both ranks at once, as an alltoall between two
// hosts is, and prints each operation's time and the bytes per second each way instead of the split.
// The warm-up operations of each size check every byte they receive; the timed ones check none.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "net_channel.h"
#include "proxy_thread.h"
#include "stage_split.h"
#include "ucx_transport.h"

namespace {

using alloy::net::NetChannel;
using alloy::net::NetOperation;

constexpr int kWarmup = 100;
constexpr double kReleaseSeconds = 30;  // a doorbell not released by then: the job is ended

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "net-latency: %s: %s\n", what, alloy::lastError());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(alloyResult_t result, const char* what) {
  if (result != alloySuccess) die(what);
}

// The other rank's bytes (two ranks).
std::vector<uint8_t> swapWithPeer(const std::vector<uint8_t>& mine, int peer) {
  unsigned long long size = mine.size(), theirs = 0;
  MPI_Sendrecv(&size, 1, MPI_UNSIGNED_LONG_LONG, peer, 0, &theirs, 1, MPI_UNSIGNED_LONG_LONG, peer, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  std::vector<uint8_t> out(theirs);
  MPI_Sendrecv(mine.data(), static_cast<int>(size), MPI_BYTE, peer, 1, out.data(), static_cast<int>(theirs), MPI_BYTE,
               peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return out;
}

// This rank's channel to the other, on its own virtual host (host = rank), served by the proxy thread as
// communicator creation sets it up.
std::unique_ptr<NetChannel> openChannel(int rank) {
  const int peer = 1 - rank;
  const alloy::net::NetChannelConfig config{rank, 2, {0, 1}, -1, 30000, alloy::net::netGeometry()};
  alloy::net::UcxOptions options;
  options.inboundWorker = alloy::net::ProxyThread::inboundRequested();
  std::unique_ptr<alloy::net::Transport> transport;
  check(alloy::net::createUcxTransport(options, &transport), "creating the UCX transport");
  std::vector<uint8_t> address, key;
  std::unique_ptr<NetChannel> channel;
  check(NetChannel::prepare(config, std::move(transport), &address, &key, &channel), "preparing the channel");
  std::vector<std::vector<uint8_t>> addresses(2), keys(2);
  addresses[peer] = swapWithPeer(address, peer);
  keys[peer] = swapWithPeer(key, peer);
  check(channel->connect(addresses, keys), "connecting");
  alloy::net::ProxyThread::add(channel.get());
  return channel;
}

// As communicator destruction does: off the proxy thread, drained, freed once the peer drained too.
void closeChannel(std::unique_ptr<NetChannel> channel) {
  alloy::net::ProxyThread::remove(channel.get());
  check(channel->drain(), "draining");
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  for (int done = 0; !done; MPI_Test(&barrier, &done, MPI_STATUS_IGNORE)) {
    channel->progress();
    channel->progressInbound();
  }
}

class PingPong {
 public:
  PingPong(NetChannel* channel, int rank, size_t bytes, bool yield)
      : channel_(channel), rank_(rank), bytes_(bytes), yield_(yield) {}

  // One round trip: rank 0 sends, then receives; rank 1 the other way round. Returns its microseconds.
  double roundTrip() {
    const int64_t start = nowNs();
    transfer(rank_ == 0, rank_ != 0);
    transfer(rank_ != 0, rank_ == 0);
    return static_cast<double>(nowNs() - start) / 1000.0;
  }

  void stopVerifying() { verify_ = false; }

  // One operation that sends to the peer and receives from it. Returns its microseconds.
  double exchange() {
    const int64_t start = nowNs();
    transfer(true, true);
    return static_cast<double>(nowNs() - start) / 1000.0;
  }

  // The last operations with the channel's stamps (oldest first), at most alloy::kNetStagesKept.
  std::vector<RankedOperation> recent() const {
    std::vector<alloy::NetStages> stages(alloy::kNetStagesKept);
    stages.resize(channel_->recentStages(stages.data(), stages.size()));
    std::vector<RankedOperation> out;
    for (size_t k = 0; k < stages.size(); ++k) {
      const size_t j = times_.size() - stages.size() + k;
      out.push_back(RankedOperation{times_[j].first, stages[k], times_[j].second});
    }
    return out;
  }

 private:
  void transfer(bool send, bool receive) {
    const int peer = 1 - rank_;
    NetOperation op;
    op.round = round_;
    if (send) op.sends.push_back(alloy::NetMessage{peer, bytes_});
    if (receive) op.recvs.push_back(alloy::NetMessage{peer, bytes_});
    const int box = NetChannel::boxOf(round_++);
    if (send) std::memset(channel_->outbox(peer, box), fill(round_, rank_), bytes_);
    uint32_t id = 0;
    check(channel_->addOperation(std::move(op), false, &id), "adding an operation");
    uint32_t* bell = const_cast<uint32_t*>(channel_->doorbell(box));
    const int64_t rang = nowNs();
    __atomic_store_n(bell, id + 1, __ATOMIC_RELEASE);
    const int64_t deadline = rang + static_cast<int64_t>(kReleaseSeconds * 1e9);
    while (__atomic_load_n(bell, __ATOMIC_ACQUIRE) != 0) {
      if (yield_) sched_yield();
      if (nowNs() > deadline) {
        std::fprintf(stderr, "net-latency: rank %d: operation %u not released within %.0f s (%s)\n", rank_, id,
                     kReleaseSeconds, channel_->errorMessage().c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    times_.emplace_back(rang, nowNs());
    if (channel_->error() != alloySuccess) die(channel_->errorMessage().c_str());
    if (receive && verify_) checkInbox(channel_->inbox(peer, box), fill(round_, peer));
  }

  // The byte a rank sends in operation `round` (both ranks count alike): the peer's and the last round's
  // differ from it, so stale or misplaced bytes show.
  static int fill(size_t round, int rank) { return static_cast<int>((round * 2 + rank) & 0xff); }

  void checkInbox(const char* inbox, int expected) const {
    for (size_t i = 0; i < bytes_; ++i)
      if (static_cast<unsigned char>(inbox[i]) != expected) {
        std::fprintf(stderr, "net-latency: rank %d: byte %zu of %zu received in operation %zu is %d; expected %d\n",
                     rank_, i, bytes_, round_, static_cast<unsigned char>(inbox[i]), expected);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
  }

  NetChannel* channel_;
  int rank_;
  size_t bytes_;
  bool yield_;
  size_t round_ = 0;
  bool verify_ = true;  // the warm-up checks every byte received; the timed operations check none
  std::vector<std::pair<int64_t, int64_t>> times_;  // per operation: rang, seen
};

// Rank 0's line for one size: the round trips' spread and the transfers' split. Even operations are rank 0's
// sends, odd ones rank 1's; both ranks ran the same count.
void report(size_t bytes, std::vector<double> halves, const PingPong& pingPong, int rank) {
  constexpr int kFields = 6;
  std::vector<int64_t> mine;
  for (const RankedOperation& o : pingPong.recent())
    for (int64_t v : {o.rang, o.stages.rung, o.stages.posted, o.stages.in, o.stages.released, o.seen}) mine.push_back(v);
  std::vector<int64_t> theirs(mine.size());
  if (rank == 1) MPI_Send(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, 0, 2, MPI_COMM_WORLD);
  if (rank != 0) return;
  MPI_Recv(theirs.data(), static_cast<int>(theirs.size()), MPI_INT64_T, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<RankedOperation> senders, receivers;
  const size_t ops = mine.size() / kFields;
  const auto record = [](const int64_t* f) {
    return RankedOperation{f[0], alloy::NetStages{0, f[1], f[2], 0, f[3], f[4]}, f[5]};
  };
  for (size_t k = 0; k < ops; ++k) {
    const bool zeroSends = k % 2 == 0;  // ops is even: the window starts at one of rank 0's sends
    senders.push_back(record(&(zeroSends ? mine : theirs)[kFields * k]));
    receivers.push_back(record(&(zeroSends ? theirs : mine)[kFields * k]));
  }
  const TransferSplit t = splitTransfers(senders, receivers);
  std::sort(halves.begin(), halves.end());
  const size_t n = halves.size();
  std::printf("%10zu %9.2f %7.2f %7.2f %9zu %12.2f %14.2f %11.2f %14.2f %16.2f %8.2f\n", bytes, halves[n / 2],
              halves[n / 10], halves[n * 9 / 10], t.transfers, t.ringToProxy, t.proxyToPosted, t.postedToIn,
              t.inToReleased, t.releasedToSeen, t.total);
}

// Rank 0's line for one size in --exchange mode: the operations' spread and the bytes per second each way
// at the median.
void reportExchanges(size_t bytes, std::vector<double> times, int rank) {
  if (rank != 0) return;
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  std::printf("%10zu %9.2f %7.2f %7.2f %12.3f\n", bytes, times[n / 2], times[n / 10], times[n * 9 / 10],
              static_cast<double>(bytes) / times[n / 2] / 1000.0);
}

bool parse(int argc, char** argv, int* iterations, std::vector<size_t>* sizes, bool* yield, bool* exchange) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--yield") == 0) {
      *yield = true;
      continue;
    }
    if (std::strcmp(argv[i], "--exchange") == 0) {
      *exchange = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    char* end = nullptr;
    const long long v = std::strtoll(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v <= 0) return false;
    if (std::strcmp(argv[i], "-n") == 0 && v >= static_cast<long long>(alloy::kNetStagesKept) / 2 && v <= 10000000)
      *iterations = static_cast<int>(v);
    else if (std::strcmp(argv[i], "-b") == 0) sizes->push_back(static_cast<size_t>(v));
    else return false;
    ++i;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iterations = 2000;
  std::vector<size_t> sizes;
  bool yield = false, exchange = false;
  const size_t capacity = alloy::net::netGeometry().capacity();
  const bool parsed = parse(argc, argv, &iterations, &sizes, &yield, &exchange);
  if (sizes.empty()) sizes = {8, 8192};
  const bool fits = std::all_of(sizes.begin(), sizes.end(), [&](size_t b) { return b <= capacity; });
  if (size != 2 || !parsed || !fits) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpirun -np 2 net-latency [-n ITERATIONS (>= %zu)] [-b BYTES (1..%zu, the channel's "
                   "capacity)]... [--yield] [--exchange]\n(%d ranks given)\n", alloy::kNetStagesKept / 2, capacity, size);
    MPI_Finalize();
    return 2;
  }
  std::unique_ptr<NetChannel> channel = openChannel(rank);
  if (rank == 0) {
    const char* tls = std::getenv("UCX_TLS");
    std::printf("net-latency: 2 ranks on 2 virtual hosts, UCX_TLS=%s, %d %s per size, the waiting thread %s; us",
                tls != nullptr ? tls : "(unset)", iterations, exchange ? "exchanges" : "round trips",
                yield ? "yielding" : "spinning");
    if (exchange)
      std::printf("\n     bytes  exchange     p10     p90 GB/s each way\n");
    else
      std::printf(", transfer stages as medians of the last %zu\n     bytes  half rtt     p10     p90 transfers "
                  "ring->proxy proxy->posted posted->in in->released released->seen    total\n", alloy::kNetStagesKept);
  }
  for (size_t bytes : sizes) {
    PingPong pingPong(channel.get(), rank, bytes, yield);
    for (int i = 0; i < kWarmup; ++i) exchange ? pingPong.exchange() : pingPong.roundTrip();
    pingPong.stopVerifying();
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<double> times;
    for (int i = 0; i < iterations; ++i) times.push_back(exchange ? pingPong.exchange() : pingPong.roundTrip() / 2);
    if (exchange) reportExchanges(bytes, times, rank);
    else report(bytes, times, pingPong, rank);
  }
  closeChannel(std::move(channel));
  MPI_Finalize();
  return 0;
}
