#include "socket_bootstrap.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "error.h"
#include "hello_gate.h"
#include "log.h"
#include "root.h"
#include "wire.h"

namespace alloy {
namespace {

// Registers with the root and receives every rank's listening address.
alloyResult_t registerWithRoot(const UniqueIdContents& id, int nranks, int rank, const SocketAddress& listening,
                               Deadline deadline, std::vector<SocketAddress>* table) {
  Socket root;
  ALLOY_TRY(connectTo(id.root, deadline, "the bootstrap root of commId", &root));
  RootHello hello = helloWith<RootHello>(id.secret);
  hello.nranks = nranks;
  hello.rank = rank;
  hello.listening = toWire(listening);
  ALLOY_TRY(sendAll(root, &hello, sizeof(hello), deadline, "registration with the bootstrap root"));
  // A root acknowledges a registration at once (alloyInProgress), then answers with the table, or with why
  // not, at the latest ALLOY_BOOTSTRAP_TIMEOUT_MS after the last rank arrived (or closes the connection if it
  // dies). So the acknowledgement is awaited until the deadline (whatever listens at a stale id's port must
  // not hold the rank), and the answer after it as long as it takes.
  RootReply reply;
  ALLOY_TRY(recvAll(root, &reply, sizeof(reply), deadline, "the bootstrap root's acknowledgement"));
  if (reply.magic == kWireMagic && reply.status == alloyInProgress)
    ALLOY_TRY(recvAll(root, &reply, sizeof(reply), Deadline::max(), "the bootstrap root's answer"));
  reply.message[sizeof(reply.message) - 1] = '\0';
  if (reply.magic != kWireMagic) return fail(alloyRemoteError, "the bootstrap root of commId sent a damaged answer");
  if (reply.status != alloySuccess) return fail(static_cast<alloyResult_t>(reply.status), "%s", reply.message);
  std::vector<WireAddress> wire(nranks);
  ALLOY_TRY(recvAll(root, wire.data(), wire.size() * sizeof(WireAddress), deadlineAfterMs(bootstrapTimeoutMs()),
                    "the bootstrap root's table"));
  table->resize(nranks);
  for (int r = 0; r < nranks; ++r) ALLOY_TRY(fromWire(wire[r], "the bootstrap root's table", &(*table)[r]));
  return alloySuccess;
}

// Accepts connections until the previous rank's arrives; strangers (another secret or rank) are logged
// and dropped, and those that say nothing hold up nobody (HelloGate).
alloyResult_t acceptPrevious(const Socket& listener, uint64_t secret, int previous, Deadline deadline, Socket* out) {
  HelloGate gate(listener, sizeof(PeerHello), "bootstrap: the listener for rank " + std::to_string(previous));
  for (;;) {
    HelloGate::Arrival arrival;
    ALLOY_TRY(gate.next(deadline, nullptr, &arrival));
    PeerHello hello;
    std::memcpy(&hello, arrival.hello.data(), sizeof(hello));
    if (presents(hello.header, secret) && hello.rank == previous) {
      *out = std::move(arrival.socket);
      return alloySuccess;
    }
    gate.turnedAway(arrival.from, "it is not the previous rank of this communicator presenting its secret");
  }
}

}  // namespace

alloyResult_t SocketBootstrap::join(const uint8_t id[kUniqueIdBytes], int nranks, int rank,
                                    std::unique_ptr<Bootstrap>* out) {
  UniqueIdContents contents;
  ALLOY_TRY(decodeUniqueId(id, "commId", &contents));
  std::unique_ptr<SocketBootstrap> self(new SocketBootstrap(rank, nranks, bootstrapTimeoutMs()));
  const Deadline deadline = deadlineAfterMs(self->timeoutMs_);
  SocketAddress address, listening;
  Socket listener;
  ALLOY_TRY(chooseBootstrapAddress(&address));
  ALLOY_TRY(listenOn(address, &listener, &listening));
  std::vector<SocketAddress> table;
  ALLOY_TRY(registerWithRoot(contents, nranks, rank, listening, deadline, &table));
  if (nranks > 1) {
    // Every rank has its table at about the same moment (the root sends them together): the ring's own time.
    const Deadline deadline = deadlineAfterMs(self->timeoutMs_);
    const int next = (rank + 1) % nranks, previous = (rank + nranks - 1) % nranks;
    const std::string what = "rank " + std::to_string(next) + " (next in the bootstrap ring)";
    ALLOY_TRY(connectTo(table[next], deadline, what.c_str(), &self->next_));
    PeerHello hello = helloWith<PeerHello>(contents.secret);
    hello.rank = rank;
    ALLOY_TRY(sendAll(self->next_, &hello, sizeof(hello), deadline, what.c_str()));
    ALLOY_TRY(acceptPrevious(listener, contents.secret, previous, deadline, &self->previous_));
  }
  logTrace("bootstrap: rank %d of %d joined through the root at %s", rank, nranks, contents.root.describe().c_str());
  *out = std::move(self);
  return alloySuccess;
}

// Step s passes on the block that arrived in step s - 1 (first this rank's own): after nranks - 1 steps
// every block has gone round.
alloyResult_t SocketBootstrap::ringAllgather(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                             Deadline deadline, const std::function<void()>& progress) {
  all->assign(bytes * nranks_, 0);
  if (bytes > 0) std::memcpy(all->data() + bytes * rank_, mine, bytes);
  for (int step = 0; step < nranks_ - 1; ++step) {
    const int sendBlock = (rank_ - step + nranks_) % nranks_, recvBlock = (rank_ - step - 1 + nranks_) % nranks_;
    ALLOY_TRY(transfer(&next_, all->data() + bytes * sendBlock, bytes, &previous_, all->data() + bytes * recvBlock,
                       bytes, deadline, progress, "bootstrap all-gather between ring neighbours"));
  }
  return alloySuccess;
}

alloyResult_t SocketBootstrap::allgather(const void* mine, size_t bytes, std::vector<uint8_t>* all) {
  return ringAllgather(mine, bytes, all, deadlineAfterMs(timeoutMs_), nullptr);
}

alloyResult_t SocketBootstrap::exchangeEndpoints(const void* mine, size_t bytes, std::vector<uint8_t>* all,
                                                 BootstrapPath* used) {
  *used = BootstrapPath::Socket;
  return allgather(mine, bytes, all);
}

alloyResult_t SocketBootstrap::minimum(int mine, int* lowest) {
  std::vector<int> all;
  ALLOY_TRY(allgatherValues(*this, mine, &all));
  *lowest = *std::min_element(all.begin(), all.end());
  return alloySuccess;
}

alloyResult_t SocketBootstrap::barrier(const std::function<void()>& progress, long long timeoutMs) {
  const uint8_t token = 1;
  std::vector<uint8_t> all;
  return ringAllgather(&token, sizeof(token), &all, deadlineAfterMs(timeoutMs), progress);
}

}  // namespace alloy
