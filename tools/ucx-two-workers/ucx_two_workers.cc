// ucx-two-workers: Alloy's traffic between virtual hosts with the inbound thread on (issue #11), in UCX
// alone, to tell whether messages that never arrive are lost inside UCX or by Alloy. Each MPI rank is a
// host of its own with one UCP context and two single-threaded workers: "outbound" holds the endpoints to
// every other rank's "inbound" worker and is progressed by the main thread; "inbound" is progressed by a
// second thread and serves what peers do to this rank's memory, as in lib/net_ucx (-1 puts both roles on
// one worker, as Alloy does with the thread off). Per round, every pair that talks exchanges Alloy's
// messages: a "ready" as a 64-bit atomic swap into the peer's control line, then, once the peer's ready has
// landed here, the data and its header as one eager active message that the target's handler writes
// (data first), or, above -e bytes, as Alloy sends larger transfers: puts of -c bytes each, a flush of the
// endpoint, and once it completed the header as another atomic swap. Rank 1 may start each round late (-l), as the channel test RunsAhead's late rank does.
//
//   mpirun -np N ucx-two-workers [-n ITERATIONS] [-r ROUNDS] [-l LATE_MS] [-d IDLE_MS] [-t TIMEOUT_MS] [-s BYTES]
//                                [-e EAGER_BYTES] [-c CHUNK_BYTES] [-p all|01] [-1] [-P]
//
// -d: after creating its endpoints each rank stays away from UCX for a random 0..IDLE_MS ms before its
// workers are progressed, as Alloy's creation does (the caller's thread creates the endpoints, then waits
// in MPI collectives before the proxy and inbound threads take the channel), so that peers' connection
// set-up and first messages reach workers nobody progresses yet.
// -P: one inbound thread for the whole process, serving the inbound worker of iteration after iteration
// and sleeping between sweeps once idle, as Alloy's process-wide inbound thread does (without -P each
// iteration starts a spinning thread of its own).
//
// Every iteration builds everything afresh (context, workers, endpoints, memory), as each communicator
// does. A round that times out prints, per peer, which of its messages never landed here and whether this
// rank's own messages to it completed; the iteration is then torn down and the next one goes on. Last
// line: "Final: LOST_ROUNDS ITERATIONS"; exit 2 when any round lost a message, 1 on a usage or UCX error.
#include <mpi.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ucx_tool.h"

namespace ucxtool {
const char* const kToolName = "ucx-two-workers";
}  // namespace ucxtool

namespace {

using ucxtool::check;
using ucxtool::die;

using Clock = std::chrono::steady_clock;

struct Options {
  int iterations = 50;
  int rounds = 4;
  int lateMs = 0;
  int idleMs = 0;
  int timeoutMs = 3000;
  size_t bytes = 4096;
  size_t eagerBytes = 65536;  // Alloy's ALLOY_NET_EAGER_BYTES
  size_t chunkBytes = 65536;
  bool allPairs = true;  // false: only ranks 0 and 1 talk (RunsAhead); the others only connect
  bool twoWorkers = true;
  bool persistentInbound = false;
};

Options parse(int argc, char** argv) {
  static const char* const kUsage =
      "usage: ucx-two-workers [-n ITERATIONS] [-r ROUNDS] [-l LATE_MS] [-d IDLE_MS] [-t TIMEOUT_MS] [-s BYTES] "
      "[-e EAGER_BYTES] [-c CHUNK_BYTES] [-p all|01] [-1] [-P]";
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-1") {
      o.twoWorkers = false;
      continue;
    }
    if (flag == "-P") {
      o.persistentInbound = true;
      continue;
    }
    if (i + 1 >= argc) die("arguments", flag + " needs a value (" + kUsage + ")");
    const std::string text = argv[++i];
    if (flag == "-p") {
      if (text != "all" && text != "01") die("arguments", "-p " + text + ": expected all or 01");
      o.allPairs = text == "all";
      continue;
    }
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 0);
    if (end == text.c_str() || *end != '\0') die("arguments", flag + " " + text + ": expected a number");
    if (flag == "-n" && value > 0 && value < (1u << 24)) o.iterations = static_cast<int>(value);
    else if (flag == "-r" && value > 0 && value < (1u << 20)) o.rounds = static_cast<int>(value);
    else if (flag == "-l" && value < 600000) o.lateMs = static_cast<int>(value);
    else if (flag == "-d" && value < 600000) o.idleMs = static_cast<int>(value);
    else if (flag == "-t" && value > 0 && value < 3600000) o.timeoutMs = static_cast<int>(value);
    else if (flag == "-s" && value > 0 && value <= (64u << 20)) o.bytes = value;
    else if (flag == "-e" && value <= (64u << 20)) o.eagerBytes = value;
    else if (flag == "-c" && value > 0 && value <= (64u << 20)) o.chunkBytes = value;
    else die("arguments", flag + " " + text + ": out of range or unknown (" + kUsage + ")");
  }
  return o;
}

constexpr unsigned kAmId = 0x41;  // the data + header message, as Alloy's putSignal

// The active message's header: where the target writes the data and then the header word.
struct MessageHeader {
  uint64_t dataAddress;
  uint64_t headerAddress;
  uint64_t value;
  uint64_t bytes;
};

// This rank's memory that peers write: per peer, a ready word, a header word and an inbox.
struct Region {
  size_t bytes;
  size_t inboxBytes;
  int nranks;
  std::vector<uint64_t> words;  // [2 * nranks] then the inboxes, 8-byte aligned
  uint64_t* ready(int peer) { return &words[2 * peer]; }
  uint64_t* header(int peer) { return &words[2 * peer + 1]; }
  uint8_t* inbox(int peer) { return reinterpret_cast<uint8_t*>(&words[2 * nranks]) + peer * inboxBytes; }
  Region(int n, size_t inbox)
      : bytes(0), inboxBytes((inbox + 7) / 8 * 8), nranks(n), words(2 * n + n * ((inbox + 7) / 8)) {
    bytes = words.size() * sizeof(uint64_t);
  }
};

// What a peer needs to reach this rank: the inbound worker's address, the region's base and its rkey.
struct Contact {
  std::vector<uint8_t> address;
  uint64_t base = 0;
  std::vector<uint8_t> rkey;
};

uint64_t load(const uint64_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

ucs_status_t onMessage(void* arg, const void* header, size_t headerBytes, void* data, size_t bytes,
                       const ucp_am_recv_param_t* param) {
  (void)arg;
  MessageHeader h{};
  if (headerBytes != sizeof h || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    std::fprintf(stderr, "ucx-two-workers: a message with a %zu-byte header or by rendezvous\n", headerBytes);
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof h);
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(h.dataAddress)), data, bytes);
  __atomic_store_n(reinterpret_cast<uint64_t*>(static_cast<uintptr_t>(h.headerAddress)), h.value, __ATOMIC_RELEASE);
  return UCS_OK;
}

// Gathers every rank's byte string.
std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) {
  int nranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(nranks), offsets(nranks);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < nranks; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<uint8_t> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> out(nranks);
  for (int r = 0; r < nranks; ++r) out[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + lengths[r]);
  return out;
}

// One operation this rank posted: done once UCX calls back (or at once).
struct Sent {
  std::atomic<int> state{0};  // 0 not posted, 1 in flight, 2 completed, 3 failed
  uint64_t operand = 0, reply = 0;
  MessageHeader header{};
};

void onSent(void* request, ucs_status_t status, void* user) {
  static_cast<Sent*>(user)->state.store(status == UCS_OK ? 2 : 3);
  ucp_request_free(request);
}

void posted(Sent* s, ucs_status_ptr_t result) {
  if (UCS_PTR_IS_PTR(result)) return;
  s->state.store(UCS_PTR_STATUS(result) == UCS_OK ? 2 : 3);
}

// The process-wide inbound thread of -P: progresses every registered worker in turn; after 2 ms without
// work it sleeps between sweeps, 1 us doubling up to 100 us (Alloy's ALLOY_PROXY_SPIN_US and
// ALLOY_PROXY_SLEEP_US defaults).
class InboundServer {
 public:
  static InboundServer& instance() {
    static InboundServer server;
    return server;
  }
  void add(ucp_worker_h worker) {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_.push_back(worker);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  // Once this returns the thread is outside the worker for good.
  void remove(ucp_worker_h worker) {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_.erase(std::remove(workers_.begin(), workers_.end(), worker), workers_.end());
  }
  ~InboundServer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    auto lastBusy = Clock::now();
    auto sleep = std::chrono::microseconds(1);
    while (true) {
      bool busy = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) return;
        for (ucp_worker_h w : workers_) busy = ucp_worker_progress(w) != 0 || busy;
      }
      if (busy) {
        lastBusy = Clock::now();
        sleep = std::chrono::microseconds(1);
      }
      if (busy || Clock::now() - lastBusy < std::chrono::milliseconds(2)) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, std::chrono::microseconds(100));
      }
    }
  }
  std::mutex mutex_;
  std::vector<ucp_worker_h> workers_;
  bool stop_ = false;
  std::thread thread_;
};

// One iteration's UCX objects, built afresh and released in UCX's order.
class Host {
 public:
  Host(const Options& o, int rank, int nranks)
      : o_(o), rank_(rank), nranks_(nranks), region_(nranks, o.bytes), readies_(nranks), datas_(nranks),
        headers_(nranks), out_(o.bytes) {
    context_ = ucxtool::initContext(UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM, true);
    outbound_ = ucxtool::createWorker(context_);
    inbound_ = o.twoWorkers ? ucxtool::createWorker(context_) : outbound_;
    ucp_am_handler_param_t handler = {};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB;
    handler.id = kAmId;
    handler.flags = UCP_AM_FLAG_WHOLE_MSG;
    handler.cb = &onMessage;
    check(ucp_worker_set_am_recv_handler(inbound_, &handler), "ucp_worker_set_am_recv_handler");
    connect();
  }
  ~Host() {
    stopInbound();
    // As Alloy's transport: keys, then a forced close of every endpoint, then memory and workers.
    for (ucp_rkey_h k : rkeys_)
      if (k != nullptr) ucp_rkey_destroy(k);
    for (ucp_ep_h ep : eps_) {
      if (ep == nullptr) continue;
      ucp_request_param_t params = {};
      params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      params.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &params);
      if (!UCS_PTR_IS_PTR(request)) continue;
      while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(outbound_);
      ucp_request_free(request);
    }
    ucp_mem_unmap(context_, memh_);
    if (inbound_ != outbound_) ucp_worker_destroy(inbound_);
    ucp_worker_destroy(outbound_);
    ucp_cleanup(context_);
  }
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  bool talks(int peer) const { return peer != rank_ && (o_.allPairs || (rank_ <= 1 && peer <= 1)); }

  // One round: ready to every peer, data once its ready is here, then wait for every peer's data. Returns
  // false (after printing what is missing) when the round timed out.
  bool round(uint64_t n) {
    std::vector<Sent>& readies = readies_;
    std::vector<Sent>& datas = datas_;
    std::vector<uint8_t>& out = out_;
    for (size_t b = 0; b < out.size(); ++b) out[b] = static_cast<uint8_t>(b * 131 + rank_ * 17 + n);
    if (rank_ == 1 && o_.lateMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o_.lateMs));
    for (int p = 0; p < nranks_; ++p)
      if (talks(p)) swap(p, n, region_.ready(rank_), &readies[p]);
    const auto deadline = Clock::now() + std::chrono::milliseconds(o_.timeoutMs);
    std::vector<char> sent(nranks_, 0);
    while (true) {
      bool complete = true;
      for (int p = 0; p < nranks_; ++p) {
        if (!talks(p)) continue;
        if (!sent[p] && load(region_.ready(p)) >= n) {
          sendData(p, n, out, &datas[p]);
          sent[p] = 1;
        }
        // Puts: the header goes once the flush that ordered it after the data completed.
        if (sent[p] == 1 && o_.bytes > o_.eagerBytes && datas[p].state.load() == 2) {
          swap(p, n, region_.header(rank_), &headers_[p]);
          sent[p] = 2;
        }
        const bool delivered = o_.bytes > o_.eagerBytes ? sent[p] == 2 && headers_[p].state.load() >= 2
                                                        : sent[p] == 1 && datas[p].state.load() >= 2;
        complete = complete && delivered && load(region_.header(p)) == n && readies[p].state.load() >= 2;
      }
      if (complete) break;
      if (!inboundServed_) ucp_worker_progress(inbound_);
      ucp_worker_progress(outbound_);
      if (Clock::now() > deadline) {
        report(n, readies, datas, sent);
        return false;
      }
    }
    return verify(n);
  }

  // Stops the inbound thread after every rank got here, progressing both workers meanwhile (a peer's
  // flush or close needs this rank's progress).
  void quiesce() {
    closing_.store(true, std::memory_order_release);
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int done = 0; !done; MPI_Test(&barrier, &done, MPI_STATUS_IGNORE)) {
      ucp_worker_progress(outbound_);
      if (!inboundServed_) ucp_worker_progress(inbound_);
    }
    stopInbound();
  }

 private:
  void connect() {
    ucp_mem_map_params_t map = {};
    map.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    map.address = region_.words.data();
    map.length = region_.bytes;
    check(ucp_mem_map(context_, &map, &memh_), "ucp_mem_map");
    void* packed = nullptr;
    size_t packedBytes = 0;
    check(ucp_rkey_pack(context_, memh_, &packed, &packedBytes), "ucp_rkey_pack");
    std::vector<uint8_t> rkey(static_cast<uint8_t*>(packed), static_cast<uint8_t*>(packed) + packedBytes);
    ucp_rkey_buffer_release(packed);
    ucp_address_t* address = nullptr;
    size_t addressBytes = 0;
    check(ucp_worker_get_address(inbound_, &address, &addressBytes), "ucp_worker_get_address");
    std::vector<uint8_t> mine(reinterpret_cast<uint8_t*>(address), reinterpret_cast<uint8_t*>(address) + addressBytes);
    ucp_worker_release_address(inbound_, address);
    const auto addresses = allgather(mine);
    const auto rkeys = allgather(rkey);
    const uint64_t base = reinterpret_cast<uintptr_t>(region_.words.data());
    bases_.resize(nranks_);
    MPI_Allgather(&base, 1, MPI_UINT64_T, bases_.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    unsigned major = 0, minor = 0, release = 0;
    ucp_get_version(&major, &minor, &release);
    eps_.assign(nranks_, nullptr);
    rkeys_.assign(nranks_, nullptr);
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_) continue;
      ucp_ep_params_t params = {};
      params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                          UCP_EP_PARAM_FIELD_ERR_HANDLER;
      params.err_handler.cb = &onEndpointError;
      params.err_handler.arg = this;
      params.address = reinterpret_cast<const ucp_address_t*>(addresses[p].data());
      // As Alloy: peer error handling where UCX serves atomics with it (before 1.16).
      params.err_mode = major == 1 && minor < 16 ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
      ucs_status_t status = ucp_ep_create(outbound_, &params, &eps_[p]);
      if (status == UCS_ERR_UNREACHABLE && params.err_mode == UCP_ERR_HANDLING_MODE_PEER) {
        params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
        status = ucp_ep_create(outbound_, &params, &eps_[p]);
      }
      check(status, "ucp_ep_create");
      check(ucp_ep_rkey_unpack(eps_[p], rkeys[p].data(), &rkeys_[p]), "ucp_ep_rkey_unpack");
    }
    if (o_.idleMs > 0) {
      static uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(rank_ + 1);
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      std::this_thread::sleep_for(std::chrono::milliseconds((state >> 33) % static_cast<uint64_t>(o_.idleMs + 1)));
    }
    inboundServed_ = inbound_ != outbound_;
    if (inboundServed_ && o_.persistentInbound) InboundServer::instance().add(inbound_);
    else if (inboundServed_) inboundThread_ = std::thread([this] {
        while (!stop_.load(std::memory_order_acquire))
          if (ucp_worker_progress(inbound_) == 0) std::this_thread::yield();
      });
  }

  void stopInbound() {
    if (inboundServed_ && o_.persistentInbound) InboundServer::instance().remove(inbound_);
    stop_.store(true, std::memory_order_release);
    if (inboundThread_.joinable()) inboundThread_.join();
  }

  // A peer's forced close at teardown reaches the endpoints still open to it; during a round an error is
  // news, and is printed.
  static void onEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
    const auto* self = static_cast<const Host*>(arg);
    if (!self->closing_.load(std::memory_order_acquire))
      std::printf("rank %d: endpoint error during a round: %s\n", self->rank_, ucs_status_string(status));
  }

  static ucp_request_param_t paramsFor(Sent* s) {
    ucp_request_param_t params = {};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    params.cb.send = &onSent;
    params.user_data = s;
    return params;
  }

  // Region offsets are the same on every rank (every region has the same shape).
  uint64_t remote(int peer, const void* local) const {
    return bases_[peer] + (static_cast<const uint8_t*>(local) - reinterpret_cast<const uint8_t*>(region_.words.data()));
  }

  // Stores n into the word at `local`'s offset in peer p's region, as Alloy's signal does.
  void swap(int p, uint64_t n, const uint64_t* local, Sent* s) {
    s->operand = n;
    s->state.store(1);
    ucp_request_param_t params = paramsFor(s);
    params.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    params.datatype = ucp_dt_make_contig(sizeof(uint64_t));
    params.reply_buffer = &s->reply;
    posted(s, ucp_atomic_op_nbx(eps_[p], UCP_ATOMIC_OP_SWAP, &s->operand, 1, remote(p, local), rkeys_[p], &params));
  }

  // The data: one eager active message with its header, or puts and a flush (s tracks the flush).
  void sendData(int p, uint64_t n, const std::vector<uint8_t>& out, Sent* s) {
    if (out.size() > o_.eagerBytes) {
      for (size_t at = 0; at < out.size(); at += o_.chunkBytes) {
        ucp_request_param_t params = {};
        const ucs_status_ptr_t put = ucp_put_nbx(eps_[p], out.data() + at, std::min(o_.chunkBytes, out.size() - at),
                                                 remote(p, region_.inbox(rank_) + at), rkeys_[p], &params);
        if (UCS_PTR_IS_ERR(put)) die("ucp_put_nbx", ucs_status_string(UCS_PTR_STATUS(put)));
        if (UCS_PTR_IS_PTR(put)) ucp_request_free(put);  // the flush covers it
      }
      s->state.store(1);
      ucp_request_param_t params = paramsFor(s);
      posted(s, ucp_ep_flush_nbx(eps_[p], &params));
      return;
    }
    s->header = MessageHeader{remote(p, region_.inbox(rank_)), remote(p, region_.header(rank_)), n, out.size()};
    s->state.store(1);
    ucp_request_param_t params = paramsFor(s);
    params.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    params.flags = UCP_AM_SEND_FLAG_EAGER;
    posted(s, ucp_am_send_nbx(eps_[p], kAmId, &s->header, sizeof s->header, out.data(), out.size(), &params));
  }

  bool verify(uint64_t n) {
    for (int p = 0; p < nranks_; ++p) {
      if (!talks(p)) continue;
      const uint8_t* in = region_.inbox(p);
      for (size_t b = 0; b < o_.bytes; ++b)
        if (in[b] != static_cast<uint8_t>(b * 131 + p * 17 + n)) {
          std::printf("rank %d round %llu: byte %zu from rank %d is wrong\n", rank_, static_cast<unsigned long long>(n), b,
                      p);
          return false;
        }
    }
    return true;
  }

  void report(uint64_t n, const std::vector<Sent>& readies, const std::vector<Sent>& datas,
              const std::vector<char>& sent) {
    static const char* const kState[] = {"not posted", "in flight", "completed", "failed"};
    for (int p = 0; p < nranks_; ++p) {
      if (!talks(p)) continue;
      std::printf("rank %d round %llu, peer %d: its ready %s, its data %s; my ready to it %s, my data to it %s\n", rank_,
                  static_cast<unsigned long long>(n), p, load(region_.ready(p)) >= n ? "arrived" : "MISSING",
                  load(region_.header(p)) == n ? "arrived" : "MISSING", kState[readies[p].state.load()],
                  sent[p] ? kState[datas[p].state.load()] : "not posted");
    }
    std::fflush(stdout);
  }

  const Options& o_;
  const int rank_, nranks_;
  Region region_;
  // The operations of the round in hand; members, so that a round given up with operations in flight
  // leaves their callbacks valid memory until the host is torn down (no later round runs then).
  std::vector<Sent> readies_, datas_, headers_;
  std::vector<uint8_t> out_;  // the round's send bytes, which puts read until their flush completes
  ucp_context_h context_ = nullptr;
  ucp_worker_h outbound_ = nullptr, inbound_ = nullptr;
  ucp_mem_h memh_ = nullptr;
  std::vector<ucp_ep_h> eps_;
  std::vector<ucp_rkey_h> rkeys_;
  std::vector<uint64_t> bases_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> closing_{false};  // past the rounds: endpoint errors are the peers' closes
  std::thread inboundThread_;
  bool inboundServed_ = false;  // a thread progresses inbound_ (this iteration's or the process-wide one)
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks < 2) die("ranks", "run with at least 2 ranks (mpirun -np N)");
  const Options o = parse(argc, argv);
  int lost = 0;
  for (int it = 0; it < o.iterations; ++it) {
    Host host(o, rank, nranks);
    int failed = 0;
    for (int r = 1; r <= o.rounds && !failed; ++r) failed = !host.round(static_cast<uint64_t>(r));
    int anyFailed = 0;
    MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    lost += anyFailed;
    if (anyFailed && rank == 0) std::printf("iteration %d: a round lost messages\n", it);
    host.quiesce();
    // A line every 100 iterations, so that a run stopped from outside (a hang in set-up or teardown, a
    // time limit) still tells how far it got.
    if (rank == 0 && (it + 1) % 100 == 0) {
      std::printf("after %d iterations: %d lost\n", it + 1, lost);
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    unsigned major = 0, minor = 0, release = 0;
    ucp_get_version(&major, &minor, &release);
    const char* tls = std::getenv("UCX_TLS");
    std::printf("ucx-two-workers: UCX %u.%u.%u, UCX_TLS=%s, %d ranks, %s, %d iterations x %d rounds, late %d ms, "
                "idle up to %d ms, pairs %s, %zu bytes %s%s\n",
                major, minor, release, tls != nullptr ? tls : "(unset)", nranks,
                o.twoWorkers ? "two workers per process" : "one worker per process", o.iterations, o.rounds, o.lateMs,
                o.idleMs, o.allPairs ? "all" : "0-1", o.bytes,
                o.bytes > o.eagerBytes ? "as puts + flush + swap" : "as one eager active message",
                o.persistentInbound ? ", one process-wide sleeping inbound thread" : "");
    std::printf("Final: %d %d\n", lost, o.iterations);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return lost != 0 ? 2 : 0;
}
