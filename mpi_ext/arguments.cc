#include "arguments.h"

#include <cstdint>
#include <cstdio>

namespace alloy_mpix {

bool checkType(Request* r, const char* function, const char* name, MPI_Datatype type, bool reduction, TypeInfo* info) {
  if (!describeType(type, info)) {
    r->reject(problem(MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL or not a datatype", function, name));
    return false;
  }
  if (!info->contiguous)
    r->rejectOnGpu(problem(MPI_ERR_TYPE,
                           "%s: %s (%s) is not contiguous (size %lld, extent %lld): GPU buffers take contiguous "
                           "datatypes only", function, name, info->name.c_str(),
                           static_cast<long long>(info->size), static_cast<long long>(info->extent)));
  if (reduction && !info->reducible)
    r->rejectOnGpu(problem(MPI_ERR_TYPE,
                           "%s: %s (%s) cannot be reduced on the GPU; expected a predefined 8-, 32- or 64-bit "
                           "integer or a 32- or 64-bit floating-point type", function, name, info->name.c_str()));
  return true;
}

namespace {

// *bytes = count * elementBytes where the count is not negative and the product fits the address space.
bool countBytes(MPI_Count count, MPI_Count elementBytes, size_t* bytes) {
  MPI_Count product = 0;
  if (count < 0 || __builtin_mul_overflow(count, elementBytes, &product) ||
      static_cast<unsigned long long>(product) > SIZE_MAX)
    return false;
  *bytes = static_cast<size_t>(product);
  return true;
}

}  // namespace

bool checkCount(Request* r, const char* function, const char* name, MPI_Count count, MPI_Count elementBytes,
                size_t* bytes) {
  if (countBytes(count, elementBytes, bytes)) return true;
  if (count < 0)
    r->reject(problem(MPI_ERR_COUNT, "%s: %s=%lld is negative", function, name, static_cast<long long>(count)));
  else
    r->reject(problem(MPI_ERR_COUNT, "%s: %s=%lld elements of %lld bytes overflow the address space", function,
                      name, static_cast<long long>(count), static_cast<long long>(elementBytes)));
  return false;
}

bool checkCountAt(Request* r, const char* function, const char* arrayName, int index, MPI_Count count,
                  MPI_Count elementBytes, size_t* bytes) {
  if (countBytes(count, elementBytes, bytes)) return true;
  char name[64];
  std::snprintf(name, sizeof(name), "%s[%d]", arrayName, index);
  return checkCount(r, function, name, count, elementBytes, bytes);
}

bool checkRoot(Request* r, const char* function, int root, const CommShape& shape) {
  if (root >= 0 && root < shape.size) return true;
  r->reject(problem(MPI_ERR_ROOT, "%s: root=%d is not a rank of the communicator (0..%d)", function, root,
                    shape.size - 1));
  return false;
}

bool checkOp(Request* r, const char* function, MPI_Op op, alloyRedOp_t* out) {
  if (op == MPI_OP_NULL) {
    r->reject(problem(MPI_ERR_OP, "%s: op is MPI_OP_NULL", function));
    return false;
  }
  if (!mapOp(op, out))
    r->rejectOnGpu(problem(MPI_ERR_OP, "%s: op is not one the GPU engine performs (MPI_SUM, MPI_PROD, MPI_MIN, "
                                       "MPI_MAX)", function));
  return true;
}

bool checkSignatures(Request* r, const char* function, size_t sendBytes, size_t recvBytes, const char* what) {
  if (sendBytes == recvBytes) return true;
  r->reject(problem(MPI_ERR_TYPE, "%s: %s: %zu bytes sent but %zu bytes expected (sendcount * size of sendtype must "
                                  "equal recvcount * size of recvtype)", function, what, sendBytes, recvBytes));
  return false;
}

}  // namespace alloy_mpix
