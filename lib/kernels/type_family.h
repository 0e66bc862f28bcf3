// The two families of datatypes whose kernels compile in separate files (direct_protocols.h): a kernel's
// instantiations for all twelve datatypes in one file made that file the build's longest step.
#pragma once

#include "alloy.h"

namespace alloy {

enum class TypeFamily { Integer, Floating };

// The family of `type`; Floating for a value that names no type (its launch then fails as invalid).
inline TypeFamily familyOf(alloyDataType_t type) {
  switch (type) {
    case alloyInt8:
    case alloyUint8:
    case alloyInt32:
    case alloyUint32:
    case alloyInt64:
    case alloyUint64: return TypeFamily::Integer;
    default: return TypeFamily::Floating;
  }
}

}  // namespace alloy
