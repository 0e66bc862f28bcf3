// Helpers of the unique-id bootstrap's tests (ranks on threads of one process): a rank's join with its
// outcome, a scoped ALLOY_BOOTSTRAP_TIMEOUT_MS, and an id whose secret is not the root's.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "error.h"
#include "root.h"
#include "socket_bootstrap.h"
#include "unique_id.h"

namespace bootstrap_test {

struct Joined {
  alloyResult_t result = alloyInternalError;  // poisoned
  std::string message;
  std::unique_ptr<alloy::Bootstrap> bootstrap;
};

inline Joined join(const uint8_t* id, int nranks, int rank) {
  Joined j;
  j.result = alloy::SocketBootstrap::join(id, nranks, rank, &j.bootstrap);
  j.message = alloy::lastError();
  return j;
}

// Scoped ALLOY_BOOTSTRAP_TIMEOUT_MS, read at each root start and join.
struct ShortTimeout {
  explicit ShortTimeout(const char* ms) { setenv("ALLOY_BOOTSTRAP_TIMEOUT_MS", ms, 1); }
  ~ShortTimeout() { unsetenv("ALLOY_BOOTSTRAP_TIMEOUT_MS"); }
};

// id with its secret changed by flip: the same root, a secret that is not its own.
inline void forge(const uint8_t* id, uint64_t flip, uint8_t* forged) {
  alloy::UniqueIdContents contents;
  alloy::decodeUniqueId(id, "commId", &contents);
  contents.secret ^= flip;
  alloy::encodeUniqueId(contents, forged);
}

}  // namespace bootstrap_test
