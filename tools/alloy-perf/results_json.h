// The --json file: the run's description, the options, and every number of every row. Written whole to
// a temporary file, then renamed, so that readers never see half a file; main rewrites it as rows come.
#ifndef ALLOY_PERF_RESULTS_JSON_H_
#define ALLOY_PERF_RESULTS_JSON_H_

#include <string>
#include <vector>

#include "options.h"
#include "results.h"

namespace alloyperf {

// Format version of the file; scripts/plot-perf.py reads it.
constexpr int kJsonFormat = 1;

void writeResultsJson(const std::string& path, const RunInfo& info, const Options& opts,
                      const std::vector<Row>& rows, bool complete);

}  // namespace alloyperf

#endif  // ALLOY_PERF_RESULTS_JSON_H_
