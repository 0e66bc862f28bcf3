#include "env.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "log.h"

namespace alloy {
namespace {

// Variables whose bad value was already reported: some are read on every call.
bool firstComplaint(const char* name) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  return reported.insert(name).second;
}

}  // namespace

std::string envString(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && value[0] != '\0') ? std::string(value) : std::string(fallback);
}

std::string envChoice(const char* name, const char* fallback, std::initializer_list<const char*> choices) {
  return chooseEnv(name, std::getenv(name), fallback, choices);
}

const char* chooseEnv(const char* name, const char* value, const char* fallback,
                      std::initializer_list<const char*> choices) {
  if (value == nullptr || value[0] == '\0') return fallback;
  for (const char* choice : choices)
    if (std::strcmp(value, choice) == 0) return choice;
  if (firstComplaint(name)) logWarn("%s=%s is not one of the accepted values; using %s", name, value, fallback);
  return fallback;
}

long long envInt(const char* name, long long fallback, long long min, long long max) {
  return parseEnvInt(name, std::getenv(name), fallback, min, max);
}

long long parseEnvInt(const char* name, const char* value, long long fallback, long long min, long long max) {
  if (value == nullptr || value[0] == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value, &end, 10);
  const bool integer = errno == 0 && end != value && *end == '\0';
  if (integer && parsed >= min && parsed <= max) return parsed;
  if (firstComplaint(name)) {
    if (integer)
      logWarn("%s=%s is outside %lld..%lld; using %lld", name, value, min, max, fallback);
    else
      logWarn("%s=%s is not a decimal integer; using %lld", name, value, fallback);
  }
  return fallback;
}

}  // namespace alloy
