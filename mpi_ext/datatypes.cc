#include "datatypes.h"

#include <vector>

namespace alloy_mpix {
namespace {

enum class Kind { Signed, Unsigned, Float };

struct Predefined {
  MPI_Datatype type;
  Kind kind;
};

// The predefined types a reduction may take, by kind; the width comes from MPI_Type_size, so that
// MPI_LONG or MPI_INTEGER map right whatever the platform's sizes are. Types of a width Alloy does not
// reduce (16-bit integers, long double) are listed too and turned away by widthType below.
const std::vector<Predefined>& predefinedTypes() {
  static const std::vector<Predefined> table = {
      {MPI_CHAR, Kind::Signed},          {MPI_SIGNED_CHAR, Kind::Signed},   {MPI_INT8_T, Kind::Signed},
      {MPI_SHORT, Kind::Signed},         {MPI_INT16_T, Kind::Signed},       {MPI_INT, Kind::Signed},
      {MPI_INT32_T, Kind::Signed},       {MPI_LONG, Kind::Signed},          {MPI_LONG_LONG, Kind::Signed},
      {MPI_INT64_T, Kind::Signed},       {MPI_AINT, Kind::Signed},          {MPI_OFFSET, Kind::Signed},
      {MPI_COUNT, Kind::Signed},         {MPI_INTEGER, Kind::Signed},       {MPI_INTEGER1, Kind::Signed},
      {MPI_INTEGER2, Kind::Signed},      {MPI_INTEGER4, Kind::Signed},      {MPI_INTEGER8, Kind::Signed},
      {MPI_BYTE, Kind::Unsigned},        {MPI_UNSIGNED_CHAR, Kind::Unsigned}, {MPI_UINT8_T, Kind::Unsigned},
      {MPI_UNSIGNED_SHORT, Kind::Unsigned}, {MPI_UINT16_T, Kind::Unsigned}, {MPI_UNSIGNED, Kind::Unsigned},
      {MPI_UINT32_T, Kind::Unsigned},    {MPI_UNSIGNED_LONG, Kind::Unsigned},
      {MPI_UNSIGNED_LONG_LONG, Kind::Unsigned}, {MPI_UINT64_T, Kind::Unsigned},
      {MPI_FLOAT, Kind::Float},          {MPI_DOUBLE, Kind::Float},         {MPI_LONG_DOUBLE, Kind::Float},
      {MPI_REAL, Kind::Float},           {MPI_DOUBLE_PRECISION, Kind::Float}, {MPI_REAL4, Kind::Float},
      {MPI_REAL8, Kind::Float},
  };
  return table;
}

bool widthType(Kind kind, MPI_Count size, alloyDataType_t* out) {
  switch (size) {
    case 1:
      if (kind == Kind::Float) return false;
      *out = kind == Kind::Signed ? alloyInt8 : alloyUint8;
      return true;
    case 4:
      *out = kind == Kind::Signed ? alloyInt32 : kind == Kind::Unsigned ? alloyUint32 : alloyFloat32;
      return true;
    case 8:
      *out = kind == Kind::Signed ? alloyInt64 : kind == Kind::Unsigned ? alloyUint64 : alloyFloat64;
      return true;
    default:
      return false;
  }
}

// Whether one element of `type` is its size in bytes laid out in order from its lower bound with no gap
// and no byte sent twice: what the GPU engine needs to move it as plain bytes. Size, extent and bounds
// alone cannot tell (an indexed type with blocks in reverse order or overlapping has size == extent), so
// the type's construction is decoded. Constructors that only ever lay out whole elements in order are
// followed down to a named type; anything else is treated as not contiguous (the host path still takes
// it, through MPI).
bool inOrderWithoutGaps(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
      size != extent || lb != 0)
    return false;
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) return true;
  std::vector<int> ints(integers);
  std::vector<MPI_Aint> aints(addresses);
  std::vector<MPI_Datatype> bases(types);
  if (MPI_Type_get_contents(type, integers, addresses, types, ints.data(), aints.data(), bases.data()) != MPI_SUCCESS)
    return false;
  bool contiguous = false;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_RESIZED:  // lb 0 and extent == size were checked above
      contiguous = inOrderWithoutGaps(bases[0]);
      break;
    case MPI_COMBINER_VECTOR:  // count, blocklength, stride (in elements of the base)
      contiguous = (ints[0] <= 1 || ints[1] == ints[2]) && inOrderWithoutGaps(bases[0]);
      break;
    case MPI_COMBINER_HVECTOR: {  // count, blocklength; stride in bytes
      MPI_Count baseSize = 0;
      contiguous = MPI_Type_size_x(bases[0], &baseSize) == MPI_SUCCESS &&
                   (ints[0] <= 1 || aints[0] == static_cast<MPI_Aint>(ints[1] * baseSize)) &&
                   inOrderWithoutGaps(bases[0]);
      break;
    }
    default:
      break;
  }
  for (MPI_Datatype& base : bases) {
    int baseIntegers = 0, baseAddresses = 0, baseTypes = 0, baseCombiner = 0;
    MPI_Type_get_envelope(base, &baseIntegers, &baseAddresses, &baseTypes, &baseCombiner);
    if (baseCombiner != MPI_COMBINER_NAMED) MPI_Type_free(&base);  // get_contents handed out new handles
  }
  return contiguous;
}

// A datatype's description from MPI: eight queries of the MPI library and a name.
bool queryType(MPI_Datatype type, TypeInfo* info) {
  MPI_Count lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  if (MPI_Type_size_x(type, &info->size) != MPI_SUCCESS || MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent_x(type, &trueLb, &trueExtent) != MPI_SUCCESS)
    return false;
  info->extent = extent;
  info->contiguous = trueLb == 0 && trueExtent == info->size && inOrderWithoutGaps(type);
  char name[MPI_MAX_OBJECT_NAME] = "";
  int length = 0;
  MPI_Type_get_name(type, name, &length);
  info->name = length > 0 ? name : "a derived datatype";
  info->reducible = false;
  for (const Predefined& p : predefinedTypes()) {
    if (p.type == type) {
      info->reducible = widthType(p.kind, info->size, &info->alloyType);
      break;
    }
  }
  return true;
}

// The predefined types' descriptions, queried once (their handles and layouts are fixed for the
// process): every call describes one or two datatypes, and the queries cost a few tenths of a
// microsecond each time on the MPI layer's path.
class PredefinedDescriptions {
 public:
  PredefinedDescriptions() {
    const std::vector<Predefined>& types = predefinedTypes();
    described_.resize(types.size());
    for (size_t i = 0; i < types.size(); ++i) described_[i].valid = queryType(types[i].type, &described_[i].info);
  }
  // The description of type where it is a predefined one MPI could describe; nullptr otherwise.
  const TypeInfo* find(MPI_Datatype type) const {
    const std::vector<Predefined>& types = predefinedTypes();
    for (size_t i = 0; i < types.size(); ++i)
      if (types[i].type == type) return described_[i].valid ? &described_[i].info : nullptr;
    return nullptr;
  }

 private:
  struct Described {
    bool valid = false;
    TypeInfo info;
  };
  std::vector<Described> described_;
};

}  // namespace

bool describeType(MPI_Datatype type, TypeInfo* info) {
  if (type == MPI_DATATYPE_NULL) return false;
  static const PredefinedDescriptions predefined;  // after MPI_Init: the first call of a collective
  if (const TypeInfo* known = predefined.find(type)) {
    *info = *known;
    return true;
  }
  return queryType(type, info);
}

bool mapOp(MPI_Op op, alloyRedOp_t* out) {
  if (op == MPI_SUM) *out = alloySum;
  else if (op == MPI_PROD) *out = alloyProd;
  else if (op == MPI_MIN) *out = alloyMin;
  else if (op == MPI_MAX) *out = alloyMax;
  else return false;
  return true;
}

}  // namespace alloy_mpix
