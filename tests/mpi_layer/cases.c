#include "cases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON 0x5A5A5A5A
#define GAP 2 /* elements left between blocks of the v-calls: they must keep the poison */

static const char *const call_names[N_LAYER_CALLS] = {
    "MPI_Allreduce", "MPI_Reduce",   "MPI_Bcast",     "MPI_Allgather", "MPI_Allgatherv", "MPI_Reduce_scatter_block",
    "MPI_Reduce_scatter", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Iallreduce", "MPI_Ialltoallv"};

static void *host_alloc(size_t bytes) { return malloc(bytes > 0 ? bytes : 1); }
static void host_put(void *buffer, const void *host, size_t bytes) { memcpy(buffer, host, bytes); }
static void host_get(void *host, const void *buffer, size_t bytes) { memcpy(host, buffer, bytes); }
const struct test_memory host_memory = {0, host_alloc, free, host_put, host_get};

static uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t test_draw(uint64_t seed, int a, int b, int c) {
  return mix64(seed ^ mix64(((uint64_t)(uint32_t)a << 42) ^ ((uint64_t)(uint32_t)b << 21) ^ (uint32_t)c));
}

int test_input(const struct test_run *t, int k, int rank, int i, int limit) {
  return (int)(test_draw(t->seed, k, rank, i) % (uint64_t)(2 * limit + 1)) - limit;
}

void test_count(struct test_run *t, enum layer_call call, int diverted) {
  if (diverted) t->expected->diverted[call]++;
  else t->expected->passed[call]++;
}

void test_fail(struct test_run *t, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printf("FAILED on rank %d: ", t->rank);
  vprintf(fmt, args);
  printf("\n");
  va_end(args);
  t->failures++;
}

void test_check(struct test_run *t, const char *what, int rc, const int *got, const int *want, int n) {
  if (rc != MPI_SUCCESS) {
    test_fail(t, "%s returned %d", what, rc);
    return;
  }
  for (int i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      test_fail(t, "%s: element %d is %d, expected %d (seed %llu)", what, i, got[i], want[i],
                (unsigned long long)t->seed);
      return;
    }
}

/* ---- buffers: host arrays of the expected and received values, and the call's buffers ---- */

static int *ints(int n) { return calloc(n > 0 ? (size_t)n : 1, sizeof(int)); }

static int *poisoned(int n) {
  int *v = ints(n);
  for (int i = 0; i < n; ++i) v[i] = POISON;
  return v;
}

/* A buffer of the run's memory kind holding host[0..n). */
static void *buffer_of(const struct test_run *t, const int *host, int n) {
  void *b = t->mem->alloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  t->mem->put(b, host, (size_t)n * sizeof(int));
  return b;
}

/* Checks a receive buffer against want[0..n), then frees both. */
static void verify(struct test_run *t, const char *what, int rc, void *buffer, int *want, int n) {
  int *got = ints(n);
  t->mem->get(got, buffer, (size_t)n * sizeof(int));
  test_check(t, what, rc, got, want, n);
  free(got);
  free(want);
  t->mem->release(buffer);
}

/* The inputs of `rank` to case k: n elements starting at element `from` of its stream. */
static int *inputs(const struct test_run *t, int k, int rank, int from, int n, int limit) {
  int *v = ints(n);
  for (int i = 0; i < n; ++i) v[i] = test_input(t, k, rank, from + i, limit);
  return v;
}

static int apply(MPI_Op op, int a, int b) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MIN) return a < b ? a : b;
  return a > b ? a : b; /* MPI_MAX */
}

/* The reduction over all ranks of element from+i of their inputs to case k. */
static int *reduced(const struct test_run *t, int k, MPI_Op op, int from, int n, int limit) {
  int *v = inputs(t, k, 0, from, n, limit);
  for (int r = 1; r < t->size; ++r)
    for (int i = 0; i < n; ++i) v[i] = apply(op, v[i], test_input(t, k, r, from + i, limit));
  return v;
}

/* A count the ranks agree on: 0 .. most, 0 and 1 among them now and then. */
static int shared_count(const struct test_run *t, int k, int salt, int most) {
  const uint64_t d = test_draw(t->seed, k, -1, salt);
  if (d % 8 == 0) return 0;
  if (d % 8 == 1) return 1;
  return (int)(d / 8 % (uint64_t)(most + 1));
}

static int limit_of(MPI_Op op) { return op == MPI_PROD ? 2 : 1000; } /* products of 4 ranks stay small */

/* ---- the calls ---- */

/* Whether a call of the run's memory kind goes to Alloy's GPU engine: the memory diverts and some rank
 * moves data (`moved`: the elements moved by all ranks together). A rank classifies only the buffers it
 * moves data through, so a call in which every count is zero has no GPU memory to show and every rank
 * passes it to the MPI library. */
static int diverts(const struct test_run *t, long long moved) { return t->mem->diverts && moved > 0; }

static void allreduce_case(struct test_run *t, MPI_Op op, int in_place, int how) {
  const int k = t->next_case++, n = shared_count(t, k, 0, 300), lim = limit_of(op);
  int *mine = inputs(t, k, t->rank, 0, n, lim), *init = in_place ? mine : poisoned(n);
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, mine, n), *recv = buffer_of(t, init, n);
  int rc;
  const char *what = how == 0 ? "MPI_Allreduce" : how == 1 ? "MPI_Iallreduce + MPI_Wait" : "MPI_Iallreduce + MPI_Test";
  if (how == 0) {
    rc = MPI_Allreduce(send, recv, n, MPI_INT, op, t->comm);
  } else {
    MPI_Request request = MPI_REQUEST_NULL;
    int done = 0;
    rc = MPI_Iallreduce(send, recv, n, MPI_INT, op, t->comm, &request);
    if (rc == MPI_SUCCESS && how == 1) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    while (rc == MPI_SUCCESS && how == 2 && !done) rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
  test_count(t, how == 0 ? CALL_ALLREDUCE : CALL_IALLREDUCE, diverts(t, n));
  verify(t, what, rc, recv, reduced(t, k, op, 0, n, lim), n);
  if (!in_place) {
    t->mem->release(send);
    free(init);
  }
  free(mine);
}

static void reduce_case(struct test_run *t, MPI_Op op, int in_place) {
  const int k = t->next_case++, n = shared_count(t, k, 0, 300), lim = limit_of(op);
  const int root = (int)(test_draw(t->seed, k, -1, 1) % (uint64_t)t->size), at_root = t->rank == root;
  int *mine = inputs(t, k, t->rank, 0, n, lim), *init = in_place && at_root ? mine : poisoned(n);
  void *send = in_place && at_root ? MPI_IN_PLACE : buffer_of(t, mine, n);
  void *recv = at_root ? buffer_of(t, init, n) : NULL; /* not significant elsewhere */
  const int rc = MPI_Reduce(send, recv, n, MPI_INT, op, root, t->comm);
  test_count(t, CALL_REDUCE, diverts(t, n));
  if (at_root) verify(t, "MPI_Reduce", rc, recv, reduced(t, k, op, 0, n, lim), n);
  else test_check(t, "MPI_Reduce", rc, NULL, NULL, 0);
  if (send != MPI_IN_PLACE) t->mem->release(send);
  if (init != mine) free(init);
  free(mine);
}

static void bcast_case(struct test_run *t) {
  const int k = t->next_case++, n = shared_count(t, k, 0, 500);
  const int root = (int)(test_draw(t->seed, k, -1, 1) % (uint64_t)t->size);
  int *init = t->rank == root ? inputs(t, k, root, 0, n, 1000) : poisoned(n);
  void *buffer = buffer_of(t, init, n);
  const int rc = MPI_Bcast(buffer, n, MPI_INT, root, t->comm);
  test_count(t, CALL_BCAST, diverts(t, n));
  verify(t, "MPI_Bcast", rc, buffer, inputs(t, k, root, 0, n, 1000), n);
  free(init);
}

static void allgather_case(struct test_run *t, int in_place) {
  const int k = t->next_case++, n = shared_count(t, k, 0, 100), total = n * t->size;
  int *mine = inputs(t, k, t->rank, 0, n, 1000), *init = poisoned(total), *want = ints(total);
  for (int r = 0; r < t->size; ++r)
    for (int i = 0; i < n; ++i) want[r * n + i] = test_input(t, k, r, i, 1000);
  if (in_place) memcpy(init + t->rank * n, mine, (size_t)n * sizeof(int));
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, mine, n), *recv = buffer_of(t, init, total);
  const int rc = MPI_Allgather(send, n, MPI_INT, recv, n, MPI_INT, t->comm);
  test_count(t, CALL_ALLGATHER, diverts(t, n));
  verify(t, "MPI_Allgather", rc, recv, want, total);
  if (!in_place) t->mem->release(send);
  free(init);
  free(mine);
}

/* Per-rank counts the ranks agree on (zeros among them) and displacements with GAP elements before each
 * block; returns the elements of the whole layout. */
static int vector_layout(const struct test_run *t, int k, int salt, int most, int *counts, int *displs) {
  int at = 0;
  for (int r = 0; r < t->size; ++r) {
    counts[r] = shared_count(t, k, salt + r, most);
    at += GAP;
    displs[r] = at;
    at += counts[r];
  }
  return at + GAP;
}

static void allgatherv_case(struct test_run *t, int in_place) {
  const int k = t->next_case++;
  int *counts = ints(t->size), *displs = ints(t->size);
  const int total = vector_layout(t, k, 10, 60, counts, displs), n = counts[t->rank];
  int *mine = inputs(t, k, t->rank, 0, n, 1000), *init = poisoned(total), *want = poisoned(total);
  for (int r = 0; r < t->size; ++r)
    for (int i = 0; i < counts[r]; ++i) want[displs[r] + i] = test_input(t, k, r, i, 1000);
  if (in_place) memcpy(init + displs[t->rank], mine, (size_t)n * sizeof(int));
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, mine, n), *recv = buffer_of(t, init, total);
  const int rc = MPI_Allgatherv(send, n, MPI_INT, recv, counts, displs, MPI_INT, t->comm);
  test_count(t, CALL_ALLGATHERV, diverts(t, total - (t->size + 1) * GAP));
  verify(t, "MPI_Allgatherv", rc, recv, want, total);
  if (!in_place) t->mem->release(send);
  free(init);
  free(mine);
  free(counts);
  free(displs);
}

/* Reduce-scatter with the blocks `counts` (every rank's input is their concatenation): the block form
 * where block_form is set (all counts equal), MPI_Reduce_scatter otherwise. */
static void reduce_scatter_case(struct test_run *t, MPI_Op op, int in_place, int block_form, int equal) {
  const int k = t->next_case++, lim = limit_of(op);
  int *counts = ints(t->size), *displs = ints(t->size);
  const int same = shared_count(t, k, 0, 80);
  int total = 0;
  for (int r = 0; r < t->size; ++r) {
    counts[r] = equal ? same : shared_count(t, k, 20 + r, 80);
    displs[r] = total;
    total += counts[r];
  }
  const int n = counts[t->rank];
  int *mine = inputs(t, k, t->rank, 0, total, lim);
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, mine, total);
  int *init = in_place ? mine : poisoned(n);
  void *recv = buffer_of(t, init, in_place ? total : n);
  const int rc = block_form ? MPI_Reduce_scatter_block(send, recv, same, MPI_INT, op, t->comm)
                            : MPI_Reduce_scatter(send, recv, counts, MPI_INT, op, t->comm);
  test_count(t, block_form ? CALL_REDUCE_SCATTER_BLOCK : CALL_REDUCE_SCATTER, diverts(t, total));
  /* In place, only the rank's block at the start of recvbuf is defined afterwards. */
  verify(t, block_form ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter", rc, recv,
         reduced(t, k, op, displs[t->rank], n, lim), n);
  if (!in_place) {
    t->mem->release(send);
    free(init);
  }
  free(mine);
  free(counts);
  free(displs);
}

static void alltoall_case(struct test_run *t, int in_place) {
  const int k = t->next_case++, n = shared_count(t, k, 0, 60), total = n * t->size;
  /* The block for rank j is elements j*n.. of the sender's stream. */
  int *mine = inputs(t, k, t->rank, 0, total, 1000), *init = in_place ? mine : poisoned(total), *want = ints(total);
  for (int r = 0; r < t->size; ++r)
    for (int i = 0; i < n; ++i) want[r * n + i] = test_input(t, k, r, t->rank * n + i, 1000);
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, mine, total), *recv = buffer_of(t, init, total);
  const int rc = MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, t->comm);
  test_count(t, CALL_ALLTOALL, diverts(t, n));
  verify(t, "MPI_Alltoall", rc, recv, want, total);
  if (!in_place) {
    t->mem->release(send);
    free(init);
  }
  free(mine);
}

/* The count rank `from` sends to rank `to`: zeros among them; symmetric where the call is in place (MPI
 * then takes both directions from one layout). */
static int pair_count(const struct test_run *t, int k, int from, int to, int symmetric) {
  if (symmetric && from > to) return pair_count(t, k, to, from, symmetric);
  return shared_count(t, k, 100 + from * t->size + to, 40);
}

/* The elements all ranks move in alltoallv case k. */
static long long pairs_moved(const struct test_run *t, int k, int symmetric) {
  long long moved = 0;
  for (int from = 0; from < t->size; ++from)
    for (int to = 0; to < t->size; ++to) moved += pair_count(t, k, from, to, symmetric);
  return moved;
}

/* Alltoallv, or (with a second request to wait for) Ialltoallv and Iallreduce completed by MPI_Waitall:
 * how = 0 blocking, 1 MPI_Test loop, 2 MPI_Waitall. */
static void alltoallv_case(struct test_run *t, int in_place, int how) {
  const int k = t->next_case++, me = t->rank;
  int *sc = ints(t->size), *sd = ints(t->size), *rc_ = ints(t->size), *rd = ints(t->size);
  int sendTotal = 0, recvTotal = 0;
  for (int r = 0; r < t->size; ++r) {
    sc[r] = pair_count(t, k, me, r, in_place);
    rc_[r] = pair_count(t, k, r, me, in_place);
  }
  /* Blocks in reverse order on the send side, with gaps on the receive side. */
  for (int r = t->size - 1; r >= 0; --r) sd[r] = (sendTotal += sc[r] + 1) - sc[r];
  for (int r = 0; r < t->size; ++r) rd[r] = (recvTotal += GAP + rc_[r]) - rc_[r];
  sendTotal += 1;
  recvTotal += GAP;
  /* Element i of the block from `from` to `to` is element to*1000+i of from's stream. */
  int *sendHost = poisoned(sendTotal), *init = poisoned(recvTotal), *want = poisoned(recvTotal);
  for (int r = 0; r < t->size; ++r) {
    for (int i = 0; i < sc[r]; ++i) sendHost[sd[r] + i] = test_input(t, k, me, r * 1000 + i, 1000);
    for (int i = 0; i < rc_[r]; ++i) want[rd[r] + i] = test_input(t, k, r, me * 1000 + i, 1000);
    if (in_place)
      for (int i = 0; i < rc_[r]; ++i) init[rd[r] + i] = test_input(t, k, me, r * 1000 + i, 1000);
  }
  void *send = in_place ? MPI_IN_PLACE : buffer_of(t, sendHost, sendTotal), *recv = buffer_of(t, init, recvTotal);
  int rc;
  if (how == 0) {
    rc = MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc_, rd, MPI_INT, t->comm);
  } else {
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int sum = t->rank + 1, total = 0, done = 0;
    rc = MPI_Ialltoallv(send, sc, sd, MPI_INT, recv, rc_, rd, MPI_INT, t->comm, &requests[0]);
    if (rc == MPI_SUCCESS && how == 2) {
      rc = MPI_Iallreduce(&sum, &total, 1, MPI_INT, MPI_SUM, t->comm, &requests[1]); /* host memory: passed */
      test_count(t, CALL_IALLREDUCE, 0);
      if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      if (rc == MPI_SUCCESS && total != t->size * (t->size + 1) / 2)
        test_fail(t, "MPI_Iallreduce beside MPI_Ialltoallv: %d, expected %d", total, t->size * (t->size + 1) / 2);
    }
    while (rc == MPI_SUCCESS && how == 1 && !done) rc = MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
  }
  test_count(t, how == 0 ? CALL_ALLTOALLV : CALL_IALLTOALLV, diverts(t, pairs_moved(t, k, in_place)));
  verify(t, how == 0 ? "MPI_Alltoallv" : how == 1 ? "MPI_Ialltoallv + MPI_Test" : "MPI_Ialltoallv + MPI_Waitall", rc,
         recv, want, recvTotal);
  if (!in_place) t->mem->release(send);
  free(sendHost);
  free(init);
  free(sc);
  free(sd);
  free(rc_);
  free(rd);
}

void run_standard_cases(struct test_run *t) {
  allreduce_case(t, MPI_SUM, 0, 0);
  allreduce_case(t, MPI_MIN, 1, 0);
  allreduce_case(t, MPI_PROD, 0, 0);
  reduce_case(t, MPI_SUM, 0);
  reduce_case(t, MPI_MAX, 1);
  bcast_case(t);
  allgather_case(t, 0);
  allgather_case(t, 1);
  allgatherv_case(t, 0);
  allgatherv_case(t, 1);
  reduce_scatter_case(t, MPI_SUM, 0, 1, 1);
  reduce_scatter_case(t, MPI_MAX, 1, 1, 1);
  reduce_scatter_case(t, MPI_SUM, 0, 0, 0);
  reduce_scatter_case(t, MPI_MIN, 0, 0, 1);
  reduce_scatter_case(t, MPI_SUM, 1, 0, 0);
  alltoall_case(t, 0);
  alltoall_case(t, 1);
  alltoallv_case(t, 0, 0);
  alltoallv_case(t, 1, 0);
  allreduce_case(t, MPI_SUM, 0, 1);
  allreduce_case(t, MPI_MAX, 1, 2);
  alltoallv_case(t, 0, 1);
  alltoallv_case(t, 0, 2);
}

void test_begin(struct test_run *t, MPI_Comm comm, const struct test_memory *mem, struct expectations *expected) {
  memset(t, 0, sizeof(*t));
  memset(expected, 0, sizeof(*expected));
  t->comm = comm;
  t->mem = mem;
  t->expected = expected;
  MPI_Comm_rank(comm, &t->rank);
  MPI_Comm_size(comm, &t->size);
}

void test_round(struct test_run *t) {
  t->seed = test_shared_seed(t);
  t->next_case = 0;
  run_standard_cases(t);
}

void test_on_halves(struct test_run *t, void (*body)(struct test_run *)) {
  struct test_run half = *t;
  MPI_Comm_split(t->comm, t->rank % 2, t->rank, &half.comm);
  MPI_Comm_rank(half.comm, &half.rank);
  MPI_Comm_size(half.comm, &half.size);
  half.failures = 0;
  body(&half);
  t->failures += half.failures;
  MPI_Comm_free(&half.comm);
}

uint64_t test_shared_seed(struct test_run *t) {
  unsigned long long seed = 0;
  if (t->rank == 0) {
    FILE *urandom = fopen("/dev/urandom", "rb");
    if (urandom == NULL || fread(&seed, sizeof(seed), 1, urandom) != 1) seed = (unsigned long long)time(NULL);
    if (urandom != NULL) fclose(urandom);
    printf("seed %llu\n", seed);
  }
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, t->comm);
  test_count(t, CALL_BCAST, 0);
  return seed;
}

int test_finish(struct test_run *t, const char *name) {
  int all = 0;
  MPI_Allreduce(&t->failures, &all, 1, MPI_INT, MPI_SUM, t->comm);
  test_count(t, CALL_ALLREDUCE, 0);
  /* Every rank its own: the halves' communicators draw their own counts, so the routes of two ranks in
   * different halves differ where one half drew a call with nothing to move. */
  for (int c = 0; c < N_LAYER_CALLS; ++c)
    if (t->expected->passed[c] + t->expected->diverted[c] > 0)
      printf("expect rank %d: %s: %lld passed, %lld diverted\n", t->rank, call_names[c], t->expected->passed[c],
             t->expected->diverted[c]);
  fflush(stdout);
  if (t->rank != 0) return all == 0 ? 0 : 1;
  printf(all == 0 ? "%s: PASSED\n" : "%s: FAILED (%d failures)\n", name, all);
  fflush(stdout);
  return all == 0 ? 0 : 1;
}
