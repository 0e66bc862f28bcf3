#include "context.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace alloy_mpix {
namespace {

std::mutex registryMutex;  // the registry, and the creation of the keyvals
// Atomic, so that findContext reads it without the mutex: it is set once the keyvals exist, and reset
// at MPI_Finalize.
std::atomic<int> contextKeyval{MPI_KEYVAL_INVALID};
// Unreleased contexts in creation order; released in reverse at MPI_Finalize. The order matters: each
// release ends with collective steps, and the reverse of the order in which the ranks created them
// collectively is an order in which every rank can complete them.
std::vector<Context*> registry;

void release(Context* context) {
  if (context->released) return;
  context->released = true;
  // Collective like MPI_Comm_free, which is what brings us here: every member runs it.
  if (context->gpu != nullptr) alloyCommDestroy(context->gpu);  // waits for the device first
  context->gpu = nullptr;
  if (context->layerOrder != nullptr) cudaEventDestroy(context->layerOrder);
  if (context->layerStream != nullptr) cudaStreamDestroy(context->layerStream);
  context->layerOrder = nullptr;
  context->layerStream = nullptr;
  context->vote.reset();  // it lets MPI progress through the agreement's communicator
  MPI_Comm_free(&context->agreement);
}

void unregister(Context* context) {
  std::lock_guard<std::mutex> lock(registryMutex);
  registry.erase(std::remove(registry.begin(), registry.end(), context), registry.end());
}

// The attribute's delete callback: MPI_Comm_free of the communicator, or MPI's own teardown of a
// communicator after MPI_Finalize has released the context already.
int deleteContext(MPI_Comm, int, void* value, void*) {
  auto* context = static_cast<Context*>(value);
  release(context);
  unregister(context);
  delete context;
  return MPI_SUCCESS;
}

// MPI_Finalize calls the delete callbacks of MPI_COMM_SELF's attributes before anything else, while every
// communicator still works: the GPU communicators must go before MPI does, including those of
// communicators the program never freed (MPI_COMM_WORLD's among them). Their attributes stay attached;
// deleteContext later frees the released shells.
int releaseAllAtFinalize(MPI_Comm, int, void*, void*) {
  std::vector<Context*> contexts;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    contexts.assign(registry.rbegin(), registry.rend());
    registry.clear();
  }
  for (Context* context : contexts) release(context);
  // No MPIX call can follow MPI_Finalize; attributes still attached keep the keyval until deleteContext.
  int keyval = contextKeyval.exchange(MPI_KEYVAL_INVALID);
  MPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

Problem createKeyvals(const char* function) {
  if (contextKeyval.load() != MPI_KEYVAL_INVALID) return {};
  int keyval = MPI_KEYVAL_INVALID, finalizeKeyval = MPI_KEYVAL_INVALID;
  // MPI_COMM_NULL_COPY_FN: a duplicated communicator starts without a context and gets its own on its
  // first MPIX call; sharing one would make two communicators' operations share one GPU engine.
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteContext, &keyval, nullptr) != MPI_SUCCESS ||
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, releaseAllAtFinalize, &finalizeKeyval, nullptr) != MPI_SUCCESS ||
      MPI_Comm_set_attr(MPI_COMM_SELF, finalizeKeyval, nullptr) != MPI_SUCCESS)
    return problem(MPI_ERR_OTHER, "%s: cannot create the MPI attribute keyvals that cache GPU communicators",
                   function);
  MPI_Comm_free_keyval(&finalizeKeyval);  // MPI_COMM_SELF's attribute holds it until its callback has run
  contextKeyval.store(keyval);
  return {};
}

}  // namespace

Problem contextOf(MPI_Comm comm, const char* function, Context** out) {
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    if (Problem p = createKeyvals(function)) return p;
  }
  if (!findContext(comm, out))
    return problem(MPI_ERR_COMM, "%s: cannot read the communicator's attributes", function);
  if (*out != nullptr) return {};
  auto* context = new Context;
  if (MPI_Comm_dup(comm, &context->agreement) != MPI_SUCCESS) {
    delete context;
    return problem(MPI_ERR_OTHER, "%s: MPI_Comm_dup of the communicator failed", function);
  }
  MPI_Comm_set_errhandler(context->agreement, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &context->shape.rank);
  MPI_Comm_size(comm, &context->shape.size);
  if (MPI_Comm_set_attr(comm, contextKeyval.load(), context) != MPI_SUCCESS) {
    MPI_Comm_free(&context->agreement);
    delete context;
    return problem(MPI_ERR_OTHER, "%s: cannot cache the GPU communicator on the communicator", function);
  }
  std::lock_guard<std::mutex> lock(registryMutex);
  registry.push_back(context);
  *out = context;
  return {};
}

bool agreeMax(Context* context, const int* ballot, int* all, int count) {
  if (!context->voteChosen) {
    context->vote = SharedVote::create(context->agreement);
    context->voteChosen = true;
  }
  if (context->vote) {
    context->vote->maxOf(ballot, all, count);
    return true;
  }
  return PMPI_Allreduce(ballot, all, count, MPI_INT, MPI_MAX, context->agreement) == MPI_SUCCESS;
}

bool findContext(MPI_Comm comm, Context** out) {
  *out = nullptr;
  const int keyval = contextKeyval.load();
  if (keyval == MPI_KEYVAL_INVALID) return true;  // no context yet, on any communicator
  void* value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS) return false;
  if (found) *out = static_cast<Context*>(value);
  return true;
}

Context* existingContext(MPI_Comm comm) {
  Context* context = nullptr;
  findContext(comm, &context);
  return context;
}

alloyResult_t gpuCommOf(Context* context, alloyComm_t* out) {
  if (context->gpu == nullptr) {
    // The device rule (lib/core/device_select.h) at the first GPU call: an MPI+CUDA program has picked its
    // device with cudaSetDevice, or used CUDA on it, and its buffers and streams live there.
    alloyConfig_t config = ALLOY_CONFIG_INITIALIZER;
    const alloyResult_t result = alloyCommCreateFromMPI(context->agreement, &config, &context->gpu);
    if (result != alloySuccess) {
      context->gpu = nullptr;
      return result;
    }
  }
  *out = context->gpu;
  return alloySuccess;
}

int liveContexts() {
  std::lock_guard<std::mutex> lock(registryMutex);
  return static_cast<int>(registry.size());
}

int liveGpuComms() {
  std::lock_guard<std::mutex> lock(registryMutex);
  return static_cast<int>(std::count_if(registry.begin(), registry.end(),
                                        [](const Context* c) { return c->gpu != nullptr; }));
}

}  // namespace alloy_mpix
