// The network side of communicator creation: which backend ALLOY_NET selects, the channel prepared before
// the endpoint exchange (its address and key travel in the blob), and its connections after it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "endpoint.h"

namespace alloy {
namespace net {
class NetChannel;
}

struct NetSetup {
  std::unique_ptr<net::NetChannel> channel;
  // A failure every rank must turn into a failed creation (a backend asked for that cannot start).
  alloyResult_t result = alloySuccess;
  // Set when no backend was chosen (ALLOY_NET=none, or auto with none built): why. Operations that
  // cross hosts then return alloyNotSupported with this reason.
  std::string unavailable;
};

// For a GPU rank of a communicator that spans hosts. hostOf: every rank's host identity.
NetSetup prepareNet(int rank, const std::vector<uint64_t>& hostOf, int cudaDevice, long long timeoutMs,
                    EndpointBlob* blob);
// Connects to every rank on another host from its blob; alloyRemoteError naming a rank that offers no
// transport (another ALLOY_NET, a host-only rank).
alloyResult_t connectNet(net::NetChannel* channel, const std::vector<EndpointBlob>& blobs,
                         const std::vector<uint64_t>& hostOf, int rank);

}  // namespace alloy
