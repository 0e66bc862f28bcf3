#include "errors.h"

#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>

namespace alloy_mpix {

Problem problem(int errorClass, const char* fmt, ...) {
  char text[MPI_MAX_ERROR_STRING];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);  // truncated to what MPI_Error_string can return
  va_end(args);
  return Problem{errorClass, text};
}

namespace {

// One added error code per class, whose string is replaced by each new message of that class: MPI
// allows replacing an added code's string (MPI-3.1 8.5, verified on Open MPI 4.1), and a fresh code per
// failure would grow MPI's error table without bound in a program that retries.
std::mutex codesMutex;
std::map<int, int> codeOfClass;

}  // namespace

int codeOf(const Problem& p) {
  std::lock_guard<std::mutex> lock(codesMutex);
  auto found = codeOfClass.find(p.errorClass);
  if (found == codeOfClass.end()) {
    int code = p.errorClass;  // where MPI refuses a new code, the bare class still carries the class
    if (MPI_Add_error_code(p.errorClass, &code) != MPI_SUCCESS) code = p.errorClass;
    found = codeOfClass.emplace(p.errorClass, code).first;
  }
  if (found->second != p.errorClass) MPI_Add_error_string(found->second, p.message.c_str());
  return found->second;
}

namespace {

bool handlerAborts(MPI_Comm comm) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (MPI_Comm_get_errhandler(comm, &handler) != MPI_SUCCESS) return false;
  bool aborts = handler == MPI_ERRORS_ARE_FATAL;
#ifdef MPI_ERRORS_ABORT
  aborts = aborts || handler == MPI_ERRORS_ABORT;
#endif
  MPI_Errhandler_free(&handler);
  return aborts;
}

// Open MPI 4.1 hands the fatal handler's text to mpirun over its help-message channel, which drops or
// garbles it when ranks abort together (open-mpi/ompi#8356; 4 of 12 two-rank runs lost it here). The
// reason for an abort is what the user needs most, so before a handler that aborts, the message also goes
// to this process's own stderr, which the launcher forwards intact.
void printBeforeAbort(MPI_Comm comm, const Problem& p) {
  int rank = -1;
  MPI_Comm_rank(comm, &rank);
  std::fprintf(stderr, "alloy: rank %d: %s (aborting: the communicator's error handler is fatal)\n", rank,
               p.message.c_str());
  std::fflush(stderr);
}

}  // namespace

int report(MPI_Comm comm, const Problem& p) {
  const int code = codeOf(p);
  const MPI_Comm target = comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
  if (handlerAborts(target)) printBeforeAbort(target, p);
  MPI_Comm_call_errhandler(target, code);
  return code;
}

namespace {
thread_local Problem bindingProblem;
}  // namespace

Problem takeBindingProblem() {
  Problem p = std::move(bindingProblem);
  bindingProblem = Problem{};
  return p;
}

Problem fromAlloy(alloyResult_t result, const char* function) {
  // Argument values reach Alloy only after the MPIX checks, so what Alloy still rejects is an argument
  // whose trouble only Alloy sees (a buffer it cannot use); everything else is the engine's failure.
  const int errorClass = result == alloyInvalidArgument ? MPI_ERR_ARG : MPI_ERR_OTHER;
  return problem(errorClass, "%s: %s (%s)", function, alloyGetLastError(nullptr), alloyGetErrorString(result));
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API void alloy_mpix_binding_problem(int errorClass, const char* message) {
  if (!alloy_mpix::bindingProblem) alloy_mpix::bindingProblem = alloy_mpix::Problem{errorClass, message};
}
