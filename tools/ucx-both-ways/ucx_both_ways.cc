// ucx-both-ways: UCX's own bandwidth between two MPI ranks, one UCP worker per process (as Alloy's proxy
// has), host memory, tagged messages; first one way (rank 0 sends, rank 1 receives), then both ways at
// once (each rank sends to and receives from the other, as every alltoall does). ucx_perftest measures
// only the first; the second is the ceiling of one worker per process for the traffic of an alltoall
// between two hosts (docs/benchmarks.md, "Both directions at once").
//
//   mpirun -np 2 ucx-both-ways [-s BYTES] [-n ITERATIONS] [-w WARMUP]
//
// Prints a line per direction mode and a last line "Final: ONE_WAY BOTH_WAYS" in GB/s (10^9 bytes) per
// direction. The timed messages go back to back; one more per mode lands in a poisoned buffer and is
// checked against the sender's pattern: a wrong byte fails the run (exit 3). Exit 1 on a usage or UCX
// error.
#include <mpi.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ucx_tool.h"

namespace ucxtool {
const char* const kToolName = "ucx-both-ways";
}  // namespace ucxtool

namespace {

using ucxtool::check;
using ucxtool::die;

struct Options {
  size_t bytes = 64ull << 20;
  int iterations = 20;
  int warmup = 2;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) die("arguments", flag + " needs a value (usage: ucx-both-ways [-s BYTES] [-n ITERATIONS] [-w WARMUP])");
    char* end = nullptr;
    const unsigned long long value = std::strtoull(argv[++i], &end, 0);
    if (end == argv[i] || *end != '\0') die("arguments", flag + " " + argv[i] + ": expected a number");
    if (flag == "-s" && value > 0) o.bytes = value;
    else if (flag == "-n" && value > 0 && value < (1u << 20)) o.iterations = static_cast<int>(value);
    else if (flag == "-w" && value < (1u << 20)) o.warmup = static_cast<int>(value);
    else die("arguments", flag + " " + argv[i] + ": expected -s BYTES (> 0), -n ITERATIONS (> 0) or -w WARMUP");
  }
  return o;
}

// One context, one single-threaded worker and an endpoint to the other rank; released in reverse order.
class Link {
 public:
  explicit Link(int peer) {
    context_ = ucxtool::initContext(UCP_FEATURE_TAG, false);
    worker_ = ucxtool::createWorker(context_);
    ucp_address_t* address = nullptr;
    size_t length = 0;
    check(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
    int mine = static_cast<int>(length), theirs = 0;
    MPI_Sendrecv(&mine, 1, MPI_INT, peer, 0, &theirs, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::vector<char> remote(static_cast<size_t>(theirs));
    MPI_Sendrecv(address, mine, MPI_BYTE, peer, 1, remote.data(), theirs, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    ucp_worker_release_address(worker_, address);
    ucp_ep_params_t endpoint = {};
    endpoint.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    endpoint.address = reinterpret_cast<const ucp_address_t*>(remote.data());
    check(ucp_ep_create(worker_, &endpoint, &endpoint_), "ucp_ep_create");
  }
  ~Link() {
    ucp_request_param_t params = {};
    wait(ucp_ep_close_nbx(endpoint_, &params), "ucp_ep_close_nbx");
    // The peer's close needs this worker's progress too.
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int done = 0; !done; MPI_Test(&barrier, &done, MPI_STATUS_IGNORE)) ucp_worker_progress(worker_);
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void* send(const void* buffer, size_t bytes) {
    ucp_request_param_t params = {};
    return ucp_tag_send_nbx(endpoint_, buffer, bytes, kTag, &params);
  }
  void* receive(void* buffer, size_t bytes) {
    ucp_request_param_t params = {};
    return ucp_tag_recv_nbx(worker_, buffer, bytes, kTag, ~0ull, &params);
  }
  // Progresses until the request (nullptr: done at once) completes, then frees it.
  void wait(void* request, const char* what) {
    if (request == nullptr) return;
    if (UCS_PTR_IS_ERR(request)) die(what, ucs_status_string(UCS_PTR_STATUS(request)));
    ucs_status_t status;
    while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(request);
    check(status, what);
  }

 private:
  static constexpr ucp_tag_t kTag = 0x616c6c6f79;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h endpoint_ = nullptr;
};

// The byte at offset i of every message that `rank` sends.
uint8_t pattern(int rank, size_t i) { return static_cast<uint8_t>((i * 131 + static_cast<size_t>(rank) * 17 + 7) & 0xff); }

// One message in the mode: each rank that sends posts its send, each that receives its receive, and both
// wait. Both ways, each rank sends and receives; one way, rank 0 sends and rank 1 receives.
void exchange(Link& link, bool bothWays, int rank, const std::vector<uint8_t>& out, std::vector<uint8_t>& in) {
  const bool sends = bothWays || rank == 0, receives = bothWays || rank == 1;
  void* receive = receives ? link.receive(in.data(), in.size()) : nullptr;
  void* send = sends ? link.send(out.data(), out.size()) : nullptr;
  link.wait(send, "ucp_tag_send_nbx");
  link.wait(receive, "ucp_tag_recv_nbx");
}

// GB/s per direction of `iterations` messages back to back after `warmup` (the slower rank's time, as
// ucx_perftest's loop: nothing else in it), then one more message into a poisoned buffer, untimed, whose
// bytes are counted into *wrong where they differ from the sender's pattern.
double measure(Link& link, const Options& o, bool bothWays, int rank, const std::vector<uint8_t>& out,
               std::vector<uint8_t>& in, long long* wrong) {
  for (int i = 0; i < o.warmup; ++i) exchange(link, bothWays, rank, out, in);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iterations; ++i) exchange(link, bothWays, rank, out, in);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const bool receives = bothWays || rank == 1;
  if (receives) std::memset(in.data(), 0, in.size());
  exchange(link, bothWays, rank, out, in);
  if (receives)
    for (size_t b = 0; b < in.size(); ++b) *wrong += in[b] != pattern(1 - rank, b);
  return static_cast<double>(o.bytes) * o.iterations / slowest / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) die("ranks", "run with exactly 2 ranks (mpirun -np 2), got " + std::to_string(size));
  const Options o = parse(argc, argv);
  std::vector<uint8_t> out(o.bytes), in(o.bytes);
  for (size_t b = 0; b < out.size(); ++b) out[b] = pattern(rank, b);
  long long wrong = 0;
  double gbs[2] = {0, 0};
  {
    Link link(1 - rank);
    for (int bothWays = 0; bothWays < 2; ++bothWays) gbs[bothWays] = measure(link, o, bothWays, rank, out, in, &wrong);
  }
  long long wrongAll = 0;
  MPI_Allreduce(&wrong, &wrongAll, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    unsigned major = 0, minor = 0, release = 0;
    ucp_get_version(&major, &minor, &release);
    const char* tls = std::getenv("UCX_TLS");
    std::printf("ucx-both-ways: UCX %u.%u.%u, UCX_TLS=%s, %zu bytes x %d, one worker per process, host memory\n", major,
                minor, release, tls != nullptr ? tls : "(unset)", o.bytes, o.iterations);
    std::printf("one way:   %.3f GB/s\nboth ways: %.3f GB/s per direction\n", gbs[0], gbs[1]);
    if (wrongAll != 0) std::printf("WRONG: %lld received bytes differ from the sender's pattern\n", wrongAll);
    std::printf("Final: %.3f %.3f\n", gbs[0], gbs[1]);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return wrongAll != 0 ? 3 : 0;
}
