// The narrow lines' kernels for the integer datatypes.
#include "direct_narrow_lines.cuh"

namespace alloy {
namespace direct {

const DirectKernels kNarrowLinesIntegerKernels = kernelsOf<LinesProtocol<NarrowLines>, TypeFamily::Integer>();

}  // namespace direct
}  // namespace alloy
