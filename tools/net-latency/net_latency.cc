// net-latency: the network channel's own latency between two ranks on different (virtual) hosts, with host
// staging and no GPU (issue #36): a ping-pong of transfers, each rank's thread ringing a doorbell and
// waiting for its release as a GPU stream would, over whatever UCX_TLS gives. It prints half the round trip
// and, from both ends' stamps on this machine's steady clock (stage_split.h, splitTransfers), where one
// transfer's time goes. Set beside `ucx_perftest -t ucp_am_lat` on the same machine, the difference is
// what the channel's threads add to UCX's own latency:
//   mpirun -np 2 net-latency [-n ITERATIONS] [-b BYTES]... [--yield] [--exchange | --oneway] [--gpu [--queued]]
// --yield makes the waiting thread yield between polls (machines with fewer cores than the ranks' threads).
// --exchange makes every operation a send and a receive on both ranks at once, as an alltoall between two
// hosts is, and prints each operation's time and the bytes per second each way instead of the split.
// --gpu makes rank 0's transfers the library's staging kernel on its GPU (gpu_stager.h), one launch and one
// synchronisation each, and splits the two directions apart: the GPU's sends' "ring -> proxy" is then its
// launch -> the proxy found the doorbell, and its receives' "released -> seen" the release -> the
// synchronisation returned. Rank 1 stays a CPU thread, so one GPU suffices. --queued launches rank 0's
// send and receive of a round trip back to back and synchronises once, as a loop of operations does: the
// receive's launch is then off its path. --oneway times rank 0's transfers back to back instead of a
// ping-pong, as a broadcast's root makes them (with --gpu --queued, all launched at once): rank 1 prints the
// time from one receive to the next.
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
#include "gpu_stager.h"
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
// communicator creation sets it up; with a device, its staging is pinned and mapped as a GPU rank's is.
std::unique_ptr<NetChannel> openChannel(int rank, int cudaDevice) {
  const int peer = 1 - rank;
  const alloy::net::NetChannelConfig config{rank, 2, {0, 1}, cudaDevice, 30000, alloy::net::netGeometry()};
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
  check(channel->awaitServed(30000), "waiting for the last operations to be served");
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
  // gpu: this rank's transfers by the staging kernel; queued: both kernels of a round trip launched at once.
  PingPong(NetChannel* channel, int rank, size_t bytes, bool yield, bool gpu, bool queued)
      : channel_(channel), rank_(rank), bytes_(bytes), yield_(yield), queued_(queued) {
    if (gpu) gpu_ = std::make_unique<GpuStager>(bytes);
  }

  // One round trip: rank 0 sends, then receives; rank 1 the other way round. Returns its microseconds.
  double roundTrip() {
    const int64_t start = nowNs();
    if (gpu_ && queued_) {
      queuedRoundTrip();
    } else {
      transfer(rank_ == 0, rank_ != 0);
      transfer(rank_ != 0, rank_ == 0);
    }
    return static_cast<double>(nowNs() - start) / 1000.0;
  }

  void stopVerifying() { verify_ = false; }

  // count transfers from rank 0 to rank 1, back to back. Returns, on rank 1, the microseconds from one
  // receive to the next (the first's end to the last's, over count - 1); on rank 0, 0.
  double oneWay(int count) {
    if (rank_ == 0) {
      Added last{};
      for (int i = 0; i < count; ++i) {
        if (!gpu_ || !queued_) {
          transfer(true, false);
          continue;
        }
        last = add(true, false);
        launch(last);
      }
      if (gpu_ && queued_) completed(last, gpu_->finish(kReleaseSeconds));
      return 0;
    }
    int64_t first = 0;
    for (int i = 0; i < count; ++i) {
      transfer(false, true);
      if (i == 0) first = nowNs();
    }
    return static_cast<double>(nowNs() - first) / 1000.0 / (count - 1);
  }

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
  // An operation added to the channel, not yet rung.
  struct Added {
    uint32_t id;
    int box;
    size_t round;  // what fill() takes for its bytes
    bool send, receive;
  };

  Added add(bool send, bool receive) {
    const int peer = 1 - rank_;
    NetOperation op;
    op.round = 0;  // one round per operation, as the library's small operations
    if (send) op.sends.push_back(alloy::NetMessage{peer, bytes_});
    if (receive) op.recvs.push_back(alloy::NetMessage{peer, bytes_});
    // Box 0 each time, as the library's operations of one round use (GpuStager::launch relies on it).
    Added a{0, NetChannel::boxOf(0), round_++, send, receive};
    if (send && !gpu_) std::memset(channel_->outbox(peer, a.box), fill(a.round, rank_), bytes_);
    check(channel_->addOperation(std::move(op), false, &a.id), "adding an operation");
    return a;
  }

  // The staging kernel's launch for an added operation.
  void launch(const Added& a) {
    const int peer = 1 - rank_;
    gpu_->launch(static_cast<uint32_t*>(channel_->doorbellForDevice(a.box)), a.id + 1,
                 a.send ? channel_->outbox(peer, a.box) : nullptr, a.receive ? channel_->inbox(peer, a.box) : nullptr);
  }

  void transfer(bool send, bool receive) {
    const Added a = add(send, receive);
    if (gpu_ && verify_) gpu_->prepare(fill(a.round, rank_), fill(a.round, 1 - rank_) ^ 0xff);
    const int64_t rang = nowNs();
    if (gpu_) launch(a);
    const bool released = gpu_ ? gpu_->finish(kReleaseSeconds)
                               : ringAndWait(const_cast<uint32_t*>(channel_->doorbell(a.box)), a.id + 1, rang);
    times_.emplace_back(rang, nowNs());
    completed(a, released);
  }

  // Rank 0's round trip with --queued: the send's kernel and the receive's launched back to back, one
  // synchronisation, as a loop of operations enqueues them. The send's "seen" and the receive's "rang" are
  // the launch's moment (the split reads neither).
  void queuedRoundTrip() {
    const Added out = add(true, false), in = add(false, true);
    if (verify_) gpu_->prepare(fill(out.round, rank_), fill(in.round, 1 - rank_) ^ 0xff);
    const int64_t rang = nowNs();
    launch(out);
    launch(in);
    const bool released = gpu_->finish(kReleaseSeconds);
    times_.emplace_back(rang, rang);
    completed(out, released);
    times_.emplace_back(rang, nowNs());
    completed(in, released);
  }

  void completed(const Added& a, bool released) {
    if (!released) {
      std::fprintf(stderr, "net-latency: rank %d: operation %u not released within %.0f s (%s)\n", rank_, a.id,
                   kReleaseSeconds, channel_->errorMessage().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (channel_->error() != alloySuccess) die(channel_->errorMessage().c_str());
    if (a.receive && verify_) checkReceived(a.box, fill(a.round, 1 - rank_), a.round);
  }

  // What a GPU stream does, on this thread: the doorbell rung, then polled until the proxy releases it.
  bool ringAndWait(uint32_t* bell, uint32_t value, int64_t rang) const {
    __atomic_store_n(bell, value, __ATOMIC_RELEASE);
    const int64_t deadline = rang + static_cast<int64_t>(kReleaseSeconds * 1e9);
    while (__atomic_load_n(bell, __ATOMIC_ACQUIRE) != 0) {
      if (yield_) sched_yield();
      if (nowNs() > deadline) return false;
    }
    return true;
  }

  // The byte a rank sends in operation `round` (both ranks count alike): the peer's and the last round's
  // differ from it, so stale or misplaced bytes show.
  static int fill(size_t round, int rank) { return static_cast<int>((round * 2 + rank) & 0xff); }

  // The received bytes where the receiver takes them from: the inbox, or the GPU's destination buffer.
  void checkReceived(int box, int expected, size_t round) const {
    const char* inbox = channel_->inbox(1 - rank_, box);
    long long wrong = -1;
    if (gpu_) wrong = gpu_->firstMismatch(expected);
    for (size_t i = 0; !gpu_ && wrong < 0 && i < bytes_; ++i)
      if (static_cast<unsigned char>(inbox[i]) != expected) wrong = static_cast<long long>(i);
    if (wrong < 0) return;
    std::fprintf(stderr, "net-latency: rank %d: byte %lld of %zu received in operation %zu is wrong; expected %d\n",
                 rank_, wrong, bytes_, round, expected);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  NetChannel* channel_;
  int rank_;
  size_t bytes_;
  bool yield_;
  bool queued_;
  size_t round_ = 0;
  bool verify_ = true;  // the warm-up checks every byte received; the timed operations check none
  std::unique_ptr<GpuStager> gpu_;  // --gpu on rank 0
  std::vector<std::pair<int64_t, int64_t>> times_;  // per operation: rang, seen
};

// Rank 0's line for one size: the round trips' spread and the transfers' split; with --gpu a line per
// direction, the sender named at the end. Even operations are rank 0's sends, odd ones rank 1's; both ranks
// ran the same count.
void report(size_t bytes, std::vector<double> halves, const PingPong& pingPong, int rank, bool byDirection) {
  constexpr int kFields = 6;
  std::vector<int64_t> mine;
  for (const RankedOperation& o : pingPong.recent())
    for (int64_t v : {o.rang, o.stages.rung, o.stages.posted, o.stages.in, o.stages.released, o.seen}) mine.push_back(v);
  std::vector<int64_t> theirs(mine.size());
  if (rank == 1) MPI_Send(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, 0, 2, MPI_COMM_WORLD);
  if (rank != 0) return;
  MPI_Recv(theirs.data(), static_cast<int>(theirs.size()), MPI_INT64_T, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const size_t ops = mine.size() / kFields;
  const auto record = [](const int64_t* f) {
    return RankedOperation{f[0], alloy::NetStages{0, f[1], f[2], 0, f[3], f[4]}, f[5]};
  };
  std::sort(halves.begin(), halves.end());
  const size_t n = halves.size();
  // first: 0 for every transfer, 0 or 1 for one direction (stride 2); ops is even, and the window starts at
  // one of rank 0's sends.
  const auto line = [&](size_t first, size_t stride, const char* sender) {
    std::vector<RankedOperation> senders, receivers;
    for (size_t k = first; k < ops; k += stride) {
      const bool zeroSends = k % 2 == 0;
      senders.push_back(record(&(zeroSends ? mine : theirs)[kFields * k]));
      receivers.push_back(record(&(zeroSends ? theirs : mine)[kFields * k]));
    }
    const TransferSplit t = splitTransfers(senders, receivers);
    std::printf("%10zu %9.2f %7.2f %7.2f %9zu %12.2f %14.2f %11.2f %14.2f %16.2f %8.2f%s\n", bytes, halves[n / 2],
                halves[n / 10], halves[n * 9 / 10], t.transfers, t.ringToProxy, t.proxyToPosted, t.postedToIn,
                t.inToReleased, t.releasedToSeen, t.total, sender);
  };
  if (!byDirection) return line(0, 1, "");
  line(0, 2, "  gpu");
  line(1, 2, "  cpu");
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

struct Options {
  int iterations = 2000;
  std::vector<size_t> sizes;
  bool yield = false;
  bool exchange = false;
  bool gpu = false;
  bool queued = false;
  bool oneWay = false;
};

// Rank 0's line for one size in --oneway mode: rank 1's time from one receive to the next.
void reportOneWay(size_t bytes, double mine, int rank) {
  double each = mine;
  if (rank == 1) MPI_Send(&each, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
  if (rank != 0) return;
  MPI_Recv(&each, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::printf("%10zu %9.2f\n", bytes, each);
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    bool* flag = std::strcmp(argv[i], "--yield") == 0      ? &o->yield
                 : std::strcmp(argv[i], "--exchange") == 0 ? &o->exchange
                 : std::strcmp(argv[i], "--gpu") == 0      ? &o->gpu
                 : std::strcmp(argv[i], "--queued") == 0   ? &o->queued
                 : std::strcmp(argv[i], "--oneway") == 0   ? &o->oneWay
                                                           : nullptr;
    if (flag != nullptr) {
      *flag = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    char* end = nullptr;
    const long long v = std::strtoll(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v <= 0) return false;
    if (std::strcmp(argv[i], "-n") == 0 && v >= static_cast<long long>(alloy::kNetStagesKept) / 2 && v <= 10000000)
      o->iterations = static_cast<int>(v);
    else if (std::strcmp(argv[i], "-b") == 0) o->sizes.push_back(static_cast<size_t>(v));
    else return false;
    ++i;
  }
  return (!o->queued || (o->gpu && !o->exchange)) && !(o->oneWay && o->exchange);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  const size_t capacity = alloy::net::netGeometry().capacity();
  const bool parsed = parse(argc, argv, &o);
  if (o.sizes.empty()) o.sizes = {8, 8192};
  const bool fits = std::all_of(o.sizes.begin(), o.sizes.end(), [&](size_t b) { return b <= capacity; });
  if (size != 2 || !parsed || !fits) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpirun -np 2 net-latency [-n ITERATIONS (>= %zu)] [-b BYTES (1..%zu, the channel's "
                   "capacity)]... [--yield] [--exchange | --oneway] [--gpu [--queued]]\n(%d ranks given)\n",
                   alloy::kNetStagesKept / 2, capacity, size);
    MPI_Finalize();
    return 2;
  }
  int devices = 0;
  if (o.gpu && (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)) {
    if (rank == 0) std::fprintf(stderr, "net-latency: --gpu: no CUDA device on this machine\n");
    MPI_Finalize();
    return 2;
  }
  const bool gpuHere = o.gpu && rank == 0;
  if (gpuHere && cudaSetDevice(0) != cudaSuccess) die("cudaSetDevice(0)");
  std::unique_ptr<NetChannel> channel = openChannel(rank, gpuHere ? 0 : -1);
  if (rank == 0) {
    const char* tls = std::getenv("UCX_TLS");
    std::printf("net-latency: 2 ranks on 2 virtual hosts, UCX_TLS=%s, %d %s per size, %s, the waiting thread %s; us",
                tls != nullptr ? tls : "(unset)", o.iterations, o.exchange ? "exchanges" : "round trips",
                !o.gpu     ? "no GPU"
                : o.queued ? "rank 0's transfers by its GPU's staging kernel, a round trip's launched at once"
                           : "rank 0's transfers by its GPU's staging kernel, each synchronised",
                o.yield ? "yielding" : "spinning");
    if (o.exchange)
      std::printf("\n     bytes  exchange     p10     p90 GB/s each way\n");
    else if (o.oneWay)
      std::printf("\n     bytes  one way, from one receive to the next\n");
    else
      std::printf(", transfer stages as medians of the last %zu\n     bytes  half rtt     p10     p90 transfers "
                  "ring->proxy proxy->posted posted->in in->released released->seen    total\n", alloy::kNetStagesKept);
  }
  for (size_t bytes : o.sizes) {
    PingPong pingPong(channel.get(), rank, bytes, o.yield, gpuHere, o.queued);
    for (int i = 0; i < kWarmup; ++i) o.exchange ? pingPong.exchange() : pingPong.roundTrip();
    pingPong.stopVerifying();
    MPI_Barrier(MPI_COMM_WORLD);
    if (o.oneWay) {
      reportOneWay(bytes, pingPong.oneWay(o.iterations), rank);
      continue;
    }
    std::vector<double> times;
    for (int i = 0; i < o.iterations; ++i)
      times.push_back(o.exchange ? pingPong.exchange() : pingPong.roundTrip() / 2);
    if (o.exchange) reportExchanges(bytes, times, rank);
    else report(bytes, times, pingPong, rank, o.gpu);
  }
  closeChannel(std::move(channel));
  MPI_Finalize();
  return 0;
}
