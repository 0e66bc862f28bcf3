#include "round_cost.h"

namespace alloy {

bool fewerRoundsPay(int flatPeers, size_t flatBytes, int rounds, size_t roundBytes, bool hostStep) {
  constexpr double kRoundMicros = 30, kPeerMicros = 6, kBytesPerMicro = 3000, kHostStepMicros = 10;
  const auto perPeer = [](size_t bytes) { return kPeerMicros + static_cast<double>(bytes) / kBytesPerMicro; };
  const double flat = kRoundMicros + flatPeers * perPeer(flatBytes);
  const double several = (hostStep ? kHostStepMicros : 0) + rounds * (kRoundMicros + perPeer(roundBytes));
  return several < flat;
}

}  // namespace alloy
