// Overlap mode (-O) of a row: the compute load alone, then beside the collective, repeated; see
// measure.h and docs/benchmarks.md ("Compute beside a collective").
#include <vector>

#include "fatal.h"
#include "measure.h"
#include "overlap_math.h"

namespace alloyperf {

void Runner::measureOverlap(Backend& b, const CollCall& c, const CheckData* data, ComputeLoad& load,
                            Measurement* m) {
  OverlapMeasurement& o = m->overlap;
  if (!m->supported) return;
  // m->timeUs and the load's calibration are the same on every rank, so every rank makes as many calls.
  o.iterations = iterationsToSpan(load.shape().calibratedMs, m->timeUs);
  // The send buffer still holds the checked call's data: the last overlapped call must rewrite all of
  // the poisoned receive buffer with the right answer.
  if (data) poisonReceive(c);
  synchronize(b);

  std::vector<double> alone, with, collectiveUs;
  for (int rep = 0; rep < opts_.overlapReps; ++rep) {
    // Alone and beside alternate, so that a drift of the machine touches both alike. Every rank runs
    // the same phase at once: ranks that share a GPU share it in both phases the same way.
    MPI_CHECK(MPI_Barrier(comm_));
    load.enqueue();
    alone.push_back(load.finish());

    // The load first: its launches are enqueued in a fraction of a millisecond, the collective's calls
    // (K of them, each several stream operations) take longer, and the load runs while they are.
    MPI_CHECK(MPI_Barrier(comm_));
    load.enqueue();
    stream_.markStart();
    for (int i = 0; i < o.iterations; ++i) launchOk(b, c, "overlap");
    stream_.markStop();
    with.push_back(load.finish());
    synchronize(b);
    collectiveUs.push_back(1000.0 * stream_.elapsedMs() / o.iterations);
  }
  if (data) o.wrong = wrongEverywhere(c, *data);

  // As for the collective alone: a row is as slow as its slowest rank.
  double local[3] = {median(alone), median(with), median(collectiveUs)}, most[3];
  MPI_CHECK(MPI_Allreduce(local, most, 3, MPI_DOUBLE, MPI_MAX, comm_));
  o.measured = true;
  o.computeAloneMs = most[0];
  o.computeWithMs = most[1];
  o.slowdown = most[0] > 0 ? most[1] / most[0] : 0;
  o.timeUs = most[2];
  o.algBw = gbPerSecond(c.layout->algBytes, o.timeUs);
  o.busBw = gbPerSecond(c.layout->busBytes, o.timeUs);
}

}  // namespace alloyperf
