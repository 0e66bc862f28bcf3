#include "results_json.h"

#include <cstdio>
#include <string>

#include "datatypes.h"
#include "fatal.h"
#include "json_writer.h"

namespace alloyperf {

namespace {

// Overlap mode's numbers of one library's row; null without -O or where the row was not supported.
void writeOverlap(JsonWriter& w, const OverlapMeasurement& o) {
  if (!o.measured) {
    w.null();
    return;
  }
  w.beginObject();
  w.key("compute_alone_ms").value(o.computeAloneMs);
  w.key("compute_with_ms").value(o.computeWithMs);
  w.key("slowdown").value(o.slowdown);
  w.key("iterations").value(o.iterations);
  w.key("time_us").value(o.timeUs);
  w.key("algbw_gbs").value(o.algBw);
  w.key("busbw_gbs").value(o.busBw);
  w.key("wrong");
  o.wrong >= 0 ? w.value(o.wrong) : w.null();
  w.endObject();
}

// The compute load beside the rows; null without -O.
void writeLoad(JsonWriter& w, const ComputeLoadShape& l, const Options& o) {
  if (l.targetMs == 0) {
    w.null();
    return;
  }
  w.beginObject();
  w.key("target_ms").value(l.targetMs);
  w.key("calibrated_ms").value(l.calibratedMs);
  w.key("kernels").value(l.kernels);
  w.key("blocks").value(l.blocks);
  w.key("threads").value(l.threads);
  w.key("loop").value(l.loop);
  w.key("reps").value(o.overlapReps);
  w.key("method").value(
      "per repetition, after an MPI_Barrier the load alone, after another the load with the collective "
      "looping beside it for iterations calls (a repetition whose load outlasted the calls on any rank is made "
      "again with more); times are each rank's median over the repetitions, then the maximum over ranks; "
      "slowdown = compute_with_ms / compute_alone_ms");
  w.endObject();
}

void writeMeasurement(JsonWriter& w, const Measurement& m) {
  w.beginObject();
  w.key("status").value(m.supported ? "ok" : "not supported");
  if (!m.supported) w.key("message").value(m.note);
  w.key("time_us");
  m.supported ? w.value(m.timeUs) : w.null();
  w.key("algbw_gbs");
  m.supported ? w.value(m.algBw) : w.null();
  w.key("busbw_gbs");
  m.supported ? w.value(m.busBw) : w.null();
  w.key("wrong");
  m.wrong >= 0 ? w.value(m.wrong) : w.null();
  w.key("overlap");
  writeOverlap(w, m.overlap);
  w.endObject();
}

void writeOptions(JsonWriter& w, const Options& o) {
  w.beginObject();
  w.key("minbytes").value(o.minBytes);
  w.key("maxbytes").value(o.maxBytes);
  w.key("stepfactor").value(o.stepFactor);
  w.key("stepbytes").value(o.stepBytes);
  w.key("ops").beginArray();
  for (Coll c : o.colls) w.value(collName(c));
  w.endArray();
  w.key("datatypes").beginArray();
  for (alloyDataType_t t : o.types) w.value(typeInfo(t).name);
  w.endArray();
  w.key("redops").beginArray();
  for (alloyRedOp_t r : o.redops) w.value(redopName(r));
  w.endArray();
  w.key("warmup_iters").value(o.warmupIters);
  w.key("iters").value(o.iters);
  w.key("root").value(o.root);
  w.key("check").value(o.check);
  w.key("cudagraph_launches").value(o.graphLaunches);
  w.key("blocking").value(o.blocking);
  w.key("legacy_stream").value(o.legacyStream);
  w.key("compare").value(o.compareNccl ? "nccl" : "");
  w.key("seed").value(static_cast<long long>(o.seed));
  w.key("overlap_ms").value(o.overlapMs);
  w.key("overlap_reps").value(o.overlapReps);
  w.key("overlap_kernels").value(o.overlapKernels);
  w.endObject();
}

}  // namespace

void writeResultsJson(const std::string& path, const RunInfo& info, const Options& opts,
                      const std::vector<Row>& rows, bool complete) {
  JsonWriter w;
  w.beginObject();
  w.key("tool").value("alloy-perf");
  w.key("format").value(kJsonFormat);
  w.key("complete").value(complete);
  w.key("nranks").value(info.nranks);
  w.key("alloy_version").value(info.alloyVersion);
  if (!info.alloyUnavailable.empty()) w.key("alloy_unavailable").value(info.alloyUnavailable);
  w.key("nccl").beginObject();
  w.key("requested").value(info.ncclRequested);
  w.key("loaded").value(info.ncclLoaded);
  w.key(info.ncclLoaded ? "library" : "reason").value(info.ncclDescription);
  w.key("version").value(info.ncclVersion);
  w.endObject();
  w.key("time").value(std::string("per iteration in microseconds, ") + timeAcrossRanks(opts));
  w.key("alltoallv_counts").value(opts.uniform ? "sendcount[s->d] = base"
                                               : "sendcount[s->d] = floor(2 * base * (1 + (s + d) mod n) / (n + 1))");
  w.key("options");
  writeOptions(w, opts);
  w.key("overlap");
  writeLoad(w, info.load, opts);
  w.key("devices").beginArray();
  for (const DeviceInfo& d : info.devices) {
    w.beginObject();
    w.key("rank").value(d.rank);
    w.key("host").value(d.host);
    w.key("device").value(d.device);
    w.key("name").value(d.name);
    w.key("pci_bus_id").value(d.pciBusId);
    w.endObject();
  }
  w.endArray();
  w.key("rows").beginArray();
  for (const Row& r : rows) {
    w.beginObject();
    w.key("op").value(collName(r.coll));
    w.key("type").value(typeInfo(r.type).name);
    w.key("redop").value(redopLabel(r));
    w.key("root").value(r.root);
    w.key("size_bytes").value(r.sizeBytes);
    w.key("count").value(r.count);
    w.key("alloy");
    writeMeasurement(w, r.alloy);
    w.key("nccl");
    if (r.hasNccl) writeMeasurement(w, r.nccl);
    else w.null();
    w.key("ratio").value(ratio(r));
    w.endObject();
  }
  w.endArray();
  w.endObject();

  // Written whole to a temporary name and renamed: readers never see half a file.
  const std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (!f) fatal("cannot write %s", tmp.c_str());
  const bool ok = fwrite(w.text().data(), 1, w.text().size(), f) == w.text().size();
  if (fclose(f) != 0 || !ok || rename(tmp.c_str(), path.c_str()) != 0) fatal("cannot write %s", path.c_str());
}

}  // namespace alloyperf
