/* The smallest Alloy program: a GPU communicator straight from MPI_COMM_WORLD, then an alltoall checked
 * on the host. On a machine without a CUDA device the communicator is host-only and the demo says so. */
#include <alloy.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    alloyResult_t r_ = (call);                                                                        \
    if (r_ != alloySuccess) {                                                                         \
      fprintf(stderr, "%s failed: %s: %s\n", #call, alloyGetErrorString(r_), alloyGetLastError(NULL)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

static int alltoallDemo(alloyComm_t comm, int rank, int nranks) {
  const size_t count = 1 << 20; /* ints per peer */
  size_t total = count * (size_t)nranks;
  int *host = malloc(total * sizeof(int)), *send = NULL, *recv = NULL, wrong = 0;
  cudaStream_t stream;
  for (size_t i = 0; i < total; ++i) host[i] = (int)(rank * 1000003 + i); /* block p goes to rank p */
  if (cudaStreamCreate(&stream) != cudaSuccess || cudaMalloc((void**)&send, total * sizeof(int)) != cudaSuccess ||
      cudaMalloc((void**)&recv, total * sizeof(int)) != cudaSuccess ||
      cudaMemcpy(send, host, total * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemset(recv, 0xff, total * sizeof(int)) != cudaSuccess) {
    fprintf(stderr, "CUDA set-up failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CHECK(alloyAlltoAll(send, recv, count, alloyInt32, comm, stream));
  if (cudaStreamSynchronize(stream) != cudaSuccess ||
      cudaMemcpy(host, recv, total * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
    fprintf(stderr, "CUDA copy-back failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int p = 0; p < nranks; ++p) /* block p came from rank p, where it sat at offset rank * count */
    for (size_t i = 0; i < count; ++i)
      wrong += host[p * count + i] != (int)(p * 1000003 + rank * count + i);
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(stream);
  free(host);
  return wrong;
}

int main(int argc, char** argv) {
  int rank, nranks, device, version;
  alloyComm_t comm;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(alloyGetVersion(&version));
  CHECK(alloyCommCreateFromMPI(MPI_COMM_WORLD, NULL, &comm));
  CHECK(alloyCommCuDevice(comm, &device));
  /* alloyGetVersion encodes major*10000 + minor*100 + patch: 100 is 0.1.0. */
  printf("rank %d/%d: Alloy %d.%d.%d communicator on CUDA device %d%s\n", rank, nranks, version / 10000,
         version / 100 % 100, version % 100, device,
         device < 0 ? " (host-only: no CUDA device on this machine)" : "");
  int wrong = 0;
  if (device >= 0) {
    /* As with NCCL, buffers and streams belong to the communicator's device: make it current first. */
    if (cudaSetDevice(device) != cudaSuccess) {
      fprintf(stderr, "cudaSetDevice(%d) failed\n", device);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    wrong = alltoallDemo(comm, rank, nranks);
    printf("rank %d: alltoall of %d x 4 MiB: %s\n", rank, nranks, wrong ? "WRONG" : "correct");
  }
  CHECK(alloyCommDestroy(comm));
  MPI_Finalize();
  return wrong ? 1 : 0;
}
