// The UCP context as Alloy uses it, shared by the probe (lib/net_ucx/ucx_probe.cc) and the transport
// (ucx_transport.cc), so that the probe tests exactly what the transport will ask of UCX.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace alloy {

// RMA for puts; 64-bit atomics for the signal, because UCX promises a whole 8-byte store only for an
// atomic (a put of 8 bytes may land in pieces: the tcp transport receives it straight into place);
// active messages for putSignal, whose target writes the data and then the signal itself.
constexpr uint64_t kUcxFeatures = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;

// ucp_config_read + ucp_init with kUcxFeatures, for workers on several threads (the transport's two
// workers run on two threads; UCX reads UCX_* from the environment). Empty on success, else the failing
// call and UCX's reason; *out is then null.
std::string initUcpContext(ucp_context_h* out);

// Logs once per process, where the environment leaves UCX's memory hooks on, how to switch them off
// (docs/environment.md, "UCX's memory hooks"). Called when a transport between hosts starts.
void adviseOnUcxMemoryHooks();

}  // namespace alloy
