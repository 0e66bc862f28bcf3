#include "gid_select.h"

#include <string>

#include "error.h"

namespace alloy {
namespace verbs {
namespace {

constexpr int kListedIndices = 16;  // error messages list this many usable indices, then "..."

bool isZero(const GidEntry& e) {
  for (uint8_t byte : e.gid)
    if (byte != 0) return false;
  return true;
}

// ::ffff:a.b.c.d — how RoCE v2 carries an IPv4 address in a GID.
bool isIpv4Mapped(const GidEntry& e) {
  for (int i = 0; i < 10; ++i)
    if (e.gid[i] != 0) return false;
  return e.gid[10] == 0xff && e.gid[11] == 0xff;
}

bool isLinkLocal(const GidEntry& e) { return e.gid[0] == 0xfe && (e.gid[1] & 0xc0) == 0x80; }

// Smaller is better; the header's rules 1 and 2 in one number, the index breaking ties.
int rank(const GidEntry& e) {
  const int typeRank = e.type == GidType::RoceV2 ? 0 : 1;
  const int addressRank = isIpv4Mapped(e) ? 0 : isLinkLocal(e) ? 2 : 1;
  return typeRank * 3 + addressRank;
}

const GidEntry* find(const std::vector<GidEntry>& table, int index) {
  for (const GidEntry& e : table)
    if (e.index == index) return &e;
  return nullptr;
}

// "0, 1, 3" — what a user may set ALLOY_IB_GID_INDEX to — or "none".
std::string usableIndices(const std::vector<GidEntry>& table) {
  std::string text;
  int listed = 0;
  for (const GidEntry& e : table) {
    if (isZero(e)) continue;
    if (listed == kListedIndices) return text + ", ...";
    text += (listed++ == 0 ? "" : ", ") + std::to_string(e.index);
  }
  return listed == 0 ? "none" : text;
}

alloyResult_t checkForced(const std::vector<GidEntry>& table, int forcedIndex) {
  const GidEntry* e = find(table, forcedIndex);
  if (e == nullptr)
    return fail(alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=%d: the port's GID table has no entry %d; expected the index of a non-zero "
                "GID (usable: %s)",
                forcedIndex, forcedIndex, usableIndices(table).c_str());
  if (isZero(*e))
    return fail(alloyInvalidArgument,
                "ALLOY_IB_GID_INDEX=%d: GID %d is all zeros (an unused slot); expected the index of a non-zero GID "
                "(usable: %s)",
                forcedIndex, forcedIndex, usableIndices(table).c_str());
  return alloySuccess;
}

}  // namespace

alloyResult_t chooseGid(LinkLayer link, const std::vector<GidEntry>& table, int forcedIndex, int* chosenIndex) {
  if (forcedIndex != -1) {
    ALLOY_TRY(checkForced(table, forcedIndex));
    *chosenIndex = forcedIndex;
    return alloySuccess;
  }
  if (link == LinkLayer::Infiniband) {
    *chosenIndex = 0;
    return alloySuccess;
  }
  const GidEntry* best = nullptr;
  for (const GidEntry& e : table) {
    if (isZero(e) || e.type == GidType::Ib) continue;
    if (best == nullptr || rank(e) < rank(*best) || (rank(e) == rank(*best) && e.index < best->index)) best = &e;
  }
  if (best == nullptr)
    return fail(alloyInvalidUsage,
                "no RoCE GID is usable: the port's GID table (%zu entries) holds no non-zero RoCE v1 or v2 GID; "
                "give the interface an IP address, or set ALLOY_IB_GID_INDEX to the GID to use",
                table.size());
  *chosenIndex = best->index;
  return alloySuccess;
}

GidType roceGidType(const std::string& sysfsText) {
  size_t end = sysfsText.size();
  while (end > 0 && (sysfsText[end - 1] == '\n' || sysfsText[end - 1] == ' ')) --end;
  return sysfsText.compare(0, end, "RoCE v2") == 0 ? GidType::RoceV2 : GidType::RoceV1;
}

}  // namespace verbs
}  // namespace alloy
