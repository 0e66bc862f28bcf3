// One verbs connection: the RC queue pair shared with one peer transport (verbs_pairing.h), the
// handshake state that sets it up, and its operations in flight (verbs_ops.h).
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "transport.h"
#include "verbs_handles.h"
#include "verbs_ops.h"
#include "verbs_pairing.h"
#include "verbs_wire.h"

namespace alloy {
namespace verbs {

struct VerbsConnection : net::Connection {
  VerbsConnection(uint32_t index, const VerbsAddress& remote, int maxOutstanding)
      : index(index), remote(remote), ops(maxOutstanding), sourceMrs(maxOutstanding) {}

  const uint32_t index;  // position in the transport's list: the high half of its work requests' wr_id
  VerbsAddress remote;
  int peer = -1;  // the rank connect() named; -1 while only the peer's request created the pairing
  PairState state = PairState::None;
  uint32_t psn = 0;                // this side's first packet sequence number
  uint64_t requestCookie = 0;      // of this side's request (0: none sent)
  uint64_t acceptedCookie = 0;     // of the peer's request this side accepted (0: none)
  std::vector<uint8_t> reply;      // the reply to that request, for a repeat of it
  std::chrono::steady_clock::time_point lastRequest{};
  std::string failure;             // why the connection failed ("" while healthy)

  OpTable ops;
  // A source outside every registration is registered for its one operation (slot) and released when
  // the operation completes.
  std::vector<VerbsPtr<ibv_mr>> sourceMrs;
  // Declared last: destroyed first, before the memory registrations above are released.
  VerbsPtr<ibv_ah> ah;  // the peer's UD queue pair, for handshakes
  VerbsPtr<ibv_qp> qp;
};

}  // namespace verbs
}  // namespace alloy
