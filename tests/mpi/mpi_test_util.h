// Helpers for tests that run under mpirun/srun.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include "alloy.h"

// Asserts an Alloy call's result, printing the library's message when it differs.
#define ASSERT_ALLOY(expected, call) ASSERT_EQ((expected), (call)) << alloyGetLastError(nullptr)
#define EXPECT_ALLOY(expected, call) EXPECT_EQ((expected), (call)) << alloyGetLastError(nullptr)

// True when the last error message contains text.
inline bool lastErrorMentions(const char* text) {
  return std::string(alloyGetLastError(nullptr)).find(text) != std::string::npos;
}

inline int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
