// Composes the reason a communicator spanning hosts refuses GPU operations from the transport probes.
#include "net_probe.h"

#include "log.h"

namespace alloy {
namespace {

// Devices do not come and go within a job, and ucp_init costs milliseconds: probe once per process.
const std::string& probeSummary() {
  static const std::string summary = [] {
    NetProbe verbs = probeVerbs();
    NetProbe ucx = probeUcx();
    logInfo("inter-node transport probes: %s; %s", verbs.detail.c_str(), ucx.detail.c_str());
    return verbs.detail + "; " + ucx.detail;
  }();
  return summary;
}

}  // namespace

std::string interNodeUnsupportedReason(int localSize, int nranks) {
  return "the communicator spans several hosts (" + std::to_string(localSize) + " of its " +
         std::to_string(nranks) + " ranks on this one) and inter-node data movement is not implemented yet; "
         "transports found on this host: " + probeSummary();
}

}  // namespace alloy
