// libibverbs, loaded at run time. liballoy does not link it: rdma-core's headers are needed to build the
// verbs code, but a machine without rdma-core must still be able to load liballoy and use the other
// transports. ALLOY_IBVERBS_PATH (a file name or path) replaces the default "libibverbs.so.1", for a
// library outside the loader's search path, or for tests that need the library to be missing.
//
// Only exported functions are resolved here. ibv_post_send, ibv_post_recv and ibv_poll_cq are inline in
// verbs.h and call through the context's provider table, so the transport calls them directly.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace alloy {
namespace verbs {

// The entry points, typed from the header's declarations; all null unless the library is loaded.
struct VerbsApi {
  decltype(&::ibv_get_device_list) getDeviceList = nullptr;
  decltype(&::ibv_free_device_list) freeDeviceList = nullptr;
  decltype(&::ibv_get_device_name) getDeviceName = nullptr;
  decltype(&::ibv_open_device) openDevice = nullptr;
  decltype(&::ibv_close_device) closeDevice = nullptr;
  decltype(&::ibv_query_device) queryDevice = nullptr;
  decltype(&::ibv_query_gid) queryGid = nullptr;
  decltype(&::ibv_alloc_pd) allocPd = nullptr;
  decltype(&::ibv_dealloc_pd) deallocPd = nullptr;
  // The exported ibv_reg_mr (IBVERBS_1.1), which the header's macro calls for access flags without
  // IBV_ACCESS_OPTIONAL_RANGE bits; the transport asks for none of those.
  decltype(&::ibv_reg_mr) regMr = nullptr;
  decltype(&::ibv_dereg_mr) deregMr = nullptr;
  decltype(&::ibv_create_cq) createCq = nullptr;
  decltype(&::ibv_destroy_cq) destroyCq = nullptr;
  decltype(&::ibv_create_qp) createQp = nullptr;
  decltype(&::ibv_modify_qp) modifyQp = nullptr;
  decltype(&::ibv_destroy_qp) destroyQp = nullptr;
  decltype(&::ibv_create_ah) createAh = nullptr;
  decltype(&::ibv_destroy_ah) destroyAh = nullptr;
  decltype(&::ibv_wc_status_str) wcStatusStr = nullptr;
};

class VerbsLibrary : public VerbsApi {
 public:
  static constexpr const char* kDefaultName = "libibverbs.so.1";

  // Reads ALLOY_IBVERBS_PATH now (not once per process: a test may change it) and loads that library.
  VerbsLibrary();
  // Loads `name` as dlopen resolves it; ignores the environment.
  explicit VerbsLibrary(const std::string& name);
  ~VerbsLibrary();
  VerbsLibrary(const VerbsLibrary&) = delete;
  VerbsLibrary& operator=(const VerbsLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }
  // Why loading failed (dlerror's text, or the missing symbol); empty when loaded.
  const std::string& error() const { return error_; }

  // What the header's ibv_query_port macro does, without a link-time reference to the library: the
  // macro prefers the provider's extended query (which fills the whole ibv_port_attr) and falls back to
  // the exported ibv_query_port symbol, which fills only the older, shorter layout. Only when loaded().
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;

 private:
  void load();
  void unload();

  std::string name_;
  std::string error_;
  void* handle_ = nullptr;
  // The exported symbol behind the macro, declared with the old attribute struct.
  decltype(&::ibv_query_port) queryPortSymbol_ = nullptr;
};

}  // namespace verbs
}  // namespace alloy
