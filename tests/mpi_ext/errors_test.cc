// Bad arguments under MPI_ERRORS_RETURN: the MPIX functions return a code of the right MPI class whose
// MPI_Error_string names the problem, after calling the communicator's error handler. Every rank makes
// the same calls, so every test also checks that no rank is left waiting for another.
#include <climits>

#include "errors.h"
#include "mpix_test_util.h"

namespace mpixtest {
namespace {

int handlerCalls = 0;
int lastHandlerCode = MPI_SUCCESS;

void countingHandler(MPI_Comm*, int* code, ...) {
  ++handlerCalls;
  lastHandlerCode = *code;
}

class BadArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(countingHandler, &handler);
    MPI_Comm_set_errhandler(comm, handler);
    rank = rankOf(comm);
    n = sizeOf(comm);
    handlerCalls = 0;
  }
  void TearDown() override {
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&handler);
  }
  // The error went through the communicator's handler, once, with the code returned.
  void expectHandled(int code) {
    EXPECT_EQ(handlerCalls, 1);
    EXPECT_EQ(lastHandlerCode, code);
    handlerCalls = 0;
  }

  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  int rank = 0, n = 1;
  std::vector<int> buf = std::vector<int>(64, 0), out = std::vector<int>(64, 0);
};

TEST_F(BadArguments, CountsAndSignatures) {
  int code = MPIX_Alltoall_cuda(buf.data(), -1, MPI_INT, out.data(), 1, MPI_INT, comm, nullptr);
  EXPECT_EQ(errorClass(code), MPI_ERR_COUNT);
  EXPECT_NE(errorString(code).find("MPIX_Alltoall_cuda: sendcount=-1 is negative"), std::string::npos) << errorString(code);
  expectHandled(code);
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(buf.data(), out.data(), -3, MPI_INT, MPI_SUM, comm, nullptr), MPI_ERR_COUNT,
                    "count=-3");
  std::vector<int> counts(n, 1), displs(n, 0), bad(n, 1);
  bad[n - 1] = -2;
  EXPECT_MPIX_ERROR(MPIX_Alltoallv_cuda(buf.data(), counts.data(), displs.data(), MPI_INT, out.data(), bad.data(),
                                        displs.data(), MPI_INT, comm, nullptr),
                    MPI_ERR_COUNT, "recvcounts[" + std::to_string(n - 1) + "]=-2 is negative");
  EXPECT_MPIX_ERROR(MPIX_Alltoallv_cuda(buf.data(), nullptr, displs.data(), MPI_INT, out.data(), counts.data(),
                                        displs.data(), MPI_INT, comm, nullptr),
                    MPI_ERR_ARG, "sendcounts is NULL");
  // Signatures: 2 ints sent, 2 doubles expected per block.
  EXPECT_MPIX_ERROR(MPIX_Alltoall_cuda(buf.data(), 2, MPI_INT, out.data(), 2, MPI_DOUBLE, comm, nullptr), MPI_ERR_TYPE,
                    "8 bytes sent but 16 bytes expected");
  EXPECT_MPIX_ERROR(MPIX_Allgather_cuda(buf.data(), 3, MPI_BYTE, out.data(), 1, MPI_INT, comm, nullptr), MPI_ERR_TYPE,
                    "3 bytes sent but 4 bytes expected");
  // Large counts beyond int reach host memory only through MPI_Alltoallv, which takes int.
  // (A displacement is enough, and keeps the buffers' ranges apart; nothing is read before the check.)
  std::vector<MPI_Count> ones(n, 0);
  std::vector<MPI_Aint> zeros(n, 0), huge(n, 0);
  ones[rank] = 1;
  huge[rank] = static_cast<MPI_Aint>(INT_MAX) + 1;
  EXPECT_MPIX_ERROR(MPIX_Alltoallv_cuda_c(buf.data(), ones.data(), huge.data(), MPI_BYTE, out.data(), ones.data(),
                                          zeros.data(), MPI_BYTE, comm, nullptr),
                    MPI_ERR_COUNT, "beyond the int range");
}

TEST_F(BadArguments, TypesRootsOpsBuffers) {
  EXPECT_MPIX_ERROR(MPIX_Bcast_cuda(buf.data(), 4, MPI_DATATYPE_NULL, 0, comm, nullptr), MPI_ERR_TYPE,
                    "datatype is MPI_DATATYPE_NULL");
  EXPECT_MPIX_ERROR(MPIX_Bcast_cuda(buf.data(), 4, MPI_INT, n, comm, nullptr), MPI_ERR_ROOT,
                    "root=" + std::to_string(n) + " is not a rank");
  EXPECT_MPIX_ERROR(MPIX_Reduce_cuda(buf.data(), out.data(), 4, MPI_INT, MPI_SUM, -1, comm, nullptr), MPI_ERR_ROOT,
                    "root=-1");
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(buf.data(), out.data(), 4, MPI_INT, MPI_OP_NULL, comm, nullptr), MPI_ERR_OP,
                    "op is MPI_OP_NULL");
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(nullptr, out.data(), 4, MPI_INT, MPI_SUM, comm, nullptr), MPI_ERR_BUFFER,
                    "sendbuf is NULL but 16 bytes");
  EXPECT_MPIX_ERROR(MPIX_Allreduce_cuda(buf.data(), buf.data() + 2, 4, MPI_INT, MPI_SUM, comm, nullptr), MPI_ERR_BUFFER,
                    "sendbuf and recvbuf overlap");
  if (n > 1) {
    const void* send = rank == 0 ? static_cast<const void*>(buf.data()) : MPI_IN_PLACE;
    const int code = MPIX_Reduce_cuda(send, out.data(), 4, MPI_INT, MPI_SUM, 0, comm, nullptr);
    if (rank == 0) EXPECT_EQ(errorClass(code), MPI_ERR_OTHER) << errorString(code);
    else EXPECT_MPIX_ERROR(code, MPI_ERR_BUFFER, "MPI_IN_PLACE on rank");
  }
}

// One rank's bad argument stops every rank: the others return MPI_ERR_OTHER naming it.
TEST_F(BadArguments, OneRankWrongStopsAll) {
  const int count = rank == n - 1 ? -5 : 4;
  const int code = MPIX_Allreduce_cuda(buf.data(), out.data(), count, MPI_INT, MPI_SUM, comm, nullptr);
  if (rank == n - 1) EXPECT_MPIX_ERROR(code, MPI_ERR_COUNT, "count=-5");
  else EXPECT_MPIX_ERROR(code, MPI_ERR_OTHER, "rank " + std::to_string(n - 1) + " rejected its arguments");
  expectHandled(code);
}

TEST_F(BadArguments, Communicators) {
  // MPI_COMM_NULL has no handler of its own: MPI_COMM_WORLD's is called (MPI-3.1 section 8.3).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  EXPECT_MPIX_ERROR(MPIX_Bcast_cuda(buf.data(), 1, MPI_INT, 0, MPI_COMM_NULL, nullptr), MPI_ERR_COMM, "MPI_COMM_NULL");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (n < 2) return;
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(comm, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, comm, rank % 2 == 0 ? 1 : 0, 7, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  EXPECT_MPIX_ERROR(MPIX_Bcast_cuda(buf.data(), 1, MPI_INT, 0, inter, nullptr), MPI_ERR_COMM, "inter-communicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// The message of a class is the latest of that class; codes of other classes keep theirs.
TEST_F(BadArguments, MessagesStayPerClass) {
  const int countCode = MPIX_Bcast_cuda(buf.data(), -7, MPI_INT, 0, comm, nullptr);
  const int rootCode = MPIX_Bcast_cuda(buf.data(), 1, MPI_INT, -9, comm, nullptr);
  EXPECT_NE(errorString(countCode).find("count=-7"), std::string::npos) << errorString(countCode);
  EXPECT_NE(errorString(rootCode).find("root=-9"), std::string::npos) << errorString(rootCode);
}

TEST(AlloyResults, MapToMpiClasses) {
  EXPECT_EQ(alloy_mpix::fromAlloy(alloyInvalidArgument, "f").errorClass, MPI_ERR_ARG);
  for (alloyResult_t r : {alloyNotSupported, alloyCudaError, alloyInternalError, alloyInvalidUsage, alloyRemoteError,
                          alloyTimeout, alloySystemError})
    EXPECT_EQ(alloy_mpix::fromAlloy(r, "f").errorClass, MPI_ERR_OTHER) << alloyGetErrorString(r);
  EXPECT_EQ(alloy_mpix::fromAlloy(alloyNotSupported, "MPIX_Allreduce_cuda").message.rfind("MPIX_Allreduce_cuda: ", 0), 0u);
}

}  // namespace
}  // namespace mpixtest

namespace mpixtest {
namespace {

// MPIX_Cuda_rejection on a communicator with no GPU operation (before any MPIX call, and after a host
// one): nothing pending; bad arguments go through the handler. Local: ranks call it independently.
TEST_F(BadArguments, RejectionQuery) {
  int cls = -1, who = -2;
  EXPECT_EQ(MPIX_Cuda_rejection(comm, &cls, &who), MPI_SUCCESS);
  EXPECT_EQ(cls, MPI_SUCCESS);
  EXPECT_EQ(who, MPI_PROC_NULL);
  std::vector<int> send(n, rank), recv(n, -1);
  ASSERT_EQ(MPIX_Alltoall_cuda(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm, nullptr), MPI_SUCCESS);
  cls = -1;
  EXPECT_EQ(MPIX_Cuda_rejection(comm, &cls, &who), MPI_SUCCESS);
  EXPECT_EQ(cls, MPI_SUCCESS);
  const int code = MPIX_Cuda_rejection(comm, nullptr, &who);
  EXPECT_EQ(errorClass(code), MPI_ERR_ARG);
  EXPECT_NE(errorString(code).find("errorclass is NULL"), std::string::npos) << errorString(code);
  expectHandled(code);
}

}  // namespace
}  // namespace mpixtest
