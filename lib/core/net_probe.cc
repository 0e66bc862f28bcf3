#include "net_probe.h"

#include "log.h"

namespace alloy {

// Devices do not come and go within a job, and ucp_init costs milliseconds: probe once per process.
const std::string& netProbeSummary() {
  static const std::string summary = [] {
    NetProbe verbs = probeVerbs();
    NetProbe ucx = probeUcx();
    logInfo("inter-node transport probes: %s; %s", verbs.detail.c_str(), ucx.detail.c_str());
    return verbs.detail + "; " + ucx.detail;
  }();
  return summary;
}

}  // namespace alloy
