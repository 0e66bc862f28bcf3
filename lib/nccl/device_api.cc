// The host half of NCCL's device API (nccl_device.h: device communicators, teams, barrier and all-to-all
// requirements). Alloy has no device-side API, so creating a device communicator or a requirement is refused
// (ncclInvalidUsage, the reason in ncclGetLastError); programs such as PyTorch link these functions and call
// them only for features built on that API. The team queries answer what can be answered without it: the
// world team exactly, and for the load/store and rail teams the calling rank alone (a team no device
// communicator of Alloy's could widen), recorded as a refusal in ncclGetLastError.
#include <nccl.h>
#include <nccl_device.h>

#include "error.h"
#include "nccl_comm.h"

using namespace alloy::nccl;

namespace {

constexpr const char* kNoDeviceApi = "Alloy has no device-side API (nccl_device.h); use the host collectives";

// The team of the calling rank alone, for the teams that need the device API to mean more.
ncclTeam_t selfTeam(const char* function) {
  refuse(function, "Alloy has no device-side API (nccl_device.h); the team holds the calling rank alone");
  return ncclTeam_t{1, 0, 1};
}

}  // namespace

extern "C" {

ncclResult_t ncclDevCommCreate(ncclComm_t, ncclDevCommRequirements_t const*, ncclDevComm_t*) {
  return refuse("ncclDevCommCreate", kNoDeviceApi);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t, ncclDevComm_t const*) { return refuse("ncclDevCommDestroy", kNoDeviceApi); }

ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle_t*,
                                             ncclDevResourceRequirements_t*) {
  return refuse("ncclGinBarrierCreateRequirement", kNoDeviceApi);
}

ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle_t*, ncclDevResourceRequirements_t*) {
  return refuse("ncclLsaBarrierCreateRequirement", kNoDeviceApi);
}

ncclResult_t ncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle_t*, ncclDevResourceRequirements_t*) {
  return refuse("ncclLLA2ACreateRequirement", kNoDeviceApi);
}

// No slots: there is no device-side all-to-all to size them for.
int ncclLLA2ACalcSlots(int, int) {
  refuse("ncclLLA2ACalcSlots", kNoDeviceApi);
  return 0;
}

ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  alloy::clearLastError();
  int count = 0, rank = 0;
  if (comm == nullptr || alloyCommCount(comm->alloy, &count) != alloySuccess ||
      alloyCommUserRank(comm->alloy, &rank) != alloySuccess) {
    alloy::fail(alloyInvalidArgument, "ncclTeamWorld: comm is not a communicator; the team is empty");
    return ncclTeam_t{0, 0, 1};
  }
  return ncclTeam_t{count, rank, 1};
}

ncclTeam_t ncclTeamLsa(ncclComm_t) { return selfTeam("ncclTeamLsa"); }
ncclTeam_t ncclTeamRail(ncclComm_t) { return selfTeam("ncclTeamRail"); }

// Rank `rank` of team, as a rank of the world: the team's ranks lie `stride` apart around the caller.
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  return ncclTeamWorld(comm).rank + (rank - team.rank) * team.stride;
}

// Of the load/store team (the caller alone here), rank `rank` of team: 0 where it is the caller, else -1.
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  return ncclTeamRankToWorld(comm, team, rank) == ncclTeamWorld(comm).rank ? 0 : -1;
}

}  // extern "C"
