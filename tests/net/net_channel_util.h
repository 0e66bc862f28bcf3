// What the channel tests share (net_channel_test.cc, net_scale_test.cc): creating a channel as communicator
// creation does, closing it as alloyCommDestroy does, and ringing and waiting for its doorbells as the GPU
// stream does, with bounded waits that fail the test instead of hanging the job.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "net_channel.h"

namespace nettest {

// Every rank of comm's bytes, by rank of comm. Collective over comm.
std::vector<std::vector<uint8_t>> allgatherOn(MPI_Comm comm, const std::vector<uint8_t>& mine);

// This process's resident memory (VmRSS), in bytes; 0 where /proc does not say.
size_t residentBytes();

// Creates this rank's channel of comm as lib/core does (host staging; a UCX transport with one worker or
// two, as ALLOY_NET_INBOUND_THREAD asks; addresses and keys exchanged, the entries of ranks on this host
// left empty, as connect() must not need them; connected to every rank on another host, hostOf by rank of
// comm) and hands it to the proxy thread. Where connectGrowth is given it gets how much the resident memory
// grew while connecting (UCX's endpoints). Collective over comm; a rank that fails still takes part in the
// exchanges, so that the others fail rather than hang. Fails the test (fatally) on an error.
void openChannel(MPI_Comm comm, alloy::net::NetGeometry geometry, long long timeoutMs,
                 const std::vector<uint64_t>& hostOf, std::unique_ptr<alloy::net::NetChannel>* out,
                 size_t* connectGrowth = nullptr);

// Takes the channel from the proxy thread, drains it, and frees it once every rank of comm has drained,
// progressing it meanwhile: over tcp and shared memory UCX emulates RMA with active messages, so a peer's
// last flushes complete only while this rank progresses. Collective over comm. With reportAs, world rank 0
// prints, once per process and only for a healthy channel, "REPORTAS: UCX_TLS=...: rank 0's connections run
// over ..." (the ctests check that the forced transport carried the run), read once the proxy thread has
// let go of the channel (NetChannel::describe may not run before).
void closeChannel(MPI_Comm comm, std::unique_ptr<alloy::net::NetChannel>* channel, const char* reportAs = nullptr);

// Rings box's doorbell with id as the stream does (a release store of id + 1).
void ring(alloy::net::NetChannel& channel, int box, uint32_t id);

// Waits for the proxy to write 0 into box's doorbell, rung with id. Past `seconds`: a test failure, and
// the channel is aborted (a failed channel releases its doorbells at once); where even that does not
// release it within 10 s more, the proxy thread is stuck in a call and the job is ended. Whether it was
// released in time.
bool waitReleased(alloy::net::NetChannel& channel, int box, uint32_t id, double seconds);

}  // namespace nettest
