/*
 * An unmodified CUDA-aware MPI program (mpi.h and the CUDA runtime; no Alloy header) for the layer on a
 * GPU machine, run under mpirun with liballoy_mpi.so preloaded, one rank per GPU. The standard cases
 * (cases.h) on cudaMalloc'd memory must all run on Alloy's GPU engine; on host memory, and where rank 0
 * passes host memory while the others pass managed memory (a mixed call, which must be decided alike on
 * every rank: all pass), they must all go to the MPI library, which can read managed memory. Device
 * buffers are written with cudaMemcpy on the legacy default stream and the call follows without any
 * synchronisation: the layer orders its work after that stream (docs/mpi-layer.md). Managed buffers are
 * synchronised first, as the MPI library, which gets those calls, needs. Without a CUDA device it prints
 * "skipped: no CUDA device" and exits 77.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases.h"

static void *device_alloc(size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes > 0 ? bytes : 1) != cudaSuccess) abort();
  return p;
}
static void *managed_alloc(size_t bytes) {
  void *p = NULL;
  if (cudaMallocManaged(&p, bytes > 0 ? bytes : 1, cudaMemAttachGlobal) != cudaSuccess) abort();
  return p;
}
static void device_release(void *p) { cudaFree(p); }
static void device_put(void *buffer, const void *host, size_t bytes) {
  if (bytes > 0 && cudaMemcpy(buffer, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) abort();
}
static void device_get(void *host, const void *buffer, size_t bytes) {
  if (bytes > 0 && cudaMemcpy(host, buffer, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) abort();
}
static void managed_put(void *buffer, const void *host, size_t bytes) {
  device_put(buffer, host, bytes);
  if (cudaDeviceSynchronize() != cudaSuccess) abort();
}
static const struct test_memory device_memory = {1, device_alloc, device_release, device_put, device_get};
static const struct test_memory managed_memory = {0, managed_alloc, device_release, managed_put, device_get};

/* One device per rank: the launcher's local rank modulo the visible devices. */
static int select_device(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 0;
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (local == NULL) local = getenv("SLURM_LOCALID");
  cudaSetDevice((local != NULL ? atoi(local) : 0) % devices);
  return 1;
}

static void rounds(struct test_run *t, const struct test_memory *mem, int count) {
  t->mem = mem;
  for (int round = 0; round < count; ++round) test_round(t);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  struct expectations expected;
  struct test_run t;
  test_begin(&t, MPI_COMM_WORLD, &host_memory, &expected);
  int mine = select_device(), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, t.comm); /* before any device memory: passed */
  test_count(&t, CALL_ALLREDUCE, 0);
  if (!all) {
    printf("skipped: no CUDA device\n");
    MPI_Finalize();
    return 77;
  }
  rounds(&t, &device_memory, 3);
  rounds(&t, &host_memory, 1);
  rounds(&t, t.rank == 0 ? &host_memory : &managed_memory, 1);
  rounds(&t, &device_memory, 1); /* after host calls on the same communicator */
  test_on_halves(&t, test_round); /* a communicator of its own: its own GPU communicator */
  const int status = test_finish(&t, "gpu_program");
  MPI_Finalize();
  return status;
}
