// What this host offers for moving data between hosts: the probes tell why ALLOY_NET=auto chose a
// backend (or none), and exercise the dependency handling of the build (ALLOY_WITH_VERBS, ALLOY_WITH_UCX).
#pragma once

#include <string>

namespace alloy {

struct NetProbe {
  bool built = false;   // the dependency was found at configure time and the real probe is compiled in
  bool usable = false;  // verbs: an RDMA device has an active port; UCX: ucp_init succeeded
  int devices = 0;      // verbs: RDMA devices; UCX: network-type devices it lists (loopback included)
  std::string detail;   // one line for logs and error messages
};

// Each runs its probe afresh; lib/net_verbs and lib/net_ucx hold the real and the "absent" variants.
NetProbe probeVerbs();
NetProbe probeUcx();

// Both probes' details in one line, probed once per process.
const std::string& netProbeSummary();

}  // namespace alloy
