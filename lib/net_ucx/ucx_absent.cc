// Built when ALLOY_WITH_UCX is OFF or UCX was not found at configure time.
#include "error.h"
#include "net_probe.h"
#include "ucx_transport.h"

namespace alloy {

NetProbe probeUcx() {
  NetProbe probe;
  probe.detail = "UCX: not built (ALLOY_WITH_UCX=OFF or UCX not found at configure time)";
  return probe;
}

namespace net {

alloyResult_t createUcxTransport(const UcxOptions&, std::unique_ptr<Transport>*) {
  return fail(alloyNotSupported, "UCX transport: not built (ALLOY_WITH_UCX=OFF or UCX not found at configure time)");
}

}  // namespace net
}  // namespace alloy
