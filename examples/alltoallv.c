/* MPIX_Alltoallv_cuda from C: called as MPI_Alltoallv, plus a stream. With a CUDA device the buffers are
 * cudaMalloc'd and the exchange runs on the GPU, enqueued on the stream; without one (a CPU machine)
 * they are host memory and the call hands them to MPI_Alltoallv. Rank r sends (r + p) % 3 ints to rank
 * p, valued r * 1000 + p * 10 + i, so every receiver can check what it got.
 *   mpicc alltoallv.c $(pkg-config --cflags --libs alloy) && mpirun -np 2 ./a.out */
#include <alloy_mpix.h>
#include <stdio.h>
#include <stdlib.h>

static int localRank(void) {
  MPI_Comm node;
  int rank;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

int main(int argc, char** argv) {
  int rank, nranks, devices = 0, wrong = 0, total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  if (devices > 0) cudaSetDevice(localRank() % devices); /* one GPU per rank, before any MPIX call */

  int *sendcounts = malloc(nranks * sizeof(int)), *sdispls = malloc(nranks * sizeof(int));
  int *recvcounts = malloc(nranks * sizeof(int)), *rdispls = malloc(nranks * sizeof(int));
  for (int p = 0; p < nranks; ++p) {
    sendcounts[p] = recvcounts[p] = (rank + p) % 3; /* symmetric: p sends rank as many */
    sdispls[p] = rdispls[p] = total;
    total += sendcounts[p];
  }
  int *host = malloc((total + 1) * sizeof(int)), *sendbuf = host, *recvbuf = malloc((total + 1) * sizeof(int));
  for (int p = 0; p < nranks; ++p)
    for (int i = 0; i < sendcounts[p]; ++i) host[sdispls[p] + i] = rank * 1000 + p * 10 + i;

  cudaStream_t stream = NULL;
  if (devices > 0) {
    cudaStreamCreate(&stream);
    cudaMalloc((void**)&sendbuf, (total + 1) * sizeof(int));
    cudaMalloc((void**)&recvbuf, (total + 1) * sizeof(int));
    cudaMemcpy(sendbuf, host, (total + 1) * sizeof(int), cudaMemcpyHostToDevice);
  }
  int rc = MPIX_Alltoallv_cuda(sendbuf, sendcounts, sdispls, MPI_INT, recvbuf, recvcounts, rdispls, MPI_INT,
                               MPI_COMM_WORLD, stream);
  if (devices > 0) { /* the result is there once the stream gets past the call */
    cudaStreamSynchronize(stream);
    cudaMemcpy(host, recvbuf, (total + 1) * sizeof(int), cudaMemcpyDeviceToHost);
  } else {
    for (int i = 0; i < total; ++i) host[i] = recvbuf[i];
  }
  for (int p = 0; p < nranks; ++p)
    for (int i = 0; i < recvcounts[p]; ++i) wrong += host[rdispls[p] + i] != p * 1000 + rank * 10 + i;
  printf("rank %d: MPIX_Alltoallv_cuda of %d ints through %s memory: %s\n", rank, total,
         devices > 0 ? "GPU" : "host", rc == MPI_SUCCESS && wrong == 0 ? "correct" : "WRONG");
  if (devices > 0) {
    cudaFree(sendbuf);
    cudaFree(recvbuf);
    cudaStreamDestroy(stream);
  } else {
    free(recvbuf);
  }
  free(host);
  free(sendcounts);
  free(sdispls);
  free(recvcounts);
  free(rdispls);
  MPI_Finalize(); /* also frees the GPU communicator cached on MPI_COMM_WORLD */
  return rc == MPI_SUCCESS && wrong == 0 ? 0 : 1;
}
