// Which UCX transports carry an endpoint, in one line ("tcp/eth0 (rma, amo), ..."), read from UCX's own
// report (ucp_ep_print_info): UCX has no query for it.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace alloy {
namespace net {

std::string describeEndpoint(ucp_ep_h ep);

}  // namespace net
}  // namespace alloy
