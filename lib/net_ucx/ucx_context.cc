#include "ucx_context.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "log.h"

namespace alloy {

// UCX's memory hooks (libucm's mmap interception) have stalled a proxy thread inside ucp_am_send_nbx until
// its peer timed out (docs/environment.md, "UCX's memory hooks"). UCX reads the switches when it loads,
// before Alloy runs, so the job's environment must carry them: say so once per process where it does not.
void adviseOnUcxMemoryHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* mode = std::getenv("UCX_MEM_MMAP_HOOK_MODE");
    const char* events = std::getenv("UCX_MEM_EVENTS");
    if ((mode != nullptr && std::strcmp(mode, "none") == 0) || (events != nullptr && std::strcmp(events, "no") == 0))
      return;
    logWarn("net: UCX's memory hooks are on; they have stalled sends for seconds, up to a peer's timeout. Set "
            "UCX_MEM_MALLOC_HOOKS=n UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no in the job's environment "
            "(docs/environment.md, \"UCX's memory hooks\")");
  });
}

std::string initUcpContext(ucp_context_h* out) {
  *out = nullptr;
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return std::string("ucp_config_read failed: ") + ucs_status_string(status);
  ucp_params_t params = {};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = kUcxFeatures;
  params.mt_workers_shared = 1;  // the transport's two workers run on two threads
  status = ucp_init(&params, config, out);
  ucp_config_release(config);
  if (status != UCS_OK) {
    *out = nullptr;
    return std::string("ucp_init failed: ") + ucs_status_string(status);
  }
  return "";
}

}  // namespace alloy
