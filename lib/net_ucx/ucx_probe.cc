// Initialises a UCP context the way the UCX transport does (ucx_context.h) and lists the network
// devices UCX finds. ucp_init also succeeds with shared memory alone, so the device list is what tells
// whether UCX could reach another host.
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include <string>
#include <vector>

#include "net_probe.h"
#include "ucx_context.h"

namespace alloy {
namespace {

// "tcp/eth0"-style names of the UCT resources of one memory domain that are network devices.
void appendNetworkDevices(uct_component_h component, const char* mdName, std::vector<std::string>* names) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return;
  uct_md_h md = nullptr;
  ucs_status_t status = uct_md_open(component, mdName, config, &md);
  uct_config_release(config);
  if (status != UCS_OK) return;
  uct_tl_resource_desc_t* resources = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &resources, &count) == UCS_OK) {
    for (unsigned i = 0; i < count; ++i) {
      if (resources[i].dev_type == UCT_DEVICE_TYPE_NET)
        names->push_back(std::string(resources[i].tl_name) + "/" + resources[i].dev_name);
    }
    uct_release_tl_resource_list(resources);
  }
  uct_md_close(md);
}

std::vector<std::string> networkDevices() {
  std::vector<std::string> names;
  uct_component_h* components = nullptr;
  unsigned count = 0;
  if (uct_query_components(&components, &count) != UCS_OK) return names;
  for (unsigned c = 0; c < count; ++c) {
    uct_component_attr_t attr = {};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    for (const uct_md_resource_desc_t& md : mds) appendNetworkDevices(components[c], md.md_name, &names);
  }
  uct_release_component_list(components);
  return names;
}

}  // namespace

NetProbe probeUcx() {
  NetProbe probe;
  probe.built = true;
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  probe.detail = "UCX " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
  ucp_context_h context = nullptr;
  std::string failure = initUcpContext(&context);
  probe.usable = failure.empty();
  if (context != nullptr) ucp_cleanup(context);
  if (!probe.usable) {
    probe.detail += ": " + failure;
    return probe;
  }
  std::vector<std::string> devices = networkDevices();
  probe.devices = static_cast<int>(devices.size());
  probe.detail += ": ucp_init succeeded, " + std::to_string(devices.size()) + " network device" +
                  (devices.size() == 1 ? "" : "s");
  for (size_t i = 0; i < devices.size(); ++i) probe.detail += (i == 0 ? ": " : ", ") + devices[i];
  return probe;
}

}  // namespace alloy
