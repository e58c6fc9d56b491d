#!/usr/bin/env python3
"""The tensor-core GEMV from Python (bench/RESULTS.md "## Python"): per call,
with CUDA events around 50 back-to-back calls on the current stream (median
of 7 rounds), NVFP4 weights N x K and bfloat16 x of M rows:

  lowbit.gemv(packed, x)      packed = lowbit.tensor_core_weight(q), the
                              Python call with its output allocation;
  the same kernel alone       the binding called with a preallocated output
                              (no Python argument handling);
  lowbit.gemv(q, x) (cuda-tc) the registry row, which packs on every call;
  lowbit.gemv(q, x)           the default CUDA row for a quantized tensor;
  torch F.linear              BF16 weights, the dense baseline.

Each timing rotates among enough copies of the weights that one round does
not fit in L2 (as bench/cuda/tc_gemv_bench.cu does). The Python call's time
over the kernel's is what the interpreter adds: a
layer whose kernel is shorter than that overhead is launch-bound from Python
(capture it in a CUDA graph). Needs torch with a GPU and a CUDA build.
"""

import argparse
import statistics

import lowbit


def per_call_us(torch, fn, rounds=7, calls=50):
    """fn(i) for call i; the median over rounds of the time per call."""
    fn(0)
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for i in range(calls):
            fn(i)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / calls)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="8192x8192x1,8192x8192x16,28672x8192x1,7168x2048x1",
                   help="N x K x M, comma-separated")
    args = p.parse_args()
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available() or not lowbit.build_info()["cuda"]:
        print("python_tc_gemv_bench: skipped (no GPU or no CUDA kernels in this build)")
        return
    print(f"python_tc_gemv_bench {torch.cuda.get_device_name()}: us per call (50 back to back, median of 7)")
    print(f"{'N':>6} {'K':>6} {'M':>3} {'gemv(packed)':>13} {'kernel alone':>13} {'cuda-tc row':>12} "
          f"{'default row':>12} {'F.linear bf16':>14}")
    for shape in args.shapes.split(","):
        n, k, m = (int(v) for v in shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(0)
        copies = max(2, -(-256 * 2**20 // (n * k * 2)))  # BF16 weights past L2; the 4-bit ones further
        w = [torch.randn((n, k), device="cuda", generator=g) for _ in range(copies)]
        q = [lowbit.quantize(wi, "nvfp4:te") for wi in w]
        packed = [lowbit.tensor_core_weight(qi) for qi in q]
        wb = [wi.to(torch.bfloat16) for wi in w]
        del w
        x = torch.randn((m, k), device="cuda", generator=g).to(torch.bfloat16)
        out = torch.empty((m, n), dtype=torch.int16, device="cuda")
        xi = x.view(torch.int16)
        stream = torch.cuda.current_stream().cuda_stream
        # What the timings run is checked once: the packed call equals the cuda-tc row.
        assert torch.equal(lowbit.gemv(packed[0], x).view(torch.int16),
                           lowbit.gemv(q[0], x, backend="cuda-tc").view(torch.int16))
        row = [per_call_us(torch, lambda i: lowbit.gemv(packed[i % copies], x)),
               per_call_us(torch, lambda i: packed[i % copies]._packed.gemv(xi, m, out, "bf16", stream)),
               per_call_us(torch, lambda i: lowbit.gemv(q[i % copies], x, backend="cuda-tc")),
               per_call_us(torch, lambda i: lowbit.gemv(q[i % copies], x)),
               per_call_us(torch, lambda i: F.linear(x, wb[i % copies]))]
        print(f"{n:>6} {k:>6} {m:>3} {row[0]:>13.1f} {row[1]:>13.1f} {row[2]:>12.1f} {row[3]:>12.1f} {row[4]:>14.1f}")


if __name__ == "__main__":
    main()
