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
  while (static_cast<int>(alone.size()) < opts_.overlapReps) {
    // Alone and beside alternate, so that a drift of the machine touches both alike. Every rank runs
    // the same phase at once: ranks that share a GPU share it in both phases the same way.
    MPI_CHECK(MPI_Barrier(comm_));
    load.enqueue();
    const double aloneMs = load.finish();

    // The load first: its launches are enqueued in a fraction of a millisecond, the collective's calls
    // (K of them, each several stream operations) take longer, and the load runs while they are.
    MPI_CHECK(MPI_Barrier(comm_));
    load.enqueue();
    stream_.markStart();
    for (int i = 0; i < o.iterations; ++i) launchOk(b, c, "overlap");
    stream_.markStop();
    const double withMs = load.finish();
    synchronize(b);
    const double loopMs = stream_.elapsedMs();

    // The load slowed down beside the calls may outlast them, and then ran its end alone: on every
    // rank the loop must cover the load, or this repetition is made again with more calls.
    double shortfall = loopMs > 0 ? stream_.msToStopOf(load.stream()) / loopMs : 0, worst = 0;
    MPI_CHECK(MPI_Allreduce(&shortfall, &worst, 1, MPI_DOUBLE, MPI_MAX, comm_));
    if (worst > 1 && o.iterations < kMaxOverlapIterations) {
      o.iterations = extendedIterations(o.iterations, worst);
      continue;
    }
    alone.push_back(aloneMs);
    with.push_back(withMs);
    collectiveUs.push_back(1000.0 * loopMs / o.iterations);
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
