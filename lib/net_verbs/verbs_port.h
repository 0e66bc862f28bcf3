// The RDMA port a verbs transport uses: the first active port, in libibverbs' device order, that
// ALLOY_IB_HCA selects (hca_filter.h) and that has a usable GID (gid_select.h, ALLOY_IB_GID_INDEX).
// The device's context stays open for the transport's lifetime.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "alloy.h"
#include "gid_select.h"
#include "verbs_handles.h"
#include "verbs_library.h"

namespace alloy {
namespace verbs {

struct VerbsPort {
  VerbsPtr<ibv_context> context;
  std::string device;  // "mlx5_0"
  uint8_t port = 0;
  LinkLayer link = LinkLayer::Infiniband;
  uint16_t lid = 0;
  int gidIndex = 0;
  std::array<uint8_t, 16> gid{};
  int activeMtu = 0;              // enum ibv_mtu
  uint32_t maxMessageBytes = 0;   // the largest RDMA message the port carries
  ibv_device_attr deviceAttr{};   // queue and read limits the queue pairs are sized within
};

// alloyNotSupported naming what was looked at when no port qualifies; alloyInvalidArgument for a
// malformed ALLOY_IB_HCA or an ALLOY_IB_GID_INDEX that the chosen port's table does not hold.
alloyResult_t openPort(const VerbsLibrary& lib, VerbsPort* out);

}  // namespace verbs
}  // namespace alloy
