// Lists the RDMA devices libibverbs sees and how many of their ports are active. A device whose ports
// are all down cannot carry traffic, so "usable" needs an active port, not just a device. libibverbs is
// loaded here, at each probe (verbs_library.h): without it the probe reports why and finds no device.
#include <cerrno>
#include <cstring>
#include <string>

#include "net_probe.h"
#include "verbs_library.h"

namespace alloy {
namespace {

using verbs::VerbsLibrary;

// Ports of one device that are up, or -1 where the device cannot be opened or queried (permissions,
// a provider that failed to load): the name is still reported.
int activePorts(const VerbsLibrary& lib, ibv_device* device, int* ports) {
  ibv_context* context = lib.openDevice(device);
  if (context == nullptr) return -1;
  int active = -1;
  ibv_device_attr attr;
  if (lib.queryDevice(context, &attr) == 0) {
    active = 0;
    *ports = attr.phys_port_cnt;
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr portAttr;
      if (lib.queryPort(context, static_cast<uint8_t>(port), &portAttr) == 0 && portAttr.state == IBV_PORT_ACTIVE)
        ++active;
    }
  }
  lib.closeDevice(context);
  return active;
}

}  // namespace

NetProbe probeVerbs() {
  NetProbe probe;
  probe.built = true;
  const VerbsLibrary lib;
  if (!lib.loaded()) {
    probe.detail = "verbs: " + lib.name() + " could not be loaded (" + lib.error() + ")";
    return probe;
  }
  int count = 0;
  errno = 0;
  ibv_device** list = lib.getDeviceList(&count);
  if (list == nullptr) {
    // Without RDMA support in the kernel libibverbs fails here rather than returning an empty list.
    probe.detail = std::string("verbs: 0 RDMA devices (ibv_get_device_list failed: ") + std::strerror(errno) + ")";
    return probe;
  }
  probe.devices = count;
  probe.detail = "verbs: " + std::to_string(count) + " RDMA device" + (count == 1 ? "" : "s");
  for (int i = 0; i < count; ++i) {
    int ports = 0;
    int active = activePorts(lib, list[i], &ports);
    probe.usable = probe.usable || active > 0;
    probe.detail += std::string(i == 0 ? ": " : ", ") + lib.getDeviceName(list[i]);
    probe.detail += active < 0 ? " (cannot be opened)"
                               : " (" + std::to_string(active) + "/" + std::to_string(ports) + " ports active)";
  }
  lib.freeDeviceList(list);
  return probe;
}

}  // namespace alloy
