#!/usr/bin/env python3
"""The tables of scripts/gpu-check.sh's versus mode: NVIDIA's nccl-tests on NCCL against the same binaries on
Alloy's libnccl.so.2, Alloy's alltoallv against NCCL's (alloy-perf) and one allreduce per CUDA graph replay.

    versus-table.py --logs DIR --np N --ops "all_reduce broadcast ..." --lib nccl=TEXT --lib alloy=TEXT
                    [--lib alloy-v1=TEXT ...] [--png OUT.png] [--between-hosts]

The first --lib is the reference (NVIDIA's NCCL), the others Alloy's configurations: a tag as the files and
the columns name it, and what it stands for. Files read from DIR, each optional (what is missing is said):
  versus-OP-TAG-npN.log        nccl-tests' output of operation OP (data rows: size count type redop root,
                               then out of place and in place: time algbw busbw #wrong; lines starting
                               with '#' are its header and footer)
  versus-graph-TAG-npN.log     tests/nccl_frameworks/graph_allreduce_time.py: `graph_allreduce BYTES US`
  versus-alltoallv-TAG-npN.json  alloy-perf -o alltoallv --compare nccl --json (Alloy's tags only)
  versus-ceiling.log           tools/link-ceiling's output: its "ceiling: X GB/s" line, the per-GPU link
                               ceiling that the 128 MB - 1 GB class must reach 0.9 of
Prints per operation a table and the worst ratio of each size class against its target, the #wrong sums
of every run, and draws bus bandwidth against size with --png. --between-hosts judges the runs by issue #36's
targets for ranks on several hosts (NCCL's socket path against Alloy's network channel) instead of #32's. Exit status 3 where any run counted wrong
elements, else 0: a target missed is reported, not an error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
# Below this size a collective costs its latency and the ratio compares times (Alloy / NCCL, lower is
# better); from it on it compares bus bandwidth (Alloy / NCCL, higher is better; both runs move the same
# bytes, so this is NCCL's time over Alloy's, more digits than the printed GB/s).
BUSBW_FROM = 256 * KB


@dataclass(frozen=True)
class SizeClass:
    """A band of sizes judged against a target by its worst ratio."""
    name: str
    lo: int
    hi: int
    busbw: bool  # True: busbw ratio, at least target; False: time ratio, at most target
    target: float


# nccl-tests: sizes between the classes (64 KB - 256 KB, 16 MB - 128 MB) are shown, not judged.
NCCL_TESTS_CLASSES = (SizeClass("8 B - 64 KB", 8, 64 * KB, False, 0.7),
                      SizeClass("256 KB - 16 MB", 256 * KB, 16 * MB, True, 1.2),
                      SizeClass("128 MB - 1 GB", 128 * MB, 1 * GB, True, 1.05))
# Between hosts (issue #36; NCCL over its socket transport): small sizes at most 0.8x NCCL's time, 16 MB and up
# at least 1.5x its bus bandwidth; no link ceiling (the wire is the network, not NVLink).
HOSTS_CLASSES = (SizeClass("8 B - 64 KB", 8, 64 * KB, False, 0.8),
                 SizeClass("16 MB - 1 GB", 16 * MB, 1 * GB, True, 1.5))
# Alloy's busbw over the link ceiling that tools/link-ceiling measured (not over NCCL's).
CEILING_CLASS = SizeClass("128 MB - 1 GB", 128 * MB, 1 * GB, True, 0.9)
ALLTOALLV_CLASSES = (SizeClass("256 KB - 1 GB", 256 * KB, 1 * GB, True, 1.5),)
GRAPH_CLASSES = (SizeClass("4 KB - 1 MB", 4 * KB, 1 * MB, False, 0.6),)


@dataclass
class Point:
    """One size of one run: out-of-place time (us) and bus bandwidth (GB/s), either possibly missing."""
    size: int
    time: float | None
    busbw: float | None = None


@dataclass
class Run:
    """One run's rows, keyed by (size, occurrence): nccl-tests can print a size twice (0 B rows)."""
    path: str
    points: dict[tuple[int, int], Point] = field(default_factory=dict)
    state: str = "complete"  # complete, missing, or why the rows stop
    wrong: float = 0.0  # #wrong summed over the rows, out of place and in place
    wrong_rows: int = 0  # rows with a non-zero #wrong

    def add(self, point: Point) -> None:
        n = sum(1 for size, _ in self.points if size == point.size)
        self.points[(point.size, n)] = point


def number(cols: list[str], i: int) -> float | None:
    """Column i's value, or None where the row stops before it, for N/A, or for a column that another
    process's output broke into."""
    try:
        return float(cols[i]) if i < len(cols) else None
    except ValueError:
        return None


def read_log(path: str) -> tuple[Run, list[str]]:
    """An empty run of the log at path, and the log's lines; a log that is missing has none, and says so."""
    run = Run(path)
    if not os.path.exists(path):
        run.state = "missing (not run)"
        return run, []
    with open(path, errors="replace") as f:
        return run, f.readlines()


def parse_nccl_tests(path: str) -> Run:
    """The rows of the run's last cycle (nccl-tests -N: sizes start again from the smallest; the earlier
    cycles warm the process up), with #wrong summed over every cycle."""
    run, lines = read_log(path)
    if run.state != "complete":
        return run
    concluded = False
    last: Point | None = None
    cut = False  # the last row stops before its in-place columns
    for line in lines:
        text = line.strip()
        if text.startswith("#"):
            concluded = concluded or text.startswith("# Collective test concluded")
            continue
        cols = text.split()
        if len(cols) < 5 or not (cols[0].isdigit() and cols[1].isdigit()):
            continue  # NCCL's and Alloy's own messages, mpirun's
        # Out of place: time, algbw, busbw, #wrong in columns 5-8; in place in 9-12.
        point = Point(int(cols[0]), number(cols, 5), number(cols, 7))
        if last is not None and point.size < last.size:
            run.points.clear()  # a new cycle
        run.add(point)
        wrong = sum(w for w in (number(cols, 8), number(cols, 12)) if w is not None)
        run.wrong += wrong
        run.wrong_rows += wrong > 0
        last, cut = point, len(cols) < 13
    if last is None:
        run.state = "NO DATA ROWS (the run stopped before its first size)" if not concluded else "NO DATA ROWS"
    elif not concluded:
        run.state = f"INCOMPLETE: the run stopped at {human(last.size)}{' in the middle of its row' if cut else ''}"
    return run


def parse_graph(path: str) -> Run:
    run, lines = read_log(path)
    if run.state != "complete":
        return run
    for line in lines:
        m = re.match(r"graph_allreduce (\d+) ([0-9.]+)\s*$", line)
        if m:
            run.add(Point(int(m.group(1)), float(m.group(2))))
        elif re.search(r"rank \d+: \d+ passed, [1-9]\d* failed", line):
            run.wrong += 1  # a rank found a wrong result (graph_allreduce_time.py's closing line)
    if not run.points:
        run.state = "NO ROWS"
    return run


def parse_alltoallv(path: str) -> tuple[Run, Run]:
    """Alloy's and NCCL's alltoallv from one alloy-perf JSON file."""
    alloy, nccl = Run(path), Run(path)
    if not os.path.exists(path):
        alloy.state = nccl.state = "missing (not run)"
        return alloy, nccl
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        alloy.state = nccl.state = f"unreadable ({e})"
        return alloy, nccl
    for row in doc.get("rows", []):
        if row.get("op") != "alltoallv":
            continue
        for run, side in ((alloy, "alloy"), (nccl, "nccl")):
            m = row.get(side) or {}
            if m.get("status") == "ok" and m.get("time_us"):
                run.add(Point(row["size_bytes"], m["time_us"], m.get("busbw_gbs")))
                run.wrong += m.get("wrong") or 0
            elif side == "alloy" and m.get("message"):
                run.state = f"not supported: {m['message'].strip()}"
    if not doc.get("complete"):
        alloy.state = nccl.state = "INCOMPLETE: alloy-perf stopped early"
    if not (doc.get("nccl") or {}).get("loaded"):
        nccl.state = "no NCCL: " + str((doc.get("nccl") or {}).get("reason", "not loaded"))
    return alloy, nccl


def human(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GB", GB), ("MB", MB), ("KB", KB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def fmt(value: float | None, width: int) -> str:
    return f"{value:{width}.2f}" if value is not None else "-".rjust(width)


def by_size(size: int) -> bool:
    """nccl-tests and alltoallv: busbw ratio from BUSBW_FROM on, time ratio below."""
    return size >= BUSBW_FROM


def ratio(point: Point | None, ref: Point | None, busbw: bool) -> float | None:
    if point is None or ref is None or not point.time or not ref.time:
        return None
    return ref.time / point.time if busbw else point.time / ref.time


@dataclass
class Column:
    """A run shown in a table; its ratio is taken against ref (None: it is the reference)."""
    tag: str
    run: Run
    ref: Run | None = None


@dataclass
class Verdict:
    """One class of one table for one Alloy configuration."""
    where: str
    text: str
    outcome: str  # met, MISSED, NOT MEASURED


def table(title: str, columns: list[Column], classes: tuple[SizeClass, ...], busbw_at: Callable[[int], bool],
          verdicts: list[Verdict], show_busbw: bool = True) -> list[str]:
    """Rows per size, then what stopped a run early and each class's worst ratio per Alloy column (also
    appended to verdicts)."""
    out = [title]
    keys = sorted({k for c in columns for k in c.run.points})
    head = f"  {'size':>8}"
    for c in columns:
        head += f"  {c.tag + ' us':>12}" + (f"  {'GB/s':>7}" if show_busbw else "")
        head += f"  {'ratio':>6}" if c.ref else ""
    out.append(head + "  class")
    for key in keys:
        line = f"  {human(key[0]):>8}"
        for c in columns:
            p = c.run.points.get(key)
            line += f"  {fmt(p.time if p else None, 12)}"
            line += f"  {fmt(p.busbw if p else None, 7)}" if show_busbw else ""
            if c.ref:
                line += f"  {fmt(ratio(p, c.ref.points.get(key), busbw_at(key[0])), 6)}"
        judged = next((k.name for k in classes if k.lo <= key[0] <= k.hi), "")
        out.append(line + ("  " + judged if judged else ""))
    if not keys:
        out.append("  (no rows)")
    out += [f"  {c.tag}: {c.run.state}" for c in columns if c.run.state != "complete"]
    for c in columns:
        if c.ref:
            for v in judge(c, classes):
                v.where = f"{title.split(' (')[0]} {c.tag}"
                verdicts.append(v)
                out.append(f"  {c.tag + ':':<10} {v.text}")
    return out


def judge(column: Column, classes: tuple[SizeClass, ...]) -> list[Verdict]:
    assert column.ref is not None
    verdicts = []
    for k in classes:
        keys = [key for key in column.ref.points if k.lo <= key[0] <= k.hi]
        pairs = [(r, key[0]) for key in keys
                 if (r := ratio(column.run.points.get(key), column.ref.points[key], k.busbw)) is not None]
        what = "busbw alloy/nccl" if k.busbw else "time alloy/nccl"
        sign = ">=" if k.busbw else "<="
        if not pairs:
            verdicts.append(Verdict("", f"{k.name:<15} {what:<16} target {sign} {k.target}: NOT MEASURED",
                                    "NOT MEASURED"))
            continue
        worst = min(pairs) if k.busbw else max(pairs)
        outcome = "met" if (worst[0] >= k.target if k.busbw else worst[0] <= k.target) else "MISSED"
        partial = f" ({len(pairs)} of {len(keys)} sizes)" if len(pairs) < len(keys) else ""
        verdicts.append(Verdict("", f"{k.name:<15} {what:<16} worst {worst[0]:5.3f} at {human(worst[1])}{partial}; "
                                    f"target {sign} {k.target}: {outcome}", outcome))
    return verdicts


def parse_ceiling(path: str) -> tuple[float | None, str]:
    """tools/link-ceiling's ceiling (GB/s per GPU) and its line, or None and why there is none."""
    _, lines = read_log(path)
    for line in lines:
        m = re.match(r"ceiling: ([0-9.]+) GB/s", line.strip())
        if m:
            return float(m.group(1)), line.strip()
    return None, "not measured (no ceiling line in versus-ceiling.log)" if lines else "not measured (not run)"


def judge_ceiling(run: Run, ceiling: float) -> Verdict:
    """The worst busbw of the ceiling class over the ceiling."""
    k = CEILING_CLASS
    pairs = [(p.busbw / ceiling, p.size) for p in run.points.values() if k.lo <= p.size <= k.hi and p.busbw]
    if not pairs:
        return Verdict("", f"{k.name:<15} {'busbw/ceiling':<16} target >= {k.target}: NOT MEASURED", "NOT MEASURED")
    worst = min(pairs)
    outcome = "met" if worst[0] >= k.target else "MISSED"
    return Verdict("", f"{k.name:<15} {'busbw/ceiling':<16} worst {worst[0]:5.3f} at {human(worst[1])}; "
                       f"target >= {k.target}: {outcome}", outcome)


def plot(panels: list[tuple[str, list[tuple[str, Run]], bool]], out: str) -> None:
    """One panel per operation: bus bandwidth against size, or time for the graph panel (busbw False)."""
    import matplotlib
    matplotlib.use("Agg")  # no display on the machines this runs on
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    cols = min(4, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False)
    for ax, (name, series, busbw) in zip(axes.flat, panels):
        drawn = False
        for i, (label, run) in enumerate(series):
            # NCCL, the reference, dashed black; Alloy's configurations solid, in colour.
            pts = sorted((p.size, p.busbw if busbw else p.time) for p in run.points.values()
                         if p.size > 0 and (p.busbw if busbw else p.time) is not None)
            if pts:
                ax.plot(*zip(*pts), "--" if i == 0 else "-", marker="o", markersize=3,
                        color="black" if i == 0 else f"C{i - 1}", label=label)
                drawn = True
        ax.set(title=name, xlabel="size", ylabel="bus bandwidth (GB/s)" if busbw else "us per replay (log scale)",
               yscale="linear" if busbw else "log")
        ax.set_xscale("log", base=2)  # nccl-tests' sizes step by powers of 2
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human(int(v)).replace(" ", "")))
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(True, alpha=0.3)
        if drawn:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.remove()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logs", required=True, help="folder of the runs' logs")
    parser.add_argument("--np", required=True, type=int, help="ranks of the runs")
    parser.add_argument("--ops", required=True, help="nccl-tests operations, space separated")
    parser.add_argument("--lib", action="append", required=True, metavar="TAG=TEXT",
                        help="a library configuration; the first is the reference")
    parser.add_argument("--png", help="write the plot here")
    parser.add_argument("--between-hosts", action="store_true",
                        help="ranks on several (virtual) hosts: issue #36's targets, no link ceiling")
    args = parser.parse_args()
    classes = HOSTS_CLASSES if args.between_hosts else NCCL_TESTS_CLASSES
    libs = [(s.split("=", 1) + [s])[:2] for s in args.lib]
    tags = [t for t, _ in libs]
    ref_tag, alloy_tags = tags[0], tags[1:]

    def path(what: str, tag: str, ext: str = "log") -> str:
        return os.path.join(args.logs, f"versus-{what}-{tag}-np{args.np}.{ext}")

    print("legend: " + "; ".join(f"{t} = {text}" for t, text in libs))
    print(f"ratio: time alloy/nccl below {human(BUSBW_FROM)} (lower is better), busbw alloy/nccl from "
          f"{human(BUSBW_FROM)} on (higher is better); out-of-place columns; worst over the sizes of a class")
    ceiling, ceiling_line = None, "not judged (between hosts)"
    if not args.between_hosts:
        ceiling, ceiling_line = parse_ceiling(os.path.join(args.logs, "versus-ceiling.log"))
    print(f"link ceiling (tools/link-ceiling): {ceiling_line}")
    verdicts: list[Verdict] = []
    run_lines: list[str] = []
    checked: list[Run] = []  # runs whose wrong counts make a failure
    panels: list[tuple[str, list[tuple[str, Run]], bool]] = []
    for op in args.ops.split():
        runs = {t: parse_nccl_tests(path(op, t)) for t in tags}
        columns = [Column(ref_tag, runs[ref_tag])] + [Column(t, runs[t], runs[ref_tag]) for t in alloy_tags]
        print()
        print("\n".join(table(f"{op} (nccl-tests, {args.np} ranks)", columns, classes, by_size, verdicts)))
        if ceiling is not None:
            for t in alloy_tags:
                v = judge_ceiling(runs[t], ceiling)
                v.where = f"{op} {t}"
                verdicts.append(v)
                print(f"  {t + ':':<10} {v.text}")
        for t, r in runs.items():
            failed = f" in {r.wrong_rows} row(s): FAIL" if r.wrong else ""
            run_lines.append(f"  {op:<16} {t:<10} #wrong {r.wrong:g}{failed} ({len(r.points)} rows; {r.state})")
        checked += runs.values()
        panels.append((op, list(runs.items()), True))

    # alltoallv: each Alloy configuration's own alloy-perf run, Alloy and NCCL on the same buffers.
    pairs = {t: parse_alltoallv(path("alltoallv", t, "json")) for t in alloy_tags}
    if pairs:
        first = pairs[alloy_tags[0]][1]
        columns = [Column(ref_tag, first)] + [Column(t, a, n) for t, (a, n) in pairs.items()]
        print()
        print("\n".join(table(f"alltoallv (alloy-perf --compare nccl, {args.np} ranks; each ratio against the "
                              f"NCCL of its own run)", columns, ALLTOALLV_CLASSES, by_size, verdicts)))
        for t, (a, n) in pairs.items():
            run_lines.append(f"  {'alltoallv':<16} {t:<10} {len(a.points)} rows "
                             f"({a.state if a.state != 'complete' else n.state})")
        panels.append(("alltoallv (alloy-perf)", [(ref_tag, first)] + [(t, a) for t, (a, _) in pairs.items()],
                       True))

    graphs = {t: parse_graph(path("graph", t)) for t in tags}
    columns = [Column(ref_tag, graphs[ref_tag])] + [Column(t, graphs[t], graphs[ref_tag]) for t in alloy_tags]
    print()
    print("\n".join(table(f"graph all_reduce (one per CUDA graph replay, {args.np} ranks; ratio: time alloy/nccl)",
                          columns, GRAPH_CLASSES, lambda _: False, verdicts, show_busbw=False)))
    for t, g in graphs.items():
        run_lines.append(f"  {'graph all_reduce':<16} {t:<10} {len(g.points)} sizes"
                         f"{'; WRONG RESULTS: FAIL' if g.wrong else ''} ({g.state})")
    checked += graphs.values()
    panels.append(("all_reduce in a CUDA graph", list(graphs.items()), False))

    print()
    print("runs (#wrong: out of place + in place over every row, must be 0):")
    print("\n".join(run_lines))
    counts = {o: sum(v.outcome == o for v in verdicts) for o in ("met", "MISSED", "NOT MEASURED")}
    print(f"targets: {counts['met']} met, {counts['MISSED']} MISSED, {counts['NOT MEASURED']} not measured "
          f"(of {len(verdicts)}; worst ratio of each class)")
    for v in verdicts:
        if v.outcome != "met":
            print(f"  {v.where}: {v.text}")
    if args.png:
        try:
            plot(panels, args.png)
        except ImportError as e:
            print(f"plot: not drawn ({e})")
    return 3 if any(r.wrong for r in checked) else 0


if __name__ == "__main__":
    sys.exit(main())
