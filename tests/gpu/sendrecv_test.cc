// alloySend / alloyRecv, in groups (alloyGroupStart / alloyGroupEnd) and alone.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu_test_util.h"

namespace alloytest {
namespace {

// 256 KiB per peer: the default low-latency limit (ALLOY_LL_MAX_BYTES), once the slot size; the bulk
// slot is 512 KiB now (alltoall_test.cc ProtocolBoundarySizes covers the actual boundaries).
constexpr size_t kSlotBytes = 256 << 10;

// One message: count elements of type from src to dst, at byte offsets into the sender's and the
// receiver's buffers. Its content is stream streamOf(seed, tag, src, dst * 1000 + index).
struct Message {
  int src, dst, index;
  size_t count;
  alloyDataType_t type;
  size_t sendOffset = 0, recvOffset = 0;
  size_t bytes() const { return count * typeSize(type); }
};

class SendRecv : public CommTest {
 protected:
  uint64_t messageStream(uint64_t tag, const Message& m) const {
    return streamOf(seed, tag, static_cast<uint64_t>(m.src), static_cast<uint64_t>(m.dst) * 1000 + m.index);
  }

  // Lays out this rank's outgoing and incoming messages in one send and one receive buffer (with a
  // poisoned gap after each incoming one), fills the send buffer and poisons the receive buffer.
  void prepare(std::vector<Message>& messages, uint64_t tag, DeviceBuffer* send, DeviceBuffer* recv,
               std::vector<uint8_t>* expected) {
    size_t sendBytes = 0, recvBytes = 0;
    for (Message& m : messages) {
      if (m.src == rank) {
        m.sendOffset = sendBytes;
        sendBytes += m.bytes() + 1;  // +1: the next message starts unaligned for 1-byte types
      }
      if (m.dst == rank) {
        m.recvOffset = recvBytes;
        recvBytes += m.bytes() + 64;
      }
    }
    *send = DeviceBuffer(sendBytes);
    *recv = DeviceBuffer(recvBytes + kGuard);
    std::vector<uint8_t> sendHost(sendBytes, 0);
    expected->assign(recvBytes + kGuard, kPoison);
    for (const Message& m : messages) {
      if (m.src == rank) genBytes(messageStream(tag, m), 0, m.bytes(), sendHost.data() + m.sendOffset);
      if (m.dst == rank) genBytes(messageStream(tag, m), 0, m.bytes(), expected->data() + m.recvOffset);
    }
    send->upload(sendHost, 0, stream);
    recv->poison(stream);
  }

  // Posts this rank's part of messages (in the given order), as sends and receives.
  void post(const std::vector<Message>& messages, const std::vector<size_t>& order, const DeviceBuffer& send,
            const DeviceBuffer& recv, alloyComm_t c) {
    for (size_t i : order) {
      const Message& m = messages[i];
      if (m.src == rank) {
        const alloyResult_t r = alloySend(send.get() + m.sendOffset, m.count, m.type, m.dst, c, stream);
        EXPECT_EQ(r, alloySuccess) << "send #" << m.index << " to " << m.dst << ": " << alloyFailure("alloySend", r);
      }
      if (m.dst == rank) {
        const alloyResult_t r = alloyRecv(recv.get() + m.recvOffset, m.count, m.type, m.src, c, stream);
        EXPECT_EQ(r, alloySuccess) << "recv #" << m.index << " from " << m.src << ": " << alloyFailure("alloyRecv", r);
      }
    }
  }

  void check(const DeviceBuffer& recv, const std::vector<uint8_t>& expected, const std::string& what) {
    const std::vector<uint8_t> got = recv.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), got.size(), what));
  }

  static std::vector<size_t> identity(size_t n) {
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    return order;
  }

  // A random order of the messages that keeps, for each (src, dst) pair, the messages in index order:
  // the order in which sends to one peer (and receives from one peer) must be matched.
  std::vector<size_t> shuffledKeepingPairOrder(const std::vector<Message>& messages, uint64_t stream) {
    std::vector<size_t> order = identity(messages.size());
    Rng rng(stream);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.range(0, i - 1)]);
    // Re-sort the members of each pair into index order, in the positions the pair occupies.
    for (size_t a = 0; a < order.size(); ++a)
      for (size_t b = a + 1; b < order.size(); ++b) {
        const Message& x = messages[order[a]];
        const Message& y = messages[order[b]];
        if (x.src == y.src && x.dst == y.dst && x.index > y.index) std::swap(order[a], order[b]);
      }
    return order;
  }
};

// Each rank sends to the next and receives from the previous, in one group; sizes from one element to
// several ring turns; half the ranks post the receive first.
TEST_F(SendRecv, RingInGroup) {
  struct Size {
    size_t count;
    alloyDataType_t type;
  };
  const Size sizes[] = {{1, alloyFloat32}, {4097, alloyUint8}, {kSlotBytes + 1, alloyInt8},
                        {(size_t{1} << 20) / 8 + 3, alloyFloat64}, {(size_t{9} << 20) + 1, alloyUint8}};
  uint64_t tag = 0;
  for (const Size& s : sizes) {
    ++tag;
    SCOPED_TRACE("ring of " + std::to_string(s.count) + " x " + typeName(s.type));
    std::vector<Message> messages;
    for (int p = 0; p < nranks; ++p) messages.push_back({p, (p + 1) % nranks, 0, s.count, s.type});
    DeviceBuffer send, recv;
    std::vector<uint8_t> expected;
    prepare(messages, tag, &send, &recv, &expected);
    // this rank's send is message rank, its receive message rank - 1 (the same one on a single rank)
    const size_t mine = rank, from = (rank + nranks - 1) % nranks;
    const std::vector<size_t> order = mine == from ? std::vector<size_t>{mine}
                                      : rank % 2   ? std::vector<size_t>{from, mine}
                                                   : std::vector<size_t>{mine, from};
    ALLOY_EXPECT_OK(alloyGroupStart());
    post(messages, order, send, recv, comm);
    ALLOY_EXPECT_OK(alloyGroupEnd());
    check(recv, expected, "ring receive");
  }
}

// A ring in one group, once small (low-latency protocol) and once large (bulk, over a slot): the
// reduced suite for compute-sanitizer (scripts/gpu-check.sh sanitize).
TEST_F(SendRecv, BothProtocols) {
  const EngineSizes e = engineSizes();
  uint64_t tag = 0;
  for (const size_t bytes : {size_t{4097}, e.llMaxBytes + e.slotBytes + 1}) {
    ++tag;
    SCOPED_TRACE("ring of " + std::to_string(bytes) + " bytes");
    std::vector<Message> messages;
    for (int p = 0; p < nranks; ++p) messages.push_back({p, (p + 1) % nranks, 0, bytes, alloyUint8});
    DeviceBuffer send, recv;
    std::vector<uint8_t> expected;
    prepare(messages, tag, &send, &recv, &expected);
    ALLOY_EXPECT_OK(alloyGroupStart());
    post(messages, identity(messages.size()), send, recv, comm);
    ALLOY_EXPECT_OK(alloyGroupEnd());
    check(recv, expected, "ring receive");
  }
}

// Every rank sends a message of its own size to every rank, itself included, and receives from every
// rank, all in one group, posted in a random order per rank.
TEST_F(SendRecv, AllPairsInOneGroup) {
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    Rng shape(streamOf(seed, tag, 0xa11));
    const alloyDataType_t type = tag == 2 ? alloyUint8 : alloyFloat32;
    std::vector<Message> messages;
    for (int p = 0; p < nranks; ++p)
      for (int r = 0; r < nranks; ++r) {
        const size_t count = shape.chance(0.15) ? 0 : shape.range(1, tag == 3 ? 200000 : 20000);
        messages.push_back({p, r, 0, count, type});
      }
    DeviceBuffer send, recv;
    std::vector<uint8_t> expected;
    prepare(messages, tag, &send, &recv, &expected);
    ALLOY_EXPECT_OK(alloyGroupStart());
    post(messages, shuffledKeepingPairOrder(messages, streamOf(seed, tag, 0x0de, rank)), send, recv, comm);
    ALLOY_EXPECT_OK(alloyGroupEnd());
    check(recv, expected, "all-pairs receives (tag " + std::to_string(tag) + ")");
  }
}

// Several sends to the same peer in one group are matched, in order, with that peer's receives: the
// messages differ in size (one empty, one over a slot) and datatype, so a mismatch shows.
TEST_F(SendRecv, SeveralSendsToSamePeerMatchInOrder) {
  const alloyDataType_t types[] = {alloyUint8, alloyFloat32, alloyFloat64, alloyBfloat16, alloyInt8, alloyUint32};
  constexpr int kPerPeer = 6;
  for (uint64_t tag = 1; tag <= 2; ++tag) {
    Rng shape(streamOf(seed, tag, 0x5a3));
    std::vector<Message> messages;
    for (int p = 0; p < nranks; ++p) {
      const int dst = (p + 1) % nranks;
      const int empty = static_cast<int>(shape.range(0, kPerPeer - 1));
      const int big = (empty + 1 + static_cast<int>(shape.range(0, kPerPeer - 2))) % kPerPeer;
      for (int k = 0; k < kPerPeer; ++k) {
        const alloyDataType_t type = types[(k + tag) % 6];
        size_t bytes = shape.range(1, 30000);
        if (k == empty) bytes = 0;
        if (k == big) bytes = kSlotBytes + shape.range(1, kSlotBytes);
        messages.push_back({p, dst, k, std::max<size_t>(bytes / typeSize(type), k == empty ? 0 : 1), type});
      }
    }
    DeviceBuffer send, recv;
    std::vector<uint8_t> expected;
    prepare(messages, tag, &send, &recv, &expected);
    ALLOY_EXPECT_OK(alloyGroupStart());
    post(messages, shuffledKeepingPairOrder(messages, streamOf(seed, tag, 0x0df, rank)), send, recv, comm);
    ALLOY_EXPECT_OK(alloyGroupEnd());
    check(recv, expected, "in-order receives (tag " + std::to_string(tag) + ")");
  }
}

// Groups nest: inner alloyGroupEnd calls launch nothing; the outermost one launches everything.
TEST_F(SendRecv, NestedGroups) {
  if (nranks < 2) GTEST_SKIP() << "needs two ranks";
  const int prev = (rank + nranks - 1) % nranks;
  std::vector<Message> messages;
  for (int p = 0; p < nranks; ++p) {
    messages.push_back({p, (p + 1) % nranks, 0, 3001, alloyUint8});
    messages.push_back({p, (p + 1) % nranks, 1, kSlotBytes / 4 + 5, alloyFloat32});
    messages.push_back({p, (p + 1) % nranks, 2, 17, alloyInt64});
  }
  DeviceBuffer send, recv;
  std::vector<uint8_t> expected;
  prepare(messages, 1, &send, &recv, &expected);
  auto find = [&](int src, int index) {
    for (size_t i = 0; i < messages.size(); ++i)
      if (messages[i].src == src && messages[i].index == index) return i;
    return size_t{0};
  };
  ALLOY_EXPECT_OK(alloyGroupStart());
  post(messages, {find(rank, 0)}, send, recv, comm);
  ALLOY_EXPECT_OK(alloyGroupStart());
  post(messages, {find(prev, 0), find(rank, 1)}, send, recv, comm);
  ALLOY_EXPECT_OK(alloyGroupStart());
  post(messages, {find(prev, 1)}, send, recv, comm);
  ALLOY_EXPECT_OK(alloyGroupEnd());
  post(messages, {find(rank, 2)}, send, recv, comm);
  ALLOY_EXPECT_OK(alloyGroupEnd());
  // Still inside the outermost group: nothing may have been enqueued yet.
  CUDA_EXPECT_OK(cudaStreamSynchronize(stream));
  {
    const std::vector<uint8_t> early = recv.download(stream);
    EXPECT_TRUE(allPoison(early.data(), early.size(), "recvbuff before the outermost alloyGroupEnd"));
  }
  post(messages, {find(prev, 2)}, send, recv, comm);
  ALLOY_EXPECT_OK(alloyGroupEnd());
  check(recv, expected, "receives after the outermost alloyGroupEnd");
}

// Sends to oneself in a group are matched in order with receives from oneself.
TEST_F(SendRecv, SelfSendRecvInGroup) {
  std::vector<Message> messages = {
      {rank, rank, 0, 1, alloyUint8},
      {rank, rank, 1, kSlotBytes + 3, alloyUint8},
      {rank, rank, 2, 0, alloyFloat32},
      {rank, rank, 3, 1001, alloyFloat64},
      {rank, rank, 4, (size_t{3} << 20) / 2 + 1, alloyFloat16},
  };
  DeviceBuffer send, recv;
  std::vector<uint8_t> expected;
  prepare(messages, 1, &send, &recv, &expected);
  // receives and sends interleaved, each kind in index order
  ALLOY_EXPECT_OK(alloyGroupStart());
  const std::vector<std::pair<bool, int>> sequence = {{false, 0}, {true, 0}, {true, 1}, {false, 1}, {true, 2},
                                                      {true, 3}, {false, 2}, {false, 3}, {false, 4}, {true, 4}};
  for (const auto& [isSend, k] : sequence) {
    const Message& m = messages[k];
    if (isSend) ALLOY_EXPECT_OK(alloySend(send.get() + m.sendOffset, m.count, m.type, rank, comm, stream));
    else ALLOY_EXPECT_OK(alloyRecv(recv.get() + m.recvOffset, m.count, m.type, rank, comm, stream));
  }
  ALLOY_EXPECT_OK(alloyGroupEnd());
  check(recv, expected, "self receives");
}

// A lone send and a lone receive, outside any group: rank 0 to rank 1 (larger than what the rings hold,
// so the sender waits for the receiver), then a small one back; the other ranks take no part.
TEST_F(SendRecv, SingleSendRecvOutsideGroup) {
  if (nranks < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<Message> messages = {{0, 1, 0, (size_t{24} << 20) + 5, alloyUint8},
                                   {1, 0, 1, 3, alloyFloat32},
                                   {0, 1, 2, 1, alloyInt8}};
  DeviceBuffer send, recv;
  std::vector<uint8_t> expected;
  prepare(messages, 1, &send, &recv, &expected);
  for (const Message& m : messages) {
    if (m.src == rank) ALLOY_EXPECT_OK(alloySend(send.get() + m.sendOffset, m.count, m.type, m.dst, comm, stream));
    if (m.dst == rank) ALLOY_EXPECT_OK(alloyRecv(recv.get() + m.recvOffset, m.count, m.type, m.src, comm, stream));
  }
  check(recv, expected, "lone receives");
}

}  // namespace
}  // namespace alloytest
