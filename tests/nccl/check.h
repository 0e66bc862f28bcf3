/* A minimal check for the C programs of the NCCL suite: prints what failed with NCCL's last error, counts it. */
#ifndef ALLOY_NCCL_TEST_CHECK_H_
#define ALLOY_NCCL_TEST_CHECK_H_

#include <nccl.h>
#include <stdio.h>
#include <string.h>

static int checkFailures = 0;

#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      ++checkFailures;                                                          \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                             \
      fprintf(stderr, " (ncclGetLastError: %s)\n", ncclGetLastError(NULL));    \
    }                                                                           \
  } while (0)

/* Whether ncclGetLastError mentions text; NULL: nothing to check. */
static inline int lastErrorMentions(const char* text) {
  return text == NULL || strstr(ncclGetLastError(NULL), text) != NULL;
}

/* The call returns expected and, for an error, ncclGetLastError mentions text (NULL: not checked). */
#define CHECK_RESULT(expected, text, call)                                                             \
  do {                                                                                                 \
    ncclResult_t checkGot_ = (call);                                                                   \
    CHECK(checkGot_ == (expected), "%s returned %d (%s), expected %d", #call, (int)checkGot_,          \
          ncclGetErrorString(checkGot_), (int)(expected));                                             \
    CHECK(lastErrorMentions(text), "message lacks \"%s\"", (text) ? (text) : "");                    \
  } while (0)

#endif
