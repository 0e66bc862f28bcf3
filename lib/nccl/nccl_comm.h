// The communicator behind ncclComm_t in Alloy's libnccl.so.2, and the translation of results: the NCCL
// API is a thin layer over Alloy's own (an alloyComm created over the unique-id bootstrap).
#pragma once

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "alloy.h"
#include "red_op_table.h"

// A registration of ncclCommRegister: only its record (Alloy stages through its workspace and keeps no
// per-buffer state), so that ncclCommDeregister can tell a handle of this communicator from anything else.
struct ncclRegistration {
  void* buffer;
  size_t bytes;
};

namespace alloy {
namespace nccl {
struct SiblingSet;
}
}

struct ncclComm {
  alloyComm_t alloy = nullptr;
  bool blocking = true;    // config->blocking; creation completes before returning either way
  bool finalized = false;  // ncclCommFinalize done: destroy is then local
  std::vector<std::unique_ptr<ncclRegistration>> registrations;
  alloy::nccl::RedOpTable redOps;  // ncclRedOpCreatePreMulSum's operators
  // The ranks of this communicator that this process created together, this one included (siblings.h);
  // null for a rank created alone. With it: whether this rank's finalize and destroy were asked for, and
  // its finalize's outcome once all of the set's have run.
  std::shared_ptr<alloy::nccl::SiblingSet> siblings;
  bool finalizeAsked = false;
  bool destroyAsked = false;
  alloyResult_t finalizeResult = alloySuccess;
  std::string finalizeMessage;
};

// Returns the NCCL code of a failed Alloy step; its message is already recorded.
#define ALLOY_NCCL_TRY(expr)                                                   \
  do {                                                                         \
    const alloyResult_t alloy_nccl_result_ = (expr);                           \
    if (alloy_nccl_result_ != alloySuccess) return ::alloy::nccl::toNccl(alloy_nccl_result_); \
  } while (0)

namespace alloy {
namespace nccl {

// alloyResult_t to ncclResult_t: equal codes where NCCL has them; a timeout is ncclRemoteError (a peer did not
// answer) and an unsupported request ncclInvalidUsage; the message of alloyGetLastError says which.
ncclResult_t toNccl(alloyResult_t result);

// A call that Alloy's libnccl.so.2 exports but does not serve: ncclInvalidUsage, and why in ncclGetLastError.
ncclResult_t refuse(const char* function, const char* why);

// Checks comm of a call named function; the message names the argument.
alloyResult_t checkComm(const ncclComm* comm, const char* function);

// What ncclCommInitRankConfig and ncclCommSplit read of an ncclConfig_t (NULL: defaults). *blocking is
// inherited when the config leaves it undefined.
alloyResult_t readConfig(const ncclConfig_t* config, const char* function, bool* blocking);

// The calling thread's current CUDA device, as NCCL takes it at creation; -1 where the process sees none.
alloyResult_t currentDevice(int* device);

// Collective over the ranks that pass id: the bootstrap, Alloy's creation on CUDA device `device` (-1:
// host-only), and the wrapper. *out is untouched on failure.
alloyResult_t createFromId(const uint8_t* id, int nranks, int rank, bool blocking, int device, ncclComm_t* out);

// Arguments of a creation, checked before anything collective: out, nranks, rank.
alloyResult_t checkInitArguments(const ncclComm_t* out, int nranks, int rank, const char* function);

// Inside ncclGroupStart/End, creations wait for the group's end (group.cc).
bool deferInit(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, bool blocking, int device);

// One ncclCommSplit: its parent, its arguments, and the outcome of its local checks (agreed with the
// parent's other ranks when the split runs).
struct SplitRequest {
  ncclComm_t parent;
  int color;
  int key;
  bool blocking;
  ncclComm_t* out;
  alloyResult_t checks;
  std::string checksMessage;
};

// Inside ncclGroupStart/End, splits wait for the group's end too (group.cc): a split is collective over
// its parent, so ranks of one parent that this thread drives (siblings.h) must split at once.
bool deferSplit(const SplitRequest& request);

// The splits of a group, at once, a thread each (init.cc); the children of siblings split to one color
// become siblings. Every *out is written (NULL for NCCL_SPLIT_NOCOLOR and for a failed split); the first
// failure is returned with its message.
alloyResult_t splitTogether(const std::vector<SplitRequest>& requests);

}  // namespace nccl
}  // namespace alloy
