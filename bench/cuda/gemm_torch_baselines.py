"""Same-run torch baselines for the tensor-core GEMM benchmark
(bench/cuda/tc_gemm_bench.cu; scripts/gpu/tc_gemm.sh runs both).

At the GEMM goal shapes (M x N x K = 8192^3 and 4096 x 28672 x 8192), BF16
x and y: torch's BF16 GEMM (F.linear, cuBLAS underneath) and FP8 E4M3
_scaled_mm with rowwise scales (x and W both quantized to E4M3, one FP32
scale per row of x and per row of W, BF16 output), the FP8 product a user
of Hopper's FP8 tensor cores would run instead. Time = median over 5
rounds of (events around 5 back-to-back calls) / 5.
Output lines: "baseline NAME M N K ms TFLOP/s".
"""
import torch
import torch.nn.functional as F

SHAPES = [(8192, 8192, 8192), (4096, 28672, 8192)]


def time_ms(fn, rounds=5, calls=5):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(calls):
            fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / calls)
    times.sort()
    return times[len(times) // 2]


def main():
    dev = torch.device("cuda")
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
    for m, n, k in SHAPES:
        flop = 2.0 * m * n * k

        def report(name, ms):
            print(f"baseline {name:<14} {m:6d} {n:6d} {k:6d} {ms:8.3f} {flop / (ms * 1e-3) / 1e12:7.0f}")

        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        report("bf16-linear", time_ms(lambda: F.linear(x, w)))
        try:
            xq = x.to(torch.float8_e4m3fn)
            wq = w.to(torch.float8_e4m3fn)
            sa = torch.rand(m, 1, device=dev, dtype=torch.float32)
            sb = torch.rand(1, n, device=dev, dtype=torch.float32)
            report("fp8-scaled_mm", time_ms(lambda: torch._scaled_mm(xq, wq.t(), scale_a=sa, scale_b=sb,
                                                                      out_dtype=torch.bfloat16)))
        except Exception as e:  # noqa: BLE001 (report and go on)
            print(f"baseline fp8-scaled_mm {m} {n} {k} failed: {type(e).__name__}: {e}")
        del x, w
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
