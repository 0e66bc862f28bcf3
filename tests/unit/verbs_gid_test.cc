// Which GID the verbs transport picks from a port's GID table, on hand-built tables: RoCE v2 before v1,
// IPv4-mapped before global IPv6 before link-local, the lowest index on a tie; ALLOY_IB_GID_INDEX checked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.h"
#include "gid_select.h"

namespace {

using alloy::verbs::chooseGid;
using alloy::verbs::GidEntry;
using alloy::verbs::GidType;
using alloy::verbs::LinkLayer;

constexpr int kAuto = -1;
constexpr int kUntouched = -99;

GidEntry zero(int index, GidType type = GidType::RoceV2) { return GidEntry{index, {}, type}; }

// ::ffff:10.0.0.<host>
GidEntry ipv4(int index, GidType type, uint8_t host) {
  return GidEntry{index, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, host}, type};
}

// 2001:db8::<host>
GidEntry globalV6(int index, GidType type, uint8_t host) {
  return GidEntry{index, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host}, type};
}

// fe80::<host>, or another address in fe80::/10 with second byte `second`.
GidEntry linkLocal(int index, GidType type, uint8_t host, uint8_t second = 0x80) {
  return GidEntry{index, {0xfe, second, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host}, type};
}

int chosen(LinkLayer link, const std::vector<GidEntry>& table, int forced = kAuto) {
  int index = kUntouched;
  EXPECT_EQ(chooseGid(link, table, forced, &index), alloySuccess) << alloy::lastError();
  return index;
}

void expectFailure(LinkLayer link, const std::vector<GidEntry>& table, int forced, alloyResult_t code,
                   const std::string& message) {
  alloy::clearLastError();
  int index = kUntouched;
  EXPECT_EQ(chooseGid(link, table, forced, &index), code);
  EXPECT_EQ(std::string(alloy::lastError()), message);
  EXPECT_EQ(index, kUntouched);
}

TEST(GidSelect, RoceV2Ipv4BeatsIpv6BeatsLinkLocal) {
  std::vector<GidEntry> table = {linkLocal(0, GidType::RoceV1, 1), linkLocal(1, GidType::RoceV2, 1),
                                 ipv4(2, GidType::RoceV1, 1),      globalV6(3, GidType::RoceV2, 1),
                                 ipv4(4, GidType::RoceV2, 1),      ipv4(5, GidType::RoceV2, 2)};
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 4);
  table.pop_back();
  table.pop_back();
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 3);  // IPv6 global over link-local
  table.pop_back();
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 1);  // any v2 over v1, even a link-local one over IPv4
}

TEST(GidSelect, LowestIndexBreaksTiesWhateverTheOrder) {
  const std::vector<GidEntry> table = {ipv4(7, GidType::RoceV2, 7), globalV6(1, GidType::RoceV2, 1),
                                       ipv4(5, GidType::RoceV2, 5), ipv4(6, GidType::RoceV2, 6)};
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 5);
}

TEST(GidSelect, LinkLocalIsTheWholeFe80Slash10) {
  // febf:: is inside fe80::/10; fec0:: (old site-local) is not, and ranks as a global address.
  EXPECT_EQ(chosen(LinkLayer::Ethernet, {linkLocal(0, GidType::RoceV2, 1, 0xbf), linkLocal(1, GidType::RoceV2, 1, 0xc0)}),
            1);
  EXPECT_EQ(chosen(LinkLayer::Ethernet, {linkLocal(0, GidType::RoceV2, 1, 0x80), linkLocal(1, GidType::RoceV2, 1, 0xbf)}),
            0);
}

TEST(GidSelect, V1OnlyTableUsesTheBestV1) {
  const std::vector<GidEntry> table = {linkLocal(0, GidType::RoceV1, 1), globalV6(1, GidType::RoceV1, 1),
                                       ipv4(2, GidType::RoceV1, 1), zero(3, GidType::RoceV1)};
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 2);
}

TEST(GidSelect, ZeroAndIbEntriesAreSkippedOnEthernet) {
  const std::vector<GidEntry> table = {zero(0), ipv4(1, GidType::Ib, 1), zero(2, GidType::RoceV1),
                                       linkLocal(3, GidType::RoceV1, 1)};
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table), 3);
}

TEST(GidSelect, NoUsableRoceGidIsAnError) {
  expectFailure(LinkLayer::Ethernet, {zero(0), zero(1, GidType::RoceV1), zero(2)}, kAuto, alloyInvalidUsage,
                "no RoCE GID is usable: the port's GID table (3 entries) holds no non-zero RoCE v1 or v2 GID; "
                "give the interface an IP address, or set ALLOY_IB_GID_INDEX to the GID to use");
  expectFailure(LinkLayer::Ethernet, {}, kAuto, alloyInvalidUsage,
                "no RoCE GID is usable: the port's GID table (0 entries) holds no non-zero RoCE v1 or v2 GID; "
                "give the interface an IP address, or set ALLOY_IB_GID_INDEX to the GID to use");
  expectFailure(LinkLayer::Ethernet, {ipv4(0, GidType::Ib, 1)}, kAuto, alloyInvalidUsage,
                "no RoCE GID is usable: the port's GID table (1 entries) holds no non-zero RoCE v1 or v2 GID; "
                "give the interface an IP address, or set ALLOY_IB_GID_INDEX to the GID to use");
}

TEST(GidSelect, InfinibandUsesIndexZero) {
  EXPECT_EQ(chosen(LinkLayer::Infiniband, {globalV6(0, GidType::Ib, 1), globalV6(1, GidType::Ib, 2)}), 0);
  EXPECT_EQ(chosen(LinkLayer::Infiniband, {}), 0);  // the table is not consulted
}

TEST(GidSelect, ForcedIndexIsUsedAsGiven) {
  const std::vector<GidEntry> table = {linkLocal(0, GidType::RoceV1, 1), ipv4(1, GidType::RoceV2, 1),
                                       globalV6(3, GidType::Ib, 1)};
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table, 0), 0);  // a v1 link-local GID, because the user said so
  EXPECT_EQ(chosen(LinkLayer::Ethernet, table, 1), 1);
  EXPECT_EQ(chosen(LinkLayer::Infiniband, table, 3), 3);
}

TEST(GidSelect, ForcedIndexMustBeInTheTable) {
  const std::vector<GidEntry> table = {linkLocal(0, GidType::RoceV2, 1), ipv4(1, GidType::RoceV2, 1), zero(2)};
  expectFailure(LinkLayer::Ethernet, table, 7, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=7: the port's GID table has no entry 7; expected the index of a non-zero GID "
                "(usable: 0, 1)");
  expectFailure(LinkLayer::Infiniband, table, 5, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=5: the port's GID table has no entry 5; expected the index of a non-zero GID "
                "(usable: 0, 1)");
  expectFailure(LinkLayer::Ethernet, table, -2, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=-2: the port's GID table has no entry -2; expected the index of a non-zero GID "
                "(usable: 0, 1)");
  expectFailure(LinkLayer::Ethernet, {}, 0, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=0: the port's GID table has no entry 0; expected the index of a non-zero GID "
                "(usable: none)");
}

TEST(GidSelect, ForcedIndexMustNotBeAllZeros) {
  const std::vector<GidEntry> table = {linkLocal(0, GidType::RoceV2, 1), ipv4(1, GidType::RoceV2, 1), zero(2)};
  expectFailure(LinkLayer::Ethernet, table, 2, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=2: GID 2 is all zeros (an unused slot); expected the index of a non-zero GID "
                "(usable: 0, 1)");
  expectFailure(LinkLayer::Infiniband, {zero(0, GidType::Ib)}, 0, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=0: GID 0 is all zeros (an unused slot); expected the index of a non-zero GID "
                "(usable: none)");
}

TEST(GidSelect, LongUsableListsAreCut) {
  std::vector<GidEntry> table;
  for (int i = 0; i < 20; ++i) table.push_back(ipv4(i, GidType::RoceV2, static_cast<uint8_t>(i)));
  expectFailure(LinkLayer::Ethernet, table, 20, alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=20: the port's GID table has no entry 20; expected the index of a non-zero GID "
                "(usable: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...)");
}

// The kernel writes "RoCE v2" or "IB/RoCE v1" with a newline; anything else is not trusted as v2.
TEST(VerbsGidType, SysfsTextGivesTheType) {
  using alloy::verbs::roceGidType;
  EXPECT_EQ(roceGidType("RoCE v2\n"), GidType::RoceV2);
  EXPECT_EQ(roceGidType("RoCE v2"), GidType::RoceV2);
  EXPECT_EQ(roceGidType("IB/RoCE v1\n"), GidType::RoceV1);
  EXPECT_EQ(roceGidType(""), GidType::RoceV1) << "an unreadable file";
  EXPECT_EQ(roceGidType("RoCE v2x\n"), GidType::RoceV1);
  EXPECT_EQ(roceGidType("roce v2\n"), GidType::RoceV1);
}

}  // namespace
