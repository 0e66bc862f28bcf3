// Built when ALLOY_WITH_VERBS is OFF or libibverbs was not found at configure time.
#include "net_probe.h"

namespace alloy {

NetProbe probeVerbs() {
  NetProbe probe;
  probe.detail = "verbs: not built (ALLOY_WITH_VERBS=OFF or libibverbs not found at configure time)";
  return probe;
}

}  // namespace alloy
