// Where the ranks of a communicator are: which share this rank's host, and its position among them.
#pragma once

#include <vector>

#include "endpoint.h"

namespace alloy {

struct LocalTopology {
  int localRank = 0;           // position among the ranks on this host, ordered by communicator rank
  int localSize = 1;           // ranks of the communicator on this host
  std::vector<int> localPeers; // communicator ranks on this host, ascending (includes this rank)
};

LocalTopology computeLocalTopology(const std::vector<EndpointBlob>& blobs, int myRank);

}  // namespace alloy
