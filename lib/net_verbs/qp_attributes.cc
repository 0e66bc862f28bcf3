#include "qp_attributes.h"

#include <algorithm>

#include "env.h"

namespace alloy {
namespace verbs {
namespace {

constexpr int kMinMtu = 1;  // IBV_MTU_256
constexpr int kMaxMtu = 5;  // IBV_MTU_4096

// The RNR retry count is 3 bits; 7 means "retry for ever". A receiver-not-ready NAK only says that the
// peer has not posted its receive yet, which for a collective means the peer is still busy with an
// earlier step, not that something failed: a finite count would turn a slow peer into a fatal
// IBV_WC_RNR_RETRY_EXC_ERR. A peer that never posts is caught by ALLOY_TIMEOUT_MS (the proxy thread's
// progress timeout) instead.
constexpr int kRnrRetryInfinite = 7;

}  // namespace

alloyResult_t readQpSettings(QpSettings* out) {
  QpSettings settings;
  // The ACK timeout is a 5-bit exponent; 0 would mean "wait for ever" and hide a dead peer.
  settings.timeout = static_cast<int>(envInt("ALLOY_IB_TIMEOUT", 20, 1, 31));
  settings.retryCount = static_cast<int>(envInt("ALLOY_IB_RETRY_CNT", 7, 0, 7));  // 3-bit field
  settings.rnrRetry = kRnrRetryInfinite;
  settings.serviceLevel = static_cast<int>(envInt("ALLOY_IB_SL", 0, 0, 15));  // 4-bit field
  settings.trafficClass = static_cast<int>(envInt("ALLOY_IB_TC", 0, 0, 255));  // 8-bit field
  *out = settings;
  return alloySuccess;
}

int pathMtu(int localActiveMtu, int remoteActiveMtu) {
  const int local = std::clamp(localActiveMtu, kMinMtu, kMaxMtu);
  const int remote = std::clamp(remoteActiveMtu, kMinMtu, kMaxMtu);
  return std::min(local, remote);
}

}  // namespace verbs
}  // namespace alloy
