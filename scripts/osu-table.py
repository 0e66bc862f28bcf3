#!/usr/bin/env python3
"""The osu mode's tables (scripts/gpu-check-osu.sh): per OSU collective, OSU's average latency on device
buffers through liballoy_mpi.so, on host buffers through the MPI library alone and through the layer,
beside alloy-perf's blocking calls of Alloy and NCCL for the same bytes, and the layer's cost over Alloy's
own call.

Reads, for each benchmark B and rank count N, LOGS/B-layer-npN.log, LOGS/B-host-npN.log and
LOGS/B-hostlayer-npN.log (OSU's output; the first also the layer's report) and LOGS/B-native-npN.json
(alloy-perf --json). Exit status 0; 3 where
the layer diverted no call of a device-buffer run (it would then be timing the MPI library); 2 for a bad
command line.
"""
import argparse
import json
import os
import re
import sys

COST_BOUND_US = 3.0  # issue #37: the layer's time over Alloy's native call at small sizes

# OSU's allgather and alltoallv sizes are one rank's block; alloy-perf's the whole buffer.
PER_RANK = {"osu_allgather", "osu_alltoallv"}
MPI_FUNCTION = {"osu_allreduce": "MPI_Allreduce", "osu_bcast": "MPI_Bcast", "osu_allgather": "MPI_Allgather",
                "osu_alltoallv": "MPI_Alltoallv"}


def osu_latencies(path):
    """{size: average latency in us} from an OSU log (its second column; -f adds the fastest and the
    slowest rank's average and the iterations after it); {} where it is missing."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*(\d+)\s+([0-9.]+)(\s+[0-9.]+)*\s*$", line)
            if m:
                rows[int(m.group(1))] = float(m.group(2))
    return rows


def layer_report(path, function):
    """(passed, diverted) of rank 0's report line for function, or None."""
    if not os.path.exists(path):
        return None
    pattern = re.compile(r"^alloy mpi layer: rank 0: %s: (\d+) passed, (\d+) diverted$" % re.escape(function))
    with open(path, errors="replace") as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                return int(m.group(1)), int(m.group(2))
    return None


def native_times(path):
    """{size_bytes: (alloy us, nccl us)} from alloy-perf's JSON; None for a number it lacks."""
    times = {}
    if not os.path.exists(path):
        return times
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return times

    def time_of(side):
        return side.get("time_us") if isinstance(side, dict) and side.get("status") == "ok" else None

    for row in doc.get("rows", []):
        times[row.get("size_bytes")] = (time_of(row.get("alloy")), time_of(row.get("nccl")))
    return times


def cell(value):
    return "%10.2f" % value if value is not None else "%10s" % "-"


def table(logs, np, bench, cost_max):
    """Prints the benchmark's table; returns False where the layer diverted nothing."""
    layer = osu_latencies(os.path.join(logs, "%s-layer-np%d.log" % (bench, np)))
    host = osu_latencies(os.path.join(logs, "%s-host-np%d.log" % (bench, np)))
    host_layer = osu_latencies(os.path.join(logs, "%s-hostlayer-np%d.log" % (bench, np)))
    native = native_times(os.path.join(logs, "%s-native-np%d.json" % (bench, np)))
    blocks = np if bench in PER_RANK else 1
    report = layer_report(os.path.join(logs, "%s-layer-np%d.log" % (bench, np)), MPI_FUNCTION[bench])
    print("%s (%d ranks; us per call; OSU's size%s)" % (bench, np, " per rank" if blocks > 1 else ""))
    if report is None:
        print("  layer report: none (was liballoy_mpi.so loaded?)")
    else:
        print("  layer report, rank 0: %s %d diverted, %d passed" % (MPI_FUNCTION[bench], report[1], report[0]))
    print("  columns: OSU on device buffers through the layer, on host buffers through MPI alone and through the")
    print("  layer; alloy-perf --blocking for Alloy and NCCL; the layer's device time over Alloy's")
    print("  %10s %10s %10s %10s %10s %10s %10s" % ("size", "layer dev", "MPI host", "layer host", "alloy", "nccl",
                                                  "layer-alloy"))
    worst = None
    for size in sorted(set(layer) | set(host)):
        alloy, nccl = native.get(size * blocks, (None, None))
        over = layer[size] - alloy if size in layer and alloy is not None else None
        if over is not None and size <= cost_max:
            worst = over if worst is None or over > worst else worst
        print("  %10d %s %s %s %s %s %s" % (size, cell(layer.get(size)), cell(host.get(size)), cell(host_layer.get(size)),
                                             cell(alloy), cell(nccl), cell(over)))
    if worst is None:
        print("  the layer's cost up to %d B: NOT MEASURED" % cost_max)
    else:
        print("  the layer's cost up to %d B: worst %.2f us over Alloy's call; target <= %.1f: %s"
              % (cost_max, worst, COST_BOUND_US, "met" if worst <= COST_BOUND_US else "MISSED"))
    print()
    return report is not None and report[1] > 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--benchmarks", required=True, help="OSU benchmarks, space separated")
    parser.add_argument("--cost-maxbytes", type=int, default=65536)
    args = parser.parse_args()
    unknown = [b for b in args.benchmarks.split() if b not in MPI_FUNCTION]
    if unknown:
        parser.error("--benchmarks: no table for %s (known: %s)" % (", ".join(unknown), ", ".join(MPI_FUNCTION)))
    diverted = [table(args.logs, args.np, b, args.cost_maxbytes) for b in args.benchmarks.split()]
    return 0 if all(diverted) else 3


if __name__ == "__main__":
    sys.exit(main())
