// The compute load of overlap mode (-O): a series of launches of the compute kernel, each one full wave
// of blocks on every SM, on a stream of its own (non-blocking, default priority), its loop length
// calibrated at start-up so that the series takes the target time. Many short kernels rather than one
// long one: a collective's kernel launched beside it gets SMs between two of them, as it does beside an
// application's kernels; a single grid would hold every SM until its end.
#ifndef ALLOY_PERF_COMPUTE_LOAD_H_
#define ALLOY_PERF_COMPUTE_LOAD_H_

#include <mpi.h>

#include <vector>

#include "timed_stream.h"

namespace alloyperf {

// What the load is, for the report.
struct ComputeLoadShape {
  int targetMs = 0;  // 0: overlap mode off
  int kernels = 0;   // launches per series
  int blocks = 0;    // per launch: SMs x blocks per SM
  int threads = 0;   // per block
  long long loop = 0;       // FMAs per thread and launch
  double calibratedMs = 0;  // one series at start-up, max over ranks (the same on every rank)
};

class ComputeLoad {
 public:
  // Collective over comm: allocates on the current device and calibrates on every rank at once (ranks
  // that share a GPU share it here as they will in the measurement), agreeing on one loop length.
  ComputeLoad(int targetMs, int kernels, MPI_Comm comm);
  ~ComputeLoad();
  ComputeLoad(const ComputeLoad&) = delete;
  ComputeLoad& operator=(const ComputeLoad&) = delete;

  // Enqueues one series on the load's stream between two events, after clearing the output.
  void enqueue();
  // Waits for the series, checks every slot of its output (fatal if one is wrong: the kernel did not
  // run as written) and returns its time in ms.
  double finish();

  const ComputeLoadShape& shape() const { return shape_; }
  const TimedStream& stream() const { return stream_; }  // its marks frame the last series

 private:
  double seriesMsEverywhere(int runs);  // median of runs series, max over ranks

  ComputeLoadShape shape_;
  MPI_Comm comm_;
  size_t slots_ = 0;
  float* in_ = nullptr;
  float* out_ = nullptr;
  std::vector<float> hostOut_;
  TimedStream stream_;  // default priority: it competes with the collective's as an application's would
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_COMPUTE_LOAD_H_
