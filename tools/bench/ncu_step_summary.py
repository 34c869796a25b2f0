#!/usr/bin/env python3
"""Per-kernel time of the decode steps in an Nsight Compute trace of `mtdesk bench`.

Usage (on the GPU machine):
    ncu --csv --metrics gpu__time_duration.sum --launch-count 1500 \\
        build/app/mtdesk bench --synthetic hy-mt1.5-1.8b --tier int4 --batch 1 \\
        --new-tokens 4 --no-cuda-graphs > step.csv
    python3 tools/bench/ncu_step_summary.py step.csv

A step starts at each embedding kernel; a decode step is one whose embedding grid has the batch's
rows (1 by default, --rows N). For every decode step found, prints the kernels grouped by name and
grid: calls x mean duration = total, largest first. ncu runs kernels one at a time at base
clocks, so the figures are for comparing kernels, not for adding up to the bench's step time.
"""

import argparse
import collections
import csv
import io
import re
import sys


def short_name(name: str) -> str:
    name = re.sub(r"\(.*", "", name)
    return re.sub(r"void |mtdesk::|<unnamed>::|\(anonymous namespace\)::|cuda::|detail::", "",
                  name)


def read_trace(path: str):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith('"ID"')]
    if not starts:
        sys.exit(f"{path}: no ncu CSV header (\"ID\", ...) found")
    rows = list(csv.reader(io.StringIO("\n".join(lines[starts[0]:]))))
    header = rows[0]
    try:
        name_i = header.index("Kernel Name")
        value_i = header.index("Metric Value")
        unit_i = header.index("Metric Unit")
        grid_i = header.index("Grid Size")
    except ValueError as e:
        sys.exit(f"{path}: {e} in the CSV header")
    kernels = []
    for r in rows[1:]:
        if len(r) != len(header):
            continue
        scale = {"ns": 1e-3, "nsecond": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
                 "second": 1e6, "s": 1e6}.get(r[unit_i], None)
        if scale is None:
            sys.exit(f"{path}: unexpected unit {r[unit_i]!r}")
        kernels.append((short_name(r[name_i]), float(r[value_i].replace(",", "")) * scale,
                        r[grid_i]))
    return kernels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--rows", type=int, default=1, help="tokens in a decode step (default 1)")
    ap.add_argument("--top", type=int, default=12, help="kernel groups to print per step")
    args = ap.parse_args()

    kernels = read_trace(args.csv)
    starts = [i for i, k in enumerate(kernels) if k[0].startswith("embedding_kernel")]
    if not starts:
        sys.exit(f"{args.csv}: no embedding kernel: not a trace of decode steps")
    found = 0
    for a, b in zip(starts, starts[1:] + [len(kernels)]):
        if kernels[a][2] != f"({args.rows}, 1, 1)":
            continue
        step = kernels[a:b]
        found += 1
        total = sum(k[1] for k in step)
        print(f"decode step at kernel {a}: {len(step)} kernels, {total:.1f} us")
        groups = collections.defaultdict(list)
        for name, us, grid in step:
            groups[(name, grid)].append(us)
        for (name, grid), times in sorted(groups.items(), key=lambda kv: -sum(kv[1]))[:args.top]:
            print(f"  {len(times):4d} x {sum(times) / len(times):7.2f} us = {sum(times):8.1f} us"
                  f"  {name[:70]} {grid}")
    if not found:
        sys.exit(f"{args.csv}: no step with an embedding grid of ({args.rows}, 1, 1)")


if __name__ == "__main__":
    main()
