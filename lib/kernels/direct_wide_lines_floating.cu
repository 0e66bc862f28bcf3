// The wide lines' kernels for the floating-point datatypes.
#include "direct_wide_lines.cuh"

namespace alloy {
namespace direct {

const DirectKernels kWideLinesFloatingKernels = kernelsOf<LinesProtocol<WideLines>, TypeFamily::Floating>();

}  // namespace direct
}  // namespace alloy
