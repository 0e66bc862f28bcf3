// Environment variables read by Alloy. Every variable is documented in docs/environment.md; add it
// there when adding a reader here.
#pragma once

#include <climits>
#include <initializer_list>
#include <string>

namespace alloy {

// Value of the variable, or fallback when it is unset or empty.
std::string envString(const char* name, const char* fallback);
// Like envString, for variables that take one of a few words: a value that is none of `choices` is
// reported once as a warning and the fallback is used.
std::string envChoice(const char* name, const char* fallback, std::initializer_list<const char*> choices);
// Decimal integer value of the variable, or fallback when unset or empty. A value that is not a decimal
// integer, or lies outside [min, max], is reported once per variable as a warning and the fallback is
// used: a mistyped tuning knob must not silently become 0, octal, or an overflow.
long long envInt(const char* name, long long fallback, long long min = LLONG_MIN, long long max = LLONG_MAX);

// envInt and envChoice over a value already read (nullptr: unset), for readers of another source than
// getenv (call_env.h). envChoice's answer is one of `choices` or `fallback`, never a copy.
long long parseEnvInt(const char* name, const char* value, long long fallback, long long min, long long max);
const char* chooseEnv(const char* name, const char* value, const char* fallback,
                      std::initializer_list<const char*> choices);

}  // namespace alloy
