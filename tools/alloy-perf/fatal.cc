#include "fatal.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace alloyperf {

static int messageRank = -1;

void setMessageRank(int rank) { messageRank = rank; }

void fatal(const char* fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  fprintf(stderr, "alloy-perf: rank %d: %s\n", messageRank, text);
  fflush(stderr);
  fflush(stdout);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

}  // namespace alloyperf
