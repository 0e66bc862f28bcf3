// Sizes and names of alloyDataType_t and alloyRedOp_t values, and their validation.
#pragma once

#include <cstddef>

#include "alloy.h"

namespace alloy {

// 0 for a value outside the enumeration.
size_t dataTypeSize(alloyDataType_t type);
const char* dataTypeName(alloyDataType_t type);
// alloyInvalidArgument naming the function and argument when type is not a value of alloyDataType_t.
alloyResult_t checkDataType(alloyDataType_t type, const char* function);

}  // namespace alloy
