// Logging to stderr, filtered by ALLOY_DEBUG (WARN by default; INFO and TRACE show more).
#pragma once

namespace alloy {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

LogLevel logLevel();
void logWarn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void logInfo(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void logTrace(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace alloy
