/*
 * The collective calls of the layer's test programs, written as an unmodified MPI program would write
 * them (mpi.h only: no Alloy header), on buffers of a kind the program chooses (struct test_memory: host
 * memory on the CPU machine, device or managed memory on a GPU machine). Every call runs on fresh random
 * data, its receive buffer poisoned first, and is checked element by element against a reference that
 * each rank computes on its own from every rank's inputs (each input is a function of the round's seed,
 * the call, the rank and the element). Each call is also counted under the route the program expects
 * the layer to take, for comparison with the layer's own count (ALLOY_MPI_LAYER_REPORT=1).
 */
#ifndef ALLOY_LAYER_TEST_CASES_H_
#define ALLOY_LAYER_TEST_CASES_H_

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum layer_call {
  CALL_ALLREDUCE, CALL_REDUCE, CALL_BCAST, CALL_ALLGATHER, CALL_ALLGATHERV, CALL_REDUCE_SCATTER_BLOCK,
  CALL_REDUCE_SCATTER, CALL_ALLTOALL, CALL_ALLTOALLV, CALL_IALLREDUCE, CALL_IALLTOALLV, N_LAYER_CALLS
};

struct test_memory {
  int diverts; /* 1: the layer is expected to run calls on these buffers on the GPU engine */
  void *(*alloc)(size_t bytes);
  void (*release)(void *buffer);
  void (*put)(void *buffer, const void *host, size_t bytes);
  void (*get)(void *host, const void *buffer, size_t bytes);
};

extern const struct test_memory host_memory;

/* Calls of each function the program made, by the route it expects the layer to take. */
struct expectations {
  long long passed[N_LAYER_CALLS], diverted[N_LAYER_CALLS];
};

struct test_run {
  MPI_Comm comm;
  int rank, size;
  uint64_t seed;                  /* of the round; every rank uses the same */
  int next_case;                  /* numbers the calls of a round, so each draws its own data */
  const struct test_memory *mem;  /* this rank's buffers: ranks of one call may differ (mixed cases) */
  struct expectations *expected;
  int failures;
};

/* A run over comm on buffers of mem, counting into *expected. */
void test_begin(struct test_run *t, MPI_Comm comm, const struct test_memory *mem, struct expectations *expected);

/* Every intercepted function, with and without MPI_IN_PLACE, zero and uneven counts, gaps between
 * blocks, and the non-blocking ones completed by MPI_Wait, an MPI_Test loop and MPI_Waitall. */
void run_standard_cases(struct test_run *t);

/* A round: a fresh seed (test_shared_seed), then the standard cases. */
void test_round(struct test_run *t);

/* body run on the ranks of one parity, a communicator of their own, its failures added to t's. */
void test_on_halves(struct test_run *t, void (*body)(struct test_run *));

/* Helpers for programs that add their own cases. */
uint64_t test_draw(uint64_t seed, int a, int b, int c);
int test_input(const struct test_run *t, int k, int rank, int i, int limit); /* in [-limit, limit] */
void test_count(struct test_run *t, enum layer_call call, int diverted);
void test_check(struct test_run *t, const char *what, int rc, const int *got, const int *want, int n);
void test_fail(struct test_run *t, const char *fmt, ...);

/* A seed drawn by rank 0 and broadcast (one MPI_Bcast, counted as passed). */
uint64_t test_shared_seed(struct test_run *t);
/* The sum over ranks of failures (one MPI_Allreduce, counted as passed); rank 0 then prints an
 * "expect <function>: P passed, D diverted" line per function called, and "<name>: PASSED" or FAILED. */
int test_finish(struct test_run *t, const char *name);

#endif /* ALLOY_LAYER_TEST_CASES_H_ */
