#include "nccl_api.h"

#include <dlfcn.h>

#include <cstdlib>

namespace alloyperf {

namespace {

// dlsym returns void*; one helper does the cast for every entry so that each symbol is named once.
template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* fn, std::string* why) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (*fn == nullptr && why) *why = std::string("symbol ") + symbol + " not found";
  return *fn != nullptr;
}

}  // namespace

bool loadNccl(NcclApi* api, std::string* why) {
  const char* env = getenv("ALLOY_PERF_NCCL_LIB");
  api->path = env && *env ? env : "libnccl.so.2";
  // RTLD_LOCAL keeps NCCL's symbols out of the global namespace, where they could interpose on a library
  // (Alloy, or a plugin) that happens to export the same names.
  void* handle = dlopen(api->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    *why = err ? err : ("cannot load " + api->path);
    return false;
  }
  const bool ok = resolve(handle, "ncclGetUniqueId", &api->getUniqueId, why) &&
                  resolve(handle, "ncclCommInitRank", &api->commInitRank, why) &&
                  resolve(handle, "ncclCommDestroy", &api->commDestroy, why) &&
                  resolve(handle, "ncclAllReduce", &api->allReduce, why) &&
                  resolve(handle, "ncclReduce", &api->reduce, why) &&
                  resolve(handle, "ncclBroadcast", &api->broadcast, why) &&
                  resolve(handle, "ncclAllGather", &api->allGather, why) &&
                  resolve(handle, "ncclReduceScatter", &api->reduceScatter, why) &&
                  resolve(handle, "ncclSend", &api->send, why) &&
                  resolve(handle, "ncclRecv", &api->recv, why) &&
                  resolve(handle, "ncclGroupStart", &api->groupStart, why) &&
                  resolve(handle, "ncclGroupEnd", &api->groupEnd, why) &&
                  resolve(handle, "ncclGetErrorString", &api->getErrorString, why);
  if (!ok) {
    *why = api->path + ": " + *why;
    dlclose(handle);
    return false;
  }
  resolve(handle, "ncclGetVersion", &api->getVersion, nullptr);
  // The handle stays open for the life of the process: NCCL's threads may outlive the communicator.
  return true;
}

}  // namespace alloyperf
