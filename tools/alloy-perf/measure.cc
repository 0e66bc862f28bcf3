#include "measure.h"

#include "datatypes.h"
#include "fatal.h"
#include "verify.h"

namespace alloyperf {

namespace {

// Every rank must take the same branch after a call: a rank that skips a row while another waits in the
// collective would hang the job. A failure stops the tool; mixed answers are a library bug and do too.
// Returns whether the call was served (false: every rank said not supported).
bool servedEverywhere(Backend& b, Status local, MPI_Comm comm, const std::string& what) {
  if (local == Status::failed) fatal("%s %s: %s", b.name(), what.c_str(), b.lastError().c_str());
  int v[2] = {local == Status::notSupported, local == Status::ok}, r[2];
  MPI_CHECK(MPI_Allreduce(v, r, 2, MPI_INT, MPI_MAX, comm));
  if (r[0] && r[1]) fatal("%s %s: some ranks say not supported and others do not", b.name(), what.c_str());
  return local == Status::ok;
}

}  // namespace

Runner::Runner(const Options& opts, MPI_Comm comm, size_t bufferBytes) : opts_(opts), comm_(comm), bytes_(bufferBytes) {
  MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  MPI_CHECK(MPI_Comm_size(comm, &nranks_));
  CUDA_CHECK(cudaMalloc(&send_, bytes_ + kGuardBytes));
  CUDA_CHECK(cudaMalloc(&recv_, bytes_ + kGuardBytes));
  // Timing runs on whatever the buffers hold; zeros keep float reductions away from NaN and denormals.
  CUDA_CHECK(cudaMemset(send_, 0, bytes_ + kGuardBytes));
  CUDA_CHECK(cudaMemset(recv_, 0, bytes_ + kGuardBytes));
  // cudaMemset may return before it is done, and the work below runs on a non-blocking stream.
  CUDA_CHECK(cudaDeviceSynchronize());
}

Runner::~Runner() {
  cudaFree(send_);  // teardown errors cannot change results any more; not checked on purpose
  cudaFree(recv_);
}

CollCall Runner::call(Coll coll, const Layout& layout, alloyDataType_t type, alloyRedOp_t redop) const {
  return CollCall{coll, send_, recv_, &layout, type, redop, opts_.root, rank_, nranks_};
}

void Runner::synchronize(Backend& b) {
  stream_.synchronize();
  if (b.asyncError() != Status::ok) fatal("%s %s: asynchronous error: %s", b.name(), what_.c_str(), b.lastError().c_str());
}

// Everything goes through the measured stream, so a call is ordered after the fill and the poison.
void Runner::poisonReceive(const CollCall& c) {
  const size_t recvBytes = c.layout->recvElems * typeInfo(c.type).size + kGuardBytes;
  CUDA_CHECK(cudaMemsetAsync(recv_, poisonByte(c.type), recvBytes, stream_.get()));
}

long long Runner::wrongEverywhere(const CollCall& c, const CheckData& data) {
  const size_t recvBytes = c.layout->recvElems * typeInfo(c.type).size + kGuardBytes;
  hostRecv_.resize(recvBytes);
  CUDA_CHECK(cudaMemcpyAsync(hostRecv_.data(), recv_, recvBytes, cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  long long local = static_cast<long long>(countWrong(data, c, hostRecv_.data())), sum = 0;
  MPI_CHECK(MPI_Allreduce(&local, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm_));
  return sum;
}

// After the first call was served, the same call must keep being served.
void Runner::launchOk(Backend& b, const CollCall& c, const char* stage, cudaStream_t stream) {
  const Status s = launch(b, c, stream != nullptr ? stream : stream_.get());
  if (s != Status::ok)
    fatal("%s %s: %s during %s: %s", b.name(), what_.c_str(), s == Status::notSupported ? "refused" : "failed",
          stage, b.lastError().c_str());
}

Status Runner::checkedCall(Backend& b, const CollCall& c, const CheckData& data, long long* wrong) {
  const size_t sendBytes = c.layout->sendElems * typeInfo(c.type).size;
  hostSend_.resize(sendBytes);
  data.fill(rank_, c.layout->sendElems, hostSend_.data());
  CUDA_CHECK(cudaMemcpyAsync(send_, hostSend_.data(), sendBytes, cudaMemcpyHostToDevice, stream_.get()));
  poisonReceive(c);
  stream_.synchronize();
  MPI_CHECK(MPI_Barrier(comm_));  // no rank's call may read a peer's buffer before that peer filled it

  const Status s = launch(b, c, stream_.get());
  if (s != Status::ok) return s;
  synchronize(b);
  *wrong = wrongEverywhere(c, data);
  return Status::ok;
}

Status Runner::probeCall(Backend& b, const CollCall& c) {
  const Status s = launch(b, c, stream_.get());
  if (s == Status::ok) synchronize(b);
  return s;
}

void Runner::timedLoop(Backend& b, const CollCall& c, double* usPerIter) {
  MPI_CHECK(MPI_Barrier(comm_));
  stream_.markStart();
  for (int i = 0; i < opts_.iters; ++i) launchOk(b, c, "timing");
  stream_.markStop();
  synchronize(b);
  *usPerIter = 1000.0 * stream_.elapsedMs() / opts_.iters;
}

// As OSU 5.7 times a blocking collective (osu_allreduce and the rest): each call returns only once its
// stream has passed it, the host's clock measures the pair, and a barrier outside the clock follows every
// call, so that every call starts from one; the row is the ranks' average (run() below). gpu-check.sh osu
// charges the MPI layer with the difference between OSU's time through the layer and this one, so both
// must time alike: a loop without the barriers let the collective itself keep the ranks in step, which
// OSU's calls, each started as its rank leaves the barrier, do not get. --legacy-stream puts the calls on
// the legacy default stream, where the layer runs a blocking call, so that the stream's share of the
// layer's cost can be told from the layer's own code (the warm-up's stream was synchronised before).
void Runner::blockingLoop(Backend& b, const CollCall& c, double* usPerIter) {
  const cudaStream_t stream = opts_.legacyStream ? cudaStreamLegacy : stream_.get();
  MPI_CHECK(MPI_Barrier(comm_));
  double seconds = 0;
  for (int i = 0; i < opts_.iters; ++i) {
    const double start = MPI_Wtime();
    launchOk(b, c, "timing", stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    seconds += MPI_Wtime() - start;
    MPI_CHECK(MPI_Barrier(comm_));
  }
  synchronize(b);
  *usPerIter = 1e6 * seconds / opts_.iters;
}

Status Runner::graphLoop(Backend& b, const CollCall& c, double* usPerIter) {
  // Thread-local capture, as nccl-tests does: the library's own helper threads may still make CUDA calls
  // that are illegal during a global capture.
  CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
  Status s = Status::ok;
  for (int i = 0; i < opts_.iters && s == Status::ok; ++i) s = launch(b, c, stream_.get());
  cudaGraph_t graph = nullptr;
  const cudaError_t endErr = cudaStreamEndCapture(stream_.get(), &graph);  // always end, even after a failure
  // A library may refuse calls under capture with notSupported: the row then says so.
  if (!servedEverywhere(b, s, comm_, what_)) {
    if (graph) CUDA_CHECK(cudaGraphDestroy(graph));
    return Status::notSupported;
  }
  CUDA_CHECK(endErr);
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphUpload(exec, stream_.get()));
  CUDA_CHECK(cudaGraphLaunch(exec, stream_.get()));  // one untimed replay: first launches pay extra set-up
  synchronize(b);

  MPI_CHECK(MPI_Barrier(comm_));
  stream_.markStart();
  for (int g = 0; g < opts_.graphLaunches; ++g) CUDA_CHECK(cudaGraphLaunch(exec, stream_.get()));
  stream_.markStop();
  synchronize(b);
  *usPerIter = 1000.0 * stream_.elapsedMs() / (static_cast<double>(opts_.iters) * opts_.graphLaunches);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return Status::ok;
}

Measurement Runner::measure(Backend& b, const CollCall& c, const CheckData* data, const std::string& what) {
  what_ = what;
  Measurement m;
  auto notSupported = [&]() {
    m.supported = false;
    m.note = b.lastError();
    return m;
  };

  // One untimed call comes first in every mode (the checked one, or a probe): it tells whether the
  // library serves the row at all before any warm-up, timing or capture starts.
  const Status first = data ? checkedCall(b, c, *data, &m.wrong) : probeCall(b, c);
  if (!servedEverywhere(b, first, comm_, what)) return notSupported();

  for (int i = 0; i < opts_.warmupIters; ++i) launchOk(b, c, "warm-up");
  synchronize(b);

  double us = 0;
  if (opts_.graphLaunches > 0) {
    if (graphLoop(b, c, &us) != Status::ok) return notSupported();
  } else if (opts_.blocking) {
    blockingLoop(b, c, &us);
  } else {
    timedLoop(b, c, &us);
  }

  // nccl-tests' convention: a collective is as slow as its slowest rank; --blocking reports OSU's average.
  if (opts_.blocking) {
    int ranks = 1;
    MPI_CHECK(MPI_Comm_size(comm_, &ranks));
    MPI_CHECK(MPI_Allreduce(&us, &m.timeUs, 1, MPI_DOUBLE, MPI_SUM, comm_));
    m.timeUs /= ranks;
  } else {
    MPI_CHECK(MPI_Allreduce(&us, &m.timeUs, 1, MPI_DOUBLE, MPI_MAX, comm_));
  }
  m.supported = true;
  m.algBw = gbPerSecond(c.layout->algBytes, m.timeUs);
  m.busBw = gbPerSecond(c.layout->busBytes, m.timeUs);
  return m;
}

}  // namespace alloyperf
