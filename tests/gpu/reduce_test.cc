// alloyAllReduce, alloyReduce, alloyReduceScatter: every datatype with every operator, sizes from 0 to
// many ring turns on both sides of the one-shot threshold and with each algorithm forced, through the
// direct engine and over the rings, at the edges of the direct engine's areas, unaligned buffers, in
// place, roots other than 0, and 100 operations back to back. Results are checked against a
// host reference (reduce_reference.h); allreduce results must also be bit-identical on every rank.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "algorithm.h"
#include "comm.h"
#include "gpu_test_util.h"
#include "local_transport.h"
#include "reduce_reference.h"

namespace alloytest {
namespace {

enum class Coll { AllReduce, Reduce, ReduceScatter };

struct Shape {
  size_t count;  // the call's count argument
  alloyDataType_t type;
  alloyRedOp_t op;
  size_t sendOffset = 0;  // bytes into the send allocation (in place: into the shared allocation)
  size_t recvOffset = 0;
  bool inPlace = false;
  int root = 0;
};

class OneShotMax : public ScopedEnv {
 public:
  explicit OneShotMax(size_t bytes) : ScopedEnv("ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES", bytes) {}
};

constexpr size_t kNever = size_t{1} << 62;  // one-shot for every size

// ALLOY_DIRECT_MAX_BYTES: 0 keeps every reduction on the rings, kNever leaves it to the staging areas.
class DirectMax : public ScopedEnv {
 public:
  explicit DirectMax(size_t bytes) : ScopedEnv("ALLOY_DIRECT_MAX_BYTES", bytes) {}
};
// ALLOY_DIRECT_LL_MAX_BYTES: kNever sends everything the direct engine takes as low-latency lines, 0 none.
class DirectLowLatencyMax : public ScopedEnv {
 public:
  explicit DirectLowLatencyMax(size_t bytes) : ScopedEnv("ALLOY_DIRECT_LL_MAX_BYTES", bytes) {}
};
// ALLOY_DIRECT_LL128_MAX_BYTES: the same for the 128-byte lines, where the links carry them.
class DirectWideLinesMax : public ScopedEnv {
 public:
  explicit DirectWideLinesMax(size_t bytes) : ScopedEnv("ALLOY_DIRECT_LL128_MAX_BYTES", bytes) {}
};
enum class Engine { DirectLines, DirectWideLines, DirectBulk, Rings };
const char* engineName(Engine e) {
  const char* names[] = {"direct lines", "direct wide lines", "direct bulk", "rings"};
  return names[static_cast<int>(e)];
}
// Sends reductions to one engine and protocol (the direct engine's where its areas hold the size).
class EngineForced {
 public:
  explicit EngineForced(Engine e)
      : direct_(e == Engine::Rings ? 0 : kNever),
        lines_(e == Engine::DirectLines ? kNever : 0),
        wide_(e == Engine::DirectWideLines ? kNever : 0) {}

 private:
  DirectMax direct_;
  DirectLowLatencyMax lines_;
  DirectWideLinesMax wide_;
};

class Reductions : public CommTest {
 protected:
  std::string describe(Coll coll, const Shape& s) const {
    const char* names[] = {"allreduce", "reduce", "reducescatter"};
    return std::string(names[static_cast<int>(coll)]) + " count " + std::to_string(s.count) + " " +
           typeName(s.type) + " " + opName(s.op) + (s.inPlace ? " in place" : "") + " offsets " +
           std::to_string(s.sendOffset) + "/" + std::to_string(s.recvOffset) + " root " + std::to_string(s.root);
  }

  // One call with fresh data (labelled tag): poisoned destination, host reference, guards around the
  // result untouched, and for allreduce the same bits on every rank.
  void run(Coll coll, const Shape& s, uint64_t tag) {
    SCOPED_TRACE(describe(coll, s));
    const size_t es = typeSize(s.type), n = static_cast<size_t>(nranks), me = static_cast<size_t>(rank);
    const size_t inCount = coll == Coll::ReduceScatter ? s.count * n : s.count;
    const size_t inBytes = inCount * es, outBytes = s.count * es;
    // Where this rank's result lands inside the input when in place (NCCL's definitions).
    const size_t inPlaceOut = coll == Coll::ReduceScatter ? me * outBytes : 0;

    std::vector<std::vector<uint8_t>> inputs(n);
    for (size_t p = 0; p < n; ++p) inputs[p] = reductionInput(s.type, s.op, streamOf(seed, tag, p), inCount);

    DeviceBuffer send(s.inPlace ? 0 : s.sendOffset + inBytes);
    DeviceBuffer recv((s.inPlace ? s.sendOffset + inBytes : s.recvOffset + outBytes) + kGuard);
    ASSERT_TRUE(allRanksOk((s.inPlace || send.ok()) && recv.ok()));
    recv.poison(stream);
    uint8_t* sendPtr;
    uint8_t* recvPtr;
    if (s.inPlace) {
      recv.upload(inputs[me], s.sendOffset, stream);
      sendPtr = recv.get() + s.sendOffset;
      recvPtr = sendPtr + inPlaceOut;
    } else {
      send.poison(stream);
      send.upload(inputs[me], s.sendOffset, stream);
      sendPtr = send.get() + s.sendOffset;
      recvPtr = recv.get() + s.recvOffset;
    }

    alloyResult_t r = alloySuccess;
    switch (coll) {
      case Coll::AllReduce: r = alloyAllReduce(sendPtr, recvPtr, s.count, s.type, s.op, comm, stream); break;
      case Coll::Reduce: r = alloyReduce(sendPtr, recvPtr, s.count, s.type, s.op, s.root, comm, stream); break;
      case Coll::ReduceScatter: r = alloyReduceScatter(sendPtr, recvPtr, s.count, s.type, s.op, comm, stream); break;
    }
    EXPECT_EQ(r, alloySuccess) << alloyFailure("the collective", r);
    const std::vector<uint8_t> got = recv.download(stream);
    const uint8_t* result = got.data() + (recvPtr - recv.get());
    const size_t resultStart = static_cast<size_t>(recvPtr - recv.get());

    const bool hasResult = coll != Coll::Reduce || rank == s.root;
    if (hasResult) {
      ReferenceReduction reference(s.type, s.op, s.count);
      const size_t part = coll == Coll::ReduceScatter ? me * outBytes : 0;
      for (size_t p = 0; p < n; ++p) reference.add(inputs[p].data() + part);
      EXPECT_TRUE(reference.check(result, "recvbuff"));
    }
    // Everything around the result keeps what was there: poison, or (in place) this rank's input.
    std::vector<uint8_t> around(got.size(), kPoison);
    if (s.inPlace) std::copy(inputs[me].begin(), inputs[me].end(), around.begin() + s.sendOffset);
    const size_t resultBytes = hasResult ? outBytes : 0;
    if (!s.inPlace && !hasResult) {
      // Off the root, reduce leaves recvbuff undefined (NCCL); Alloy does not touch it.
      EXPECT_TRUE(allPoison(got.data(), got.size(), "recvbuff off the root"));
    } else {
      EXPECT_TRUE(bytesEqual(around.data(), got.data(), resultStart, "bytes before the result"));
      EXPECT_TRUE(bytesEqual(around.data() + resultStart + resultBytes, got.data() + resultStart + resultBytes,
                             got.size() - resultStart - resultBytes, "bytes after the result"));
    }
    if (coll == Coll::AllReduce) {
      EXPECT_TRUE(identicalOnAllRanks(result, outBytes, "allreduce result"));
    }
  }

  // Why this communicator never runs the direct engine, or NULL where it does: its areas are sized 0, or it
  // spans hosts (the engine serves the ranks of one host; its state is indexed by local rank, and the
  // collectives between hosts take their own schedules).
  const char* withoutDirectEngine() const {
    if (comm->topology.spansHosts()) return "the direct engine runs inside one host; this communicator spans hosts";
    return directAreaBytes() == 0 ? "no direct engine (ALLOY_DIRECT_BYTES=0)" : nullptr;
  }
  // Bytes of one of the direct engine's staging areas for bulk stores (ALLOY_DIRECT_BYTES), or for lines.
  size_t directAreaBytes(bool lines = false) const {
    const alloy::DeviceComm& c = comm->local->deviceComm();
    return lines ? c.directLineAreaBytes : c.directAreaBytes;
  }
  // The most data bytes of one rank's slot when nranks slots share an area, per protocol.
  size_t directSlotDataBytes(Engine e) const {
    const size_t room = directAreaBytes(e != Engine::DirectBulk) / nranks;
    return e == Engine::DirectLines       ? room / 16 * alloy::kLlDataPerLine
           : e == Engine::DirectWideLines ? room / alloy::kLl128Bytes * alloy::kLl128DataBytes
                                          : room / 16 * 16;
  }
  // The operations block 0 of the direct engine has run on this rank (SignalLayout::directEpoch), after
  // the stream's work.
  uint64_t directOperations() {
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    uint64_t count = 0;
    const uint64_t* counter = comm->local->deviceComm().signals[rank] + alloy::SignalLayout::directEpoch(0);
    CUDA_EXPECT_OK(cudaMemcpy(&count, counter, sizeof count, cudaMemcpyDeviceToHost));
    return count;
  }
  // Whether the links of this host carry the 128-byte lines (else they go in bulk); says so when not.
  bool wideLinesHere() const {
    const bool here = comm->local->deviceComm().directWideLines != 0;
    if (!here && rank == 0) std::printf("[alloy] note: this host's GPU links do not carry 128-byte lines\n");
    return here;
  }
  // The direct engine's protocols that this host runs.
  std::vector<Engine> directProtocols() const {
    std::vector<Engine> all{Engine::DirectLines, Engine::DirectBulk};
    if (wideLinesHere()) all.insert(all.begin() + 1, Engine::DirectWideLines);
    return all;
  }
  // Parts larger than an area run in windows through its halves (direct_kernel.h). On a communicator with
  // 1 MiB areas (withSmallDirectAreas) a window carries
  // 1 MiB / (2 nranks) of every part, so a few MB take many windows: parts 16 bytes over a full slot (the
  // last of three windows nearly empty), one and a half slots (three full windows) and over eight slots,
  // in bulk two-shot (allreduce), reduce-scatter or reduce (roots in turn), in place and not, at odd
  // offsets, in narrow types.
  void windowsThroughSmallAreas(Coll coll) {
    if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
    if (coll == Coll::Reduce && nranks < 3) GTEST_SKIP() << "a reduce goes by parts from 3 ranks on";
    constexpr size_t kArea = size_t{1} << 20;
    OneShotMax twoShot(0);
    DirectLowLatencyMax noLines(0);
    DirectWideLinesMax noWideLines(0);  // parts of a slot and 16 bytes would fit 128-byte lines
    ScopedEnv byParts("ALLOY_REDUCE_SCATTER_MIN_BYTES", 0);  // a reduce by parts at any size
    const size_t slot = kArea / nranks;  // a part of this many bytes still fits one area
    // Parts of the count: every rank's (allreduce), every rank's but the root's (reduce), one (reduce-scatter).
    const size_t parts = coll == Coll::AllReduce ? nranks : coll == Coll::Reduce ? nranks - 1 : 1;
    withSmallDirectAreas(kArea, [&] {
      uint64_t tag = 0;
      for (size_t partBytes : {slot + 16, slot + slot / 2, 8 * slot + 1000}) {
        const size_t perPart = partBytes / 4;  // 4-byte elements
        const size_t count = parts > 1 ? perPart * parts + 3 : perPart;
        Shape shapes[] = {{count, alloyInt32, alloySum}, {count, alloyInt32, alloyMax, 0, 0, true},
                          {count * 2, alloyBfloat16, alloyAvg, 2, 6}, {count * 4, alloyInt8, alloyMin, 3, 0, true}};
        for (Shape& s : shapes) {
          s.root = static_cast<int>(tag % nranks);  // reduce: every root in turn
          run(coll, s, ++tag);
        }
      }
    });
  }
};

class AllReduce : public Reductions {
 protected:
  // Runs body(parts) once per allreduce algorithm, each forced in turn through the direct engine (where
  // its areas hold the size) in 16-byte lines, 128-byte lines (where the links carry them) and bulk, and
  // over the rings: one-shot (parts = 1), then reduce-scatter + all-gather (parts = nranks); the bytes
  // per peer of a count are count * size / parts.
  template <typename Body>
  void forEachAlgorithm(Body body) {
    std::vector<Engine> engines = directProtocols();
    engines.push_back(Engine::Rings);
    for (const Engine engine : engines)
      for (const bool oneShot : {true, false}) {
        SCOPED_TRACE(std::string(engineName(engine)) + (oneShot ? " one-shot" : " reduce-scatter + all-gather"));
        EngineForced forced(engine);
        OneShotMax force(oneShot ? kNever : 0);
        body(oneShot ? size_t{1} : static_cast<size_t>(nranks));
      }
  }
};
class Reduce : public Reductions {
 protected:
  // Every datatype with every operator, 1001 elements, the root moving from rank to rank.
  void everyDatatypeAndOperator(uint64_t* tag) {
    for (alloyDataType_t type : kAllTypes)
      for (alloyRedOp_t op : kAllOps) {
        Shape s{1001, type, op};
        s.root = static_cast<int>(*tag % nranks);
        run(Coll::Reduce, s, ++*tag);
      }
  }
  // count elements to root three ways: float sum in place, int8 max at odd offsets, bfloat16 avg in place
  // at an offset.
  void inPlaceAndUnaligned(size_t count, int root, uint64_t* tag) {
    Shape a{count, alloyFloat32, alloySum, 0, 0, true};
    Shape b{count, alloyInt8, alloyMax, 3, 1};
    Shape c{count, alloyBfloat16, alloyAvg, 2, 6, true};
    for (Shape* s : {&a, &b, &c}) {
      s->root = root;
      run(Coll::Reduce, *s, ++*tag);
    }
  }
};
class ReduceScatter : public Reductions {};

TEST_F(AllReduce, EveryDatatypeAndOperator) {
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (alloyRedOp_t op : kAllOps)
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}, size_t{70001}}) run(Coll::AllReduce, {count, type, op}, ++tag);
}

TEST_F(AllReduce, EveryDatatypeAndOperatorEachAlgorithm) {
  uint64_t tag = 0;
  forEachAlgorithm([&](size_t) {
    for (alloyDataType_t type : kAllTypes)
      for (alloyRedOp_t op : kAllOps)
        for (size_t count : {size_t{1}, size_t{7}, size_t{1001}, size_t{70001}}) run(Coll::AllReduce, {count, type, op}, ++tag);
  });
}

// The direct engine takes a reduction when every rank's slot fits one staging area (lines take more
// bytes than their data, in areas of their own): at the largest such size and one element over it (which
// goes from one protocol to the next, and from bulk to the rings for one-shot, to windows for two-shot),
// for each algorithm, in place and not.
TEST_F(AllReduce, DirectAreaEdges) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  uint64_t tag = 0;
  for (const Engine engine : directProtocols())
    for (const bool oneShot : {true, false}) {
      SCOPED_TRACE(std::string(engineName(engine)) + (oneShot ? " one-shot" : " two-shot"));
      DirectLowLatencyMax lines(engine == Engine::DirectLines ? kNever : 0);
      DirectWideLinesMax wide(engine == Engine::DirectBulk ? 0 : kNever);
      OneShotMax force(oneShot ? kNever : 0);
      const size_t perRank = directSlotDataBytes(engine) / 4;  // int32 elements of a full slot
      const size_t fits = oneShot ? perRank : perRank * nranks;
      for (size_t count : {fits, fits + 1}) {
        run(Coll::AllReduce, {count, alloyInt32, alloySum}, ++tag);
        run(Coll::AllReduce, {count, alloyInt32, alloyMax, 4, 0, true}, ++tag);
      }
    }
}

TEST_F(AllReduce, WindowsThroughSmallAreas) { windowsThroughSmallAreas(Coll::AllReduce); }

// Zero, tiny, around the one-shot threshold, and large enough to turn every ring many times.
TEST_F(AllReduce, SizesAcrossTheThreshold) {
  const size_t threshold = alloy::directOneShotMaxBytes(nranks) / 4;  // in float32 elements
  const size_t counts[] = {0, 1, 3, 5, threshold - 1, threshold, threshold + 1, threshold + 7,
                           (size_t{16} << 20) / 4 + 3, (size_t{64} << 20) / 4 + 1};
  uint64_t tag = 0;
  for (size_t count : counts) run(Coll::AllReduce, {count, alloyFloat32, alloySum}, ++tag);
  for (size_t count : {size_t{5}, (size_t{64} << 20) / 4 + 1}) run(Coll::AllReduce, {count, alloyInt32, alloySum}, ++tag);
}

TEST_F(AllReduce, LargeWithEachAlgorithmForced) {
  const size_t counts[] = {(size_t{48} << 20) / 4 + 5};
  uint64_t tag = 0;
  {
    OneShotMax force(kNever);
    for (size_t count : counts) run(Coll::AllReduce, {count, alloyInt32, alloySum}, ++tag);
    run(Coll::AllReduce, {(size_t{8} << 20) + 3, alloyBfloat16, alloyAvg}, ++tag);
  }
  {
    OneShotMax force(0);
    for (size_t count : counts) run(Coll::AllReduce, {count, alloyInt32, alloySum}, ++tag);
    run(Coll::AllReduce, {(size_t{8} << 20) + 3, alloyBfloat16, alloyAvg}, ++tag);
  }
}

// Recursive doubling between hosts (allreduce_doubling.h), which by default runs only where the model
// expects it to be faster (several ranks per host, or dozens of hosts), forced at any host count: with 3
// hosts (or 3 ranks on uneven hosts) members hand their input in and take the result back. Every
// datatype with sum and max, sizes up to the one-shot limit (at most 256 KiB), in place and unaligned;
// the same bits on every rank. avg keeps the flat schedule.
TEST_F(AllReduce, RecursiveDoublingBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  ScopedEnv force("ALLOY_ALLREDUCE_DOUBLING", 1);
  const size_t limit = std::min(alloy::allreduceOneShotMaxBytes(nranks), size_t{256} << 10);  // kept quick
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (alloyRedOp_t op : {alloySum, alloyMax})
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}, limit / typeSize(type)}) run(Coll::AllReduce, {count, type, op}, ++tag);
  run(Coll::AllReduce, {size_t{1001}, alloyFloat32, alloySum, 0, 0, true}, ++tag);
  run(Coll::AllReduce, {size_t{30001}, alloyInt8, alloySum, 3, 0, true}, ++tag);
  run(Coll::AllReduce, {size_t{30001}, alloyFloat16, alloyProd, 2, 6}, ++tag);
  run(Coll::AllReduce, {size_t{1001}, alloyFloat64, alloyAvg, 8, 24}, ++tag);
}

TEST_F(AllReduce, InPlaceAndUnaligned) {
  uint64_t tag = 0;
  forEachAlgorithm([&](size_t) {
    for (size_t count : {size_t{1}, size_t{1001}, size_t{300001}}) {
      run(Coll::AllReduce, {count, alloyFloat32, alloySum, 0, 0, true}, ++tag);
      run(Coll::AllReduce, {count, alloyFloat32, alloyMax, 4, 4, true}, ++tag);
      run(Coll::AllReduce, {count, alloyInt8, alloySum, 3, 0, true}, ++tag);
      run(Coll::AllReduce, {count, alloyFloat32, alloySum, 4, 12}, ++tag);
      run(Coll::AllReduce, {count, alloyFloat16, alloyProd, 2, 6}, ++tag);
      run(Coll::AllReduce, {count, alloyUint8, alloyMin, 1, 3}, ++tag);
      run(Coll::AllReduce, {count, alloyFloat64, alloyAvg, 8, 24}, ++tag);
    }
  });
}

// Sizes per peer just under, at and just over every protocol boundary of the engine (pages, the
// low-latency chunk, the low-latency limit, the bulk slot; gpu_test_util.h boundarySizes), with each
// allreduce algorithm forced: one-shot sends the whole buffer to every peer, reduce-scatter + all-gather
// 1/n of it (so its counts are n times larger; the last case per boundary splits unevenly). int32 sums
// compare exactly; bfloat16 (2-byte elements) ends in partial 8-byte lines of the low-latency protocol.
// Small enough to repeat (scripts/gpu-check.sh stress).
TEST_F(AllReduce, ProtocolBoundarySizes) {
  const EngineSizes e = engineSizes();
  uint64_t tag = 0;
  forEachAlgorithm([&](size_t parts) {
    for (size_t bytes : boundarySizes(4)) run(Coll::AllReduce, {bytes / 4 * parts, alloyInt32, alloySum}, ++tag);
    for (size_t boundary : {e.llChunkBytes, e.llMaxBytes, e.slotBytes}) {
      if (boundary == 0) continue;
      for (size_t count : {(boundary / 2 - 1) * parts, (boundary / 2 + 1) * parts, boundary / 2 * parts + 1})
        run(Coll::AllReduce, {count, alloyBfloat16, alloySum}, ++tag);
    }
  });
}

// Each allreduce algorithm once small (low-latency protocol) and once large (bulk, over a slot per
// peer): the reduced suite for compute-sanitizer (scripts/gpu-check.sh sanitize).
TEST_F(AllReduce, BothProtocols) {
  const EngineSizes e = engineSizes();
  uint64_t tag = 0;
  forEachAlgorithm([&](size_t parts) {
    run(Coll::AllReduce, {1001 * parts, alloyFloat32, alloySum}, ++tag);
    run(Coll::AllReduce, {(e.llMaxBytes + e.slotBytes) / 4 * parts + 3, alloyInt32, alloySum}, ++tag);
  });
}

// Bulk data left in the direct engine's areas must never pass for lines, which carry their flags beside
// their data: an allreduce in bulk whose every word is the flag that an allreduce in lines two operations
// later (the same generation of the areas) waits for, one in between, then that one, checked against the
// reference; for both kinds of lines. (When lines and bulk shared the areas, a receiver could take the
// stale words for the peers' lines.)
TEST_F(AllReduce, LinesNeverTakeBulkDataForTheirFlags) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  std::vector<Engine> lineKinds{Engine::DirectLines};
  if (wideLinesHere()) lineKinds.push_back(Engine::DirectWideLines);
  uint64_t tag = 0;
  for (const Engine kind : lineKinds) {
    SCOPED_TRACE(engineName(kind));
    CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
    uint64_t epoch = 0;
    const uint64_t* epochs = comm->local->deviceComm().signals[rank] + alloy::SignalLayout::directEpoch(0);
    CUDA_ASSERT_OK(cudaMemcpy(&epoch, epochs, sizeof epoch, cudaMemcpyDeviceToHost));
    // Step 1's flag two operations on: 32 bits in every 4 bytes, or 64 in every 8.
    const uint64_t step = 2 * (epoch + 2);
    const uint32_t narrowFlag = alloy::llFlag(step);
    const uint64_t wideFlag = step + 1;
    {
      EngineForced bulk(Engine::DirectBulk);
      OneShotMax oneShot(kNever);
      const size_t count = directAreaBytes() / nranks / 8 * 2;  // a full slot: it covers every line slot below
      std::vector<uint8_t> looksLikeLines(count * 4);
      for (size_t i = 0; i < count; i += 2) {
        if (kind == Engine::DirectLines) {
          std::memcpy(looksLikeLines.data() + 4 * i, &narrowFlag, 4);
          std::memcpy(looksLikeLines.data() + 4 * i + 4, &narrowFlag, 4);
        } else {
          std::memcpy(looksLikeLines.data() + 4 * i, &wideFlag, 8);
        }
      }
      DeviceBuffer buffer(count * 4);
      ASSERT_TRUE(allRanksOk(buffer.ok()));
      buffer.upload(looksLikeLines, 0, stream);
      ALLOY_EXPECT_OK(alloyAllReduce(buffer.get(), buffer.get(), count, alloyInt32, alloyMax, comm, stream));
      CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
    }
    EngineForced lines(kind);
    OneShotMax oneShot(kNever);
    run(Coll::AllReduce, {1001, alloyInt32, alloySum}, ++tag);   // the other generation
    run(Coll::AllReduce, {65536, alloyInt32, alloySum}, ++tag);  // in the bulk operation's generation
  }
}

// 100 allreduces and small reduces enqueued with no host synchronisation; before each, a stream-ordered
// copy refills the same send buffer, so an operation that read its input late or ran ahead of the copy is
// caught. Allreduce sizes alternate between one-shot and reduce-scatter + all-gather, through the direct
// engine (its two generations of staging in turn, in 16-byte lines, in 128-byte lines and in bulk), and every 25th is
// larger than one of the engine's areas and runs in its windows; every third operation is a small
// reduce to a root that moves from rank to rank (the one-shot over lines whose result only the root keeps:
// its ranks must not run ahead of a peer any more than an allreduce's), whose result the other ranks leave
// untouched.
TEST_F(AllReduce, HundredBackToBackWithoutSync) {
  constexpr int kIterations = 100;
  const alloyDataType_t type = alloyInt32;
  const size_t threshold = alloy::directOneShotMaxBytes(nranks) / 4;
  const size_t overArea = directAreaBytes() / 4 + 1;  // int32 elements that no area holds
  const size_t medium = alloy::directLowLatencyMaxBytes() / 4 + 1;  // direct, in wide lines or bulk
  Rng shape(streamOf(seed, 1000));
  std::vector<size_t> counts(kIterations), offsets(kIterations + 1, 0);
  size_t largest = 0;
  const auto isReduce = [](int i) { return i % 3 == 2; };
  const auto rootOf = [this](int i) { return i % nranks; };
  for (int i = 0; i < kIterations; ++i) {
    counts[i] = isReduce(i)    ? shape.range(1, 5000)
                : i % 25 == 24 ? overArea + shape.range(1, 70000)
                : i % 10 == 9  ? threshold + shape.range(1, 70000)
                : i % 10 == 4  ? medium + shape.range(1, 70000)
                               : shape.range(1, 5000);
    offsets[i + 1] = offsets[i] + counts[i] * 4;
    largest = std::max(largest, counts[i] * 4);
  }
  DeviceBuffer staging(offsets[kIterations]), send(largest), recv(offsets[kIterations] + kGuard);
  ASSERT_TRUE(allRanksOk(staging.ok() && send.ok() && recv.ok()));
  std::vector<std::vector<std::vector<uint8_t>>> inputs(kIterations);
  {
    std::vector<uint8_t> all(offsets[kIterations]);
    for (int i = 0; i < kIterations; ++i) {
      for (int p = 0; p < nranks; ++p) inputs[i].push_back(reductionInput(type, alloySum, streamOf(seed, 1 + i, p), counts[i]));
      std::copy(inputs[i][rank].begin(), inputs[i][rank].end(), all.begin() + offsets[i]);
    }
    staging.upload(all, 0, stream);
  }
  recv.poison(stream);
  for (int i = 0; i < kIterations; ++i) {
    CUDA_EXPECT_OK(cudaMemcpyAsync(send.get(), staging.get() + offsets[i], counts[i] * 4, cudaMemcpyDeviceToDevice, stream));
    DirectWideLinesMax wide(i % 20 == 14 ? 0 : kNever);  // every other medium one in bulk
    uint8_t* into = recv.get() + offsets[i];
    const alloyResult_t r = isReduce(i) ? alloyReduce(send.get(), into, counts[i], type, alloySum, rootOf(i), comm, stream)
                                        : alloyAllReduce(send.get(), into, counts[i], type, alloySum, comm, stream);
    EXPECT_EQ(r, alloySuccess) << "iteration " << i << ": " << alloyFailure(isReduce(i) ? "alloyReduce" : "alloyAllReduce", r);
  }
  const std::vector<uint8_t> got = recv.download(stream);
  for (int i = 0; i < kIterations; ++i) {
    const std::string label = "iteration " + std::to_string(i) + (isReduce(i) ? " (reduce)" : "");
    if (isReduce(i) && rank != rootOf(i)) {
      EXPECT_TRUE(allPoison(got.data() + offsets[i], counts[i] * 4, label + ", off the root"));
      continue;
    }
    ReferenceReduction reference(type, alloySum, counts[i]);
    for (int p = 0; p < nranks; ++p) reference.add(inputs[i][p].data());
    EXPECT_TRUE(reference.check(got.data() + offsets[i], label));
    if (!isReduce(i)) {
      EXPECT_TRUE(identicalOnAllRanks(got.data() + offsets[i], counts[i] * 4, label));
    }
  }
  EXPECT_TRUE(allPoison(got.data() + offsets[kIterations], kGuard, "guard bytes after the last iteration"));
}

TEST_F(Reduce, EveryDatatypeAndOperatorEveryRoot) {
  uint64_t tag = 0;
  everyDatatypeAndOperator(&tag);
  for (int root = 0; root < nranks; ++root) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{70001}, (size_t{24} << 20) / 4 + 3}) {
      Shape s{count, alloyFloat32, alloySum};
      s.root = root;
      run(Coll::Reduce, s, ++tag);
    }
  }
}

TEST_F(Reduce, WindowsThroughSmallAreas) { windowsThroughSmallAreas(Coll::Reduce); }

// Parts that fit one area, in windows of at most ALLOY_REDUCE_WINDOW_BYTES each (direct_plan.cc: the root
// takes in one window's results while it stores the next). 4 KiB windows make many from little data:
// parts of one window and 16 bytes, of five windows and a ragged end, of 64 windows; every root in turn, in
// place and at odd offsets, in narrow types; the root folding its input into the results (avg excepted)
// and not.
TEST_F(Reduce, NarrowedWindowsWhereThePartsFitAnArea) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  if (nranks < 3 || comm->topology.spansHosts()) GTEST_SKIP() << "by parts needs 3 or more ranks on one host";
  constexpr size_t kWindow = 4096;
  ScopedEnv byParts("ALLOY_REDUCE_SCATTER_MIN_BYTES", 0);
  ScopedEnv narrow("ALLOY_REDUCE_WINDOW_BYTES", kWindow);
  DirectWideLinesMax bulk(0);  // the smaller parts would fit 128-byte lines
  uint64_t tag = 0;
  for (const size_t folds : {1, 0}) {
    ScopedEnv rootFolds("ALLOY_REDUCE_ROOT_FOLDS", folds);
    for (size_t partBytes : {kWindow + 16, 5 * kWindow - 1000, 64 * kWindow}) {
      const size_t count = partBytes / 4 * (nranks - 1) + 3;  // 4-byte elements; the last part ragged
      Shape shapes[] = {{count, alloyFloat32, alloySum}, {count, alloyInt32, alloyMax, 0, 0, true},
                        {count * 2, alloyBfloat16, alloyAvg, 2, 6}, {count * 4, alloyUint8, alloyMin, 3, 0, true}};
      for (Shape& s : shapes) {
        s.root = static_cast<int>(tag % nranks);
        run(Coll::Reduce, s, ++tag);
      }
    }
  }
}

TEST_F(Reduce, InPlaceAndUnaligned) {
  uint64_t tag = 0;
  for (size_t count : {size_t{1}, size_t{1001}, size_t{300001}}) inPlaceAndUnaligned(count, nranks - 1, &tag);
}

// A reduce by parts forced at every size, in each of its forms: the direct engine's 128-byte lines (where
// the links carry them; parts beyond the line areas go in bulk), its bulk stores, and a reduce-scatter then
// a gather at the root over the rings (reduce.cc, reduceByParts). Every datatype and operator, every root,
// counts whose parts are empty or ragged, in place and unaligned.
TEST_F(Reduce, ByPartsEveryRootInPlaceAndUnaligned) {
  if (nranks < 3 || comm->topology.spansHosts()) GTEST_SKIP() << "by parts needs 3 or more ranks on one host";
  ScopedEnv force("ALLOY_REDUCE_SCATTER_MIN_BYTES", 0);
  std::vector<Engine> forms{Engine::DirectBulk, Engine::Rings};
  if (wideLinesHere()) forms.insert(forms.begin(), Engine::DirectWideLines);
  uint64_t tag = 0;
  for (const Engine form : forms) {
    SCOPED_TRACE(engineName(form));
    EngineForced forced(form);
    everyDatatypeAndOperator(&tag);
    for (int root = 0; root < nranks; ++root)
      for (size_t count : {size_t{1}, size_t{7}, size_t{300001}, (size_t{9} << 20) / 4 + 1})
        inPlaceAndUnaligned(count, root, &tag);
  }
}

// From 3 ranks on, a reduce above the one-shot's limit and the 16-byte lines' top goes by parts in 128-byte
// lines where its parts fit the line areas (reduce.cc), and over the rings' flat form where they do not, with
// the lines' band and the bulk form by parts set aside. At the edge: parts of a full slot, in the direct
// engine (its operation count moves), and parts one element larger, not (it stays); every root, in place
// and at odd offsets; in each of the root's three forms (direct_plan.cc, planReduce): folding its input
// into the owners' results (avg excepted), with an empty part and, at the same edge, with a part of its own
// (nranks smaller parts).
TEST_F(Reduce, WideLinesUpToTheLineAreas) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  if (nranks < 3) GTEST_SKIP() << "a reduce goes by parts from 3 ranks on";
  if (!wideLinesHere()) GTEST_SKIP() << "the links do not carry 128-byte lines";
  DirectWideLinesMax anyBand(kNever);
  ScopedEnv noBulkByParts("ALLOY_REDUCE_SCATTER_MIN_BYTES", kNever);
  const size_t parts = static_cast<size_t>(nranks) - 1;
  // Whole 16-byte vectors per part, as partOf (algorithm.h) cuts them for every datatype below.
  const size_t slotData = directSlotDataBytes(Engine::DirectWideLines) / 16 * 16;
  const size_t fits = slotData / 4 * parts;  // int32 elements
  ASSERT_GT(fits * 4, std::max(alloy::allreduceOneShotMaxBytes(nranks), alloy::kDirectLinesMaxBytes))
      << "the edge lies below the 128-byte lines' band";
  uint64_t tag = 0;
  struct RootForm {
    size_t folds, partMax;
  };
  for (const RootForm form : {RootForm{1, 0}, RootForm{0, 0}, RootForm{0, kNever}}) {
    ScopedEnv folds("ALLOY_REDUCE_ROOT_FOLDS", form.folds);
    ScopedEnv rootPart("ALLOY_REDUCE_ROOT_PART_MAX_BYTES", form.partMax);
    for (int root = 0; root < nranks; ++root)
      for (const bool larger : {false, true}) {
        const size_t count = larger ? fits + parts : fits;
        Shape shapes[] = {{count, alloyInt32, alloySum}, {count, alloyFloat32, alloyMax, 0, 0, true},
                          {count * 2, alloyBfloat16, alloyAvg, 2, 6}, {count * 4, alloyInt8, alloyMin, 3, 0, true}};
        for (Shape& s : shapes) {
          s.root = root;
          const uint64_t before = directOperations();
          run(Coll::Reduce, s, ++tag);
          EXPECT_EQ(directOperations() - before, larger ? 0u : 1u)
              << "count " << s.count << (larger ? ": parts over a slot must not go to the direct engine"
                                                : ": parts of a full slot must go to the direct engine");
        }
      }
  }
}

// A reduce by parts in the direct engine whose root folds its input into the owners' results, from 3 ranks
// on, in 128-byte lines (where the links carry them) and in bulk: every datatype with every operator (avg
// keeps the root's input with the owners), at 100,003 elements (odd, so the parts end mid-line and
// mid-vector), each to another root.
TEST_F(Reduce, RootFoldsEveryDatatypeAndOperator) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  if (nranks < 3 || comm->topology.spansHosts()) GTEST_SKIP() << "by parts needs 3 or more ranks on one host";
  ScopedEnv byParts("ALLOY_REDUCE_SCATTER_MIN_BYTES", 0);
  ScopedEnv folds("ALLOY_REDUCE_ROOT_FOLDS", 1);  // the default, said outright: a user's 0 would skip the fold
  std::vector<Engine> forms{Engine::DirectBulk};
  if (wideLinesHere()) forms.insert(forms.begin(), Engine::DirectWideLines);
  uint64_t tag = 0;
  for (const Engine form : forms) {
    SCOPED_TRACE(engineName(form));
    EngineForced forced(form);
    for (alloyDataType_t type : kAllTypes)
      for (alloyRedOp_t op : kAllOps) {
        Shape s{100003, type, op};
        s.root = static_cast<int>(tag % nranks);
        const uint64_t before = directOperations();
        run(Coll::Reduce, s, ++tag);
        EXPECT_EQ(directOperations() - before, 1u) << "the reduce must run in the direct engine";
      }
  }
}

// The reduced suite's reductions in 128-byte lines (scripts/gpu-check.sh sanitize): a reduce by parts to
// every root (the root folding, and with the fold off) and a reduce-scatter, the lines forced, at 300,001
// elements (parts of 100-300 KB), in place and at odd offsets. The two-shot allreduce's lines run in
// AllReduce.BothProtocols.
TEST_F(Reduce, ByPartsAndReduceScatterInWideLines) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  if (!wideLinesHere()) GTEST_SKIP() << "the links do not carry 128-byte lines";
  EngineForced wide(Engine::DirectWideLines);
  ScopedEnv byParts("ALLOY_REDUCE_SCATTER_MIN_BYTES", 0);
  uint64_t tag = 0;
  if (nranks >= 3)
    for (const size_t folds : {1, 0}) {
      ScopedEnv rootFolds("ALLOY_REDUCE_ROOT_FOLDS", folds);
      for (int root = 0; root < nranks; ++root) inPlaceAndUnaligned(300001, root, &tag);
    }
  for (const bool inPlace : {false, true}) {
    const uint64_t before = directOperations();
    run(Coll::ReduceScatter, {300001, alloyFloat32, alloySum, inPlace ? 0u : 4u, inPlace ? 0u : 12u, inPlace}, ++tag);
    EXPECT_EQ(directOperations() - before, 1u) << "the reduce-scatter must run in the direct engine";
  }
}

// A binomial tree up to the root between hosts (reduce_tree.h), which by default runs only where the
// model expects it to be faster (several ranks per host, or dozens of hosts), forced at any host count:
// every root, every datatype with sum and max, sizes up to the one-shot limit (at most 256 KiB), in place
// and unaligned. avg keeps the flat schedule.
TEST_F(Reduce, BinomialTreeBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  ScopedEnv force("ALLOY_REDUCE_TREE", 1);
  const size_t limit = std::min(alloy::allreduceOneShotMaxBytes(nranks), size_t{256} << 10);  // kept quick
  uint64_t tag = 0;
  for (int root = 0; root < nranks; ++root) {
    for (alloyDataType_t type : kAllTypes)
      for (alloyRedOp_t op : {alloySum, alloyMax}) {
        Shape s{root % 2 == 0 ? size_t{1001} : size_t{7}, type, op};
        s.root = root;
        run(Coll::Reduce, s, ++tag);
      }
    Shape large{limit / 4, alloyFloat32, alloySum};
    Shape inPlace{30001, alloyInt8, alloySum, 3, 0, true};
    Shape unaligned{30001, alloyFloat16, alloyProd, 2, 6};
    Shape avg{1001, alloyFloat64, alloyAvg, 8, 24};
    for (Shape* s : {&large, &inPlace, &unaligned, &avg}) {
      s->root = root;
      run(Coll::Reduce, *s, ++tag);
    }
  }
}

// The same edges as AllReduce.DirectAreaEdges: parts that just fit a slot, and one element more.
TEST_F(ReduceScatter, DirectAreaEdges) {
  if (const char* why = withoutDirectEngine()) GTEST_SKIP() << why;
  uint64_t tag = 0;
  for (const Engine engine : directProtocols()) {
    SCOPED_TRACE(engineName(engine));
    DirectLowLatencyMax lines(engine == Engine::DirectLines ? kNever : 0);
    DirectWideLinesMax wide(engine == Engine::DirectBulk ? 0 : kNever);
    const size_t fits = directSlotDataBytes(engine) / 4;
    for (size_t count : {fits, fits + 1}) {
      run(Coll::ReduceScatter, {count, alloyInt32, alloySum}, ++tag);
      run(Coll::ReduceScatter, {count, alloyInt32, alloyMin, 0, 0, true}, ++tag);
    }
  }
}

TEST_F(ReduceScatter, WindowsThroughSmallAreas) { windowsThroughSmallAreas(Coll::ReduceScatter); }

TEST_F(ReduceScatter, EveryDatatypeAndOperatorOverTheRings) {
  DirectMax rings(0);
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (alloyRedOp_t op : {alloySum, alloyMax, alloyAvg})
      for (size_t count : {size_t{1}, size_t{1001}}) run(Coll::ReduceScatter, {count, type, op}, ++tag);
}

TEST_F(ReduceScatter, EveryDatatypeAndOperator) {
  DirectLowLatencyMax lines(kNever);  // small sizes: lines; SizesInPlaceUnaligned reaches bulk
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (alloyRedOp_t op : kAllOps)
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}, size_t{70001}}) run(Coll::ReduceScatter, {count, type, op}, ++tag);
}

TEST_F(ReduceScatter, SizesInPlaceUnaligned) {
  uint64_t tag = 0;
  for (size_t count : {size_t{0}, size_t{1}, size_t{65536}, size_t{65537}, (size_t{32} << 20) / 4 + 3}) {
    run(Coll::ReduceScatter, {count, alloyFloat32, alloySum}, ++tag);
    run(Coll::ReduceScatter, {count, alloyFloat32, alloySum, 0, 0, true}, ++tag);
    run(Coll::ReduceScatter, {count, alloyInt8, alloyProd, 1, 3}, ++tag);
    run(Coll::ReduceScatter, {count, alloyFloat16, alloyMin, 2, 0, true}, ++tag);
  }
}

// Recursive doubling between hosts for small reduce-scatters (the whole buffer as an allreduce, then this
// rank's part), forced at any host count: every datatype with sum and max, whole buffers up to the
// one-shot limit (at most 256 KiB), in place and unaligned. avg keeps the flat schedule.
TEST_F(ReduceScatter, RecursiveDoublingBetweenHosts) {
  if (!comm->topology.spansHosts()) GTEST_SKIP() << "the communicator does not span hosts (set ALLOY_HOSTID per rank)";
  ScopedEnv force("ALLOY_REDUCE_SCATTER_DOUBLING", 1);
  const size_t limit = std::min(alloy::allreduceOneShotMaxBytes(nranks), size_t{256} << 10);  // kept quick
  uint64_t tag = 0;
  for (alloyDataType_t type : kAllTypes)
    for (alloyRedOp_t op : {alloySum, alloyMax})
      for (size_t count : {size_t{1}, size_t{7}, size_t{1001}}) run(Coll::ReduceScatter, {count, type, op}, ++tag);
  run(Coll::ReduceScatter, {limit / (4 * nranks), alloyFloat32, alloySum}, ++tag);
  run(Coll::ReduceScatter, {1001, alloyFloat32, alloySum, 0, 0, true}, ++tag);
  run(Coll::ReduceScatter, {3001, alloyInt8, alloyProd, 1, 3}, ++tag);
  run(Coll::ReduceScatter, {1001, alloyFloat16, alloyMin, 2, 0, true}, ++tag);
  run(Coll::ReduceScatter, {1001, alloyFloat64, alloyAvg, 8, 24}, ++tag);
}

}  // namespace
}  // namespace alloytest
