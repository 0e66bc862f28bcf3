// The two datatype families whose kernels the direct engine compiles in separate files (type_family.h,
// type_dispatch.cuh): a datatype's family and the C++ type behind it agree for every datatype, so that no
// launch falls between the files (it would fail as an invalid value on the GPU).
#include <gtest/gtest.h>

#include "type_dispatch.cuh"
#include "type_family.h"

namespace {

using alloy::TypeFamily;

TEST(TypeFamily, EveryDatatypeRunsInTheFilesOfItsFamily) {
  for (int t = 0; t < alloyNumTypes; ++t) {
    const auto type = static_cast<alloyDataType_t>(t);
    int integerRuns = 0, floatingRuns = 0;
    const cudaError_t asInteger =
        alloy::withTypeOf<TypeFamily::Integer>(type, [&](auto) { ++integerRuns; return cudaSuccess; });
    const cudaError_t asFloating =
        alloy::withTypeOf<TypeFamily::Floating>(type, [&](auto) { ++floatingRuns; return cudaSuccess; });
    const bool integer = alloy::familyOf(type) == TypeFamily::Integer;
    EXPECT_EQ(asInteger, integer ? cudaSuccess : cudaErrorInvalidValue) << "datatype " << t;
    EXPECT_EQ(asFloating, integer ? cudaErrorInvalidValue : cudaSuccess) << "datatype " << t;
    EXPECT_EQ(integerRuns + floatingRuns, 1) << "datatype " << t << " must run in exactly one family";
  }
}

TEST(TypeFamily, NoFamilyTakesAnInvalidDatatype) {
  const auto invalid = static_cast<alloyDataType_t>(alloyNumTypes);
  auto never = [](auto) { return cudaSuccess; };
  EXPECT_EQ(alloy::withTypeOf<TypeFamily::Integer>(invalid, never), cudaErrorInvalidValue);
  EXPECT_EQ(alloy::withTypeOf<TypeFamily::Floating>(invalid, never), cudaErrorInvalidValue);
}

}  // namespace
