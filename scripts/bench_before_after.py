#!/usr/bin/env python3
"""Before/after in one run (docs/design.md "Tests"; bench/RESULTS.md method):
runs two builds of a benchmark alternately, once each per repetition, so that
machine load and clocks hit both alike, and prints a Markdown table of the
median per case and the ratio after / before.

  scripts/bench_before_after.py BEFORE_BINARY AFTER_BINARY FILTER [REPS]
      CPU: two builds of lowbit_bench_cpu (Google Benchmark) on one filter;
      times in ns, ratio < 1 is faster.
  scripts/bench_before_after.py --cuda BEFORE_BINARY AFTER_BINARY [REPS] [ELEMENTS]
      GPU: two builds of lowbit_cuda_bench; its "RESULT name ms ... x copy"
      lines of the default layout (rows prefixed "before: " or "hints: " time
      replaced layouts inside one build and are left out); times in ms and
      each build's x copy against its own cudaMemcpy in the same process.
"""
import json
import re
import statistics
import subprocess
import sys

CUDA_RESULT = re.compile(r"^RESULT (.+?)\s+([0-9.]+) ms .*?([0-9.]+)x copy", re.M)


def run_cpu(binary, flt):
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"].split("/min_time")[0]: (b["real_time"] if "real_time" in b["name"] else b["cpu_time"], None)
            for b in json.loads(out)["benchmarks"] if b.get("run_type", "iteration") == "iteration"}


def run_cuda(binary, elements):
    args = [binary] + ([elements] if elements else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return {m.group(1).strip(): (float(m.group(2)), float(m.group(3)))
            for m in CUDA_RESULT.finditer(out)
            if not m.group(1).startswith(("before: ", "hints: "))}


def main():
    argv = sys.argv[1:]
    cuda = argv[:1] == ["--cuda"]
    if cuda:
        before_bin, after_bin = argv[1:3]
        reps = int(argv[3]) if len(argv) > 3 else 2
        elements = argv[4] if len(argv) > 4 else None
        run = lambda binary: run_cuda(binary, elements)
    else:
        before_bin, after_bin, flt = argv[0:3]
        reps = int(argv[3]) if len(argv) > 3 else 3
        run = lambda binary: run_cpu(binary, flt)
    before, after = {}, {}
    for _ in range(reps):
        for results, binary in ((before, before_bin), (after, after_bin)):
            for name, value in run(binary).items():
                results.setdefault(name, []).append(value)
    unit = "ms" if cuda else "ns"
    median = lambda values, i: statistics.median(v[i] for v in values)
    if cuda:
        print(f"| case | before ({unit}) | x copy | after ({unit}) | x copy | after / before |")
        print("|---|---:|---:|---:|---:|---:|")
    else:
        print(f"| benchmark | before ({unit}) | after ({unit}) | after / before |")
        print("|---|---:|---:|---:|")
    for name in sorted(set(before) | set(after)):
        b = median(before[name], 0) if name in before else None
        a = median(after[name], 0) if name in after else None
        ratio = f"{a / b:.2f}" if a and b else "-"
        fmt = (lambda v: f"{v:.3f}" if v else "(absent)") if cuda else (lambda v: f"{v:.0f}" if v else "(absent)")
        if cuda:
            bc = f"{median(before[name], 1):.3f}" if name in before else "-"
            ac = f"{median(after[name], 1):.3f}" if name in after else "-"
            print(f"| {name} | {fmt(b)} | {bc} | {fmt(a)} | {ac} | {ratio} |")
        else:
            print(f"| {name} | {fmt(b)} | {fmt(a)} | {ratio} |")


if __name__ == "__main__":
    main()
