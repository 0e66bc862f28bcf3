// An argument error found by an MPIX function: the MPI error class to report and the message that
// MPI_Error_string will return for it. A default-constructed Problem means "nothing wrong".
#pragma once

#include <mpi.h>

#include <string>

namespace alloy_mpix {

struct Problem {
  int errorClass = MPI_SUCCESS;
  std::string message;

  explicit operator bool() const { return errorClass != MPI_SUCCESS; }
};

// printf-style constructor: problem(MPI_ERR_COUNT, "%s: sendcount=%d is negative", fn, n).
Problem problem(int errorClass, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace alloy_mpix
