// The arithmetic over the network channel's stamps (NetStages, lib/core/remote_channel.h), all on one
// steady clock, apart from the tools so that the CPU tests can check it: net-stages' small operations
// between hosts, one at a time, with the host's own times around each call (splitStages), and
// net-latency's transfers between two ranks, both ends' stamps together (splitTransfers).
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

// One operation of a rank as net-latency sees it: when its thread rang the doorbell, what the channel
// stamped, and when the thread saw the doorbell released.
struct RankedOperation {
  int64_t rang;
  alloy::NetStages stages;
  int64_t seen;
};

// Medians over the transfers in microseconds (negative where none had the stamps): the sender's proxy
// finding the doorbell, its send handed to the transport, the receiver's proxy having the data in, its
// release, and the receiver's thread seeing it.
struct TransferSplit {
  size_t transfers = 0;
  double ringToProxy = -1;     // sender: rang -> its proxy found the doorbell rung
  double proxyToPosted = -1;   // sender: rung -> the send handed to the transport (over tcp: the send call)
  double postedToIn = -1;      // sender's posted -> receiver's data in (wire, inbound thread, proxy's poll)
  double inToReleased = -1;    // receiver: data in -> doorbell released
  double releasedToSeen = -1;  // receiver: released -> its thread saw it (where a GPU stream waits)
  double total = -1;           // sender rang -> receiver saw
};

// senders[k] and receivers[k] are the two ends of transfer k. A transfer whose sender stamped no send or
// whose receiver stamped no receive is left out.
TransferSplit splitTransfers(const std::vector<RankedOperation>& senders, const std::vector<RankedOperation>& receivers);
