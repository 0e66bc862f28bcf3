/*
 * A communicator through Alloy's libnccl.so.2 in processes that never call MPI_Init (as PyTorch's): the first
 * process gets the unique id, writes it to a file and starts the others with fork and exec; each creates its
 * rank, checks count and rank, splits by parity, and destroys both. MPI_Initialized (libnccl.so.2 links MPI)
 * must still say 0 at the end. Usage: nccl_no_mpi_test NRANKS [RANK IDFILE] (the last two for the children).
 * ALLOY_HOSTID may be set per rank through ALLOY_TEST_HOSTID_MODULO=M (host = rank % M): virtual hosts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int readId(const char* path, ncclUniqueId* id) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  const size_t got = fread(id, 1, sizeof(*id), f);
  fclose(f);
  return got == sizeof(*id);
}

static int runRank(int nranks, int rank, const char* idFile) {
  ncclUniqueId id;
  CHECK(readId(idFile, &id), "cannot read the id from %s", idFile);
  ncclComm_t comm = NULL, parity = NULL;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommInitRank(&comm, nranks, id, rank));
  if (comm == NULL) return 1;
  int value = -7;
  CHECK_RESULT(ncclSuccess, NULL, ncclCommCount(comm, &value));
  CHECK(value == nranks, "count %d, expected %d", value, nranks);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommUserRank(comm, &value));
  CHECK(value == rank, "rank %d, expected %d", value, rank);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommSplit(comm, rank % 2, rank, &parity, NULL));
  value = -7;
  if (parity != NULL) ncclCommUserRank(parity, &value);
  CHECK(value == rank / 2, "rank %d in the parity split, expected %d", value, rank / 2);
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(parity));
  CHECK_RESULT(ncclSuccess, NULL, ncclCommDestroy(comm));
  int (*initialized)(int*) = (int (*)(int*))dlsym(RTLD_DEFAULT, "MPI_Initialized");
  int flag = -1;
  if (initialized != NULL) initialized(&flag);
  CHECK(initialized == NULL || flag == 0, "MPI_Initialized says %d: something called MPI_Init", flag);
  return checkFailures == 0 ? 0 : 1;
}

static void setHostId(int rank) {
  const char* modulo = getenv("ALLOY_TEST_HOSTID_MODULO");
  if (modulo == NULL) return;
  char value[32];
  snprintf(value, sizeof(value), "vhost%d", rank % atoi(modulo));
  setenv("ALLOY_HOSTID", value, 1);
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: %s NRANKS [RANK IDFILE]\n", argv[0]);
    return 2;
  }
  const int nranks = atoi(argv[1]);
  if (argc == 4) {
    setHostId(atoi(argv[2]));
    return runRank(nranks, atoi(argv[2]), argv[3]);
  }
  char idFile[] = "/tmp/alloy-nccl-id-XXXXXX";
  const int fd = mkstemp(idFile);
  ncclUniqueId id;
  CHECK_RESULT(ncclSuccess, NULL, ncclGetUniqueId(&id));
  CHECK(fd >= 0 && write(fd, &id, sizeof(id)) == (ssize_t)sizeof(id), "cannot write %s", idFile);
  close(fd);
  pid_t children[64];
  for (int r = 1; r < nranks && r < 64; ++r) {
    char rankText[16];
    snprintf(rankText, sizeof(rankText), "%d", r);
    children[r] = fork();
    if (children[r] == 0) {
      execl("/proc/self/exe", argv[0], argv[1], rankText, idFile, (char*)NULL);
      _exit(127);
    }
  }
  setHostId(0);
  int failed = runRank(nranks, 0, idFile);
  for (int r = 1; r < nranks && r < 64; ++r) {
    int status = 0;
    waitpid(children[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "FAILED: rank %d exited with status %d\n", r, status);
      failed = 1;
    }
  }
  unlink(idFile);
  printf("nccl_no_mpi_test: %d ranks without MPI_Init: %s\n", nranks, failed ? "FAILED" : "passed");
  return failed;
}
