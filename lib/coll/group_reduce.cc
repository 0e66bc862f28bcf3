#include "group_reduce.h"

#include "comm.h"
#include "datatype.h"
#include "device_guard.h"
#include "error.h"
#include "launch_order.h"

namespace alloy {

GroupReduce::GroupReduce(alloyComm_t comm, const Reduction& r, cudaStream_t stream)
    : comm_(comm), r_(r), stream_(stream), slots_(comm, stream), exchange_(comm, r.operation) {}

alloyResult_t GroupReduce::prepare(const std::vector<int>& members, int me, const char* input,
                                   const std::vector<Part>& parts, char* dst) {
  const size_t es = dataTypeSize(r_.type);
  const int n = static_cast<int>(members.size());
  const size_t mineBytes = parts[me].count * es;
  ALLOY_TRY(slots_.allocate(mineBytes * n, r_.function));  // slot `me` stays unused: the input is read instead
  for (int m = 0; m < n; ++m) {
    if (m == me) continue;
    if (parts[m].count > 0) exchange_.addSend(members[m], input + parts[m].first * es, parts[m].count * es);
    if (mineBytes > 0) exchange_.addRecv(members[m], slots_.get() + m * mineBytes, mineBytes);
  }
  reduce_ = SlotReduce{slots_.get(), mineBytes, input + parts[me].first * es, me, n, dst, parts[me].count, r_.op};
  return exchange_.prepare(r_.function);
}

alloyResult_t GroupReduce::launch() {
  ALLOY_TRY(exchange_.launch(stream_, r_.function));
  DeviceGuard guard(comm_->cudaDevice);
  return kernelLaunched(launchSlotReduce(reduce_, r_.type, stream_), r_.function);
}

std::vector<int> allRanks(int n) {
  std::vector<int> ranks(n);
  for (int r = 0; r < n; ++r) ranks[r] = r;
  return ranks;
}

}  // namespace alloy
