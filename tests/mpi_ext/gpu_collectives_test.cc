// The other MPIX functions on device memory against their MPI counterparts on host copies of the same
// data: alltoall, allgather and bcast (any contiguous type, moved as bytes), and the reductions over
// every predefined type and operation the GPU engine reduces. Reduction inputs are small integers, so
// every order of summation gives the same bits and the comparison stays byte-exact.
#include <cstring>

#include "gpu_mpix_util.h"

namespace mpixtest {
namespace {

class MpixCollectives : public MpixGpu {
 protected:
  std::vector<uint8_t> randomBytes(uint64_t tag, size_t bytes) {
    return alloytest::genVector(alloytest::streamOf(seed, tag, rank), bytes);
  }
};

TEST_F(MpixCollectives, AlltoallAllgatherBcast) {
  for (int count : {1, 3, 1000, 65537}) {
    const std::vector<uint8_t> send = randomBytes(count, count * n * sizeof(float));
    const std::vector<uint8_t> poison(count * n * sizeof(float), alloytest::kPoison);
    const std::string at = " of " + std::to_string(count) + " floats";
    expectSameAsMpi(send, poison,
        [&](void* s, void* r) { return MPIX_Alltoall_cuda(s, count, MPI_FLOAT, r, count, MPI_FLOAT, comm, stream); },
        [&](void* s, void* r) { return MPI_Alltoall(s, count, MPI_FLOAT, r, count, MPI_FLOAT, comm); }, "alltoall" + at);
    expectSameAsMpi({}, send,
        [&](void*, void* r) {
          return MPIX_Alltoall_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_FLOAT, comm, stream);
        },
        [&](void*, void* r) { return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_FLOAT, comm); },
        "alltoall in place" + at);
    const std::vector<uint8_t> block(send.begin(), send.begin() + count * sizeof(float));
    expectSameAsMpi(block, poison,
        [&](void* s, void* r) { return MPIX_Allgather_cuda(s, count * 4, MPI_BYTE, r, count, MPI_FLOAT, comm, stream); },
        [&](void* s, void* r) { return MPI_Allgather(s, count * 4, MPI_BYTE, r, count, MPI_FLOAT, comm); },
        "allgather" + at);
    expectSameAsMpi({}, send,
        [&](void*, void* r) {
          return MPIX_Allgather_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_FLOAT, comm, stream);
        },
        [&](void*, void* r) { return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_FLOAT, comm); },
        "allgather in place" + at);
    for (int root = 0; root < n; ++root)
      expectSameAsMpi({}, send,
          [&](void*, void* b) { return MPIX_Bcast_cuda(b, count * n, MPI_FLOAT, root, comm, stream); },
          [&](void*, void* b) { return MPI_Bcast(b, count * n, MPI_FLOAT, root, comm); },
          "bcast from " + std::to_string(root) + at);
  }
}

struct Reducible {
  MPI_Datatype type;
  const char* name;
  char kind;  // 'i' signed, 'u' unsigned, 'f' floating point
};

#define REDUCIBLE(t, k) Reducible{t, #t, k}
const Reducible kReducible[] = {
    REDUCIBLE(MPI_INT8_T, 'i'),   REDUCIBLE(MPI_SIGNED_CHAR, 'i'), REDUCIBLE(MPI_CHAR, 'i'),
    REDUCIBLE(MPI_UINT8_T, 'u'),  REDUCIBLE(MPI_UNSIGNED_CHAR, 'u'), REDUCIBLE(MPI_BYTE, 'u'),
    REDUCIBLE(MPI_INT, 'i'),      REDUCIBLE(MPI_INT32_T, 'i'),     REDUCIBLE(MPI_INTEGER, 'i'),
    REDUCIBLE(MPI_UNSIGNED, 'u'), REDUCIBLE(MPI_UINT32_T, 'u'),    REDUCIBLE(MPI_LONG, 'i'),
    REDUCIBLE(MPI_INT64_T, 'i'),  REDUCIBLE(MPI_LONG_LONG, 'i'),   REDUCIBLE(MPI_UNSIGNED_LONG, 'u'),
    REDUCIBLE(MPI_UINT64_T, 'u'), REDUCIBLE(MPI_FLOAT, 'f'),       REDUCIBLE(MPI_REAL, 'f'),
    REDUCIBLE(MPI_DOUBLE, 'f'),   REDUCIBLE(MPI_DOUBLE_PRECISION, 'f'),
};
#undef REDUCIBLE

// count elements of small integer values in [-2, 2] ([0, 3] unsigned), stored as the type.
std::vector<uint8_t> smallValues(const Reducible& t, size_t count, uint64_t stream) {
  int size = 0;
  MPI_Type_size(t.type, &size);
  std::vector<uint8_t> out(count * size);
  alloytest::Rng rng(stream);
  for (size_t i = 0; i < count; ++i) {
    const long long v = t.kind == 'u' ? static_cast<long long>(rng.range(0, 3)) : static_cast<long long>(rng.range(0, 4)) - 2;
    uint8_t* at = out.data() + i * size;
    if (t.kind == 'f' && size == 4) { const float f = static_cast<float>(v); std::memcpy(at, &f, 4); }
    else if (t.kind == 'f') { const double d = static_cast<double>(v); std::memcpy(at, &d, 8); }
    else std::memcpy(at, &v, size);  // little-endian: the low bytes hold the value
  }
  return out;
}

TEST_F(MpixCollectives, ReductionsOverTypesAndOps) {
  const struct { MPI_Op op; const char* name; } ops[] = {
      {MPI_SUM, "MPI_SUM"}, {MPI_PROD, "MPI_PROD"}, {MPI_MIN, "MPI_MIN"}, {MPI_MAX, "MPI_MAX"}};
  uint64_t tag = 1;
  for (const Reducible& t : kReducible) {
    int size = 0;
    MPI_Type_size(t.type, &size);
    for (const auto& o : ops) {
      for (int count : {1, 1023, 4096 * n + 3}) {
        const std::string what = std::string(t.name) + " " + o.name + " count " + std::to_string(count);
        const std::vector<uint8_t> send = smallValues(t, count, alloytest::streamOf(seed, tag++, rank));
        const std::vector<uint8_t> poison(send.size(), alloytest::kPoison);
        expectSameAsMpi(send, poison,
            [&](void* s, void* r) { return MPIX_Allreduce_cuda(s, r, count, t.type, o.op, comm, stream); },
            [&](void* s, void* r) { return MPI_Allreduce(s, r, count, t.type, o.op, comm); }, "allreduce " + what);
        expectSameAsMpi({}, send,
            [&](void*, void* r) { return MPIX_Allreduce_cuda(MPI_IN_PLACE, r, count, t.type, o.op, comm, stream); },
            [&](void*, void* r) { return MPI_Allreduce(MPI_IN_PLACE, r, count, t.type, o.op, comm); },
            "allreduce in place " + what);
        const int root = static_cast<int>(tag % n);
        expectSameAsMpi(send, poison,
            [&](void* s, void* r) { return MPIX_Reduce_cuda(s, r, count, t.type, o.op, root, comm, stream); },
            [&](void* s, void* r) { return MPI_Reduce(s, r, count, t.type, o.op, root, comm); }, "reduce " + what);
        const int block = count / n;
        if (block == 0) continue;
        const std::vector<uint8_t> blockPoison(block * size, alloytest::kPoison);
        expectSameAsMpi(send, blockPoison,
            [&](void* s, void* r) { return MPIX_Reduce_scatter_block_cuda(s, r, block, t.type, o.op, comm, stream); },
            [&](void* s, void* r) { return MPI_Reduce_scatter_block(s, r, block, t.type, o.op, comm); },
            "reduce_scatter_block " + what);
        expectSameAsMpi({}, std::vector<uint8_t>(send.begin(), send.begin() + block * n * size),
            [&](void*, void* r) {
              return MPIX_Reduce_scatter_block_cuda(MPI_IN_PLACE, r, block, t.type, o.op, comm, stream);
            },
            [&](void*, void* r) { return MPI_Reduce_scatter_block(MPI_IN_PLACE, r, block, t.type, o.op, comm); },
            "reduce_scatter_block in place " + what);
      }
    }
  }
}

// Every MPI_IN_PLACE path on GPU memory (alltoall, allgather, allreduce, reduce at the root,
// reduce_scatter_block, alltoallv), for a 1-, a 4- and an 8-byte type, with blocks per peer of one
// element, around the low-latency chunk (32 KiB), and at and over the low-latency limit (256 KiB).
// The engine reads an in-place alltoall(v) or reduce_scatter_block input from a stream-ordered copy of
// the buffer: an input not yet on the device when that copy runs shows here. Small enough to repeat
// (scripts/gpu-check.sh stress).
TEST_F(MpixCollectives, InPlacePaths) {
  const Reducible types[] = {Reducible{MPI_UINT8_T, "MPI_UINT8_T", 'u'}, Reducible{MPI_INT, "MPI_INT", 'i'},
                             Reducible{MPI_DOUBLE, "MPI_DOUBLE", 'f'}};
  const int root = n - 1;
  uint64_t tag = 1;
  for (const Reducible& t : types) {
    int size = 0;
    MPI_Type_size(t.type, &size);
    const int chunk = (32 << 10) / size, limit = (256 << 10) / size;
    for (int count : {1, chunk - 1, chunk + 1, limit, limit + 1}) {
      const std::string what = std::string(t.name) + " count " + std::to_string(count);
      const size_t all = static_cast<size_t>(count) * n * size;
      expectSameAsMpi({}, randomBytes(tag++, all),
          [&](void*, void* r) { return MPIX_Alltoall_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, t.type, comm, stream); },
          [&](void*, void* r) { return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, t.type, comm); },
          "alltoall in place " + what);
      expectSameAsMpi({}, randomBytes(tag++, all),
          [&](void*, void* r) { return MPIX_Allgather_cuda(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, t.type, comm, stream); },
          [&](void*, void* r) { return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, t.type, comm); },
          "allgather in place " + what);
      const std::vector<uint8_t> values = smallValues(t, count, alloytest::streamOf(seed, tag++, rank));
      expectSameAsMpi({}, values,
          [&](void*, void* r) { return MPIX_Allreduce_cuda(MPI_IN_PLACE, r, count, t.type, MPI_SUM, comm, stream); },
          [&](void*, void* r) { return MPI_Allreduce(MPI_IN_PLACE, r, count, t.type, MPI_SUM, comm); },
          "allreduce in place " + what);
      // In place at the root; the other ranks send from their own buffer (their recvbuf stays untouched).
      const bool atRoot = rank == root;
      expectSameAsMpi(atRoot ? std::vector<uint8_t>() : values,
          atRoot ? values : std::vector<uint8_t>(values.size(), alloytest::kPoison),
          [&](void* s, void* r) {
            return MPIX_Reduce_cuda(atRoot ? MPI_IN_PLACE : s, r, count, t.type, MPI_MAX, root, comm, stream);
          },
          [&](void* s, void* r) { return MPI_Reduce(atRoot ? MPI_IN_PLACE : s, r, count, t.type, MPI_MAX, root, comm); },
          "reduce in place at the root " + what);
      const std::vector<uint8_t> blocks = smallValues(t, static_cast<size_t>(count) * n, alloytest::streamOf(seed, tag++, rank));
      expectSameAsMpi({}, blocks,
          [&](void*, void* r) { return MPIX_Reduce_scatter_block_cuda(MPI_IN_PLACE, r, count, t.type, MPI_SUM, comm, stream); },
          [&](void*, void* r) { return MPI_Reduce_scatter_block(MPI_IN_PLACE, r, count, t.type, MPI_SUM, comm); },
          "reduce_scatter_block in place " + what);
      // alltoallv in place: counts symmetric (rank r's count for p equals rank p's for r), some zero.
      std::vector<int> counts(n);
      for (int p = 0; p < n; ++p) counts[p] = (rank + p) % 3 == 2 ? 0 : count + (rank + p) % 2;
      int total = 0;
      const std::vector<int> displs = displacementsOf(counts, 1, &total);
      expectSameAsMpi({}, randomBytes(tag++, static_cast<size_t>(total) * size),
          [&](void*, void* r) {
            return MPIX_Alltoallv_cuda(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, r, counts.data(), displs.data(),
                                       t.type, comm, stream);
          },
          [&](void*, void* r) {
            return MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, r, counts.data(), displs.data(),
                                 t.type, comm);
          },
          "alltoallv in place " + what);
    }
  }
}

// What the GPU engine cannot reduce is refused (the same call on host memory goes to MPI and works).
TEST_F(MpixCollectives, UnsupportedReductionsAreRefused) {
  void* d = upload(std::vector<uint8_t>(64, 0));
  void* e = upload(std::vector<uint8_t>(64, 0));
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(d, e, 4, MPI_INT, MPI_BAND, comm, stream), MPI_ERR_OP, "MPI_SUM, MPI_PROD");
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(d, e, 4, MPI_SHORT, MPI_SUM, comm, stream), MPI_ERR_TYPE,
                    "MPI_SHORT) cannot be reduced on the GPU");
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(d, e, 2, MPI_2INT, MPI_SUM, comm, stream), MPI_ERR_TYPE, "cannot be reduced");
}

}  // namespace
}  // namespace mpixtest
