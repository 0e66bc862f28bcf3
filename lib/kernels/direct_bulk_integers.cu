// The bulk protocol's kernels for the integer datatypes.
#include "direct_bulk.cuh"

namespace alloy {
namespace direct {

const DirectKernels kBulkIntegerKernels = kernelsOf<BulkProtocol, TypeFamily::Integer>();

}  // namespace direct
}  // namespace alloy
