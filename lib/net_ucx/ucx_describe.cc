#include "ucx_describe.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace alloy {
namespace net {
namespace {

// One lane line of ucp_ep_print_info (UCX 1.13):
//   "#  lane[0]:  1:tcp/lo.0 md[0]  -> md[0]/tcp/sysdev[255] am am_bw#0 keepalive wireup"
// gives "tcp/lo.0 (am am_bw#0 keepalive wireup)": the resource, then what UCX uses the lane for.
std::string describeLane(const std::string& line) {
  std::istringstream words(line);
  std::string word, resource, uses;
  bool afterArrow = false, target = false;
  while (words >> word) {
    if (resource.empty() && word.find(':') != std::string::npos && word.find('/') != std::string::npos)
      resource = word.substr(word.find(':') + 1);
    else if (word == "->")
      afterArrow = target = true;
    else if (target)
      target = false;  // the remote side's md/resource
    else if (afterArrow)
      uses += (uses.empty() ? "" : " ") + word;
  }
  return resource + " (" + uses + ")";
}

}  // namespace

std::string describeEndpoint(ucp_ep_h ep) {
  char* text = nullptr;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  if (stream == nullptr) return "(unknown: open_memstream failed)";
  ucp_ep_print_info(ep, stream);
  std::fclose(stream);
  std::istringstream report(std::string(text, length));
  std::free(text);
  std::string line, lanes;
  while (std::getline(report, line)) {
    if (line.find("lane[") == std::string::npos) continue;
    lanes += (lanes.empty() ? "" : ", ") + describeLane(line);
  }
  return lanes.empty() ? "(no lanes reported)" : lanes;
}

}  // namespace net
}  // namespace alloy
