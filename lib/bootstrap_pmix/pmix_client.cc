#include "pmix_client.h"

#include <mpi.h>

#include <mutex>

#include "error.h"
#include "log.h"

namespace alloy {
namespace {

struct PmixClient {
  bool ready = false;
  pmix_proc_t self{};
  pmix_status_t initStatus = PMIX_SUCCESS;
};

PmixClient client;
std::once_flag clientOnce;

// PMIx_Init is reference counted and Open MPI holds its own reference; ours must be dropped before
// MPI_Finalize drops the last one, or the server never hears that this process finalized. MPI calls
// the delete callbacks of MPI_COMM_SELF's attributes first thing in MPI_Finalize.
int finalizeAtMpiFinalize(MPI_Comm, int, void*, void*) {
  if (client.ready) {
    PMIx_Finalize(nullptr, 0);
    client.ready = false;
  }
  return MPI_SUCCESS;
}

void connect() {
  client.initStatus = PMIx_Init(&client.self, nullptr, 0);
  if (client.initStatus != PMIX_SUCCESS) return;
  client.ready = true;
  int keyval = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizeAtMpiFinalize, &keyval, nullptr) ==
      MPI_SUCCESS) {
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    MPI_Comm_free_keyval(&keyval);  // the attribute keeps the keyval alive until its callback has run
  }
  logTrace("PMIx client connected as %s:%u", client.self.nspace, client.self.rank);
}

}  // namespace

const pmix_proc_t* pmixSelf() {
  std::call_once(clientOnce, connect);
  if (!client.ready) {
    fail(alloyNotSupported, "PMIx_Init failed: %s", PMIx_Error_string(client.initStatus));
    return nullptr;
  }
  return &client.self;
}

}  // namespace alloy
