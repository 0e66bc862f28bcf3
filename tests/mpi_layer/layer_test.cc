// The layer's internals on the CPU machine, through the static archive: the cached state per
// communicator, the per-call vote (forced on: on a machine without GPUs the layer otherwise never votes),
// and the generalized requests that MPI's progress completes, waited for every way a program can.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <memory>
#include <numeric>
#include <vector>

#include "completion.h"
#include "context.h"
#include "counts.h"
#include "errors.h"
#include "layer_entry.h"

namespace {

using alloy_layer::Call;
using alloy_layer::tallyOf;

int rankOf(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int sizeOf(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

// An allreduce through the layer, checked.
void sumOfRanks(MPI_Comm comm) {
  int in = rankOf(comm) + 1, out = 0;
  ASSERT_EQ(alloy_layer_allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
  const int n = sizeOf(comm);
  EXPECT_EQ(out, n * (n + 1) / 2);
}

TEST(LayerRoute, CommunicatorWithoutGpusPassesAtOnce) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const alloy_layer::Tally before = tallyOf(Call::Allreduce);
  sumOfRanks(comm);
  sumOfRanks(comm);
  const alloy_mpix::Context* context = alloy_mpix::existingContext(comm);
  ASSERT_NE(context, nullptr) << "the first call caches the communicator's state";
  EXPECT_EQ(context->layerReach, alloy_mpix::Context::LayerReach::HostOnly);
  EXPECT_EQ(context->gpu, nullptr);
  EXPECT_EQ(tallyOf(Call::Allreduce).passed, before.passed + 2);
  EXPECT_EQ(tallyOf(Call::Allreduce).diverted, before.diverted);
  MPI_Comm_free(&comm);
}

TEST(LayerRoute, IntercommunicatorPassesWithoutState) {
  MPI_Comm world = MPI_COMM_WORLD, local, inter;
  if (sizeOf(world) < 2) GTEST_SKIP() << "needs two ranks";
  const int rank = rankOf(world);
  MPI_Comm_split(world, rank % 2, rank, &local);
  MPI_Intercomm_create(local, 0, world, rank % 2 == 0 ? 1 : 0, 5, &inter);
  int in = 1, out = 0;
  ASSERT_EQ(alloy_layer_allreduce(&in, &out, 1, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
  EXPECT_EQ(out, rank % 2 == 0 ? sizeOf(world) / 2 : (sizeOf(world) + 1) / 2) << "the other group's count";
  EXPECT_EQ(alloy_mpix::existingContext(inter), nullptr);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

// With the vote forced on (as on a machine where every rank has a GPU), host memory still passes on every
// rank, whatever each rank's share of the call: a rank that moves nothing votes too.
TEST(LayerRoute, VoteSendsHostMemoryToMpiOnEveryRank) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  sumOfRanks(comm);
  alloy_mpix::existingContext(comm)->layerReach = alloy_mpix::Context::LayerReach::Gpu;
  const int n = sizeOf(comm), me = rankOf(comm);
  const alloy_layer::Tally alltoallv = tallyOf(Call::Alltoallv), iallreduce = tallyOf(Call::Iallreduce);

  // Rank 0 sends and receives nothing; every other pair exchanges one int.
  std::vector<int> counts(n, me == 0 ? 0 : 1), displs(n);
  counts[0] = 0;
  std::iota(displs.begin(), displs.end(), 0);
  std::vector<int> send(n, me), recv(n, -1);
  ASSERT_EQ(alloy_layer_alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(),
                                  displs.data(), MPI_INT, comm), MPI_SUCCESS);
  for (int p = 1; p < n; ++p) EXPECT_EQ(recv[p], me == 0 ? -1 : p) << "from rank " << p;
  EXPECT_EQ(recv[0], -1);
  EXPECT_EQ(tallyOf(Call::Alltoallv).passed, alltoallv.passed + 1);

  int in = me + 1, out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(alloy_layer_iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm, &request), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(out, n * (n + 1) / 2);
  EXPECT_EQ(tallyOf(Call::Iallreduce).passed, iallreduce.passed + 1);
  EXPECT_EQ(tallyOf(Call::Alltoallv).diverted + tallyOf(Call::Iallreduce).diverted, 0);
  EXPECT_EQ(alloy_mpix::existingContext(comm)->gpu, nullptr) << "no GPU communicator without a diverted call";
  MPI_Comm_free(&comm);
}

TEST(LayerLifecycle, StateGoesWithItsCommunicator) {
  const int base = alloy_mpix::liveContexts();
  for (int cycle = 0; cycle < 100; ++cycle) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    sumOfRanks(comm);
    EXPECT_EQ(alloy_mpix::liveContexts(), base + 1);
    MPI_Comm_free(&comm);
    ASSERT_EQ(alloy_mpix::liveContexts(), base) << "cycle " << cycle;
  }
}

// A poller that reports done once `ready` is set or it was polled `after` times, and notes when MPI
// destroys it.
struct Gate {
  std::atomic<bool> ready{false};
  std::atomic<int> polls{0};
  int after = 1 << 30;
  std::atomic<bool> destroyed{false};
};

alloy_layer::Poller pollerFor(const std::shared_ptr<Gate>& gate, int error = MPI_SUCCESS) {
  struct Watch {
    std::shared_ptr<Gate> gate;
    ~Watch() { gate->destroyed = true; }
  };
  auto watch = std::make_shared<Watch>();
  watch->gate = gate;
  return [watch, error] {
    const bool done = watch->gate->ready || ++watch->gate->polls >= watch->gate->after;
    return done ? alloy_layer::PollResult{true, error} : alloy_layer::PollResult{};
  };
}

TEST(LayerCompletion, OpenMpiOffersTheProgressHook) { EXPECT_TRUE(alloy_layer::completionAvailable()); }

TEST(LayerCompletion, MpiTestCompletesItOnceReady) {
  auto gate = std::make_shared<Gate>();
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate), &request), MPI_SUCCESS);
  int done = 1;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(MPI_Test(&request, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_FALSE(done);
  }
  EXPECT_GE(gate->polls.load(), 5) << "every MPI_Test runs MPI's progress, which polls";
  gate->ready = true;
  MPI_Status status;
  ASSERT_EQ(MPI_Test(&request, &done, &status), MPI_SUCCESS);
  EXPECT_TRUE(done) << "the progress that completes it counts an event, so MPI_Test looks again";
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  EXPECT_EQ(status.MPI_ERROR, MPI_SUCCESS);
  EXPECT_TRUE(gate->destroyed);
  EXPECT_EQ(alloy_layer::pendingRequests(), 0);
}

// MPI_Waitall over a generalized request, done at the tenth poll of MPI_Waitall's own progress, and the
// point-to-point requests of a ring.
TEST(LayerCompletion, WaitallCompletesItBesideOtherRequests) {
  auto gate = std::make_shared<Gate>();
  gate->after = 10;
  MPI_Comm comm = MPI_COMM_WORLD;
  const int n = sizeOf(comm), me = rankOf(comm);
  int sent = me, got = -1;
  MPI_Request requests[3];
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate), &requests[0]), MPI_SUCCESS);
  MPI_Irecv(&got, 1, MPI_INT, (me + n - 1) % n, 9, comm, &requests[1]);
  MPI_Isend(&sent, 1, MPI_INT, (me + 1) % n, 9, comm, &requests[2]);
  ASSERT_EQ(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, (me + n - 1) % n);
  EXPECT_TRUE(gate->destroyed);
}

TEST(LayerCompletion, FreedBeforeCompletionIsReleasedWhenDone) {
  auto gate = std::make_shared<Gate>();
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate), &request), MPI_SUCCESS);
  ASSERT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
  EXPECT_FALSE(gate->destroyed) << "MPI frees it only after its completion";
  gate->ready = true;
  int flag = 0;
  for (int i = 0; i < 1000 && !gate->destroyed; ++i)  // any call that progresses MPI
    MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  EXPECT_TRUE(gate->destroyed);
  EXPECT_EQ(alloy_layer::pendingRequests(), 0);
}

// The poller's error is what MPI_Wait returns, and a multiple-completion call's status.MPI_ERROR.
TEST(LayerCompletion, ErrorReachesTheWaiter) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // MPI reports a generalized request's error there
  const int code = alloy_mpix::codeOf(alloy_mpix::problem(MPI_ERR_OTHER, "MPI_Iallreduce: the GPU operation failed"));
  auto gate = std::make_shared<Gate>();
  gate->ready = true;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate, code), &requests[0]), MPI_SUCCESS);
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate, code), &requests[1]), MPI_SUCCESS);
  const int waited = MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  MPI_Status statuses[2];
  requests[0] = MPI_REQUEST_NULL;
  const int all = MPI_Waitall(2, requests, statuses);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  EXPECT_EQ(waited, code);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(waited, text, &length);
  EXPECT_STREQ(text, "MPI_Iallreduce: the GPU operation failed");
  EXPECT_EQ(all, MPI_ERR_IN_STATUS);
  EXPECT_EQ(statuses[1].MPI_ERROR, code);
}

#ifdef ALLOY_LAYER_TEST_FORTRAN
// Open MPI's Fortran MPI_WAIT (mpif.h and `use mpi`; mpi_f08's calls into the same C function) calls
// PMPI_Wait directly; the progress hook completes the request for it just the same.
extern "C" void mpi_wait_(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierror);

TEST(LayerCompletion, FortranWaitCompletesIt) {
  auto gate = std::make_shared<Gate>();
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(alloy_layer::startPolledRequest(pollerFor(gate), &request), MPI_SUCCESS);
  MPI_Fint handle = MPI_Request_c2f(request), ierror = -1;
  MPI_Fint status[sizeof(MPI_Status) / sizeof(MPI_Fint) + 8];
  gate->ready = true;
  mpi_wait_(&handle, status, &ierror);
  EXPECT_EQ(ierror, MPI_SUCCESS);
  EXPECT_EQ(handle, MPI_Request_c2f(MPI_REQUEST_NULL));
  EXPECT_TRUE(gate->destroyed);
}
#endif

}  // namespace
