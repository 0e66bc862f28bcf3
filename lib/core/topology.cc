#include "topology.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

#include "env.h"

namespace alloy {
namespace {

// FNV-1a: a stable hash of the host identity that does not depend on the C++ library.
uint64_t fnv1a(const char* data, size_t size, uint64_t hash) {
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

void fillHostIdentity(EndpointBlob* blob) {
  std::memset(blob, 0, sizeof(*blob));
  blob->magic = kEndpointMagic;
  blob->version = kEndpointVersion;
  gethostname(blob->hostName, kHostNameBytes - 1);
  // Host names can repeat across containers; the kernel's boot id tells machines apart as well.
  char bootId[64] = "";
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    if (std::fgets(bootId, sizeof(bootId), f) == nullptr) bootId[0] = '\0';
    std::fclose(f);
  }
  uint64_t hash = fnv1a(blob->hostName, std::strlen(blob->hostName), 14695981039346656037ull);
  hash = fnv1a(bootId, std::strlen(bootId), hash);
  // Virtual hosts: processes of one machine that set different ALLOY_HOSTID values count as different
  // hosts (as NCCL_HOSTID does), so that the path between hosts runs where there is one machine. The
  // value refines the machine's identity rather than replacing it: two machines never become one host.
  const std::string virtualHost = envString("ALLOY_HOSTID", "");
  if (!virtualHost.empty()) hash = fnv1a(virtualHost.c_str(), virtualHost.size(), hash ^ 0x76686f7374ull);
  blob->hostHash = hash;
  blob->pid = static_cast<int32_t>(getpid());
  blob->cudaDevice = -1;
}

LocalTopology computeLocalTopology(const std::vector<uint64_t>& hostOf, int myRank) {
  LocalTopology topo;
  topo.localIndexOf.assign(hostOf.size(), -1);
  for (int r = 0; r < static_cast<int>(hostOf.size()); ++r) {
    if (hostOf[r] != hostOf[myRank]) continue;
    if (r == myRank) topo.localRank = static_cast<int>(topo.localPeers.size());
    topo.localIndexOf[r] = static_cast<int>(topo.localPeers.size());
    topo.localPeers.push_back(r);
  }
  topo.localSize = static_cast<int>(topo.localPeers.size());
  // Each rank's position on its own host, counted in rank order as localPeers is; rail q is every rank at
  // position q.
  std::unordered_map<uint64_t, int> seenOnHost;
  topo.rails.resize(topo.localSize);
  bool even = true;
  for (int r = 0; r < static_cast<int>(hostOf.size()) && even; ++r) {
    const int position = seenOnHost[hostOf[r]]++;
    even = position < topo.localSize;
    if (even) topo.rails[position].push_back(r);
  }
  for (const auto& host : seenOnHost) even = even && host.second == topo.localSize;
  std::unordered_map<uint64_t, int> ranksOnHost, indexOfHost;
  for (uint64_t host : hostOf) {
    ++ranksOnHost[host];
    topo.hostIndexOf.push_back(indexOfHost.emplace(host, static_cast<int>(indexOfHost.size())).first->second);
  }
  topo.hosts = static_cast<int>(ranksOnHost.size());
  topo.smallestHostSize = topo.localSize;
  for (const auto& host : ranksOnHost) topo.smallestHostSize = std::min(topo.smallestHostSize, host.second);
  if (!even) topo.rails.clear();
  return topo;
}

const std::vector<int>& LocalTopology::railPeers() const {
  static const std::vector<int> none;
  return rails.empty() ? none : rails[localRank];
}

int LocalTopology::railOf(int rank) const {
  for (size_t q = 0; q < rails.size(); ++q)
    if (std::find(rails[q].begin(), rails[q].end(), rank) != rails[q].end()) return static_cast<int>(q);
  return -1;
}

LocalTopology computeLocalTopology(const std::vector<EndpointBlob>& blobs, int myRank) {
  std::vector<uint64_t> hostOf;
  for (const EndpointBlob& b : blobs) hostOf.push_back(b.hostHash);
  return computeLocalTopology(hostOf, myRank);
}

}  // namespace alloy
