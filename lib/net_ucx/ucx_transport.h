// The UCX backend of the transport interface (lib/net/transport.h), for host memory. Built where UCX was
// found at configure time (ALLOY_HAVE_UCX); elsewhere createUcxTransport returns alloyNotSupported.
#pragma once

#include <cstddef>
#include <memory>

#include "endpoint.h"
#include "transport.h"

namespace alloy {
namespace net {

struct UcxOptions {
  // Operations per connection that may be in flight or untested at once (back-pressure bound).
  int maxOutstanding = 64;
  // The most bytes localAddress() may return: the room for it in the endpoint blob.
  size_t maxAddressBytes = kNetAddressBytes;
  // A second worker whose address peers connect to, progressed by progressInbound() (the inbound
  // thread), so that receiving runs beside sending; otherwise one worker serves both, progress() drives
  // it and progressInbound() does nothing (ALLOY_NET_INBOUND_THREAD: ProxyThread::inboundRequested()).
  bool inboundWorker = false;
};

// One UCP context and one single-threaded worker, or two with options.inboundWorker: one for this rank's
// operations (the proxy thread's), one whose address peers connect to (progressInbound(), the inbound
// thread's). UCX reads its own environment (UCX_TLS, UCX_NET_DEVICES, ...) here.
alloyResult_t createUcxTransport(const UcxOptions& options, std::unique_ptr<Transport>* out);

}  // namespace net
}  // namespace alloy
