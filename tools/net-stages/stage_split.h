// net-stages: small operations between hosts, one at a time, split into the stages the network channel
// stamps (NetStages, lib/core/remote_channel.h) and the host's own times around each call, all on one
// steady clock. The arithmetic, apart from the GPU tool so that the CPU tests can check it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "remote_channel.h"

// The host's steady-clock nanoseconds around one call: before it, when it returned, and when a
// synchronisation of its stream returned.
struct CallTimes {
  int64_t start, enqueued, done;
};

// Medians over the calls in microseconds; a stage no call has stays negative. An operation of the channel
// belongs to the call within whose [start, done] the proxy found it rung; calls with none are left out.
struct StageSplit {
  size_t calls = 0;        // calls with at least one operation
  double opsPerCall = 0;   // the operations of those calls, on average
  double enqueue = -1;     // start -> the call returned
  double toRung = -1;      // start -> the call's first operation found rung (the stream's copy and bell)
  double rungToPosted = -1;  // that operation: rung -> every send handed to the transport (where it sends)
  double rungToSent = -1;  // that operation: rung -> every send completed (where it sends)
  double rungToIn = -1;    // that operation: rung -> every receive's data in (where it receives)
  double network = -1;     // the first operation rung -> the last one released
  double afterRelease = -1;  // the last release -> the stream's synchronisation returned
  double total = -1;       // start -> done
};

StageSplit splitStages(const std::vector<CallTimes>& calls, const std::vector<alloy::NetStages>& stages);
