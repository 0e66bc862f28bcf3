#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace alloy {
namespace {

LogLevel parseLevel() {
  // Read directly rather than through env.h: envInt logs, and logging must not recurse into itself.
  const char* value = std::getenv("ALLOY_DEBUG");
  if (value == nullptr) return LogLevel::Warn;
  if (strcasecmp(value, "NONE") == 0) return LogLevel::None;
  if (strcasecmp(value, "INFO") == 0) return LogLevel::Info;
  if (strcasecmp(value, "TRACE") == 0) return LogLevel::Trace;
  if (strcasecmp(value, "WARN") != 0)
    std::fprintf(stderr, "alloy: ALLOY_DEBUG=%s is not NONE, WARN, INFO or TRACE; using WARN\n", value);
  return LogLevel::Warn;
}

void emit(LogLevel level, const char* tag, const char* fmt, va_list args) {
  if (logLevel() < level) return;
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  char message[1024];
  vsnprintf(message, sizeof(message), fmt, args);
  // One fprintf per line so that lines from several threads do not interleave mid-line.
  std::fprintf(stderr, "alloy %s:%d %s %s\n", host, static_cast<int>(getpid()), tag, message);
}

}  // namespace

LogLevel logLevel() {
  static const LogLevel level = parseLevel();
  return level;
}

#define ALLOY_DEFINE_LOG(fn, level, tag) \
  void fn(const char* fmt, ...) {        \
    va_list args;                        \
    va_start(args, fmt);                 \
    emit(level, tag, fmt, args);         \
    va_end(args);                        \
  }

ALLOY_DEFINE_LOG(logWarn, LogLevel::Warn, "WARN")
ALLOY_DEFINE_LOG(logInfo, LogLevel::Info, "INFO")
ALLOY_DEFINE_LOG(logTrace, LogLevel::Trace, "TRACE")

}  // namespace alloy
