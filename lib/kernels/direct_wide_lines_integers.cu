// The wide lines' kernels for the integer datatypes.
#include "direct_wide_lines.cuh"

namespace alloy {
namespace direct {

const DirectKernels kWideLinesIntegerKernels = kernelsOf<LinesProtocol<WideLines>, TypeFamily::Integer>();

}  // namespace direct
}  // namespace alloy
