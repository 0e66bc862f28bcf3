#include "net_rounds.h"

#include <algorithm>

namespace alloy {
namespace {

// Lays one peer's segments end to end and cuts them into windows of `capacity` bytes: window r belongs
// to round r. copy(r, offsetInBox, segment, segmentOffset, length) is called for every piece of a segment
// within one window, message(r, bytes) once per non-empty window.
template <typename Copy, typename Message>
void cutPeer(const std::vector<P2pSegment>& segments, size_t capacity, Copy copy, Message message) {
  size_t streamBytes = 0;  // where the next segment starts in the peer's byte stream
  for (const P2pSegment& s : segments) {
    for (size_t done = 0; done < s.bytes;) {
      const size_t at = streamBytes + done;
      const size_t length = std::min(s.bytes - done, capacity - at % capacity);
      copy(at / capacity, at % capacity, s, done, length);
      done += length;
    }
    streamBytes += s.bytes;
  }
  for (size_t r = 0; r * capacity < streamBytes; ++r) message(r, std::min(capacity, streamBytes - r * capacity));
}

}  // namespace

std::vector<NetRound> cutIntoRounds(const RemoteChannel& channel, const std::vector<std::vector<P2pSegment>>& sends,
                                    const std::vector<std::vector<P2pSegment>>& recvs,
                                    const std::vector<int>& localIndexOf, int operation) {
  std::vector<NetRound> rounds;
  auto round = [&](size_t r) -> NetRound& {
    while (rounds.size() <= r) {
      rounds.emplace_back();
      rounds.back().operation.operation = operation;
      rounds.back().operation.round = rounds.size() - 1;
    }
    return rounds[r];
  };
  const size_t capacity = channel.capacity();
  for (int peer = 0; peer < static_cast<int>(localIndexOf.size()); ++peer) {
    if (localIndexOf[peer] >= 0) continue;
    cutPeer(
        sends[peer], capacity,
        [&](size_t r, size_t at, const P2pSegment& s, size_t offset, size_t length) {
          char* box = channel.outbox(peer, RemoteChannel::boxOf(r));
          round(r).stageIn.push_back(StagedCopy{box + at, s.src + offset, length});
        },
        [&](size_t r, size_t bytes) { round(r).operation.sends.push_back(NetMessage{peer, bytes}); });
    cutPeer(
        recvs[peer], capacity,
        [&](size_t r, size_t at, const P2pSegment& s, size_t offset, size_t length) {
          const char* box = channel.inbox(peer, RemoteChannel::boxOf(r));
          round(r).stageOut.push_back(StagedCopy{s.dst + offset, box + at, length});
        },
        [&](size_t r, size_t bytes) { round(r).operation.recvs.push_back(NetMessage{peer, bytes}); });
  }
  return rounds;
}

}  // namespace alloy
