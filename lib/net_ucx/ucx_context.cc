#include "ucx_context.h"

namespace alloy {

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
