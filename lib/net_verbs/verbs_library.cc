#include "verbs_library.h"

#include <dlfcn.h>

#include <cstring>

#include "env.h"

namespace alloy {
namespace verbs {
namespace {

// dlsym into a typed pointer. The symbols are versioned (IBVERBS_1.0 and 1.1); dlsym returns the
// default version, the one a link against the library would have bound.
template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* out, std::string* error) {
  dlerror();  // clear a stale message so the one read below is ours
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    const char* why = dlerror();
    *error = std::string("symbol ") + symbol + " not found: " + (why != nullptr ? why : "null address");
    return false;
  }
  *out = reinterpret_cast<Fn>(address);
  return true;
}

}  // namespace

VerbsLibrary::VerbsLibrary() : name_(envString("ALLOY_IBVERBS_PATH", kDefaultName)) { load(); }

VerbsLibrary::VerbsLibrary(const std::string& name) : name_(name) { load(); }

// Unloading rarely frees anything: the provider libraries libibverbs opened (libmlx5, ...) depend on it
// and keep it mapped. It still balances our reference.
VerbsLibrary::~VerbsLibrary() { unload(); }

void VerbsLibrary::load() {
  dlerror();
  // RTLD_NOW: a library missing a function fails here, not at the first call. RTLD_LOCAL: its symbols
  // must not satisfy anyone else's references to libibverbs.
  handle_ = dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    error_ = why != nullptr ? why : "dlopen failed without a reason";
    return;
  }
  const bool complete = resolve(handle_, "ibv_get_device_list", &getDeviceList, &error_) &&
                        resolve(handle_, "ibv_free_device_list", &freeDeviceList, &error_) &&
                        resolve(handle_, "ibv_get_device_name", &getDeviceName, &error_) &&
                        resolve(handle_, "ibv_open_device", &openDevice, &error_) &&
                        resolve(handle_, "ibv_close_device", &closeDevice, &error_) &&
                        resolve(handle_, "ibv_query_device", &queryDevice, &error_) &&
                        resolve(handle_, "ibv_query_port", &queryPortSymbol_, &error_) &&
                        resolve(handle_, "ibv_query_gid", &queryGid, &error_) &&
                        resolve(handle_, "ibv_alloc_pd", &allocPd, &error_) &&
                        resolve(handle_, "ibv_dealloc_pd", &deallocPd, &error_) &&
                        resolve(handle_, "ibv_reg_mr", &regMr, &error_) &&
                        resolve(handle_, "ibv_dereg_mr", &deregMr, &error_) &&
                        resolve(handle_, "ibv_create_cq", &createCq, &error_) &&
                        resolve(handle_, "ibv_destroy_cq", &destroyCq, &error_) &&
                        resolve(handle_, "ibv_create_qp", &createQp, &error_) &&
                        resolve(handle_, "ibv_modify_qp", &modifyQp, &error_) &&
                        resolve(handle_, "ibv_destroy_qp", &destroyQp, &error_) &&
                        resolve(handle_, "ibv_create_ah", &createAh, &error_) &&
                        resolve(handle_, "ibv_destroy_ah", &destroyAh, &error_) &&
                        resolve(handle_, "ibv_wc_status_str", &wcStatusStr, &error_);
  if (!complete) unload();  // keeps error_: a half-resolved library is not used at all
}

void VerbsLibrary::unload() {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
  static_cast<VerbsApi&>(*this) = VerbsApi{};
  queryPortSymbol_ = nullptr;
}

int VerbsLibrary::queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const {
  // verbs_get_ctx_op only reads the context (header code, no library symbol): non-null when the
  // provider implements the extended query.
  verbs_context* extended = verbs_get_ctx_op(context, query_port);
  if (extended != nullptr) return extended->query_port(context, port, attr, sizeof(*attr));
  // The old entry point leaves the fields past its layout alone: zero them as the header does.
  std::memset(attr, 0, sizeof(*attr));
  return queryPortSymbol_(context, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
}

}  // namespace verbs
}  // namespace alloy
