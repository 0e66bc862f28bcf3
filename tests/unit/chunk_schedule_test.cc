// A byte-level simulator of the point-to-point engine's protocol on one channel pair: the sender's and
// receiver's chunk walks (the same forEachChunk the kernel runs) drive a ring of slots with the
// posted/consumed counters, interleaved at random; every destination byte must equal its source byte,
// gaps must keep their poison, and both sides must end on the same sequence number.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device_comm.h"

namespace {

struct Chunk {
  int segment;
  size_t offset;
  size_t length;
  uint64_t sequence;
};

std::vector<Chunk> walk(const std::vector<size_t>& sizes, int channels, size_t slotBytes, int ch, uint64_t base,
                        uint64_t* end) {
  std::vector<Chunk> chunks;
  alloy::forEachChunk(
      static_cast<int>(sizes.size()), [&](int s) { return sizes[s]; }, channels, slotBytes, ch, base, end,
      [&](int s, size_t offset, size_t length, uint64_t seq) {
        chunks.push_back(Chunk{s, offset, length, seq});
        return true;
      });
  return chunks;
}

}  // namespace

TEST(ChunkSchedule, RingDeliversEveryByteExactlyOnce) {
  std::random_device device;
  const unsigned seed = device();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int trial = 0; trial < 200; ++trial) {
    const int channels = 1 + static_cast<int>(rng() % 16);
    const int slots = 2 + static_cast<int>(rng() % 3);
    const size_t slotBytes = 4096 * (1 + rng() % 16);
    std::vector<size_t> sizes(1 + rng() % 4);
    std::vector<std::vector<uint8_t>> src(sizes.size()), dst(sizes.size());
    for (size_t s = 0; s < sizes.size(); ++s) {
      const int kind = static_cast<int>(rng() % 4);
      sizes[s] = kind == 0 ? 0 : kind == 1 ? 1 + rng() % 64 : rng() % (3 * slotBytes * channels + 17);
      src[s].resize(sizes[s]);
      for (uint8_t& b : src[s]) b = static_cast<uint8_t>(rng());
      dst[s].assign(sizes[s] + 64, 0xA5);  // 64 poisoned bytes past the end must stay poisoned
    }
    for (int ch = 0; ch < channels; ++ch) {
      const uint64_t base = rng() % 1000;  // counters carried over from earlier operations
      uint64_t sendEnd = 0, recvEnd = 0;
      std::vector<Chunk> sends = walk(sizes, channels, slotBytes, ch, base, &sendEnd);
      std::vector<Chunk> recvs = walk(sizes, channels, slotBytes, ch, base, &recvEnd);
      ASSERT_EQ(sendEnd, recvEnd);
      ASSERT_EQ(sends.size(), recvs.size());
      std::vector<std::vector<uint8_t>> ring(slots, std::vector<uint8_t>(slotBytes, 0));
      uint64_t posted = base, consumed = base;
      size_t nextSend = 0, nextRecv = 0;
      while (nextRecv < recvs.size()) {
        const bool canSend = nextSend < sends.size() && sends[nextSend].sequence < consumed + slots;
        const bool canRecv = posted > recvs[nextRecv].sequence;
        ASSERT_TRUE(canSend || canRecv) << "protocol deadlock on channel " << ch;
        if (canSend && (!canRecv || rng() % 2)) {
          const Chunk& c = sends[nextSend++];
          ASSERT_LE(c.length, slotBytes);
          std::memcpy(ring[c.sequence % slots].data(), src[c.segment].data() + c.offset, c.length);
          posted = c.sequence + 1;
        } else {
          const Chunk& c = recvs[nextRecv++];
          std::memcpy(dst[c.segment].data() + c.offset, ring[c.sequence % slots].data(), c.length);
          consumed = c.sequence + 1;
        }
      }
    }
    for (size_t s = 0; s < sizes.size(); ++s) {
      ASSERT_EQ(0, std::memcmp(dst[s].data(), src[s].data(), sizes[s])) << "trial " << trial << " segment " << s;
      for (size_t i = sizes[s]; i < dst[s].size(); ++i) ASSERT_EQ(dst[s][i], 0xA5) << "wrote past the end";
    }
  }
}

TEST(ChunkSchedule, ChunksAreSlotSizedAndAligned) {
  EXPECT_EQ(alloy::chunkBytesFor(0, 16, 1 << 18), 0u);
  EXPECT_EQ(alloy::chunkBytesFor(1, 16, 1 << 18), 4096u);
  EXPECT_EQ(alloy::chunkBytesFor(1 << 20, 16, 1 << 18), 65536u);
  EXPECT_EQ(alloy::chunkBytesFor(1ull << 30, 16, 1 << 18), 1u << 18);
  for (size_t bytes : {4095ul, 4097ul, 123457ul, 99999999ul}) EXPECT_EQ(alloy::chunkBytesFor(bytes, 3, 1 << 18) % 16, 0u);
}
