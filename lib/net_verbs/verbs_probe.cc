// Lists the RDMA devices libibverbs sees and how many of their ports are active. A device whose ports
// are all down cannot carry traffic, so "usable" needs an active port, not just a device.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "net_probe.h"

namespace alloy {
namespace {

// Ports of one device that are up, or -1 where the device cannot be opened or queried (permissions,
// a provider that failed to load): the name is still reported.
int activePorts(ibv_device* device, int* ports) {
  ibv_context* context = ibv_open_device(device);
  if (context == nullptr) return -1;
  int active = -1;
  ibv_device_attr attr;
  if (ibv_query_device(context, &attr) == 0) {
    active = 0;
    *ports = attr.phys_port_cnt;
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr portAttr;
      if (ibv_query_port(context, static_cast<uint8_t>(port), &portAttr) == 0 && portAttr.state == IBV_PORT_ACTIVE)
        ++active;
    }
  }
  ibv_close_device(context);
  return active;
}

}  // namespace

NetProbe probeVerbs() {
  NetProbe probe;
  probe.built = true;
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    // Without RDMA support in the kernel libibverbs fails here rather than returning an empty list.
    probe.detail = std::string("verbs: 0 RDMA devices (ibv_get_device_list failed: ") + std::strerror(errno) + ")";
    return probe;
  }
  probe.devices = count;
  probe.detail = "verbs: " + std::to_string(count) + " RDMA device" + (count == 1 ? "" : "s");
  for (int i = 0; i < count; ++i) {
    int ports = 0;
    int active = activePorts(list[i], &ports);
    probe.usable = probe.usable || active > 0;
    probe.detail += std::string(i == 0 ? ": " : ", ") + ibv_get_device_name(list[i]);
    probe.detail += active < 0 ? " (cannot be opened)"
                               : " (" + std::to_string(active) + "/" + std::to_string(ports) + " ports active)";
  }
  ibv_free_device_list(list);
  return probe;
}

}  // namespace alloy
