#include "env.h"

#include <cerrno>
#include <cstdlib>

#include "log.h"

namespace alloy {

std::string envString(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && value[0] != '\0') ? std::string(value) : std::string(fallback);
}

long long envInt(const char* name, long long fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(value, &end, 0);
  if (errno != 0 || end == value || *end != '\0') {
    logWarn("%s=%s is not an integer; using %lld", name, value, fallback);
    return fallback;
  }
  return parsed;
}

}  // namespace alloy
