// What the MPIX functions need to know about an MPI datatype and an MPI reduction operation.
#pragma once

#include <mpi.h>

#include <string>

#include "alloy.h"

namespace alloy_mpix {

struct TypeInfo {
  MPI_Count size = 0;      // bytes of data in one element
  MPI_Count extent = 0;    // stride between consecutive elements, what displacements are counted in
  bool contiguous = false; // its bytes in order from offset 0, no gap, none twice: the GPU engine may move it as bytes
  bool reducible = false;  // a predefined type that alloyDataType_t represents
  alloyDataType_t alloyType = alloyUint8;  // meaningful when reducible
  std::string name;        // for messages: MPI_Type_get_name, or "a derived datatype"
};

// false when type is MPI_DATATYPE_NULL or MPI cannot describe it.
bool describeType(MPI_Datatype type, TypeInfo* info);

// false for operations other than MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX.
bool mapOp(MPI_Op op, alloyRedOp_t* out);

}  // namespace alloy_mpix
