/*
 * The NCCL API of Alloy's libnccl.so.2, as an NCCL program uses it: compiled against nccl.h, linked to the built
 * library, started by mpirun, with MPI only handing out the unique id and computing references. On a machine
 * without a GPU every communicator is host-only and its GPU calls must refuse, saying so.
 */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloy_nccl.h"
#include "check.h"
#include "mpi_id.h"

static int rank, nranks;

/* The library is Alloy's, the one this build made: its identity, its file, its version, its pnccl twins. */
static void checkIdentity(void) {
  const char* (*identity)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "alloyNcclIdentity");
  CHECK(identity != NULL, "alloyNcclIdentity is not exported: this is not Alloy's libnccl.so.2");
  if (identity != NULL) CHECK(strncmp(identity(), "Alloy ", 6) == 0, "identity %s", identity());
  Dl_info info;
  CHECK(dladdr((void*)ncclCommInitRank, &info) != 0 && strstr(info.dli_fname, ALLOY_NCCL_BUILT_DIR) == info.dli_fname,
        "ncclCommInitRank comes from %s, not from %s", info.dli_fname, ALLOY_NCCL_BUILT_DIR);
  int version = -1;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION_CODE, "ncclGetVersion %d, nccl.h says %d", version, NCCL_VERSION_CODE);
  CHECK_RESULT(ncclInvalidArgument, "version", ncclGetVersion(NULL));
  CHECK(dlsym(RTLD_DEFAULT, "pncclAllReduce") == dlsym(RTLD_DEFAULT, "ncclAllReduce"), "pncclAllReduce is not ncclAllReduce");
  CHECK(dlsym(RTLD_DEFAULT, "alloyAllReduce") == NULL || dladdr(dlsym(RTLD_DEFAULT, "alloyAllReduce"), &info) == 0 ||
            strstr(info.dli_fname, "libnccl") == NULL,
        "libnccl.so.2 exports Alloy's own symbols");
  for (int r = ncclSuccess; r < ncclNumResults; ++r) CHECK(ncclGetErrorString((ncclResult_t)r)[0] != '\0', "no text for %d", r);
}

/* The CUDA devices this process sees (0 without a driver or device). */
static int visibleDevices(void) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) {
    cudaGetLastError();
    visible = 0;
  }
  return visible;
}

static void checkQueriesOn(ncclComm_t comm, int expectRank, int expectCount, int expectDevice) {
  int value = -7, device = -7;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommCount(comm, &value));
  CHECK(value == expectCount, "count %d, expected %d", value, expectCount);
  value = -7;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommUserRank(comm, &value));
  CHECK(value == expectRank, "rank %d, expected %d", value, expectRank);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommCuDevice(comm, &device));
  CHECK(device == expectDevice, "device %d, expected %d (-1: host-only)", device, expectDevice);
  ncclResult_t async = ncclInternalError;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommGetAsyncError(comm, &async));
  CHECK(async == ncclSuccess, "async error %d", (int)async);
}

/* Queries of a communicator created on the current device (-1 without one). */
static void checkQueries(ncclComm_t comm, int expectRank, int expectCount) {
  int current = -1;
  if (visibleDevices() > 0) cudaGetDevice(&current);
  checkQueriesOn(comm, expectRank, expectCount, current);
}

/* Halves by rank, the order within each reversed by key; every rank checks its new rank against the one
 * computed here from the colors and keys, and MPI confirms the new ranks of each half are 0..n-1 once each. */
static void checkSplit(ncclComm_t world) {
  const int color = rank < nranks / 2 ? 0 : 1, key = -rank;
  ncclComm_t half = (ncclComm_t)0x1;  /* poisoned */
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(world, color, key, &half, NULL));
  const int size = color == 0 ? nranks / 2 : nranks - nranks / 2;
  const int first = color == 0 ? 0 : nranks / 2;
  const int expected = first + size - 1 - rank;
  checkQueries(half, expected, size);
  int mine = -1, seen[64];
  ncclCommUserRank(half, &mine);
  int tagged = color * 1000 + mine;
  MPI_Allgather(&tagged, 1, MPI_INT, seen, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; ++r) {
    int c = r < nranks / 2 ? 0 : 1, matches = 0;
    for (int q = 0; q < nranks; ++q) matches += seen[q] == c * 1000 + (r - (c == 0 ? 0 : nranks / 2));
    CHECK(matches == 1, "new rank %d of color %d held by %d ranks", r - (c == 0 ? 0 : nranks / 2), c, matches);
  }
  CHECK_RESULT(ncclSuccess, NULL, ncclCommFinalize(half));
  CHECK_RESULT(ncclInvalidUsage, "finalized already", ncclCommFinalize(half));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(half));

  /* Odd ranks stay out: they get NULL, the even ranks a communicator of their own. */
  ncclComm_t evens = (ncclComm_t)0x1;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(world, rank % 2 ? NCCL_SPLIT_NOCOLOR : 3, rank, &evens, NULL));
  if (rank % 2) {
    CHECK(evens == NULL, "a rank without a color got a communicator");
  } else {
    checkQueries(evens, rank / 2, (nranks + 1) / 2);
  }
  CHECK_RESULT(ncclSuccess, NULL, ncclCommAbort(evens));  /* NULL on odd ranks: accepted */

  /* A bad argument on one rank fails the split on every rank, naming it there. */
  ncclComm_t none = NULL;
  const int badColor = rank == nranks - 1 ? -5 : 0;
  CHECK_RESULT(rank == nranks - 1 ? ncclInvalidArgument : ncclRemoteError, rank == nranks - 1 ? "color is -5" : "failed",
               ncclCommSplit(world, badColor, 0, &none, NULL));
}

static void checkHostOnlyRefusals(ncclComm_t comm) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) == cudaSuccess && visible > 0) return;  /* the GPU suites cover that case */
  float x = 0;
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclBroadcast(&x, &x, 1, ncclFloat, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclAlltoAll(&x, &x, 1, ncclFloat, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclSend(&x, 1, ncclFloat, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclGather(&x, &x, 1, ncclFloat, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclScatter(&x, &x, 1, ncclFloat, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclReduce(&x, &x, 1, ncclFloat, ncclMax, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclReduceScatter(&x, &x, 1, ncclFloat, ncclMin, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclAllGather(&x, &x, 1, ncclFloat, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclBcast(&x, 1, ncclFloat, 0, comm, 0));
  CHECK_RESULT(ncclInvalidUsage, "host-only", ncclRecv(&x, 1, ncclFloat, 0, comm, 0));
  size_t counts[64] = {0}, displs[64] = {0};
  CHECK_RESULT(ncclInvalidUsage, "host-only",
               ncclAlltoAllv(&x, counts, displs, &x, counts, displs, NULL, ncclFloat, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "root is 99", ncclGather(&x, &x, 1, ncclFloat, 99, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "op is 9", ncclAllReduce(&x, &x, 1, ncclFloat, (ncclRedOp_t)9, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "comm is NULL", ncclAllGather(&x, &x, 1, ncclFloat, NULL, 0));
  void* memory = (void*)0x1;
  CHECK_RESULT(ncclUnhandledCudaError, "cudaMalloc", ncclMemAlloc(&memory, 4096));
  CHECK(memory == NULL, "ncclMemAlloc left %p after failing", memory);
}

/* Rank r's value at element i: integers, exact in float, different for every rank and element. */
static float element(int r, size_t i) { return (float)(r * 1000 + (int)(i % 997)); }

static void expectFloats(const float* device, size_t n, float (*want)(size_t, void*), void* context, const char* what) {
  float* got = (float*)malloc(n * sizeof(float));
  CHECK(cudaMemcpy(got, device, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess, "%s: copy back", what);
  size_t wrong = 0, first = n;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want(i, context)) continue;
    if (wrong++ == 0) first = i;
  }
  CHECK(wrong == 0, "%s: %zu of %zu elements wrong, the first at %zu: %g, expected %g", what, wrong, n, first,
        first < n ? got[first] : 0.0, first < n ? want(first, context) : 0.0);
  free(got);
}

static size_t blockCount;  /* elements per rank in the collectives below */
static float sumOverRanks(size_t i, void* offset) {
  float sum = 0;
  for (int r = 0; r < nranks; ++r) sum += element(r, i + *(size_t*)offset);
  return sum;
}
static float gathered(size_t i, void* unused) { (void)unused; return element((int)(i / blockCount), i % blockCount); }
static float fromRank(size_t i, void* r) { return element(*(int*)r, i); }
static float exchanged(size_t i, void* unused) {
  (void)unused;
  return element((int)(i / blockCount), (size_t)rank * blockCount + i % blockCount);
}

/* On a GPU only (CPU machines have none): every collective through the NCCL API against results computed here,
 * outputs poisoned first. Written with the library but NOT yet run on a GPU (docs/nccl-compat.md). */
static void checkGpuCollectives(ncclComm_t comm) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible == 0) return;
  blockCount = 4099;  /* odd, not a multiple of any vector width */
  const size_t total = blockCount * (size_t)nranks, bytes = total * sizeof(float);
  float *send = NULL, *recv = NULL, *host = (float*)malloc(bytes);
  CHECK(cudaMalloc((void**)&send, bytes) == cudaSuccess && cudaMalloc((void**)&recv, bytes) == cudaSuccess, "cudaMalloc");
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
  for (size_t i = 0; i < total; ++i) host[i] = element(rank, i);
  cudaMemcpy(send, host, bytes, cudaMemcpyHostToDevice);
  size_t zero = 0, mine = (size_t)rank * blockCount;
  int root = nranks - 1, previous = (rank + nranks - 1) % nranks;

#define RUN(what, call)                                                               \
  cudaMemset(recv, 0xff, bytes);                                                      \
  CHECK_RESULT(ncclSuccess, NULL, call);                                              \
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "%s: stream", what)
  RUN("ncclAllReduce", ncclAllReduce(send, recv, blockCount, ncclFloat, ncclSum, comm, stream));
  expectFloats(recv, blockCount, sumOverRanks, &zero, "ncclAllReduce");
  RUN("ncclAllGather", ncclAllGather(send, recv, blockCount, ncclFloat, comm, stream));
  expectFloats(recv, total, gathered, NULL, "ncclAllGather");
  RUN("ncclBroadcast", ncclBroadcast(send, recv, blockCount, ncclFloat, root, comm, stream));
  expectFloats(recv, blockCount, fromRank, &root, "ncclBroadcast");
  RUN("ncclReduceScatter", ncclReduceScatter(send, recv, blockCount, ncclFloat, ncclSum, comm, stream));
  expectFloats(recv, blockCount, sumOverRanks, &mine, "ncclReduceScatter");
  RUN("ncclAlltoAll", ncclAlltoAll(send, recv, blockCount, ncclFloat, comm, stream));
  expectFloats(recv, total, exchanged, NULL, "ncclAlltoAll");
  RUN("ncclGroupStart", ncclGroupStart());
  CHECK_RESULT(ncclSuccess, NULL, ncclSend(send, blockCount, ncclFloat, (rank + 1) % nranks, comm, stream));
  CHECK_RESULT(ncclSuccess, NULL, ncclRecv(recv, blockCount, ncclFloat, previous, comm, stream));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupEnd());
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "send/recv: stream");
  expectFloats(recv, blockCount, fromRank, &previous, "ncclSend/ncclRecv ring");
  RUN("ncclGather", ncclGather(send, recv, blockCount, ncclFloat, root, comm, stream));
  if (rank == root) expectFloats(recv, total, gathered, NULL, "ncclGather");
  {
    size_t counts[64], displs[64];
    for (int r = 0; r < nranks; ++r) counts[r] = blockCount, displs[r] = (size_t)r * blockCount;
    RUN("ncclAlltoAllv", ncclAlltoAllv(send, counts, displs, recv, counts, displs, NULL, ncclFloat, comm, stream));
    expectFloats(recv, total, exchanged, NULL, "ncclAlltoAllv");
  }
#undef RUN
  cudaStreamDestroy(stream);
  cudaFree(send);
  cudaFree(recv);
  free(host);
}

static void checkRefusalsAndArguments(ncclComm_t comm, ncclUniqueId id) {
  ncclComm_t out = (ncclComm_t)0x1;
  CHECK_RESULT(ncclInvalidArgument, "comm is NULL", ncclCommInitRank(NULL, nranks, id, rank));
  CHECK_RESULT(ncclInvalidArgument, "nranks is 0", ncclCommInitRank(&out, 0, id, 0));
  CHECK_RESULT(ncclInvalidArgument, "rank is 4", ncclCommInitRank(&out, 4, id, 4));
  CHECK_RESULT(ncclInvalidArgument, "rank is -1", ncclCommInitRank(&out, 4, id, -1));
  ncclUniqueId garbage;
  for (size_t i = 0; i < sizeof(garbage.internal); ++i) garbage.internal[i] = (char)(i * 37 + 11);
  CHECK_RESULT(ncclInvalidArgument, "commId", ncclCommInitRank(&out, 2, garbage, 0));
  CHECK(out == (ncclComm_t)0x1, "a failed creation wrote its output");
  CHECK_RESULT(ncclInvalidArgument, "uniqueId", ncclGetUniqueId(NULL));
  int value = 0;
  CHECK_RESULT(ncclInvalidArgument, "comm is NULL", ncclCommCount(NULL, &value));
  CHECK_RESULT(ncclInvalidArgument, "count is NULL", ncclCommCount(comm, NULL));
  CHECK_RESULT(ncclInvalidArgument, "rank is NULL", ncclCommUserRank(comm, NULL));
  CHECK_RESULT(ncclInvalidArgument, "device is NULL", ncclCommCuDevice(comm, NULL));
  CHECK_RESULT(ncclInvalidArgument, "asyncError is NULL", ncclCommGetAsyncError(comm, NULL));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  CHECK_RESULT(ncclInvalidArgument, "config->magic", ncclCommInitRankConfig(&out, 1, id, 0, &config));
  config = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  config.blocking = 2;
  CHECK_RESULT(ncclInvalidArgument, "config->blocking is 2", ncclCommInitRankConfig(&out, 1, id, 0, &config));

  const int missingDevice[1] = {64};
  CHECK_RESULT(ncclInvalidArgument, "devlist[0] is 64", ncclCommInitAll(&out, 1, missingDevice));
  CHECK_RESULT(ncclInvalidUsage, "symmetric", ncclCommWindowRegister(comm, &value, 4, NULL, 0));
  CHECK_RESULT(ncclInvalidUsage, "ncclCommShrink", ncclCommShrink(comm, NULL, 0, &out, NULL, 0));
  CHECK_RESULT(ncclInvalidArgument, "nId is 0", ncclCommInitRankScalable(&out, 1, 0, 0, &id, NULL));
  CHECK_RESULT(ncclInvalidUsage, "no group is open", ncclGroupEnd());

  void* handle = NULL;
  char buffer[64];
  CHECK_RESULT(ncclSuccess, NULL, ncclCommRegister(comm, buffer, sizeof(buffer), &handle));
  CHECK(handle != NULL, "no registration handle");
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDeregister(comm, handle));
  CHECK_RESULT(ncclInvalidArgument, "not a registration", ncclCommDeregister(comm, handle));
  CHECK_RESULT(ncclInvalidArgument, "buff is NULL", ncclCommRegister(comm, NULL, 1, &handle));
}

/* One rank per process also through a group (nccl-tests' way), and ncclCommInitAll of one device. Each rank
 * alone, no peers involved. */
static void checkProcessLocalCreations(void) {
  ncclUniqueId id;
  ncclComm_t comm = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&comm, 1, id, 0));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupEnd());
  CHECK(comm != NULL, "the group created nothing");
  if (comm != NULL) checkQueries(comm, 0, 1);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(comm));

  ncclUniqueId ids[2];
  for (int i = 0; i < 2; ++i) CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&ids[i]));
  for (int n = 1; n <= 2; ++n) {
    CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRankScalable(&comm, 1, 0, n, ids + (2 - n), NULL));
    if (comm != NULL) checkQueries(comm, 0, 1);
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(comm));
  }

  ncclComm_t all[1] = {NULL};
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitAll(all, 1, NULL));
  if (all[0] != NULL) checkQueriesOn(all[0], 0, 1, visibleDevices() > 0 ? 0 : -1); /* NULL devlist: device 0 */
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(all[0]));

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRankConfig(&comm, 1, id, 0, &config));
  ncclResult_t state = ncclInProgress;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommGetAsyncError(comm, &state));
  CHECK(state == ncclSuccess, "a non-blocking creation is reported complete at once, got %d", (int)state);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(comm));

  /* An id whose root has gone (it waited ALLOY_BOOTSTRAP_TIMEOUT_MS for ranks, then ended): nobody answers at its
   * port, or, where another process's socket took the port since, nobody who acknowledges the id. */
  setenv("ALLOY_BOOTSTRAP_TIMEOUT_MS", "500", 1);
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  usleep(1200 * 1000);
  comm = (ncclComm_t)0x1;
  CHECK_RESULT(ncclRemoteError, "bootstrap root", ncclCommInitRank(&comm, 2, id, 1));
  CHECK(comm == (ncclComm_t)0x1, "a failed creation wrote its output");
  unsetenv("ALLOY_BOOTSTRAP_TIMEOUT_MS");
}

/* Two ranks of one communicator in this process, by ncclCommInitAll and by one group of this thread
 * (nccl-tests -g 2): created at once, and ended from this one thread, where each rank's finalize waits for
 * the other's (it runs once the last of them asks). Host-only ranks where the process sees no GPU; with two
 * GPUs or more, devices 0 and 1; on a single GPU both ranks would share it, which is refused. */
/* ncclCommSplit of both ranks of a process (made by ncclCommInitAll) from one thread, in one group as NCCL asks:
   the children run on their parents' devices, ranked by key; a color of one rank; a bad argument of one rank
   fails both without a wait; the children end from this thread as their parents do. */
static void checkSplitsTogether(ncclComm_t parents[2], int devices) {
  ncclComm_t child[2] = {NULL, NULL};
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  for (int r = 0; r < 2; ++r) CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(parents[r], 0, 1 - r, &child[r], NULL));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupEnd());
  CHECK(child[0] != NULL && child[1] != NULL, "a grouped split of two ranks left %s", child[0] ? "rank 1 without a child" : "rank 0 without a child");
  for (int r = 0; r < 2; ++r)
    if (child[r] != NULL) checkQueriesOn(child[r], 1 - r, 2, devices >= 2 ? r : -1);

  ncclComm_t alone[2] = {NULL, NULL};
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(parents[0], NCCL_SPLIT_NOCOLOR, 0, &alone[0], NULL));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(parents[1], 7, 0, &alone[1], NULL));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupEnd());
  CHECK(alone[0] == NULL, "NCCL_SPLIT_NOCOLOR gave a communicator");
  if (alone[1] != NULL) {
    checkQueriesOn(alone[1], 0, 1, devices >= 2 ? 1 : -1);
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(alone[1]));
  }

  alone[0] = alone[1] = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  CHECK_RESULT(ncclInvalidArgument, "color is -5", ncclCommSplit(parents[0], -5, 0, &alone[0], NULL));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(parents[1], 0, 0, &alone[1], NULL));
  CHECK_RESULT(ncclInvalidArgument, "color is -5", ncclGroupEnd());
  CHECK(alone[0] == NULL && alone[1] == NULL, "a failed split left communicators");

  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(child[0])); /* held until its sibling asks */
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(child[1]));
}

/* Two ranks of one id created in one group as (nranks, rank) pairs that contradict each other: the group's
 * end refuses them with `expected` in the message and leaves no communicator. */
static void checkRefusedGroup(int nranksA, int rankA, int nranksB, int rankB, const char* expected) {
  ncclUniqueId id;
  ncclComm_t a = NULL, b = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&a, nranksA, id, rankA));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&b, nranksB, id, rankB));
  CHECK_RESULT(ncclInvalidArgument, expected, ncclGroupEnd());
  CHECK(a == NULL && b == NULL, "a refused group left communicators");
}

static void checkRanksTogether(void) {
  const int devices = visibleDevices();
  int current = 0;
  if (devices > 0) cudaGetDevice(&current);
  ncclComm_t all[2] = {NULL, NULL};
  if (devices != 1) {
    CHECK_RESULT(ncclSuccess, NULL, ncclCommInitAll(all, 2, NULL));
    for (int r = 0; r < 2; ++r)
      if (all[r] != NULL) checkQueriesOn(all[r], r, 2, devices >= 2 ? r : -1);
    if (all[0] != NULL && all[1] != NULL) checkSplitsTogether(all, devices);
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(all[0])); /* held: rank 1 has not asked yet */
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(all[1])); /* both finalize now, then both are freed */
  } else {
    CHECK_RESULT(ncclInvalidArgument, "ndev is 2 but this process sees 1 CUDA device", ncclCommInitAll(all, 2, NULL));
  }
  const int oneGpu[2] = {0, 0};
  if (devices > 0) CHECK_RESULT(ncclInvalidArgument, "are both device 0", ncclCommInitAll(all, 2, oneGpu));

  ncclUniqueId id;
  ncclComm_t first = NULL, second = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  CHECK_RESULT(ncclSuccess, NULL, ncclGroupStart());
  if (devices >= 2) cudaSetDevice(0);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&first, 2, id, 0));
  if (devices >= 2) cudaSetDevice(1);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&second, 2, id, 1));
  if (devices == 1) {
    CHECK_RESULT(ncclInvalidUsage, "were both created on device 0", ncclGroupEnd());
    CHECK(first == NULL && second == NULL, "a refused group left communicators");
  } else {
    CHECK_RESULT(ncclSuccess, NULL, ncclGroupEnd());
    if (first != NULL) checkQueriesOn(first, 0, 2, devices >= 2 ? 0 : -1);
    if (second != NULL) checkQueriesOn(second, 1, 2, devices >= 2 ? 1 : -1);
    CHECK_RESULT(ncclSuccess, NULL, ncclCommFinalize(first)); /* held until rank 1 asks */
    CHECK_RESULT(ncclInvalidUsage, "finalized already", ncclCommFinalize(first));
    CHECK_RESULT(ncclSuccess, NULL, ncclCommFinalize(second));
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(second));
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(first));
  }
  if (devices > 0) cudaSetDevice(current);

  checkRefusedGroup(2, 0, 2, 0, "rank 0 of one communicator was created twice");
  checkRefusedGroup(2, 0, 3, 1, "created with nranks 2 and 3");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  checkIdentity();
  ncclUniqueId id = mpiSharedId(rank);
  ncclComm_t world = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&world, nranks, id, rank));
  if (world != NULL) {
    checkQueries(world, rank, nranks);
    checkSplit(world);
    checkHostOnlyRefusals(world);
    checkGpuCollectives(world);
    checkRefusalsAndArguments(world, id);
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(world));
  }
  checkProcessLocalCreations();
  checkRanksTogether();
  /* The same job again, ended by abort (local) instead of destroy. */
  id = mpiSharedId(rank);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&world, nranks, id, rank));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommAbort(world));

  int failures = checkFailures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nccl_api_test: %d ranks, %d failed checks\n", nranks, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
