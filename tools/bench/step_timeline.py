#!/usr/bin/env python3
"""Where a decode step's time goes, kernel by kernel, from a trace of tools/bench/kernel_trace.cpp.

Usage (on the GPU machine; the tracer's header has its build command):
    CUDA_INJECTION64_PATH=$PWD/build/tests/kernel_trace.so KERNEL_TRACE_OUT=trace.csv \\
        build/app/mtdesk bench --synthetic hy-mt-7b --tier int4 --batch 1 --new-tokens 48
    python3 tools/bench/step_timeline.py trace.csv [--skip 8] [--steps 16]

A decode step starts at its token embedding (an embedding kernel followed by an RMSNorm); the
steps with the most common kernel count are taken, after the first --skip of them. Kernels
overlap (programmatic dependent launch starts each one while the one before finishes), so a
kernel's duration says little about what it costs the step. What it costs is its "exposed" time:
how far its end lies past the latest end of the kernels before it in the step (the first
kernel: past the step's start). The exposed times of a step add up to its span, first start to
last end; the rest of the step period is the gap between steps (the host's work, the graph
launch). Prints, per kernel (name and grid): calls a step, median duration a call, and median
exposed time a call and a step, largest first.
"""

import argparse
import collections
import re
import statistics
import sys


def short_name(name: str) -> str:
    """The demangled name without namespaces, return type and parameter list."""
    name = re.sub(r"void |mtdesk::|cuda::|detail::|\(anonymous namespace\)::|__nv_", "", name)
    if name.endswith(")"):  # the parameter list: from its matching "(" on
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i]
    return name


def read_trace(path: str):
    kernels = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\n").split(",", 5)
            if len(fields) != 6:
                sys.exit(f"{path}:{n}: expected start,end,grid_x,grid_y,block_x,name")
            start, end, gx, gy, bx = (int(v) for v in fields[:5])
            kernels.append((start, end, f"{gx}x{gy}", bx, short_name(fields[5])))
    kernels.sort()
    return kernels


def decode_steps(kernels):
    starts = [i for i in range(len(kernels) - 1)
              if kernels[i][4].startswith("embedding_kernel")
              and kernels[i + 1][4].startswith("rms_norm")]
    return [kernels[a:b] for a, b in zip(starts, starts[1:])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--skip", type=int, default=8, help="decode steps to leave out first")
    ap.add_argument("--steps", type=int, default=16, help="decode steps to summarise")
    ap.add_argument("--top", type=int, default=14, help="kernels to print")
    args = ap.parse_args()

    steps = decode_steps(read_trace(args.csv))
    if not steps:
        sys.exit(f"{args.csv}: no decode steps (an embedding kernel followed by an RMSNorm)")
    counts = collections.Counter(len(s) for s in steps)
    n = counts.most_common(1)[0][0]
    same = [s for s in steps if len(s) == n]
    if len(same) <= args.skip + 1:
        sys.exit(f"{args.csv}: {len(same)} decode steps of {n} kernels, need over {args.skip + 1}")
    use = same[args.skip:args.skip + args.steps + 1]
    period = statistics.median(b[0][0] - a[0][0] for a, b in zip(use, use[1:])) / 1e3
    use = use[:-1]
    span = statistics.median(s[-1][1] - s[0][0] for s in use) / 1e3

    # latest[s][i]: the latest end among step s's kernels before kernel i (its start for i = 0).
    latest = []
    for s in use:
        ends, running = [], s[0][0]
        for k in s:
            ends.append(running)
            running = max(running, k[1])
        latest.append(ends)

    groups = collections.OrderedDict()
    for i in range(n):
        exposed, duration = [], []
        for s, ends in zip(use, latest):
            exposed.append(max(0, s[i][1] - ends[i]) / 1e3)
            duration.append((s[i][1] - s[i][0]) / 1e3)
        key = (use[0][i][4], use[0][i][2])
        g = groups.setdefault(key, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += statistics.median(duration)
        g[2] += statistics.median(exposed)

    print(f"{args.csv}: {len(steps)} steps, {len(use)} decode steps of {n} kernels used; "
          f"step period {period:.1f} us, span (first start to last end) {span:.1f} us, "
          f"between steps {period - span:.1f} us")
    print(f"{'kernel':62s} {'grid':>7s} {'calls':>5s} {'us a call':>9s} "
          f"{'exposed a call':>14s} {'exposed a step':>14s}")
    rows = sorted(groups.items(), key=lambda kv: -kv[1][2])
    for (name, grid), (calls, duration, exposed) in rows[:args.top]:
        print(f"{name[:62]:62s} {grid:>7s} {calls:5d} {duration / calls:9.2f} "
              f"{exposed / calls:14.2f} {exposed:14.1f}")
    rest = sum(g[2] for _, g in rows[args.top:])
    if rest:
        print(f"{'(the others)':62s} {'':>7s} {'':>5s} {'':>9s} {'':>14s} {rest:14.1f}")
    print(f"{'sum of exposed times':62s} {'':>7s} {'':>5s} {'':>9s} {'':>14s} "
          f"{sum(g[2] for _, g in rows):14.1f}")


if __name__ == "__main__":
    main()
