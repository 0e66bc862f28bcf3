#include "comm_ranks.h"

#include <memory>
#include <set>

#include "comm.h"
#include "error.h"
#include "root.h"
#include "socket_bootstrap.h"

namespace alloy {

alloyResult_t createRankFromId(const uint8_t id[kUniqueIdBytes], int nranks, int rank, const alloyConfig_t& config,
                               alloyComm_t* out) {
  std::unique_ptr<Bootstrap> bootstrap;
  ALLOY_TRY(SocketBootstrap::join(id, nranks, rank, &bootstrap));
  return commCreate(std::move(bootstrap), &config, out);
}

alloyResult_t createRanksTogether(const uint8_t id[kUniqueIdBytes], int nranks, const std::vector<RankOfId>& ranks,
                                  std::vector<alloyComm_t>* outs) {
  outs->clear();
  std::vector<alloyComm_t> made(ranks.size(), nullptr);
  std::vector<alloyResult_t> results(ranks.size(), alloyInternalError);
  std::vector<std::string> messages(ranks.size());
  const bool ran = onThreads(ranks.size(), [&](size_t i) {
    results[i] = createRankFromId(id, nranks, ranks[i].rank, ranks[i].config, &made[i]);
    if (results[i] != alloySuccess) messages[i] = lastError();
  });
  if (!ran) return fail(alloyInternalError, "the threads that create a process's ranks of one communicator could not be started");
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (results[i] == alloySuccess) continue;
    for (alloyComm_t m : made)
      if (m != nullptr) alloyCommAbort(m);
    return fail(results[i], "%s", messages[i].c_str());
  }
  *outs = made;
  return alloySuccess;
}

void finalizeTogether(const std::vector<alloyComm_t>& comms, std::vector<alloyResult_t>* results,
                      std::vector<std::string>* messages) {
  results->assign(comms.size(), alloySuccess);
  messages->assign(comms.size(), std::string());
  const bool ran = onThreads(comms.size(), [&](size_t i) {
    (*results)[i] = commFinalize(comms[i]);
    if ((*results)[i] != alloySuccess) (*messages)[i] = lastError();
  });
  if (ran) return;
  results->assign(comms.size(), alloyInternalError);
  messages->assign(comms.size(), "the threads that finalize a process's ranks of one communicator could not be started");
}

}  // namespace alloy

using namespace alloy;

extern "C" ALLOY_API alloyResult_t alloyGetUniqueId(alloyUniqueId* id) {
  clearLastError();
  if (id == nullptr) return fail(alloyInvalidArgument, "alloyGetUniqueId: id is NULL; expected a pointer to receive it");
  return startRoot(reinterpret_cast<uint8_t*>(id->internal));
}

extern "C" ALLOY_API alloyResult_t alloyCommInitRanks(const alloyUniqueId* id, int nranks, int count, const int ranks[],
                                                      const int devices[], const alloyConfig_t* config,
                                                      alloyComm_t comms[]) {
  clearLastError();
  const char* fn = "alloyCommInitRanks";
  if (id == nullptr) return fail(alloyInvalidArgument, "%s: id is NULL; expected the id of alloyGetUniqueId", fn);
  if (nranks < 1) return fail(alloyInvalidArgument, "%s: nranks is %d; expected at least 1", fn, nranks);
  if (count < 1 || count > nranks)
    return fail(alloyInvalidArgument, "%s: count is %d; expected 1 to nranks (%d)", fn, count, nranks);
  if (ranks == nullptr) return fail(alloyInvalidArgument, "%s: ranks is NULL; expected count ranks", fn);
  if (comms == nullptr) return fail(alloyInvalidArgument, "%s: comms is NULL; expected room for count communicators", fn);
  alloyConfig_t base = ALLOY_CONFIG_INITIALIZER;
  if (config != nullptr) base = *config;  // commCreate checks its size and magic on every rank alike
  std::set<int> seenRanks, seenDevices;
  std::vector<RankOfId> wanted;
  for (int i = 0; i < count; ++i) {
    if (ranks[i] < 0 || ranks[i] >= nranks)
      return fail(alloyInvalidArgument, "%s: ranks[%d] is %d; expected 0 <= rank < nranks (%d)", fn, i, ranks[i], nranks);
    if (!seenRanks.insert(ranks[i]).second)
      return fail(alloyInvalidArgument, "%s: rank %d is listed twice in ranks", fn, ranks[i]);
    RankOfId r{ranks[i], base};
    if (devices != nullptr) {
      r.config.cudaDevice = devices[i];
      if (devices[i] >= 0 && !seenDevices.insert(devices[i]).second)
        return fail(alloyInvalidArgument, "%s: device %d is listed twice in devices; each rank of a process needs a "
                    "GPU of its own", fn, devices[i]);
    }
    wanted.push_back(r);
  }
  std::vector<alloyComm_t> made;
  ALLOY_TRY(createRanksTogether(reinterpret_cast<const uint8_t*>(id->internal), nranks, wanted, &made));
  for (int i = 0; i < count; ++i) comms[i] = made[i];
  return alloySuccess;
}

extern "C" ALLOY_API alloyResult_t alloyCommDestroyAll(alloyComm_t comms[], int count) {
  clearLastError();
  if (count < 1) return fail(alloyInvalidArgument, "alloyCommDestroyAll: count is %d; expected at least 1", count);
  if (comms == nullptr) return fail(alloyInvalidArgument, "alloyCommDestroyAll: comms is NULL; expected count communicators");
  std::vector<alloyComm_t> all;
  for (int i = 0; i < count; ++i) {
    if (comms[i] == nullptr)
      return fail(alloyInvalidArgument, "alloyCommDestroyAll: comms[%d] is NULL; expected a communicator", i);
    all.push_back(comms[i]);
  }
  std::vector<alloyResult_t> results;
  std::vector<std::string> messages;
  finalizeTogether(all, &results, &messages);
  for (alloyComm_t comm : all) delete comm;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i] != alloySuccess) return fail(results[i], "%s", messages[i].c_str());
  return alloySuccess;
}
