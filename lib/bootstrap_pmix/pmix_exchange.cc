// Endpoint exchange through PMIx: each rank Puts its blob under a key unique to this creation and
// Commits; an MPI barrier orders the commits before the Gets (a fence over a subset of the job's
// processes is not supported by every launcher's PMIx server, a barrier on the communicator is).
#include <atomic>
#include <cstdio>
#include <cstring>

#include "env.h"
#include "error.h"
#include "exchange.h"
#include "pmix_client.h"

namespace alloy {
namespace {

// Each creation takes this process's next id and Puts its blob under a key made of it, so a process
// never reuses a key, even when threads create communicators concurrently (MPI_THREAD_MULTIPLE); the
// peers learn each rank's id with its PMIx identity.
std::atomic<long long> nextCreationId{0};

struct PeerKey {
  pmix_proc_t proc;
  long long creationId;
};

void keyOf(long long creationId, char (&key)[PMIX_MAX_KEYLEN + 1]) {
  std::snprintf(key, sizeof(key), "alloy.ep.%lld", creationId);
}

// All ranks agree whether every rank succeeded; returns the lowest failing rank or -1.
int firstFailingRank(MPI_Comm comm, bool ok) {
  int rank = 0, nranks = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int mine = ok ? nranks : rank, lowest = nranks;
  PMPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
  return lowest == nranks ? -1 : lowest;
}

alloyResult_t getPeerBlob(const pmix_proc_t& peer, const char* key, size_t bytes, uint8_t* out,
                          int peerRank, int timeoutSec) {
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeoutSec, PMIX_INT);
  pmix_value_t* value = nullptr;
  pmix_status_t status = PMIx_Get(&peer, key, &info, 1, &value);
  PMIX_INFO_DESTRUCT(&info);
  if (status != PMIX_SUCCESS || value == nullptr)
    return fail(alloyRemoteError, "PMIx_Get of %s from rank %d (%s:%u) failed: %s", key, peerRank,
                peer.nspace, peer.rank, PMIx_Error_string(status));
  alloyResult_t result = alloySuccess;
  if (value->type != PMIX_BYTE_OBJECT || value->data.bo.size != bytes) {
    result = fail(alloyRemoteError, "PMIx key %s from rank %d holds %zu bytes of type %d, expected %zu",
                  key, peerRank, value->type == PMIX_BYTE_OBJECT ? value->data.bo.size : 0,
                  static_cast<int>(value->type), bytes);
  } else {
    std::memcpy(out, value->data.bo.bytes, bytes);
  }
  PMIX_VALUE_RELEASE(value);
  return result;
}

}  // namespace

alloyResult_t exchangeOverPmix(MPI_Comm comm, const void* mine, size_t bytes,
                               std::vector<uint8_t>* all) {
  int rank = 0, nranks = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);

  // Every rank must take the same path, so PMIx is used only when it works everywhere.
  const pmix_proc_t* self = pmixSelf();
  if (firstFailingRank(comm, self != nullptr) >= 0) {
    if (self != nullptr) fail(alloyNotSupported, "PMIx is unavailable on another rank");
    return alloyNotSupported;
  }

  // Peers' PMIx identities (ranks of a communicator may come from several jobs, MPI_Comm_spawn) and
  // the ids their keys are made of.
  PeerKey me;
  std::memset(&me, 0, sizeof(me));  // padding travels too
  me.proc = *self;
  me.creationId = nextCreationId.fetch_add(1);
  std::vector<PeerKey> peers(nranks);
  PMPI_Allgather(&me, sizeof(PeerKey), MPI_BYTE, peers.data(), sizeof(PeerKey), MPI_BYTE, comm);
  char key[PMIX_MAX_KEYLEN + 1];
  keyOf(me.creationId, key);

  pmix_value_t value;
  PMIX_VALUE_CONSTRUCT(&value);
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = static_cast<char*>(const_cast<void*>(mine));
  value.data.bo.size = bytes;
  pmix_status_t status = PMIx_Put(PMIX_GLOBAL, key, &value);  // PMIx_Put copies the value
  if (status == PMIX_SUCCESS) status = PMIx_Commit();
  alloyResult_t result = alloySuccess;
  if (status != PMIX_SUCCESS)
    result = fail(alloyInternalError, "PMIx_Put/Commit of %s failed: %s", key, PMIx_Error_string(status));

  PMPI_Barrier(comm);

  all->assign(bytes * nranks, 0);
  std::memcpy(all->data() + bytes * rank, mine, bytes);
  const int timeoutSec = static_cast<int>(envInt("ALLOY_BOOTSTRAP_TIMEOUT_S", 60, 1, 86400));
  for (int peer = 0; peer < nranks && result == alloySuccess; ++peer) {
    if (peer == rank) continue;
    char peerKey[PMIX_MAX_KEYLEN + 1];
    keyOf(peers[peer].creationId, peerKey);
    result = getPeerBlob(peers[peer].proc, peerKey, bytes, all->data() + bytes * peer, peer, timeoutSec);
  }

  const int failing = firstFailingRank(comm, result == alloySuccess);
  if (failing >= 0 && result == alloySuccess)
    return fail(alloyRemoteError, "endpoint exchange over PMIx failed on rank %d", failing);
  return result;
}

}  // namespace alloy
