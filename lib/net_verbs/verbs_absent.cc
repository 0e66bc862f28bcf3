// Built when ALLOY_WITH_VERBS is OFF or rdma-core's headers were not found at configure time.
#include "error.h"
#include "net_probe.h"
#include "verbs_transport.h"

namespace alloy {
namespace {

constexpr const char* kNotBuilt = "verbs: not built (ALLOY_WITH_VERBS=OFF or rdma-core's headers not found at "
                                  "configure time)";

}  // namespace

NetProbe probeVerbs() {
  NetProbe probe;
  probe.detail = kNotBuilt;
  return probe;
}

namespace net {

alloyResult_t createVerbsTransport(const VerbsOptions&, std::unique_ptr<Transport>*) {
  return fail(alloyNotSupported, "%s", kNotBuilt);
}

}  // namespace net
}  // namespace alloy
