"""PyTorch doing the same jobs as bench_cuda.cu, eager and torch.compile, on
the same sizes (2^28 elements: 1 GiB of FP32). Prints one
"TORCH <key> <mode> <ms>" line per case; scripts/run_gpu.sh joins them with
the lowbit numbers. Times are CUDA-event medians of 20 runs after warm-up."""
import sys
import torch

torch.manual_seed(0)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
dev = "cuda"


def median_ms(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def report(key, mode, fn):
    try:
        ms = median_ms(fn)
        print(f"TORCH {key} {mode} {ms:.4f}", flush=True)
    except Exception as e:  # a failing torch path is reported, not fatal
        print(f"TORCH {key} {mode} FAILED {type(e).__name__}: {str(e)[:120]}", flush=True)


x = torch.randn(N, device=dev) * 1.7
xb = x.to(torch.bfloat16)
y = torch.empty_like(x)
print(f"torch {torch.__version__} device {torch.cuda.get_device_name()}", flush=True)
report("copy", "eager", lambda: y.copy_(x))
F8 = torch.float8_e4m3fn


def f32_to_e4m3(t):
    return t.to(F8)


def f32_to_bf16(t):
    return t.to(torch.bfloat16)


def fp8_to_bf16(t):
    return t.to(torch.bfloat16)


q8 = x.clamp(-448, 448).to(F8)


def per_token(t):  # rows of 4096, scale = 448 / amax (TE style)
    t2 = t.view(-1, 4096).float()
    amax = t2.abs().amax(dim=1, keepdim=True)
    scale = 448.0 / amax
    return (t2 * scale).clamp(-448, 448).to(F8), 1.0 / scale


def per_tensor_dynamic(t):
    t2 = t.float()
    scale = 448.0 / t2.abs().amax()
    return (t2 * scale).clamp(-448, 448).to(F8), 1.0 / scale


E2M1_BOUNDS = None


def e2m1_codes(y):
    a = y.abs()
    m = ((a > 0.25).to(torch.uint8) + (a >= 0.75) + (a > 1.25) + (a >= 1.75) + (a > 2.5)
         + (a >= 3.5) + (a > 5.0))
    m = torch.where(torch.isnan(a), torch.full_like(m, 7), m | ((y < 0) | ((y == 0) & torch.signbit(y))).to(torch.uint8) * 8)
    return m


def nvfp4(t, amax):  # TE recipe with the tensor amax given
    t2 = t.float().view(-1, 16)
    s_enc = 2688.0 / amax
    s_dec = 1.0 / s_enc
    amax_b = t2.abs().amax(dim=1, keepdim=True)
    scale = (amax_b * (s_enc * (1.0 / 6.0))).clamp(max=448.0).to(F8)
    enc = (1.0 / (scale.float() * s_dec)).clamp(max=3.4028234663852886e38)
    c = e2m1_codes(t2 * enc).view(-1, 8, 2)
    packed = c[..., 0] | (c[..., 1] << 4)
    return packed, scale


def mxfp4(t):  # TE RCEIL: e = ceil(log2(amax/6)) via bits, x * 2^-e
    t2 = t.float().view(-1, 32)
    amax = t2.abs().amax(dim=1, keepdim=True)
    p = amax * (1.0 / 6.0)
    bits = p.view(torch.int32)
    e = (bits >> 23) + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    e = e.clamp(0, 254)
    rcp = ((254 - e) << 23).view(torch.float32)
    c = e2m1_codes(t2 * rcp).view(-1, 16, 2)
    return c[..., 0] | (c[..., 1] << 4), e.to(torch.uint8)


amax_t = x.abs().amax()
for key, fn, arg in [("f32->e4m3", f32_to_e4m3, x), ("f32->bf16", f32_to_bf16, x),
                     ("bf16->e4m3", f32_to_e4m3, xb), ("e4m3->bf16", fp8_to_bf16, q8),
                     ("per-token", per_token, xb), ("per-tensor-dynamic", per_tensor_dynamic, xb),
                     ("nvfp4-bf16", lambda t: nvfp4(t, amax_t), xb), ("mxfp4-bf16", mxfp4, xb)]:
    report(key, "eager", lambda: fn(arg))
    try:
        cfn = torch.compile(fn)
        report(key, "compile", lambda: cfn(arg))
    except Exception as e:
        print(f"TORCH {key} compile FAILED {type(e).__name__}", flush=True)
    torch.cuda.empty_cache()
