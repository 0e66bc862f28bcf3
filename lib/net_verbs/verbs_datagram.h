// The verbs transport's UD queue pair: handshake messages (verbs_wire.h) to and from any peer, without a
// connection. Receives are posted up front into a ring of registered buffers and reposted as they are
// read; sends go from a second ring and a send that finds every buffer busy is dropped, which the
// handshake survives as it survives a lost datagram (the requester repeats its request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "verbs_handles.h"
#include "verbs_queue_pair.h"

namespace alloy {
namespace verbs {

class Datagrams {
 public:
  // The queue pair, its completion queue and both rings; alloySystemError naming the failed call.
  static alloyResult_t create(const VerbsLibrary& lib, const QueuePairs& pairs, ibv_context* context, ibv_pd* pd,
                              std::unique_ptr<Datagrams>* out);

  uint32_t qpn() const { return qp_->qp_num; }
  // Sends `bytes` (at most kMessageBytes) to the peer's UD queue pair behind ah; false when dropped.
  bool send(ibv_ah* ah, uint32_t remoteQpn, const std::vector<uint8_t>& bytes);
  // Hands every message received since the last call to `deliver` and frees the buffers of finished
  // sends. Never blocks; returns whether anything completed.
  bool poll(const std::function<void(const uint8_t*, size_t)>& deliver);

  static constexpr size_t kMessageBytes = 128;

 private:
  explicit Datagrams(const VerbsLibrary& lib) : lib_(lib) {}
  bool postReceive(int slot);
  uint8_t* sendBuffer(int slot) { return buffers_.data() + (kReceives + slot) * kSlotBytes; }
  uint8_t* receiveBuffer(int slot) { return buffers_.data() + slot * kSlotBytes; }

  static constexpr int kReceives = 64;
  static constexpr int kSends = 32;
  static constexpr size_t kGrhBytes = 40;  // every UD receive starts with room for a global route header
  static constexpr size_t kSlotBytes = kGrhBytes + kMessageBytes;

  const VerbsLibrary& lib_;
  std::vector<uint8_t> buffers_;  // kReceives receive slots, then kSends send slots
  std::vector<int> freeSends_;
  // Declared in the order they are created; destroyed in reverse (the queue pair before its queue).
  VerbsPtr<ibv_mr> mr_;
  VerbsPtr<ibv_cq> cq_;
  VerbsPtr<ibv_qp> qp_;
  bool warned_ = false;
};

}  // namespace verbs
}  // namespace alloy
