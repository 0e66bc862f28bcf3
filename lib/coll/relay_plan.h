// The routes of alltoallv's rail relay (alltoallv_relay.h) as plain data: which blocks this rank packs,
// and the messages of its two launches in the order they are added, so that the plan can be checked
// without a GPU (tests/unit/relay_plan_test.cc simulates whole communicators with it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "topology.h"

namespace alloy {

// Where a message's bytes lie on this rank.
enum class RelayBuffer { kSend, kRecv, kPack, kRelay };

struct RelayMessage {
  int peer;
  bool isSend;
  RelayBuffer buffer;
  size_t offset;  // bytes into buffer
  size_t bytes;
};

struct RelayCopy {
  size_t packOffset, sendOffset, bytes;  // sendbuff -> pack scratch, on the copy engine
};

struct RelayPlan {
  std::vector<RelayCopy> packs;
  std::vector<RelayMessage> inside;  // launch 1: ranks of this host (CUDA IPC)
  std::vector<RelayMessage> along;   // launch 2: this rank's rail on other hosts (the network)
  size_t packBytes = 0, relayBytes = 0;
};

// This rank's plan, from its topology (rails on every rank), every rank's host (hostOf), its own blocks
// in bytes (sendBytes/sendOffsets into sendbuff, recvBytes/recvOffsets into recvbuff, by rank) and what
// the host's rank of local index j sends to rank d (sentBy, read from the relay board).
RelayPlan planRelay(const LocalTopology& t, const std::vector<uint64_t>& hostOf, int me,
                    const std::vector<size_t>& sendBytes, const std::vector<size_t>& sendOffsets,
                    const std::vector<size_t>& recvBytes, const std::vector<size_t>& recvOffsets,
                    const std::function<uint64_t(int j, int d)>& sentBy);

}  // namespace alloy
