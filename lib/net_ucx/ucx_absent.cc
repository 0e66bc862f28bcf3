// Built when ALLOY_WITH_UCX is OFF or UCX was not found at configure time.
#include "net_probe.h"

namespace alloy {

NetProbe probeUcx() {
  NetProbe probe;
  probe.detail = "UCX: not built (ALLOY_WITH_UCX=OFF or UCX not found at configure time)";
  return probe;
}

}  // namespace alloy
