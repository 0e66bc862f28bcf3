// The bulk protocol's kernels for the floating-point datatypes.
#include "direct_bulk.cuh"

namespace alloy {
namespace direct {

const DirectKernels kBulkFloatingKernels = kernelsOf<BulkProtocol, TypeFamily::Floating>();

}  // namespace direct
}  // namespace alloy
