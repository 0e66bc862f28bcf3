/*
 * An unmodified MPI program (mpi.h only) for the layer's CPU tests, run under mpirun with
 * liballoy_mpi.so in LD_PRELOAD or linked before MPI. Its buffers are host memory, so the layer must pass
 * every call to the MPI library unchanged: each result is checked against a reference computed on its
 * own (cases.h), and rank 0 prints the calls it made, all expected as passed, for comparison with the
 * layer's report. Beyond the standard cases: derived datatypes, a user-defined operation, a
 * sub-communicator, an intercommunicator, and MPI's own argument errors under MPI_ERRORS_RETURN.
 */
#include <stdlib.h>

#include "cases.h"

#define ROUNDS 3

static int *int_array(int n) { return calloc(n > 0 ? (size_t)n : 1, sizeof(int)); }

/* A non-contiguous send type (every other int) in allgather, a contiguous derived type in alltoall. */
static void derived_type_cases(struct test_run *t) {
  const int k = t->next_case++, n = 1 + (int)(test_draw(t->seed, k, -1, 0) % 20);
  int *strided = int_array(2 * n), *got = int_array(n * t->size), *want = int_array(n * t->size);
  for (int i = 0; i < n; ++i) strided[2 * i] = test_input(t, k, t->rank, i, 1000);
  for (int r = 0; r < t->size; ++r)
    for (int i = 0; i < n; ++i) want[r * n + i] = test_input(t, k, r, i, 1000);
  MPI_Datatype every_other, triple;
  MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int rc = MPI_Allgather(strided, 1, every_other, got, n, MPI_INT, t->comm);
  test_count(t, CALL_ALLGATHER, 0);
  test_check(t, "MPI_Allgather with a vector send type", rc, got, want, n * t->size);
  MPI_Type_free(&every_other);

  int *send = int_array(3 * t->size), *recv = int_array(3 * t->size), *want3 = int_array(3 * t->size);
  for (int i = 0; i < 3 * t->size; ++i) send[i] = test_input(t, k + 1, t->rank, i, 1000);
  for (int r = 0; r < t->size; ++r)
    for (int i = 0; i < 3; ++i) want3[3 * r + i] = test_input(t, k + 1, r, 3 * t->rank + i, 1000);
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  rc = MPI_Alltoall(send, 1, triple, recv, 1, triple, t->comm);
  test_count(t, CALL_ALLTOALL, 0);
  test_check(t, "MPI_Alltoall with a contiguous derived type", rc, recv, want3, 3 * t->size);
  MPI_Type_free(&triple);
  t->next_case++;
  free(strided);
  free(got);
  free(want);
  free(send);
  free(recv);
  free(want3);
}

static void largest_magnitude(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const int *a = in;
  int *b = inout;
  for (int i = 0; i < *len; ++i) b[i] = abs(a[i]) > abs(b[i]) || (abs(a[i]) == abs(b[i]) && a[i] > b[i]) ? a[i] : b[i];
}

static void user_op_case(struct test_run *t) {
  const int k = t->next_case++, n = 1 + (int)(test_draw(t->seed, k, -1, 0) % 50);
  int *mine = int_array(n), *got = int_array(n), *want = int_array(n);
  for (int i = 0; i < n; ++i) {
    mine[i] = test_input(t, k, t->rank, i, 1000);
    want[i] = test_input(t, k, 0, i, 1000);
  }
  for (int r = 1; r < t->size; ++r) {
    int *theirs = int_array(n), len = n;
    for (int i = 0; i < n; ++i) theirs[i] = test_input(t, k, r, i, 1000);
    largest_magnitude(theirs, want, &len, NULL);
    free(theirs);
  }
  MPI_Op op;
  MPI_Op_create(largest_magnitude, 1, &op);
  const int rc = MPI_Allreduce(mine, got, n, MPI_INT, op, t->comm);
  test_count(t, CALL_ALLREDUCE, 0);
  test_check(t, "MPI_Allreduce with a user-defined operation", rc, got, want, n);
  MPI_Op_free(&op);
  free(mine);
  free(got);
  free(want);
}

/* MPI_Allreduce between the two parities: each side receives the sum of the other side's inputs. */
static void intercommunicator_case(struct test_run *t) {
  if (t->size < 2) return;
  const int k = t->next_case++, n = 1 + (int)(test_draw(t->seed, k, -1, 0) % 50);
  MPI_Comm local, inter;
  MPI_Comm_split(t->comm, t->rank % 2, t->rank, &local);
  MPI_Intercomm_create(local, 0, t->comm, t->rank % 2 == 0 ? 1 : 0, 77, &inter);
  int *mine = int_array(n), *got = int_array(n), *want = int_array(n);
  for (int i = 0; i < n; ++i) mine[i] = test_input(t, k, t->rank, i, 1000);
  for (int r = 0; r < t->size; ++r)
    if (r % 2 != t->rank % 2)
      for (int i = 0; i < n; ++i) want[i] += test_input(t, k, r, i, 1000);
  const int rc = MPI_Allreduce(mine, got, n, MPI_INT, MPI_SUM, inter);
  test_count(t, CALL_ALLREDUCE, 0);
  test_check(t, "MPI_Allreduce on an intercommunicator", rc, got, want, n);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  free(mine);
  free(got);
  free(want);
}

/* Arguments MPI itself refuses: its own error classes come back through the communicator's handler. */
static void error_cases(struct test_run *t) {
  MPI_Comm comm;
  MPI_Comm_dup(t->comm, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int x = 1, y = 0, cls = MPI_SUCCESS;
  MPI_Error_class(MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, comm), &cls);
  if (cls != MPI_ERR_COUNT) test_fail(t, "MPI_Allreduce with count -1: error class %d, expected MPI_ERR_COUNT", cls);
  MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, t->size, comm), &cls);
  if (cls != MPI_ERR_ROOT) test_fail(t, "MPI_Bcast with root %d: error class %d, expected MPI_ERR_ROOT", t->size, cls);
  MPI_Error_class(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, 0, comm), &cls);
  if (cls != MPI_ERR_OP) test_fail(t, "MPI_Reduce with MPI_OP_NULL: error class %d, expected MPI_ERR_OP", cls);
  test_count(t, CALL_ALLREDUCE, 0);
  test_count(t, CALL_BCAST, 0);
  test_count(t, CALL_REDUCE, 0);
  MPI_Comm_free(&comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  struct expectations expected;
  struct test_run t;
  test_begin(&t, MPI_COMM_WORLD, &host_memory, &expected);
  for (int round = 0; round < ROUNDS; ++round) test_round(&t);
  derived_type_cases(&t);
  user_op_case(&t);
  test_on_halves(&t, test_round);
  intercommunicator_case(&t);
  error_cases(&t);
  const int status = test_finish(&t, "host_program");
  MPI_Finalize();
  return status;
}
