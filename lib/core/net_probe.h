// What this host offers for moving data between hosts. Nothing moves data between hosts yet: the probes
// exist so that a communicator spanning hosts can say exactly which transport it found, and so that the
// dependency handling of the build (ALLOY_WITH_VERBS, ALLOY_WITH_UCX) is exercised by tests.
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

// The reason GPU operations are refused on a communicator with localSize of its nranks ranks on this
// host: names what the probes found (run once per process, logged at INFO) and that the inter-node
// data path is not implemented.
std::string interNodeUnsupportedReason(int localSize, int nranks);

}  // namespace alloy
