// Runs one row on one backend: the checked call (check mode) or a probe call, then warm-up and the timed
// iterations, eagerly or as CUDA graph replays, and in overlap mode (-O) the collective beside a compute
// load (measure_overlap.cc). Owns the device buffers, which both backends share so that Alloy and NCCL
// run on exactly the same memory.
#ifndef ALLOY_PERF_MEASURE_H_
#define ALLOY_PERF_MEASURE_H_

#include <mpi.h>

#include <string>
#include <vector>

#include "backend.h"
#include "check_data.h"
#include "compute_load.h"
#include "dispatch.h"
#include "options.h"
#include "timed_stream.h"

namespace alloyperf {

// Overlap mode (-O): the compute load alone and beside the collective, and the collective beside it.
// Times are each rank's median over the repetitions, then the maximum over ranks.
struct OverlapMeasurement {
  bool measured = false;   // false without -O, or when the row was not supported
  double computeAloneMs = 0;
  double computeWithMs = 0;
  double slowdown = 0;     // computeWithMs / computeAloneMs
  int iterations = 0;      // collective calls per repetition: enough to cover the load on every rank
  double timeUs = 0;       // the collective per iteration beside the load
  double algBw = 0;        // GB/s
  double busBw = 0;        // GB/s
  long long wrong = -1;    // wrong elements after the overlapped calls, summed over ranks; -1 unchecked
};

struct Measurement {
  bool supported = false;  // false: notSupported, with the library's message in note
  std::string note;
  double timeUs = 0;       // per iteration, max over ranks
  double algBw = 0;        // GB/s
  double busBw = 0;        // GB/s
  long long wrong = -1;    // wrong elements summed over ranks; -1 when not checked
  OverlapMeasurement overlap;
};

class Runner {
 public:
  // Allocates send and receive buffers of bufferBytes (plus the check's guard) on the current device.
  Runner(const Options& opts, MPI_Comm comm, size_t bufferBytes);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // The call of a row on the runner's buffers; layout must outlive the returned call.
  CollCall call(Coll coll, const Layout& layout, alloyDataType_t type, alloyRedOp_t redop) const;

  // Measures `call` on `backend`. data is the row's check data in check mode, null otherwise. `what`
  // names the row in fatal messages. Every rank must call it: it synchronises through MPI.
  Measurement measure(Backend& backend, const CollCall& call, const CheckData* data, const std::string& what);

  // Overlap mode: measures `call` beside `load` and stores it in m->overlap; m is what measure()
  // returned for the same call (its time sets the first guess of how many calls cover the load), and
  // data as there:
  // in check mode the send buffer still holds its data, and the receive buffer is checked again after
  // the overlapped calls. Rows that were not supported are left unmeasured. Every rank must call it.
  void measureOverlap(Backend& backend, const CollCall& call, const CheckData* data, ComputeLoad& load,
                      Measurement* m);

 private:
  Status checkedCall(Backend& b, const CollCall& call, const CheckData& data, long long* wrong);
  void poisonReceive(const CollCall& call);  // the receive buffer and its guard, on the stream
  long long wrongEverywhere(const CollCall& call, const CheckData& data);  // summed over ranks
  // Fatal unless served; on the measured stream unless another is given.
  void launchOk(Backend& b, const CollCall& call, const char* stage, cudaStream_t stream = nullptr);
  Status probeCall(Backend& b, const CollCall& call);
  void timedLoop(Backend& b, const CollCall& call, double* usPerIter);
  void blockingLoop(Backend& b, const CollCall& call, double* usPerIter);
  Status graphLoop(Backend& b, const CollCall& call, double* usPerIter);
  void synchronize(Backend& b);  // stream, then the backend's asynchronous error

  const Options& opts_;
  MPI_Comm comm_;
  int rank_, nranks_;
  std::string what_;  // row being measured, for fatal messages
  void* send_ = nullptr;
  void* recv_ = nullptr;
  size_t bytes_;
  TimedStream stream_;
  std::vector<unsigned char> hostSend_, hostRecv_;
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_MEASURE_H_
