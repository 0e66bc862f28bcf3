#include "red_op_table.h"

#include <algorithm>

#include "datatype.h"
#include "error.h"

namespace alloy {
namespace nccl {
namespace {

bool builtIn(ncclRedOp_t op) { return op >= 0 && op < ncclNumOps; }

}  // namespace

long RedOpTable::indexOf(ncclRedOp_t op) const {
  const long index = static_cast<long>(op) - ncclNumOps;
  return index >= 0 && index < static_cast<long>(entries_.size()) && entries_[index].has_value() ? index : -1;
}

alloyResult_t RedOpTable::add(const PreMulSumOp& entry, ncclRedOp_t* op, const char* function) {
  const auto free = std::find_if(entries_.begin(), entries_.end(),
                                 [](const std::optional<PreMulSumOp>& e) { return !e.has_value(); });
  const size_t index = static_cast<size_t>(free - entries_.begin());
  // ncclRedOp_t is an int: past ncclMaxRedOp the value would wrap.
  if (index > static_cast<size_t>(ncclMaxRedOp - ncclNumOps))
    return fail(alloyInvalidUsage, "%s: the communicator holds %zu operators, as many as ncclRedOp_t can number; "
                "destroy unused ones with ncclRedOpDestroy", function, index);
  if (free == entries_.end()) entries_.push_back(entry);
  else *free = entry;
  *op = static_cast<ncclRedOp_t>(ncclNumOps + static_cast<int>(index));
  return alloySuccess;
}

alloyResult_t RedOpTable::remove(ncclRedOp_t op, const char* function) {
  if (builtIn(op))
    return fail(alloyInvalidArgument, "%s: op %d is a built-in operator; only operators made by "
                "ncclRedOpCreatePreMulSum can be destroyed", function, static_cast<int>(op));
  const long index = indexOf(op);
  if (index < 0)
    return fail(alloyInvalidArgument, "%s: op %d is no operator of this communicator (ncclRedOpCreatePreMulSum made "
                "none of that value on it, or it was destroyed already)", function, static_cast<int>(op));
  entries_[index].reset();
  return alloySuccess;
}

alloyResult_t RedOpTable::resolve(ncclRedOp_t op, ncclDataType_t datatype, const char* function,
                                  ResolvedOp* out) const {
  if (builtIn(op)) {
    *out = ResolvedOp{static_cast<alloyRedOp_t>(op), nullptr};
    return alloySuccess;
  }
  const long index = indexOf(op);
  if (index < 0)
    return fail(alloyInvalidArgument, "%s: op is %d; expected a built-in operator (ncclSum .. ncclAvg) or one that "
                "ncclRedOpCreatePreMulSum made on this communicator and that is not destroyed", function,
                static_cast<int>(op));
  const PreMulSumOp& entry = *entries_[index];
  if (entry.datatype != datatype)
    return fail(alloyInvalidArgument, "%s: op %d was made by ncclRedOpCreatePreMulSum for datatype %s; this call's "
                "datatype is %s (%d): the operator serves only its own datatype", function, static_cast<int>(op),
                dataTypeName(static_cast<alloyDataType_t>(entry.datatype)),
                dataTypeName(static_cast<alloyDataType_t>(datatype)), static_cast<int>(datatype));
  *out = ResolvedOp{alloySum, &entry.scalar};
  return alloySuccess;
}

}  // namespace nccl
}  // namespace alloy
