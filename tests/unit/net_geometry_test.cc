// The network channel's staging geometry (lib/net/net_geometry.h): the capacity per peer and round that
// keeps a rank's boxes within ALLOY_NET_STAGING_BYTES, derived alike on every rank. The exact values
// below are worked out by hand in the comments beside them, not by the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "log.h"
#include "net_geometry.h"

namespace {

using alloy::net::fitNetGeometry;
using alloy::net::kNetFloorBytes;
using alloy::net::kNetPageBytes;
using alloy::net::mostRemoteRanks;
using alloy::net::netBoxBytes;
using alloy::net::NetGeometry;

constexpr size_t kMiB = size_t{1} << 20;
constexpr NetGeometry kDefault{4, kMiB};  // ALLOY_NET_SLOTS, ALLOY_NET_SLOT_BYTES unset
constexpr size_t kBudget = 256 * kMiB;    // ALLOY_NET_STAGING_BYTES unset

// hosts x perHost ranks, a host's ranks spread over the job (rank r on host r % hosts), as a scheduler
// that places ranks round-robin would.
std::vector<uint64_t> evenHosts(int hosts, int perHost) {
  std::vector<uint64_t> hostOf(static_cast<size_t>(hosts) * perHost);
  for (size_t r = 0; r < hostOf.size(); ++r) hostOf[r] = 1000 + r % hosts;
  return hostOf;
}

void expectGeometry(NetGeometry expected, NetGeometry actual) {
  EXPECT_EQ(expected.slots, actual.slots);
  EXPECT_EQ(expected.slotBytes, actual.slotBytes);
  EXPECT_EQ(expected.eagerBytes, actual.eagerBytes);
}

// Sets an environment variable for one scope, and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(NetGeometry, MostRemoteRanksIsTheSmallestHostsView) {
  EXPECT_EQ(0u, mostRemoteRanks({}));
  EXPECT_EQ(0u, mostRemoteRanks({7, 7, 7}));
  EXPECT_EQ(1u, mostRemoteRanks({1, 2}));
  // Hosts of 1, 3 and 4 ranks, interleaved: the lone rank has 7 elsewhere, whatever the order.
  EXPECT_EQ(7u, mostRemoteRanks({5, 9, 5, 3, 9, 5, 9, 9}));
  EXPECT_EQ(1016u, mostRemoteRanks(evenHosts(128, 8)));
}

TEST(NetGeometry, OneHostNeedsNoStaging) {
  // No rank on another host: nothing to fit, however small the budget.
  expectGeometry(kDefault, fitNetGeometry(std::vector<uint64_t>(16, 42), kDefault, 1));
  EXPECT_EQ(0u, netBoxBytes(0, kDefault));
}

TEST(NetGeometry, SmallJobsKeepTheDefault) {
  // 2 x 8: 8 remote ranks, 4 x 8 x 4 MiB = 128 MiB.
  expectGeometry(kDefault, fitNetGeometry(evenHosts(2, 8), kDefault, kBudget));
  // 3 x 8: 16 remote, 4 x 16 x 4 MiB = 256 MiB, exactly the budget.
  expectGeometry(kDefault, fitNetGeometry(evenHosts(3, 8), kDefault, kBudget));
  EXPECT_EQ(kBudget, netBoxBytes(16, kDefault));
}

TEST(NetGeometry, TheBudgetShrinksLargerJobs) {
  // 17 single-rank hosts (16 remote) fit exactly. 18 (17 remote): 4 x 17 = 68 copies; 256 MiB / 68 =
  // 3947580.2, 963 pages = 3944448; 4 chunks of at most 1 MiB, 3944448 / 4 = 986112 -> 240 pages = 983040.
  expectGeometry(kDefault, fitNetGeometry(evenHosts(17, 1), kDefault, kBudget));
  expectGeometry(NetGeometry{4, 983040}, fitNetGeometry(evenHosts(18, 1), kDefault, kBudget));
  // 8 x 8: 56 remote; 256 MiB / 224 = 1198372.6, 292 pages = 1196032; 2 chunks of 146 pages = 598016.
  expectGeometry(NetGeometry{2, 598016}, fitNetGeometry(evenHosts(8, 8), kDefault, kBudget));
  // 128 x 8 (1,024 ranks): 1016 remote; 256 MiB / 4064 = 66052.2, 16 pages = 65536: one chunk, and
  // 4 x 1016 x 64 KiB = 266338304 bytes, within the budget.
  const NetGeometry at1024 = fitNetGeometry(evenHosts(128, 8), kDefault, kBudget);
  expectGeometry(NetGeometry{1, 65536}, at1024);
  EXPECT_EQ(266338304u, netBoxBytes(1016, at1024));
}

TEST(NetGeometry, TheFloorExceedsTheBudget) {
  // 1,024 x 8 (8,192 ranks): 8184 remote; 256 MiB / 32736 = 8200 bytes, below the floor: 64 KiB per peer,
  // 4 x 8184 x 64 KiB = 2145386496 bytes (2 GiB), over the budget.
  const NetGeometry g = fitNetGeometry(evenHosts(1024, 8), kDefault, kBudget);
  expectGeometry(NetGeometry{1, kNetFloorBytes}, g);
  EXPECT_EQ(2145386496u, netBoxBytes(8184, g));
  // A geometry asked for below the floor is kept as it is: the floor never grows a round.
  expectGeometry(NetGeometry{2, 8192}, fitNetGeometry(evenHosts(1024, 1), NetGeometry{2, 8192}, kMiB));
  // Chunks of 3 pages: 64 KiB (16 pages) takes 6 of them, whole pages rounded up to stay at the floor:
  // 6 x 3 pages = 73728 bytes, not 6 x 2 pages below it; so too where the budget allows exactly the floor
  // (16 single-rank hosts, 15 remote: 4 x 15 x 64 KiB).
  expectGeometry(NetGeometry{6, 3 * kNetPageBytes},
                 fitNetGeometry(evenHosts(1024, 1), NetGeometry{64, 3 * kNetPageBytes}, kMiB));
  expectGeometry(NetGeometry{6, 3 * kNetPageBytes},
                 fitNetGeometry(evenHosts(16, 1), NetGeometry{64, 3 * kNetPageBytes}, 60 * kNetFloorBytes));
}

TEST(NetGeometry, UnevenHostsFitTheRankWithTheMostPeers) {
  // Hosts of 1, 3 and 4 ranks. The lone rank has 7 elsewhere: 4 x 7 x 4 MiB = 112 MiB, over 64 MiB;
  // 64 MiB / 28 = 2396745.1, 585 pages = 2396160; 3 chunks, 2396160 / 3 = 798720 = 195 pages.
  // A rank of the 4-rank host, with 4 elsewhere, would fit the default (64 MiB) by its own count;
  // it must not use it, or its rounds and inbox layout would differ from the lone rank's.
  const std::vector<uint64_t> hostOf = {5, 9, 5, 3, 9, 5, 9, 9};
  expectGeometry(NetGeometry{3, 798720}, fitNetGeometry(hostOf, kDefault, 64 * kMiB));
  EXPECT_LE(netBoxBytes(4, kDefault), 64 * kMiB);
}

TEST(NetGeometry, ChunksStayWithinTheSizeAskedFor) {
  // 8 chunks of 64 KiB, 16 single-rank hosts (15 remote), 16 MiB: 4 x 15 x 512 KiB = 30 MiB is over;
  // 16 MiB / 60 = 279620.3, 68 pages = 278528; 5 chunks of at most 64 KiB, 278528 / 5 = 55705.6 ->
  // 13 pages = 53248.
  expectGeometry(NetGeometry{5, 53248}, fitNetGeometry(evenHosts(16, 1), NetGeometry{8, 65536}, 16 * kMiB));
}

// Over many layouts, geometries and budgets: the result is the same whatever the order of the ranks, is
// never above what was asked for, is in whole pages, fits the budget unless the floor stops it, and
// wastes less than a page per chunk of what the budget allows.
TEST(NetGeometry, PropertiesHoldOverManyJobs) {
  std::mt19937_64 random(12);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint64_t> hostOf;
    const int hosts = 1 + static_cast<int>(random() % 40);
    for (int h = 0; h < hosts; ++h) hostOf.insert(hostOf.end(), 1 + random() % 9, static_cast<uint64_t>(h));
    const NetGeometry most{1 + static_cast<int>(random() % 64), kNetPageBytes * (1 + random() % 512)};
    const size_t budget = kMiB * (1 + random() % 512);
    const NetGeometry g = fitNetGeometry(hostOf, most, budget);
    const std::string where = "trial " + std::to_string(trial);
    std::vector<uint64_t> shuffled = hostOf;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    const NetGeometry again = fitNetGeometry(shuffled, most, budget);
    ASSERT_EQ(g.slots, again.slots) << where;
    ASSERT_EQ(g.slotBytes, again.slotBytes) << where;
    ASSERT_GE(g.slots, 1) << where;
    ASSERT_LE(g.slots, most.slots) << where;
    ASSERT_GT(g.slotBytes, 0u) << where;
    ASSERT_EQ(0u, g.slotBytes % kNetPageBytes) << where;
    ASSERT_LE(g.slotBytes, most.slotBytes) << where;
    const size_t remote = mostRemoteRanks(hostOf);
    if (netBoxBytes(remote, most) <= budget) {
      ASSERT_EQ(most.capacity(), g.capacity()) << where;
      continue;
    }
    ASSERT_LE(g.capacity(), most.capacity()) << where;
    const size_t allowed = budget / (4 * remote), least = std::min(most.capacity(), kNetFloorBytes);
    const size_t slack = static_cast<size_t>(g.slots) * kNetPageBytes;
    ASSERT_GE(g.capacity(), least) << where;
    if (netBoxBytes(remote, g) > budget) {  // only at the floor, and then by less than a page per chunk
      ASSERT_LT(g.capacity(), least + slack) << where;
      continue;
    }
    ASSERT_LT(allowed - g.capacity(), slack + kNetPageBytes) << where;
  }
}

// The eager slots: ALLOY_NET_EAGER_BYTES, at most a quarter of the capacity (so that the 4 slots never
// take more than one box's inbox), in whole cache lines; fitNetGeometry keeps the value asked for, and
// the slots shrink with the capacity.
TEST(NetGeometry, EagerSlotsFollowTheCapacity) {
  EXPECT_EQ(4, alloy::net::kNetEagerSlots);
  EXPECT_EQ(64 * 1024u, kDefault.eagerSlotBytes());  // 4 MiB rounds: the 64 KiB asked for
  EXPECT_EQ(16 * 1024u, (NetGeometry{1, kNetFloorBytes}.eagerSlotBytes()));  // at the floor: a quarter
  EXPECT_EQ(4096u, (NetGeometry{4, 4096}.eagerSlotBytes()));
  EXPECT_EQ(0u, (NetGeometry{4, kMiB, 0}.eagerSlotBytes()));      // ALLOY_NET_EAGER_BYTES=0: none
  EXPECT_EQ(64u, (NetGeometry{4, kMiB, 100}.eagerSlotBytes()));   // whole cache lines
  EXPECT_EQ(0u, (NetGeometry{4, kMiB, 63}.eagerSlotBytes()));
  const NetGeometry asked{4, kMiB, 12345};
  const NetGeometry at1024 = fitNetGeometry(evenHosts(128, 8), asked, kBudget);
  EXPECT_EQ(12345u, at1024.eagerBytes);
  EXPECT_EQ(12288u, at1024.eagerSlotBytes());
  EXPECT_EQ(16 * 1024u, fitNetGeometry(evenHosts(128, 8), kDefault, kBudget).eagerSlotBytes());
  {
    ScopedEnv unset("ALLOY_NET_EAGER_BYTES", nullptr);
    EXPECT_EQ(alloy::net::kNetDefaultEagerBytes, alloy::net::netGeometry().eagerBytes);
  }
  {
    ScopedEnv set("ALLOY_NET_EAGER_BYTES", "0");
    EXPECT_EQ(0u, alloy::net::netGeometry().eagerBytes);
  }
}

TEST(NetGeometry, EnvironmentBoundsFallBackToTheDefault) {
  const char* kVar = "ALLOY_NET_STAGING_BYTES";
  {
    ScopedEnv unset(kVar, nullptr);
    EXPECT_EQ(alloy::net::kNetDefaultStagingBytes, alloy::net::netStagingBudget());
  }
  // 1 MiB .. 1 TiB, decimal; anything else is warned about and replaced by the default.
  const struct {
    const char* value;
    size_t expected;
  } cases[] = {
      {"1048576", kMiB},
      {"1048575", alloy::net::kNetDefaultStagingBytes},
      {"1099511627776", size_t{1} << 40},
      {"1099511627777", alloy::net::kNetDefaultStagingBytes},
      {"67108864", 64 * kMiB},
      {"64M", alloy::net::kNetDefaultStagingBytes},
      {"-1", alloy::net::kNetDefaultStagingBytes},
  };
  for (const auto& c : cases) {
    ScopedEnv set(kVar, c.value);
    EXPECT_EQ(c.expected, alloy::net::netStagingBudget()) << kVar << "=" << c.value;
  }
  // The per-peer bound: ALLOY_NET_SLOT_BYTES rounds down to pages, and out of 4 KiB..64 MiB falls back.
  {
    ScopedEnv bytes("ALLOY_NET_SLOT_BYTES", "5000");
    EXPECT_EQ(kNetPageBytes, alloy::net::netGeometry().slotBytes);
  }
  {
    ScopedEnv bytes("ALLOY_NET_SLOT_BYTES", "4095");
    EXPECT_EQ(kMiB, alloy::net::netGeometry().slotBytes);
  }
  {
    ScopedEnv slots("ALLOY_NET_SLOTS", "65");
    EXPECT_EQ(4, alloy::net::netGeometry().slots);
  }
}

TEST(NetGeometry, CreationReadsTheEnvironmentAndWarnsOverBudget) {
  ScopedEnv slots("ALLOY_NET_SLOTS", "2");
  ScopedEnv bytes("ALLOY_NET_SLOT_BYTES", "262144");
  ScopedEnv budget("ALLOY_NET_STAGING_BYTES", "8388608");
  // 8 single-rank hosts: 7 remote x 4 x 512 KiB = 14 MiB, over 8 MiB; 8 MiB / 28 = 299593.1, 73 pages
  // = 299008; 2 chunks of at most 256 KiB, 299008 / 2 = 149504 -> 36 pages = 147456.
  expectGeometry(NetGeometry{2, 147456}, alloy::net::netGeometry(evenHosts(8, 1), false));
  if (alloy::logLevel() < alloy::LogLevel::Warn) GTEST_SKIP() << "ALLOY_DEBUG hides warnings";
  // Shrunk to fit the budget: no warning (an INFO line).
  ::testing::internal::CaptureStderr();
  alloy::net::netGeometry(evenHosts(8, 1), true);
  EXPECT_EQ(std::string::npos, ::testing::internal::GetCapturedStderr().find("ALLOY_NET_STAGING_BYTES"));
  // 200 single-rank hosts: 8 MiB / (4 x 199) = 10538, below the floor; 4 x 199 x 64 KiB = 52166656.
  ::testing::internal::CaptureStderr();
  expectGeometry(NetGeometry{1, kNetFloorBytes}, alloy::net::netGeometry(evenHosts(200, 1), true));
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(std::string::npos, warned.find("WARN net: the staging of a rank with 199 ranks on other hosts takes "
                                           "52166656 bytes at 65536 bytes per peer and round"))
      << warned;
  EXPECT_NE(std::string::npos, warned.find("above ALLOY_NET_STAGING_BYTES=8388608")) << warned;
}

}  // namespace
