#include "p2p_plan.h"

#include "comm.h"
#include "device_guard.h"
#include "error.h"
#include "local_transport.h"
#include "launch_order.h"
#include "net_rounds.h"
#include "net_stage_plan.h"
#include "stream_word.h"

namespace alloy {
namespace {

size_t totalBytes(const std::vector<P2pSegment>& segments) {
  size_t bytes = 0;
  for (const P2pSegment& s : segments) bytes += s.bytes;
  return bytes;
}

alloyResult_t appendTask(P2pLaunch* launch, int kind, int peer, const std::vector<P2pSegment>& segments,
                         size_t lowLatencyMaxBytes, const char* function, unsigned targets = 0) {
  if (launch->numTasks == kMaxP2pTasks) return fail(alloyInternalError, "%s: task table full", function);
  int first = 0;
  for (int t = 0; t < launch->numTasks; ++t) first += launch->tasks[t].numSegments;
  if (first + static_cast<int>(segments.size()) > kMaxP2pSegments)
    return fail(alloyNotSupported, "%s: more than %d sends and receives in one operation or group", function,
                kMaxP2pSegments);
  for (size_t s = 0; s < segments.size(); ++s) launch->segments[first + s] = segments[s];
  // Sender and receiver of a pair see the same byte count, so they pick the same protocol.
  const int lowLatency = kind != kP2pCopy && totalBytes(segments) <= lowLatencyMaxBytes;
  launch->tasks[launch->numTasks++] = P2pTask{kind, peer, first, static_cast<int>(segments.size()), lowLatency, targets};
  return alloySuccess;
}

// Whether this host's part of a launch only copies this rank's own blocks (no peer on this host takes
// part: one rank per host), which cudaMemcpyAsync does without a kernel of ours. (A copy within one
// device still runs on the compute engine: with ranks sharing a GPU it waits for a time slice as a
// kernel would, 275 us per round on one H200 at any size and with every copy API tried.) Not where the
// operation handshake runs: a skipped operation must move no byte, and only the kernel sees the verdict
// (lib/core/handshake.h).
bool copiesOnly(const P2pLaunch& launch) {
  return launch.numTasks == 1 && launch.tasks[0].kind == kP2pCopy && !launch.comm.handshake;
}

// The copies of a launch for which copiesOnly holds.
std::vector<P2pSegment> selfCopies(const P2pLaunch& launch) {
  const P2pTask& task = launch.tasks[0];
  return std::vector<P2pSegment>(launch.segments + task.firstSegment,
                                 launch.segments + task.firstSegment + task.numSegments);
}

alloyResult_t launchCopies(const P2pLaunch& launch, cudaStream_t stream) {
  for (const P2pSegment& copy : selfCopies(launch))
    ALLOY_CUDA_TRY(cudaMemcpyAsync(copy.dst, copy.src, copy.bytes, cudaMemcpyDefault, stream));
  return alloySuccess;
}

}  // namespace

P2pPlan::P2pPlan(alloyComm_t comm, Operation operation) { reset(comm, operation); }

void P2pPlan::reset(alloyComm_t comm, Operation operation) {
  comm_ = comm;
  args_.comm = operationDeviceComm(comm, operation);
  args_.numTasks = 0;
  for (auto* byPeer : {&sends_, &recvs_})
    for (std::vector<P2pSegment>& segments : *byPeer) segments.clear();
  forwards_.clear();
  rounds_.clear();
  prepared_ = false;
}

// The tables by peer are sized at their first use: a broadcast makes three plans per call and often
// fills one (session 12's profile: allocations were a tenth of a small broadcast's host time).
void P2pPlan::addSend(int peer, const void* buffer, size_t bytes) {
  sends_.resize(comm_->nranks);
  sends_[peer].push_back(P2pSegment{static_cast<const char*>(buffer), nullptr, bytes});
}

void P2pPlan::addRecv(int peer, void* buffer, size_t bytes) {
  recvs_.resize(comm_->nranks);
  recvs_[peer].push_back(P2pSegment{nullptr, static_cast<char*>(buffer), bytes});
}

void P2pPlan::addForward(int peer, void* buffer, size_t bytes, const std::vector<int>& to) {
  forwards_.push_back(Forward{peer, P2pSegment{nullptr, static_cast<char*>(buffer), bytes}, to});
}

// A forward as one task: the rings it uses (from its source, to each target) must be its own, on this
// host, and bulk.
alloyResult_t P2pPlan::appendForward(const Forward& f, const char* function) {
  const std::vector<int>& localIndexOf = comm_->topology.localIndexOf;
  const auto ownRing = [&](int peer, const std::vector<std::vector<P2pSegment>>& others) {
    return peer != comm_->rank && localIndexOf[peer] >= 0 && others[peer].empty();
  };
  bool valid = ownRing(f.from, recvs_) && f.into.bytes > comm_->local->lowLatencyMaxBytes();
  unsigned targets = 0;
  for (int q : f.to) {
    valid = valid && ownRing(q, sends_) && q != f.from;
    if (valid) targets |= 1u << localIndexOf[q];
  }
  if (!valid)
    return fail(alloyInternalError, "%s: rank %d cannot forward %zu bytes from rank %d (a forward needs rings of "
                "its own on this host and more than the low-latency limit)", function, comm_->rank, f.into.bytes, f.from);
  return appendTask(&args_, kP2pForward, localIndexOf[f.from], {f.into}, 0, function, targets);
}

alloyResult_t P2pPlan::prepare(const char* function) {
  const int me = comm_->rank;
  args_.numTasks = 0;
  sends_.resize(comm_->nranks);
  recvs_.resize(comm_->nranks);
  // Sends to oneself become local copies, matched in order with receives from oneself.
  const std::vector<P2pSegment>& selfSends = sends_[me];
  const std::vector<P2pSegment>& selfRecvs = recvs_[me];
  if (selfSends.size() != selfRecvs.size())
    return fail(alloyInvalidUsage, "%s: %zu send(s) to self but %zu receive(s) from self on rank %d", function,
                selfSends.size(), selfRecvs.size(), me);
  std::vector<P2pSegment> copies(selfSends.size());
  for (size_t k = 0; k < selfSends.size(); ++k) {
    if (selfSends[k].bytes != selfRecvs[k].bytes)
      return fail(alloyInvalidUsage, "%s: send %zu to self has %zu bytes but its matching receive %zu", function,
                  k, selfSends[k].bytes, selfRecvs[k].bytes);
    copies[k] = P2pSegment{selfSends[k].src, selfRecvs[k].dst, selfSends[k].bytes};
  }

  const size_t lowLatencyMax = comm_->local->lowLatencyMaxBytes();
  const std::vector<int>& localIndexOf = comm_->topology.localIndexOf;
  if (totalBytes(copies) > 0)
    ALLOY_TRY(appendTask(&args_, kP2pCopy, localIndexOf[me], copies, lowLatencyMax, function));
  for (int peer = 0; peer < comm_->nranks; ++peer) {
    if (peer == me) continue;
    const int local = localIndexOf[peer];
    const size_t toPeer = totalBytes(sends_[peer]), fromPeer = totalBytes(recvs_[peer]);
    if (local < 0) {
      if (!comm_->net && toPeer + fromPeer > 0)
        return fail(alloyNotSupported, "%s: rank %d exchanges data with rank %d on another host, and this "
                    "communicator has no transport between hosts: %s", function, me, peer,
                    comm_->netUnavailableReason.c_str());
      continue;
    }
    if (fromPeer > 0) ALLOY_TRY(appendTask(&args_, kP2pRecv, local, recvs_[peer], lowLatencyMax, function));
    if (toPeer > 0) ALLOY_TRY(appendTask(&args_, kP2pSend, local, sends_[peer], lowLatencyMax, function));
  }
  for (const Forward& f : forwards_) ALLOY_TRY(appendForward(f, function));
  if (comm_->net) rounds_ = cutIntoRounds(*comm_->net, sends_, recvs_, localIndexOf, args_.comm.operation);
  prepared_ = true;
  return alloySuccess;
}

alloyResult_t P2pPlan::launch(cudaStream_t stream, const char* function) {
  if (!prepared_) ALLOY_TRY(prepare(function));
  if (args_.numTasks == 0 && rounds_.empty()) return alloySuccess;
  DeviceGuard guard(comm_->cudaDevice);
  return comm_->launchOrder->enqueue(stream, function, [&](bool captured) {
    // Per round: the stream stages the send bytes into the round's box and rings its doorbell; once the
    // proxy has cleared it, the stream copies the received bytes out. Round r + 1 is staged and rung
    // before the wait for round r, in the other box: its copy in runs while round r is on the wire, and
    // round r's copy out while round r + 1 is (the copy engines and the network work side by side).
    // The box of round r + 1 is free by then: its previous user, round r - 1, was waited for and copied
    // out before. The kernel (the copy engine where it would only copy this rank's own blocks) serves
    // this host while the first round is on the wire. Everything is stream-ordered, so it captures into
    // a graph; a captured round stays in the channel so that every replay rings the same operation.
    RemoteChannel* channel = comm_->net.get();
    const auto bell = [&](size_t r) { return channel->doorbellForDevice(RemoteChannel::boxOf(r)); };
    const bool selfOnly = copiesOnly(args_);
    NetStageLaunch stage{};
    if (!args_.comm.handshake && planNetStage(comm_, rounds_, selfOnly ? selfCopies(args_) : std::vector<P2pSegment>{},
                                              &stage)) {
      // A small operation of one round: the staging kernel stages, rings, copies this rank's own blocks,
      // waits for the release and copies out. Where peers on this host take part, that work is the last
      // block of their kernel's launch (one launch), or, where their tasks exceed the small table, the
      // staging's ring and wait are launches of their own before and after their kernel (three).
      // One that only sends (a broadcast's root, a reduce's leaf) need not wait for its release: nothing
      // comes back, and its send bytes are in the outbox already. Its launch ends at the ring, and the
      // next launch to stage into the box waits for the release instead, so the proxy's send overlaps
      // that launch's start. Not on a communicator ever captured into a graph: a replay's first launch
      // cannot know what ran before it (captured launches wait for their own releases, and the first one
      // captured after such a launch for its box).
      const bool endsAtRing = rounds_[0].operation.recvs.empty() && !captured &&
                              !comm_->launchOrder->everCaptured() && sendsEndAtRing();
      uint32_t id = 0;
      ALLOY_TRY(channel->addOperation(std::move(rounds_[0].operation), captured, &id));
      stage.bell = static_cast<uint32_t*>(bell(0));
      stage.ringValue = id + 1;
      stage.fault = args_.comm.fault;
      stage.ring = 1;
      stage.wait = endsAtRing ? 0 : 1;
      stage.waitFree = comm_->netReleaseUnwaited ? 1 : 0;
      comm_->netReleaseUnwaited = endsAtRing;
      const bool overlap = args_.comm.earlyLaunch != 0;
      if (selfOnly || args_.numTasks == 0) return kernelLaunched(launchNetStage(stage, stream, overlap), function);
      if (p2pFitsWithNetStage(args_)) return kernelLaunched(launchP2pWithNetStage(args_, stage, stream), function);
      stage.wait = 0;
      ALLOY_TRY(kernelLaunched(launchNetStage(stage, stream, overlap), function));
      ALLOY_TRY(kernelLaunched(launchP2p(args_, stream), function));
      if (endsAtRing) return alloySuccess;
      stage.ring = 0;
      stage.wait = 1;
      return kernelLaunched(launchNetStage(stage, stream, overlap), function);
    }
    // The stream's form waits for every round's release; a launch of the staging kernel before it may not have.
    if (!rounds_.empty() && comm_->netReleaseUnwaited) {
      ALLOY_TRY(streamWaitWordEquals(stream, bell(0), 0, function));
      comm_->netReleaseUnwaited = false;
    }
    const auto ring = [&](size_t r) -> alloyResult_t {
      for (const StagedCopy& c : rounds_[r].stageIn) ALLOY_TRY(enqueueStagedCopy(c, stream));
      uint32_t id = 0;
      ALLOY_TRY(channel->addOperation(std::move(rounds_[r].operation), captured, &id));
      return streamWriteWord(stream, bell(r), id + 1, function);
    };
    if (!rounds_.empty()) ALLOY_TRY(ring(0));
    if (selfOnly) ALLOY_TRY(launchCopies(args_, stream));
    else if (args_.numTasks > 0) ALLOY_TRY(kernelLaunched(launchP2p(args_, stream), function));
    for (size_t r = 0; r < rounds_.size(); ++r) {
      if (r + 1 < rounds_.size()) ALLOY_TRY(ring(r + 1));
      ALLOY_TRY(streamWaitWordEquals(stream, bell(r), 0, function));
      for (const StagedCopy& c : rounds_[r].stageOut) ALLOY_TRY(enqueueStagedCopy(c, stream));
    }
    return alloySuccess;
  });
}

}  // namespace alloy
