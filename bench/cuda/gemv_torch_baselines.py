"""Same-run torch baselines for the GEMV benchmark (bench/cuda/gemv_bench.cu).

On the shapes of bench/cuda/gemv_bench.cu, at M = 1 and M = 16: the device
copy (bytes read plus written), torch's BF16 GEMV (F.linear; torch.bmm for a
batch), tinygemm INT4-g128 (_weight_int4pack_mm), FP8 E4M3 _scaled_mm with
per-channel scales and M padded to 16, and the naive user path for NVFP4
weights (unpack nibbles with a table, multiply by the E4M3 scales and the
tensor scale, F.linear). Batches (L > 1) loop over L where torch has no
batched kernel. Weights rotate among copies so that one rotation exceeds L2.
Time = median over 7 rounds of (events around 20 back-to-back calls) / 20.
Output lines: "baseline NAME N K L M us x_copy".
"""
import torch
import torch.nn.functional as F

SHAPES = [(8192, 8192, 1), (28672, 8192, 1), (7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4)]
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def time_us(fn, copies, rounds=7, calls=20):
    for i in range(3):
        fn(i % copies)
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for i in range(calls):
            fn(i % copies)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / calls)
    times.sort()
    return times[len(times) // 2]


def copies_for(nbytes):
    return max(2, int(256e6 // nbytes) + 1)


def main():
    dev = torch.device("cuda")
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
    src = torch.empty(1 << 30, dtype=torch.uint8, device=dev).fill_(90)
    dst = torch.empty_like(src)
    copy_us = time_us(lambda i: dst.copy_(src), 1, calls=5)
    copy_tbps = 2 * (1 << 30) / (copy_us * 1e-6) / 1e12
    del src, dst
    print(f"baseline copy {copy_tbps:.3f} TB/s")
    lut = torch.tensor(E2M1, dtype=torch.bfloat16, device=dev)
    for n, k, l in SHAPES:
        for m in (1, 16):
            x = torch.randn(l, m, k, device=dev, dtype=torch.bfloat16)

            def report(name, us, nbytes):
                tbps = nbytes / (us * 1e-6) / 1e12
                print(f"baseline {name:<14} {n:6d} {k:6d} {l:2d} {m:3d} {us:9.2f} {tbps / copy_tbps:7.3f}")

            # BF16
            wb = 2 * n * k * l
            ws = [torch.randn(l, n, k, device=dev, dtype=torch.bfloat16) for _ in range(copies_for(wb))]
            if l == 1:
                fn = lambda i: F.linear(x[0], ws[i][0])
            else:
                fn = lambda i: torch.bmm(x, ws[i].transpose(1, 2))
            report("bf16-linear", time_us(fn, len(ws)), wb + 2 * l * m * (k + n))
            del ws
            # tinygemm INT4 g128
            try:
                ib = n * k // 2 * l + 4 * (k // 128) * n * l
                packs = []
                for _ in range(copies_for(ib)):
                    per = []
                    for _ in range(l):
                        q = torch.randint(0, 16, (n, k), dtype=torch.int32, device=dev)
                        qb = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
                        packed = torch._convert_weight_to_int4pack(qb, 8)
                        sz = torch.rand(k // 128, n, 2, device=dev, dtype=torch.bfloat16)
                        per.append((packed, sz))
                    packs.append(per)
                xs = [x[j] for j in range(l)]
                fn = lambda i: [torch._weight_int4pack_mm(xs[j], packs[i][j][0], 128, packs[i][j][1]) for j in range(l)]
                report("tinygemm-int4", time_us(fn, len(packs)), ib + 2 * l * m * (k + n))
                del packs
            except Exception as e:  # noqa: BLE001 (report and go on)
                print(f"baseline tinygemm-int4 {n} {k} {l} {m} failed: {type(e).__name__}: {e}")
            # FP8 _scaled_mm, M padded to 16, per-channel (rowwise) scales
            try:
                fb = n * k * l + 4 * n * l
                wq = [torch.randn(l, n, k, device=dev).to(torch.float8_e4m3fn) for _ in range(copies_for(fb))]
                sb = torch.rand(1, n, device=dev, dtype=torch.float32)
                xa = torch.zeros(l, 16, k, device=dev, dtype=torch.float8_e4m3fn)
                xa[:, :m] = x.to(torch.float8_e4m3fn)
                sa = torch.ones(16, 1, device=dev, dtype=torch.float32)
                fn = lambda i: [torch._scaled_mm(xa[j], wq[i][j].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
                                for j in range(l)]
                report("fp8-scaled_mm", time_us(fn, len(wq)), fb + l * 16 * k + 2 * l * m * n)
                del wq
            except Exception as e:  # noqa: BLE001
                print(f"baseline fp8-scaled_mm {n} {k} {l} {m} failed: {type(e).__name__}: {e}")
            # Naive NVFP4 user path
            nb = n * k // 2 * l + n * k // 16 * l
            codes = [torch.randint(0, 256, (l, n, k // 2), dtype=torch.uint8, device=dev) for _ in range(copies_for(nb))]
            scales = torch.rand(l, n, k // 16, device=dev).to(torch.float8_e4m3fn)

            def naive(i):
                c = codes[i].long()
                w = torch.stack((lut[c & 15], lut[c >> 4]), dim=-1).reshape(l, n, k)
                w = w * scales.to(torch.bfloat16).repeat_interleave(16, dim=-1) * 0.25
                return F.linear(x[0], w[0]) if l == 1 else torch.bmm(x, w.transpose(1, 2))

            report("naive-nvfp4", time_us(naive, len(codes), rounds=3, calls=3), nb + 2 * l * m * (k + n))
            del codes
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
