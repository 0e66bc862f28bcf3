// Backend over the Alloy library this tool is built against.
#ifndef ALLOY_PERF_BACKEND_ALLOY_H_
#define ALLOY_PERF_BACKEND_ALLOY_H_

#include <memory>
#include <string>

#include "backend.h"

namespace alloyperf {

// Creates Alloy's communicator over comm for CUDA device `device` (collective over comm). Returns null
// with *why set when Alloy answers alloyNotSupported (the rows then all read "not supported by alloy");
// any other failure is fatal. relay: alltoallv passes a relaybuff as large as its send buffer (the rail
// relay between hosts of several ranks); otherwise NULL, the library's default path.
std::unique_ptr<Backend> createAlloyBackend(MPI_Comm comm, int device, bool relay, std::string* why);

}  // namespace alloyperf

#endif  // ALLOY_PERF_BACKEND_ALLOY_H_
