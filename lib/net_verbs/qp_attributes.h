// Settings of the reliable-connected queue pairs the verbs transport creates, and the path MTU two
// ports agree on. Plain ints, no ibverbs header, so that they can be tested without a NIC.
#pragma once

#include "alloy.h"

namespace alloy {
namespace verbs {

struct QpSettings {
  int timeout;       // ALLOY_IB_TIMEOUT, 1..31, default 20: local ACK timeout 4.096 us * 2^timeout (20: ~4.3 s)
  int retryCount;    // ALLOY_IB_RETRY_CNT, 0..7, default 7: retransmissions before the QP fails
  int rnrRetry;      // always 7 (infinite): see readQpSettings
  int serviceLevel;  // ALLOY_IB_SL, 0..15, default 0: InfiniBand service level (RoCE: mapped to a priority)
  int trafficClass;  // ALLOY_IB_TC, 0..255, default 0: GRH traffic class (RoCE v2: the IP DSCP/ECN byte)
};

// Reads the variables afresh. A value that is not a decimal integer in range is warned about once and
// replaced by its default, as every Alloy tuning knob is (alloy::envInt); this never fails.
alloyResult_t readQpSettings(QpSettings* out);

// The MTU a connection uses: the smaller of the two ports' active MTUs, in ibverbs' encoding (enum
// ibv_mtu: 1=256, 2=512, 3=1024, 4=2048, 5=4096). A value outside 1..5 is clamped into it rather than
// rejected: below 1 cannot be a real MTU and 256 works on every port; above 5 can only be an encoding
// newer than this code, whose ports also support 4096.
int pathMtu(int localActiveMtu, int remoteActiveMtu);

}  // namespace verbs
}  // namespace alloy
