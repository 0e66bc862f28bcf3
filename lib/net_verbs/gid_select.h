// Which GID of a port the verbs transport addresses its peers with. Plain types, no ibverbs header: the
// caller reads the port's GID table (ibv_query_gid and the GID type from sysfs or ibv_query_gid_ex) and
// this decides, so the rules can be tested without a NIC.
//
// Rules:
// - forcedIndex >= 0 (ALLOY_IB_GID_INDEX set), on either link layer: that index, which must be in the
//   table and hold a non-zero GID; otherwise alloyInvalidArgument naming ALLOY_IB_GID_INDEX. Its type is
//   not second-guessed: a RoCE v1 or link-local GID chosen by hand is the user's decision.
// - InfiniBand, automatic: index 0, without looking at the table. Index 0 always holds the port's
//   subnet prefix and GUID, and routing on an IB fabric uses LIDs, not the GID.
// - Ethernet (RoCE), automatic: only non-zero RoCE v1/v2 entries are candidates (all-zero entries are
//   unused slots; an entry typed Ib does not belong on an Ethernet port and is ignored). Among them:
//     1. RoCE v2 over v1 (v2 is UDP/IP and routable; v1 is limited to one L2 domain);
//     2. then an IPv4-mapped address (::ffff:a.b.c.d) over a global IPv6 one over a link-local
//        (fe80::/10) one: IPv4 is what RoCE fabrics are usually configured with, and a link-local
//        address cannot cross a router;
//     3. then the lowest index.
//   No candidate: alloyInvalidUsage, saying that no RoCE GID is usable and suggesting ALLOY_IB_GID_INDEX.
// forcedIndex == -1 means automatic; any other negative value is not in a table and is rejected as such.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "alloy.h"

namespace alloy {
namespace verbs {

enum class GidType { Ib, RoceV1, RoceV2 };
enum class LinkLayer { Infiniband, Ethernet };

struct GidEntry {
  int index;                     // position in the port's GID table
  std::array<uint8_t, 16> gid;   // network byte order, as ibverbs stores it
  GidType type;
};

alloyResult_t chooseGid(LinkLayer link, const std::vector<GidEntry>& table, int forcedIndex, int* chosenIndex);

// The type of an Ethernet port's GID from what the kernel writes in sysfs
// (<ibdev_path>/ports/<port>/gid_attrs/types/<index>): "RoCE v2" (newline and all) is v2. "IB/RoCE v1",
// and anything else, an unreadable file ("") included, counts as v1, the type chooseGid prefers less.
GidType roceGidType(const std::string& sysfsText);

}  // namespace verbs
}  // namespace alloy
