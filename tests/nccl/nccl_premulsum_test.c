/*
 * ncclRedOpCreatePreMulSum and ncclRedOpDestroy of Alloy's libnccl.so.2, as an NCCL program uses them, under mpirun
 * (MPI hands out the id and the random seed). Everywhere (CI runs it without a GPU, on host-only communicators):
 * the operator table, its values, their reuse and numbering per communicator, and every refusal with its message.
 * On a GPU: allreduce, reduce and reduce-scatter with PreMulSum operators of both residences, in and out of place, in
 * float32, float16, bfloat16 and int32, on fresh random data against the host reference of premulsum_reference.h,
 * every buffer poisoned or filled first and checked whole afterwards; a device scalar read when the collective
 * runs, eagerly and in the replays of a CUDA graph. Written with the library but NOT yet run on a GPU.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "mpi_id.h"
#include "premulsum_reference.h"

#define POISON_OP ((ncclRedOp_t)-77)
#define MAX_RANKS 64

static int rank, nranks;
static uint64_t seed;

/* Every refusal of a creation names the argument and leaves *op as it was. */
static void checkCreationRefusals(ncclComm_t comm) {
  float two = 2;
  ncclRedOp_t op = POISON_OP;
  CHECK_RESULT(ncclInvalidArgument, "comm is NULL",
               ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, NULL));
  CHECK_RESULT(ncclInvalidArgument, "op is NULL",
               ncclRedOpCreatePreMulSum(NULL, &two, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclInvalidArgument, "scalar is NULL",
               ncclRedOpCreatePreMulSum(&op, NULL, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclInvalidArgument, "datatype 12",
               ncclRedOpCreatePreMulSum(&op, &two, ncclNumTypes, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclInvalidArgument, "residence is 7",
               ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, (ncclScalarResidence_t)7, comm));
  /* A device scalar must be memory the communicator's GPU reads: a host variable is not. */
  CHECK_RESULT(ncclInvalidArgument, "scalar=",
               ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarDevice, comm));
  CHECK(op == POISON_OP, "a refused creation wrote op (%d)", (int)op);
}

/* Values ncclNumOps + index, per communicator, the lowest free index reused; an operator serves its own datatype
 * only; built-in, unknown and destroyed operators are refused by destroy and by the reductions. */
static void checkOperatorTable(ncclComm_t comm, ncclComm_t other, int gpu) {
  float f = 2;
  int32_t i = 3;
  uint16_t h = 0x3c00; /* 1.0 */
  double d = 0.5;
  ncclRedOp_t a = POISON_OP, b = POISON_OP, c = POISON_OP, reused = POISON_OP, elsewhere = POISON_OP;
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&a, &f, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&b, &i, ncclInt32, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&c, &h, ncclFloat16, ncclScalarHostImmediate, comm));
  CHECK(a == ncclNumOps && b == ncclNumOps + 1 && c == ncclNumOps + 2, "operators %d %d %d, expected %d %d %d",
        (int)a, (int)b, (int)c, ncclNumOps, ncclNumOps + 1, ncclNumOps + 2);

  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(b, comm));
  CHECK_RESULT(ncclInvalidArgument, "destroyed already", ncclRedOpDestroy(b, comm));
  CHECK_RESULT(ncclInvalidArgument, "op is 6", ncclAllReduce(&i, &i, 1, ncclInt32, b, comm, 0));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&reused, &d, ncclFloat64, ncclScalarHostImmediate, comm));
  CHECK(reused == b, "the new operator is %d, expected the destroyed one's value %d", (int)reused, (int)b);

  CHECK_RESULT(ncclSuccess, NULL,
               ncclRedOpCreatePreMulSum(&elsewhere, &f, ncclFloat32, ncclScalarHostImmediate, other));
  CHECK(elsewhere == ncclNumOps, "another communicator's first operator is %d, expected %d", (int)elsewhere,
        ncclNumOps);
  CHECK_RESULT(ncclInvalidArgument, "no operator of this communicator", ncclRedOpDestroy(c, other));
  CHECK_RESULT(ncclInvalidArgument, "op is 7", ncclReduce(&h, &h, 1, ncclFloat16, c, 0, other, 0));

  CHECK_RESULT(ncclInvalidArgument, "for datatype float32", ncclAllReduce(&f, &f, 1, ncclInt32, a, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "this call's datatype is float64",
               ncclReduce(&f, &f, 1, ncclFloat64, a, 0, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "for datatype float16", ncclReduceScatter(&h, &h, 1, ncclBfloat16, c, comm, 0));
  CHECK_RESULT(ncclInvalidArgument, "op is -3", ncclAllReduce(&f, &f, 1, ncclFloat32, (ncclRedOp_t)-3, comm, 0));

  CHECK_RESULT(ncclInvalidArgument, "op 0 is a built-in", ncclRedOpDestroy(ncclSum, comm));
  CHECK_RESULT(ncclInvalidArgument, "op 4 is a built-in", ncclRedOpDestroy(ncclAvg, comm));
  CHECK_RESULT(ncclInvalidArgument, "op -1 is no operator", ncclRedOpDestroy((ncclRedOp_t)-1, comm));
  CHECK_RESULT(ncclInvalidArgument, "op 55 is no operator", ncclRedOpDestroy((ncclRedOp_t)(ncclNumOps + 50), comm));
  CHECK_RESULT(ncclInvalidArgument, "comm is NULL", ncclRedOpDestroy(a, NULL));

  /* Accepted operators reach Alloy's collectives, which refuse a host-only communicator. */
  if (!gpu) {
    CHECK_RESULT(ncclInvalidUsage, "host-only", ncclAllReduce(&f, &f, 1, ncclFloat32, a, comm, 0));
    CHECK_RESULT(ncclInvalidUsage, "host-only", ncclReduce(&h, &h, 1, ncclFloat16, c, 0, comm, 0));
    CHECK_RESULT(ncclInvalidUsage, "host-only", ncclReduceScatter(&d, &d, 1, ncclFloat64, reused, comm, 0));
  }
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(a, comm));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(c, comm));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(elsewhere, other));
  /* `reused` stays: destroying the communicator frees it. */
}

/* ---- On a GPU ---- */

/* The inputs of one case on every rank, each rank's scalar, and the result everywhere (premulsum_reference.h). Inputs
 * and scalars come from streams of their own (the scalars' salted, so that equal ids still give unrelated values),
 * so that cases may share one and differ in the other. */
typedef struct {
  const TypeCase* t;
  size_t total;           /* elements of each rank's input */
  unsigned char* inputs;  /* rank r's at r * total elements */
  unsigned char scalars[MAX_RANKS][8];
  unsigned char* expected; /* total elements */
} Data;

static uint64_t streamOf(uint64_t what, int r) { return seed ^ (what * 0x100000001b3ull) ^ ((uint64_t)r << 48); }

static Data makeData(const TypeCase* t, size_t total, uint64_t inputsId, uint64_t scalarsId) {
  Data d = {t, total, (unsigned char*)malloc(total * t->size * nranks), {{0}}, (unsigned char*)malloc(total * t->size)};
  for (int r = 0; r < nranks; ++r) {
    uint64_t in = streamOf(inputsId, r), sc = streamOf(scalarsId, r) ^ 0x5ca1a25ca1a25ca1ull;
    for (size_t e = 0; e < total; ++e) t->input(&in, d.inputs + (r * total + e) * t->size);
    t->scalar(&sc, d.scalars[r]);
  }
  const void* elements[MAX_RANKS];
  const void* scalars[MAX_RANKS];
  for (int r = 0; r < nranks; ++r) scalars[r] = d.scalars[r];
  for (size_t e = 0; e < total; ++e) {
    for (int r = 0; r < nranks; ++r) elements[r] = d.inputs + (r * total + e) * t->size;
    t->premulsum(nranks, elements, scalars, d.expected + e * t->size);
  }
  return d;
}

static void freeData(Data* d) {
  free(d->inputs);
  free(d->expected);
}

/* A buffer downloaded whole against what it must hold: equal bytes, or equal values (-0 is 0). */
static void expectBuffer(const TypeCase* t, const void* device, const unsigned char* want, size_t n, const char* what,
                         const char* buffer) {
  unsigned char* got = (unsigned char*)malloc(n * t->size);
  CHECK(cudaMemcpy(got, device, n * t->size, cudaMemcpyDeviceToHost) == cudaSuccess, "%s: copying %s back", what,
        buffer);
  size_t wrong = 0, first = n;
  for (size_t e = 0; e < n; ++e) {
    const unsigned char *g = got + e * t->size, *w = want + e * t->size;
    if (memcmp(g, w, t->size) == 0 || t->value(g) == t->value(w)) continue;
    if (wrong++ == 0) first = e;
  }
  CHECK(wrong == 0, "%s: %s: %zu of %zu elements wrong, the first at %zu: %g, expected %g", what, buffer, wrong, n,
        first, first < n ? t->value(got + first * t->size) : 0.0, first < n ? t->value(want + first * t->size) : 0.0);
  free(got);
}

typedef enum { kAllReduce, kReduce, kReduceScatter } Collective;
static const char* const kCollectiveNames[] = {"ncclAllReduce", "ncclReduce", "ncclReduceScatter"};

static ncclResult_t launch(Collective coll, const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  switch (coll) {
    case kAllReduce: return ncclAllReduce(send, recv, count, type, op, comm, stream);
    case kReduce: return ncclReduce(send, recv, count, type, op, root, comm, stream);
    default: return ncclReduceScatter(send, recv, count, type, op, comm, stream);
  }
}

/* One collective of d with op, in or out of place. Afterwards sendbuff and recvbuff must hold, whole: the result
 * where NCCL puts it (recvbuff, or in place sendbuff; reduce: on the root only; reduce-scatter: this rank's part),
 * this rank's input untouched everywhere else in sendbuff, the poison everywhere else in recvbuff. */
static void runCase(Collective coll, int inPlace, ncclRedOp_t op, const Data* d, int root, ncclComm_t comm,
                    cudaStream_t stream, void* send, void* recv, const char* what) {
  const TypeCase* t = d->t;
  const size_t inBytes = d->total * t->size, count = coll == kReduceScatter ? d->total / nranks : d->total;
  const size_t outBytes = count * t->size, resultAt = coll == kReduceScatter ? rank * outBytes : 0;
  const unsigned char* mine = d->inputs + rank * inBytes;
  unsigned char* wantSend = (unsigned char*)malloc(inBytes);
  unsigned char* wantRecv = (unsigned char*)malloc(inBytes);
  memcpy(wantSend, mine, inBytes);
  memset(wantRecv, 0xff, inBytes);
  if (coll != kReduce || rank == root)
    memcpy(inPlace ? wantSend + resultAt : wantRecv, d->expected + resultAt, outBytes);

  CHECK(cudaMemcpy(send, mine, inBytes, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemset(recv, 0xff, inBytes) == cudaSuccess, "%s: filling the buffers", what);
  void* out = inPlace ? (char*)send + resultAt : recv;
  CHECK_RESULT(ncclSuccess, NULL, launch(coll, send, out, count, t->type, op, root, comm, stream));
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "%s: stream: %s", what, cudaGetErrorString(cudaGetLastError()));
  expectBuffer(t, send, wantSend, d->total, what, "sendbuff");
  expectBuffer(t, recv, wantRecv, d->total, what, "recvbuff");
  free(wantSend);
  free(wantRecv);
}

/* The operator of this rank's scalar of d, at a residence; a device scalar lives at *deviceScalar (freed by the
 * caller). A host scalar is read at creation: the variable passed is overwritten right after. */
static ncclRedOp_t createOp(const Data* d, ncclScalarResidence_t residence, void** deviceScalar, ncclComm_t comm) {
  ncclRedOp_t op = POISON_OP;
  unsigned char scalar[8];
  memcpy(scalar, d->scalars[rank], sizeof(scalar));
  void* where = scalar;
  *deviceScalar = NULL;
  if (residence == ncclScalarDevice) {
    CHECK(cudaMalloc(deviceScalar, d->t->size) == cudaSuccess &&
              cudaMemcpy(*deviceScalar, scalar, d->t->size, cudaMemcpyHostToDevice) == cudaSuccess,
          "a device scalar");
    where = *deviceScalar;
  }
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&op, where, d->t->type, residence, comm));
  memset(scalar, 0x5a, sizeof(scalar));
  return op;
}

/* Every collective, in and out of place, with one operator per collective, at both residences. */
static void checkCollectives(const TypeCase* t, size_t count, ncclComm_t comm, cudaStream_t stream, uint64_t caseId) {
  for (int residence = ncclScalarDevice; residence <= ncclScalarHostImmediate; ++residence) {
    for (int coll = kAllReduce; coll <= kReduceScatter; ++coll, ++caseId) {
      const size_t total = coll == kReduceScatter ? count * nranks : count;
      Data d = makeData(t, total, caseId, caseId);
      void *send = NULL, *recv = NULL, *deviceScalar = NULL;
      CHECK(cudaMalloc(&send, total * t->size) == cudaSuccess && cudaMalloc(&recv, total * t->size) == cudaSuccess,
            "cudaMalloc of %zu bytes", total * t->size);
      const ncclRedOp_t op = createOp(&d, (ncclScalarResidence_t)residence, &deviceScalar, comm);
      const int root = (int)(caseId % (uint64_t)nranks);
      for (int inPlace = 0; inPlace <= 1; ++inPlace) {
        char what[160];
        snprintf(what, sizeof(what), "%s %s, %zu elements, %s scalar, %s place, root %d", kCollectiveNames[coll],
                 t->name, count, residence == ncclScalarDevice ? "device" : "host", inPlace ? "in" : "out of", root);
        runCase((Collective)coll, inPlace, op, &d, root, comm, stream, send, recv, what);
      }
      CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(op, comm));
      cudaFree(deviceScalar);
      cudaFree(send);
      cudaFree(recv);
      freeData(&d);
    }
  }
}

/* Whether every rank says yes. */
static int allRanks(int yes) {
  int all = 0;
  MPI_Allreduce(&yes, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* A device scalar is read when the collective runs: changed on the stream between two allreduces of one operator,
 * and between replays of a captured allreduce and reduce-scatter (whose scratch the graph allocates), each result
 * follows it. The eager operator is destroyed as soon as its last call returns, before its work ran. */
static void checkDeviceScalarReadWhenRun(ncclComm_t comm, cudaStream_t stream) {
  const TypeCase* t = &kTypeCases[0];
  const size_t count = 4099, bytes = count * t->size * nranks;
  void *sendA = NULL, *recvA = NULL, *sendB = NULL, *recvB = NULL;
  CHECK(cudaMalloc(&sendA, bytes) == cudaSuccess && cudaMalloc(&recvA, bytes) == cudaSuccess &&
            cudaMalloc(&sendB, bytes) == cudaSuccess && cudaMalloc(&recvB, bytes) == cudaSuccess, "cudaMalloc");

  Data first = makeData(t, count, 100, 101), second = makeData(t, count, 100, 102);
  void* scalar = NULL;
  ncclRedOp_t op = createOp(&first, ncclScalarDevice, &scalar, comm);
  cudaMemcpy(sendA, first.inputs + rank * count * t->size, count * t->size, cudaMemcpyHostToDevice);
  cudaMemset(recvA, 0xff, bytes);
  cudaMemset(recvB, 0xff, bytes);
  CHECK_RESULT(ncclSuccess, NULL, ncclAllReduce(sendA, recvA, count, t->type, op, comm, stream));
  CHECK(cudaMemcpyAsync(scalar, second.scalars[rank], t->size, cudaMemcpyHostToDevice, stream) == cudaSuccess,
        "the new scalar");
  CHECK_RESULT(ncclSuccess, NULL, ncclAllReduce(sendA, recvB, count, t->type, op, comm, stream));
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(op, comm));
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "eager: stream");
  expectBuffer(t, recvA, first.expected, count, "eager allreduce, first scalar", "recvbuff");
  expectBuffer(t, recvB, second.expected, count, "eager allreduce, scalar changed on the stream", "recvbuff");
  freeData(&first);
  freeData(&second);

  op = POISON_OP;
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpCreatePreMulSum(&op, scalar, t->type, ncclScalarDevice, comm));
  cudaMemset(recvA, 0xff, bytes);
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess, "cudaStreamBeginCapture");
  CHECK_RESULT(ncclSuccess, NULL, ncclAllReduce(sendA, recvA, count, t->type, op, comm, stream));
  CHECK_RESULT(ncclSuccess, NULL, ncclReduceScatter(sendB, recvB, count, t->type, op, comm, stream));
  CHECK(cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != NULL, "cudaStreamEndCapture");
  CHECK(graph == NULL || cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "cudaGraphInstantiate");
  CHECK_RESULT(ncclSuccess, NULL, ncclRedOpDestroy(op, comm));
  cudaGetLastError();
  unsigned char* poison = (unsigned char*)malloc(bytes);
  memset(poison, 0xff, bytes);
  expectBuffer(t, recvA, poison, count, "graph: after capture, before any replay", "recvbuff");
  free(poison);
  if (allRanks(exec != NULL)) {
    for (uint64_t replay = 0; replay < 3; ++replay) {
      /* One scalar for both: the operator's. */
      Data all = makeData(t, count, 200 + replay, 300 + replay);
      Data parts = makeData(t, count * nranks, 400 + replay, 300 + replay);
      cudaMemcpy(sendA, all.inputs + rank * count * t->size, count * t->size, cudaMemcpyHostToDevice);
      cudaMemcpy(sendB, parts.inputs + rank * bytes, bytes, cudaMemcpyHostToDevice);
      cudaMemcpy(scalar, all.scalars[rank], t->size, cudaMemcpyHostToDevice);
      cudaMemset(recvA, 0xff, bytes);
      cudaMemset(recvB, 0xff, bytes);
      CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess,
            "graph replay %d", (int)replay);
      char what[64];
      snprintf(what, sizeof(what), "graph replay %d, allreduce", (int)replay);
      expectBuffer(t, recvA, all.expected, count, what, "recvbuff");
      snprintf(what, sizeof(what), "graph replay %d, reduce-scatter", (int)replay);
      expectBuffer(t, recvB, parts.expected + rank * count * t->size, count, what, "recvbuff");
      freeData(&all);
      freeData(&parts);
    }
  }
  if (exec != NULL) cudaGraphExecDestroy(exec);
  if (graph != NULL) cudaGraphDestroy(graph);
  cudaFree(scalar);
  cudaFree(sendA);
  cudaFree(recvA);
  cudaFree(sendB);
  cudaFree(recvB);
}

/* Refusals that need device memory: a host-immediate scalar in device memory, a misaligned device scalar. */
static void checkDeviceScalarRefusals(ncclComm_t comm) {
  float* scalar = NULL;
  ncclRedOp_t op = POISON_OP;
  CHECK(cudaMalloc((void**)&scalar, 2 * sizeof(float)) == cudaSuccess, "cudaMalloc");
  CHECK_RESULT(ncclInvalidArgument, "ncclScalarDevice",
               ncclRedOpCreatePreMulSum(&op, scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK_RESULT(ncclInvalidArgument, "not aligned",
               ncclRedOpCreatePreMulSum(&op, (char*)scalar + 1, ncclFloat32, ncclScalarDevice, comm));
  CHECK(op == POISON_OP, "a refused creation wrote op (%d)", (int)op);
  cudaFree(scalar);
}

static void checkGpu(ncclComm_t comm) {
  int device = -1;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommCuDevice(comm, &device));
  cudaSetDevice(device);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
  checkDeviceScalarRefusals(comm);
  /* 4099: odd, no multiple of any vector width. The large float32 case takes the paths for large buffers
   * (two-shot allreduce, reduce by parts at 3 ranks or more). */
  for (size_t k = 0; k < sizeof(kTypeCases) / sizeof(kTypeCases[0]); ++k)
    checkCollectives(&kTypeCases[k], 4099, comm, stream, 1000 * (k + 1));
  checkCollectives(&kTypeCases[0], (3u << 20) + 1, comm, stream, 9000);
  checkDeviceScalarReadWhenRun(comm, stream);
  cudaStreamDestroy(stream);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks > MAX_RANKS) {
    if (rank == 0) fprintf(stderr, "FAILED: nccl_premulsum_test runs at most %d ranks\n", MAX_RANKS);
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  ncclUniqueId id = mpiSharedId(rank);
  ncclComm_t world = NULL, other = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&world, nranks, id, rank));
  if (world != NULL) {
    CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(world, 0, rank, &other, NULL));
    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
    checkCreationRefusals(world);
    if (other != NULL) checkOperatorTable(world, other, visible > 0);
    if (visible > 0) checkGpu(world);
    else if (rank == 0) printf("nccl_premulsum_test: PreMulSum collectives skipped: no CUDA device\n");
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(other));
    CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(world));
  }
  int failures = checkFailures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("nccl_premulsum_test: %d ranks, %d failed checks (seed %llu)\n", nranks, total, (unsigned long long)seed);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
