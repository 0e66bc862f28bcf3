// The narrow lines' kernels for the floating-point datatypes.
#include "direct_narrow_lines.cuh"

namespace alloy {
namespace direct {

const DirectKernels kNarrowLinesFloatingKernels = kernelsOf<LinesProtocol<NarrowLines>, TypeFamily::Floating>();

}  // namespace direct
}  // namespace alloy
