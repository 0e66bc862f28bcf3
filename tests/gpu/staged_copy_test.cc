// The stream's copies between GPU buffers and the network channel's staging: below kRowsBelowBytes they
// go as two-row copies (and the last two bytes again where the count is odd) so that a copy engine runs
// them (lib/coll/staged_copy.h). Every byte must land, at odd offsets too, and nothing around it.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "staged_copy.h"

namespace alloytest {
namespace {

class StagedCopies : public CommTest {
 protected:
  // Sizes on both sides of the two-row path's limits and of odd counts.
  static std::vector<size_t> sizes() {
    std::vector<size_t> out;
    for (size_t n = 1; n <= 40; ++n) out.push_back(n);
    for (size_t n : {1023, 1024, 1025, 4093, 4094, 4095, 4096, 4097, 9000}) out.push_back(n);
    return out;
  }
  static constexpr size_t kOffset = 5;  // odd, so that no copy starts aligned
  static constexpr size_t kSpace = 16384;
};

TEST_F(StagedCopies, DeviceToHostEverySmallSize) {
  DeviceBuffer src(kSpace);
  PinnedBuffer dst(kSpace);
  ASSERT_TRUE(src.ok() && dst.get() != nullptr);
  for (size_t n : sizes()) {
    SCOPED_TRACE(std::to_string(n) + " bytes to the host");
    const std::vector<uint8_t> data = genVector(streamOf(seed, n, rank), kSpace);
    src.upload(data, 0, stream);
    std::vector<uint8_t> expected = genVector(streamOf(seed, n, rank, 1), kSpace);  // what dst held before
    std::memcpy(dst.get(), expected.data(), kSpace);
    std::memcpy(expected.data() + kOffset, data.data() + 2 * kOffset, n);
    const alloy::StagedCopy copy{dst.get() + kOffset, src.get() + 2 * kOffset, n};
    ALLOY_ASSERT_OK(alloy::enqueueStagedCopy(copy, stream));
    CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
    EXPECT_TRUE(bytesEqual(expected.data(), dst.get(), kSpace, "staging"));
  }
}

TEST_F(StagedCopies, HostToDeviceEverySmallSize) {
  PinnedBuffer src(kSpace);
  DeviceBuffer dst(kSpace);
  ASSERT_TRUE(src.get() != nullptr && dst.ok());
  for (size_t n : sizes()) {
    SCOPED_TRACE(std::to_string(n) + " bytes to the device");
    const std::vector<uint8_t> data = genVector(streamOf(seed, n, rank), kSpace);
    std::memcpy(src.get(), data.data(), kSpace);
    std::vector<uint8_t> expected = genVector(streamOf(seed, n, rank, 1), kSpace);  // what dst held before
    dst.upload(expected, 0, stream);
    std::memcpy(expected.data() + kOffset, data.data() + 2 * kOffset, n);
    const alloy::StagedCopy copy{dst.get() + kOffset, src.get() + 2 * kOffset, n};
    ALLOY_ASSERT_OK(alloy::enqueueStagedCopy(copy, stream));
    const std::vector<uint8_t> got = dst.download(stream);
    EXPECT_TRUE(bytesEqual(expected.data(), got.data(), kSpace, "recvbuff"));
  }
}

}  // namespace
}  // namespace alloytest
