// Environment variables read by Alloy. Every variable is documented in docs/environment.md; add it
// there when adding a reader here.
#pragma once

#include <string>

namespace alloy {

// Value of the variable, or fallback when it is unset or empty.
std::string envString(const char* name, const char* fallback);
// Integer value of the variable, or fallback when unset; a value that does not parse as an integer is
// reported once as a warning and the fallback is used.
long long envInt(const char* name, long long fallback);

}  // namespace alloy
