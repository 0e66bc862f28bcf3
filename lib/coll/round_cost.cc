#include "round_cost.h"

namespace alloy {

bool fewerRoundsPay(int flatPeers, int rounds, bool hostStep, size_t bytes) {
  constexpr double kRoundMicros = 30, kPeerMicros = 6, kBytesPerMicro = 3000, kHostStepMicros = 10;
  const double perPeer = kPeerMicros + static_cast<double>(bytes) / kBytesPerMicro;
  const double flat = kRoundMicros + flatPeers * perPeer;
  const double several = (hostStep ? kHostStepMicros : 0) + rounds * (kRoundMicros + perPeer);
  return several < flat;
}

}  // namespace alloy
