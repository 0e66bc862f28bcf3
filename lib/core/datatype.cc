#include "datatype.h"

#include "error.h"

namespace alloy {
namespace {
struct TypeInfo {
  size_t size;
  const char* name;
};
// Indexed by alloyDataType_t (NCCL's numbering).
constexpr TypeInfo kTypes[alloyNumTypes] = {
    {1, "int8"},    {1, "uint8"},   {4, "int32"},    {4, "uint32"},     {8, "int64"},      {8, "uint64"},
    {2, "float16"}, {4, "float32"}, {8, "float64"},  {2, "bfloat16"},   {1, "float8e4m3"}, {1, "float8e5m2"}};
}  // namespace

size_t dataTypeSize(alloyDataType_t type) {
  return type >= 0 && type < alloyNumTypes ? kTypes[type].size : 0;
}

const char* dataTypeName(alloyDataType_t type) {
  return type >= 0 && type < alloyNumTypes ? kTypes[type].name : "invalid";
}

alloyResult_t checkDataType(alloyDataType_t type, const char* function) {
  if (dataTypeSize(type) == 0)
    return fail(alloyInvalidArgument, "%s: datatype %d is not an alloyDataType_t (expected 0..%d)", function,
                static_cast<int>(type), alloyNumTypes - 1);
  return alloySuccess;
}

}  // namespace alloy
