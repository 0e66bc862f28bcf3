#include "socket_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "env.h"
#include "error.h"
#include "log.h"

namespace alloy {

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
}

void SocketAddress::setPort(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  else reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

std::string SocketAddress::describe() const {
  char text[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(port());
  }
  inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text, sizeof(text));
  return "[" + std::string(text) + "]:" + std::to_string(port());
}

size_t SocketAddress::rawBytes(uint8_t out[16]) const {
  if (family() == AF_INET) {
    std::memcpy(out, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, 4);
    return 4;
  }
  std::memcpy(out, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, 16);
  return 16;
}

alloyResult_t SocketAddress::fromRaw(int family, const uint8_t* raw, uint16_t port, const char* what,
                                     SocketAddress* out) {
  *out = SocketAddress();
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&out->storage);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, raw, 4);
    out->length = sizeof(sockaddr_in);
  } else if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out->storage);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, raw, 16);
    out->length = sizeof(sockaddr_in6);
  } else {
    return fail(alloyInvalidArgument, "%s: address family %d is neither IPv4 nor IPv6", what, family);
  }
  if (port == 0) return fail(alloyInvalidArgument, "%s: port 0; expected the port of a listening socket", what);
  out->setPort(port);
  return alloySuccess;
}

namespace {

struct IfaddrsDeleter {
  void operator()(ifaddrs* list) const { freeifaddrs(list); }
};

bool usable(const ifaddrs* ifa) {
  return ifa->ifa_addr != nullptr && (ifa->ifa_flags & IFF_UP) &&
         (ifa->ifa_addr->sa_family == AF_INET || ifa->ifa_addr->sa_family == AF_INET6);
}

// Link-local IPv6 addresses need a scope id that peers on other hosts cannot know: never chosen.
bool linkLocal(const ifaddrs* ifa) {
  return ifa->ifa_addr->sa_family == AF_INET6 &&
         IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr)->sin6_addr);
}

// The first usable address among interfaces that match, IPv4 before IPv6.
const ifaddrs* firstAddress(const ifaddrs* list, bool (*matches)(const ifaddrs*, const std::string&),
                            const std::string& name) {
  for (int family : {AF_INET, AF_INET6})
    for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next)
      if (usable(ifa) && ifa->ifa_addr->sa_family == family && !linkLocal(ifa) && matches(ifa, name)) return ifa;
  return nullptr;
}

}  // namespace

alloyResult_t chooseBootstrapAddress(SocketAddress* out) {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return fail(alloySystemError, "getifaddrs failed: %s", std::strerror(errno));
  std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
  const std::string wanted = envString("ALLOY_BOOTSTRAP_IFNAME", "");
  const ifaddrs* chosen = nullptr;
  if (!wanted.empty()) {
    chosen = firstAddress(raw, [](const ifaddrs* ifa, const std::string& prefix) {
      return std::strncmp(ifa->ifa_name, prefix.c_str(), prefix.size()) == 0;
    }, wanted);
    if (chosen == nullptr)
      return fail(alloyInvalidArgument,
                  "ALLOY_BOOTSTRAP_IFNAME=%s: no up interface whose name starts with it has an IPv4 or global IPv6 "
                  "address", wanted.c_str());
  } else {
    chosen = firstAddress(raw, [](const ifaddrs* ifa, const std::string&) {
      return (ifa->ifa_flags & IFF_LOOPBACK) == 0;
    }, wanted);
    if (chosen == nullptr) {
      chosen = firstAddress(raw, [](const ifaddrs*, const std::string&) { return true; }, wanted);
      if (chosen != nullptr)
        logInfo("bootstrap: no up interface other than loopback; listening on %s (reachable from this host only)",
                chosen->ifa_name);
    }
    if (chosen == nullptr) return fail(alloySystemError, "bootstrap: no up network interface has an IP address");
  }
  *out = SocketAddress();
  out->length = chosen->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  std::memcpy(&out->storage, chosen->ifa_addr, out->length);
  out->setPort(0);
  logTrace("bootstrap: listening on interface %s (%s)", chosen->ifa_name, out->describe().c_str());
  return alloySuccess;
}

}  // namespace alloy
