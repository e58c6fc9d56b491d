#!/usr/bin/env python3
"""Before/after in one run (docs/design.md "Tests"; bench/RESULTS.md method):
runs two builds of the CPU benchmark (lowbit_bench_cpu) on the same filter,
alternating them for each repetition so that machine load hits both alike,
and prints a Markdown table of the median time per benchmark and the ratio
after / before (< 1: faster).

  scripts/bench_before_after.py BEFORE_BINARY AFTER_BINARY FILTER [REPS]
"""
import json
import statistics
import subprocess
import sys


def run(binary, flt):
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: b["real_time"] if "real_time" in b["name"] else b["cpu_time"]
            for b in json.loads(out)["benchmarks"] if b.get("run_type", "iteration") == "iteration"}


def main():
    before_bin, after_bin, flt = sys.argv[1:4]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    before, after = {}, {}
    for _ in range(reps):
        for name, t in run(before_bin, flt).items():
            before.setdefault(name, []).append(t)
        for name, t in run(after_bin, flt).items():
            after.setdefault(name, []).append(t)
    print("| benchmark | before (ns) | after (ns) | after / before |")
    print("|---|---:|---:|---:|")
    for name in sorted(set(before) | set(after)):
        b = statistics.median(before[name]) if name in before else None
        a = statistics.median(after[name]) if name in after else None
        ratio = f"{a / b:.2f}" if a and b else "-"
        fmt = lambda v: f"{v:.0f}" if v else "(absent)"
        print(f"| {name.split('/min_time')[0]} | {fmt(b)} | {fmt(a)} | {ratio} |")


if __name__ == "__main__":
    main()
