// What the transports (lib/net_ucx, lib/net_verbs) share about the handles they hand out: they own them
// in lists of unique_ptr and take back plain pointers, and a remote key addresses a registered range of
// a peer's memory on one connection.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "alloy.h"
#include "error.h"

namespace alloy {
namespace net {

// Erases the element of `list` that owns `item`; false when none does (a handle of another transport).
template <typename T, typename U>
bool eraseOwned(std::vector<std::unique_ptr<T>>* list, const U* item) {
  auto it = std::find_if(list->begin(), list->end(), [item](const std::unique_ptr<T>& p) { return p.get() == item; });
  if (it == list->end()) return false;
  list->erase(it);
  return true;
}

// The checks a data call makes on its destination: the key was imported on this connection (keyPeer is
// the peer of the connection it was imported on), and [dstOffset, dstOffset + bytes) lies inside the
// keyBytes the peer registered.
inline alloyResult_t checkKeyRange(int peer, int keyPeer, bool sameConnection, size_t dstOffset, size_t bytes,
                                   uint64_t keyBytes) {
  if (!sameConnection)
    return fail(alloyInvalidArgument, "dst: the key was imported on the connection to peer %d, not peer %d", keyPeer,
                peer);
  if (dstOffset > keyBytes || bytes > keyBytes - dstOffset)
    return fail(alloyInvalidArgument, "dstOffset: %zu + %zu bytes is outside the %llu bytes registered by peer %d",
                dstOffset, bytes, static_cast<unsigned long long>(keyBytes), peer);
  return alloySuccess;
}

}  // namespace net
}  // namespace alloy
