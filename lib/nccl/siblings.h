// Ranks of one communicator that this process creates together: ncclCommInitAll over several devices,
// several ranks of one id created in one group (nccl-tests -g, JAX's one process per host), or the children
// of such ranks split in one group. One thread usually drives them all, so a step that waits for every rank
// of the communicator cannot run for one sibling after the other on that thread: creation, and the
// collective half of the end (Alloy's finalize: the device drain and a barrier). Creation runs one thread per rank; each sibling's finalize is held until
// the last sibling of the set asks for its own, and then they all run at once, one thread each.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "alloy.h"

namespace alloy {
namespace nccl {

struct RankToCreate {
  int rank;
  int device;  // -1: host-only
  ncclComm_t* out;
};

// Creates ranks of the communicator of id (nranks in all) at once, one thread each (createRanksTogether,
// lib/assembly/comm_ranks.h); on success every *out is set and the communicators form one sibling set
// (where there are several). All or none: on failure no *out is set, and the first failure's message is
// the calling thread's last error.
alloyResult_t createTogether(const uint8_t* id, int nranks, const std::vector<RankToCreate>& ranks, bool blocking);

// Makes comms (ranks of one communicator that this process created together; two or more) one sibling set.
void formSiblings(const std::vector<ncclComm_t>& comms);

// ncclCommFinalize and ncclCommDestroy of a sibling (comm->siblings set): records the request; once every
// sibling of the set has asked for its finalize, runs them all at once and returns comm's result, and frees
// every sibling whose destroy was asked (comm too, if `destroy`). Before that it returns alloySuccess and
// frees nothing. Sibling sets leave every other communicator's end as it was.
alloyResult_t endSibling(ncclComm_t comm, bool destroy);

// ncclCommAbort of a sibling: leaves the set, so that the others no longer wait for it (and runs their
// finalizes if it was the last they waited for). comm itself is freed by the caller.
void leaveSiblings(ncclComm_t comm);

}  // namespace nccl
}  // namespace alloy
