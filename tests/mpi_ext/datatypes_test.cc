// Which MPI datatypes the GPU engine may move as plain bytes. Each derived type's verdict is checked
// against what MPI itself does with it: a type is contiguous exactly when sending one element and
// receiving it as MPI_BYTEs gives the element's memory unchanged, in order.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "datatypes.h"

namespace {

// MPI's own answer: pack one element through a self-send into bytes and compare with its memory.
bool mpiMovesItAsBytes(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0;
  MPI_Type_size_x(type, &size);
  MPI_Type_get_extent_x(type, &lb, &extent);
  if (lb != 0 || size != extent) return false;
  std::vector<uint8_t> element(static_cast<size_t>(extent)), bytes(static_cast<size_t>(size), 0);
  std::iota(element.begin(), element.end(), uint8_t{1});
  MPI_Sendrecv(element.data(), 1, type, 0, 0, bytes.data(), static_cast<int>(size), MPI_BYTE, 0, 0, MPI_COMM_SELF,
               MPI_STATUS_IGNORE);
  return bytes == element;
}

struct Case {
  const char* name;
  MPI_Datatype type;
  bool contiguous;
};

TEST(MpixDatatypes, ContiguousExactlyWhenMpiMovesTheBytesInOrder) {
  std::vector<Case> cases;
  auto add = [&](const char* name, MPI_Datatype type, bool contiguous) {
    MPI_Type_commit(&type);
    cases.push_back({name, type, contiguous});
  };
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_INT, &t);
  add("contiguous(3, int)", t, true);
  MPI_Type_dup(MPI_DOUBLE, &t);
  add("dup(double)", t, true);
  MPI_Type_vector(4, 2, 2, MPI_FLOAT, &t);
  add("vector(4, 2, stride 2)", t, true);
  MPI_Type_vector(2, 1, 2, MPI_INT, &t);
  add("vector(2, 1, stride 2)", t, false);  // a gap: extent 12, size 8
  MPI_Type_create_hvector(3, 1, 4, MPI_INT, &t);
  add("hvector(3, 1, 4 bytes)", t, true);
  const int blocks2[2] = {1, 1}, reversed[2] = {1, 0};
  MPI_Type_indexed(2, blocks2, reversed, MPI_INT, &t);
  add("indexed, blocks reversed", t, false);
  const int blocks3[3] = {1, 1, 1}, overlapping[3] = {0, 0, 2};
  MPI_Type_indexed(3, blocks3, overlapping, MPI_INT, &t);
  add("indexed, a block twice", t, false);
  MPI_Datatype inner;
  MPI_Type_contiguous(2, MPI_INT, &inner);
  MPI_Type_contiguous(2, inner, &t);
  add("contiguous of contiguous", t, true);
  MPI_Type_free(&inner);

  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(mpiMovesItAsBytes(c.type), c.contiguous) << "the expectation itself disagrees with MPI";
    alloy_mpix::TypeInfo info;
    ASSERT_TRUE(alloy_mpix::describeType(c.type, &info));
    EXPECT_EQ(info.contiguous, c.contiguous);
    MPI_Type_free(&c.type);
  }
  alloy_mpix::TypeInfo info;
  ASSERT_TRUE(alloy_mpix::describeType(MPI_INT, &info));
  EXPECT_TRUE(info.contiguous);
  EXPECT_TRUE(info.reducible);
}

}  // namespace
