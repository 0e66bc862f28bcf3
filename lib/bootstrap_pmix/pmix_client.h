// This process's PMIx client connection, opened on first use and released at MPI_Finalize.
#pragma once

#include <pmix.h>

namespace alloy {

// Connects to the launcher's PMIx server once per process. Returns nullptr when there is none (singleton
// run, a launcher without PMIx) and records the reason as the thread's last error.
const pmix_proc_t* pmixSelf();

}  // namespace alloy
