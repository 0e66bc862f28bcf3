// CUDA graphs: an operation captured once (cudaStreamBeginCapture / EndCapture on a non-default stream),
// instantiated, and replayed many times. Between some replays the send buffer gets new data through a
// cudaMemcpyAsync outside the graph, and eager (uncaptured) operations on the same communicator run in
// between, so the engine's counters must stay consistent across captured and uncaptured launches.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"
#include "reduce_reference.h"

namespace alloytest {
namespace {

constexpr int kVersions = 5;

struct GraphCase {
  size_t sendBytes = 0;
  size_t recvBytes = 0;  // checked in full: gaps and a guard must keep the poison
  std::function<alloyResult_t(uint8_t* send, uint8_t* recv)> enqueue;
  // This rank's send buffer for data version v, and what its receive buffer must then hold.
  std::function<std::vector<uint8_t>(int v)> sendData;
  std::function<std::vector<uint8_t>(int v)> expected;
};

class CudaGraph : public CommTest {
 protected:
  // Cases shared by the tests below: an int32 allgather, broadcast from `root` and sum-reduce to `root`
  // of `count` elements per rank. The reduce's recvbuff must stay untouched off the root.
  GraphCase allgatherCase(size_t count) {
    const size_t part = count * 4, n = static_cast<size_t>(nranks);
    GraphCase c;
    c.sendBytes = part;
    c.recvBytes = part * n + kGuard;
    c.enqueue = [this, count](uint8_t* send, uint8_t* recv) {
      return alloyAllGather(send, recv, count, alloyInt32, comm, stream);
    };
    c.sendData = [this, part](int v) { return genVector(streamOf(seed, 200 + v, rank), part); };
    c.expected = [this, part, n, recvBytes = c.recvBytes](int v) {
      std::vector<uint8_t> e(recvBytes, kPoison);
      for (size_t p = 0; p < n; ++p) genBytes(streamOf(seed, 200 + v, p), 0, part, e.data() + p * part);
      return e;
    };
    return c;
  }
  GraphCase broadcastCase(size_t count, int root) {
    const size_t part = count * 4;
    GraphCase c;
    c.sendBytes = part;
    c.recvBytes = part + kGuard;
    c.enqueue = [this, count, root](uint8_t* send, uint8_t* recv) {
      return alloyBroadcast(send, recv, count, alloyInt32, root, comm, stream);
    };
    c.sendData = [this, part](int v) { return genVector(streamOf(seed, 300 + v, rank), part); };
    c.expected = [this, part, root, recvBytes = c.recvBytes](int v) {
      std::vector<uint8_t> e = genVector(streamOf(seed, 300 + v, root), part);
      e.resize(recvBytes, kPoison);
      return e;
    };
    return c;
  }
  GraphCase reduceCase(size_t count, int root);

  void replay(const GraphCase& c, int replays) {
    DeviceBuffer send(c.sendBytes), recv(c.recvBytes), staging(c.sendBytes * kVersions);
    ASSERT_TRUE(allRanksOk(send.ok() && recv.ok() && staging.ok()));
    std::vector<std::vector<uint8_t>> expected(kVersions);
    for (int v = 0; v < kVersions; ++v) {
      staging.upload(c.sendData(v), c.sendBytes * v, stream);
      expected[v] = c.expected(v);
    }
    send.poison(stream);
    recv.poison(stream);

    // Capture, on this test's non-default stream.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_EXPECT_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const alloyResult_t captured = c.enqueue(send.get(), recv.get());
    EXPECT_EQ(captured, alloySuccess) << alloyFailure("enqueue under capture", captured);
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    EXPECT_EQ(ended, cudaSuccess) << "cudaStreamEndCapture: " << cudaGetErrorString(ended);
    size_t nodes = 0;
    bool ok = captured == alloySuccess && ended == cudaSuccess && graph != nullptr &&
              cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess && nodes > 0;
    EXPECT_GT(nodes, 0u) << "the captured graph is empty";
    if (ok) {
      const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
      EXPECT_EQ(e, cudaSuccess) << "cudaGraphInstantiate: " << cudaGetErrorString(e);
      ok = e == cudaSuccess;
    }
    cudaGetLastError();
    // Capture must not have run anything: recvbuff still holds the poison.
    {
      const std::vector<uint8_t> untouched = recv.download(stream);
      EXPECT_TRUE(allPoison(untouched.data(), untouched.size(), "recvbuff after capture, before any replay"));
    }
    if (!allRanksOk(ok)) {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
      if (graph != nullptr) cudaGraphDestroy(graph);
      FAIL() << "capture failed on some rank; no replay";
    }

    // The schedule, the same on every rank: when the data change, which replays are checked, where an
    // eager alltoall is slipped in.
    Rng rng(streamOf(seed, 0x5c4ed));
    std::set<int> changes = {0}, checks = {replays - 1}, eager;
    while (changes.size() < 10) changes.insert(static_cast<int>(rng.range(1, replays - 1)));
    for (int i : changes) {
      checks.insert(i);
      if (i + 1 < replays) checks.insert(i + 1);
    }
    while (checks.size() < changes.size() * 2 + 5) checks.insert(static_cast<int>(rng.range(0, replays - 1)));
    while (eager.size() < 3) eager.insert(static_cast<int>(rng.range(1, replays - 1)));

    PinnedBuffer snapshots(c.recvBytes * checks.size());
    ASSERT_TRUE(allRanksOk(snapshots.get() != nullptr));
    std::vector<std::pair<int, int>> checked;  // (replay, version) of each snapshot
    int version = 0, changeCount = 0;
    for (int i = 0; i < replays; ++i) {
      if (changes.count(i)) {
        version = changeCount++ % kVersions;
        CUDA_EXPECT_OK(cudaMemcpyAsync(send.get(), staging.get() + c.sendBytes * version, c.sendBytes,
                                       cudaMemcpyDeviceToDevice, stream));
      }
      const bool check = checks.count(i) != 0;
      if (check) CUDA_EXPECT_OK(cudaMemsetAsync(recv.get(), kPoison, c.recvBytes, stream));
      const cudaError_t e = cudaGraphLaunch(exec, stream);
      if (e != cudaSuccess) {
        ADD_FAILURE() << "cudaGraphLaunch of replay " << i << ": " << cudaGetErrorString(e);
        break;
      }
      if (check) {
        CUDA_EXPECT_OK(cudaMemcpyAsync(snapshots.get() + c.recvBytes * checked.size(), recv.get(), c.recvBytes,
                                       cudaMemcpyDeviceToHost, stream));
        checked.emplace_back(i, version);
      }
      if (eager.count(i)) alltoallRoundTrip(1001 + i, alloyUint8, 0xea9e + i, i % 4, (i / 4) % 4);
    }
    CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
    for (size_t k = 0; k < checked.size(); ++k) {
      EXPECT_TRUE(bytesEqual(expected[checked[k].second].data(), snapshots.get() + c.recvBytes * k, c.recvBytes,
                             "replay " + std::to_string(checked[k].first) + " (data version " +
                                 std::to_string(checked[k].second) + ")"));
    }
    CUDA_EXPECT_OK(cudaGraphExecDestroy(exec));
    CUDA_EXPECT_OK(cudaGraphDestroy(graph));
  }

  // A random alltoallv matrix captured once and replayed 1000 times; with relay, a relaybuff four times
  // the send buffer's size (between hosts of several ranks: the rail relay, whose counts are exchanged at
  // capture).
  void alltoallvReplayed(bool relay);
};

TEST_F(CudaGraph, AlltoAllReplayed1000Times) {
  const size_t count = 17001;  // float32: 68004 bytes per peer, a few chunks over the channels
  const alloyDataType_t type = alloyFloat32;
  const size_t block = count * typeSize(type), total = block * nranks;
  GraphCase c;
  c.sendBytes = total;
  c.recvBytes = total + kGuard;
  c.enqueue = [&](uint8_t* send, uint8_t* recv) { return alloyAlltoAll(send, recv, count, type, comm, stream); };
  c.sendData = [&](int v) { return genVector(streamOf(seed, 100 + v, rank), total); };
  c.expected = [&](int v) {
    std::vector<uint8_t> e = alltoallExpected(100 + v, rank, nranks, block);
    e.resize(total + kGuard, kPoison);
    return e;
  };
  replay(c, 1000);
}

void CudaGraph::alltoallvReplayed(bool relay) {
  const alloyDataType_t type = alloyBfloat16;
  const size_t es = typeSize(type), gap = 16;  // elements before every block
  const int n = nranks;
  Rng shape(streamOf(seed, 0x6a));
  std::vector<size_t> counts(static_cast<size_t>(n) * n);  // counts[p * n + r]: p sends to r
  for (size_t& x : counts) x = shape.chance(0.2) ? 0 : shape.range(1, 40000);
  // Displacements: blocks in rank order with a gap before each.
  auto displs = [&](int who, bool sending) {
    std::vector<size_t> d(n);
    size_t cursor = 0;
    for (int q = 0; q < n; ++q) {
      cursor += gap;
      d[q] = cursor;
      cursor += sending ? counts[who * n + q] : counts[q * n + who];
    }
    return std::make_pair(d, cursor + gap);
  };
  const std::pair<std::vector<size_t>, size_t> sendLayout = displs(rank, true), recvLayout = displs(rank, false);
  const std::vector<size_t>& sdispls = sendLayout.first;
  const std::vector<size_t>& rdispls = recvLayout.first;
  const size_t sendExtent = sendLayout.second, recvExtent = recvLayout.second;
  std::vector<size_t> sendcounts(n), recvcounts(n);
  for (int q = 0; q < n; ++q) {
    sendcounts[q] = counts[rank * n + q];
    recvcounts[q] = counts[q * n + rank];
  }
  GraphCase c;
  c.sendBytes = sendExtent * es;
  c.recvBytes = recvExtent * es + kGuard;
  DeviceBuffer relayBuffer(relay ? 4 * c.sendBytes : 0);
  ASSERT_TRUE(allRanksOk(relayBuffer.ok()));
  c.enqueue = [&](uint8_t* send, uint8_t* recv) {
    return alloyAlltoAllv(send, sendcounts.data(), sdispls.data(), recv, recvcounts.data(), rdispls.data(),
                          relay ? relayBuffer.get() : nullptr, type, comm, stream);
  };
  c.sendData = [&](int v) { return genVector(streamOf(seed, 100 + v, rank), c.sendBytes); };
  c.expected = [&](int v) {
    std::vector<uint8_t> e(c.recvBytes, kPoison);
    for (int p = 0; p < n; ++p) {
      const size_t peerSdispl = displs(p, true).first[rank];
      genBytes(streamOf(seed, 100 + v, p), peerSdispl * es, recvcounts[p] * es, e.data() + rdispls[p] * es);
    }
    return e;
  };
  replay(c, 1000);
}

TEST_F(CudaGraph, AlltoAllvReplayed1000Times) { alltoallvReplayed(false); }

TEST_F(CudaGraph, AlltoAllvThroughTheRailsReplayed1000Times) { alltoallvReplayed(true); }

TEST_F(CudaGraph, SendRecvRingGroupReplayed) {
  const size_t count = 50001;  // uint8, odd
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  GraphCase c;
  c.sendBytes = count;
  c.recvBytes = count + kGuard;
  c.enqueue = [&](uint8_t* send, uint8_t* recv) {
    alloyResult_t r = alloyGroupStart();
    if (r == alloySuccess) r = alloySend(send, count, alloyUint8, next, comm, stream);
    if (r == alloySuccess) r = alloyRecv(recv, count, alloyUint8, prev, comm, stream);
    const alloyResult_t end = alloyGroupEnd();
    return r != alloySuccess ? r : end;
  };
  c.sendData = [&](int v) { return genVector(streamOf(seed, 100 + v, rank), count); };
  c.expected = [&](int v) {
    std::vector<uint8_t> e = genVector(streamOf(seed, 100 + v, prev), count);
    e.resize(c.recvBytes, kPoison);
    return e;
  };
  replay(c, 300);
}


// Element-wise int32 sum over ranks (wrapping) of bytes [offset, offset + bytes) of every rank's data
// version v: exact, so the replays compare byte for byte.
std::vector<uint8_t> int32Sum(uint64_t seed, int v, int nranks, size_t totalCount, size_t offset, size_t bytes) {
  std::vector<uint32_t> acc(bytes / 4, 0);
  for (int p = 0; p < nranks; ++p) {
    const std::vector<uint8_t> in = reductionInput(alloyInt32, alloySum, streamOf(seed, 100 + v, p), totalCount);
    for (size_t i = 0; i < acc.size(); ++i) {
      uint32_t x;
      std::memcpy(&x, in.data() + offset + 4 * i, 4);
      acc[i] += x;
    }
  }
  std::vector<uint8_t> out(bytes);
  std::memcpy(out.data(), acc.data(), bytes);
  return out;
}

GraphCase CudaGraph::reduceCase(size_t count, int root) {
  const size_t part = count * 4;
  GraphCase c;
  c.sendBytes = part;
  c.recvBytes = part + kGuard;
  c.enqueue = [this, count, root](uint8_t* send, uint8_t* recv) {
    return alloyReduce(send, recv, count, alloyInt32, alloySum, root, comm, stream);
  };
  c.sendData = [this, count](int v) {
    return reductionInput(alloyInt32, alloySum, streamOf(seed, 100 + v, rank), count);
  };
  c.expected = [this, count, part, root, recvBytes = c.recvBytes](int v) {
    std::vector<uint8_t> e = rank == root ? int32Sum(seed, v, nranks, count, 0, part) : std::vector<uint8_t>();
    e.resize(recvBytes, kPoison);
    return e;
  };
  return c;
}

// Every allreduce algorithm, chosen at capture time through ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES,
// ALLOY_DIRECT_MAX_BYTES, ALLOY_DIRECT_LL_MAX_BYTES, ALLOY_DIRECT_LL128_MAX_BYTES and
// ALLOY_ALLREDUCE_DOUBLING (set alike on every rank): one-shot and reduce-scatter + all-gather, each through
// the direct engine (in bulk, in 16-byte lines and in 128-byte lines where the links carry them) and over
// the rings, and between hosts
// recursive doubling (on one host the last is one-shot again). The direct engine's generations come from
// counters in memory, so 300 replays alternate them as eager calls would.
TEST_F(CudaGraph, AllReduceReplayed) {
  const size_t count = (size_t{1} << 20) / 4 + 5;
  const size_t bytes = count * 4;
  struct Choice {
    const char* oneShotMax;
    const char* directMax;
    const char* directLowLatencyMax;
    const char* directWideLinesMax;
    const char* doubling;
  };
  const char* kAll = "4611686018427387904";
  const Choice choices[] = {{kAll, kAll, "0", "0", "0"},  {"0", kAll, "0", "0", "0"},  {kAll, kAll, kAll, "0", "0"},
                            {"0", kAll, kAll, "0", "0"},  {kAll, kAll, "0", kAll, "0"}, {"0", kAll, "0", kAll, "0"},
                            {kAll, "0", "0", "0", "0"},   {"0", "0", "0", "0", "0"},    {kAll, kAll, "0", "0", "1"}};
  for (const Choice& choice : choices) {
    SCOPED_TRACE(std::string("ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES=") + choice.oneShotMax + " ALLOY_DIRECT_MAX_BYTES=" +
                 choice.directMax + " ALLOY_DIRECT_LL_MAX_BYTES=" + choice.directLowLatencyMax +
                 " ALLOY_DIRECT_LL128_MAX_BYTES=" + choice.directWideLinesMax +
                 " ALLOY_ALLREDUCE_DOUBLING=" + choice.doubling);
    ScopedEnv oneShotMax("ALLOY_ALLREDUCE_ONESHOT_MAX_BYTES", choice.oneShotMax);
    ScopedEnv directMax("ALLOY_DIRECT_MAX_BYTES", choice.directMax);
    ScopedEnv directLowLatencyMax("ALLOY_DIRECT_LL_MAX_BYTES", choice.directLowLatencyMax);
    ScopedEnv directWideLinesMax("ALLOY_DIRECT_LL128_MAX_BYTES", choice.directWideLinesMax);
    ScopedEnv doubling("ALLOY_ALLREDUCE_DOUBLING", choice.doubling);
    GraphCase c;
    c.sendBytes = bytes;
    c.recvBytes = bytes + kGuard;
    c.enqueue = [&](uint8_t* send, uint8_t* recv) {
      return alloyAllReduce(send, recv, count, alloyInt32, alloySum, comm, stream);
    };
    c.sendData = [&](int v) { return reductionInput(alloyInt32, alloySum, streamOf(seed, 100 + v, rank), count); };
    c.expected = [&](int v) {
      std::vector<uint8_t> e = int32Sum(seed, v, nranks, count, 0, bytes);
      e.resize(c.recvBytes, kPoison);
      return e;
    };
    replay(c, 300);
  }
}

TEST_F(CudaGraph, ReduceScatterAllGatherBroadcastReplayed) {
  const size_t count = 30001, part = count * 4, n = static_cast<size_t>(nranks);
  {
    SCOPED_TRACE("reducescatter");
    GraphCase c;
    c.sendBytes = part * n;
    c.recvBytes = part + kGuard;
    c.enqueue = [&](uint8_t* send, uint8_t* recv) {
      return alloyReduceScatter(send, recv, count, alloyInt32, alloySum, comm, stream);
    };
    c.sendData = [&](int v) { return reductionInput(alloyInt32, alloySum, streamOf(seed, 100 + v, rank), count * n); };
    c.expected = [&](int v) {
      std::vector<uint8_t> e = int32Sum(seed, v, nranks, count * n, rank * part, part);
      e.resize(c.recvBytes, kPoison);
      return e;
    };
    replay(c, 200);
  }
  {
    SCOPED_TRACE("allgather");
    replay(allgatherCase(count), 200);
  }
  {
    SCOPED_TRACE("broadcast");
    replay(broadcastCase(count, nranks - 1), 200);
  }
}

// The schedules of several rounds between hosts, forced (on one host the variables change nothing):
// allgather by recursive doubling, broadcast down and reduce up a binomial tree, each captured once and
// replayed 200 times; the reduce's recvbuff must stay untouched off the root.
TEST_F(CudaGraph, RoundSchedulesReplayed) {
  ScopedEnv gather("ALLOY_ALLGATHER_DOUBLING", 1), down("ALLOY_BROADCAST_TREE", 1), up("ALLOY_REDUCE_TREE", 1);
  const size_t count = 1001;
  const int root = nranks - 1;
  {
    SCOPED_TRACE("allgather by doubling");
    replay(allgatherCase(count), 200);
  }
  {
    SCOPED_TRACE("broadcast down the tree");
    replay(broadcastCase(count, root), 200);
  }
  {
    SCOPED_TRACE("reduce up the tree");
    replay(reduceCase(count, root), 200);
  }
}

}  // namespace
}  // namespace alloytest
