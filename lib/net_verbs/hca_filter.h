// Which RDMA devices and ports the verbs transport may use: ALLOY_IB_HCA, in the syntax of NCCL_IB_HCA so
// that a site's existing setting carries over unchanged.
//
//   spec   := [ "^" ] [ "=" ] entry { "," entry }     (or empty: every device and port)
//   entry  := name [ ":" port ]
//
// - "^" first turns the list into an exclusion list: everything is used except what the entries match.
// - "=" (after "^" when both are given, i.e. "^=") makes names match exactly; without it an entry
//   matches every device whose name starts with it, so "mlx5" selects mlx5_0, mlx5_1, ...
// - An entry without a port matches every port of the device; a port is a decimal number 1..255
//   (ibverbs numbers ports from 1, in a uint8_t).
// - Whitespace around the whole value and around each entry is ignored ("mlx5_0, mlx5_1" is a common
//   way to write a list and means nothing else); whitespace inside an entry is an error.
// - Names may not contain "^" or "=" (a misplaced modifier such as "=^mlx5" is reported, not matched).
// Any malformed entry makes parseHcaFilter fail with alloyInvalidArgument: a typo must not silently
// select no device or, in an exclusion list, every device.
#pragma once

#include <string>
#include <vector>

#include "alloy.h"

namespace alloy {
namespace verbs {

struct HcaEntry {
  std::string name;
  int port = 0;  // 0: every port of the device
};

struct HcaFilter {
  bool exclude = false;  // "^": the entries name what is NOT used
  bool exact = false;    // "=": names match whole device names, not prefixes
  std::vector<HcaEntry> entries;  // empty: no filter, everything is used
};

// Parses spec (the value of ALLOY_IB_HCA) into *out. On error *out is left unchanged and the message,
// recorded with alloy::fail, names ALLOY_IB_HCA, quotes the offending entry and says what was expected.
alloyResult_t parseHcaFilter(const std::string& spec, HcaFilter* out);

// Whether port `port` of device `device` is used under filter f.
bool hcaSelected(const HcaFilter& f, const std::string& device, int port);

}  // namespace verbs
}  // namespace alloy
