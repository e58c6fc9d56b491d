"""lowbit's tinygemm int4pack layout against torch's CUDA op, on the GPU
machine (docs/layouts.md). For inner_k_tiles 2, 4 and 8 and
shapes with and without a partial 8-row tile:

1. the words of `torch.ops.aten._convert_weight_to_int4pack(w, t)` (w the
   uint8 [N][K / 2] high-nibble-first input) equal the model's
   PackTinygemmInt4 bit for bit, and the model's unpack of torch's words
   gives the codes back;
2. `_weight_int4pack_mm(A, B, group, scales_and_zeros)` with B packed by
   lowbit equals it with B packed by torch (torch.equal), for group sizes
   32..256;
3. with A = I and power-of-two scales and small integer zeros (every value
   exact in BF16), the product is (q - 8) * scale + zero: the zero-point
   convention of tinygemm_int4pack.h.

The model side is scripts/gpu/int4pack_dump.cc, built here with g++ from the
header-only model. Run from the repository root. Prints one line
"int4pack_check: PASS ..." or "int4pack_check: FAIL ..." last; exit status
0 = pass, 1 = a mismatch, 77 = no CUDA device (not a pass)."""

import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        print("int4pack_check: SKIP (no CUDA device; nothing compared)")
        return 77
    root = pathlib.Path(__file__).resolve().parents[2]
    work = pathlib.Path(tempfile.mkdtemp())
    dump = work / "int4pack_dump"
    subprocess.run([os.environ.get("CXX", "g++"), "-std=c++20", "-O2", "-I", str(root / "formats/spec/include"),
                    "-I", str(root / "formats/include"), str(root / "scripts/gpu/int4pack_dump.cc"), "-o",
                    str(dump)], check=True)

    def model(direction, tiles, n, k, data):
        src, dst = work / "in.bin", work / "out.bin"
        src.write_bytes(np.ascontiguousarray(data).tobytes())
        subprocess.run([str(dump), direction, str(tiles), str(n), str(k), str(src), str(dst)], check=True)
        return np.frombuffer(dst.read_bytes(), dtype=np.uint8)

    failures, cases, mm_cases = [], 0, 0
    rng = np.random.default_rng(14)
    dev = torch.device("cuda")
    for tiles in (2, 4, 8):
        for n in (8, 13, 64, 200, 1024):
            for k in sorted({tiles * 16, tiles * 32, 256, 1024}):
                if k % (tiles * 16):
                    continue
                cases += 1
                q = rng.integers(0, 16, size=(n, k), dtype=np.uint8)
                q[0, :] = 15
                q[-1, :] = 0
                w = torch.from_numpy((q[:, ::2] << 4) | q[:, 1::2]).to(dev)  # torchao's input
                theirs_t = torch.ops.aten._convert_weight_to_int4pack(w, tiles)
                theirs = theirs_t.cpu().numpy().view(np.uint8).reshape(-1)
                ours = model("pack", tiles, n, k, q)
                where = f"t={tiles} N={n} K={k}"
                if ours.size != theirs.size:
                    failures.append(f"{where}: {ours.size} bytes vs torch's {theirs.size}")
                    continue
                diff = np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))
                if diff.size:
                    i = diff[0]
                    failures.append(f"{where}: {diff.size} words differ, first word {i}: "
                                    f"lowbit {ours.view(np.uint32)[i]:#010x} torch {theirs.view(np.uint32)[i]:#010x}")
                    continue
                back = model("unpack", tiles, n, k, theirs).reshape(n, k)
                if not np.array_equal(back, q):
                    failures.append(f"{where}: unpack of torch's words differs from the codes")
                    continue
                ours_t = torch.from_numpy(ours.view(np.int32).copy()).reshape(theirs_t.shape).to(dev)
                n_pad = theirs_t.shape[0] * 8
                for group in (32, 64, 128, 256):
                    if k % group or k < group:
                        continue
                    mm_cases += 1
                    a = torch.randn(17, k, dtype=torch.bfloat16, device=dev)
                    sz = torch.randn(k // group, n_pad, 2, dtype=torch.bfloat16, device=dev)
                    c_ours = torch.ops.aten._weight_int4pack_mm(a, ours_t, group, sz)
                    c_theirs = torch.ops.aten._weight_int4pack_mm(a, theirs_t, group, sz)
                    if not torch.equal(c_ours, c_theirs):
                        failures.append(f"{where} group {group}: _weight_int4pack_mm differs on lowbit's packing")
                if k <= 1024 and n % 8 == 0:
                    group = 32
                    s = 2.0 ** rng.integers(-3, 3, size=(k // group, n))
                    z = rng.integers(-4, 5, size=(k // group, n)).astype(np.float64)
                    sz = torch.from_numpy(np.stack([s, z], axis=-1)).to(torch.bfloat16).to(dev)
                    eye = torch.eye(k, dtype=torch.bfloat16, device=dev)
                    got = torch.ops.aten._weight_int4pack_mm(eye, ours_t, group, sz).float().cpu().numpy().T
                    g = np.arange(k) // group
                    want = (q.astype(np.float64) - 8) * s[g, :].T + z[g, :].T
                    if not np.array_equal(got, want):
                        failures.append(f"{where}: dequantized weights are not (q - 8) * scale + zero")
    for f in failures[:20]:
        print(f)
    status = "FAIL" if failures else "PASS"
    print(f"int4pack_check: {status} ({cases} shapes x inner_k_tiles bit-compared with torch "
          f"{torch.__version__} on {torch.cuda.get_device_name()}, {mm_cases} _weight_int4pack_mm comparisons, "
          f"{len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
