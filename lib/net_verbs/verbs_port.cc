#include "verbs_port.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "env.h"
#include "error.h"
#include "hca_filter.h"

namespace alloy {
namespace verbs {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The port's GID table; an entry that cannot be read is left out (chooseGid then cannot pick it).
std::vector<GidEntry> readGidTable(const VerbsLibrary& lib, ibv_device* device, ibv_context* context, uint8_t port,
                                   int length) {
  std::vector<GidEntry> table;
  const std::string types = std::string(device->ibdev_path) + "/ports/" + std::to_string(port) + "/gid_attrs/types/";
  for (int index = 0; index < length; ++index) {
    ibv_gid gid;
    if (lib.queryGid(context, port, index, &gid) != 0) continue;
    GidEntry entry{index, {}, roceGidType(readFile(types + std::to_string(index)))};
    std::memcpy(entry.gid.data(), gid.raw, entry.gid.size());
    table.push_back(entry);
  }
  return table;
}

// Fills *out from an active port that has a usable GID; otherwise returns the reason ("" for a port that
// is simply down).
alloyResult_t tryPort(const VerbsLibrary& lib, ibv_device* device, ibv_context* context, uint8_t port,
                      int forcedGid, VerbsPort* out, std::string* skipped) {
  ibv_port_attr attr;
  if (lib.queryPort(context, port, &attr) != 0) {
    *skipped = "cannot be queried";
    return alloySuccess;
  }
  if (attr.state != IBV_PORT_ACTIVE) {
    *skipped = "not active";
    return alloySuccess;
  }
  const LinkLayer link = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? LinkLayer::Ethernet : LinkLayer::Infiniband;
  const std::vector<GidEntry> table = readGidTable(lib, device, context, port, attr.gid_tbl_len);
  int index = -1;
  const alloyResult_t chosen = chooseGid(link, table, forcedGid, &index);
  if (chosen == alloyInvalidUsage) {  // no RoCE GID: another port may have one
    *skipped = lastError();
    clearLastError();
    return alloySuccess;
  }
  ALLOY_TRY(chosen);  // a forced index the table lacks is the user's to fix, not a reason to go elsewhere
  for (const GidEntry& e : table)
    if (e.index == index) out->gid = e.gid;
  out->port = port;
  out->link = link;
  out->lid = attr.lid;
  out->gidIndex = index;
  out->activeMtu = attr.active_mtu;
  out->maxMessageBytes = attr.max_msg_sz;
  skipped->clear();
  return alloySuccess;
}

}  // namespace

alloyResult_t openPort(const VerbsLibrary& lib, VerbsPort* out) {
  const std::string spec = envString("ALLOY_IB_HCA", "");
  HcaFilter filter;
  ALLOY_TRY(parseHcaFilter(spec, &filter));
  const int forcedGid = static_cast<int>(envInt("ALLOY_IB_GID_INDEX", -1, -1, 65535));
  int count = 0;
  errno = 0;
  ibv_device** list = lib.getDeviceList(&count);
  if (list == nullptr)
    return fail(alloyNotSupported, "verbs: 0 RDMA devices (ibv_get_device_list failed: %s)", std::strerror(errno));
  std::unique_ptr<ibv_device*, decltype(lib.freeDeviceList)> devices(list, lib.freeDeviceList);
  std::string looked;  // "mlx5_0 port 1: not active, ..." for the failure message
  for (int d = 0; d < count; ++d) {
    const std::string name = lib.getDeviceName(list[d]);
    VerbsPtr<ibv_context> context = own(lib.openDevice(list[d]), lib.closeDevice);
    if (!context) {
      looked += (looked.empty() ? "" : ", ") + name + ": cannot be opened";
      continue;
    }
    ibv_device_attr attr;
    if (lib.queryDevice(context.get(), &attr) != 0) {
      looked += (looked.empty() ? "" : ", ") + name + ": cannot be queried";
      continue;
    }
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      if (!hcaSelected(filter, name, port)) continue;
      std::string skipped;
      ALLOY_TRY(tryPort(lib, list[d], context.get(), static_cast<uint8_t>(port), forcedGid, out, &skipped));
      if (skipped.empty()) {
        out->context = std::move(context);
        out->device = name;
        out->deviceAttr = attr;
        return alloySuccess;
      }
      looked += (looked.empty() ? "" : ", ") + name + " port " + std::to_string(port) + ": " + skipped;
    }
  }
  return fail(alloyNotSupported, "verbs: no active port with a usable GID among %d RDMA device%s (ALLOY_IB_HCA=\"%s\")%s%s",
              count, count == 1 ? "" : "s", spec.c_str(), looked.empty() ? "" : ": ", looked.c_str());
}

}  // namespace verbs
}  // namespace alloy
