/* Under the default MPI_ERRORS_ARE_FATAL, a bad argument aborts the job through the communicator's error
 * handler, and the message reaches the job's output (Alloy's own stderr line, which survives Open MPI's
 * lossy help channel, and Open MPI's handler text when that channel delivers it). ctest checks the text
 * and that the rank never got past the call. */
#include <alloy_mpix.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int send[4] = {0}, recv[4] = {0};
  MPI_Init(&argc, &argv);
  MPIX_Alltoall_cuda(send, -1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD, NULL);
  printf("fatal_test: still running after the bad call\n");
  MPI_Finalize();
  return 0;
}
