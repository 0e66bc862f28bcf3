// Argument checks shared by the MPIX functions. Each records a problem in the request (naming the
// function and the argument) and returns false when the argument is unusable.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "datatypes.h"
#include "request.h"

namespace alloy_mpix {

// Describes a datatype argument. MPI_DATATYPE_NULL is wrong everywhere; a non-contiguous type only for
// the GPU engine; with `reduction`, so is a type Alloy does not reduce.
bool checkType(Request* r, const char* function, const char* name, MPI_Datatype type, bool reduction, TypeInfo* info);

// *bytes = count * elementBytes: a negative count, or one whose bytes overflow, is MPI_ERR_COUNT.
bool checkCount(Request* r, const char* function, const char* name, MPI_Count count, MPI_Count elementBytes,
                size_t* bytes);
// checkCount for entry `index` of the array `arrayName` ("recvcounts[3]" in the message, formatted only
// for one: a layout checks every rank's entry on every call).
bool checkCountAt(Request* r, const char* function, const char* arrayName, int index, MPI_Count count,
                  MPI_Count elementBytes, size_t* bytes);

bool checkRoot(Request* r, const char* function, int root, const CommShape& shape);

// A reduction operation the GPU engine performs (the MPI library takes any).
bool checkOp(Request* r, const char* function, MPI_Op op, alloyRedOp_t* out);

// Sending and receiving sides must carry the same number of bytes (MPI: equal type signatures).
bool checkSignatures(Request* r, const char* function, size_t sendBytes, size_t recvBytes, const char* what);

}  // namespace alloy_mpix
