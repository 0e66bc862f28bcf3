#include "compute_load.h"

#include "compute_kernel.h"
#include "fatal.h"
#include "overlap_math.h"

namespace alloyperf {

namespace {

constexpr int kThreads = 256;
// The loop of the first calibration series: about 40 us per launch on an H100, long enough against
// a launch's fixed cost for the proportional scaling to land close.
constexpr long long kProbeLoop = 4096;
constexpr int kCalibrationPasses = 2;  // the second corrects what the launches' fixed cost skewed
constexpr int kCalibrationRuns = 3;    // series per pass; their median

}  // namespace

ComputeLoad::ComputeLoad(int targetMs, int kernels, MPI_Comm comm) : comm_(comm) {
  shape_.targetMs = targetMs;
  shape_.kernels = kernels;
  shape_.threads = kThreads;
  int device = 0, sms = 0, perSm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(computeKernelBlocksPerSm(kThreads, &perSm));
  if (perSm < 1) fatal("overlap: the compute kernel fits no block of %d threads on an SM", kThreads);
  shape_.blocks = sms * perSm;
  slots_ = static_cast<size_t>(shape_.blocks) * kThreads;

  std::vector<float> input(slots_);
  for (size_t i = 0; i < slots_; ++i) input[i] = computeInput(static_cast<long long>(i));
  hostOut_.resize(slots_);
  CUDA_CHECK(cudaMalloc(&in_, slots_ * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out_, slots_ * sizeof(float)));
  CUDA_CHECK(cudaMemcpyAsync(in_, input.data(), slots_ * sizeof(float), cudaMemcpyHostToDevice, stream_.get()));
  stream_.synchronize();

  shape_.loop = kProbeLoop;
  for (int pass = 0; pass < kCalibrationPasses; ++pass)
    shape_.loop = scaledLoop(shape_.loop, seriesMsEverywhere(kCalibrationRuns), targetMs);
  shape_.calibratedMs = seriesMsEverywhere(kCalibrationRuns);
}

ComputeLoad::~ComputeLoad() {
  cudaFree(in_);  // teardown errors cannot change results any more; not checked on purpose
  cudaFree(out_);
}

void ComputeLoad::enqueue() {
  CUDA_CHECK(cudaMemsetAsync(out_, 0, slots_ * sizeof(float), stream_.get()));
  stream_.markStart();
  for (int k = 0; k < shape_.kernels; ++k)
    CUDA_CHECK(launchComputeKernel(in_, out_, shape_.loop, shape_.blocks, shape_.threads, stream_.get()));
  stream_.markStop();
}

double ComputeLoad::finish() {
  stream_.synchronize();
  const double ms = stream_.elapsedMs();
  CUDA_CHECK(cudaMemcpyAsync(hostOut_.data(), out_, slots_ * sizeof(float), cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  for (size_t i = 0; i < slots_; ++i) {
    const float expected = computeExpected(static_cast<long long>(i), shape_.loop);
    if (hostOut_[i] != expected)
      fatal("overlap: the compute kernel left %g in slot %zu, not %g (loop %lld)", hostOut_[i], i, expected,
            shape_.loop);
  }
  return ms;
}

double ComputeLoad::seriesMsEverywhere(int runs) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    MPI_CHECK(MPI_Barrier(comm_));
    enqueue();
    ms.push_back(finish());
  }
  double local = median(ms), most = 0;
  MPI_CHECK(MPI_Allreduce(&local, &most, 1, MPI_DOUBLE, MPI_MAX, comm_));
  return most;
}

}  // namespace alloyperf
