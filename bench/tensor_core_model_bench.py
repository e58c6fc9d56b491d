#!/usr/bin/env python3
"""Throughput of the tensor-core model against MMA-Sim on one CPU core
(bench/RESULTS.md; the goal: lowbit at least 20x MMA-Sim's modelled
multiply-adds per second on one core).

The same cases on both sides: y = x @ w.T with x (M x K) and w (N x K) random
finite E4M3 codes, through wgmma m64nNk32 FP8 -> FP32 chained along K from
C = +0 (no promotion, no split, FP32 output):
  - MMA-Sim 2.1.1: WGMMA("Hopper", "m64n8k32.f32.e4m3.e4m3").dpa on the
    [M, N, K] row/column pairs (what its __call__ does for a whole tile;
    dpa chains K in steps of 32 products, as the schedule does), with
    torch.set_num_threads(1);
  - lowbit.matmul_model(x, w, instruction, threads=1), end to end (the
    dtype mapping included), and the extension's call alone on prepared
    uint32 codes.
The outputs are compared bit for bit (a mismatch is printed: the hardware
decides). Times are medians of --repeats runs after a warm-up; run it on an
otherwise idle machine. Needs torch, mmasim (requirements-peers.txt),
ml_dtypes and the lowbit package.
"""

import argparse
import os
import platform
import statistics
import time

import ml_dtypes
import numpy as np
import torch
from mmasim.nv_ptx import WGMMA

import lowbit
from lowbit import _lowbit

INSTRUCTION = "wgmma.m64nNk32.f32.e4m3.e4m3"
PEER = ("Hopper", "m64n8k32.f32.e4m3.e4m3")


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def random_e4m3(rng, shape):
    codes = rng.integers(0, 256, shape, dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0x38  # no NaN (0x7F, 0xFF): 1.0 instead
    return codes.view(ml_dtypes.float8_e4m3fn)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=128)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core for both
    rng = np.random.default_rng(args.seed)
    x = random_e4m3(rng, (args.m, args.k))
    w = random_e4m3(rng, (args.n, args.k))
    macs = args.m * args.n * args.k

    peer = WGMMA(*PEER)
    xt = torch.from_numpy(x.view(np.uint8)).view(torch.float8_e4m3fn)
    wt = torch.from_numpy(w.view(np.uint8)).view(torch.float8_e4m3fn)
    a_rows = xt[:, None, :].expand(-1, args.n, -1)
    b_rows = wt[None, :, :].expand(args.m, -1, -1)
    c = torch.zeros(args.m, args.n, dtype=torch.float32)
    theirs = {}

    def run_mmasim():
        theirs["y"] = peer.dpa(a_rows, b_rows, c)

    ours = {}

    def run_lowbit():
        ours["y"] = lowbit.matmul_model(x, w, INSTRUCTION, threads=1)

    x_codes = x.view(np.uint8).astype(np.uint32)
    w_codes = w.view(np.uint8).astype(np.uint32)
    y_codes = np.empty((args.m, args.n), np.uint32)

    def run_extension():
        _lowbit.tensor_core_matmul(INSTRUCTION, 0, 1, "in-order", "fp32", 1.0, x_codes, w_codes, args.m, args.n,
                                   args.k, None, y_codes, 1, 0)

    t_mmasim = median_time(run_mmasim, args.repeats)
    t_lowbit = median_time(run_lowbit, args.repeats)
    t_extension = median_time(run_extension, args.repeats)

    ours_bits = ours["y"].view(np.uint32)
    theirs_bits = theirs["y"].contiguous().view(torch.int32).numpy().view(np.uint32)
    mismatches = np.flatnonzero(ours_bits != theirs_bits)
    assert np.array_equal(ours_bits, y_codes), "matmul_model and the extension's call differ"

    print(f"tensor_core_model_bench: {INSTRUCTION}, M={args.m} N={args.n} K={args.k} ({macs:,} multiply-adds), "
          f"one core ({platform.processor() or platform.machine()}), torch {torch.__version__}, "
          f"medians of {args.repeats}")
    print(f"  {'mmasim WGMMA' + str(PEER) + '.dpa':54s} {t_mmasim:8.3f} s  {macs / t_mmasim / 1e6:10.1f} M multiply-adds/s")
    print(f"  {'lowbit.matmul_model':54s} {t_lowbit:8.3f} s  {macs / t_lowbit / 1e6:10.1f} M multiply-adds/s")
    print(f"  {'lowbit extension call alone':54s} {t_extension:8.3f} s  {macs / t_extension / 1e6:10.1f} M multiply-adds/s")
    print(f"  outputs bit for bit: {args.m * args.n - mismatches.size} of {args.m * args.n} equal")
    for i in mismatches[:5]:
        print(f"    output {divmod(int(i), args.n)}: lowbit {int(ours_bits.flat[i]):#010x} "
              f"mmasim {int(theirs_bits.flat[i]):#010x}")
    ratio = t_mmasim / t_lowbit
    print(f"tensor_core_model_bench summary: lowbit.matmul_model is {ratio:.1f}x mmasim on one core "
          f"(goal >= 20x: {'met' if ratio >= 20 else 'missed'})")
    return 0 if mismatches.size == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
