// The operators of one communicator that ncclRedOpCreatePreMulSum made: operator ncclNumOps + i is entry
// i, as NCCL numbers them (values mean nothing on another communicator). A creation takes the lowest free
// entry, so a program that makes and destroys an operator around every call, as PyTorch does, keeps
// reusing one. Like the rest of a communicator, it is used by one thread at a time.
#pragma once

#include <nccl.h>

#include <optional>
#include <vector>

#include "alloy.h"
#include "scale_kernel.h"

namespace alloy {
namespace nccl {

struct PreMulSumOp {
  ncclDataType_t datatype;  // the only datatype it serves
  PreMulScalar scalar;
};

// An operator as Alloy's reducing collectives take it (reductions.h): a built-in operator has no scalar;
// a PreMulSum is alloySum of the inputs scaled by this rank's scalar.
struct ResolvedOp {
  alloyRedOp_t op;
  const PreMulScalar* scalar;  // NULL, or the table's entry: valid until the table next changes
};

class RedOpTable {
 public:
  // *op receives the new operator; untouched on failure.
  alloyResult_t add(const PreMulSumOp& entry, ncclRedOp_t* op, const char* function);
  // Frees the operator; a built-in one, one never made here or one destroyed already is an error.
  alloyResult_t remove(ncclRedOp_t op, const char* function);
  // The operator of a reduction of datatype: a built-in one, or an entry made for that datatype.
  alloyResult_t resolve(ncclRedOp_t op, ncclDataType_t datatype, const char* function, ResolvedOp* out) const;

 private:
  // The index of op's entry; -1 where op names none (built-in, out of range, or destroyed).
  long indexOf(ncclRedOp_t op) const;

  std::vector<std::optional<PreMulSumOp>> entries_;
};

}  // namespace nccl
}  // namespace alloy
