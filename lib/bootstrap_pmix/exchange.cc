#include "exchange.h"

#include <mutex>
#include <string>

#include "env.h"
#include "error.h"
#include "log.h"

namespace alloy {

alloyResult_t exchangeEndpoints(MPI_Comm comm, const void* mine, size_t bytes,
                                std::vector<uint8_t>* all, BootstrapPath* used) {
  // ALLOY_BOOTSTRAP must be set alike on every rank (launchers export the environment to all).
  const std::string choice = envChoice("ALLOY_BOOTSTRAP", "auto", {"auto", "pmix", "mpi"});
  if (choice != "mpi") {
    alloyResult_t result = exchangeOverPmix(comm, mine, bytes, all);
    if (result == alloySuccess) {
      *used = BootstrapPath::Pmix;
      return alloySuccess;
    }
    if (result != alloyNotSupported) return result;
    if (choice == "pmix") return fail(alloyNotSupported, "ALLOY_BOOTSTRAP=pmix but %s", lastError());
    static std::once_flag once;
    std::call_once(once, [] {
      logWarn("PMIx unavailable (%s); exchanging endpoints with MPI_Allgather", lastError());
    });
  } else {
    static std::once_flag once;
    std::call_once(once, [] { logInfo("ALLOY_BOOTSTRAP=mpi: exchanging endpoints with MPI_Allgather"); });
  }
  ALLOY_TRY(exchangeOverMpi(comm, mine, bytes, all));
  *used = BootstrapPath::Mpi;
  return alloySuccess;
}

}  // namespace alloy
