// Helpers of the MPI extension's tests: error codes as MPI reports them, and shapes every rank agrees on.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "alloy_mpix.h"

namespace mpixtest {

inline std::string errorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

inline int errorClass(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

// Expects `call` to fail with an error of class `cls` whose MPI_Error_string contains `needle`.
#define EXPECT_MPIX_ERROR(call, cls, needle)                                                              \
  do {                                                                                                    \
    const int mpix_code_ = (call);                                                                        \
    EXPECT_EQ(::mpixtest::errorClass(mpix_code_), (cls)) << #call << ": " << ::mpixtest::errorString(mpix_code_); \
    EXPECT_NE(::mpixtest::errorString(mpix_code_).find(needle), std::string::npos)                        \
        << #call << ": expected the message to name \"" << (needle) << "\", got \""                       \
        << ::mpixtest::errorString(mpix_code_) << "\"";                                                   \
  } while (0)

inline int rankOf(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int sizeOf(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

// A count matrix all ranks agree on: counts[from * n + to], with zeros, and rank 1 (when there is one)
// sending nothing at all.
inline std::vector<int> countMatrix(int n, uint32_t seed, int maxCount) {
  std::mt19937 rng(seed);
  std::vector<int> counts(static_cast<size_t>(n) * n);
  for (int from = 0; from < n; ++from)
    for (int to = 0; to < n; ++to) {
      const bool zero = rng() % 4 == 0 || (n > 1 && from == 1);
      counts[from * n + to] = zero ? 0 : static_cast<int>(rng() % maxCount) + 1;
    }
  return counts;
}

// Displacements of consecutive blocks with a gap of `gap` elements before each one.
inline std::vector<int> displacementsOf(const std::vector<int>& counts, int gap, int* total) {
  std::vector<int> displs(counts.size());
  int at = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    at += gap;
    displs[i] = at;
    at += counts[i];
  }
  *total = at + gap;
  return displs;
}

// Bytes that differ from the rank's own pattern, for buffers whose content is checked byte by byte.
inline std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(bytes);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

}  // namespace mpixtest
