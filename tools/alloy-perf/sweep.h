// The sweep: every collective, type, operator and size the options ask for, each row measured on Alloy
// and then (in compare mode) on NCCL, printed as a table row and recorded for the JSON file.
#ifndef ALLOY_PERF_SWEEP_H_
#define ALLOY_PERF_SWEEP_H_

#include <mpi.h>

#include "backend.h"
#include "compute_load.h"
#include "measure.h"
#include "options.h"
#include "results.h"

namespace alloyperf {

// alloy is null when Alloy could not create a communicator here (every row then says not supported);
// nccl is null without --compare nccl or when NCCL could not be loaded; load is null without -O (with
// it, each backend's row is also measured beside the load). Every rank calls it. Returns the number of
// wrong elements found by check mode (the same on every rank).
long long runSweep(const Options& opts, const RunInfo& info, Backend* alloy, Backend* nccl, ComputeLoad* load,
                   Runner& runner, MPI_Comm comm);

}  // namespace alloyperf

#endif  // ALLOY_PERF_SWEEP_H_
