// The variables a collective reads on its path (docs/environment.md marks them "read at each creation"),
// taken from a snapshot of the environment's ALLOY_ entries instead of getenv.
//
// Under mpirun a rank's environment holds a hundred variables and more, and every getenv scans them:
// an 8-byte allreduce spent 0.8-1.0 us of its ~7 us of host time in getenv at 4 ranks (session 12's
// profile, docs/benchmarks.md). The snapshot is taken at the first read and again whenever a
// communicator is created, so a variable the program sets before creating a communicator applies to
// every call after that creation, on every communicator.
#pragma once

#include <climits>
#include <initializer_list>

namespace alloy {

// Takes a new snapshot of the environment's ALLOY_ variables for the readers below. Thread-safe; readers
// on other threads see either the old or the new snapshot.
void refreshCallEnvironment();

// envInt and envChoice (env.h) over the snapshot: the same parsing, ranges and one-time warnings.
long long callEnvInt(const char* name, long long fallback, long long min = LLONG_MIN, long long max = LLONG_MAX);
const char* callEnvChoice(const char* name, const char* fallback, std::initializer_list<const char*> choices);

}  // namespace alloy
