#!/usr/bin/env python3
"""Plot and summarise alloy-perf results (the JSON files that `alloy-perf --json FILE` writes).

    plot-perf.py [--png OUT.png] [--summary] PERF.json [PERF.json ...] [--check CHECK.json ...]

--png draws bus bandwidth against size (log x), one panel per collective, Alloy solid and NCCL dashed,
one line per data type and reduction operator. --summary prints, per collective, the Alloy/NCCL ratio
over three size bands: small (8 B - 64 KB) as a latency ratio, Alloy time / NCCL time (below 1 is
better), and medium (256 KB - 16 MB) and large (128 MB - 1 GB) as bus bandwidth ratios, Alloy busbw /
NCCL busbw (above 1 is better); each is the geometric mean over the sizes of the band. --check adds the
wrong-element counts of check-mode runs to the summary. Only the standard library is needed for
--summary; matplotlib only for --png.
"""

import argparse
import json
import math
import sys
from collections import OrderedDict

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
# alloy-perf's order of collectives; panels and summary lines follow it.
OP_ORDER = ("allreduce", "reduce", "broadcast", "allgather", "reducescatter", "alltoall", "alltoallv", "sendrecv")
BANDS = (  # name, smallest size, largest size, what the ratio compares
    ("small", 8, 64 * KB, "latency"),
    ("medium", 256 * KB, 16 * MB, "busbw"),
    ("large", 128 * MB, 1 * GB, "busbw"),
)


def load_rows(paths):
    """Rows of every file, later files replacing earlier rows of the same op/type/redop/root/size."""
    rows = OrderedDict()
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        if doc.get("tool") != "alloy-perf":
            sys.exit(f"plot-perf: {path} is not an alloy-perf result file")
        for row in doc["rows"]:
            rows[(row["op"], row["type"], row["redop"], row["root"], row["size_bytes"])] = row
    return list(rows.values())


def op_rank(op):
    return OP_ORDER.index(op) if op in OP_ORDER else len(OP_ORDER)


def ok(measurement):
    return measurement is not None and measurement.get("status") == "ok" and measurement.get("time_us")


def series_label(row):
    return row["type"] if row["redop"] == "none" else f'{row["type"]} {row["redop"]}'


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def band_ratio(rows, lo, hi, kind):
    """Geometric mean of the Alloy/NCCL ratio over the rows whose size lies in [lo, hi]."""
    inside = [r for r in rows if lo <= r["size_bytes"] <= hi]
    if not inside:
        return "no sizes"
    pairs = [r for r in inside if ok(r["alloy"]) and ok(r.get("nccl"))]
    if not pairs:
        if not any(ok(r["alloy"]) for r in inside):
            return "not supported by alloy"
        return "no nccl"
    if kind == "latency":
        ratios = [r["alloy"]["time_us"] / r["nccl"]["time_us"] for r in pairs]
    else:  # same bytes on both sides: busbw ratio = NCCL time / Alloy time (defined at busbw 0 too)
        ratios = [r["nccl"]["time_us"] / r["alloy"]["time_us"] for r in pairs]
    note = "" if len(pairs) == len(inside) else f" ({len(inside) - len(pairs)} of {len(inside)} unsupported)"
    return f"{geomean(ratios):.2f}x{note}"


def wrong_text(rows, side):
    counts = [r[side]["wrong"] for r in rows if r.get(side) and r[side].get("wrong") is not None]
    if not counts:
        return "-"
    return "ok" if sum(counts) == 0 else f"{sum(counts)} WRONG"


def summary(perf_rows, check_rows):
    groups = OrderedDict()
    for r in perf_rows:
        groups.setdefault((r["op"], series_label(r)), []).append(r)
    checks = OrderedDict()
    for r in check_rows:
        checks.setdefault((r["op"], series_label(r)), []).append(r)
    header = ["collective", "type", "check alloy", "check nccl",
              "small time a/n", "medium busbw a/n", "large busbw a/n"]
    lines = [header]
    keys = list(OrderedDict.fromkeys(list(groups) + list(checks)))
    for key in sorted(keys, key=lambda k: op_rank(k[0])):  # stable: types keep their order
        rows = groups.get(key, [])
        checked = checks.get(key, [])
        lines.append([key[0], key[1], wrong_text(checked, "alloy"), wrong_text(checked, "nccl")] +
                     [band_ratio(rows, lo, hi, kind) if rows else "-" for _, lo, hi, kind in BANDS])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
    print("(small: Alloy time / NCCL time, lower is better; medium, large: Alloy busbw / NCCL busbw, "
          "higher is better; geometric means over 8B-64KB, 256KB-16MB, 128MB-1GB)")


def human_bytes(n):
    for unit, size in (("G", GB), ("M", MB), ("K", KB)):
        if n >= size:
            return f"{n / size:g}{unit}"
    return f"{n:g}"


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")  # no display on the machines this runs on
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    ops = sorted(OrderedDict.fromkeys(r["op"] for r in rows), key=op_rank)
    if not ops:
        sys.exit("plot-perf: no rows to plot")
    cols = min(4, len(ops))
    nrows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.8 * nrows), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        op_rows = [r for r in rows if r["op"] == op]
        labels = list(OrderedDict.fromkeys(series_label(r) for r in op_rows))
        for i, label in enumerate(labels):
            series = sorted((r for r in op_rows if series_label(r) == label), key=lambda r: r["size_bytes"])
            color = f"C{i % 10}"
            for side, style in (("alloy", "-"), ("nccl", "--")):
                pts = [(r["size_bytes"], r[side]["busbw_gbs"]) for r in series
                       if ok(r.get(side)) and r["size_bytes"] > 0]
                if pts:
                    ax.plot(*zip(*pts), style, marker="o", markersize=3, color=color,
                            label=f"{side} {label}")
        if not any(ok(r["alloy"]) for r in op_rows):
            ax.text(0.03, 0.6, "alloy: not supported", transform=ax.transAxes, ha="left", va="center",
                    color="gray")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
        ax.set_title(op)
        ax.set_xlabel("size (B)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(ops):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot-perf: wrote {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("perf", nargs="+", help="alloy-perf JSON files of timing runs")
    parser.add_argument("--png", help="write the bandwidth plot here")
    parser.add_argument("--summary", action="store_true", help="print the Alloy/NCCL summary")
    parser.add_argument("--check", nargs="*", default=[], help="alloy-perf JSON files of check-mode runs")
    args = parser.parse_args()
    rows = load_rows(args.perf)
    if args.png:
        plot(rows, args.png)
    if args.summary:
        summary(rows, load_rows(args.check) if args.check else [])


if __name__ == "__main__":
    main()
