"""Same-run baselines for bench/cuda/gemm_bench.cu: cuBLAS BF16
(torch.matmul) and FP8 E4M3 torch._scaled_mm (per-tensor scales) at
M = N = K = 8192 and M = 4096, N = 28672, K = 8192, timed with CUDA events
(median of 20 after 3 warm-up runs), random non-zero inputs."""
import torch


def median_us(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    print(f"torch {torch.__version__}  device {torch.cuda.get_device_name()}")
    for m, n, k in [(8192, 8192, 8192), (4096, 28672, 8192)]:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        flop = 2.0 * m * n * k
        t = median_us(lambda: torch.matmul(x, w.t()))
        print(f"baseline cublas_bf16            {m:6d} {n:6d} {k:6d} {t:10.1f} us {flop / t / 1e6:8.1f} TFLOP/s")
        x8 = x.to(torch.float8_e4m3fn)
        w8 = w.to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        t = median_us(lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        print(f"baseline scaled_mm_fp8_e4m3     {m:6d} {n:6d} {k:6d} {t:10.1f} us {flop / t / 1e6:8.1f} TFLOP/s")
        del x, w, x8, w8
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
