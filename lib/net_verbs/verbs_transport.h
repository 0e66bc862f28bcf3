// The verbs backend of the transport interface (lib/net/transport.h): InfiniBand and RoCE through
// libibverbs, loaded at run time (verbs_library.h). Host memory only (Caps::gpuMemory is false: no
// dmabuf or peer-memory registration of device memory yet). Built where rdma-core's headers were found
// at configure time (ALLOY_HAVE_VERBS); elsewhere createVerbsTransport returns alloyNotSupported.
// docs/architecture.md, "The verbs transport", has the design.
#pragma once

#include <cstddef>
#include <memory>

#include "endpoint.h"
#include "transport.h"

namespace alloy {
namespace net {

struct VerbsOptions {
  // Operations per connection that may be in flight or untested at once (back-pressure bound).
  int maxOutstanding = 64;
  // The most bytes localAddress() may return: the room for it in the endpoint blob.
  size_t maxAddressBytes = kNetAddressBytes;
};

// Opens the first active port that ALLOY_IB_HCA selects, with its protection domain, completion queue,
// handshake queue pair and flush word. alloyNotSupported when libibverbs cannot be loaded or no port
// qualifies (the message says what was found).
alloyResult_t createVerbsTransport(const VerbsOptions& options, std::unique_ptr<Transport>* out);

}  // namespace net
}  // namespace alloy
