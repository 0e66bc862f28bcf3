/*
 * One device rule for the three doors (issue #35, lib/core/device_select.h): a program that never calls
 * cudaSetDevice must get the same GPU from the native API (config->cudaDevice = -1), from MPIX and from
 * Alloy's libnccl.so.2 (ncclCommInitRank), whichever it opens first, and that GPU is (local rank) %
 * (visible devices). Run under mpirun, one process per rank:
 *   device_doors_test native|nccl <path of Alloy's libnccl.so.2>
 * "native": the native door first, then MPIX, then NCCL; "nccl": NCCL first, then native, then MPIX.
 * The NCCL library is opened with dlopen, so that this program links only liballoy. Prints one line per
 * rank and "device_doors_test: N ranks, 0 failed checks" at the end; "skipped: no CUDA device" (exit 77)
 * without a GPU.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy.h"
#include "alloy_mpix.h"

typedef struct {
  char internal[128];
} UniqueId; /* ncclUniqueId's layout */
typedef void* NcclComm;

static int failures = 0;
static int rank = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    ++failures;
    printf("device_doors_test: rank %d: FAILED %s\n", rank, what);
  }
}

/* The NCCL door: a communicator of every rank through the library at path; its device, or -2. */
static int ncclDoor(const char* path, int nranks) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("device_doors_test: rank %d: FAILED dlopen %s: %s\n", rank, path, dlerror());
    ++failures;
    return -2;
  }
  int (*getUniqueId)(UniqueId*) = (int (*)(UniqueId*))dlsym(lib, "ncclGetUniqueId");
  int (*initRank)(NcclComm*, int, UniqueId, int) = (int (*)(NcclComm*, int, UniqueId, int))dlsym(lib, "ncclCommInitRank");
  int (*cuDevice)(NcclComm, int*) = (int (*)(NcclComm, int*))dlsym(lib, "ncclCommCuDevice");
  int (*destroy)(NcclComm) = (int (*)(NcclComm))dlsym(lib, "ncclCommDestroy");
  int device = -2;
  UniqueId id;
  memset(&id, 0, sizeof id);
  NcclComm comm = NULL;
  if (getUniqueId && initRank && cuDevice && destroy) {
    if (rank == 0) check(getUniqueId(&id) == 0, "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    check(initRank(&comm, nranks, id, rank) == 0, "ncclCommInitRank");
    if (comm) {
      check(cuDevice(comm, &device) == 0, "ncclCommCuDevice");
      check(destroy(comm) == 0, "ncclCommDestroy");
    }
  } else {
    check(0, "the NCCL functions in the library");
  }
  dlclose(lib);
  return device;
}

/* The native door: a communicator with cudaDevice -1; its device, or -2. */
static int nativeDoor(void) {
  alloyComm_t comm = NULL;
  int device = -2;
  check(alloyCommCreateFromMPI(MPI_COMM_WORLD, NULL, &comm) == alloySuccess, "alloyCommCreateFromMPI");
  if (comm) {
    check(alloyCommCuDevice(comm, &device) == alloySuccess, "alloyCommCuDevice");
    check(alloyCommDestroy(comm) == alloySuccess, "alloyCommDestroy");
  }
  return device;
}

/* The MPIX door: an allreduce of every rank's (rank + 1) * i on a buffer allocated on the current device,
 * checked; returns the device the buffer and the call used (the thread's current one). */
static int mpixDoor(int nranks) {
  enum { kCount = 4099 };
  int device = -2;
  check(cudaGetDevice(&device) == cudaSuccess, "cudaGetDevice");
  int* host = (int*)malloc(kCount * sizeof(int));
  int *send = NULL, *recv = NULL;
  check(cudaMalloc((void**)&send, kCount * sizeof(int)) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc((void**)&recv, kCount * sizeof(int)) == cudaSuccess, "cudaMalloc");
  for (int i = 0; i < kCount; ++i) host[i] = (rank + 1) * i;
  check(cudaMemcpy(send, host, kCount * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess, "upload");
  check(cudaMemset(recv, 0xff, kCount * sizeof(int)) == cudaSuccess, "poison");
  check(MPIX_Allreduce_cuda(send, recv, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, 0) == MPI_SUCCESS,
        "MPIX_Allreduce_cuda");
  check(cudaStreamSynchronize(0) == cudaSuccess, "synchronize");
  check(cudaMemcpy(host, recv, kCount * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess, "download");
  const int factor = nranks * (nranks + 1) / 2;
  int wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += host[i] != factor * i;
  check(wrong == 0, "MPIX_Allreduce_cuda's result");
  cudaFree(send);
  cudaFree(recv);
  free(host);
  return device;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible == 0) {
    if (rank == 0) printf("device_doors_test: skipped: no CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  if (argc != 3 || (strcmp(argv[1], "native") != 0 && strcmp(argv[1], "nccl") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: device_doors_test native|nccl <path of Alloy's libnccl.so.2>\n");
    MPI_Finalize();
    return 2;
  }
  const char* localRank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int expected = (localRank ? atoi(localRank) : 0) % visible;
  int native, mpix, nccl;
  if (strcmp(argv[1], "native") == 0) {
    native = nativeDoor();
    mpix = mpixDoor(nranks);
    nccl = ncclDoor(argv[2], nranks);
  } else {
    nccl = ncclDoor(argv[2], nranks);
    native = nativeDoor();
    mpix = mpixDoor(nranks);
  }
  printf("device_doors_test: rank %d, %s first: native %d, MPIX %d, NCCL %d; local rank %% %d visible = %d\n", rank,
         argv[1], native, mpix, nccl, visible, expected);
  check(native == expected, "the native door's device is local rank % visible devices");
  check(mpix == expected, "MPIX's device is the native door's");
  check(nccl == expected, "the NCCL door's device is the native door's");
  int total = 0;
  MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("device_doors_test: %d ranks, %d failed checks\n", nranks, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
