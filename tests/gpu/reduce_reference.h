// Host references for the reducing collectives: valid random inputs for every (datatype, operator),
// the expected result computed independently of the device (float64 for the float types, wrapping
// 64-bit arithmetic for the integers), and the comparison with a tolerance derived from the type and the
// rank count (integers, max and min compare exactly).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloy.h"

namespace alloytest {

constexpr alloyRedOp_t kAllOps[] = {alloySum, alloyProd, alloyMax, alloyMin, alloyAvg};
const char* opName(alloyRedOp_t op);

// count elements of type for operator op from stream: integers are any bits (sums and products wrap);
// floats are finite, of magnitude 1/16..16 (products: 0.75..1.5, so that they stay in range over 16
// ranks), with some zeros and both signs.
std::vector<uint8_t> reductionInput(alloyDataType_t type, alloyRedOp_t op, uint64_t stream, size_t count);

class ReferenceReduction {
 public:
  ReferenceReduction(alloyDataType_t type, alloyRedOp_t op, size_t count);
  // One rank's contribution (count elements); call once per rank.
  void add(const uint8_t* input);
  // Compares count elements of got with the reduction of everything added.
  ::testing::AssertionResult check(const uint8_t* got, const std::string& what) const;

 private:
  alloyDataType_t type_;
  alloyRedOp_t op_;
  size_t count_;
  int ranks_ = 0;
  std::vector<double> value_, magnitude_;  // float types: exact-ish result and the scale of its error
  std::vector<uint64_t> bits_;             // integer types: wrapped result
};

// Whether every rank of MPI_COMM_WORLD holds the same n bytes (compared through a 64-bit hash).
::testing::AssertionResult identicalOnAllRanks(const uint8_t* data, size_t n, const std::string& what);

}  // namespace alloytest
