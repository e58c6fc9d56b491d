#!/usr/bin/env python3
"""Benchmarks of the Python package (bench/RESULTS.md "## Python").

  lowbit.encode of 64 Mi FP32 values to E4M3 (RNE, the default) against
    - the C++ SIMD kernel alone: the same registry row called directly on
      the same buffers in the same process (lowbit._lowbit.run_row, no
      argument handling, no allocation), and
    - ml_dtypes: x.astype(ml_dtypes.float8_e4m3fn);
  the fixed overhead of a 4096-element call: what a call costs beyond the
  per-element work, measured as a whole 1-element lowbit.encode call (a
  bound from above: it includes the kernel's own set-up), beside the
  4096-element call and the row called directly on those 4096 elements.
  The last line is a summary against the Python goals (overhead under
  5 us, within 1.2x of the C++ row, at least 10x faster than ml_dtypes).
  --cuda: torch CUDA tensors (64 Mi FP32 -> E4M3) timed with CUDA events,
  to compare with lowbit_cuda_bench's encode-f32 e4m3 row on the same machine.

Times are the median of --repeats runs (after a warm-up); the machine should
be otherwise idle (scripts/gpu/python_check.sh runs it on the GPU machine).
Needs only numpy and the installed package (ml_dtypes and torch optional).
"""

import argparse
import platform
import statistics
import time

import numpy as np

import lowbit
from lowbit import _lowbit


def median_time(fn, repeats, inner=1):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def cpu(args):
    n = 64 << 20
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n, dtype=np.float32) * 100).astype(np.float32)
    out = np.empty(n, np.uint8)
    backend = lowbit.build_info()["simd_backend"] or "scalar"

    t_api = median_time(lambda: lowbit.encode(x, "e4m3", out=out), args.repeats)
    t_api_alloc = median_time(lambda: lowbit.encode(x, "e4m3"), args.repeats)
    t_row = median_time(lambda: _lowbit.run_row("encode-f32", "e4m3", backend, x, out, "rne", False), args.repeats)
    rows = [("lowbit.encode(x, 'e4m3', out=out)", t_api), ("lowbit.encode(x, 'e4m3') (allocates)", t_api_alloc),
            (f"C++ row {backend} alone", t_row)]
    try:
        import ml_dtypes
        xs = x[: n // 8]  # ml_dtypes is slow: time 8 Mi, scale to 64 Mi
        t_ml = median_time(lambda: xs.astype(ml_dtypes.float8_e4m3fn), max(3, args.repeats // 3)) * 8
        rows.append(("ml_dtypes astype (8 Mi, x8)", t_ml))
    except ImportError:
        t_ml = None

    small = x[:4096].copy()
    small_out = np.empty(4096, np.uint8)
    one, one_out = x[:1].copy(), np.empty(1, np.uint8)
    inner = 5000
    t_small = median_time(lambda: lowbit.encode(small, "e4m3", out=small_out), args.repeats, inner)
    t_small_alloc = median_time(lambda: lowbit.encode(small, "e4m3"), args.repeats, inner)
    t_small_row = median_time(lambda: _lowbit.run_row("encode-f32", "e4m3", backend, small, small_out, "rne", False),
                              args.repeats, inner)
    t_one = median_time(lambda: lowbit.encode(one, "e4m3", out=one_out), args.repeats, inner)
    t_one_alloc = median_time(lambda: lowbit.encode(one, "e4m3"), args.repeats, inner)

    print(f"machine: {platform.node()} {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__}, build {lowbit.build_info()}")
    print(f"64 Mi FP32 -> E4M3 (median of {args.repeats}):")
    for name, t in rows:
        print(f"  {name:<40} {t * 1e3:9.2f} ms  {n / t / 1e9:6.2f} Gelem/s")
    print(f"  lowbit.encode / C++ row: {t_api / t_row:.3f}x (with allocation {t_api_alloc / t_row:.3f}x)")
    if t_ml is not None:
        print(f"  ml_dtypes / lowbit.encode: {t_ml / t_api:.1f}x")
    print("4096-element call:")
    print(f"  lowbit.encode(out=)  {t_small * 1e6:7.2f} us   allocating {t_small_alloc * 1e6:7.2f} us")
    print(f"  C++ row (via _lowbit.run_row) {t_small_row * 1e6:7.2f} us")
    print(f"  lowbit.encode beyond the row call: {(t_small - t_small_row) * 1e6:.2f} us "
          f"({(t_small_alloc - t_small_row) * 1e6:.2f} us allocating)")
    print(f"  fixed overhead (a whole 1-element call): {t_one * 1e6:.2f} us with out=, "
          f"{t_one_alloc * 1e6:.2f} us allocating")
    overhead = max(t_one, t_one_alloc)
    checks = [f"fixed overhead {overhead * 1e6:.2f} us (goal < 5: {'ok' if overhead < 5e-6 else 'MISSED'})",
              f"encode / C++ row {t_api / t_row:.3f}x (goal <= 1.2: {'ok' if t_api <= 1.2 * t_row else 'MISSED'})"]
    if t_ml is not None:
        checks.append(f"ml_dtypes / encode {t_ml / t_api:.1f}x (goal >= 10: {'ok' if t_ml >= 10 * t_api else 'MISSED'})")
    print("python_bench summary: " + "; ".join(checks))


def cuda(args):
    import torch
    if not torch.cuda.is_available() or not lowbit.build_info()["cuda"]:
        print("cuda: skipped (no GPU or no CUDA kernels in this build)")
        return
    n = 64 << 20
    x = torch.randn(n, device="cuda") * 100
    out = torch.empty(n, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        lowbit.encode(x, "e4m3", out=out)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        lowbit.encode(x, "e4m3", out=out)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    t = statistics.median(times)
    print(f"cuda {torch.cuda.get_device_name()}: lowbit.encode 64 Mi FP32 -> E4M3 (torch tensors): "
          f"{t * 1e3:.3f} ms, {n * 5 / t / 1e9:.0f} GB/s (compare lowbit_cuda_bench encode-f32 e4m3)")
    # The element-by-element check that the timing ran what it claims.
    assert torch.equal(out[:4096].cpu(), lowbit.encode(x[:4096].cpu(), "e4m3"))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--cuda", action="store_true", help="only the torch CUDA benchmark")
    args = p.parse_args()
    if args.cuda:
        cuda(args)
    else:
        cpu(args)


if __name__ == "__main__":
    main()
