#include "sweep.h"

#include <chrono>
#include <memory>
#include <vector>

#include "check_data.h"
#include "datatypes.h"
#include "fatal.h"
#include "results_json.h"
#include "table.h"

namespace alloyperf {

namespace {

// Rank 0's side of the sweep: the table on stdout and the JSON file, which is rewritten as rows come
// (at most once a second, since each write is the whole file) so that a run cut short leaves what it
// measured.
class Recorder {
 public:
  Recorder(const Options& opts, const RunInfo& info, bool withNccl)
      : opts_(opts), info_(info), table_(stdout, withNccl, opts.check, opts.overlapMs > 0) {
    table_.printRunInfo(info, opts);
  }

  void header(Coll coll) { table_.printHeader(coll); }

  void row(const Row& row) {
    table_.printRow(row);
    rows_.push_back(row);
    if (row.alloy.supported) {
      busBwSum_ += row.alloy.busBw;
      ++measured_;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!opts_.jsonPath.empty() && now - lastWrite_ >= std::chrono::seconds(1)) {
      writeResultsJson(opts_.jsonPath, info_, opts_, rows_, false);
      lastWrite_ = now;
    }
  }

  void finish(long long wrong) {
    table_.printFooter(wrong, measured_ ? busBwSum_ / measured_ : 0.0, measured_);
    if (!opts_.jsonPath.empty()) writeResultsJson(opts_.jsonPath, info_, opts_, rows_, true);
  }

 private:
  const Options& opts_;
  const RunInfo& info_;
  Table table_;
  std::vector<Row> rows_;
  double busBwSum_ = 0;
  int measured_ = 0;
  std::chrono::steady_clock::time_point lastWrite_ = std::chrono::steady_clock::now() - std::chrono::seconds(1);
};

}  // namespace

long long runSweep(const Options& opts, const RunInfo& info, Backend* alloy, Backend* nccl, ComputeLoad* load,
                   Runner& runner, MPI_Comm comm) {
  int rank;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::unique_ptr<Recorder> recorder;
  if (rank == 0) recorder.reset(new Recorder(opts, info, nccl != nullptr));

  long long wrong = 0;
  unsigned long long rowIndex = 0;
  for (Coll coll : opts.colls) {
    if (recorder) recorder->header(coll);
    // Collectives that do not reduce run once per type, not once per operator.
    const std::vector<alloyRedOp_t> redops = collReduces(coll) ? opts.redops : std::vector<alloyRedOp_t>{alloySum};
    for (alloyDataType_t type : opts.types) {
      for (alloyRedOp_t redop : redops) {
        for (size_t bytes : sweepSizes(opts)) {
          const Layout layout = makeLayout(coll, bytes, typeInfo(type).size, info.nranks, rank, opts.uniform);
          const CollCall call = runner.call(coll, layout, type, redop);
          Row row{coll, type, redop, collRooted(coll) ? opts.root : -1, layout.sizeBytes, layout.count, {}, false, {}};
          const std::string what = std::string(collName(coll)) + " " + typeInfo(type).name + " " + redopLabel(row) +
                                   " " + std::to_string(layout.sizeBytes) + " B";
          // Fresh data for every row, the same for both libraries within it.
          std::unique_ptr<CheckData> data;
          if (opts.check) data.reset(new CheckData(type, coll, redop, info.nranks, CheckData::mix(opts.seed + ++rowIndex)));

          // Each backend's overlap run follows its own measurement: its checked call left the send
          // buffer holding the data that the overlapped calls' output is checked against.
          auto measure = [&](Backend& b, Measurement* m) {
            *m = runner.measure(b, call, data.get(), what);
            if (load) runner.measureOverlap(b, call, data.get(), *load, m);
          };
          if (alloy) measure(*alloy, &row.alloy);
          else row.alloy.note = info.alloyUnavailable;
          if (nccl) {
            row.hasNccl = true;
            measure(*nccl, &row.nccl);
          }
          // Counts are already summed over ranks, so every rank adds up the same total.
          for (const Measurement* m : {&row.alloy, &row.nccl})
            for (long long w : {m->wrong, m->overlap.wrong})
              if (w > 0) wrong += w;
          if (recorder) recorder->row(row);
        }
      }
    }
  }
  if (recorder) recorder->finish(wrong);
  return wrong;
}

}  // namespace alloyperf
